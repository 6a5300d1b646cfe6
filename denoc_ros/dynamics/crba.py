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
``i_ab = i_ba = p_a^T M~_i B_ij p_b`` (Eq. 24) for every velocity ``a`` of body ``i`` and ``b``
of body ``j``, ``j`` an ancestor of ``i`` or ``i`` itself; entries of two bodies on different
branches are zero. O(n) for ``M~_i``, O(n d) entries for a tree of depth d. ``M~_i`` is kept as
its 10 independent numbers: ``M~_i = [[I~, s x 1], [(s x 1)^T, m 1]]`` about ``C_i`` (its lower
right block stays a multiple of 1 and its off-diagonal block skew under Eq. 23b).
"""

import numpy as np

from . import _compile as K
from ._compile import all_finite, cross, jit
from ._packed import MASS, NV, PARENT, V0
from ._state import finish, kernel_arrays, prepare
from .kinematics import _C, _I, configuration_ok, configuration_size, forward_kinematics, world_inertias, \
    KIN_WIDTH

__all__ = ['mass_matrix']

# Columns of the composite buffer ``M_tilde`` (nb, MT_WIDTH): I~ (xx, xy, xz, yy, yz, zz), s, m.
_IXX, _IXY, _IXZ, _IYY, _IYZ, _IZZ, _SX, _SY, _SZ, _MASS = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
MT_WIDTH = 10


@jit
def composite_mass_matrices(ints, reals, kin, M_tilde):
    """Fill ``M~_i = M_i + sum_children B_ci^T M~_c B_ci`` (Saha Eq. 23b), 10 numbers each."""
    nb = ints.shape[0]
    for i in range(nb):
        # M_i = [[I_i, 0], [0, m_i 1]] (Eq. 2).
        M_tilde[i, _IXX], M_tilde[i, _IXY], M_tilde[i, _IXZ] = \
            kin[i, _I], kin[i, _I + 1], kin[i, _I + 2]
        M_tilde[i, _IYY], M_tilde[i, _IYZ], M_tilde[i, _IZZ] = \
            kin[i, _I + 4], kin[i, _I + 5], kin[i, _I + 8]
        M_tilde[i, _SX], M_tilde[i, _SY], M_tilde[i, _SZ] = 0.0, 0.0, 0.0
        M_tilde[i, _MASS] = reals[i, MASS]
    for i in range(nb - 1, -1, -1):
        k = ints[i, PARENT]
        if k >= 0:
            # B^T M~ B with B = [[1, 0], [c x 1, 1]], c = C_k - C_i (so c x 1 = X, X^T = -X):
            # s' = s - m c, I~' = I~ + c s^T + s c^T - 2 (s.c) 1 + m (|c|^2 1 - c c^T).
            c0, c1, c2 = kin[k, _C] - kin[i, _C], kin[k, _C + 1] - kin[i, _C + 1], \
                kin[k, _C + 2] - kin[i, _C + 2]
            s0, s1, s2, m = M_tilde[i, _SX], M_tilde[i, _SY], M_tilde[i, _SZ], M_tilde[i, _MASS]
            diag = m * (c0 * c0 + c1 * c1 + c2 * c2) - 2.0 * (s0 * c0 + s1 * c1 + s2 * c2)
            M_tilde[k, _IXX] += M_tilde[i, _IXX] + 2.0 * c0 * s0 + diag - m * c0 * c0
            M_tilde[k, _IXY] += M_tilde[i, _IXY] + c0 * s1 + s0 * c1 - m * c0 * c1
            M_tilde[k, _IXZ] += M_tilde[i, _IXZ] + c0 * s2 + s0 * c2 - m * c0 * c2
            M_tilde[k, _IYY] += M_tilde[i, _IYY] + 2.0 * c1 * s1 + diag - m * c1 * c1
            M_tilde[k, _IYZ] += M_tilde[i, _IYZ] + c1 * s2 + s1 * c2 - m * c1 * c2
            M_tilde[k, _IZZ] += M_tilde[i, _IZZ] + 2.0 * c2 * s2 + diag - m * c2 * c2
            M_tilde[k, _SX] += s0 - m * c0
            M_tilde[k, _SY] += s1 - m * c1
            M_tilde[k, _SZ] += s2 - m * c2
            M_tilde[k, _MASS] += m


@jit
def composite_times(M_tilde, i, p):
    """Return ``M~_i p`` (6-tuple) for a 6-vector ``p = [a; b]``: [I~ a + s x b; a x s + m b]."""
    a0, a1, a2, b0, b1, b2 = p[0], p[1], p[2], p[3], p[4], p[5]
    s0, s1, s2, m = M_tilde[i, _SX], M_tilde[i, _SY], M_tilde[i, _SZ], M_tilde[i, _MASS]
    x0, x1, x2 = cross(s0, s1, s2, b0, b1, b2)
    y0, y1, y2 = cross(a0, a1, a2, s0, s1, s2)
    return (M_tilde[i, _IXX] * a0 + M_tilde[i, _IXY] * a1 + M_tilde[i, _IXZ] * a2 + x0,
            M_tilde[i, _IXY] * a0 + M_tilde[i, _IYY] * a1 + M_tilde[i, _IYZ] * a2 + x1,
            M_tilde[i, _IXZ] * a0 + M_tilde[i, _IYZ] * a1 + M_tilde[i, _IZZ] * a2 + x2,
            y0 + m * b0, y1 + m * b1, y2 + m * b2)


@jit
def expand_composite(M_tilde, i, out):
    """Write the 6x6 ``M~_i`` from its 10 numbers into ``out``."""
    out[0, 0], out[0, 1], out[0, 2] = M_tilde[i, _IXX], M_tilde[i, _IXY], M_tilde[i, _IXZ]
    out[1, 0], out[1, 1], out[1, 2] = M_tilde[i, _IXY], M_tilde[i, _IYY], M_tilde[i, _IYZ]
    out[2, 0], out[2, 1], out[2, 2] = M_tilde[i, _IXZ], M_tilde[i, _IYZ], M_tilde[i, _IZZ]
    s0, s1, s2, m = M_tilde[i, _SX], M_tilde[i, _SY], M_tilde[i, _SZ], M_tilde[i, _MASS]
    # s x 1 and its transpose.
    out[0, 3], out[0, 4], out[0, 5] = 0.0, -s2, s1
    out[1, 3], out[1, 4], out[1, 5] = s2, 0.0, -s0
    out[2, 3], out[2, 4], out[2, 5] = -s1, s0, 0.0
    for r in range(3):
        for col in range(3):
            out[3 + r, col] = out[col, 3 + r]
            out[3 + r, 3 + col] = m if r == col else 0.0


@jit
def generalized_inertia_matrix(ints, kin, P, M_tilde, out):
    """Write the GIM ``i_ab = i_ba = p_a^T M~_i B_ij p_b`` into ``out`` (Saha Eq. 24)."""
    nb, nv = ints.shape[0], out.shape[0]
    for a in range(nv):
        for b in range(nv):
            out[a, b] = 0.0
    for i in range(nb):
        for a in range(ints[i, V0], ints[i, V0] + ints[i, NV]):
            # psi_a = M~_i p_a, a wrench at C_i; B_ij^T moves it to C_j.
            s0, s1, s2, f0, f1, f2 = composite_times(M_tilde, i, P[a])
            # Columns of body i itself (b <= a), then of its ancestors.
            for b in range(ints[i, V0], a + 1):
                value = (P[b, 0] * s0 + P[b, 1] * s1 + P[b, 2] * s2
                         + P[b, 3] * f0 + P[b, 4] * f1 + P[b, 5] * f2)
                out[a, b] = value
                out[b, a] = value
            j = ints[i, PARENT]
            while j >= 0:
                x0, x1, x2 = cross(kin[j, _C] - kin[i, _C], kin[j, _C + 1] - kin[i, _C + 1],
                                   kin[j, _C + 2] - kin[i, _C + 2], f0, f1, f2)
                n0, n1, n2 = s0 - x0, s1 - x1, s2 - x2
                for b in range(ints[j, V0], ints[j, V0] + ints[j, NV]):
                    value = (P[b, 0] * n0 + P[b, 1] * n1 + P[b, 2] * n2
                             + P[b, 3] * f0 + P[b, 4] * f1 + P[b, 5] * f2)
                    out[a, b] = value
                    out[b, a] = value
                j = ints[j, PARENT]


@jit
def mass_matrix_state(ints, reals, q, kin, P, M_tilde, out):
    """Write ``M(q)`` (Saha Eq. 24) of one state into ``out`` (nv, nv)."""
    forward_kinematics(ints, reals, q, kin, P)
    world_inertias(ints, reals, kin)
    composite_mass_matrices(ints, reals, kin, M_tilde)
    generalized_inertia_matrix(ints, kin, P, M_tilde, out)


@jit
def mass_matrix_one(ints, reals, q, out):
    """Write ``M(q)`` (Saha Eq. 24) into ``out`` (nv, nv); return a status."""
    nb, nv = ints.shape[0], out.shape[0]
    q = np.ascontiguousarray(q)
    if not (q.shape[0] == configuration_size(ints) and configuration_ok(ints, q)):
        return K.BAD_INPUT
    mass_matrix_state(ints, reals, q, np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)),
                      np.empty((nb, MT_WIDTH)), out)
    return K.OK if all_finite(out) else K.BAD_OUTPUT


@jit
def mass_matrix_batch(ints, reals, q, out):
    """Write ``M(q)`` (Saha Eq. 24) of each row of ``q`` (B, nq) into ``out`` (B, nv, nv)."""
    nb, nv = ints.shape[0], out.shape[1]
    kin, P, M_tilde = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)), np.empty((nb, MT_WIDTH))
    for b in range(q.shape[0]):
        mass_matrix_state(ints, reals, q[b], kin, P, M_tilde, out[b])
    return K.OK if all_finite(out) else K.BAD_OUTPUT


_nd, _F8, _empty = np.ndarray, K.FLOAT64, np.empty
_mass_matrix_one = K.single_state(mass_matrix_one, globals(), '_mass_matrix_one', 'vm')


def mass_matrix(model, q):
    """Return the symmetric positive definite mass matrix ``M(q)``, (..., nv, nv) (Eq. 24)."""
    if type(q) is _nd and q.dtype is _F8 and q.ndim == 1:
        try:  # one state: straight to the kernel (see rnea.inverse_dynamics)
            pk = model.packed
            out = _empty(pk.square)
            status = _mass_matrix_one(pk.ints, pk.reals, q, out)
        except Exception:
            status = K.BAD_INPUT
        if not status:
            return out
    batch, (q,), _ = prepare(model, (('q', q),))
    (q,), _ = kernel_arrays(model, (q,))
    pk = model.packed
    M = np.empty((q.shape[0],) + pk.square)
    mass_matrix_batch(pk.ints, pk.reals, q, M)
    return finish(batch, M, 'mass_matrix')
