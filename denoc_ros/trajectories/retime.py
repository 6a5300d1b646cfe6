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
Time-optimal retiming of a joint path under velocity, acceleration and effort limits.

Method: TOPP-RA, time-optimal path parameterization by reachability analysis (H. Pham and
Q.-C. Pham, "A New Approach to Time-Optimal Path Parameterization Based on Reachability
Analysis", IEEE Trans. Robotics 34(3):645-659, 2018). The path ``q(s)`` is the natural cubic
spline through the waypoints (:mod:`.path`); along it ``qd = q' sd`` and
``qdd = q' sdd + q'' sd^2``, so with ``x = sd^2`` and ``u = sdd`` (constant on each grid
interval, ``x_{i+1} = x_i + 2 u_i (s_{i+1} - s_i)``) the constraints at grid point ``s_i`` are
linear in ``(u, x)`` (Pham & Pham Eq. 3-5)::

    tau = a(s) u + b(s) x + c(s),   a = M q',  b = M q'' + C(q, q') q',  c = g(q),
    |q'_j u + q''_j x| <= qdd_max_j,   x q'_j^2 <= qd_max_j^2.

``a``, ``b``, ``c`` come from one batch inverse dynamics call over the grid:
``c = ID(q, 0, 0)``, ``a = ID(q, 0, q') - c``, ``b = ID(q, q', q'') - c``.

Friction (:mod:`denoc_ros.friction`, Craig's ``v qd + c sgn(qd)``). Coulomb: for ``sd > 0``
the term is ``c sgn(q'_j)`` (``c tanh(q'_j sd / v_s)`` with the default smoothing, the same
once ``|qd| > 20 v_s``), a shift of ``c(s)``; the dense check covers the smoothing band.
Viscous: ``v q'_j sd = v q'_j sqrt(x)`` is not linear in ``x`` (why toppra leaves it out).
It is bounded with a speed profile ``sd_prev``: ``|v q'_j| sd_prev`` subtracted from the limit
on the side the friction loads, nothing credited on the side it helps. The bound holds for
every profile under ``sd_prev``; the passes iterate ``sd_prev`` from the frictionless optimum
towards the fixed point (``VISCOUS_ITERATIONS``, averaged, shrunk by ``VISCOUS_SHRINK`` when
the bound leaves no margin), and the last pass also caps ``x <= sd_prev^2``, which makes it a
feasible (conservative) solution of the problem with friction.

Each stage's feasible set is 2-D; the controllable sets ``K_i = [min x, max x]`` (backward
pass) are found exactly by eliminating ``u`` (Fourier-Motzkin: every pair of rows bounding ``u``
from opposite sides gives one bound on ``x``), the forward pass takes the greatest ``u`` that
keeps ``x_{i+1}`` in ``K_{i+1}`` (Pham & Pham, Alg. 1). The motion starts and ends at rest
(``x_0 = x_N = 0``).

The gaps between grid points. TOPP-RA enforces the constraints at the grid points only, and a
controller interpolates the output points (quintic Hermite polynomials through positions,
velocities and accelerations, its clock not in step with the points), which overshoots where
the optimal ``sdd`` jumps. The output points lie on grid points (every ``stride``-th, so that
they are about ``MIN_OUTPUT_INTERVAL`` apart or more; blocks longer than the sample period are
cut into equal parts of the profile), each carrying the mean of the ``sdd`` on either side,
which meets the limits there; the speed bound of each grid point also covers the bulge of
``|q'|`` towards its neighbours, and Coulomb friction is taken with either sign where ``q'``
changes sign between grid points. The output, its times in whole nanoseconds as a message
carries them, is then checked densely: each output interval at its start and at equal steps of
at most ``check_period`` and at least ``MIN_STEPS`` per interval (the shape of an overshoot
scales with the interval), the last point as it is; efforts with friction (one batch inverse
dynamics call), accelerations and velocities against their limits. Wherever a ratio exceeds 1,
that limit is lowered on the grid points around the block (a window that widens each round) to
``TARGET`` / ratio of the most the grid points there use of it, so that it binds; from the
second round every joint's limit of that kind is also lowered there by ``TARGET`` / ratio (the
jump behind an overshoot may come from another joint). The problem is solved again and only
the blocks whose profile changed are checked again (a block's polynomials depend on the
profile from the grid interval before it to the one after it only); after ``LOCAL_ROUNDS``
rounds every limit shrinks by ``GLOBAL_SHRINK`` a round. The returned trajectory is one that
passed the dense check.
"""

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from .check import (_fixed_base, efforts_of, friction_law, joint_limits, ratios,
                    TrajectoryCheck)
from .path import SplinePath
from .sampling import TrajectorySampler
from ..dynamics import inverse_dynamics
from ..dynamics._compile import jit
from ..errors import DenocError, InputError

DEFAULT_SAMPLE_PERIOD = 0.01
"""Default spacing of the output points [s]."""

INTERNAL_CHECK_PERIOD = 5e-4
"""Sampling period of the dense check of the output [s]: half a 1 kHz controller's period."""

