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
Energy, momentum, centre of mass (denoc_ros.energy) and the integrator (denoc_ros.simulation).

Independent references: ``1/2 qd^T M qd`` with M from the composite-body algorithm (the kinetic
energy is summed from body twists); central differences of the potential energy against
``gravity_torques``; Pinocchio's centre of mass and centroidal momentum; conservation of
``T + U`` without joint forces, and the work-energy balance ``dE = int qd . tau dt`` with them.
The same on a floating base (Pinocchio's free flyer), where RK4 on the Lie group and DOP853 on
the quaternion kinematics must also agree.

Energy drift is measured relative to the largest kinetic energy along the trajectory (the zero
level of U is arbitrary, so |E| is no scale), printed by the tests (``pytest -s``). Measured
(seeded states): over 0.5 s, RK4 with 1 ms steps 1e-13 .. 2.3e-8 and solve_ivp DOP853 at rtol
1e-10 2e-14 .. 1.4e-11 (panda, stanford_arm, saha_planar_3r); over 2 s on all seven bundled
robots (run every time: the 14 runs take under 1 s in all, measured 2026-11-25), RK4 1e-14 ..
5.5e-7 (saha_planar_3r) and DOP853 3e-15 .. 3e-11.
"""

from conftest import bundled_urdfs, require_oracle
import denoc_ros as dr
from denoc_ros.energy import center_of_mass, kinetic_energy, momentum, potential_energy, \
    total_energy
from denoc_ros.floating_base import integrate_configuration
from denoc_ros.simulation import simulate, SimulationResult
import numpy as np
import pytest
from robots_for_tests import assert_close, make_model, MODEL_CASES, PinocchioMap, \
    random_state, rng_for
from scipy.integrate import simpson

URDFS = {p.stem: p for p in bundled_urdfs()}


def load(name):
    return dr.load_urdf(str(URDFS[name]))


def random_q(model, rng, size=()):
    """Return random positions; the Stanford arm's prismatic joint stays inside its stroke."""
    q = random_state(rng, model.dof, size, scale=1.5)
    prismatic = model.joint_type == dr.PRISMATIC
    q[..., prismatic] = rng.uniform(0.4, 1.2, size=q[..., prismatic].shape)
    return q


def robots():
    return [dr.load_urdf(str(p)) for p in bundled_urdfs()] + \
        [make_model(case) for case in MODEL_CASES]


# ------------------------------------------------------------------------------------------------
# energy, momentum, centre of mass


@pytest.mark.parametrize('model', robots(), ids=lambda m: m.name)
def test_kinetic_energy_is_half_qd_M_qd_1e_12(model):
    rng = rng_for('kinetic', model.name)
    q, qd = random_q(model, rng, (5,)), random_state(rng, model.dof, (5,), scale=2.0)
    T = kinetic_energy(model, q, qd)
    M = dr.mass_matrix(model, q)
    expected = 0.5 * np.einsum('bi,bij,bj->b', qd, M, qd)
    assert T.shape == (5,)
    assert np.all(np.abs(T - expected) <= 1e-12 * np.abs(expected)), (T, expected)


@pytest.mark.parametrize('model', robots(), ids=lambda m: m.name)
def test_potential_energy_gradient_is_gravity_torques_1e_6(model):
    rng = rng_for('potential', model.name)
    n, h = model.dof, 1e-6
    for q in random_q(model, rng, (3,)):
        steps = h * np.eye(n)
        grad = (potential_energy(model, q + steps) - potential_energy(model, q - steps)) / (2 * h)
        assert_close(grad, dr.gravity_torques(model, q), 1e-6, 'dU/dq vs gravity_torques')


def test_energies_and_momentum_broadcast_over_batch_axes():
    model = load('panda')
    rng = rng_for('batch')
    q, qd = random_q(model, rng, (2, 3)), random_state(rng, model.dof, (3,))
    E = total_energy(model, q, qd)
    p, h = momentum(model, q, qd)
    c = center_of_mass(model, q)
    assert E.shape == (2, 3) and p.shape == h.shape == c.shape == (2, 3, 3)
    assert_close(E[1, 2], total_energy(model, q[1, 2], qd[2]), 1e-14)
    assert_close(h[1, 2], momentum(model, q[1, 2], qd[2])[1], 1e-14)
    assert np.shape(kinetic_energy(model, q[0, 0], qd[0])) == ()


def test_bad_input_raises_input_error():
    model = load('craig_rr')
    with pytest.raises(dr.InputError, match='qd'):
        kinetic_energy(model, [0.0, 0.0], [0.0, np.nan])
    with pytest.raises(dr.InputError, match='length 2'):
        potential_energy(model, [0.0, 0.0, 0.0])


@pytest.mark.parametrize('name', sorted(URDFS))
def test_momentum_and_center_of_mass_against_pinocchio_1e_10(name):
    pin = require_oracle('pinocchio')
    model = load(name)
    pmodel = pin.buildModelFromUrdf(str(URDFS[name]))
    data = pmodel.createData()
    mp = PinocchioMap(pmodel, model.joint_names)
    rng = rng_for('pinocchio momentum', name)
    for _ in range(3):
        q, qd = random_q(model, rng), random_state(rng, model.dof, scale=2.0)
        pq, pv = mp.q(q), mp.v(qd)
        com = pin.centerOfMass(pmodel, data, pq, pv)
        assert_close(center_of_mass(model, q), com, 1e-10, 'center of mass')
        hg = pin.computeCentroidalMomentum(pmodel, data, pq, pv)   # about the COM
        linear, angular = momentum(model, q, qd)
        assert_close(linear, hg.linear, 1e-10, 'linear momentum')
        assert_close(linear, pin.computeTotalMass(pmodel) * data.vcom[0], 1e-10, 'm vcom')
        # about the base origin: h_O = h_G + c x p
        assert_close(angular, hg.angular + np.cross(data.com[0], hg.linear), 1e-10,
                     'angular momentum about the base origin')


# ------------------------------------------------------------------------------------------------
# simulation


def energy_drift(model, result):
    """Return max_t |E(t) - E(0)| relative to the largest kinetic energy on the trajectory."""
    E = total_energy(model, result.q, result.qd)
    scale = float(np.max(kinetic_energy(model, result.q, result.qd)))
    return float(np.max(np.abs(E - E[0]))) / scale


def initial_state(model, seed):
    rng = rng_for('simulate', model.name, seed)
    return random_q(model, rng), random_state(rng, model.dof, scale=1.0)


# Largest measured drifts (module docstring): RK4 5.5e-7 (2 s), DOP853 3e-11; the bounds leave
# a factor >= 9 (>= 200 for the default 0.5 s runs).
DRIFT_BOUND = {'rk4': 5e-6, 'solve_ivp': 1e-9}
METHOD_ARGS = {'rk4': {'dt': 1e-3}, 'solve_ivp': {'rtol': 1e-10, 'atol': 1e-12}}


def run_conservation(name, method, t_final):
    model = load(name)
    q0, qd0 = initial_state(model, 0)
    result = simulate(model, q0, qd0, t_final, method=method, **METHOD_ARGS[method])
    assert result.success, result.message
    assert result.t[0] == 0.0 and result.t[-1] == pytest.approx(t_final, abs=1e-12)
    assert result.q.shape == result.qd.shape == (len(result.t), model.dof)
    assert np.abs(result.q[-1] - q0).max() > 1e-2          # it did move
    drift = energy_drift(model, result)
    print(f'\n{name} {method} {t_final:g} s: relative energy drift {drift:.2e} '
          f'({result.nfev} dynamics calls)')
    assert drift <= DRIFT_BOUND[method], drift


@pytest.mark.parametrize('method', ['rk4', 'solve_ivp'])
@pytest.mark.parametrize('name', ['panda', 'stanford_arm', 'saha_planar_3r'])
def test_energy_is_conserved_without_joint_forces(name, method):
    run_conservation(name, method, 0.5)


@pytest.mark.parametrize('method', ['rk4', 'solve_ivp'])
@pytest.mark.parametrize('name', sorted(URDFS))
def test_energy_is_conserved_for_2_s(name, method):
    run_conservation(name, method, 2.0)


@pytest.mark.parametrize('method', ['rk4', 'solve_ivp'])
@pytest.mark.parametrize('name', ['stanford_arm', 'saha_planar_3r'])
def test_work_of_joint_forces_equals_energy_change_1e_7(name, method):
    model = load(name)
    n = model.dof
    rng = rng_for('work', name)
    q0, qd0 = initial_state(model, 1)
    # torques scaled by the diagonal of M(q0): accelerations of a few rad/s^2 on every joint
    diag = np.diag(dr.mass_matrix(model, q0))
    amplitude, omega = diag * rng.uniform(-3, 3, n), rng.uniform(2, 8, n)
    gain = diag * rng.uniform(0.5, 1.5, n)

    def tau(t, q, qd):
        return amplitude * np.sin(omega * t) - gain * qd        # time and state dependent

    result = simulate(model, q0, qd0, 0.4, dt=1e-3, tau=tau, method=method,
                      **({'rtol': 1e-11, 'atol': 1e-12} if method == 'solve_ivp' else {}))
    assert len(result.t) == 401
    power = np.array([qd @ tau(t, q, qd) for t, q, qd in zip(result.t, result.q, result.qd)])
    work = simpson(power, x=result.t)
    E = total_energy(model, result.q, result.qd)
    scale = max(float(np.max(kinetic_energy(model, result.q, result.qd))), abs(work))
    err = abs(E[-1] - E[0] - work) / scale
    print(f'\n{name} {method}: dE {E[-1] - E[0]:.6g}, work {work:.6g}, relative error {err:.1e}')
    assert abs(work) > 1e-2
    assert err <= 1e-7


def test_viscous_friction_dissipates_its_work():
    model = load('craig_rr').replace(damping=[0.7, 0.3], friction=[0.2, 0.1])
    q0, qd0 = np.array([0.3, -0.5]), np.array([1.0, -2.0])
    result = simulate(model, q0, qd0, 0.5, dt=1e-3, friction=True, friction_smoothing=0.05)
    qd = result.qd
    loss = np.sum(qd * (model.damping * qd + model.friction * np.tanh(qd / 0.05)), axis=1)
    E = total_energy(model, result.q, qd)
    assert np.all(np.diff(E) < 0.0)
    assert_close(E[0] - E[-1], simpson(loss, x=result.t), 1e-7, 'dissipated energy')
    again = simulate(model, q0, qd0, 0.5, dt=1e-3,
                     friction=lambda v: model.damping * v + model.friction * np.tanh(v / 0.05))
    assert_close(again.q, result.q, 1e-14)


def test_rk4_matches_solve_ivp_with_constant_tau_and_external_wrench():
    model = load('saha_planar_3r')
    q0, qd0 = initial_state(model, 2)
    f_ext = np.zeros((3, 6))
    f_ext[2, :3] = [0.0, 1.0, 0.0]     # in the plane of motion (z is the joint axis)
    args = {'tau': [0.5, 0.2, -0.1], 'f_ext': f_ext, 'dt': 0.01}
    adaptive = simulate(model, q0, qd0, 0.3, method='solve_ivp', rtol=1e-11, **args)
    args['dt'] = 2e-3
    fixed = simulate(model, q0, qd0, 0.3, **args)
    assert isinstance(fixed, SimulationResult) and fixed.method == 'rk4'
    assert adaptive.method == 'solve_ivp/DOP853'
    np.testing.assert_allclose(fixed.t[::5], adaptive.t, atol=1e-12)
    assert_close(fixed.q[::5], adaptive.q, 1e-6, 'rk4 vs DOP853')
    assert_close(fixed.qd[::5], adaptive.qd, 1e-6, 'rk4 vs DOP853')
    free = simulate(model, q0, qd0, 0.3, tau=[0.5, 0.2, -0.1], dt=2e-3)
    assert np.abs(free.q[-1] - fixed.q[-1]).max() > 1e-4      # the wrench mattered


def test_rk4_step_is_shortened_to_land_on_t_final():
    model = load('craig_rr')
    result = simulate(model, [0.1, 0.2], [0.0, 0.0], 0.0105, dt=1e-3)
    assert len(result.t) == 12 and result.t[-1] == 0.0105
    assert result.nfev == 4 * 11


@pytest.mark.parametrize('kwargs, match', [
    ({'method': 'euler'}, 'unknown method'),
    ({'tau': [1.0]}, 'tau'),
    ({'tau': lambda t, q, qd: np.full(2, np.nan)}, 'tau'),
    ({'dt': -1.0}, 'dt'),
    ({'t_final': np.inf}, 't_final'),
    ({'f_ext': np.zeros((2, 3))}, 'f_ext'),
    ({'friction': 'yes'}, 'friction'),
])
def test_simulate_rejects_bad_arguments(kwargs, match):
    model = load('craig_rr')
    args = {'t_final': 0.01}
    args.update(kwargs)
    with pytest.raises(dr.InputError, match=match):
        simulate(model, [0.0, 0.0], [0.0, 0.0], **args)


# ------------------------------------------------------------------------------------------------
# floating-base models (dr.load_urdf(..., floating_base=True)): world frame, the base is body 0


def floating_state(model, rng, size=()):
    """Return a random q (unit quaternion) and v of a floating-base model."""
    joints = random_state(rng, model.dof, size, scale=1.5)
    q = np.concatenate((rng.normal(size=size + (7,)), joints), axis=-1)
    q[..., 3:7] /= np.linalg.norm(q[..., 3:7], axis=-1, keepdims=True)
    return q, random_state(rng, model.nv, size, scale=1.0)


def test_floating_energy_momentum_and_center_of_mass_1e_10():
    """T = v^T H v / 2, dU/dt = g(q) . v, and Pinocchio's free-flyer COM and momentum."""
    pin = require_oracle('pinocchio')
    path = str(URDFS['space_robot'])
    model = dr.load_urdf(path, floating_base=True, gravity=(1.2, -0.7, -9.81))
    pmodel = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    data = pmodel.createData()
    joints = [pmodel.joints[pmodel.getJointId(name)] for name in model.joint_names]
    iq = np.r_[0:7, [j.idx_q for j in joints]].astype(int)
    iv = np.r_[0:6, [j.idx_v for j in joints]].astype(int)
    rng = rng_for('floating energy')
    q, v = floating_state(model, rng, (4,))
    H = dr.mass_matrix(model, q)
    assert_close(kinetic_energy(model, q, v), 0.5 * np.einsum('bi,bij,bj->b', v, H, v), 1e-12,
                 'T = v H v / 2')
    p, h = momentum(model, q, v)
    c = center_of_mass(model, q)
    assert p.shape == h.shape == c.shape == (4, 3)
    for k in range(4):
        step = 1e-6
        ahead, behind = (integrate_configuration(model, q[k], v[k], s) for s in (step, -step))
        rate = (potential_energy(model, ahead) - potential_energy(model, behind)) / (2 * step)
        assert_close(rate, dr.gravity_torques(model, q[k]) @ v[k], 1e-6, 'dU/dt = g . v')
        pq, pv = np.zeros(pmodel.nq), np.zeros(pmodel.nv)
        pq[iq], pv[iv] = q[k], v[k]
        assert_close(c[k], pin.centerOfMass(pmodel, data, pq), 1e-10, 'centre of mass')
        hg = pin.computeCentroidalMomentum(pmodel, data, pq, pv)
        assert_close(p[k], hg.linear, 1e-10, 'linear momentum')
        assert_close(h[k], hg.angular + np.cross(c[k], hg.linear), 1e-10,
                     'angular momentum about the world origin')


def test_simulate_a_floating_base_rk4_and_solve_ivp():
    """Both integrators agree, conserve energy, keep the quaternion unit; (n,) tau = no wrench."""
    model = dr.load_urdf(str(URDFS['space_robot']), floating_base=True)
    q0, v0 = floating_state(model, rng_for('simulate floating'))
    v0 *= 0.5
    fixed = simulate(model, q0, v0, 0.5, dt=1e-3)
    adaptive = simulate(model, q0, v0, 0.5, dt=0.1, method='solve_ivp', rtol=1e-12, atol=1e-12)
    assert fixed.q.shape == (501, model.nq) and fixed.qd.shape == (501, model.nv)
    assert np.abs(np.linalg.norm(fixed.q[:, 3:7], axis=1) - 1.0).max() < 1e-14
    assert np.abs(np.linalg.norm(adaptive.q[:, 3:7], axis=1) - 1.0).max() < 1e-14
    assert_close(fixed.q[::100], adaptive.q, 1e-9, 'rk4 vs DOP853')
    assert_close(fixed.qd[::100], adaptive.qd, 1e-9, 'rk4 vs DOP853')
    assert np.abs(fixed.q[-1] - q0).max() > 0.1
    assert energy_drift(model, fixed) < 1e-10
    joints_only = simulate(model, q0, v0, 0.05, tau=np.ones(model.dof))
    with_wrench = simulate(model, q0, v0, 0.05, tau=np.r_[np.zeros(6), np.ones(model.dof)])
    assert_close(joints_only.q, with_wrench.q, 0.0, 'tau (n,) = no base wrench')
    with pytest.raises(dr.InputError, match='q0'):
        simulate(model, q0[:-1], v0, 0.1)
