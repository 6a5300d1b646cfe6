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
Cartesian quantities, each checked against something independent.

(``denoc_ros.dynamics.jacobian`` and ``.operational_space``.)

* frame_pose, jacobian, jacobian_dot_times_qd vs Pinocchio (``data.oMf``,
  ``computeFrameJacobian`` and ``getFrameClassicalAcceleration`` in LOCAL_WORLD_ALIGNED) on the
  bundled URDFs, the Panda tree of example-robot-data and random trees built with Pinocchio's
  API (prismatic joints, frames at arbitrary placements), to 1e-9;
* jacobian vs central differences of frame_pose, Jdot qd vs central differences of J qd;
* cartesian_dynamics vs Craig's closed forms J^-T M J^-1, J^-T (C qd) - Lambda Jdot qd, J^-T g
  (seed 002) for square J, vs Pinocchio's own M and J on the 7-DoF Panda, and, where J M^-1 J^T
  is singular, the Penrose conditions and the operational-space control identity checked with
  forward dynamics.
"""

import dataclasses

from conftest import bundled_urdfs, example_robot, require_oracle, URDF_DIR
import denoc_ros as dr
from denoc_ros.dynamics import cartesian_dynamics, CartesianDynamics, frame_pose, jacobian, \
    jacobian_dot_times_qd, point_acceleration, point_velocity
import numpy as np
import pytest
from robots_for_tests import assert_close, make_model, PinocchioMap, random_rotation, \
    random_state, rng_for, to_pinocchio

pin = require_oracle('pinocchio')

TOL = 1e-9      # against Pinocchio and closed forms
FD_TOL = 1e-6   # against central finite differences
H = 1e-6        # finite-difference step


def assert_rel(actual, expected, tol, what=''):
    """Assert ``max|actual - expected| <= tol * max|expected|`` (relative to the largest entry)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    scale = float(np.max(np.abs(expected)))
    err = float(np.max(np.abs(actual - expected)))
    assert err <= tol * scale, f'{what}: error {err:.3g} > {tol:g} * {scale:.3g}'


def load_bundled(name):
    return dr.load_urdf(str(URDF_DIR / name))


def load_panda(tip_link=None):
    """Return the path of example-robot-data's Panda and its model (tree, or chain to tip)."""
    path = example_robot('panda_description/urdf/panda.urdf')
    if tip_link is not None:
        return path, dr.load_urdf(str(path), tip_link=tip_link)
    with pytest.warns(UserWarning, match='panda_finger_joint2'):    # mimic joint (DESIGN.md)
        return path, dr.load_urdf(str(path))


def pin_frame_id(pmodel, name):
    """Return Pinocchio's id of the link frame ``name`` (a BODY frame, else any frame)."""
    fid = pmodel.getFrameId(name, pin.FrameType.BODY)
    if fid >= len(pmodel.frames):
        fid = pmodel.getFrameId(name)
    assert fid < len(pmodel.frames), f'frame {name!r} not in the Pinocchio model'
    return fid


def compare_frames_with_pinocchio(model, pmodel, seed, count=3, q_scale=np.pi):
    """Compare pose, Jacobian and Jdot qd of every frame of ``model`` at random states."""
    data = pmodel.createData()
    mp = PinocchioMap(pmodel, model.joint_names)
    names = [f.name for f in model.frames]
    assert names
    rng = rng_for('cartesian-pinocchio', seed)
    for _ in range(count):
        q = random_state(rng, model.dof, scale=q_scale)
        qd = random_state(rng, model.dof, scale=2.0)
        pq, pv = mp.q(q), mp.v(qd)
        for name in names:
            fid = pin_frame_id(pmodel, name)
            J_pin = pin.computeFrameJacobian(pmodel, data, pq, fid, pin.LOCAL_WORLD_ALIGNED)
            J_pin = np.asarray(J_pin).reshape(6, -1)[:, mp.idx_v]     # (6,) when nv = 1
            assert_close(jacobian(model, q, name), J_pin, TOL, f'jacobian {name}')
            pin.forwardKinematics(pmodel, data, pq, pv, 0.0 * pv)
            pin.updateFramePlacements(pmodel, data)
            R, p = frame_pose(model, q, name)
            assert_close(R, data.oMf[fid].rotation, TOL, f'rotation {name}')
            assert_close(p, data.oMf[fid].translation, TOL, f'position {name}')
            acc = pin.getFrameClassicalAcceleration(pmodel, data, fid, pin.LOCAL_WORLD_ALIGNED)
            assert_close(jacobian_dot_times_qd(model, q, qd, name), acc.vector, TOL,
                         f'Jdot qd {name}')