GRID_INTERVALS = 2000
"""Default number of grid intervals along the path (at least ``MIN_PER_SEGMENT`` per segment)."""

MIN_PER_SEGMENT = 4
MIN_OUTPUT_INTERVAL = 4e-3  # [s] output points about this far apart at least
MIN_STEPS = 8  # dense samples per output interval at least (its shape scales with it)
VISCOUS_ITERATIONS = 4
VISCOUS_SHRINK = 0.8
LOCAL_ROUNDS = 20
MAX_ROUNDS = 40
TARGET = 0.999
SPAN = 2  # output intervals either side of a violation whose grid points are tightened
GLOBAL_SHRINK = 0.98
REFERENCE_WINDOW = 2
REFERENCE_MARGIN = 0.0
ROUNDING_MARGIN = 1e-6
VELOCITY_MARGIN = 0.998  # first solve: room for the interpolation's speed ripple
TRIVIAL = 1e300  # right-hand side of a row that bounds nothing (a limit of inf)


@dataclass(frozen=True)
class RetimedTrajectory:
    """The result of :func:`retime`: output points (model joint order) and what was checked."""

    joint_names: Tuple[str, ...]
    t: np.ndarray            # (M,) [s], from 0, spaced at most sample_period
    q: np.ndarray            # (M, n)
    qd: np.ndarray           # (M, n), zero at both ends
    qdd: np.ndarray          # (M, n)
    effort: np.ndarray       # (M, n) predicted effort (inverse dynamics + friction if asked)
    duration: float          # [s]
    max_effort_ratio: float  # worst |effort| / limit of the dense check of the output
    check: TrajectoryCheck   # the dense check of the output
    rounds: int              # solves until the dense check passed
    grid: np.ndarray         # (N + 1,) path coordinates of the grid
    sd: np.ndarray           # (N + 1,) path speed at the grid points


@jit
def _eliminate(a, b, h, i, lo_next, hi_next, two_delta, tol):
    """Return the ``x`` interval of stage ``i``'s rows with ``x + 2 delta u`` in [lo, hi]."""
    R = a.shape[1]
    xlo, xhi = 0.0, np.inf
    # Rows 0..R-1 are the stage's, R and R+1 the reachability ones.
    for k in range(R + 2):
        if k < R:
            ak, bk, hk = a[i, k], b[i, k], h[i, k]
        elif k == R:
            ak, bk, hk = two_delta, 1.0, hi_next
        else:
            ak, bk, hk = -two_delta, -1.0, -lo_next
        if ak == 0.0:
            if bk > 0.0:
                xhi = min(xhi, hk / bk)
            elif bk < 0.0:
                xlo = max(xlo, hk / bk)
            elif hk < -tol:
                return 1.0, 0.0
            continue
        if ak < 0.0:
            continue
        for m in range(R + 2):
            if m < R:
                am, bm, hm = a[i, m], b[i, m], h[i, m]
            elif m == R:
                am, bm, hm = two_delta, 1.0, hi_next
            else:
                am, bm, hm = -two_delta, -1.0, -lo_next
            if am >= 0.0:
                continue
            # (-am) * row_k + ak * row_m eliminates u: c x <= d.
            c = -am * bk + ak * bm
            d = -am * hk + ak * hm
            if c > 0.0:
                xhi = min(xhi, d / c)
            elif c < 0.0:
                xlo = max(xlo, d / c)
            elif d < -tol * (abs(am * hk) + abs(ak * hm)):
                return 1.0, 0.0
    return xlo, xhi


