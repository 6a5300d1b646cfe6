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
The joint-space mass matrix (Saha's generalized inertia matrix, GIM) by composite bodies.

``I = N^T M N = N_d^T M~ N_d`` (Eq. 20-22): the composite-body mass matrices ``M~_i`` come from
the backward recursion of Eq. 23b (for a tree, a sum over the children), and the entries are
``i_ij = i_ji = p_i^T M~_i B_ij p_j`` (Eq. 24) for ``j`` an ancestor of ``i`` or ``i`` itself;
entries of two joints on different branches are zero. O(n) for ``M~_i``, O(n d) entries for a
tree of depth d.

:func:`mass_matrix` runs the compiled ``mass_matrix_state`` of :mod:`._kernels` (the same
recursion in scalar code, with ``M~_i`` kept as its 10 independent numbers); the NumPy functions
below state it with full 6x6 matrices, vectorised over a batch.
"""

import numpy as np

from . import _kernels as K
from ._state import finish, kernel_arrays, prepare
from .kinematics import (ancestors, mass_matrices, propagate_wrench,
                         twist_propagation_matrix)

_nd, _F8, _VEC = np.ndarray, K.FLOAT64, K.VECTOR_STRIDES
_mass_matrix_one = K.single_state(K.mass_matrix_one, globals(), '_mass_matrix_one', 'vm')


def composite_mass_matrices(model, kin):
    """Return ``M~_i = M_i + sum_children B_ci^T M~_c B_ci`` (Saha Eq. 23b), (B, n, 6, 6)."""
    M_tilde = mass_matrices(model, kin)
    for i in range(model.dof - 1, -1, -1):
        k = model.parent[i]
        if k >= 0:
            B_ik = twist_propagation_matrix(kin.C[:, k] - kin.C[:, i])
            M_tilde[:, k] += np.swapaxes(B_ik, -1, -2) @ M_tilde[:, i] @ B_ik
    return M_tilde


def generalized_inertia_matrix(model, kin, M_tilde):
    """Return the GIM with entries ``i_ij = i_ji = p_i^T M~_i B_ij p_j`` (Saha Eq. 24)."""
    batch, n = kin.C.shape[:2]
    gim = np.zeros((batch, n, n))
    for i, js in enumerate(ancestors(model)):
        psi_i = np.einsum('bkl,bl->bk', M_tilde[:, i], kin.p[:, i])      # M~_i p_i at C_i
        c_ij = kin.C[:, js] - kin.C[:, i, None]
        at_C_j = propagate_wrench(c_ij, psi_i[:, None])                   # B_ij^T M~_i p_i
        row = np.einsum('bjk,bjk->bj', at_C_j, kin.p[:, js])
        gim[:, i, js] = row
        gim[:, js, i] = row
    return gim


def mass_matrix(model, q):
    """Return the symmetric positive definite mass matrix ``M(q)``, (..., n, n) (Saha Eq. 24)."""
    if type(q) is _nd and q.dtype is _F8 and q.strides == _VEC:
        try:  # one state: straight to the kernel (see inverse_dynamics)
            pk = model.packed
            out = np.empty(pk.square)
            status = _mass_matrix_one(pk.ints, pk.reals, q, out)
        except Exception:
            status = K.BAD_INPUT
        if not status:
            return out
    batch, (q,), _ = prepare(model, (('q', q),))
    (q,), _ = kernel_arrays(model, (q,))
    pk = model.packed
    M = np.empty(q.shape + (pk.n,))
    K.mass_matrix_batch(pk.ints, pk.reals, q, M)
    return finish(batch, M, 'mass_matrix')