# ------------------------------------------------------------------------------------------------
# Kinematics vs Pinocchio


@pytest.mark.parametrize('path', bundled_urdfs(), ids=lambda p: p.name)
def test_bundled_urdfs_every_frame_vs_pinocchio_1e_9(path):
    model = dr.load_urdf(str(path))
    compare_frames_with_pinocchio(model, pin.buildModelFromUrdf(str(path)), path.name)


def test_panda_tree_every_frame_vs_pinocchio_1e_9():
    path, model = load_panda()
    assert model.dof == 9
    compare_frames_with_pinocchio(model, pin.buildModelFromUrdf(str(path)), 'panda', q_scale=1.0)


def test_panda_tree_finger_jacobian_has_zero_columns_off_its_path():
    _, model = load_panda()
    q = random_state(rng_for('panda-fingers'), model.dof)
    J = jacobian(model, q, 'panda_leftfinger')
    names = list(model.joint_names)
    assert np.all(J[:, names.index('panda_finger_joint2')] == 0.0)
    assert np.linalg.norm(J[:3, names.index('panda_finger_joint1')]) == pytest.approx(1.0)
    J_right = jacobian(model, q, 'panda_rightfinger')
    assert np.all(J_right[:, names.index('panda_finger_joint1')] == 0.0)


def with_frames(model, seed):
    """Return ``model`` with a base frame and one frame per body at a random placement."""
    rng = rng_for('frames', seed)
    frames = [dr.Frame('base_frame', -1, random_rotation(rng), rng.uniform(-0.3, 0.3, 3))]
    frames += [dr.Frame(f'frame{i}', i, random_rotation(rng), rng.uniform(-0.3, 0.3, 3))
               for i in range(model.dof)]
    return model.replace(frames=tuple(frames), tip='frame0')


def to_pinocchio_with_frames(model):
    """Build the robot with Pinocchio's API and add the model's frames as OP_FRAMEs."""
    pmodel = to_pinocchio(model)
    for f in model.frames:
        joint = 0 if f.body < 0 else pmodel.getJointId(model.joint_names[f.body])
        pmodel.addFrame(pin.Frame(f.name, joint, pin.SE3(np.array(f.rotation),
                                                         np.array(f.translation)),
                                  pin.FrameType.OP_FRAME))
    return pmodel


@pytest.mark.parametrize('case', ['single_prismatic', 'chain7_mixed', 'branched5',
                                  'two_roots_tree6', 'branched8'])
def test_random_trees_with_prismatic_joints_vs_pinocchio_1e_9(case):
    model = with_frames(make_model(case, seed=3), case)
    compare_frames_with_pinocchio(model, to_pinocchio_with_frames(model), case)


# ------------------------------------------------------------------------------------------------
# Kinematics vs finite differences


def vee(W):
    """Return the vector of the skew-symmetric part of a 3x3 matrix."""
    A = 0.5 * (W - W.T)
    return np.array([A[2, 1], A[0, 2], A[1, 0]])


FD_MODELS = {
    'stanford_arm': lambda: load_bundled('stanford_arm.urdf'),   # a prismatic joint
    'ur5e': lambda: load_bundled('ur5e.urdf'),
    'branched8': lambda: with_frames(make_model('branched8', seed=1), 'fd'),
}


@pytest.mark.parametrize('name', list(FD_MODELS))
def test_jacobian_vs_finite_differences_of_frame_pose(name):
    model = FD_MODELS[name]()
    rng = rng_for('fd-jacobian', name)
    for frame in [f.name for f in model.frames]:
        q = random_state(rng, model.dof, scale=2.0)
        J = jacobian(model, q, frame)
        R0, _ = frame_pose(model, q, frame)
        J_fd = np.zeros_like(J)
        for k in range(model.dof):
            dq = np.zeros(model.dof)
            dq[k] = H
            R_plus, p_plus = frame_pose(model, q + dq, frame)
            R_minus, p_minus = frame_pose(model, q - dq, frame)
            J_fd[:3, k] = (p_plus - p_minus) / (2 * H)
            J_fd[3:, k] = vee((R_plus - R_minus) / (2 * H) @ R0.T)   # w x = R_dot R^T
        assert_close(J, J_fd, FD_TOL, f'{name} {frame}')


