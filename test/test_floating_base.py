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
Free-floating-base dynamics (``denoc_ros.floating_base``), checked against independent references.

* Pinocchio's free-flyer model (``buildModelFromUrdf(path, JointModelFreeFlyer())``, q = [x y z
  qx qy qz qw, joints], v = [local linear, local angular, joints], joints mapped by name):
  ``crba`` (full H), ``rnea`` (base wrench and joint torques, with and without ``fext``),
  ``aba`` (base and joint accelerations), centroidal momentum ``hg``, centre of mass, frame
  Jacobian (LOCAL_WORLD_ALIGNED) and ``integrate``; to 1e-9 relative
  (``max|ours - pin| <= 1e-9 max|pin|``), zero and nonzero gravity, on the bundled space robot,
  Solo-12 and TALOS (reduced) from example-robot-data, and a base made of welded links.
* The fixed-base library (Saha's DeNOC): ``H_m`` is the fixed-base mass matrix and, with the
  base at rest, the joint forces are the fixed-base inverse dynamics.
* Physics: over 5 s of free floating in zero gravity under sinusoidal joint torques (SciPy
  DOP853, rtol = atol = 1e-12), the momentum stays constant to 1e-9 of its size and, from zero
  momentum, the centre of mass stays put to 1e-9 m; the end-effector path predicted by the
  Generalized Jacobian Matrix (kinematics only) matches a dynamic simulation driven by the
  free-floating inverse dynamics.
"""

import math

from conftest import example_robot, require_oracle, URDF_DIR
import denoc_ros as dr
from denoc_ros import floating_base as fb
import numpy as np
import pytest
from scipy.integrate import solve_ivp

pin = require_oracle('pinocchio')

TOL = 1e-9
SPACE_ROBOT = URDF_DIR / 'space_robot.urdf'
ZERO_G = (0.0, 0.0, 0.0)
EARTH_G = (0.0, 0.0, -9.81)
TILTED_G = (1.2, -0.7, -9.81)  # a gravity off the base axes, so a wrong frame would show

# A base made of three welded links (one turned, one below a massless root), one joint per branch.
WELDED_BASE_URDF = """<?xml version="1.0"?>
<robot name="welded_base">
  <link name="root"/>
  <joint name="root_to_bus" type="fixed">
    <parent link="root"/><child link="bus"/>
    <origin xyz="0.1 0.2 -0.1" rpy="0.3 -0.2 0.5"/>
  </joint>
  <link name="bus">
    <inertial><origin xyz="0.05 0 0.02" rpy="0 0 0"/><mass value="50"/>
      <inertia ixx="4" ixy="0.1" ixz="0" iyy="5" iyz="0" izz="6"/></inertial>
  </link>
  <joint name="bus_to_panel" type="fixed">
    <parent link="bus"/><child link="panel"/>
    <origin xyz="0 0.8 0" rpy="0.7 0 0.2"/>
  </joint>
  <link name="panel">
    <inertial><origin xyz="0 0.3 0" rpy="0 0.4 0"/><mass value="8"/>
      <inertia ixx="0.6" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.6"/></inertial>
  </link>
  <joint name="hinge" type="revolute">
    <parent link="bus"/><child link="arm"/>
    <origin xyz="0.5 0 0" rpy="0 0 0"/><axis xyz="0 0.6 0.8"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/>
  </joint>
  <link name="arm">
    <inertial><origin xyz="0.3 0 0" rpy="0 0 0"/><mass value="4"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.12" iyz="0" izz="0.12"/></inertial>
  </link>
  <joint name="slider" type="prismatic">
    <parent link="panel"/><child link="tray"/>
    <origin xyz="0 0.5 0" rpy="0 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/>
  </joint>
  <link name="tray">
    <inertial><origin xyz="0 0.1 0" rpy="0 0 0"/><mass value="2"/>
      <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial>
  </link>
</robot>
"""


def robot_source(case):
    """Return the URDF (path or text) of a test case."""
    if case == 'space_robot':
        return str(SPACE_ROBOT)
    if case == 'welded_base':
        return WELDED_BASE_URDF
    if case == 'solo12':
        return str(example_robot('solo_description/robots/solo12.urdf'))
    return str(example_robot('talos_data/robots/talos_reduced.urdf'))


class PinocchioFreeFlyer:
    """Pinocchio's free-flyer model of a URDF, with our joint order mapped by name."""

    def __init__(self, source, joint_names, gravity):
        if source.lstrip().startswith('<'):
            self.model = pin.buildModelFromXML(source, pin.JointModelFreeFlyer())
        else:
            self.model = pin.buildModelFromUrdf(source, pin.JointModelFreeFlyer())
        self.model.gravity.linear[:] = gravity
        self.data = self.model.createData()
        joints = [self.model.joints[self.model.getJointId(name)] for name in joint_names]
        assert all(joint.nq == 1 and joint.nv == 1 for joint in joints)
        self.iq = np.r_[0:7, [joint.idx_q for joint in joints]].astype(int)
        self.iv = np.r_[0:6, [joint.idx_v for joint in joints]].astype(int)
        self.joint_ids = [1] + [self.model.getJointId(name) for name in joint_names]
        assert self.model.nq == len(self.iq) and self.model.nv == len(self.iv)

    def q(self, q):
        """Return our configuration in Pinocchio's order."""
        out = np.zeros(self.model.nq)
        out[self.iq] = q
        return out

    def v(self, v):
        """Return a velocity-sized vector in Pinocchio's order."""
        out = np.zeros(self.model.nv)
        out[self.iv] = v
        return out

    def forces(self, f_base, f_ext):
        """Return Pinocchio's ``fext`` (joint-local frames) for our base and body wrenches."""
        out = [pin.Force.Zero() for _ in range(self.model.njoints)]
        for joint_id, wrench in zip(self.joint_ids, np.vstack((f_base, f_ext))):
            out[joint_id] = pin.Force(wrench[:3], wrench[3:])
        return out


def random_state(model, rng):
    """Return random q (unit quaternion, joints in [-pi, pi]), v, a and tau."""
    q = np.concatenate((rng.normal(size=3), rng.normal(size=4), rng.uniform(-3, 3, model.dof)))
    q[3:7] /= np.linalg.norm(q[3:7])
    return q, rng.normal(size=model.nv), rng.normal(size=model.nv), rng.normal(size=model.nv)


def assert_close(value, reference, tol, what):
    """Assert ``max|value - reference| <= tol * max|reference|``."""
    value, reference = np.asarray(value), np.asarray(reference)
    assert value.shape == reference.shape, (what, value.shape, reference.shape)
    error = np.abs(value - reference).max()
    scale = np.abs(reference).max()
    assert error <= tol * scale, f'{what}: error {error:.3g}, reference scale {scale:.3g}'


CASES = [('space_robot', ZERO_G), ('space_robot', EARTH_G), ('space_robot', TILTED_G),
         ('welded_base', TILTED_G), ('solo12', EARTH_G), ('talos_reduced', TILTED_G)]
GRAVITY_IDS = {ZERO_G: 'zero_g', EARTH_G: 'earth_g', TILTED_G: 'tilted_g'}


@pytest.mark.parametrize('case, gravity', CASES,
                         ids=[f'{case}-{GRAVITY_IDS[g]}' for case, g in CASES])
def test_agrees_with_pinocchio_free_flyer(case, gravity):
    source = robot_source(case)
    model = fb.load_floating_base(source, gravity=gravity)
    ref = PinocchioFreeFlyer(source, model.joint_names, gravity)
    pm, pd = ref.model, ref.data
    assert model.total_mass == pytest.approx(pin.computeTotalMass(pm), rel=1e-12)
    rng = np.random.default_rng(7)
    tip = model.link_names[-1]
    tip_id = pm.getFrameId(tip)
    for _ in range(3):
        q, v, a, tau = random_state(model, rng)
        f_base, f_ext = rng.normal(size=6), rng.normal(size=(model.dof, 6))
        pq, pv, pa, ptau = ref.q(q), ref.v(v), ref.v(a), ref.v(tau)
        pf = ref.forces(f_base, f_ext)
        M = np.triu(pin.crba(pm, pd, pq))
        H_ref = (M + np.triu(M, 1).T)[np.ix_(ref.iv, ref.iv)]
        blocks = fb.floating_inertia_matrices(model, q)
        assert_close(blocks.H, H_ref, TOL, 'crba H')
        assert_close(blocks.H_b, H_ref[:6, :6], TOL, 'H_b')
        assert_close(blocks.H_bm, H_ref[:6, 6:], TOL, 'H_bm')
        assert_close(blocks.H_m, H_ref[6:, 6:], TOL, 'H_m')
        assert_close(fb.floating_inverse_dynamics(model, q, v, a),
                     pin.rnea(pm, pd, pq, pv, pa)[ref.iv], TOL, 'rnea')
        assert_close(fb.floating_inverse_dynamics(model, q, v, a, f_ext, f_base),
                     pin.rnea(pm, pd, pq, pv, pa, pf)[ref.iv], TOL, 'rnea fext')
        assert_close(fb.floating_nonlinear_terms(model, q, v),
                     pin.nonLinearEffects(pm, pd, pq, pv)[ref.iv], TOL, 'nle')
        assert_close(fb.floating_forward_dynamics(model, q, v, tau),
                     pin.aba(pm, pd, pq, pv, ptau)[ref.iv], TOL, 'aba')
        assert_close(fb.floating_forward_dynamics(model, q, v, tau, f_ext, f_base),
                     pin.aba(pm, pd, pq, pv, ptau, pf)[ref.iv], TOL, 'aba fext')
        pin.computeCentroidalMomentum(pm, pd, pq, pv)
        assert_close(fb.system_momentum(model, q, v), pd.hg.vector, TOL, 'centroidal momentum')
        assert_close(fb.system_center_of_mass(model, q), pin.centerOfMass(pm, pd, pq), TOL,
                     'centre of mass')
        J_ref = pin.computeFrameJacobian(pm, pd, pq, tip_id, pin.LOCAL_WORLD_ALIGNED)
        assert_close(fb.floating_jacobian(model, q, tip), J_ref[:, ref.iv], TOL, 'Jacobian')
        R, p = fb.frame_placement(model, q, tip)
        assert_close(np.column_stack((R, p)), pd.oMf[tip_id].homogeneous[:3], TOL, 'placement')
        assert_close(fb.integrate_configuration(model, q, v, 0.7),
                     pin.integrate(pm, pq, 0.7 * pv)[ref.iq], TOL, 'integrate')


def test_momentum_about_the_origin_and_the_com_differ_by_the_moment_of_the_linear_momentum():
    model = fb.load_floating_base(str(SPACE_ROBOT), gravity=ZERO_G)
    q, v, _, _ = random_state(model, np.random.default_rng(1))
    h_com = fb.system_momentum(model, q, v)
    h_origin = fb.system_momentum(model, q, v, about='origin')
    c = fb.system_center_of_mass(model, q)
    assert_close(h_origin[:3], h_com[:3], 1e-15, 'linear momentum')
    assert_close(h_origin[3:], h_com[3:] + np.cross(c, h_com[:3]), 1e-12, 'angular momentum')
    # linear momentum = total mass x velocity of the centre of mass (finite difference of COM)
    step = 1e-6
    c_dot = (fb.system_center_of_mass(model, fb.integrate_configuration(model, q, v, step))
             - fb.system_center_of_mass(model, fb.integrate_configuration(model, q, v, -step)))
    assert_close(h_com[:3], model.total_mass * c_dot / (2.0 * step), 1e-8, 'm c_dot')


@pytest.mark.parametrize('gravity', [ZERO_G, TILTED_G])
def test_identities_and_the_fixed_base_library(gravity):
    model = fb.load_floating_base(str(SPACE_ROBOT), gravity=gravity)
    tree = dr.load_urdf(str(SPACE_ROBOT), gravity=gravity)  # the fixed-base model of the tree
    rng = np.random.default_rng(3)
    for _ in range(3):
        q, v, a, tau = random_state(model, rng)
        H = fb.floating_mass_matrix(model, q)
        assert_close(H, H.T, 1e-15, 'H symmetric')
        assert np.linalg.eigvalsh(H).min() > 0.0
        c = fb.floating_nonlinear_terms(model, q, v)
        assert_close(fb.floating_inverse_dynamics(model, q, v, a), H @ a + c, 1e-12, 'H a + c')
        qdd = fb.floating_forward_dynamics(model, q, v, tau)
        assert_close(qdd, np.linalg.solve(H, tau - c), 1e-10, 'ABA vs Cholesky')
        assert_close(fb.floating_inverse_dynamics(model, q, v, qdd), tau, 1e-10, 'ID(FD)')
        # joint forces only (free floating): no base wrench is needed
        free = fb.floating_forward_dynamics(model, q, v, tau[6:])
        assert np.abs(fb.floating_inverse_dynamics(model, q, v, free)[:6]).max() < 1e-10
        tau_m, a_b = fb.free_floating_inverse_dynamics(model, q, v, a[6:])
        assert_close(fb.floating_forward_dynamics(model, q, v, tau_m), np.r_[a_b, a[6:]],
                     1e-10, 'free-floating inverse dynamics')
        # H_m is the fixed-base mass matrix of the tree (Saha's DeNOC, another algorithm)
        assert_close(fb.floating_inertia_matrices(model, q).H_m,
                     dr.mass_matrix(tree, q[7:]), 1e-12, 'H_m vs DeNOC')
        # base at rest with the world axes: the joint forces are the fixed-base ones
        q0 = q.copy()
        q0[3:7] = (0.0, 0.0, 0.0, 1.0)
        v0 = np.r_[np.zeros(6), v[6:]]
        a0 = np.r_[np.zeros(6), a[6:]]
        assert_close(fb.floating_inverse_dynamics(model, q0, v0, a0)[6:],
                     dr.inverse_dynamics(tree, q[7:], v[6:], a[6:]), 1e-12, 'tau_m vs DeNOC')


def simulate(model, q0, v0, duration, torques, samples=51):
    """Integrate the free-floating motion with SciPy DOP853 (rtol = atol = 1e-12)."""
    nq = model.nq

    def rhs(t, y):
        q, v = y[:nq], y[nq:]
        tau = torques(t, q, v)
        return np.concatenate((fb.configuration_rate(model, q, v),
                               fb.floating_forward_dynamics(model, q, v, tau)))

    t_eval = np.linspace(0.0, duration, samples)
    sol = solve_ivp(rhs, (0.0, duration), np.concatenate((q0, v0)), method='DOP853',
                    rtol=1e-12, atol=1e-12, t_eval=t_eval)
    assert sol.success, sol.message
    return sol.t, sol.y[:nq].T, sol.y[nq:].T


def sinusoidal_torques(model, amplitude=2.0):
    """Return ``tau(t, q, v)``: smooth joint torques, one frequency per joint."""
    frequency = 0.3 + 0.1 * np.arange(model.dof)
    phase = 0.7 * np.arange(model.dof)

    def torques(t, q, v):
        return amplitude * np.sin(2.0 * np.pi * frequency * t + phase)
    return torques


def zero_momentum_velocity(model, q, qd):
    """Return v with joint rates ``qd`` and the base velocity that makes the momentum zero."""
    blocks = fb.floating_inertia_matrices(model, q)
    return np.r_[-np.linalg.solve(blocks.H_b, blocks.H_bm @ qd), qd]


def test_momentum_is_conserved_over_a_5_s_free_floating_motion():
    model = fb.load_floating_base(str(SPACE_ROBOT), gravity=ZERO_G)
    rng = np.random.default_rng(11)
    q0, _, _, _ = random_state(model, rng)
    q0[7:] = rng.uniform(-1.0, 1.0, model.dof)
    q0[7 + list(model.joint_names).index('arm_b_joint3')] = 0.2
    v0 = 0.3 * rng.normal(size=model.nv)
    t, qs, vs = simulate(model, q0, v0, 5.0, sinusoidal_torques(model))
    for about in ('com', 'origin'):
        h = np.array([fb.system_momentum(model, q, v, about=about) for q, v in zip(qs, vs)])
        drift = np.abs(h - h[0]).max(axis=0)
        scale = np.abs(h[0]).max()
        assert drift.max() <= TOL * scale, (about, drift, scale)
    # the centre of mass moves in a straight line at the initial velocity
    com = np.array([fb.system_center_of_mass(model, q) for q in qs])
    expected = com[0] + np.outer(t, fb.system_momentum(model, q0, v0)[:3] / model.total_mass)
    assert np.abs(com - expected).max() < 1e-9
    assert abs(np.linalg.norm(qs[-1, 3:7]) - 1.0) < 1e-9


def test_zero_momentum_keeps_the_center_of_mass_put_and_the_base_reacts():
    model = fb.load_floating_base(str(SPACE_ROBOT), gravity=ZERO_G)
    q0 = fb.neutral_configuration(model)
    qd0 = 0.2 * np.ones(model.dof)
    v0 = zero_momentum_velocity(model, q0, qd0)
    t, qs, vs = simulate(model, q0, v0, 5.0, sinusoidal_torques(model))
    h = np.array([fb.system_momentum(model, q, v) for q, v in zip(qs, vs)])
    # scale: the momentum the joints alone would carry with the base held still
    joint_only = max(np.abs(fb.system_momentum(model, q, np.r_[np.zeros(6), v[6:]])).max()
                     for q, v in zip(qs, vs))
    assert np.abs(h).max() <= TOL * joint_only
    com = np.array([fb.system_center_of_mass(model, q) for q in qs])
    assert np.abs(com - com[0]).max() < 1e-9  # metres
    assert np.abs(qs[:, :3] - qs[0, :3]).max() > 1e-3  # yet the base itself moves


def test_generalized_jacobian_predicts_the_end_effector_motion():
    """Kinematic prediction (J* only) vs dynamic simulation (free-floating computed torque)."""
    model = fb.load_floating_base(str(SPACE_ROBOT), gravity=ZERO_G)
    tool = 'arm_a_tool'
    arm = [i for i, name in enumerate(model.joint_names) if name.startswith('arm_a')]
    q0 = fb.neutral_configuration(model)
    q0[7 + np.array(arm)] = (0.3, 0.4, -0.8, 0.2)
    duration = 2.0
    delta = np.zeros(model.dof)
    delta[arm] = (0.8, -0.6, 1.0, 1.5)

    def joint_path(t):
        """Return (qd, qdd) of a smooth rest-to-rest move (cycloidal profile)."""
        s = 2.0 * np.pi * t / duration
        return (delta / duration * (1.0 - np.cos(s)),
                delta / duration * 2.0 * np.pi / duration * np.sin(s))

    def torques(t, q, v):
        return fb.free_floating_inverse_dynamics(model, q, v, joint_path(t)[1])[0]

    t, qs, vs = simulate(model, q0, np.zeros(model.nv), duration, torques, samples=21)
    # 1) at every sample the simulated tool twist equals J* qd
    twists = [fb.floating_jacobian(model, q, tool) @ v for q, v in zip(qs, vs)]
    gjm = [fb.generalized_jacobian(model, q, tool) @ v[6:] for q, v in zip(qs, vs)]
    assert_close(gjm, twists, TOL, 'J* qd')

    # 2) integrating J* qd along the joint path alone predicts where the tool goes
    nq = model.nq

    def kinematics_rhs(t, y):
        q = y[:nq]
        qd = joint_path(t)[0]
        v = zero_momentum_velocity(model, q, qd)
        return np.concatenate((fb.configuration_rate(model, q, v),
                               (fb.generalized_jacobian(model, q, tool) @ qd)[:3]))

    start = fb.frame_placement(model, q0, tool)[1]
    sol = solve_ivp(kinematics_rhs, (0.0, duration), np.r_[q0, start], method='DOP853',
                    rtol=1e-12, atol=1e-12, t_eval=t)
    predicted = sol.y[nq:].T
    simulated = np.array([fb.frame_placement(model, q, tool)[1] for q in qs])
    travel = np.abs(simulated - start).max()
    assert travel > 0.1
    assert np.abs(predicted - simulated).max() <= 1e-8 * travel
    assert np.abs(sol.y[:nq].T - qs).max() < 1e-8  # the same base motion too
    # the joints went where the path says, and the base turned (attitude drift)
    assert_close(qs[-1, 7:] - q0[7:], delta, 1e-8, 'joint travel')
    assert abs(qs[-1, 6]) < 1.0 - 1e-6


def test_rk4_helper_keeps_a_unit_quaternion_and_conserves_momentum():
    """RK4 at dt = 1 ms over 1 s: momentum drift measured 1.9e-10 of its size."""
    model = fb.load_floating_base(str(SPACE_ROBOT), gravity=ZERO_G)
    q0 = fb.neutral_configuration(model)
    v0 = zero_momentum_velocity(model, q0, 0.3 * np.ones(model.dof))
    v0[:6] += (0.01, -0.02, 0.0, 0.02, 0.01, -0.03)
    run = fb.simulate_floating(model, q0, v0, 1.0, 1e-3, tau=sinusoidal_torques(model))
    assert run.q.shape == (1001, model.nq) and run.v.shape == (1001, model.nv)
    assert np.abs(np.linalg.norm(run.q[:, 3:7], axis=1) - 1.0).max() < 1e-14
    h = np.array([fb.system_momentum(model, q, v, about='origin') for q, v in zip(run.q, run.v)])
    assert np.abs(h - h[0]).max() <= 1e-9 * np.abs(h[0]).max()
    # against the tight integrator
    _, qs, vs = simulate(model, q0, v0, 1.0, sinusoidal_torques(model), samples=3)
    assert np.abs(run.q[-1] - qs[-1]).max() < 1e-8


def test_load_keeps_the_tree_and_lumps_the_base():
    model = fb.load_floating_base(str(SPACE_ROBOT))
    assert model.dof == 8 and model.nq == 15 and model.nv == 14
    assert model.base_link == 'base_link'
    assert model.mass[0] == pytest.approx(300.0)  # body 0: the base
    np.testing.assert_allclose(model.com[0], (0.02, -0.01, 0.03))
    assert model.total_mass == pytest.approx(351.0)
    joint = list(model.joint_names).index('arm_b_joint3')
    assert model.joint_type[model.joint_bodies[joint]] == dr.PRISMATIC
    assert sorted(model.children(0)) == [1, 5]  # two branches on the base
    welded = fb.load_floating_base(WELDED_BASE_URDF)
    assert welded.mass[0] == pytest.approx(58.0)
    assert welded.replace(gravity=ZERO_G).gravity.tolist() == [0.0, 0.0, 0.0]


def test_bad_input_raises_clear_errors():
    model = fb.load_floating_base(str(SPACE_ROBOT))
    q = fb.neutral_configuration(model)
    v = np.zeros(model.nv)
    with pytest.raises(dr.InputError, match='q has length'):
        fb.floating_mass_matrix(model, q[:-1])
    with pytest.raises(dr.InputError, match='NaN'):
        fb.floating_inverse_dynamics(model, q, np.full(model.nv, math.nan), v)
    bad = q.copy()
    bad[3:7] = 0.0
    with pytest.raises(dr.InputError, match='quaternion'):
        fb.floating_forward_dynamics(model, bad, v, np.zeros(model.dof))
    with pytest.raises(dr.InputError, match='tau'):
        fb.floating_forward_dynamics(model, q, v, np.zeros(3))
    with pytest.raises(dr.InputError, match='f_ext'):
        fb.floating_inverse_dynamics(model, q, v, v, f_ext=np.zeros((2, 6)))
    with pytest.raises(dr.InputError, match='unknown frame'):
        fb.floating_jacobian(model, q, 'no_such_link')
    with pytest.raises(dr.InputError, match='about'):
        fb.system_momentum(model, q, v, about='base')
    with pytest.raises(dr.URDFError, match='floating base needs a positive mass'):
        fb.load_floating_base(str(URDF_DIR / 'craig_rr.urdf'))


def test_example_manoeuvre_prints_attitude_drift():
    """examples/space_robot_manoeuvre.py runs and reports the drift it causes."""
    import pathlib
    import subprocess
    import sys
    repo = pathlib.Path(__file__).resolve().parent.parent
    run = subprocess.run([sys.executable, str(repo / 'examples' / 'space_robot_manoeuvre.py'),
                          '--duration', '1.0', '--dt', '0.01'], cwd=repo, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert 'base attitude drift' in run.stdout
    assert 'momentum error' in run.stdout
