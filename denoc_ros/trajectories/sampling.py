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

from ..dynamics._compile import jit
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
        q, qd, qdd = self.sample_many(np.array([float(t)]))
        return q[0], qd[0], qdd[0]

    def sample_many(self, times, rows=None):
        """
        Return ``(q, qd, qdd)``, each ``(m, n)``, at the times ``times`` (m,), in one pass.

        A dense check of a trajectory samples it thousands of times: one compiled loop.
        ``rows`` >= m makes each array that long, its rows after the m-th left to the caller.
        """
        times = np.ascontiguousarray(times, dtype=float).reshape(-1)
        m, n = times.size, self.positions.shape[1]
        size = m if rows is None else max(int(rows), m)
        q, qd, qdd = np.empty((size, n)), np.empty((size, n)), np.empty((size, n))
        mode = 0 if self.velocities is None else 1 if self.accelerations is None else 2
        V = self.velocities if mode else self.positions
        A = self.accelerations if mode == 2 else self.positions
        _hermite(times, self.times, self.positions, V, A, mode, q[:m], qd[:m], qdd[:m])
        return q, qd, qdd


@jit
def _hermite(times, T, P, V, A, mode, q, qd, qdd):
    """
    Write the Hermite polynomial of each time's segment (mode 0 linear, 1 cubic, 2 quintic).

    On ``s = (t - T_k) / h`` in [0, 1], with slopes ``v = V h`` and curvatures ``a = A h^2``:
    cubic ``p0 + v0 s + c2 s^2 + c3 s^3``, ``c2 = 3 d - 2 v0 - v1``, ``c3 = -2 d + v0 + v1``;
    quintic ``p0 + v0 s + a0 s^2 / 2 + c3 s^3 + c4 s^4 + c5 s^5`` with
    ``c3 = 10 d - 6 v0 - 4 v1 - 1.5 a0 + 0.5 a1``, ``c4 = -15 d + 8 v0 + 7 v1 + 1.5 a0 - a1``,
    ``c5 = 6 d - 3 v0 - 3 v1 - 0.5 a0 + 0.5 a1`` (``d = p1 - p0``). Before the first point and
    from the last on: that point's positions, at rest.
    """
    N, n = P.shape
    k = 0
    for i in range(times.shape[0]):
        t = times[i]
        if t < T[0] or t >= T[N - 1]:
            row = 0 if t < T[0] else N - 1
            for j in range(n):
                q[i, j] = P[row, j]
                qd[i, j] = 0.0
                qdd[i, j] = 0.0
            continue
        if t < T[k] or t >= T[k + 1]:  # binary search unless still in the same segment
            lo, hi = 0, N - 1
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if T[mid] <= t:
                    lo = mid
                else:
                    hi = mid
            k = lo
        h = T[k + 1] - T[k]
        s = (t - T[k]) / h
        for j in range(n):
            p0, d = P[k, j], P[k + 1, j] - P[k, j]
            if mode == 0:
                q[i, j] = p0 + s * d
                qd[i, j] = d / h
                qdd[i, j] = 0.0
                continue
            v0, v1 = V[k, j] * h, V[k + 1, j] * h
            if mode == 1:
                c2 = 3.0 * d - 2.0 * v0 - v1
                c3 = -2.0 * d + v0 + v1
                q[i, j] = p0 + s * (v0 + s * (c2 + s * c3))
                qd[i, j] = (v0 + s * (2.0 * c2 + 3.0 * s * c3)) / h
                qdd[i, j] = (2.0 * c2 + 6.0 * s * c3) / (h * h)
                continue
            a0, a1 = A[k, j] * h * h, A[k + 1, j] * h * h
            c2 = 0.5 * a0
            c3 = 10.0 * d - 6.0 * v0 - 4.0 * v1 - 1.5 * a0 + 0.5 * a1
            c4 = -15.0 * d + 8.0 * v0 + 7.0 * v1 + 1.5 * a0 - a1
            c5 = 6.0 * d - 3.0 * v0 - 3.0 * v1 - 0.5 * a0 + 0.5 * a1
            q[i, j] = p0 + s * (v0 + s * (c2 + s * (c3 + s * (c4 + s * c5))))
            qd[i, j] = (v0 + s * (2.0 * c2 + s * (3.0 * c3 + s * (4.0 * c4 + 5.0 * s * c5)))) / h
            qdd[i, j] = (2.0 * c2 + s * (6.0 * c3 + s * (12.0 * c4 + 20.0 * s * c5))) / (h * h)
