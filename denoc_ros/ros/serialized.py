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

import numpy as np
from rclpy.serialization import serialize_message

__all__ = ['Template']

_SEC, _NANOSEC = 0x5EC5EC5E, 0x0A0B0C0D  # sentinels of the stamp (unlikely as other bytes)


class Template:
    """
    A message's bytes with the offsets of its stamp and of its changing float64 arrays.

    ``message``: a message with the constant fields set (joint names, frame_id, ...);
    ``arrays``: ``{name: setter}``, where ``setter(message, values)`` puts a float64 list of
    the array's fixed length into the message (called once, with a sentinel); ``length``: that
    length. :meth:`fill` returns the bytes of the message with the stamp and the arrays given.
    """

    def __init__(self, message, arrays, length, stamp=True, after=(), flags=None):
        self.names = tuple(arrays)
        sentinels = {}
        for k, (name, setter) in enumerate(arrays.items()):
            values = 1.0e300 / (k + 2) * (1.0 + np.arange(length) * 1e-6)  # unique, exact
            sentinels[name] = values
            setter(message, values.tolist())
        if stamp:
            message.header.stamp.sec, message.header.stamp.nanosec = _SEC, _NANOSEC
        data = bytes(serialize_message(message))
        offsets = {name: _find_once(data, values.tobytes(), name)
                   for name, values in sentinels.items()}
        # What follows the last array: 4-byte items (the lengths of empty sequences, a
        # Duration's two fields; 'flags': the bool[] ``flags`` of ``length``, its length then
        # one byte per flag). rclpy's buffer may run on past the message: cut it there.
        end = max(offsets.values()) + 8 * length
        flags_at = None
        for item in after:
            end = 4 + ((end - 4 + 3) & ~3)  # CDR aligns to 4 within the payload (after 4 bytes)
            end += 4
            if item == 'flags':
                flags_at = end
                end += length
        self._buffer = np.frombuffer(bytearray(data[:end]), dtype=np.uint8)
        self._views = {name: self._buffer[at:at + 8 * length].view(np.float64)
                       for name, at in offsets.items()}
        if flags is not None:
            self._views[flags] = self._buffer[flags_at:flags_at + length]
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


def _find_once(data, pattern, what):
    at = data.find(pattern)
    if at < 0 or data.find(pattern, at + 1) >= 0:
        raise ValueError(f'serialized template: the {what} sentinel is not found exactly once')
    return at
