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
The C2 path through waypoints that :func:`denoc_ros.retime` parameterizes in time.

A natural cubic spline per joint in the cumulative chord length of the waypoints,
``s_0 = 0, s_{k+1} = s_k + |q_{k+1} - q_k|`` (Euclidean joint-space distance), with zero second
derivative at both ends. It passes through every waypoint in order and has continuous
``q(s)``, ``q'(s)`` and ``q''(s)`` (C2). On segment ``k``, with ``h = s_{k+1} - s_k`` and
``d = s - s_k``, the spline is (de Boor, *A Practical Guide to Splines*, ch. IV)::

    q = q_k + c_k d + m_k d^2 / 2 + (m_{k+1} - m_k) d^3 / (6 h),
    c_k = (q_{k+1} - q_k) / h - h (2 m_k + m_{k+1}) / 6,

where the second derivatives ``m_k`` solve the tridiagonal system
``h_{k-1} m_{k-1} + 2 (h_{k-1} + h_k) m_k + h_k m_{k+1} = 6 (slope_k - slope_{k-1})``,
``m_0 = m_{W-1} = 0``. This is SciPy's ``CubicSpline(s, q, bc_type='natural')`` (the tests
compare the two), so toppra's ``SplineInterpolator`` can be handed the very same path.
"""

import numpy as np
from scipy.linalg import solve_banded

from ..errors import InputError

COINCIDENT = 1e-9
"""Joint-space distance [rad or m] under which two consecutive waypoints count as one."""


class SplinePath:
    """A natural cubic spline through waypoints ``(W, n)`` in their cumulative chord length."""

    def __init__(self, waypoints, joint_names=None):
        q = np.asarray(waypoints, dtype=float)
        if q.ndim != 2 or q.shape[0] < 2 or q.shape[1] < 1:
            raise InputError(f'waypoints have shape {q.shape}: expected (W, n) with at least '
                             'two waypoints')
        names = joint_names or [f'joint {j}' for j in range(q.shape[1])]
        bad = np.argwhere(~np.isfinite(q))
        if bad.size:
            k, j = bad[0]
            raise InputError(f'waypoint {k}: the position of joint {names[j]!r} is {q[k, j]}')
        step = np.linalg.norm(np.diff(q, axis=0), axis=1)
        same = np.flatnonzero(step < COINCIDENT)
        if same.size:
            k = int(same[0])
            raise InputError(f'waypoints {k} and {k + 1} coincide: the path would stop there '
                             'with a kink (remove the repeated waypoint)')
        self.waypoints = q
        self.knots = np.concatenate(([0.0], np.cumsum(step)))
        h = step
        W = q.shape[0]
        m = np.zeros_like(q)
        if W > 2:
            slope = np.diff(q, axis=0) / h[:, None]
            rhs = 6.0 * np.diff(slope, axis=0)
            bands = np.zeros((3, W - 2))
            bands[0, 1:] = h[1:-1]          # super-diagonal h_k
            bands[1] = 2.0 * (h[:-1] + h[1:])
            bands[2, :-1] = h[1:-1]         # sub-diagonal h_{k-1}
            m[1:-1] = solve_banded((1, 1), bands, rhs)
        self.second = m
        self.h = h

    @property
    def length(self):
        """Return the path length ``s_end`` (the chord length of the waypoints)."""
        return float(self.knots[-1])

    def segment(self, s):
        """Return the segment index of each path coordinate ``s`` (the last knot: last segment)."""
        k = np.searchsorted(self.knots, s, side='right') - 1
        return np.clip(k, 0, self.h.size - 1)

    def evaluate(self, s):
        """Return ``q(s)``, ``q'(s)``, ``q''(s)``, each ``(m, n)``, at path coordinates ``s``."""
        s = np.asarray(s, dtype=float).reshape(-1)
        k = self.segment(s)
        h = self.h[k][:, None]
        d = (s - self.knots[k])[:, None]
        q0, q1 = self.waypoints[k], self.waypoints[k + 1]
        m0, m1 = self.second[k], self.second[k + 1]
        c = (q1 - q0) / h - h * (2.0 * m0 + m1) / 6.0
        jerk = (m1 - m0) / h
        q = q0 + d * (c + d * (0.5 * m0 + d * jerk / 6.0))
        dq = c + d * (m0 + 0.5 * d * jerk)
        ddq = m0 + d * jerk
        return q, dq, ddq
