# Copyright 2026 The denoc_ros Authors
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""
The located contact as messages: ``~/contact_location`` and the RViz ``~/contact_markers``.

:class:`LocationBytes` serializes a :class:`denoc_ros.ContactLocation` as a
``denoc_ros_interfaces/ContactLocation`` message; :class:`ContactMarkers` draws it as a
``visualization_msgs/MarkerArray``:

* ``point`` (SPHERE, id 0): at the contact point, ``frame_id`` = the touched link, so that
  RViz keeps it on the moving robot through TF;
* ``force`` (ARROW, id 1): the force on the robot, in the link's axes, ending at the point
  (it points into the surface), 1 cm per newton between :data:`ARROW_MIN` and :data:`ARROW_MAX`;
* ``label`` (TEXT_VIEW_FACING, id 2): the link's name and the force, above the point;
* ``candidates`` (SPHERE_LIST, id 3, base frame): the equally good points when ambiguous.

A marker that no longer applies is deleted by id (an unexplained contact has no point: only its
label, at the base); when the contact ends one DELETEALL clears them. Markers carry a
:data:`LIFETIME`, so they vanish if the node stops publishing.
"""

import struct

from builtin_interfaces.msg import Duration
from denoc_ros_interfaces.msg import ContactLocation
from geometry_msgs.msg import Point
import numpy as np
from rclpy.serialization import serialize_message
from visualization_msgs.msg import Marker, MarkerArray

__all__ = ['ContactMarkers', 'LocationBytes', 'NAMESPACE', 'points']

NAMESPACE = 'contact'
ARROW_PER_NEWTON = 0.01   # [m/N]
ARROW_MIN, ARROW_MAX = 0.05, 0.3   # [m]
LIFETIME = Duration(sec=1)
POINT, FORCE, LABEL, CANDIDATES = range(4)


def _point(msg, v):
    msg.x, msg.y, msg.z = float(v[0]), float(v[1]), float(v[2])
    return msg


def points(pool, array):
    """Return Points holding the rows of ``array`` (n, 3), reusing (and growing) ``pool``."""
    rows = array.tolist()
    while len(pool) < len(rows):
        pool.append(Point())
    for p, (x, y, z) in zip(pool, rows):   # twice as fast as new Points (512: 0.44 ms)
        p.x, p.y, p.z = x, y, z
    return pool[:len(rows)]


def _cdr_string(text):
    """Return a CDR string: uint32 length (with the NUL), UTF-8, NUL (the caller aligns it)."""
    data = text.encode('utf-8')
    return struct.pack('<I', len(data) + 1) + data + b'\x00'


_ZERO_LOCATION = struct.pack('<22d', *([0.0] * 22))  # point..force, covariance, residual
_PAD = (b'', b'\x00', b'\x00' * 2, b'\x00' * 3, b'\x00' * 4, b'\x00' * 5, b'\x00' * 6,
        b'\x00' * 7)


class LocationBytes:
    """
    ``denoc_ros_interfaces/ContactLocation`` serialized directly (CDR, little-endian).

    The bytes rclpy's serialization gives of the message filled field by field (the test
    compares them), at a fraction of the cost for an ambiguous answer: 512 candidates as Point
    messages cost 0.15 ms to fill and 0.8 ms to serialize, here their rows are copied as they
    are, so the located contact is published for every joint state in contact. The strings
    (frame, statuses, links) are encoded once and kept. Each item starts at an offset of the
    payload (after the 4-byte encapsulation) aligned to its size: 4 for a length, 8 for a
    double, 1 for the bool.
    """

    def __init__(self):
        self._header = bytes(serialize_message(ContactLocation()))[:4]  # the encapsulation
        self._strings = {}  # text -> its CDR string
        self._padded = {}   # text -> the same padded to 4 bytes (the candidates' links)

    def _string(self, text):
        chunk = self._strings.get(text)
        if chunk is None:
            chunk = self._strings[text] = _cdr_string(text)
            self._padded[text] = chunk + _PAD[-len(chunk) % 4]
        return chunk

    def __call__(self, sec, nanosec, frame_id, location):
        """Return the message's bytes for ``location`` (None: the contact ended)."""
        if len(self._strings) > 256:  # (frames, statuses, link names: a few)
            self._strings.clear()
            self._padded.clear()
        if location is None:
            in_contact, status, link, message = False, 'no_contact', '', 'contact ended'
            candidates, links = None, ()
        else:
            in_contact, status, link = bool(location.in_contact), location.status, location.link
            message, links = location.message, location.candidate_links
            candidates = np.asarray(location.candidates, dtype='<f8').reshape(-1, 3)
        parts = [self._header, struct.pack('<iI', sec, nanosec)]
        size = 8  # the payload's length so far

        def put(chunk, alignment=4):
            nonlocal size
            pad = -size % alignment
            if pad:
                parts.append(_PAD[pad])
            parts.append(chunk)
            size += pad + len(chunk)
        put(self._string(frame_id))
        put(b'\x01' if in_contact else b'\x00', 1)
        put(self._string(status))
        put(self._string(link))
        if location is None:
            put(_ZERO_LOCATION, 8)
        else:
            vectors = np.concatenate((location.point, location.normal, location.point_base,
                                      location.force,
                                      np.asarray(location.covariance, dtype=float).reshape(9),
                                      (float(location.residual),)))
            put(vectors.astype('<f8', copy=False).tobytes(), 8)
        count = 0 if candidates is None else candidates.shape[0]
        put(struct.pack('<I', count))
        if count:
            put(np.ascontiguousarray(candidates).tobytes(), 8)
        put(struct.pack('<I', len(links)))
        if links:  # each starts 4-aligned: its padding to the next depends on it alone
            for name in set(links).difference(self._padded):
                self._string(name)
            put(b''.join(map(self._padded.__getitem__, links)))
        put(_cdr_string(message))
        return b''.join(parts)