@pytest.mark.parametrize('name', list(FD_MODELS))
def test_jacobian_dot_times_qd_vs_finite_differences(name):
    model = FD_MODELS[name]()
    rng = rng_for('fd-jdot', name)
    for frame in [f.name for f in model.frames]:
        q, qd = random_state(rng, model.dof, scale=2.0), random_state(rng, model.dof, scale=2.0)
        expected = (jacobian(model, q + H * qd, frame) @ qd
                    - jacobian(model, q - H * qd, frame) @ qd) / (2 * H)
        assert_close(jacobian_dot_times_qd(model, q, qd, frame), expected, FD_TOL,
                     f'{name} {frame}')


def test_base_frame_does_not_move():
    model = load_bundled('ur5e.urdf')
    q, qd = np.full(6, 0.4), np.full(6, -0.7)
    assert np.all(jacobian(model, q, 'base_link') == 0.0)
    assert np.all(jacobian_dot_times_qd(model, q, qd, 'base_link') == 0.0)
    cd = cartesian_dynamics(model, q, qd, 'base_link')
    assert np.all(cd.inertia == 0.0) and np.all(np.isfinite(cd.coriolis))
    assert np.isfinite(cd.condition_number)


# ------------------------------------------------------------------------------------------------
# Cartesian dynamics


def joint_space(model, q, qd):
    """Return M, C qd and g from the joint-space library functions."""
    return (dr.mass_matrix(model, q), dr.coriolis_torques(model, q, qd),
            dr.gravity_torques(model, q))


@pytest.mark.parametrize('urdf', ['ur5e.urdf', 'puma560.urdf', 'stanford_arm.urdf'])
def test_square_jacobian_matches_craig_closed_forms_1e_9(urdf):
    model = load_bundled(urdf)
    rng = rng_for('craig', urdf)
    for _ in range(4):
        q, qd = random_state(rng, 6, scale=1.5), random_state(rng, 6, scale=2.0)
        cd = cartesian_dynamics(model, q, qd)
        J = jacobian(model, q)
        assert 1.0 < cd.condition_number < 1e9, 'a non-singular configuration'
        assert cd.condition_number == pytest.approx(
            np.linalg.cond(J @ np.linalg.solve(dr.mass_matrix(model, q), J.T)), rel=1e-6)
        M, h, g = joint_space(model, q, qd)
        J_inv = np.linalg.inv(J)
        Lambda = J_inv.T @ M @ J_inv                                  # M_x = J^-T M J^-1
        assert_rel(cd.inertia, Lambda, TOL, 'Lambda vs J^-T M J^-1')
        assert_rel(cd.gravity, J_inv.T @ g, TOL, 'p vs J^-T g')     # G_x
        V_x = J_inv.T @ h - Lambda @ jacobian_dot_times_qd(model, q, qd)
        assert_rel(cd.coriolis, V_x, TOL, 'mu vs Craig V_x')
        assert_rel(cd.jacobian_bar, J_inv, TOL, 'J_bar = J^-1 for square J')
        assert_close(cd.jacobian, J, 0.0, 'jacobian field')
        assert np.array_equal(cd.inertia, cd.inertia.T)
        assert np.all(np.linalg.eigvalsh(cd.inertia) > 0.0)


