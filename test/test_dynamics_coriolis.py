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
The two Coriolis matrices against their definitions, built without the library's recursions.

* Saha's convective inertia matrix against ``N^T (M N_dot + M_dot N)`` (Eq. 20) assembled as
  explicit 6n x n / 6n x 6n matrices from 4x4 forward kinematics, ``N_dot`` by central
  differences (1e-7).
* The relation between the two: for the body terms ``M_dot_i = [[w_i x I_i, 0], [0, 0]]`` of
  Eq. 8, ``C_Saha - C_Christoffel = sum_i (tr I_i / 2) J_wi^T (w_i x) J_wi`` (a totally
  antisymmetric tensor contracted with qd; zero with fewer than three revolute joints on a
  path). Derived by writing both as ``sum_i J_i^T (I_i J_dot_i + B_i J_i)`` at the mass centre
  and using ``w x I + I w x = ((tr I) 1 - I) w x`` for symmetric ``I``. Checked to 1e-10.
"""

import denoc_ros as dr
import numpy as np
import pytest
from robots_for_tests import assert_close, body_transforms, make_model, MODEL_CASES, \
    random_state, rng_for


def ancestors_or_self(parent, k):
    chain = [k]
    while parent[chain[-1]] >= 0:
        chain.append(int(parent[chain[-1]]))
    return chain


def natural_orthogonal_complement(model, q):
    """Return N (6n x n) with blocks N_kj = B_kj p_j at the mass centres, from 4x4 transforms."""
    n = model.dof
    T = body_transforms(model, q)
    R, origin = T[:, :3, :3], T[:, :3, 3]
    e = np.einsum('nij,nj->ni', R, model.axis)
    C = np.einsum('nij,nj->ni', R, model.com) + origin
    N = np.zeros((6 * n, n))
    for k in range(n):
        for j in ancestors_or_self(model.parent, k):
            if model.joint_type[j] == dr.PRISMATIC:
                N[6 * k + 3:6 * k + 6, j] = e[j]
            else:
                N[6 * k:6 * k + 3, j] = e[j]
                N[6 * k + 3:6 * k + 6, j] = np.cross(e[j], C[k] - origin[j])
    return N, R


def skew(w):
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


@pytest.mark.parametrize('case', list(MODEL_CASES))
def test_convective_inertia_matrix_is_saha_eq20_definition_1e_7(case):
    model = make_model(case)
    n, h = model.dof, 1e-6
    rng = rng_for('saha-C', case)
    for _ in range(3):
        q, qd = random_state(rng, n, scale=np.pi), random_state(rng, n, scale=2.0)
        N, R = natural_orthogonal_complement(model, q)
        N_dot = (natural_orthogonal_complement(model, q + h * qd)[0]
                 - natural_orthogonal_complement(model, q - h * qd)[0]) / (2 * h)
        t = N @ qd
        M = np.zeros((6 * n, 6 * n))
        M_dot = np.zeros((6 * n, 6 * n))
        for k in range(n):
            I_k = R[k] @ model.inertia[k] @ R[k].T
            M[6 * k:6 * k + 3, 6 * k:6 * k + 3] = I_k
            M[6 * k + 3:6 * k + 6, 6 * k + 3:6 * k + 6] = model.mass[k] * np.eye(3)
            M_dot[6 * k:6 * k + 3, 6 * k:6 * k + 3] = skew(t[6 * k:6 * k + 3]) @ I_k
        assert_close(dr.mass_matrix(model, q), N.T @ M @ N, 1e-10, 'I = N^T M N')
        assert_close(dr.convective_inertia_matrix(model, q, qd),
                     N.T @ (M @ N_dot + M_dot @ N), 1e-7, 'C = N^T (M N_dot + M_dot N)')


@pytest.mark.parametrize('case', list(MODEL_CASES))
def test_saha_minus_christoffel_is_the_trace_term_1e_10(case):
    model = make_model(case)
    n = model.dof
    rng = rng_for('saha-vs-christoffel', case)
    for _ in range(3):
        q, qd = random_state(rng, n, scale=np.pi), random_state(rng, n, scale=2.0)
        N, R = natural_orthogonal_complement(model, q)
        expected = np.zeros((n, n))
        for i in range(n):
            J_w = N[6 * i:6 * i + 3]
            half_trace = 0.5 * np.trace(model.inertia[i])
            expected += half_trace * J_w.T @ skew(J_w @ qd) @ J_w
        difference = (dr.convective_inertia_matrix(model, q, qd)
                      - dr.coriolis_matrix(model, q, qd))
        assert_close(difference, expected, 1e-10)


def test_the_two_matrices_differ_on_a_revolute_chain():
    """On a 7-joint revolute chain with skew axes they differ entry by entry (DESIGN.md)."""
    model = make_model('chain7_revolute')
    rng = rng_for('differ')
    q, qd = random_state(rng, 7, scale=np.pi), random_state(rng, 7, scale=2.0)
    C_saha = dr.convective_inertia_matrix(model, q, qd)
    C_chr = dr.coriolis_matrix(model, q, qd)
    assert np.abs(C_saha - C_chr).max() > 1e-3 * np.abs(C_chr).max()
    assert_close(C_saha @ qd, C_chr @ qd, 1e-12)