@jit
def _controllable_sets(a, b, h, xmax, s, lo, hi):
    """Backward pass (Pham & Pham Alg. 1): ``K_i = [lo_i, hi_i]``; the failed stage or -1."""
    N = s.shape[0] - 1
    tol = 1e-9
    # The last stage: at rest, if rest is feasible there.
    xl, xh = _eliminate(a, b, h, N, -TRIVIAL, TRIVIAL, 0.0, tol)
    if xl > tol * (1.0 + abs(xh)):
        return N
    lo[N], hi[N] = 0.0, 0.0
    for i in range(N - 1, -1, -1):
        xl, xh = _eliminate(a, b, h, i, lo[i + 1], hi[i + 1], 2.0 * (s[i + 1] - s[i]), tol)
        xh = min(xh, xmax[i])
        if xl > xh + tol * (1.0 + abs(xh)):
            return i
        lo[i] = max(xl, 0.0)
        hi[i] = max(xh, lo[i])
    return -1


@jit
def _forward(a, b, h, s, lo, hi, ref, x, u):
    """Forward pass: from rest, the greatest ``u_i`` keeping ``x_{i+1}`` in ``K_{i+1}``, <= ref."""
    N = s.shape[0] - 1
    R = a.shape[1]
    x[0] = 0.0
    for i in range(N):
        two_delta = 2.0 * (s[i + 1] - s[i])
        xi = x[i]
        ub = (min(hi[i + 1], max(ref[i + 1], lo[i + 1])) - xi) / two_delta
        lb = (lo[i + 1] - xi) / two_delta
        for k in range(R):
            ak = a[i, k]
            if ak > 0.0:
                ub = min(ub, (h[i, k] - b[i, k] * xi) / ak)
            elif ak < 0.0:
                lb = max(lb, (h[i, k] - b[i, k] * xi) / ak)
        ui = max(ub, lb)  # ub < lb only by rounding: stay inside K_{i+1}
        xn = xi + two_delta * ui
        xn = min(max(xn, lo[i + 1]), hi[i + 1])
        u[i] = (xn - xi) / two_delta
        x[i + 1] = xn
    x[N] = 0.0
    u[N - 1] = -x[N - 1] / (2.0 * (s[N] - s[N - 1]))


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
        failed = _controllable_sets(a, b, h, xmax, self.s, lo, hi)
        if failed >= 0:
            self._infeasible(failed)
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


def _reference(hi):
    """
    Return the profile the forward pass stays under: ``K``'s upper bounds, its dips widened.

    Riding the boundary of the controllable sets exactly, as the greedy pass does, makes ``u``
    chatter where a joint's ``a(s)`` crosses zero (a dynamic singularity: the boundary has a
    narrow dip there that the pass can only meet with ``u`` of either extreme sign). Around
    every local minimum of the bounds the pass stays under that minimum for
    ``REFERENCE_WINDOW`` points on either side (times ``1 - REFERENCE_MARGIN``), so it enters
    and leaves the dip level. Every ``u`` that keeps ``x`` in the controllable sets is still
    feasible, so the result remains feasible (Pham & Pham, Thm. 1); monotone stretches of the
    bounds are left as they are.
    """
    w = REFERENCE_WINDOW
    ref = hi * (1.0 - REFERENCE_MARGIN)
    inner = hi[1:-1]
    dips = np.flatnonzero((inner < hi[:-2]) & (inner <= hi[2:])) + 1
    for j in dips:
        lo, up = max(j - w, 1), min(j + w + 1, hi.size - 1)
        ref[lo:up] = np.minimum(ref[lo:up], ref[j])
    return ref


def _times(s, x):
    """Return the grid times: ``t_{i+1} = t_i + 2 ds / (sqrt(x_i) + sqrt(x_{i+1}))``."""
    root = np.sqrt(x)
    dt = 2.0 * np.diff(s) / (root[:-1] + root[1:])
    return np.concatenate(([0.0], np.cumsum(dt)))


