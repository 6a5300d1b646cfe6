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
The located contact as messages, without a node: ContactLocation fields and the RViz markers.

The force arrow is checked against a rotation and a force made here (the link's axes rotated by
a known angle): in the link frame it must be R^T F, end at the point and have the documented
length; the candidates reuse their Points without mixing two messages' values. The located
contact's bytes are compared with rclpy's serialization of the message filled field by field.
"""

import math

from conftest import require_module
from denoc_ros.contact.locate import ContactLocation
import numpy as np
import pytest

require_module('visualization_msgs.msg')
from denoc_ros.ros import contact_outputs as co  # noqa: E402, I100
from denoc_ros_interfaces.msg import ContactLocation as LocationMsg  # noqa: E402
from geometry_msgs.msg import Point  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from std_msgs.msg import Header  # noqa: E402
from visualization_msgs.msg import Marker  # noqa: E402


def rotation_z(angle):
    """Return the rotation by ``angle`` about z."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def header(sec=3):
    """Return a header with a stamp."""
    h = Header()
    h.stamp.sec, h.stamp.nanosec = sec, 500
    return h


def message_of(location, sec, nanosec, frame_id):
    """Return the ContactLocation message of ``location`` filled field by field (the oracle)."""
    msg = LocationMsg()
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    msg.header.frame_id = frame_id
    if location is None:
        msg.in_contact, msg.status, msg.message = False, 'no_contact', 'contact ended'
        return msg
    msg.in_contact, msg.status, msg.link = bool(location.in_contact), location.status, \
        location.link
    for field, value in (('point', location.point), ('normal', location.normal),
                         ('point_base', location.point_base), ('force', location.force)):
        target = getattr(msg, field)
        target.x, target.y, target.z = (float(v) for v in value)
    msg.covariance = np.asarray(location.covariance, dtype=float).reshape(9)
    msg.residual = float(location.residual)
    msg.candidates = [Point(x=float(x), y=float(y), z=float(z))
                      for x, y, z in np.asarray(location.candidates).reshape(-1, 3)]
    msg.candidate_links = list(location.candidate_links)
    msg.message = location.message
    return msg


def test_location_bytes_are_rclpys_serialization():
    """The bytes of LocationBytes are rclpy's serialization, for every length of every string."""
    rng = np.random.default_rng(1)
    writer = co.LocationBytes()
    names = ['', 'l', 'l2', 'lin', 'link', 'panda_link7', 'panda_hand', 'dé']
    cases = [(None, 'base')]
    for k in range(60):
        n = int(rng.choice([0, 1, 2, 3, 7, 512]))
        links = tuple(str(rng.choice(names)) for _ in range(n))
        cases.append((ContactLocation(
            str(rng.choice(['located', 'ambiguous', 'unexplained', 'no_contact'])),
            link=str(rng.choice(names)), point=rng.normal(size=3),
            point_base=rng.normal(size=3), normal=rng.normal(size=3),
            force=rng.normal(size=3) * 20, residual=float(rng.uniform()),
            covariance=rng.normal(size=(3, 3)), candidates=rng.normal(size=(n, 3)),
            candidate_links=links, message=str(rng.choice(
                ['', 'x', 'two links', 'ambiguous: 3 links, ±2 cm']))), str(rng.choice(names))))
    for location, frame in cases:
        sec, nanosec = int(rng.integers(0, 2**31)), int(rng.integers(0, 10**9))
        ours = writer(sec, nanosec, frame, location)
        expected = message_of(location, sec, nanosec, frame)
        theirs = bytes(serialize_message(expected))
        # The same length and, read back by rclpy, the same message (rclpy leaves its padding
        # bytes as the buffer had them: the bytes themselves differ there)
        assert len(ours) == len(theirs), (location, frame)
        assert deserialize_message(ours, LocationMsg) == expected, (location, frame)
        if location is not None and len(location.candidates):
            assert ours.find(location.candidates.astype('<f8').tobytes()) >= 0


@pytest.mark.parametrize('magnitude, length', [(20.0, 0.2), (2.0, co.ARROW_MIN),
                                               (80.0, co.ARROW_MAX)])
def test_markers_sphere_arrow_and_label_in_the_link_frame(magnitude, length):
    """The arrow is R^T F in the link's axes, ends at the point, 1 cm/N within its bounds."""
    R = rotation_z(0.7)
    point = np.array([0.04, 0.0, 0.05])
    force_link = magnitude * np.array([-1.0, 0.0, 0.0])        # into the +x face
    location = ContactLocation('located', link='l7', point=point, force=R @ force_link)
    array = co.ContactMarkers().build(header(), location, R, 'base')
    kinds = {m.type: m for m in array.markers if m.action == Marker.ADD}
    sphere, arrow = kinds[Marker.SPHERE], kinds[Marker.ARROW]
    assert sphere.header.frame_id == arrow.header.frame_id == 'l7'
    position = [sphere.pose.position.x, sphere.pose.position.y, sphere.pose.position.z]
    np.testing.assert_allclose(position, point)
    tail, head = (np.array([p.x, p.y, p.z]) for p in arrow.points)
    np.testing.assert_allclose(head, point)
    np.testing.assert_allclose(head - tail, length * force_link / magnitude, atol=1e-12)
    assert 'l7' in kinds[Marker.TEXT_VIEW_FACING].text
    assert (co.CANDIDATES, Marker.DELETE) in {(m.id, m.action) for m in array.markers}


def test_markers_ambiguous_and_unexplained():
    """Ambiguous: the candidates as a base-frame SPHERE_LIST; unexplained: the label alone."""
    candidates = np.array([[0.1, 0.0, 0.5], [0.0, 0.1, 0.5]])
    location = ContactLocation('ambiguous', link='l1', point=np.zeros(3),
                               force=np.array([0.0, 0.0, -5.0]), candidates=candidates,
                               candidate_links=('l1', 'l1'))
    markers = co.ContactMarkers()
    array = markers.build(header(), location, np.eye(3), 'base')
    spheres = [m for m in array.markers if m.type == Marker.SPHERE_LIST][0]
    assert spheres.header.frame_id == 'base' and len(spheres.points) == 2
    assert spheres.points[1].y == 0.1
    unexplained = ContactLocation('unexplained', message='two contacts')
    array = markers.build(header(), unexplained, None, 'base')
    actions = {(m.id, m.action) for m in array.markers}
    assert {(co.POINT, Marker.DELETE), (co.FORCE, Marker.DELETE),
            (co.CANDIDATES, Marker.DELETE)} <= actions
    label = [m for m in array.markers if m.action == Marker.ADD]
    assert len(label) == 1 and label[0].header.frame_id == 'base'
    assert label[0].text == 'contact: unexplained'
    assert [m.action for m in markers.cleared.markers] == [Marker.DELETEALL]
