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
Craig's configuration-space form ``tau = M qdd + B [qd qd] + Cc [qd^2] + G``.

Oracles: the RR closed form of seed 002; ``inverse_dynamics`` at random states of every bundled
robot and of random trees; the Christoffel symbols of the (independent) composite-body
``coriolis_matrix``, ``Gamma_ijk = C(q, e_k)_ij``; and Christoffel symbols from central finite
differences of ``mass_matrix``.
"""

from conftest import bundled_urdfs, URDF_DIR
import denoc_ros as dr
from denoc_ros.dynamics.configuration_space import configuration_space_matrices, \
    velocity_pairs, velocity_products
import numpy as np
import pytest
from robots_for_tests import assert_close, make_model, MODEL_CASES, random_state, rng_for

L1, L2, M1, M2 = 1.0, 0.8, 2.0, 1.5   # urdf/craig_rr.urdf


def test_velocity_products_order():
    model = make_model('chain7_mixed')
    qd = np.arange(1.0, 8.0)
    pairs, squares = velocity_products(model, qd)
    expected = [qd[a] * qd[b] for a in range(7) for b in range(a + 1, 7)]   # (1 2, 1 3, ...)
    assert np.array_equal(pairs, expected)
    assert pairs[:3].tolist() == [2.0, 3.0, 4.0] and pairs[-1] == 42.0
    assert np.array_equal(squares, qd ** 2)
    assert [tuple(x) for x in np.transpose(velocity_pairs(3))] == [(0, 1), (0, 2), (1, 2)]
    batch = np.ones((4, 2, 7))
    assert velocity_products(model, batch)[0].shape == (4, 2, 21)


def test_craig_rr_closed_form_1e_12():
    model = dr.load_urdf(URDF_DIR / 'craig_rr.urdf')
    q = random_state(rng_for('config space rr'), 2, size=(25,), scale=np.pi)
    B, Cc = configuration_space_matrices(model, q)
    assert B.shape == (25, 2, 1) and Cc.shape == (25, 2, 2)
    k = M2 * L1 * L2 * np.sin(q[:, 1])
    zero = np.zeros_like(k)
    assert_close(B, np.stack((-2 * k, zero), axis=-1)[..., None], 1e-12, 'B')
    assert_close(Cc, np.stack((np.stack((zero, -k), -1), np.stack((k, zero), -1)), axis=-2),
                 1e-12, 'Cc')


def _configuration_space_torque(model, q, qd, qdd):
    B, Cc = configuration_space_matrices(model, q)
    pairs, squares = velocity_products(model, qd)
    return (np.einsum('...ij,...j->...i', dr.mass_matrix(model, q), qdd)
            + np.einsum('...ij,...j->...i', B, pairs)
            + np.einsum('...ij,...j->...i', Cc, squares) + dr.gravity_torques(model, q))


@pytest.mark.parametrize('path', bundled_urdfs(), ids=lambda p: p.stem)
def test_equals_inverse_dynamics_bundled_1e_9(path):
    model = dr.load_urdf(path)
    n = model.dof
    rng = rng_for('config space bundled', path.stem)
    q, qd, qdd = (random_state(rng, n, size=(3, 5), scale=s) for s in (np.pi, 2.0, 3.0))
    B, Cc = configuration_space_matrices(model, q)
    assert B.shape == (3, 5, n, n * (n - 1) // 2) and Cc.shape == (3, 5, n, n)
    assert_close(_configuration_space_torque(model, q, qd, qdd),
                 dr.inverse_dynamics(model, q, qd, qdd), 1e-9, 'M qdd + B[qd qd] + Cc[qd^2] + G')


@pytest.mark.parametrize('case', list(MODEL_CASES))
def test_equals_inverse_dynamics_and_christoffel_random_trees_1e_9(case):
    model = make_model(case, seed=2)
    n = model.dof
    rng = rng_for('config space trees', case)
    q, qd, qdd = (random_state(rng, n, size=(6,), scale=s) for s in (np.pi, 2.0, 3.0))
    assert_close(_configuration_space_torque(model, q, qd, qdd),
                 dr.inverse_dynamics(model, q, qd, qdd), 1e-9, 'vs inverse_dynamics')
    # Gamma_ijk = C(q, e_k)_ij from the composite-body Christoffel matrix (another recursion):
    # B_i,jk = 2 Gamma_ijk and Cc_ij = Gamma_ijj.
    B, Cc = configuration_space_matrices(model, q)
    gamma = np.stack([dr.coriolis_matrix(model, q, np.broadcast_to(e, q.shape))
                      for e in np.eye(n)], axis=-1)                       # (..., i, j, k)
    j, k = velocity_pairs(n)
    assert_close(B, 2 * gamma[..., j, k], 1e-9, 'B vs 2 Gamma')
    assert_close(Cc, np.diagonal(gamma, axis1=-2, axis2=-1), 1e-9, 'Cc vs Gamma_ijj')


@pytest.mark.parametrize('name', ['panda', 'stanford_arm'])
def test_christoffel_symbols_by_finite_differences_1e_6(name):
    # Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i), central differences of M(q).
    model = dr.load_urdf(URDF_DIR / f'{name}.urdf')
    n = model.dof
    q = random_state(rng_for('config space fd', name), n, scale=1.5)
    h = 1e-6
    dM = np.stack([(dr.mass_matrix(model, q + h * e) - dr.mass_matrix(model, q - h * e)) / (2 * h)
                   for e in np.eye(n)], axis=-1)                         # dM_ij/dq_k
    gamma = 0.5 * (dM + np.swapaxes(dM, 1, 2) - np.transpose(dM, (2, 0, 1)))
    B, Cc = configuration_space_matrices(model, q)
    j, k = velocity_pairs(n)
    assert_close(B, 2 * gamma[:, j, k], 1e-6, 'B vs finite differences')
    assert_close(Cc, gamma[:, np.arange(n), np.arange(n)], 1e-6, 'Cc vs finite differences')


def test_single_joint_and_bad_input():
    model = make_model('single_prismatic')
    B, Cc = configuration_space_matrices(model, [0.3])
    assert B.shape == (1, 0) and Cc.shape == (1, 1)
    assert_close(Cc, np.zeros((1, 1)), 1e-12, 'a single joint has no velocity terms')
    craig = dr.load_urdf(URDF_DIR / 'craig_rr.urdf')
    with pytest.raises(dr.InputError, match='q'):
        configuration_space_matrices(craig, np.zeros(3))
    with pytest.raises(dr.InputError, match='q'):
        configuration_space_matrices(craig, [0.0, np.inf])
    with pytest.raises(dr.InputError, match='qd'):
        velocity_products(craig, [1.0])
