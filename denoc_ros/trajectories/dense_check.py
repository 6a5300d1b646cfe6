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
The dense verification of a retimed output and the tightening of the limits it calls for.

:class:`_Output` turns a grid profile into output points (times in whole nanoseconds),
:class:`_DenseCheck` samples the output as a controller interpolates it (quintic Hermite
polynomials, :mod:`.sampling`) and keeps a bound of the ratio to each limit per block, the gaps
between its samples included (:func:`_gap_bounds`), redoing only the blocks that changed;
:func:`_lower_limits` and :func:`_spread` carry a violation's ratio to the grid points around
it, where :func:`~.retime.retime` lowers the limit. The method is :mod:`.retime`'s docstring.
"""

import numpy as np

from .check import efforts_of, ratios
from .sampling import TrajectorySampler
from ..dynamics._compile import jit

MIN_STEPS = 4  # steps per output interval at least (second differences need two or more)
GAP_SAFETY = 2.0  # factor on the curvature estimate of the bound between samples


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

    Each output interval is sampled at both ends and at equal steps of at most ``period``
    between them (at least ``MIN_STEPS``), the last point as it carries its values. Efforts (one
    batch inverse dynamics call with friction), accelerations and velocities are bounded
    between neighbouring samples (:func:`_gap_bounds`), so that a controller's clock of any
    phase against the points is covered; the worst ratio per block and joint is kept.
    """

    def __init__(self, problem, period):
        self.problem, self.period = problem, period
        self.worst = self.count = None
        self.limits = (problem.effort, problem.acceleration, problem.velocity)

    def _layout(self, out, intervals):
        """
        Return the sample times over output ``intervals`` (sorted) and how they are laid out.

        Also each interval's first sample's index, its number of steps and of samples of its
        own: a run of consecutive intervals shares the sample where one ends and the next
        begins, and gets its end sample after its last interval.
        """
        T = out.T
        h = T[intervals + 1] - T[intervals]
        steps = np.maximum(np.ceil(h / self.period - 1e-9), MIN_STEPS).astype(np.intp)
        run_end = np.append(intervals[1:] != intervals[:-1] + 1, True)
        counts = steps + run_end
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        which = np.repeat(np.arange(intervals.size), counts)
        j = np.arange(which.size) - starts[which]
        times = T[intervals[which]] + j * (h / steps)[which]
        ends = starts[run_end] + steps[run_end]
        times[ends] = T[intervals[run_end] + 1]  # exactly the next point
        return times, starts, steps, counts

    @staticmethod
    def _states(out, times, last):
        """Return the sampled states at ``times``; the last one the last point as it is."""
        sampler = TrajectorySampler(out.T, out.q, out.qd, out.qdd)
        Q, QD, QDD = sampler.sample_many(times)
        if last:  # what the last point carries (the sampler holds it at rest from then on)
            Q[-1], QD[-1], QDD[-1] = out.q[-1], out.qd[-1], out.qdd[-1]
        return Q, QD, QDD

    def update(self, out, changed):
        """Check the output intervals of the ``changed`` blocks; return the worst ratios."""
        if self.worst is None or self.worst.shape[1] != changed.size:
            self.worst = np.zeros((3, changed.size, out.q.shape[1]))  # effort, acc., velocity
            self.count = np.zeros(changed.size, dtype=np.intp)
        intervals = np.flatnonzero(changed[out.owner])
        if intervals.size:
            times, starts, steps, counts = self._layout(out, intervals)
            Q, QD, QDD = self._states(out, times, intervals[-1] == out.T.size - 2)
            tau = efforts_of(self.problem.model, Q, QD, QDD, self.problem.law)
            block = out.owner[intervals]
            self.worst[:, block] = 0.0
            for k, v in enumerate((tau, QDD, QD)):
                _gap_bounds(v, self.limits[k], starts, steps, block, self.worst[k])
            self.count[block] = 0
            np.add.at(self.count, block, counts)
        return self.worst

    def worst_time(self, out):
        """Return the time of the worst effort sample (its block sampled again)."""
        i = int(np.argmax(self.worst[0].max(axis=1)))
        intervals = np.flatnonzero(out.owner == i)
        times, _, _, _ = self._layout(out, intervals)
        Q, QD, QDD = self._states(out, times, intervals[-1] == out.T.size - 2)
        tau = efforts_of(self.problem.model, Q, QD, QDD, self.problem.law)
        r = ratios(tau, self.problem.effort).max(axis=1)
        return float(times[int(np.argmax(r))])