class _Output:
    """
    The output points of a grid profile: every ``stride``-th grid point, more where needed.

    Block ``b`` spans grid points ``b stride .. (b + 1) stride`` (the last one up to the end);
    a block longer than ``sample_period`` is cut into equal parts at times of the profile
    (constant ``u_i`` on grid interval ``i``). At a grid point the profile's ``sdd`` jumps from
    ``u_{i-1}`` to ``u_i``; the point carries the mean, which meets the limits there since both
    do (the stage's constraints are convex in ``u``). The stride keeps the output intervals
    from getting much shorter than ``MIN_OUTPUT_INTERVAL`` (a quintic over a very short
    interval turns the nanoseconds of its time stamps into large acceleration errors). The
    output inside block ``b`` depends on the profile from ``u`` of the grid interval before to
    ``u`` of the one after only, so a re-solve that leaves those unchanged leaves its
    polynomials unchanged.
    """

    def __init__(self, problem, x, u, sample_period, stride):
        s = problem.s
        N = s.size - 1
        tg = _times(s, x)
        bounds = np.append(np.arange(0, N, stride), N)
        bt = tg[bounds]
        bdt = np.diff(bt)
        parts = np.maximum(np.ceil(bdt / sample_period - 1e-9), 1.0).astype(np.intp)
        owner = np.repeat(np.arange(bdt.size), parts)
        first = np.concatenate(([0], np.cumsum(parts)[:-1]))
        j = np.arange(owner.size) - np.repeat(first, parts)
        times = bt[owner] + j * (bdt / parts)[owner]
        gi = np.clip(np.searchsorted(tg, times, side='right') - 1, 0, N - 1)
        gi[first] = bounds[:-1]
        tau = times - tg[gi]
        tau[first] = 0.0
        root = np.sqrt(x)
        mean_u = np.concatenate((u[:1], 0.5 * (u[:-1] + u[1:]), u[-1:]))
        sd = np.append(np.maximum(root[gi] + u[gi] * tau, 0.0), 0.0)
        sp = np.append(np.minimum(s[gi] + root[gi] * tau + 0.5 * u[gi] * tau * tau, s[-1]),
                       s[-1])
        sdd = np.append(np.where(tau == 0.0, mean_u[gi], u[gi]), u[-1])
        q, dq, ddq = problem.path.evaluate(sp)
        qd = dq * sd[:, None]
        qdd = dq * sdd[:, None] + ddq * (sd * sd)[:, None]
        qd[0] = qd[-1] = 0.0
        q[-1] = problem.path.waypoints[-1]
        # In whole nanoseconds, as a JointTrajectory message carries them: the check sees the
        # very polynomials a controller builds.
        self.T = np.round(np.append(times, tg[-1]) * 1e9) / 1e9
        self.x, self.u, self.tg, self.stride, self.bounds = x, u, tg, stride, bounds
        self.q, self.qd, self.qdd = q, qd, qdd
        self.owner = owner  # block of each output interval
        self.duration = float(self.T[-1])

    def changed(self, previous):
        """Return which blocks' output differs from ``previous`` (all without one)."""
        B = self.bounds.size - 1
        if previous is None or previous.stride != self.stride:
            return np.ones(B, dtype=bool)
        dx = self.x != previous.x
        du = np.concatenate(([False], self.u != previous.u, [False]))
        per_interval = dx[:-1] | dx[1:] | du[:-2] | du[1:-1] | du[2:]
        return np.logical_or.reduceat(per_interval, self.bounds[:-1])

    def per_interval(self, per_block):
        """Return block values ``(..., B, n)`` repeated over their grid intervals."""
        return np.repeat(per_block, np.diff(self.bounds), axis=-2)


