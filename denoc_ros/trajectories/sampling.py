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
Sampling a joint trajectory between its points, as a trajectory controller does.

Between two points the positions follow the Hermite polynomial that matches what the points
give: quintic with positions, velocities and accelerations; cubic with positions and velocities;
linear with positions only (ROS's joint_trajectory_controller makes the same choice). Before the
first point the first point's positions hold, after the last the last point's, at rest.
"""

import numpy as np

from ..errors import InputError


def _as_table(name, values, shape):
    arr = np.asarray(values, dtype=float)
    if arr.shape != shape:
        raise InputError(f'trajectory {name} have shape {arr.shape}, expected {shape}')
    if not np.all(np.isfinite(arr)):
        raise InputError(f'trajectory {name} contain NaN or inf')
    return arr


class TrajectorySampler:
    """Positions, velocities and accelerations of a joint trajectory at any time."""

    def __init__(self, times, positions, velocities=None, accelerations=None):
        t = np.asarray(times, dtype=float)
        if t.ndim != 1 or t.size == 0:
            raise InputError('a trajectory needs at least one point')
        if not np.all(np.isfinite(t)) or np.any(np.diff(t) <= 0.0):
            raise InputError('trajectory times must be finite and strictly increasing')
        n = np.shape(positions)[-1] if np.ndim(positions) == 2 else -1
        shape = (t.size, n)
        self.times = t
        self.positions = _as_table('positions', positions, shape)
        self.velocities = (None if velocities is None
                           else _as_table('velocities', velocities, shape))
        if accelerations is not None and velocities is None:
            raise InputError('trajectory accelerations given without velocities')
        self.accelerations = (None if accelerations is None
                              else _as_table('accelerations', accelerations, shape))

    @property
    def duration(self):
        """Return the time of the last point."""
        return float(self.times[-1])

    def sample(self, t):
        """Return ``(q, qd, qdd)`` at time ``t`` (seconds on the trajectory's own time axis)."""
        times, P = self.times, self.positions
        n = P.shape[1]
        if t < times[0] or t >= times[-1]:  # hold the first / last point at rest
            return (P[0] if t < times[0] else P[-1]).copy(), np.zeros(n), np.zeros(n)
        k = int(np.searchsorted(times, t, side='right')) - 1
        h = times[k + 1] - times[k]
        s = (t - times[k]) / h
        p0, p1 = P[k], P[k + 1]
        if self.velocities is None:
            return p0 + s * (p1 - p0), (p1 - p0) / h, np.zeros(n)
        v0, v1 = self.velocities[k] * h, self.velocities[k + 1] * h
        if self.accelerations is None:
            return self._cubic(s, h, p0, p1, v0, v1)
        a0, a1 = self.accelerations[k] * h * h, self.accelerations[k + 1] * h * h
        return self._quintic(s, h, p0, p1, v0, v1, a0, a1)

    def sample_many(self, times):
        """
        Return ``(q, qd, qdd)``, each ``(m, n)``, at the times ``times`` (m,), in one pass.

        The same polynomials as :meth:`sample`, evaluated for all times at once (a dense check
        of a trajectory samples it thousands of times).
        """
        times = np.asarray(times, dtype=float).reshape(-1)
        T, P = self.times, self.positions
        m, n = times.size, P.shape[1]
        q, qd, qdd = np.empty((m, n)), np.zeros((m, n)), np.zeros((m, n))
        before, after = times < T[0], times >= T[-1]
        q[before], q[after] = P[0], P[-1]
        inside = ~(before | after)
        t = times[inside]
        if t.size == 0:
            return q, qd, qdd
        k = np.searchsorted(T, t, side='right') - 1
        h = (T[k + 1] - T[k])[:, None]
        s = (t[:, None] - T[k][:, None]) / h
        p0, p1 = P[k], P[k + 1]
        if self.velocities is None:
            q[inside], qd[inside] = p0 + s * (p1 - p0), (p1 - p0) / h
            return q, qd, qdd
        v0, v1 = self.velocities[k] * h, self.velocities[k + 1] * h
        if self.accelerations is None:
            out = self._cubic(s, h, p0, p1, v0, v1)
        else:
            h2 = h * h
            out = self._quintic(s, h, p0, p1, v0, v1, self.accelerations[k] * h2,
                                self.accelerations[k + 1] * h2)
        q[inside], qd[inside], qdd[inside] = out
        return q, qd, qdd

    @staticmethod
    def _cubic(s, h, p0, p1, v0, v1):
        """Cubic Hermite on s in [0, 1] with end slopes v0, v1 (already scaled by h)."""
        c2 = 3.0 * (p1 - p0) - 2.0 * v0 - v1
        c3 = -2.0 * (p1 - p0) + v0 + v1
        q = p0 + s * (v0 + s * (c2 + s * c3))
        dq = v0 + s * (2.0 * c2 + 3.0 * s * c3)
        ddq = 2.0 * c2 + 6.0 * s * c3
        return q, dq / h, ddq / (h * h)

    @staticmethod
    def _quintic(s, h, p0, p1, v0, v1, a0, a1):
        """Quintic Hermite on s in [0, 1] matching positions, slopes and curvatures."""
        d = p1 - p0
        c3 = 10.0 * d - 6.0 * v0 - 4.0 * v1 - 1.5 * a0 + 0.5 * a1
        c4 = -15.0 * d + 8.0 * v0 + 7.0 * v1 + 1.5 * a0 - a1
        c5 = 6.0 * d - 3.0 * v0 - 3.0 * v1 - 0.5 * a0 + 0.5 * a1
        c2 = 0.5 * a0
        q = p0 + s * (v0 + s * (c2 + s * (c3 + s * (c4 + s * c5))))
        dq = v0 + s * (2.0 * c2 + s * (3.0 * c3 + s * (4.0 * c4 + 5.0 * s * c5)))
        ddq = 2.0 * c2 + s * (6.0 * c3 + s * (12.0 * c4 + 20.0 * s * c5))
        return q, dq / h, ddq / (h * h)
