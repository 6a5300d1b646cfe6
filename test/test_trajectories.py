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
Trajectory checks and time-optimal retiming against independent references.

The spline path against SciPy's natural cubic spline; the controller-style sampler against
polynomials it must reproduce; efforts and dense ratios against Pinocchio's RNEA (plus the
friction law written out); the retimed duration against toppra (Pham & Pham's own TOPP-RA
implementation) on the same path and limits; the dense 1 kHz check of the output with
Pinocchio at several clock phases; a one-joint pendulum's minimum time from its energy
equations (closed form, and an ODE in the angle with viscous friction); infeasible requests.
"""

import logging

from conftest import require_oracle, URDF_DIR
import denoc_ros as dr
from denoc_ros.errors import InputError
from denoc_ros.friction import JointFriction
from denoc_ros.trajectories.dense_check import _gap_bounds, MIN_STEPS
from denoc_ros.trajectories.path import SplinePath
from denoc_ros.trajectories.path_dynamics import _Problem
from denoc_ros.trajectories.retime import INTERNAL_CHECK_PERIOD
from denoc_ros.trajectories.sampling import TrajectorySampler
import numpy as np
import pytest

pin = require_oracle('pinocchio')
UR5E = URDF_DIR / 'ur5e.urdf'


@pytest.fixture(scope='module')
def ur5e():
    """Return our UR5e model and Pinocchio's (model, data) of the same URDF."""
    pm = pin.buildModelFromUrdf(str(UR5E))
    return dr.load_urdf(str(UR5E)), pm, pm.createData()


def random_waypoints(dof, count, seed, step=0.5, bound=2.5):
    """Return a random walk of waypoints within +-bound."""
    rng = np.random.default_rng(seed)
    wp = np.zeros((count, dof))
    for k in range(1, count):
        wp[k] = np.clip(wp[k - 1] + rng.normal(scale=step, size=dof), -bound, bound)
    return wp


def pinocchio_efforts(pm, pd, Q, QD, QDD):
    """Return Pinocchio's RNEA over the rows of Q, QD, QDD."""
    return np.array([pin.rnea(pm, pd, Q[k], QD[k], QDD[k]) for k in range(Q.shape[0])])


def dense_pinocchio_ratio(pm, pd, result, limits, phases=5, period=1e-3, friction=None):
    """Return the worst |tau| / limit of the output sampled at 1 kHz with clocks out of step."""
    sampler = TrajectorySampler(result.t, result.q, result.qd, result.qdd)
    worst = 0.0
    for phase in np.linspace(0.0, period, phases, endpoint=False):
        Q, QD, QDD = sampler.sample_many(np.arange(phase, result.duration, period))
        tau = pinocchio_efforts(pm, pd, Q, QD, QDD)
        if friction is not None:
            tau += friction(QD)
        worst = max(worst, float((np.abs(tau) / limits).max()))
    return worst


def test_path_is_the_natural_cubic_spline_in_chord_length():
    from scipy.interpolate import CubicSpline
    wp = random_waypoints(4, 9, seed=3)
    path = SplinePath(wp)
    knots = np.concatenate(([0.0], np.cumsum(np.linalg.norm(np.diff(wp, axis=0), axis=1))))
    ref = CubicSpline(knots, wp, bc_type='natural')
    s = np.linspace(0.0, knots[-1], 777)
    q, dq, ddq = path.evaluate(s)
    scale = np.abs(wp).max()
    for k, ours in enumerate((q, dq, ddq)):
        assert np.allclose(ours, ref(s, k), rtol=0.0, atol=1e-11 * scale)
    assert np.allclose(path.evaluate(knots)[0], wp, rtol=0.0, atol=1e-12 * scale)


def test_sampler_reproduces_polynomials_of_its_degree():
    rng = np.random.default_rng(0)
    c = rng.normal(size=(6, 3))     # a quintic per joint
    times = np.array([0.0, 0.3, 0.45, 1.0, 1.7])

    def poly(t, d):
        return np.column_stack([np.polyval(np.polyder(c[::-1, j], d), t) for j in range(3)])
    sampler = TrajectorySampler(times, poly(times, 0), poly(times, 1), poly(times, 2))
    t = np.linspace(0.0, 1.7, 301)[:-1]
    for got, d in zip(sampler.sample_many(t), range(3)):
        assert np.allclose(got, poly(t, d), rtol=0.0, atol=1e-10)
    one = [sampler.sample(tk) for tk in t[::37]]
    assert np.allclose([o[2] for o in one], sampler.sample_many(t[::37])[2], atol=1e-12)