class _DenseCheck:
    """
    The dense check of the output, kept per block of output points, redone where it changed.

    Each output interval is sampled at its start and at equal steps of at most ``period``
    (local time; a 1 kHz controller's clock may have any phase against the points), the last
    point too: efforts (one batch inverse dynamics call with friction), accelerations and
    velocities against their limits; the worst ratio per block and joint is kept.
    """

    def __init__(self, problem, period):
        self.problem, self.period = problem, period
        self.worst = self.count = None
        self.limits = (problem.effort, problem.acceleration, problem.velocity)

    def _samples(self, out, intervals):
        """Return the sample times over output ``intervals`` and each one's output interval."""
        T = out.T
        h = T[intervals + 1] - T[intervals]
        steps = np.maximum(np.ceil(h / self.period - 1e-9), MIN_STEPS).astype(np.intp)
        which = np.repeat(intervals, steps)
        first = np.concatenate(([0], np.cumsum(steps)[:-1]))
        j = np.arange(which.size) - np.repeat(first, steps)
        times = T[which] + j * (h / steps)[np.searchsorted(intervals, which)]
        return times, which

    @staticmethod
    def _states(out, times, last):
        """Return the sampled states at ``times``, and the last point as it is if ``last``."""
        sampler = TrajectorySampler(out.T, out.q, out.qd, out.qdd)
        Q, QD, QDD = sampler.sample_many(times, times.size + bool(last))
        if last:  # what the last point carries (the sampler holds it at rest from then on)
            Q[-1], QD[-1], QDD[-1] = out.q[-1], out.qd[-1], out.qdd[-1]
        return Q, QD, QDD

    def update(self, out, changed):
        """Check the output intervals of the ``changed`` grid intervals; return the worst."""
        if self.worst is None or self.worst.shape[1] != changed.size:
            self.worst = np.zeros((3, changed.size, out.q.shape[1]))  # effort, acc., velocity
            self.count = np.zeros(changed.size, dtype=np.intp)
        intervals = np.flatnonzero(changed[out.owner])
        if intervals.size:
            times, which = self._samples(out, intervals)
            Q, QD, QDD = self._states(out, times, intervals[-1] == out.T.size - 2)
            if Q.shape[0] > times.size:
                which = np.append(which, out.T.size - 2)
            tau = efforts_of(self.problem.model, Q, QD, QDD, self.problem.law)
            group = out.owner[which]
            starts = np.flatnonzero(np.diff(group, prepend=-1))
            for k, v in enumerate((tau, QDD, QD)):  # ratios in place (the arrays are ours)
                if not np.any(np.isfinite(self.limits[k])):
                    self.worst[k, group[starts]] = 0.0
                    continue
                v = np.abs(v, out=v)
                v /= self.limits[k]
                self.worst[k, group[starts]] = np.maximum.reduceat(v, starts, axis=0)
            self.count[group[starts]] = np.diff(np.append(starts, group.size))
        return self.worst

    def worst_time(self, out):
        """Return the time of the worst effort ratio (its grid interval sampled again)."""
        i = int(np.argmax(self.worst[0].max(axis=1)))
        intervals = np.flatnonzero(out.owner == i)
        times, _ = self._samples(out, intervals)
        Q, QD, QDD = self._states(out, times, intervals[-1] == out.T.size - 2)
        times = np.append(times, out.T[-1])[:Q.shape[0]]
        tau = efforts_of(self.problem.model, Q, QD, QDD, self.problem.law)
        r = ratios(tau, self.problem.effort).max(axis=1)
        return float(times[int(np.argmax(r))])


def _spread(per_interval, span):
    """Return per grid point the least value (N, n) of the intervals within ``span`` of it."""
    N, n = per_interval.shape
    out = np.full((N + 1, n), np.inf)
    for d in range(-span, span + 2):  # interval i reaches the points i - span .. i + 1 + span
        lo, hi = max(d, 0), min(N + d, N + 1)
        out[lo:hi] = np.minimum(out[lo:hi], per_interval[lo - d:hi - d])
    return out


def _gather(per_point, span):
    """Return per grid interval the greatest value (N+1, n) of the points within ``span``."""
    N1, n = per_point.shape
    N = N1 - 1
    out = np.zeros((N, n))
    for d in range(-span, span + 2):  # interval i's points i - span .. i + 1 + span
        lo, hi = max(-d, 0), min(N, N1 - d)
        out[lo:hi] = np.maximum(out[lo:hi], per_point[lo + d:hi + d])
    return out


