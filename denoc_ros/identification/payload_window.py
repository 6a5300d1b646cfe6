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
The stamp-keyed window of recent joint states a payload is estimated on (no ROS inside).

:class:`PayloadWindow` keeps the last ``window`` seconds of joint states with efforts by
header stamp, starts anew when the stamps go back (a clock reset), splits at gaps and hands
its samples to :func:`~.payload_estimate.estimate_payload_from_recording`.
"""

import math
import warnings

import numpy as np

from .payload_estimate import estimate_payload_from_recording
from ..errors import DataError, InputError

__all__ = ['PayloadWindow']


class PayloadWindow:
    """
    The last ``window`` seconds of joint states with efforts, by header stamp (no ROS inside).

    ``append(stamp_ns, q, qd, tau)`` keeps samples whose stamp lies within ``window`` seconds
    of the newest (header-stamp time, so a bag played fast gives the same window). A stamp
    older than the newest means the clock was reset (a new simulation, a bag replayed from its
    start): the window starts anew; an equal stamp is a duplicate and dropped. ``qd`` may be
    None (velocities then come from the positions). :meth:`estimate` splits the window at
    gaps in the stamps (the arm may have moved while nothing was published), filters and
    differentiates each segment alone, then fits all segments together.
    """

    def __init__(self, dof, window=30.0, settings=None):
        if not (isinstance(window, (int, float)) and math.isfinite(window) and window > 0.0):
            raise InputError(f'payload window must be a positive number of seconds, got '
                             f'{window!r}')
        self.dof = int(dof)
        self.window_ns = int(round(float(window) * 1e9))
        self.settings = settings
        self._capacity = 1024
        self._stamp = np.zeros(self._capacity, dtype=np.int64)
        self._data = np.zeros((self._capacity, 3, self.dof))
        self._has_qd = np.zeros(self._capacity, dtype=bool)
        self._start = self._end = 0

    def __len__(self):
        """Return the number of samples held."""
        return self._end - self._start

    def clear(self):
        """Forget every sample."""
        self._start = self._end = 0

    def append(self, stamp_ns, q, qd, tau):
        """Add one joint state (stamp in ns); return False if it was dropped."""
        stamp_ns = int(stamp_ns)
        if self._end > self._start:
            last = int(self._stamp[self._end - 1])
            if stamp_ns == last:
                return False
            if stamp_ns < last:
                self.clear()
        if self._end == self._capacity:
            self._compact()
        k = self._end
        row = self._data[k]
        try:
            row[0] = q
            row[2] = tau
            if qd is not None:
                row[1] = qd
        except (TypeError, ValueError):
            raise InputError(f'payload window: q, qd and tau must be {self.dof} numbers each, '
                             f'got shapes {np.shape(q)}, {np.shape(qd)}, '
                             f'{np.shape(tau)}') from None
        self._stamp[k] = stamp_ns
        self._has_qd[k] = qd is not None
        self._end += 1
        oldest = stamp_ns - self.window_ns
        start = self._start
        if self._stamp[start] < oldest:
            self._start = start + int(np.searchsorted(self._stamp[start:self._end], oldest))
        return True

    def _compact(self):
        live = self._end - self._start
        if live > self._capacity // 2:
            self._capacity *= 2
            stamp = np.zeros(self._capacity, dtype=np.int64)
            data = np.zeros((self._capacity, 3, self.dof))
            has = np.zeros(self._capacity, dtype=bool)
        else:
            stamp, data, has = self._stamp, self._data, self._has_qd
        sl = slice(self._start, self._end)
        stamp[:live], data[:live], has[:live] = (self._stamp[sl].copy(), self._data[sl].copy(),
                                                 self._has_qd[sl].copy())
        self._stamp, self._data, self._has_qd = stamp, data, has
        self._start, self._end = 0, live

    def span(self):
        """Return the stamp time [s] the window covers (newest minus oldest)."""
        if self._end - self._start < 2:
            return 0.0
        return (int(self._stamp[self._end - 1]) - int(self._stamp[self._start])) * 1e-9

    def recording(self, duration=0.0, joint_names=None):
        """Return the latest ``duration`` seconds (0: all) as a JointStateRecording."""
        from .data import JointStateRecording
        if not (math.isfinite(duration) and duration >= 0.0):
            raise InputError(f'duration must be a non-negative number of seconds, got '
                             f'{duration!r}')
        stamp = self._stamp[self._start:self._end]
        if duration > 0.0 and stamp.size:
            first = int(np.searchsorted(stamp, stamp[-1] - int(round(duration * 1e9))))
        else:
            first = 0
        sl = slice(self._start + first, self._end)
        stamp = self._stamp[sl]
        if stamp.size == 0:
            raise DataError('payload estimate: no joint states with efforts received yet')
        data = self._data[sl]
        time = (stamp - stamp[0]) * 1e-9
        velocity = data[:, 1].copy() if self._has_qd[sl].all() else None
        names = tuple(joint_names) if joint_names is not None else tuple(
            f'joint{j}' for j in range(self.dof))
        return JointStateRecording(names, time, data[:, 0].copy(), velocity, data[:, 2].copy(),
                                   source='payload window')

    def estimate(self, model, link=None, duration=0.0, friction=False, **options):
        """
        Return the :class:`PayloadEstimate` over the latest ``duration`` seconds (0: all).

        Segments too short to filter are dropped (see :meth:`estimate_with_notes`, which also
        returns the notes saying so).
        """
        return self.estimate_with_notes(model, link, duration, friction, **options)[0]

    def estimate_with_notes(self, model, link=None, duration=0.0, friction=False, **options):
        """Return ``(estimate, notes)``: notes are the filter's warnings (segments dropped)."""
        from .data import DataWarning
        recording = self.recording(duration, model.joint_names)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always', DataWarning)
            try:
                result = estimate_payload_from_recording(model, recording, link, friction,
                                                         self.settings, **options)
            except DataError as err:
                notes = [str(w.message) for w in caught if issubclass(w.category, DataWarning)]
                if notes:
                    raise DataError(f'{err} ({"; ".join(notes)})') from None
                raise
        notes = [str(w.message) for w in caught if issubclass(w.category, DataWarning)]
        return result, notes