def test_check_efforts_and_dense_ratios_match_pinocchio(ur5e):
    model, pm, pd = ur5e
    rng = np.random.default_rng(1)
    c = rng.normal(scale=0.6, size=(6, model.dof))     # quintic joint trajectories, 2 s
    T = np.linspace(0.0, 2.0, 9)
    P = [np.column_stack([np.polyval(np.polyder(c[::-1, j], d), T) if d
                          else np.polyval(c[::-1, j], T) for j in range(model.dof)])
         for d in range(3)]
    limits = np.full(model.dof, 20.0)
    result = dr.check_trajectory(model, T, *P, effort_limits=limits)
    assert np.allclose(result.efforts, pinocchio_efforts(pm, pd, *P), rtol=1e-9, atol=1e-9)
    # The quintic sampler reproduces the polynomial, so Pinocchio on the polynomial itself is an
    # independent value of the dense ratios (plus the points).
    dense = np.concatenate((T, np.arange(0.0, 2.0, 1e-3)))
    Pd = [np.column_stack([np.polyval(np.polyder(c[::-1, j], d), dense) if d
                           else np.polyval(c[::-1, j], dense) for j in range(model.dof)])
          for d in range(3)]
    ratio = np.abs(pinocchio_efforts(pm, pd, *Pd)) / limits
    assert np.allclose(result.max_effort_ratio, ratio.max(axis=0), rtol=1e-8)
    k, j = np.unravel_index(np.argmax(ratio), ratio.shape)
    assert result.worst_joint == model.joint_names[j]
    assert result.worst_time == pytest.approx(dense[k], abs=1e-12)
    assert result.feasible == bool(ratio.max() <= 1.0 and result.max_velocity_ratio.max() <= 1)
    assert result.samples == dense.size


def test_check_counts_payload_and_friction(ur5e):
    model, pm, pd = ur5e
    T = np.array([0.0, 0.5, 1.0])
    q = np.array([[0.0, -1.0, 1.0, 0.0, 1.0, 0.0], [0.3, -0.8, 0.7, 0.2, 1.2, 0.4],
                  [0.5, -0.5, 0.5, 0.5, 1.0, 0.8]])
    qd = np.array([np.zeros(6), np.full(6, 0.5), np.zeros(6)])
    heavy = dr.attach_payload(model, 'wrist_3_link', 3.0, (0.0, 0.0, 0.1))
    pmh = pin.Model(pm)
    jid = pmh.getJointId('wrist_3_joint')
    pmh.appendBodyToJoint(jid, pin.Inertia(3.0, np.array([0.0, 0.0, 0.1]), np.zeros((3, 3))),
                          pin.SE3.Identity())
    pdh = pmh.createData()
    res = dr.check_trajectory(heavy, T, q, qd, np.zeros((3, 6)))
    assert np.allclose(res.efforts, pinocchio_efforts(pmh, pdh, q, qd, np.zeros((3, 6))),
                       rtol=1e-9, atol=1e-9)
    rubbing = heavy.replace(damping=np.full(6, 2.0), friction=np.full(6, 1.5))
    res_f = dr.check_trajectory(rubbing, T, q, qd, np.zeros((3, 6)), friction=True)
    fr = 2.0 * qd + 1.5 * np.tanh(qd / 1e-3)
    assert np.allclose(res_f.efforts - res.efforts, fr, atol=1e-9)


def test_check_refuses_bad_input(ur5e):
    model = ur5e[0]
    with pytest.raises(InputError, match='5 joints per point, the model 6'):
        dr.check_trajectory(model, [0.0, 1.0], np.zeros((2, 5)))
    with pytest.raises(InputError, match='strictly increasing'):
        dr.check_trajectory(model, [0.0, 0.0], np.zeros((2, 6)))
    with pytest.raises(InputError, match='effort_limits of joint'):
        dr.check_trajectory(model, [0.0, 1.0], np.zeros((2, 6)), effort_limits=-1.0)


