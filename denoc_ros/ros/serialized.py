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
Messages serialized once, then refilled in place: the dynamics node's cheap publishes.

``Publisher.publish`` of a message object converts it to C and serializes it on every call
(11 us for a 7-joint JointState here, 35-70 us for the whole publish); ``publish`` of bytes
skips both. A :class:`Template` serializes a message once (``rclpy.serialization``), with a
sentinel in every field that changes per publish -- the header stamp and the float64 arrays,
whose lengths stay fixed -- and finds each sentinel's offset in the bytes (CDR puts each
field's data at a fixed place once the lengths of everything before it are fixed). A publish
then writes the stamp and the arrays at those offsets into a copy and publishes the bytes:
subscribers receive an ordinary message.
"""

import math
import struct

import numpy as np
from rclpy.serialization import serialize_message

from ..identification.cdr import parse_joint_state_layout

__all__ = ['JointStateBytes', 'Template']

_SEC, _NANOSEC = 0x5EC5EC5E, 0x0A0B0C0D  # sentinels of the stamp (unlikely as other bytes)


class Template:
    """
    A message's bytes with the offsets of its stamp and of its changing float64 arrays.

    ``message``: a message with the constant fields set (joint names, frame_id, ...);
    ``arrays``: ``{name: setter}`` or ``{name: (setter, its length)}``, where
    ``setter(message, values)`` puts a float64 list of the array's fixed length into the message
    (called once, with a sentinel; a float64 field or a run of them, such as a Wrench, is an
    array too); ``length``: the arrays' length when not given. ``bools``: ``{name: setter}`` of
    a bool field or ``{name: (setter, count)}`` of a bool[] of fixed ``count``, found as the
    byte(s) that change between a serialization with False and one with True. :meth:`fill`
    returns the bytes of the message with the stamp, the arrays and the bools given.
    """

    def __init__(self, message, arrays, length, stamp=True, after=(), bools=None):
        self.names = tuple(arrays)
        sentinels = {}
        for k, (name, setter) in enumerate(arrays.items()):
            setter, size = setter if isinstance(setter, tuple) else (setter, length)
            values = 1.0e300 / (k + 2) * (1.0 + np.arange(size) * 1e-6)  # unique, exact
            sentinels[name] = values
            setter(message, values.tolist())
        if stamp:
            message.header.stamp.sec, message.header.stamp.nanosec = _SEC, _NANOSEC
        bool_at = {}
        for name, setter in (bools or {}).items():
            setter, count = setter if isinstance(setter, tuple) else (setter, None)
            size = 1 if count is None else count
            changed = None
            for _ in range(2):  # bytes past the message's end may change too: 0 -> 1 twice
                setter(message, False if count is None else [False] * count)
                off = bytes(serialize_message(message))
                setter(message, True if count is None else [True] * count)
                on = bytes(serialize_message(message))
                flips = {i for i, (a, b) in enumerate(zip(off, on)) if a == 0 and b == 1}
                changed = flips if changed is None else changed & flips
            changed = sorted(changed)
            if len(changed) != size or changed and changed[-1] - changed[0] != size - 1:
                raise ValueError(f'serialized template: the bools {name} are not found')
            if changed:
                bool_at[name] = (changed[0], size)
        data = bytes(serialize_message(message))
        offsets = {name: _find_once(data, values.tobytes(), name)
                   for name, values in sentinels.items()}
        # What follows the last array and the bools: ``after``'s 4-byte items (the lengths of
        # empty sequences, a Duration's two fields). rclpy's buffer may run on past the
        # message: cut it there.
        end = max(offsets[name] + 8 * len(values) for name, values in sentinels.items())
        for _ in after:
            end = 4 + ((end - 4 + 3) & ~3)  # CDR aligns to 4 within the payload (after 4 bytes)
            end += 4
        end = max([end] + [at + size for at, size in bool_at.values()])
        self._buffer = np.frombuffer(bytearray(data[:end]), dtype=np.uint8)
        self._views = {name: self._buffer[at:at + 8 * len(sentinels[name])].view(np.float64)
                       for name, at in offsets.items()}
        for name, (at, size) in bool_at.items():
            self._views[name] = self._buffer[at:at + size]
        self._stamp = None
        if stamp:
            at = _find_once(data, np.array([_SEC, _NANOSEC], dtype='<u4').tobytes(), 'stamp')
            self._stamp = self._buffer[at:at + 8].view('<u4')

    def fill(self, sec, nanosec, **arrays):
        """Return the serialized message with the stamp and the given arrays (the rest kept)."""
        if self._stamp is not None:
            self._stamp[0], self._stamp[1] = sec, nanosec
        views = self._views
        for name, values in arrays.items():
            views[name][:] = values
        return self._buffer.tobytes()

    def keep(self, **arrays):
        """Write arrays that stay the same from one publish to the next (kept until set again)."""
        for name, values in arrays.items():
            self._views[name][:] = values


def _find_once(data, pattern, what):
    at = data.find(pattern)
    if at < 0 or data.find(pattern, at + 1) >= 0:
        raise ValueError(f'serialized template: the {what} sentinel is not found exactly once')
    return at


class JointStateBytes:
    """
    Read serialized ``sensor_msgs/JointState`` messages in place, as the middleware gave them.

    A driver's messages share one layout (the names, frame_id and array lengths): it is parsed
    once (:func:`denoc_ros.identification.cdr.parse_joint_state_layout`) and recognised in the
    next message by its bytes from the frame_id to the positions' length (names included) and
    by the velocities' and efforts' lengths; anything else is parsed again. :meth:`read` costs
    about 3 us where ``deserialize_message`` costs 15 us and rclpy's conversion to a message
    object more (every field, as Python objects).
    """

    def __init__(self):
        self._layout = None
        self._empty = np.zeros(0)

    def read(self, raw):
        """
        Return ``(sec, nanosec, frame_id, names, position, velocity, effort)`` of ``raw``.

        The arrays are float64 views of ``raw`` (read-only; an absent one is empty); ValueError
        if ``raw`` is not a plain-CDR JointState.
        """
        layout = self._layout
        if layout is None or not self._same(raw, layout):
            layout = self._layout = self._parse(raw)
        sec, nanosec = layout.stamp(raw, 4)
        dtype, empty = layout.dtype, self._empty
        return (sec, nanosec, layout.frame_id, layout.names,
                *(np.frombuffer(raw, dtype, count, offset) if count else empty
                  for count, offset in zip(layout.counts, layout.offsets)))

    def select(self, raw, joint_names):
        """
        Return ``(sec, nanosec, frame_id, q, qd, effort)`` in the order of ``joint_names``.

        ``qd``: zeros without velocities; ``effort``: None without efforts. One array read
        (one index per layout and joint list, a copy of the values). None if the message is
        not that simple -- a joint missing or twice, a length that is not the names', no
        positions, a non-finite value -- for the caller to say what is wrong (:meth:`read`).
        """
        layout = self._layout
        if layout is None or not self._same(raw, layout):
            layout = self._layout = self._parse(raw)
        if layout.joints != joint_names:
            _select_index(layout, joint_names)
        index = layout.select
        if index is None:
            return None
        values = np.frombuffer(raw, layout.dtype, layout.words, 4)[index]
        if not _finite(values.tolist()):
            return None
        sec, nanosec = layout.stamp(raw, 4)
        n = len(joint_names)
        qd = values[n:2 * n] if layout.counts[1] else np.zeros(n)
        effort = values[-n:] if layout.counts[2] else None
        return sec, nanosec, layout.frame_id, values[:n], qd, effort

    @staticmethod
    def _same(raw, layout):
        return (len(raw) == layout.size and raw[:4] == layout.encapsulation
                and raw[12:layout.head_end] == layout.head
                and layout.count_words(raw, layout.count_at[0]) == layout.counts[1:2]
                and layout.count_words(raw, layout.count_at[1]) == layout.counts[2:])

    @staticmethod
    def _parse(raw):
        layout = parse_joint_state_layout(raw)
        e = layout.endian
        layout.stamp = struct.Struct(e + 'iI').unpack_from
        layout.count_words = struct.Struct(e + 'I').unpack_from
        layout.dtype = np.dtype(e + 'f8')
        layout.encapsulation = raw[:4]
        layout.head_end = layout.offsets[0]
        layout.head = raw[12:layout.head_end]
        # where the velocities' and the efforts' lengths are: after the previous array's data
        layout.count_at = tuple(4 + ((offset + 8 * count - 4 + 3) & -4) for offset, count in
                                zip(layout.offsets[:2], layout.counts[:2]))
        layout.words = (len(raw) - 4) // 8  # float64 words from byte 4: data is at 4 + 8 k
        layout.joints = None
        return layout


def _finite(values):
    """Return True if every float in the list ``values`` is finite (one exact sum, no warning)."""
    try:
        return math.isfinite(math.fsum(values))
    except OverflowError:  # finite numbers whose sum overflows
        return all(map(math.isfinite, values))
    except ValueError:     # inf - inf
        return False


def _select_index(layout, joint_names):
    """Set ``layout.select``: the words of q, qd, effort in ``joint_names``' order (or None)."""
    layout.joints, layout.select = joint_names, None
    names, counts, offsets = layout.names, layout.counts, layout.offsets
    position = {}
    for k, name in enumerate(names):
        if name in position:
            return
        position[name] = k
    if (not counts[0] or any(c not in (0, len(names)) for c in counts)
            or any(j not in position for j in joint_names)):
        return
    order = np.array([position[j] for j in joint_names], dtype=np.intp)
    layout.select = np.concatenate([(offset - 4) // 8 + order
                                    for count, offset in zip(counts, offsets) if count])
