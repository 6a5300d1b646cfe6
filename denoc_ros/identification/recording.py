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
The recorded joint states (:class:`JointStateRecording`) and what every reader and writer shares.

A recording is joint states in the model's joint order: :func:`.data.read_recording` returns
one, :func:`.bags.write_bag` and :func:`.data.write_csv` write one, and
:func:`.filtering.prepare_samples` filters one. Here also :class:`DataWarning`, the fewest
samples a recording must have (:data:`MIN_SAMPLES`), and the checks every reader ends with
(sorted, duplicate stamps dropped, finite) and every writer starts with (array shapes).
"""

from dataclasses import dataclass

import numpy as np

from ..errors import DataError

__all__ = ['DataWarning', 'JointStateRecording', 'MIN_SAMPLES', 'unsensed_joints']

MIN_SAMPLES = 10
"""Fewest samples a recording (and the filtered result) must have."""

NS = 1_000_000_000
"""Nanoseconds per second (ROS stamps, bag times)."""


class DataWarning(UserWarning):
    """Part of a recording was dropped (unusable messages, short segments, no velocities)."""


@dataclass(frozen=True)
class JointStateRecording:
    """
    Joint states as recorded, in the model's joint order.

    ``time`` ``(N,)`` s, strictly increasing; ``position``, ``velocity`` and ``effort``
    ``(N, n)`` float64, column ``j`` the joint ``joint_names[j]``; ``velocity`` is ``None`` when
    the source has none. ``source`` says what was read (for messages). An ``effort`` column
    that is all NaN is a joint whose effort is not sensed (:func:`unsensed_joints`).
    """

    joint_names: tuple
    time: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    source: str = 'recording'


def _seconds(ns):
    """Return int64 nanoseconds as float64 seconds, rounded once (exact to the float's ulp)."""
    return (ns // NS).astype(np.float64) + (ns % NS).astype(np.float64) * 1e-9


def _one_line(exc):
    """Return an exception as one line: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f'{type(exc).__name__}: {text[0]}' if text else type(exc).__name__


def _order(key):
    """Return the indices sorting ``key`` stably without exact duplicates, or None if sorted."""
    d = np.diff(key)
    if (d > 0).all():
        return None
    order = np.argsort(key, kind='stable')
    sorted_key = key[order]
    keep = np.ones(order.size, bool)
    keep[1:] = sorted_key[1:] != sorted_key[:-1]
    return order[keep]


def _finish(where, joint_names, key, position, velocity, effort, ns=False):
    """Sort, drop duplicates, check finiteness and size; return a JointStateRecording."""
    sel = _order(key)
    if sel is not None:
        key = key[sel]
        position = position[sel]
        effort = effort[sel]
        if velocity is not None:
            velocity = velocity[sel]
    time = _seconds(key) if ns else np.asarray(key, np.float64)
    if not np.isfinite(time).all():
        raise DataError(f'{where}: {int(np.count_nonzero(~np.isfinite(time)))} non-finite times')
    for field, values in (('position', position), ('velocity', velocity), ('effort', effort)):
        if values is None:
            continue
        bad = ~np.isfinite(values)
        if field == 'effort':
            bad &= ~np.isnan(values).all(axis=0)   # all NaN: not sensed (unsensed_joints)
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise DataError(f'{where}: joint {joint_names[col]!r} has '
                            f'{int(np.count_nonzero(bad[:, col]))} non-finite {field} values '
                            f'(first at t = {time[row]:.9g} s)')
    if time.size < MIN_SAMPLES:
        raise DataError(f'{where}: only {time.size} usable samples (at least {MIN_SAMPLES} '
                        'needed)')
    return JointStateRecording(tuple(joint_names), time, position, velocity, effort, where)


def unsensed_joints(recording):
    """Return the joints whose efforts are all NaN: not sensed (an absent effort column)."""
    effort = np.asarray(recording.effort, dtype=float)
    return tuple(name for name, none in zip(recording.joint_names,
                                            np.isnan(effort).all(axis=0)) if none)


def _checked(recording):
    """Return the recording's arrays as float64, checking their shapes."""
    names = tuple(recording.joint_names)
    time = np.asarray(recording.time, np.float64)
    n = len(names)
    out = [time]
    for field in ('position', 'velocity', 'effort'):
        a = getattr(recording, field)
        if a is None:
            if field != 'velocity':
                raise DataError(f'{recording.source}: no {field} array')
            out.append(None)
            continue
        a = np.asarray(a, np.float64)
        if a.shape != (time.size, n):
            raise DataError(f'{recording.source}: {field} has shape {a.shape}, expected '
                            f'{(time.size, n)} (time samples, joints)')
        out.append(a)
    if time.ndim != 1:
        raise DataError(f'{recording.source}: time must be 1-D, got shape {time.shape}')
    return names, *out
