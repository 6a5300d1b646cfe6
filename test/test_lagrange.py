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
The Lagrange / inner-product reference (Feng 1986, seed 004) against DeNOC and a closed form.

* Feng Eq. 5, ``Trace(B J C^T) = sum_rs lambda_rs b_r . c_s``, against ``np.trace``;
* the pseudo-inertia matrix against its definition ``int [r; 1][r; 1]^T dm`` for point masses;
* the reference's own 4x4 forward kinematics against Pinocchio's joint placements;
* D_ijk against Christoffel symbols from central differences of D_ij;
* DeNOC's mass_matrix, coriolis_torques, gravity_torques, inverse_dynamics against the Lagrange
  D_ij, sum D_ijk qd_j qd_k, D_i and Feng Eq. 1 on every bundled robot (the Stanford arm has a
  prismatic joint) and on random trees with prismatic joints, 1e-9 relative;
* the Lagrange reference alone against Craig's RR closed form (urdf/craig_rr.urdf: l1 = 1.0,
  l2 = 0.8, m1 = 2.0, m2 = 1.5, q = theta, gravity along -y0), 1e-12 relative.
"""

from conftest import bundled_urdfs, require_oracle, URDF_DIR
import denoc_ros as dr
from denoc_ros.lagrange import inner_product_trace, lagrange_coriolis_coefficients, \
    lagrange_coriolis_torques, lagrange_gravity_torques, lagrange_inverse_dynamics, \
    lagrange_mass_matrix, link_transforms, pseudo_inertia
import numpy as np
import pytest
from robots_for_tests import assert_close, make_model, PinocchioMap, random_state, \
    rng_for

TOL = 1e-9   # relative to max(1, largest entry)


def test_inner_product_identity_equals_trace_1e_13():
    rng = rng_for('inner product')
    for shape in ((4, 4), (3, 4), (5, 2)):
        for _ in range(20):
            B, C = rng.normal(size=shape), rng.normal(size=shape)
            J = rng.normal(size=(shape[1], shape[1]))       # need not be symmetric
            expected = np.trace(B @ J @ C.T)
            assert abs(inner_product_trace(B, J, C) - expected) <= 1e-13 * max(1, abs(expected))
    with pytest.raises(dr.InputError, match='inner_product_trace'):
        inner_product_trace(np.ones((4, 4)), np.ones((3, 3)), np.ones((4, 4)))


def test_pseudo_inertia_of_point_masses_is_sum_of_m_r_r_transpose():
    """A body of three point masses (inertia about their centre) gives sum m [r;1][r;1]^T."""
    rng = rng_for('pseudo inertia')
    masses, points = rng.uniform(0.5, 2.0, 3), rng.normal(size=(3, 3))
    m = masses.sum()
    c = masses @ points / m
    rel = points - c
    inertia = sum(mk * (rk @ rk * np.eye(3) - np.outer(rk, rk)) for mk, rk in zip(masses, rel))
    model = dr.RobotModel(joint_names=('j',), link_names=('l',), parent=[-1], joint_type=[0],
                          axis=[[0.0, 0.0, 1.0]], joint_rotation=[np.eye(3)],
                          joint_translation=[[0.0, 0.0, 0.0]], mass=[m], com=[c],
                          inertia=[inertia])
    homogeneous = np.hstack((points, np.ones((3, 1))))
    expected = np.einsum('k,ki,kj->ij', masses, homogeneous, homogeneous)
    assert_close(pseudo_inertia(model, 0), expected, 1e-13)


def random_q(model, rng):
    q = random_state(rng, model.dof, scale=np.pi)
    prismatic = model.joint_type == dr.PRISMATIC
    q[prismatic] = rng.uniform(0.3, 1.3, prismatic.sum())
    return q


@pytest.mark.parametrize('path', bundled_urdfs(), ids=lambda p: p.name)
def test_link_transforms_match_pinocchio_placements_1e_12(path):
    """The reference's own forward kinematics against Pinocchio's joint placements oMi."""
    pin = require_oracle('pinocchio')
    model = dr.load_urdf(str(path))
    pmodel = pin.buildModelFromUrdf(str(path))
    data = pmodel.createData()
    mp = PinocchioMap(pmodel, model.joint_names)
    rng = rng_for('link transforms', path.name)
    for _ in range(3):
        q = random_q(model, rng)
        pin.forwardKinematics(pmodel, data, mp.q(q))
        T = link_transforms(model, q)
        for p, jid in enumerate(mp.joint_ids):
            assert_close(T[p], data.oMi[jid].homogeneous, 1e-12, model.link_names[p])


MODELS = [dr.load_urdf(str(p)) for p in bundled_urdfs()] + \
    [make_model(case) for case in ('chain7_mixed', 'branched8', 'two_roots_tree6')]


@pytest.mark.parametrize('model', MODELS, ids=lambda m: m.name)
def test_denoc_agrees_with_the_lagrange_reference_1e_9(model):
    n = model.dof
    rng = rng_for('lagrange', model.name)
    for _ in range(3):
        q, qd, qdd = random_q(model, rng), random_state(rng, n, scale=2.0), \
            random_state(rng, n, scale=3.0)
        M = lagrange_mass_matrix(model, q)
        assert_close(dr.mass_matrix(model, q), M, TOL, 'mass matrix')
        assert_close(M, M.T, 0.0, 'symmetric')
        c = lagrange_coriolis_torques(model, q, qd)
        assert_close(dr.coriolis_torques(model, q, qd), c, TOL, 'coriolis torques')
        g = lagrange_gravity_torques(model, q)
        assert_close(dr.gravity_torques(model, q), g, TOL, 'gravity torques')
        tau = lagrange_inverse_dynamics(model, q, qd, qdd)
        assert_close(tau, M @ qdd + c + g, 1e-12, 'Feng Eq. 1')
        assert_close(dr.inverse_dynamics(model, q, qd, qdd), tau, TOL, 'inverse dynamics')


def test_coriolis_coefficients_are_christoffel_symbols_of_the_mass_matrix():
    """D_ijk = dM_ij/dq_k - 1/2 dM_jk/dq_i (symmetrised in j, k) by central differences."""
    model = dr.load_urdf(str(URDF_DIR / 'stanford_arm.urdf'))
    rng = rng_for('christoffel')
    q, n, h = random_q(model, rng), model.dof, 1e-6
    dM = np.empty((n, n, n))       # dM[:, :, k] = dM/dq_k
    for k in range(n):
        step = h * np.eye(n)[k]
        dM[:, :, k] = (lagrange_mass_matrix(model, q + step)
                       - lagrange_mass_matrix(model, q - step)) / (2 * h)
    christoffel = 0.5 * (dM + np.transpose(dM, (0, 2, 1)) - np.transpose(dM, (2, 0, 1)))
    D = lagrange_coriolis_coefficients(model, q)
    assert_close(D, np.swapaxes(D, 1, 2), 0.0, 'D_ijk = D_ikj')
    assert_close(D, christoffel, 1e-7, 'Christoffel symbols')


def craig_closed_form(q, qd, l1=1.0, l2=0.8, m1=2.0, m2=1.5, g=9.81):
    """Return Craig's M, V, G of the RR arm with point masses (seed 002, ch. 6)."""
    c1, c2, s2, c12 = np.cos(q[0]), np.cos(q[1]), np.sin(q[1]), np.cos(q[0] + q[1])
    M = np.array([[l2**2 * m2 + 2 * l1 * l2 * m2 * c2 + l1**2 * (m1 + m2),
                   l2**2 * m2 + l1 * l2 * m2 * c2],
                  [l2**2 * m2 + l1 * l2 * m2 * c2, l2**2 * m2]])
    V = np.array([-m2 * l1 * l2 * s2 * qd[1]**2 - 2 * m2 * l1 * l2 * s2 * qd[0] * qd[1],
                  m2 * l1 * l2 * s2 * qd[0]**2])
    G = np.array([m2 * l2 * g * c12 + (m1 + m2) * l1 * g * c1, m2 * l2 * g * c12])
    return M, V, G