def test_panda_7dof_vs_pinocchio_operational_space_quantities_1e_9():
    path, model = load_panda(tip_link='panda_link8')
    assert model.dof == 7
    full = pin.buildModelFromUrdf(str(path))
    fingers = [full.getJointId(n) for n in ('panda_finger_joint1', 'panda_finger_joint2')]
    pmodel = pin.buildReducedModel(full, fingers, pin.neutral(full))
    data = pmodel.createData()
    mp = PinocchioMap(pmodel, model.joint_names)
    rng = rng_for('panda-osc')
    for frame in ('panda_link8', 'panda_hand_tcp', 'panda_link7'):
        fid = pin_frame_id(pmodel, frame)
        q, qd = random_state(rng, 7, scale=1.0), random_state(rng, 7, scale=2.0)
        pq, pv = mp.q(q), mp.v(qd)
        M = np.triu(pin.crba(pmodel, data, pq))
        M = mp.from_vv(M + np.triu(M, 1).T)
        J = np.asarray(pin.computeFrameJacobian(pmodel, data, pq, fid,
                                                pin.LOCAL_WORLD_ALIGNED))[:, mp.idx_v]
        g = mp.from_v(pin.computeGeneralizedGravity(pmodel, data, pq))
        h = mp.from_v(pin.nonLinearEffects(pmodel, data, pq, pv)) - g
        pin.forwardKinematics(pmodel, data, pq, pv, 0.0 * pv)
        a = pin.getFrameClassicalAcceleration(pmodel, data, fid, pin.LOCAL_WORLD_ALIGNED).vector
        M_inv_JT = np.linalg.solve(M, J.T)
        Lambda = np.linalg.inv(J @ M_inv_JT)
        J_bar = M_inv_JT @ Lambda
        cd = cartesian_dynamics(model, q, qd, frame)
        assert cd.frame == frame
        assert cd.condition_number < 1e9
        assert_rel(cd.inertia, Lambda, TOL, f'{frame} Lambda')
        assert_rel(cd.jacobian_bar, J_bar, TOL, f'{frame} J_bar')
        assert_rel(cd.gravity, J_bar.T @ g, TOL, f'{frame} p')
        assert_rel(cd.coriolis, J_bar.T @ h - Lambda @ a, TOL, f'{frame} mu')
        assert np.all(np.linalg.eigvalsh(cd.inertia) > 0.0)


def singular_cases():
    """Return (label, model, q, frame) with J M^-1 J^T singular: n < 6 or a singular pose."""
    ur5e = load_bundled('ur5e.urdf')
    return [
        ('craig_rr', load_bundled('craig_rr.urdf'), np.array([0.4, 1.1]), None),
        ('saha_planar_3r', load_bundled('saha_planar_3r.urdf'), np.array([0.3, -0.6, 1.0]),
         None),
        ('saha_planar_3r_stretched', load_bundled('saha_planar_3r.urdf'), np.zeros(3), None),
        ('ur5e_zero_stretched', ur5e, np.zeros(6), None),
        ('ur5e_wrist', ur5e, np.array([0.3, -1.2, 1.4, -0.5, 0.0, 0.8]), 'tool0'),
        ('ur5e_elbow_stretched', ur5e, np.array([0.3, -0.8, 0.0, 0.4, 0.9, 0.2]), None),
        ('puma560_zero', load_bundled('puma560.urdf'), np.zeros(6), None),
    ]


SINGULAR = [case[0] for case in singular_cases()]


@pytest.mark.parametrize('label', SINGULAR)
def test_singular_or_deficient_gives_finite_pseudo_inverse(label):
    _, model, q, frame = singular_cases()[SINGULAR.index(label)]
    qd = random_state(rng_for('singular', label), model.dof, scale=1.5)
    cd = cartesian_dynamics(model, q, qd, frame)
    for field in ('jacobian', 'inertia', 'coriolis', 'gravity', 'jacobian_bar'):
        assert np.all(np.isfinite(getattr(cd, field))), field
    assert np.isfinite(cd.condition_number) and cd.condition_number > 1e12
    M = dr.mass_matrix(model, q)
    A = cd.jacobian @ np.linalg.solve(M, cd.jacobian.T)     # J M^-1 J^T, computed here
    assert np.linalg.matrix_rank(A) < 6
    Lam = cd.inertia
    assert_rel(A @ Lam @ A, A, TOL, 'A Lambda A = A')
    assert_rel(Lam @ A @ Lam, Lam, TOL, 'Lambda A Lambda = Lambda')
    assert np.array_equal(Lam, Lam.T)
    assert np.all(np.linalg.eigvalsh(Lam) > -TOL * np.max(np.abs(Lam)))
    assert_rel(Lam, np.linalg.pinv(A, rcond=1e-10, hermitian=True), 1e-6, 'vs numpy pinv')


CONTROL_CASES = ['craig_rr', 'saha_planar_3r_stretched', 'ur5e_zero_stretched', 'ur5e_wrist',
                 'panda_7dof', 'ur5e_regular']


