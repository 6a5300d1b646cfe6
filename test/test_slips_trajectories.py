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
The trajectory check and the retiming where a slip gives a wrong answer (issue 33).

* Velocity ratios: straight-line motions at constant joint velocities of random signs and sizes,
  whose every sample has ``|qd_j| = |v_j|`` exactly (a Hermite polynomial through linear data is
  linear): the ratio is ``|v_j| / limit_j``, the direction does not matter.
* The re-check of a retiming after a local re-solve: the blocks of output points that it marks as
  changed must include every block whose points (or the points bounding it) differ, found by
  comparing the two outputs point by point.
* Feasibility at rest: a pendulum whose gravity torque ``m g l cos(q)`` is known in closed form,
  with the effort limit just above and just below it, with and without Coulomb friction.
"""

import denoc_ros as dr
from denoc_ros.errors import InputError
from denoc_ros.trajectories.dense_check import _Output
from denoc_ros.trajectories.path_dynamics import _Problem
from hypothesis import assume, given, settings, strategies as st
import numpy as np
import pytest

from test_trajectories import pendulum, random_waypoints, UR5E

M_G_L = 2.0 * 9.81 * 0.4   # the pendulum's gravity torque at q = 0 [N m]


@pytest.fixture(scope='module')
def ur5e():
    return dr.load_urdf(str(UR5E))


def straight_line(model, velocity, duration=1.0, points=3):
    """Return (t, q, qd, qdd) of a motion at constant joint velocities from a mid pose."""
    t = np.linspace(0.0, duration, points)
    q0 = np.array([0.1, -1.2, 1.0, -0.5, 0.4, 0.2])
    q = q0 + np.outer(t, velocity)
    return t, q, np.tile(velocity, (points, 1)), np.zeros_like(q)


def test_a_joint_too_fast_the_wrong_way_is_infeasible(ur5e):
    """Joint 2 at -2x its velocity limit: ratio 2, infeasible (efforts unlimited here)."""
    v = 0.5 * ur5e.velocity_limit
    v[1] = -2.0 * ur5e.velocity_limit[1]
    check = dr.check_trajectory(ur5e, *straight_line(ur5e, v), effort_limits=np.inf)
    expected = np.abs(v) / ur5e.velocity_limit
    np.testing.assert_allclose(check.max_velocity_ratio, expected, rtol=0, atol=1e-9)
    assert not check.feasible
    assert check.max_effort_ratio.max() == 0.0


@settings(max_examples=25, deadline=None)
@given(signs=st.lists(st.sampled_from([-1.0, 1.0]), min_size=6, max_size=6),
       sizes=st.lists(st.floats(0.05, 3.0), min_size=6, max_size=6))
def test_velocity_ratios_do_not_depend_on_the_direction(ur5e, signs, sizes):
    """Random signs and sizes: each ratio is |v_j| / limit_j; feasible iff all are <= 1."""
    v = np.array(signs) * np.array(sizes) * ur5e.velocity_limit
    check = dr.check_trajectory(ur5e, *straight_line(ur5e, v), effort_limits=np.inf)
    np.testing.assert_allclose(check.max_velocity_ratio, sizes, rtol=0, atol=1e-9)
    if max(sizes) < 1.0 - 1e-9 or max(sizes) > 1.0 + 1e-9:
        assert check.feasible == (max(sizes) < 1.0)
    reverse = dr.check_trajectory(ur5e, *straight_line(ur5e, -v), effort_limits=np.inf)
    np.testing.assert_allclose(reverse.max_velocity_ratio, sizes, rtol=0, atol=1e-9)


# ------------------------------------------------------------------------------------------------
# The re-check after a local re-solve


@pytest.fixture(scope='module')
def solved(ur5e):
    """Return a UR5e path on 400 grid intervals, solved once (output: every 3rd grid point)."""
    problem = _Problem(ur5e, random_waypoints(ur5e.dof, 6, seed=4), None, None, None, False,
                       400)
    ones = np.ones(problem.q.shape)
    x, u = problem.solve(ones, ones, ones)
    return problem, x, u


def blocks_whose_points_differ(new, old):
    """
    Return per block whether any of its output points differs (None: another number of points).

    Times compare as interval lengths: a block shifted in time has the same polynomials (its
    nanosecond rounding moves its lengths by 1 ns at most, and the cuts of long blocks move by
    round-off: differences below 1e-9 are ignored).
    """
    if new.T.shape != old.T.shape:
        return None
    d = np.zeros(new.T.size, dtype=bool)
    for name in ('q', 'qd', 'qdd'):
        a, b = getattr(new, name), getattr(old, name)
        d |= np.any(np.abs(a - b) > 1e-9 * (1.0 + np.abs(b)), axis=1)
    h = np.abs(np.diff(new.T) - np.diff(old.T)) > 1.5e-9
    differ = np.zeros(new.bounds.size - 1, dtype=bool)
    # output interval k (points k and k + 1) belongs to block owner[k]
    np.logical_or.at(differ, new.owner, d[:-1] | d[1:] | h)
    return differ


@settings(max_examples=20, deadline=None)
@given(where=st.integers(0, 399), kind=st.sampled_from(['u', 'x']),
       factor=st.floats(0.5, 0.99))
def test_every_block_whose_points_change_is_checked_again(solved, where, kind, factor):
    """
    One grid value changed: every block whose output points differ is marked changed.

    A block's polynomials run from its first to its last output point; those points carry the
    profile of the grid intervals before and after them (the mean ``sdd`` at a grid point, the
    speed at the cut of a long block), so a change of one ``u_i`` reaches the neighbouring
    blocks too.
    """
    problem, x, u = solved
    x2, u2 = x.copy(), u.copy()
    if kind == 'u':
        u2[where] *= factor
    else:
        x2[where + 1 if where + 1 < x.size - 1 else where] *= factor
    old = _Output(problem, x, u, 0.01, 3)
    new = _Output(problem, x2, u2, 0.01, 3)
    differ = blocks_whose_points_differ(new, old)
    assume(differ is not None)   # else another number of cuts: every block is redone anyway
    marked = new.changed(old)
    missed = np.flatnonzero(differ & ~marked)
    assert missed.size == 0, (f'blocks {missed} changed but are not checked again '
                              f'(changed {kind}[{where}])')


def test_the_retimed_output_passes_a_fresh_dense_check(ur5e):
    """The final answer after many re-solves equals an uncached check of the same output."""
    waypoints = random_waypoints(ur5e.dof, 8, seed=2)
    result = dr.retime(ur5e, waypoints, sample_period=0.05)
    assert result.rounds > 1  # re-solves happened: the cache was used
    fine = dr.check_trajectory(ur5e, result.t, result.q, result.qd, result.qdd,
                               check_period=2e-5)
    assert fine.max_effort_ratio.max() <= 1.0 + 1e-3, fine.max_effort_ratio
    assert fine.max_velocity_ratio.max() <= 1.0 + 1e-3, fine.max_velocity_ratio


# ------------------------------------------------------------------------------------------------
# Feasibility at rest


@pytest.mark.parametrize('margin', [1e-3, -1e-3])
def test_gravity_alone_at_the_limit(margin):
    """The limit 0.1 % above m g l (the need at q = 0) is accepted, 0.1 % below refused."""
    model = pendulum().replace(effort_limit=np.array([M_G_L * (1.0 + margin)]))
    path = [[0.0], [-0.6]]
    if margin > 0.0:
        result = dr.retime(model, path)
        check = dr.check_trajectory(model, result.t, result.q, result.qd, result.qdd,
                                    check_period=1e-4)
        assert check.max_effort_ratio.max() <= 1.0 + 1e-4
    else:
        with pytest.raises(InputError, match=f'waypoint 0: gravity alone need {M_G_L:.4g} at '
                                             "joint 'swing'"):
            dr.retime(model, path)


@pytest.mark.parametrize('gravity', [-9.81, 9.81])
def test_coulomb_friction_of_either_sign_at_a_turning_point(gravity):
    """
    The path turns at q = 0 (waypoint 1, the top of the gravity torque): either friction sign.

    Gravity m g l = 7.85 N m, Coulomb friction 1 N m: at the turn the joint is at rest and the
    friction's sign undecided, so the need there is 8.85 N m whichever way gravity pulls (both
    signs of gravity tried). A limit of 8.3 N m suffices without friction and is refused with
    it, naming the turning point; 10 N m is accepted with it.
    """
    path = [[-0.5], [0.0], [-0.5]]
    rubbing = pendulum(coulomb=1.0).replace(gravity=np.array([0.0, gravity, 0.0]))
    need = M_G_L + 1.0
    dr.retime(rubbing.replace(effort_limit=np.array([8.3])), path)   # friction off
    with pytest.raises(InputError, match=f'^waypoint 1: gravity and friction alone need '
                                         f"{need:.4g} at joint 'swing'"):
        dr.retime(rubbing.replace(effort_limit=np.array([8.3])), path, friction=True)
    result = dr.retime(rubbing.replace(effort_limit=np.array([10.0])), path, friction=True)
    assert result.max_effort_ratio <= 1.0