def test_lagrange_reference_matches_craig_rr_closed_form_1e_12():
    model = dr.load_urdf(str(URDF_DIR / 'craig_rr.urdf'))
    rng = rng_for('craig lagrange')
    for _ in range(5):
        q, qd, qdd = (random_state(rng, 2, scale=s) for s in (np.pi, 2.0, 3.0))
        M, V, G = craig_closed_form(q, qd)
        assert_close(lagrange_mass_matrix(model, q), M, 1e-12, 'M')
        assert_close(lagrange_coriolis_torques(model, q, qd), V, 1e-12, 'V')
        assert_close(lagrange_gravity_torques(model, q), G, 1e-12, 'G')
        assert_close(lagrange_inverse_dynamics(model, q, qd, qdd), M @ qdd + V + G, 1e-12,
                     'tau')


def test_lagrange_reference_rejects_batches_and_bad_lengths():
    model = dr.load_urdf(str(URDF_DIR / 'craig_rr.urdf'))
    with pytest.raises(dr.InputError, match='one state'):
        lagrange_mass_matrix(model, np.zeros((3, 2)))
    with pytest.raises(dr.InputError, match='qd'):
        lagrange_coriolis_torques(model, np.zeros(2), np.zeros(3))
    with pytest.raises(dr.InputError, match='model'):
        lagrange_gravity_torques('craig_rr', np.zeros(2))
    floating = dr.load_urdf(str(URDF_DIR / 'craig_rr.urdf'), floating_base=True)
    q = np.r_[np.zeros(6), 1.0, np.zeros(2)]
    with pytest.raises(dr.InputError, match='floating base'):
        lagrange_mass_matrix(floating, q)
    with pytest.raises(dr.InputError, match='floating base'):
        lagrange_coriolis_torques(floating, q, np.zeros(8))