@pytest.mark.parametrize('label', CONTROL_CASES)
def test_operational_space_law_produces_commanded_acceleration(label):
    """Apply tau = J^T (Lambda a + mu + p); forward dynamics gives J qdd + Jdot qd = a."""
    if label == 'panda_7dof':
        _, model = load_panda(tip_link='panda_link8')
        q, frame = random_state(rng_for('osc-panda'), 7), 'panda_hand_tcp'
    elif label == 'ur5e_regular':
        model, q, frame = load_bundled('ur5e.urdf'), np.array([0.3, -1.2, 1.4, -0.5, 0.7, 0.8]), \
            None
    else:
        _, model, q, frame = singular_cases()[SINGULAR.index(label)]
    rng = rng_for('osc', label)
    qd, u = random_state(rng, model.dof, scale=1.5), random_state(rng, model.dof, scale=3.0)
    cd = cartesian_dynamics(model, q, qd, frame)
    Jdqd = jacobian_dot_times_qd(model, q, qd, frame)
    a = cd.jacobian @ u + Jdqd                  # an acceleration the frame can have
    tau = cd.jacobian.T @ (cd.inertia @ a + cd.coriolis + cd.gravity)
    qdd = dr.forward_dynamics(model, q, qd, tau)
    assert_rel(cd.jacobian @ qdd + Jdqd, a, TOL, 'achieved frame acceleration')


def test_damped_inverse_is_tikhonov():
    model = load_bundled('ur5e.urdf')
    for q in (np.zeros(6), np.array([0.3, -1.2, 1.4, -0.5, 0.7, 0.8])):
        qd = np.full(6, 0.5)
        cd = cartesian_dynamics(model, q, qd, damping=1e-3)
        J = cd.jacobian
        A = J @ np.linalg.solve(dr.mass_matrix(model, q), J.T)
        Lam = np.linalg.inv(A + 1e-3 * np.eye(6))
        assert_rel(cd.inertia, Lam, TOL, 'damped Lambda')
        assert_rel(cd.gravity, Lam @ J @ np.linalg.solve(dr.mass_matrix(model, q),
                                                         dr.gravity_torques(model, q)), TOL,
                   'damped p')
        assert np.all(np.isfinite(cd.coriolis))


def test_batch_axes_equal_single_calls():
    model = load_bundled('puma560.urdf')
    rng = rng_for('batch')
    q, qd = random_state(rng, 6, size=(2, 3)), random_state(rng, 6, size=(3,))
    cd = cartesian_dynamics(model, q, qd)
    R, p = frame_pose(model, q, 'link4')
    J = jacobian(model, q, 'link4')
    Jdqd = jacobian_dot_times_qd(model, q, qd, 'link4')
    assert cd.inertia.shape == (2, 3, 6, 6) and cd.jacobian_bar.shape == (2, 3, 6, 6)
    assert cd.condition_number.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            one = cartesian_dynamics(model, q[i, j], qd[j])
            for field in ('jacobian', 'inertia', 'coriolis', 'gravity', 'jacobian_bar',
                          'condition_number'):
                assert_close(getattr(cd, field)[i, j], getattr(one, field), 1e-12, field)
            R1, p1 = frame_pose(model, q[i, j], 'link4')
            assert_close(R[i, j], R1, 1e-14)
            assert_close(p[i, j], p1, 1e-14)
            assert_close(J[i, j], jacobian(model, q[i, j], 'link4'), 1e-14)
            assert_close(Jdqd[i, j], jacobian_dot_times_qd(model, q[i, j], qd[j], 'link4'), 1e-14)