@pytest.fixture(scope='module')
def ur5e_retimed(ur5e):
    model = ur5e[0]
    wp = random_waypoints(model.dof, 12, seed=1)
    return wp, dr.retime(model, wp)


def toppra_duration(model, pm, pd, wp, coulomb=None):
    """Return toppra's duration on our path (SciPy's natural spline) under our limits."""
    ta = require_oracle('toppra')
    from toppra import algorithm, constraint
    logging.getLogger('toppra').setLevel(logging.ERROR)
    path = ta.SplineInterpolator(SplinePath(wp).knots, wp, bc_type='natural')
    effort = np.column_stack((-model.effort_limit, model.effort_limit))
    velocity = np.column_stack((-model.velocity_limit, model.velocity_limit))

    def inv_dyn(q, v, a):
        return pin.rnea(pm, pd, q, v, a)
    fs = np.zeros(model.dof) if coulomb is None else coulomb
    constraints = [constraint.JointVelocityConstraint(velocity),
                   constraint.JointTorqueConstraint(inv_dyn, effort, fs)]
    solved = algorithm.TOPPRA(constraints, path, parametrizer='ParametrizeConstAccel')
    return solved.compute_trajectory(0.0, 0.0).duration


def test_retime_duration_within_one_percent_of_toppra(ur5e, ur5e_retimed):
    model, pm, pd = ur5e
    wp, result = ur5e_retimed
    theirs = toppra_duration(model, pm, pd, wp)
    print(f'ours {result.duration:.4f} s, toppra {theirs:.4f} s, ratio '
          f'{result.duration / theirs:.4f}')
    assert result.duration <= 1.01 * theirs


def test_retime_output_dense_check_with_pinocchio(ur5e, ur5e_retimed):
    model, pm, pd = ur5e
    wp, result = ur5e_retimed
    worst = dense_pinocchio_ratio(pm, pd, result, model.effort_limit)
    print(f'worst effort ratio at 1 kHz (Pinocchio, 5 clock phases): {worst:.5f}')
    assert worst <= 1.005
    sampler = TrajectorySampler(result.t, result.q, result.qd, result.qdd)
    _, QD, _ = sampler.sample_many(np.arange(0.00037, result.duration, 1e-3))
    assert (np.abs(QD) / model.velocity_limit).max() <= 1.005
    # From rest at the first waypoint to rest at the last, points at most sample_period apart.
    assert np.allclose(result.q[[0, -1]], wp[[0, -1]], atol=1e-12)
    assert np.all(result.qd[[0, -1]] == 0.0)
    assert np.diff(result.t).max() <= 0.01 + 1e-12
    assert result.max_effort_ratio <= 1.0
    assert np.allclose(result.effort, pinocchio_efforts(pm, pd, result.q, result.qd,
                                                        result.qdd), rtol=1e-9, atol=1e-9)


def test_gap_bound_covers_a_fine_sampling_of_every_output_interval(ur5e, ur5e_retimed):
    """The dense check's bound per output interval is above the interval sampled every 20 us."""
    model, pm, pd = ur5e
    _, result = ur5e_retimed
    t, limits = result.t, model.effort_limit
    sampler = TrajectorySampler(t, result.q, result.qd, result.qdd)
    starts, steps, fine_t, owner = [], [], [], []
    for k in range(t.size - 1):
        h = t[k + 1] - t[k]
        steps.append(max(int(np.ceil(h / INTERNAL_CHECK_PERIOD - 1e-9)), MIN_STEPS))
        starts.append(k)
        fine = np.linspace(t[k], t[k + 1], int(np.ceil(h / 2e-5)) + 1)[:-1]
        fine_t.append(fine)
        owner.append(np.full(fine.size, k))
    # each interval's own samples, both ends, as the check lays them out
    times = [t[k] + np.arange(g + 1) * (t[k + 1] - t[k]) / g for k, g in zip(starts, steps)]
    first = np.concatenate(([0], np.cumsum([g + 1 for g in steps])[:-1]))
    Q, QD, QDD = sampler.sample_many(np.concatenate(times))
    ends = first + np.array(steps)
    Q[ends], QD[ends], QDD[ends] = result.q[1:], result.qd[1:], result.qdd[1:]
    bound = np.zeros((t.size - 1, model.dof))
    _gap_bounds(dr.inverse_dynamics(model, Q, QD, QDD), limits, first, np.array(steps),
                np.arange(t.size - 1), bound)
    Qf, QDf, QDDf = sampler.sample_many(np.concatenate(fine_t))
    ratio = np.abs(dr.inverse_dynamics(model, Qf, QDf, QDDf)) / limits
    fine_max = np.zeros_like(bound)
    np.maximum.at(fine_max, np.concatenate(owner), ratio)
    samples = np.maximum.reduceat(np.abs(dr.inverse_dynamics(model, Q, QD, QDD)) / limits,
                                  first)
    print(f'{t.size - 1} output intervals: the fine maximum exceeds the samples by up to '
          f'{(fine_max - samples).max():.4f} of a limit, the bound by none')
    assert np.all(fine_max <= bound + 1e-12)
    assert bound.max() <= 1.0


