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
Trajectory benchmarks: ``dr.retime`` against toppra, and ``dr.check_trajectory``, in one process.

Panda (``urdf/panda.urdf``, the chain to ``panda_link8``, 7 joints), a path through 100
waypoints (a seeded random walk inside the joint limits), effort and velocity limits of the
URDF. toppra (Pham & Pham's implementation) gets the same natural cubic spline and limits,
Pinocchio's RNEA as its inverse dynamics, its default grid and solver. Prints each duration, the
best wall time of ``--repeats`` runs after a warm-up, and the ratios; then times the dense check
(1 ms) of a 10 s trajectory, and the machine's load average. ``make bench`` runs it after
benchmarks/run.py.
"""

import argparse
import logging
import os
import pathlib
import sys
import time

import denoc_ros as dr
from denoc_ros.trajectories.path import SplinePath
import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent


def waypoints(model, count, seed):
    """Return a seeded random walk of ``count`` waypoints inside 80 % of the joint limits."""
    rng = np.random.default_rng(seed)
    lo, hi = 0.8 * model.lower, 0.8 * model.upper
    wp = np.empty((count, model.dof))
    wp[0] = 0.5 * (lo + hi)
    for k in range(1, count):
        wp[k] = np.clip(wp[k - 1] + rng.normal(scale=0.2, size=model.dof), lo, hi)
    return wp


def best_time(fn, repeats):
    """Return (best wall time [s], last result) of ``repeats`` calls after one warm-up."""
    result = fn()
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def toppra_problem(model, wp):
    """Return a callable solving the same problem with toppra, or None without toppra."""
    try:
        import pinocchio as pin
        import toppra
        from toppra import algorithm, constraint
    except ImportError:
        return None, None
    logging.getLogger('toppra').setLevel(logging.ERROR)
    full = pin.buildModelFromUrdf(str(REPO / 'urdf' / 'panda.urdf'))
    keep = [full.getJointId(n) for n in model.joint_names]
    lock = [j for j in range(1, full.njoints) if j not in keep]
    pm = pin.buildReducedModel(full, lock, pin.neutral(full)) if lock else full
    pd = pm.createData()
    path = toppra.SplineInterpolator(SplinePath(wp).knots, wp, bc_type='natural')
    effort = np.column_stack((-model.effort_limit, model.effort_limit))
    velocity = np.column_stack((-model.velocity_limit, model.velocity_limit))

    def inv_dyn(q, v, a):
        return pin.rnea(pm, pd, q, v, a)

    def solve():
        constraints = [constraint.JointVelocityConstraint(velocity),
                       constraint.JointTorqueConstraint(inv_dyn, effort, np.zeros(model.dof))]
        return algorithm.TOPPRA(constraints, path,
                                parametrizer='ParametrizeConstAccel').compute_trajectory(0, 0)
    return solve, (pin, pm, pd)


def main(argv=None):
    """Run the benchmarks and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--repeats', type=int, default=5)
    parser.add_argument('--waypoints', type=int, default=100)
    args = parser.parse_args(argv)
    model = dr.load_urdf(str(REPO / 'urdf' / 'panda.urdf'), tip_link='panda_link8')
    wp = waypoints(model, args.waypoints, seed=0)
    ours_t, ours = best_time(lambda: dr.retime(model, wp), args.repeats)
    print(f'retime, Panda, {args.waypoints} waypoints, effort + velocity limits:')
    print(f'  denoc_ros  {ours_t * 1e3:8.1f} ms   duration {ours.duration:.4f} s   '
          f'({ours.rounds} solves, grid {ours.grid.size - 1} intervals, worst effort ratio '
          f'{ours.max_effort_ratio:.4f} at its dense check, {ours.check.samples} states)')
    solve, pinocchio = toppra_problem(model, wp)
    if solve is None:
        print('  toppra or pinocchio not installed: no comparison')
    else:
        theirs_t, theirs = best_time(solve, args.repeats)
        pin, pm, pd = pinocchio
        gaps = _toppra_overshoot(theirs, pin, pm, pd, model.effort_limit)
        print(f'  toppra     {theirs_t * 1e3:8.1f} ms   duration {theirs.duration:.4f} s   '
              f'(its output sampled at 1 kHz: worst effort ratio {gaps:.4f})')
        print(f'  time ratio ours/toppra {ours_t / theirs_t:.3f}, duration ratio '
              f'{ours.duration / theirs.duration:.4f}')
    # The dense check of a 10 s trajectory: the retimed one stretched to 10 s.
    stretch = 10.0 / ours.duration
    t, q, qd, qdd = ours.t * stretch, ours.q, ours.qd / stretch, ours.qdd / stretch ** 2
    check_t, check = best_time(lambda: dr.check_trajectory(model, t, q, qd, qdd),
                               args.repeats)
    print(f'check_trajectory, 10 s at 1 ms ({check.samples} states): {check_t * 1e3:.1f} ms')
    if hasattr(os, 'getloadavg'):
        print('load average (1, 5, 15 min): ' + ', '.join(f'{v:.2f}' for v in os.getloadavg()))
    return 0


def _toppra_overshoot(trajectory, pin, pm, pd, limits):
    """Return toppra's output's worst effort ratio at 1 kHz (its own spline, Pinocchio RNEA)."""
    T = np.arange(0.0, trajectory.duration, 1e-3)
    Q, QD, QDD = trajectory(T), trajectory(T, 1), trajectory(T, 2)
    tau = np.array([pin.rnea(pm, pd, Q[k], QD[k], QDD[k]) for k in range(T.size)])
    return float((np.abs(tau) / limits).max())


if __name__ == '__main__':
    sys.exit(main())
