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

Each stage's feasible set is 2-D; the controllable sets ``[lo_i, hi_i]`` (the least and
greatest ``x``, backward pass) are found exactly by eliminating ``u`` (Fourier-Motzkin: every
pair of rows bounding ``u`` from opposite sides gives one bound on ``x``), the forward pass
takes the greatest ``u`` that keeps ``x_{i+1}`` in ``[lo_{i+1}, hi_{i+1}]`` (Pham & Pham,
Alg. 1). The motion starts and ends at rest (``x_0 = x_N = 0``).

The gaps between grid points. TOPP-RA enforces the constraints at the grid points only, and a
controller interpolates the output points (quintic Hermite polynomials through positions,
velocities and accelerations, its clock not in step with the points), which overshoots where the
optimal ``sdd`` jumps. The output points lie on grid points (every ``stride``-th, so that they
are about ``MIN_OUTPUT_INTERVAL`` apart or more; blocks longer than the sample period are cut
into equal parts of the profile), each carrying the mean of the ``sdd`` on either side, which
meets the limits there; the speed bound of each grid point also covers the bulge of ``|q'|``
towards its neighbours, and Coulomb friction is taken with either sign where ``q'`` changes sign
between grid points. The output, its times in whole nanoseconds as a message carries them, is
then checked densely, as a controller samples it at any phase of its clock: each output interval
is sampled at both ends and at equal steps of at most ``check_period`` (at least ``MIN_STEPS``),
the last point as it is, and between two neighbouring samples ``|f|`` is bounded by the larger
of the two plus ``delta^2 / 8 max |f''|`` (the error of linear interpolation of a function with
bounded curvature; inside an output interval every quantity is a smooth function of time, the
polynomials change at the points only, which are samples), ``|f''| delta^2`` estimated by
``GAP_SAFETY`` times the larger second difference of the samples next to the gap
(:func:`.dense_check._gap_bounds`; an estimate, exact for a quadratic, not a proof: on the
benchmark and test paths a 20 us sampling of every output interval never exceeded it, where the
samples alone were exceeded by up to 1.5 % of a limit at 1 ms). The bound is applied to the
efforts with friction (one batch inverse dynamics call), accelerations and velocities against
their limits. Wherever a ratio exceeds 1, that limit is lowered on the grid points around the
block (a window that widens each round) to ``TARGET`` / ratio of the most the grid points there
use of it, so that it binds; from the second round every joint's limit of that kind is also
lowered there by ``TARGET`` / ratio (the jump behind an overshoot may come from another joint).
The problem is solved again (the backward pass redoes only the stages whose rows changed and the
ones upstream that they reach, the others keep their controllable sets) and only the blocks
whose profile changed are checked again (a block's polynomials depend on the profile from the
grid interval before it to the one after it only); after ``LOCAL_ROUNDS`` rounds every limit
shrinks by ``GLOBAL_SHRINK`` a round. The returned trajectory is one that passed the dense
check.

This module holds the result (:class:`RetimedTrajectory`) and :func:`retime`, the loop of
solves and dense checks; the reachability passes are :mod:`.reachability`, the path dynamics
and constraints :mod:`.path_dynamics`, the output points and their dense check
:mod:`.dense_check`.
"""

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from .check import _fixed_base, efforts_of, ratios, TrajectoryCheck
from .dense_check import _DenseCheck, _lower_limits, _Output, _spread, _times
from .path_dynamics import _Problem
from ..errors import DenocError, InputError

DEFAULT_SAMPLE_PERIOD = 0.01
"""Default spacing of the output points [s]."""

INTERNAL_CHECK_PERIOD = 1e-3
"""Longest step of the dense check of the output [s]; the gaps between samples are bounded."""

MIN_OUTPUT_INTERVAL = 4e-3  # [s] output points about this far apart at least
LOCAL_ROUNDS = 20
MAX_ROUNDS = 40
TARGET = 0.999
SPAN = 2  # output intervals either side of a violation whose grid points are tightened
GLOBAL_SHRINK = 0.98
ROUNDING_MARGIN = 1e-6
VELOCITY_MARGIN = 0.998  # first solve: room for the interpolation's speed ripple


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
                _lower_limits(scale, g, r, span, TARGET)
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