def test_resolve_after_a_local_change_matches_a_full_solve(ur5e):
    """The re-solve that redoes only the changed stages gives the full solve's profile."""
    model = ur5e[0]
    problem = _Problem(model, random_waypoints(model.dof, 8, seed=3), None, None, None, False,
                       400)
    ones = np.ones(problem.q.shape)
    x0, _ = problem.solve(ones, ones, ones)
    scale = ones.copy()
    scale[150:170] *= 0.7
    x1, u1 = problem.solve(scale, ones, ones)
    problem._last = None
    x2, u2 = problem.solve(scale, ones, ones)
    assert np.array_equal(x1, x2) and np.array_equal(u1, u2)
    changed = np.flatnonzero(x1 != x0)
    print(f'profile changed at grid points {changed.min()}..{changed.max()} of '
          f'{x0.size - 1}')
    assert changed.size > 0 and (changed.min() > 0 or changed.max() < x0.size - 1)


def pendulum(I_zz=0.05, m=2.0, arm=0.4, damping=0.0, coulomb=0.0):
    """Return a one-joint pendulum swinging in a vertical plane (axis z, gravity -y)."""
    return dr.RobotModel(
        joint_names=('swing',), link_names=('arm',), parent=np.array([-1]),
        joint_type=np.array([dr.REVOLUTE]), axis=np.array([[0.0, 0.0, 1.0]]),
        joint_rotation=np.eye(3)[None], joint_translation=np.zeros((1, 3)),
        mass=np.array([m]), com=np.array([[arm, 0.0, 0.0]]),
        inertia=np.diag([0.0, I_zz, I_zz])[None], gravity=np.array([0.0, -9.81, 0.0]),
        damping=np.array([damping]), friction=np.array([coulomb]),
        velocity_limit=np.array([np.inf]), effort_limit=np.array([10.0]))


def pendulum_minimum_time(theta0, theta1, L, I_zz=0.05, m=2.0, arm=0.4, v=0.0, c=0.0):
    """
    Return the bang-bang minimum time from rest to rest (I th'' + m g l cos th + v th' + c = tau).

    Full torque until the switch, then full braking: E = th'^2 from the energy equation in the
    angle, dE/dth = 2 (tau - m g l cos th - v sqrt(E) - c) / I, integrated from each end.
    """
    from scipy.integrate import quad, solve_ivp
    I, mgl = I_zz + m * arm * arm, m * 9.81 * arm
    if v == 0.0:
        def acc(th):
            return 2.0 * (L * (th - theta0) - mgl * (np.sin(th) - np.sin(theta0)) - c
                          * (th - theta0)) / I

        def dec(th):
            return 2.0 * (L * (theta1 - th) + mgl * (np.sin(theta1) - np.sin(th)) + c
                          * (theta1 - th)) / I
    else:
        def rhs(sign):
            return lambda th, E: [2.0 * (sign * L - mgl * np.cos(th) - v * np.sqrt(max(E[0], 0))
                                         - c) / I]
        up = solve_ivp(rhs(1.0), (theta0, theta1), [0.0], rtol=1e-12, atol=1e-14,
                       dense_output=True)
        down = solve_ivp(rhs(-1.0), (theta1, theta0), [0.0], rtol=1e-12, atol=1e-14,
                         dense_output=True)

        def acc(th):
            return float(up.sol(th)[0])

        def dec(th):
            return float(down.sol(th)[0])
    from scipy.optimize import brentq
    switch = brentq(lambda th: acc(th) - dec(th), theta0 + 1e-9, theta1 - 1e-9, xtol=1e-14)
    t1 = quad(lambda th: 1.0 / np.sqrt(max(acc(th), 1e-300)), theta0, switch, limit=200,
              epsabs=1e-12)[0]
    t2 = quad(lambda th: 1.0 / np.sqrt(max(dec(th), 1e-300)), switch, theta1, limit=200,
              epsabs=1e-12)[0]
    return t1 + t2


