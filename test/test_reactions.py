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
Joint reaction wrenches (Craig's f_i, n_i; the constraint wrenches of seed 001).

Oracles: a static horizontal arm by hand (statics: weight and moment of the masses beyond each
joint); the projection on the joint axis equals ``inverse_dynamics``; Pinocchio's ``data.f``
after ``rnea`` (the spatial force transmitted through each joint, joint frame, [linear;
angular]), on the bundled URDFs and on random trees built with Pinocchio's API, to 1e-9.
"""

from conftest import bundled_urdfs, require_oracle, URDF_DIR
import denoc_ros as dr
from denoc_ros.dynamics.reactions import joint_reaction_wrenches
import numpy as np
import pytest
from robots_for_tests import assert_close, make_model, MODEL_CASES, PinocchioMap, \
    random_state, rng_for, to_pinocchio

TOL = 1e-9
G = 9.81
L1, L2, M1, M2 = 1.0, 0.8, 2.0, 1.5   # urdf/craig_rr.urdf


def test_static_horizontal_arm_by_hand_1e_12():
    # Craig's RR arm at q = 0: both links along +x of base_link, point masses at x = l1 and
    # x = l1 + l2, gravity -z. Joint axes are -y of base_link.
    model = dr.load_urdf(URDF_DIR / 'craig_rr.urdf')
    zero = np.zeros(2)
    w = joint_reaction_wrenches(model, zero, zero, zero, frame='base')
    y, z = np.array([0.0, 1.0, 0.0]), np.array([0.0, 0.0, 1.0])
    # Joint 1 holds everything: the total weight upward, and the moment about its origin
    # sum_k r_k x (m_k g z) = -(m1 l1 + m2 (l1 + l2)) g y.
    moment1 = (M1 * L1 + M2 * (L1 + L2)) * G
    assert_close(w[0, :3], (M1 + M2) * G * z, 1e-12, 'joint 1 force')
    assert_close(w[0, 3:], -moment1 * y, 1e-12, 'joint 1 moment')
    # Joint 2 (at x = l1) holds the second mass only.
    assert_close(w[1, :3], M2 * G * z, 1e-12, 'joint 2 force')
    assert_close(w[1, 3:], -M2 * L2 * G * y, 1e-12, 'joint 2 moment')
    # In the joint frames (x_i = x, y_i = z, z_i = -y of base_link) the weight is along +y_i
    # and the moment along the joint axis z_i: exactly the gravity torque.
    wj = joint_reaction_wrenches(model, zero, zero, zero)
    expected = np.array([[0.0, (M1 + M2) * G, 0.0, 0.0, 0.0, moment1],
                         [0.0, M2 * G, 0.0, 0.0, 0.0, M2 * L2 * G]])
    assert_close(wj, expected, 1e-12, 'joint frame')
    assert_close(wj[:, 5], dr.gravity_torques(model, zero), 1e-12, 'moment . axis = g(q)')


def test_static_arm_with_held_mass_and_external_force_1e_12():
    # Holding a 3 kg mass at the tip is the same as a downward external force of 3 g at the tip.
    model = dr.load_urdf(URDF_DIR / 'craig_rr.urdf')
    zero = np.zeros(2)
    m_h = 3.0
    f_ext = np.zeros((2, 6))
    # f_ext is in body 2's frame (x along the link, y up, z = -y of base_link), torque about
    # its origin: weight (0, -m g, 0) at (l2, 0, 0) gives torque l2 x (-m g) along z.
    f_ext[1] = [0.0, -m_h * G, 0.0, 0.0, 0.0, -L2 * m_h * G]
    w = joint_reaction_wrenches(model, zero, zero, zero, f_ext=f_ext, frame='base')
    z, y = np.array([0.0, 0.0, 1.0]), np.array([0.0, 1.0, 0.0])
    assert_close(w[0, :3], (M1 + M2 + m_h) * G * z, 1e-12, 'total weight')
    assert_close(w[0, 3:], -(M1 * L1 + (M2 + m_h) * (L1 + L2)) * G * y, 1e-12, 'sum m g x')
    assert_close(w[1, 3:], -(M2 + m_h) * L2 * G * y, 1e-12, 'joint 2 moment')


def _axis_projection(model, wrench):
    """Return the component of each joint's reaction on its free direction (joint frame)."""
    prismatic = model.joint_type == dr.PRISMATIC
    force = np.einsum('...ni,ni->...n', wrench[..., :3], model.axis)
    moment = np.einsum('...ni,ni->...n', wrench[..., 3:], model.axis)
    return np.where(prismatic, force, moment)


@pytest.mark.parametrize('path', bundled_urdfs(), ids=lambda p: p.stem)
def test_axis_projection_equals_inverse_dynamics_bundled_1e_9(path):
    model = dr.load_urdf(path)
    n = model.dof
    rng = rng_for('reaction projection', path.stem)
    q, qd, qdd = (random_state(rng, n, size=(3, 4), scale=s) for s in (np.pi, 2.0, 3.0))
    f_ext = rng.normal(size=(3, 4, n, 6))
    w = joint_reaction_wrenches(model, q, qd, qdd, f_ext)
    assert w.shape == (3, 4, n, 6)
    assert_close(_axis_projection(model, w), dr.inverse_dynamics(model, q, qd, qdd, f_ext), TOL,
                 'axis projection vs inverse_dynamics')
    # The base-frame result is the joint-frame one turned by each body's orientation.
    wb = joint_reaction_wrenches(model, q, qd, qdd, f_ext, frame='base')
    assert_close(np.linalg.norm(wb[..., :3], axis=-1), np.linalg.norm(w[..., :3], axis=-1), TOL,
                 '|force| frame independent')
    assert_close(np.linalg.norm(wb[..., 3:], axis=-1), np.linalg.norm(w[..., 3:], axis=-1), TOL,
                 '|moment| frame independent')


def compare_with_pinocchio(model, pmodel, seed, count=4):
    """Compare both frames with Pinocchio's ``data.f`` at random states (joints by name)."""
    pin = require_oracle('pinocchio')
    data = pmodel.createData()
    mp = PinocchioMap(pmodel, model.joint_names)
    n = model.dof
    rng = rng_for('reactions pinocchio', seed)
    for k in range(count):
        q, qd, qdd = (random_state(rng, n, scale=s) for s in (np.pi, 2.0, 3.0))
        f_ext = rng.normal(size=(n, 6)) if k % 2 else None
        args = (mp.forces(f_ext),) if f_ext is not None else ()
        pin.rnea(pmodel, data, mp.q(q), mp.v(qd), mp.v(qdd), *args)
        expected = np.array([np.concatenate((data.f[j].linear, data.f[j].angular))
                             for j in mp.joint_ids])
        assert_close(joint_reaction_wrenches(model, q, qd, qdd, f_ext), expected, TOL,
                     f'joint frame vs data.f (fext: {f_ext is not None})')
        pin.forwardKinematics(pmodel, data, mp.q(q))
        rotations = [data.oMi[j].rotation for j in mp.joint_ids]
        in_base = np.array([np.concatenate((R @ f[:3], R @ f[3:]))
                            for R, f in zip(rotations, expected)])
        assert_close(joint_reaction_wrenches(model, q, qd, qdd, f_ext, frame='base'), in_base,
                     TOL, 'base frame vs oMi.rotation data.f')


@pytest.mark.parametrize('path', bundled_urdfs(), ids=lambda p: p.stem)
def test_bundled_robots_vs_pinocchio_1e_9(path):
    pin = require_oracle('pinocchio')
    compare_with_pinocchio(dr.load_urdf(path), pin.buildModelFromUrdf(str(path)), path.stem)


@pytest.mark.parametrize('case', list(MODEL_CASES))
def test_random_trees_vs_pinocchio_1e_9(case):
    require_oracle('pinocchio')
    model = make_model(case, seed=1)
    compare_with_pinocchio(model, to_pinocchio(model), case)


def test_bad_input_raises_input_error():
    model = dr.load_urdf(URDF_DIR / 'craig_rr.urdf')
    zero = np.zeros(2)
    with pytest.raises(dr.InputError, match='frame'):
        joint_reaction_wrenches(model, zero, zero, zero, frame='world')
    with pytest.raises(dr.InputError, match='qdd'):
        joint_reaction_wrenches(model, zero, zero, np.zeros(3))
    with pytest.raises(dr.InputError, match='f_ext'):
        joint_reaction_wrenches(model, zero, zero, zero, f_ext=np.zeros((2, 3)))