def test_result_type_and_default_frame():
    model = load_bundled('ur5e.urdf')
    cd = cartesian_dynamics(model, np.full(6, 0.3), np.zeros(6))
    assert isinstance(cd, CartesianDynamics)
    assert cd.frame == model.tip_link == 'wrist_3_link'
    assert isinstance(cd.condition_number, float)
    assert np.all(cd.coriolis == 0.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cd.frame = 'tool0'
    assert_close(jacobian(model, np.full(6, 0.3)), jacobian(model, np.full(6, 0.3), ''), 0.0)


# ------------------------------------------------------------------------------------------------
# Bad input


def calls(model, q, qd, frame=None):
    return {
        'frame_pose': lambda: frame_pose(model, q, frame),
        'jacobian': lambda: jacobian(model, q, frame),
        'jacobian_dot_times_qd': lambda: jacobian_dot_times_qd(model, q, qd, frame),
        'cartesian_dynamics': lambda: cartesian_dynamics(model, q, qd, frame),
    }


@pytest.mark.parametrize('function', list(calls(None, None, None)))
def test_unknown_frame_is_named(function):
    model = load_bundled('ur5e.urdf')
    with pytest.raises(dr.InputError, match="'no_such_link'"):
        calls(model, np.zeros(6), np.zeros(6), 'no_such_link')[function]()
    with pytest.raises(dr.InputError, match='frame must be'):
        calls(model, np.zeros(6), np.zeros(6), 3)[function]()


@pytest.mark.parametrize('function', list(calls(None, None, None)))
def test_wrong_length_and_nan_are_rejected(function):
    model = load_bundled('ur5e.urdf')
    with pytest.raises(dr.InputError, match='expected length 6'):
        calls(model, np.zeros(5), np.zeros(6))[function]()
    q = np.zeros(6)
    q[2] = np.nan
    with pytest.raises(dr.InputError, match=r'q\[2\] is nan'):
        calls(model, q, np.zeros(6))[function]()
    if function in ('jacobian_dot_times_qd', 'cartesian_dynamics'):
        qd = np.zeros(6)
        qd[4] = np.inf
        with pytest.raises(dr.InputError, match=r'qd\[4\] is inf'):
            calls(model, np.zeros(6), qd)[function]()
        with pytest.raises(dr.InputError, match='expected length 6'):
            calls(model, np.zeros(6), np.zeros(7))[function]()


@pytest.mark.parametrize('kwargs', [{'damping': -1.0}, {'damping': np.nan}, {'rcond': -1e-3},
                                    {'damping': 'a lot'}])
def test_bad_damping_or_rcond(kwargs):
    model = load_bundled('ur5e.urdf')
    with pytest.raises(dr.InputError, match=next(iter(kwargs))):
        cartesian_dynamics(model, np.zeros(6), np.zeros(6), **kwargs)


def test_not_a_model():
    with pytest.raises(dr.InputError, match='RobotModel'):
        jacobian('ur5e', np.zeros(6))


def test_singular_mass_matrix_is_reported():
    model = load_bundled('craig_rr.urdf')
    massless = model.replace(mass=np.array([1.0, 0.0]), inertia=np.zeros((2, 3, 3)))
    with pytest.raises(dr.InputError, match='not positive definite'):
        cartesian_dynamics(massless, np.zeros(2), np.zeros(2))


# -- point velocity and acceleration -------------------------------------------------------------
def _point_position(model, q, frame, point):
    R, p = dr.frame_pose(model, q, frame)
    return p + R @ np.asarray(point)


@pytest.mark.parametrize('name', ['panda', 'stanford_arm', 'saha_planar_3r'])
def test_point_velocity_and_acceleration_by_differences(name):
    """A point's velocity/acceleration equal the time derivatives of its position (1e-6)."""
    model = dr.load_urdf(URDF_DIR / f'{name}.urdf')
    rng = np.random.default_rng(11)
    point = rng.uniform(-0.2, 0.2, 3)
    for frame in (None, model.link_names[model.dof // 2]):
        q, qd, qdd = (rng.uniform(-1, 1, model.dof) for _ in range(3))

        def x(t):
            return _point_position(model, q + qd * t + 0.5 * qdd * t * t, frame, point)
        h = 1e-4
        v_fd = (x(h) - x(-h)) / (2 * h)
        a_fd = (x(h) - 2 * x(0.0) + x(-h)) / (h * h)
        v = point_velocity(model, q, qd, frame, point)
        a = point_acceleration(model, q, qd, qdd, frame, point)
        np.testing.assert_allclose(v, v_fd, atol=1e-6 * max(1.0, np.abs(v_fd).max()))
        np.testing.assert_allclose(a, a_fd, atol=1e-4 * max(1.0, np.abs(a_fd).max()))


def test_point_velocity_batch_and_bad_point():
    """Batches equal single calls; a malformed point raises InputError."""
    model = dr.load_urdf(URDF_DIR / 'ur5e.urdf')
    rng = np.random.default_rng(12)
    q, qd = rng.uniform(-1, 1, (2, 4, 6))
    v = point_velocity(model, q, qd, None, (0.1, 0.0, 0.05))
    assert v.shape == (4, 3)
    for k in range(4):
        np.testing.assert_allclose(v[k], point_velocity(model, q[k], qd[k], None,
                                                        (0.1, 0.0, 0.05)), rtol=1e-12)
    with pytest.raises(dr.InputError, match='point'):
        point_velocity(model, q[0], qd[0], None, (0.1, float('nan'), 0.0))