@pytest.mark.parametrize('friction', ['none', 'viscous', 'coulomb'])
def test_pendulum_matches_its_minimum_time(friction):
    v, c = {'none': (0.0, 0.0), 'viscous': (0.3, 0.0), 'coulomb': (0.0, 1.0)}[friction]
    model = pendulum(damping=v, coulomb=c)
    theta0, theta1 = -1.2, 1.4
    expected = pendulum_minimum_time(theta0, theta1, 10.0, v=v, c=c)
    law = JointFriction(model, smoothing=0.0) if friction != 'none' else False
    result = dr.retime(model, [[theta0], [theta1]], friction=law)
    print(f'{friction}: retime {result.duration:.5f} s, bang-bang {expected:.5f} s')
    assert expected <= result.duration <= 1.01 * expected
    # Independent torques: m l^2 th'' + I th'' + m g l cos th + friction.
    sampler = TrajectorySampler(result.t, result.q, result.qd, result.qdd)
    Q, QD, QDD = sampler.sample_many(np.arange(0.0004, result.duration, 1e-3))
    tau = (0.05 + 2.0 * 0.16) * QDD + 2.0 * 9.81 * 0.4 * np.cos(Q) + v * QD + c * np.sign(QD)
    assert np.abs(tau).max() <= 10.0 * 1.005


def test_coulomb_friction_against_toppra(ur5e):
    model, pm, pd = ur5e
    wp = random_waypoints(model.dof, 6, seed=7)
    fc = np.array([3.0, 3.0, 3.0, 1.0, 1.0, 1.0])
    rubbing = model.replace(friction=fc)
    result = dr.retime(rubbing, wp, friction=JointFriction(rubbing, smoothing=0.0))
    theirs = toppra_duration(model, pm, pd, wp, coulomb=fc)
    print(f'Coulomb: ours {result.duration:.4f} s, toppra {theirs:.4f} s')
    assert result.duration <= 1.01 * theirs
    worst = dense_pinocchio_ratio(pm, pd, result, model.effort_limit,
                                  friction=lambda qd: fc * np.sign(qd))
    assert worst <= 1.005


def test_viscous_friction_slows_and_stays_within_limits(ur5e):
    model, pm, pd = ur5e
    wp = random_waypoints(model.dof, 6, seed=7)
    fv = np.array([8.0, 8.0, 8.0, 2.0, 2.0, 2.0])
    rubbing = model.replace(damping=fv)
    plain = dr.retime(model, wp)
    result = dr.retime(rubbing, wp, friction=True)
    assert result.duration > plain.duration
    worst = dense_pinocchio_ratio(pm, pd, result, model.effort_limit,
                                  friction=lambda qd: fv * qd)
    print(f'viscous: {plain.duration:.4f} -> {result.duration:.4f} s, worst {worst:.5f}')
    assert worst <= 1.005


def test_infeasible_requests_name_the_waypoint_and_joint():
    model = pendulum()
    weak = model.replace(effort_limit=np.array([5.0]))   # m g l = 7.85 N m
    with pytest.raises(InputError, match=r'waypoint 1: gravity alone need 7.8\d* at joint '
                                         r"'swing'"):
        dr.retime(weak, [[1.0], [0.0], [-0.5]])
    with pytest.raises(InputError, match='waypoints 1 and 2 coincide'):
        dr.retime(model, [[0.0], [0.5], [0.5], [1.0]])
    with pytest.raises(InputError, match=r'waypoint 2: the position of joint .swing.'):
        dr.retime(model, [[0.0], [0.5], [np.nan]])
    with pytest.raises(InputError, match=r'expected \(W, 1\)'):
        dr.retime(model, np.zeros((3, 2)))
    free = model.replace(effort_limit=np.array([np.inf]), gravity=np.zeros(3))
    with pytest.raises(InputError, match='no limit bounds the speed'):
        dr.retime(free, [[0.0], [1.0]])