def retime(model, waypoints, velocity_limits=None, acceleration_limits=None, effort_limits=None,
           friction=False, sample_period=DEFAULT_SAMPLE_PERIOD, grid_intervals=None,
           check_period=INTERNAL_CHECK_PERIOD):
    """
    Return the time-optimal :class:`RetimedTrajectory` through ``waypoints`` (W, n), rest to rest.

    Path: the natural cubic spline through the waypoints (:mod:`.path`). Limits: velocity
    (default the URDF's ``<limit velocity>``), acceleration (default none) and effort (default
    ``<limit effort>``), each a scalar or one per joint; ``friction`` True adds the model's URDF
    friction (or pass a :class:`~denoc_ros.friction.JointFriction`). TOPP-RA (Pham & Pham 2018)
    on ``grid_intervals`` intervals, output points every at most ``sample_period`` s, checked
    densely as a controller samples them (module docstring).
    """
    _fixed_base(model)
    if not (np.isfinite(sample_period) and sample_period > 0.0):
        raise InputError(f'sample_period is {sample_period}: it must be positive')
    if not (np.isfinite(check_period) and check_period > 0.0):
        raise InputError(f'check_period is {check_period}: it must be positive')
    problem = _Problem(model, waypoints, velocity_limits, acceleration_limits, effort_limits,
                       friction, grid_intervals)
    N1, n = problem.q.shape
    # effort, acceleration, velocity; a hair inside, so that rounding (times sent in whole
    # nanoseconds) does not tip a point that rides a limit over it
    scales = [np.full((N1, n), 1.0 - ROUNDING_MARGIN) for _ in range(3)]
    scales[2] *= VELOCITY_MARGIN
    dense = _DenseCheck(problem, check_period)
    out = None
    for rounds in range(1, MAX_ROUNDS + 1):
        x, u = problem.solve(*scales)
        if out is None:
            dt = np.diff(_times(problem.s, x))
            stride = max(int(np.ceil(MIN_OUTPUT_INTERVAL / np.quantile(dt, 0.1))), 1)
        new = _Output(problem, x, u, sample_period, stride)
        worst_all = new.per_interval(dense.update(new, new.changed(out)))
        out = new
        worst = float(worst_all.max())
        if worst <= 1.0:
            break
        if rounds >= MAX_ROUNDS:
            raise DenocError(f'retime: the dense check still finds {worst:.4f} of a limit after '
                             f'{rounds} rounds')
        if rounds > LOCAL_ROUNDS:
            for scale in scales:
                scale *= GLOBAL_SHRINK
            continue
        # Lower each violated limit on the grid points around the intervals exceeding it, to
        # TARGET / ratio of the most the grid points there use of it (so that it binds).
        for scale, r, g in zip(scales, worst_all, problem.used(x, u)):
            if r.max() > 1.0:
                span = SPAN * rounds  # wider each round: a violation pushed aside is caught
                use = np.minimum(_gather(g, span), _gather(scale, span))
                goal = np.where(r > 1.0, use * TARGET / np.maximum(r, 1e-300), np.inf)
                np.minimum(scale, _spread(goal, span), out=scale)
                if rounds < 2:
                    continue
                # The jump of sdd behind an overshoot that persists may come from another
                # joint's limit: all of them, a little.
                every = np.minimum(TARGET / np.maximum(r.max(axis=1), 1e-300), 1.0)
                scale *= _spread(np.broadcast_to(every[:, None], r.shape), SPAN)
    effort = efforts_of(model, out.q, out.qd, out.qdd, problem.law)
    effort_ratio, _, velocity_ratio = dense.worst
    max_effort = np.maximum(effort_ratio.max(axis=0), ratios(effort, problem.effort).max(axis=0))
    wj = int(np.argmax(effort_ratio.max(axis=0)))
    check = TrajectoryCheck(
        joint_names=tuple(model.joint_names), max_effort_ratio=max_effort,
        max_velocity_ratio=velocity_ratio.max(axis=0), worst_time=dense.worst_time(out),
        worst_joint=model.joint_names[wj], efforts=effort, feasible=True,
        samples=int(dense.count.sum()))
    return RetimedTrajectory(
        joint_names=tuple(model.joint_names), t=out.T, q=out.q, qd=out.qd, qdd=out.qdd,
        effort=effort, duration=out.duration, max_effort_ratio=float(max_effort.max()),
        check=check, rounds=rounds, grid=problem.s.copy(), sd=np.sqrt(out.x))