@jit
def _gap_bounds(values, limits, starts, steps, block, worst):
    """
    Raise ``worst[block[i], j]`` to a bound of ``|values[:, j]| / limits[j]`` on interval ``i``.

    Interval ``i``'s samples are rows ``starts[i] .. starts[i] + steps[i]``, equally spaced
    (``delta``), both ends included; inside the interval ``f = values[:, j]`` is smooth (the
    polynomials change at the ends only). Between two neighbours ``|f|`` stays under the larger
    of the two plus ``delta^2 / 8 max |f''|`` (the error of linear interpolation), ``|f''|
    delta^2`` taken as ``GAP_SAFETY`` times the larger second difference next to the gap.
    Infinite limits are skipped.
    """
    n = values.shape[1]
    for i in range(starts.shape[0]):
        s0, g, b = starts[i], steps[i], block[i]
        for j in range(n):
            lim = limits[j]
            if not lim < np.inf:
                continue
            best = 0.0
            for p in range(g):
                a = s0 + p
                top = max(abs(values[a, j]), abs(values[a + 1, j]))
                curve = 0.0
                if p >= 1:
                    curve = abs(values[a - 1, j] - 2.0 * values[a, j] + values[a + 1, j])
                if p + 2 <= g:
                    curve = max(curve, abs(values[a, j] - 2.0 * values[a + 1, j]
                                           + values[a + 2, j]))
                best = max(best, top + 0.125 * GAP_SAFETY * curve)
            if best / lim > worst[b, j]:
                worst[b, j] = best / lim


@jit
def _lower_limits(scale, used, ratio, span, target):
    """
    Lower ``scale`` (N+1, n) around the grid intervals whose ``ratio`` (N, n) exceeds 1.

    Interval ``i`` reaches the points ``i - span .. i + 1 + span``: there the limit of each
    joint ``j`` with ``ratio[i, j] > 1`` goes down to ``target / ratio[i, j]`` times the
    least of the most the points use of it (``used``) and the most its scale allows, all
    taken before any change.
    """
    N, n = ratio.shape
    goal = np.full((N, n), np.inf)
    for i in range(N):
        lo, hi = max(i - span, 0), min(i + 1 + span, N)
        for j in range(n):
            if ratio[i, j] > 1.0:
                most_used, most_scale = 0.0, 0.0
                for p in range(lo, hi + 1):
                    most_used = max(most_used, used[p, j])
                    most_scale = max(most_scale, scale[p, j])
                goal[i, j] = min(most_used, most_scale) * target / ratio[i, j]
    for i in range(N):
        lo, hi = max(i - span, 0), min(i + 1 + span, N)
        for j in range(n):
            if goal[i, j] < np.inf:
                for p in range(lo, hi + 1):
                    scale[p, j] = min(scale[p, j], goal[i, j])


def _spread(per_interval, span):
    """Return per grid point the least value (N+1, n) of the intervals within ``span`` of it."""
    per_interval = np.ascontiguousarray(per_interval, dtype=float)
    out = np.empty((per_interval.shape[0] + 1, per_interval.shape[1]))
    _least_reaching(per_interval, span, out)
    return out


@jit
def _least_reaching(values, span, out):
    """Write per point the least of the intervals reaching it (``i - span .. i + 1 + span``)."""
    last = values.shape[0] - 1
    for p in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[p, j] = np.inf
        for k in range(max(p - 1 - span, 0), min(p + span, last) + 1):
            for j in range(out.shape[1]):
                out[p, j] = min(out[p, j], values[k, j])
