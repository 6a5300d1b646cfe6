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
The path dynamics of a retiming: the grid, the coefficients along the path and the limits.

:class:`_Problem` holds the spline path through the waypoints (:mod:`.path`), its grid, the
coefficients ``tau = a(s) u + b(s) x + c(s)`` from batch inverse dynamics (Pham & Pham 2018,
Eq. 3-5), the velocity, acceleration and effort limits as rows ``a u + b x <= h`` with
Coulomb and viscous friction (the viscous bound iterated on a speed profile), and solves them
with :mod:`.reachability`'s passes. The method is :mod:`.retime`'s docstring.
"""

import numpy as np

from .check import friction_law, joint_limits
from .path import SplinePath
from .reachability import _controllable_sets, _forward, _reference
from ..dynamics import inverse_dynamics
from ..errors import InputError

GRID_INTERVALS = 2000
"""Default number of grid intervals along the path (at least ``MIN_PER_SEGMENT`` per segment)."""

MIN_PER_SEGMENT = 4
VISCOUS_ITERATIONS = 4
VISCOUS_SHRINK = 0.8


class _Problem:
    """The path, its grid, the dynamics coefficients along it and the limits, for the passes."""

    def __init__(self, model, waypoints, velocity_limits, acceleration_limits, effort_limits,
                 friction, grid_intervals):
        self.model = model
        n = model.dof
        waypoints = np.asarray(waypoints, dtype=float)
        if waypoints.ndim != 2 or waypoints.shape[1] != n:
            raise InputError(f'waypoints have shape {waypoints.shape}: expected (W, {n}), one '
                             f'column per joint ({", ".join(model.joint_names)})')
        self.path = SplinePath(waypoints, model.joint_names)
        self.velocity = joint_limits(model, 'velocity_limits', velocity_limits,
                                     model.velocity_limit)
        self.acceleration = joint_limits(model, 'acceleration_limits', acceleration_limits,
                                         np.full(n, np.inf))
        self.effort = joint_limits(model, 'effort_limits', effort_limits, model.effort_limit)
        self.law = friction_law(model, friction)
        self.s = self._grid(grid_intervals)
        q, dq, ddq = self.path.evaluate(self.s)
        self.q, self.dq, self.ddq = q, dq, ddq
        # The speed bound of a grid point also covers the bulge of |q'| between it and its
        # neighbours (midpoint over the chord), which the grid alone does not see.
        mid = np.abs(self.path.evaluate(0.5 * (self.s[:-1] + self.s[1:]))[1])
        bulge = np.maximum(mid - 0.5 * (np.abs(dq[:-1]) + np.abs(dq[1:])), 0.0)
        env = np.abs(dq)
        env[:-1] += bulge
        env[1:] = np.maximum(env[1:], np.abs(dq[1:]) + bulge)
        self.dq_env = env
        m = q.shape[0]
        zeros = np.zeros_like(q)
        tau = inverse_dynamics(model, np.concatenate((q, q, q)),
                               np.concatenate((zeros, zeros, dq)),
                               np.concatenate((zeros, dq, ddq)))
        self.c = tau[:m]
        self.a = tau[m:2 * m] - self.c
        self.b = tau[2 * m:] - self.c
        if self.law is not None:
            cf = self.law.coulomb
            f = cf * np.sign(dq)
            # At rest (the ends) the smoothed law gives no friction, and where q'_j changes
            # sign between grid points so does the friction: either value may hold there.
            f[[0, -1]] = 0.0
            self.f_hi, self.f_lo = f.copy(), f.copy()
            for side in (f[:-1], f[1:]):
                self.f_hi[1:] = np.maximum(self.f_hi[1:], side)
                self.f_lo[1:] = np.minimum(self.f_lo[1:], side)
                self.f_hi[:-1] = np.maximum(self.f_hi[:-1], side)
                self.f_lo[:-1] = np.minimum(self.f_lo[:-1], side)
            self.viscous = self.law.viscous * dq
        else:
            self.f_hi = self.f_lo = self.viscous = np.zeros_like(q)
        self._check_rest()
        self._ab = self._rows_ab()
        self._last = None  # rows and controllable sets of the last solve

    def _grid(self, intervals):
        knots = self.path.knots
        if intervals is None:
            intervals = GRID_INTERVALS
        if int(intervals) < 1:
            raise InputError(f'grid_intervals is {intervals}: it must be positive')
        per = np.maximum(np.ceil(np.diff(knots) / knots[-1] * int(intervals)), MIN_PER_SEGMENT)
        parts = [np.linspace(knots[k], knots[k + 1], int(p) + 1)[:-1]
                 for k, p in enumerate(per)]
        return np.concatenate(parts + [knots[-1:]])

    def used(self, x, u):
        """Return the ratios to the effort, acceleration and velocity limits at the grid points."""
        mean_u = np.concatenate((u[:1], 0.5 * (u[:-1] + u[1:]), u[-1:]))[:, None]
        xs, sd = x[:, None], np.sqrt(x)[:, None]
        tau = self.a * mean_u + self.b * xs + self.c + self.f_hi + self.viscous * sd
        acc = self.dq * mean_u + self.ddq * xs
        return (np.abs(tau) / self.effort, np.abs(acc) / self.acceleration,
                np.abs(self.dq) * sd / self.velocity)

    def where(self, i):
        """Return where grid point ``i`` lies, in words (waypoint, or between two)."""
        s = self.s[i]
        knots = self.path.knots
        k = int(np.argmin(np.abs(knots - s)))
        if abs(knots[k] - s) <= 1e-12 * (1.0 + knots[-1]):
            return f'waypoint {k}'
        k = int(np.searchsorted(knots, s)) - 1
        return f'between waypoints {k} and {k + 1}'

    def _check_rest(self):
        """Refuse a path on which gravity (and Coulomb friction) alone exceeds a limit."""
        need = np.maximum(np.abs(self.c + self.f_hi), np.abs(self.c + self.f_lo))
        ratio = need / self.effort
        i, j = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        if ratio[i, j] > 1.0:
            what = 'gravity and friction' if self.law is not None else 'gravity'
            raise InputError(
                f'{self.where(i)}: {what} alone need {need[i, j]:.4g} at joint '
                f'{self.model.joint_names[j]!r}, above its effort limit {self.effort[j]:.4g}')

    def rows(self, scale_tau, scale_acc, scale_vel, sd=None, cap=False):
        """
        Return the rows ``a u + b x <= h`` (N+1, 2 x 4n) and ``x``'s upper bounds (N+1,).

        ``sd``: a speed profile bounding the viscous friction ``v q' sd`` (by ``|v q'| sd`` on
        the side it loads); ``cap`` also bounds ``x`` by ``sd^2``, which makes that bound hold.
        """
        L = self.effort * scale_tau
        A = self.acceleration * scale_acc
        V = self.velocity * scale_vel
        n = self.dq.shape[1]
        h = np.concatenate((L - self.c - self.f_hi, L + self.c + self.f_lo, A, A), axis=1)
        if sd is not None:
            h[:, :n] -= np.maximum(self.viscous, 0.0) * sd[:, None]
            h[:, n:2 * n] -= np.maximum(-self.viscous, 0.0) * sd[:, None]
        h = h[:, self._keep]
        with np.errstate(divide='ignore'):
            xv = np.where(self.dq_env > 0.0, (V / self.dq_env) ** 2, np.inf)
        xmax = xv.min(axis=1)
        if cap:
            xmax = np.minimum(xmax, sd * sd)
        # First-order interpolation (Pham & Pham Sec. VI-A): stage i also meets the rows of
        # s_{i+1} at x_{i+1} = x + 2 delta u, so u is bounded by both ends of its interval.
        h = np.hstack((h, np.vstack((h[1:], h[-1:]))))
        a, b = self._ab
        return a, b, h, xmax

    def _rows_ab(self):
        """Return the constant parts ``a``, ``b`` of the rows (infinite limits have none)."""
        n = self.dq.shape[1]
        a = np.concatenate((self.a, -self.a, self.dq, -self.dq), axis=1)
        b = np.concatenate((self.b, -self.b, self.ddq, -self.ddq), axis=1)
        effort, acceleration = np.isfinite(self.effort), np.isfinite(self.acceleration)
        finite = np.concatenate((effort, effort, acceleration, acceleration))
        self._keep = np.flatnonzero(finite)
        if self._keep.size == 0:  # no row at all: one that bounds nothing
            self._keep = np.array([2 * n])
            a[:, 2 * n], b[:, 2 * n] = 0.0, 0.0
        a, b = a[:, self._keep], b[:, self._keep]
        two_delta = np.append(2.0 * np.diff(self.s), 0.0)[:, None]
        a2, b2 = (np.vstack((m[1:], m[-1:])) for m in (a, b))
        return (np.ascontiguousarray(np.hstack((a, a2 + two_delta * b2))),
                np.ascontiguousarray(np.hstack((b, b2))))

    def solve(self, scale_tau, scale_acc, scale_vel):
        """Return the grid profile ``x`` (N+1,), ``u`` (N,) of TOPP-RA under the scaled limits."""
        x, u = self._pass(self.rows(scale_tau, scale_acc, scale_vel))
        if not np.any(self.viscous):
            return x, u
        # Viscous friction v q' sd: bounded with the speed of the previous profile, the bound
        # made to hold in the last pass by capping x at that profile (see the module docstring).
        sd = np.sqrt(x)
        for k in range(VISCOUS_ITERATIONS + 40):
            last = k >= VISCOUS_ITERATIONS
            try:
                x, u = self._pass(self.rows(scale_tau, scale_acc, scale_vel, sd, cap=last))
            except InputError:
                if k >= VISCOUS_ITERATIONS + 39:
                    raise
                sd = sd * VISCOUS_SHRINK  # friction at that speed leaves no margin: slower
                continue
            if last:
                return x, u
            sd = 0.5 * (sd + np.sqrt(x))

    def _pass(self, rows):
        a, b, h, xmax = rows
        N = self.s.size - 1
        lo, hi = np.zeros(N + 1), np.zeros(N + 1)
        last = self._last
        if last is None:
            same, old_lo, old_hi = np.zeros(N + 1, dtype=np.bool_), lo, hi
        else:
            same = (xmax == last[1]) & np.all(h == last[0], axis=1)
            old_lo, old_hi = last[2], last[3]
        failed = _controllable_sets(a, b, h, xmax, self.s, lo, hi, same, old_lo, old_hi)
        if failed >= 0:
            self._infeasible(failed)
        self._last = (h, xmax, lo, hi)  # a re-solve redoes the stages that changed only
        x, u = np.zeros(N + 1), np.zeros(N)
        _forward(a, b, h, self.s, lo, hi, _reference(hi), x, u)
        if not np.all(np.isfinite(x)):
            i = int(np.argmin(np.isfinite(x)))
            raise InputError(f'{self.where(i)}: no limit bounds the speed along the path '
                             '(give velocity, acceleration or effort limits)')
        return x, u

    def _infeasible(self, i):
        """Raise naming the grid point and the joint nearest its effort limit at rest there."""
        need = np.maximum(np.abs(self.c[i] + self.f_hi[i]), np.abs(self.c[i] + self.f_lo[i]))
        j = int(np.argmax(need / self.effort))
        raise InputError(
            f'{self.where(i)}: no motion along the path satisfies the limits (joint '
            f'{self.model.joint_names[j]!r} needs {need[j]:.4g} of its effort limit '
            f'{self.effort[j]:.4g} at rest there; the path may be too curved for its '
            'velocity or acceleration limits)')
