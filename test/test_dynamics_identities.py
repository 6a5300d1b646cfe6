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
Identities of the equations of motion at random states, on random trees and bundled URDFs.

Each identity ties two different algorithms together (composite-body M vs the Newton-Euler
recursion, O(n) forward dynamics vs Cholesky, the Christoffel recursion vs finite differences of
M, f_ext vs virtual work computed from independent 4x4 forward kinematics).
"""

from conftest import bundled_urdfs
import denoc_ros as dr
import numpy as np
import pytest
from robots_for_tests import assert_close, body_transforms, make_model, MODEL_CASES, \
    random_state, rng_for


ALGEBRAIC = 1e-10      # relative tolerance of identities exact in exact arithmetic
DIFFERENCED = 1e-6     # relative tolerance of identities checked by central differences
CASES = list(MODEL_CASES) + [f'urdf/{p.name}' for p in bundled_urdfs()]


def load_case(case):
    """Return the model of a test case: a random tree, or a bundled URDF."""
    if not case.startswith('urdf/'):
        return make_model(case)
    path = [p for p in bundled_urdfs() if p.name == case[5:]][0]
    return dr.load_urdf(str(path))


@pytest.fixture(params=CASES)
def case(request):
    return request.param, load_case(request.param)


def states(case_name, n, count=3):
    rng = rng_for('identities', case_name)
    for _ in range(count):
        yield (random_state(rng, n, scale=np.pi), random_state(rng, n, scale=2.0),
               random_state(rng, n, scale=3.0))


def test_mass_matrix_symmetric_positive_definite(case):
    name, model = case
    for q, _, _ in states(name, model.dof):
        M = dr.mass_matrix(model, q)
        assert_close(M, M.T, ALGEBRAIC, 'symmetry')
        assert np.linalg.eigvalsh(M).min() > 0


def test_mass_matrix_columns_are_inverse_dynamics_1e_10(case):
    """M e_k = ID(q, 0, e_k) - g(q): composite bodies (Eq. 24) vs Newton-Euler (Eq. 30)."""
    name, model = case
    n = model.dof
    for q, _, _ in states(name, n):
        M = dr.mass_matrix(model, q)
        g = dr.gravity_torques(model, q)
        columns = dr.inverse_dynamics(model, q, np.zeros(n), np.eye(n)) - g
        assert_close(columns.T, M, ALGEBRAIC)


def test_velocity_terms_1e_10(case):
    """C qd + g = ID(q, qd, 0) for both Coriolis matrices and for coriolis_torques."""
    name, model = case
    n = model.dof
    for q, qd, _ in states(name, n):
        bias = dr.inverse_dynamics(model, q, qd, np.zeros(n))
        g = dr.gravity_torques(model, q)
        assert_close(dr.coriolis_matrix(model, q, qd) @ qd + g, bias, ALGEBRAIC, 'Christoffel')
        assert_close(dr.convective_inertia_matrix(model, q, qd) @ qd + g, bias, ALGEBRAIC,
                     'Saha')
        assert_close(dr.coriolis_torques(model, q, qd) + g, bias, ALGEBRAIC, 'C qd')


def test_gravity_torques_are_inverse_dynamics_at_rest_1e_10(case):
    name, model = case
    n = model.dof
    for q, _, _ in states(name, n):
        assert_close(dr.gravity_torques(model, q),
                     dr.inverse_dynamics(model, q, np.zeros(n), np.zeros(n)), ALGEBRAIC)


def random_wrenches(case_name, n):
    return rng_for('wrench', case_name).normal(size=(n, 6))


@pytest.mark.parametrize('with_f_ext', [False, True])
def test_inverse_of_forward_dynamics_1e_10(case, with_f_ext):
    """ID(q, qd, FD(q, qd, tau)) = tau, with and without external wrenches."""
    name, model = case
    n = model.dof
    f_ext = random_wrenches(name, n) if with_f_ext else None
    for q, qd, tau in states(name, n):
        qdd = dr.forward_dynamics(model, q, qd, tau, f_ext)
        assert_close(dr.inverse_dynamics(model, q, qd, qdd, f_ext), tau, ALGEBRAIC)


@pytest.mark.parametrize('with_f_ext', [False, True])
def test_recursive_forward_dynamics_equals_cholesky_1e_10(case, with_f_ext):
    name, model = case
    n = model.dof
    f_ext = random_wrenches(name, n) if with_f_ext else None
    for q, qd, tau in states(name, n):
        assert_close(dr.forward_dynamics(model, q, qd, tau, f_ext),
                     dr.forward_dynamics_cholesky(model, q, qd, tau, f_ext), ALGEBRAIC)


def mass_matrix_rate(model, q, qd, h=1e-6):
    """Return dM/dt along qd by a central difference."""
    return (dr.mass_matrix(model, q + h * qd) - dr.mass_matrix(model, q - h * qd)) / (2 * h)


@pytest.mark.parametrize('which', ['coriolis_matrix', 'convective_inertia_matrix'])
def test_mass_matrix_rate_minus_twice_coriolis_is_skew_1e_6(case, which):
    name, model = case
    for q, qd, _ in states(name, model.dof):
        C = getattr(dr, which)(model, q, qd)
        N = mass_matrix_rate(model, q, qd) - 2 * C
        assert_close(N + N.T, np.zeros_like(N), DIFFERENCED, f'{which}: N + N^T')


def christoffel_from_differences(model, q, qd, h=1e-6):
    """Return sum_k Gamma_ijk qd_k with Gamma from central differences of M."""
    n = model.dof
    dM = np.empty((n, n, n))             # dM[k] = dM/dq_k
    for k in range(n):
        step = np.zeros(n)
        step[k] = h
        dM[k] = (dr.mass_matrix(model, q + step) - dr.mass_matrix(model, q - step)) / (2 * h)
    # Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)
    gamma = 0.5 * (np.einsum('kij->ijk', dM) + np.einsum('jik->ijk', dM)
                   - np.einsum('ijk->ijk', dM))
    return gamma @ qd


def test_coriolis_matrix_equals_christoffel_symbols_of_mass_matrix_1e_6(case):
    name, model = case
    for q, qd, _ in states(name, model.dof):
        assert_close(dr.coriolis_matrix(model, q, qd),
                     christoffel_from_differences(model, q, qd), DIFFERENCED)


def body_jacobian_transpose_times(model, q, f_ext, h=1e-6):
    """
    Return sum_i J_i^T f_i by virtual work, from 4x4 forward kinematics differences.

    f_i = [force; torque] in body i's frame, torque about the frame origin O_i: the generalized
    force of joint k is force . dO_i/dq_k + torque . (angular velocity per unit qd_k).
    """
    n = model.dof
    T = body_transforms(model, q)
    out = np.zeros(n)
    for k in range(n):
        step = np.zeros(n)
        step[k] = h
        Tp, Tm = body_transforms(model, q + step), body_transforms(model, q - step)
        for i in range(n):
            R = T[i, :3, :3]
            dO = (Tp[i, :3, 3] - Tm[i, :3, 3]) / (2 * h)
            W = (Tp[i, :3, :3] - Tm[i, :3, :3]) / (2 * h) @ R.T    # skew(angular rate)
            omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
            out[k] += (R @ f_ext[i, :3]) @ dO + (R @ f_ext[i, 3:]) @ omega
    return out


def test_external_wrenches_enter_as_jacobian_transpose_1e_6(case):
    """ID(q, qd, qdd, f) = ID(q, qd, qdd) - sum_i J_i^T f_i (Pinocchio's fext convention)."""
    name, model = case
    f_ext = random_wrenches(name, model.dof)
    for q, qd, qdd in states(name, model.dof, count=2):
        difference = (dr.inverse_dynamics(model, q, qd, qdd, f_ext)
                      - dr.inverse_dynamics(model, q, qd, qdd))
        assert_close(difference, -body_jacobian_transpose_times(model, q, f_ext), DIFFERENCED)