def _marker(marker_id, kind, rgba, scale):
    m = Marker(ns=NAMESPACE, id=marker_id, type=kind, action=Marker.ADD, lifetime=LIFETIME)
    m.color.r, m.color.g, m.color.b, m.color.a = rgba
    m.scale.x, m.scale.y, m.scale.z = scale
    m.pose.orientation.w = 1.0
    return m


class ContactMarkers:
    """The MarkerArray of a located contact, its markers built once and refilled."""

    def __init__(self):
        self.point = _marker(POINT, Marker.SPHERE, (1.0, 0.1, 0.1, 0.9), (0.03, 0.03, 0.03))
        self.force = _marker(FORCE, Marker.ARROW, (1.0, 0.6, 0.0, 0.9), (0.01, 0.02, 0.03))
        self.force.points = [Point(), Point()]
        self.label = _marker(LABEL, Marker.TEXT_VIEW_FACING, (1.0, 1.0, 1.0, 0.9),
                             (0.0, 0.0, 0.04))
        self.candidates = _marker(CANDIDATES, Marker.SPHERE_LIST, (1.0, 0.8, 0.1, 0.5),
                                  (0.012, 0.012, 0.012))
        self._deleted = {i: Marker(ns=NAMESPACE, id=i, action=Marker.DELETE)
                         for i in range(4)}
        clear = Marker(ns=NAMESPACE, action=Marker.DELETEALL)
        self.cleared = MarkerArray(markers=[clear])
        self._pool = []

    def build(self, header, location, rotation, base_frame):
        """
        Return the MarkerArray of ``location`` at ``header``'s stamp.

        ``rotation``: the touched link's axes in the base frame (3, 3), or None without a link.
        """
        stamp = header.stamp
        markers = []
        if location.link and rotation is not None:
            point = np.asarray(location.point, dtype=float)
            force = rotation.T @ np.asarray(location.force, dtype=float)  # link axes
            magnitude = float(np.linalg.norm(force))
            for m in (self.point, self.force, self.label):
                m.header.stamp, m.header.frame_id = stamp, location.link
            _point(self.point.pose.position, point)
            markers.append(self.point)
            if magnitude > 0.0:
                length = min(max(ARROW_PER_NEWTON * magnitude, ARROW_MIN), ARROW_MAX)
                _point(self.force.points[0], point - length * force / magnitude)
                _point(self.force.points[1], point)
                markers.append(self.force)
            else:
                markers.append(self._deleted[FORCE])
            _point(self.label.pose.position, point + np.array([0.0, 0.0, 0.06]))
            self.label.text = (f'{location.link} ({location.status}, {magnitude:.1f} N)'
                               if location.status != 'located' else
                               f'{location.link} ({magnitude:.1f} N)')
            markers.append(self.label)
        else:   # no point (unexplained): the label alone, at the base
            markers += [self._deleted[POINT], self._deleted[FORCE]]
            self.label.header.stamp, self.label.header.frame_id = stamp, base_frame
            self.label.pose.position.x = self.label.pose.position.y = 0.0
            self.label.pose.position.z = 0.5
            self.label.text = f'contact: {location.status}'
            markers.append(self.label)
        if location.status == 'ambiguous' and len(location.candidates):
            c = self.candidates
            c.header.stamp, c.header.frame_id = stamp, base_frame
            c.points = points(self._pool, location.candidates)
            markers.append(c)
        else:
            markers.append(self._deleted[CANDIDATES])
        return MarkerArray(markers=markers)
