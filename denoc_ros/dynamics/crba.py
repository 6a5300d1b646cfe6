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
branches are zero. O(n) for ``M~_i``, O(n d) entries for a tree of depth d.

The recursion is evaluated with every quantity carried to the base origin (Featherstone's CRBA
in base coordinates): there ``B_ij`` is the identity, the composite of Eq. 23b is a plain sum of
the bodies' spatial inertias (10 numbers each), and an entry costs one 6-vector dot product.
Saha's form at the mass centres, with ``M~_i`` about ``C_i``, serves the convective inertia
matrix (:mod:`.coriolis`).
"""

import numpy as np

from . import _compile
from ._compile import all_finite, cross, jit, model_arrays
from ._fast import fast_path
from ._packed import NV, PARENT, V0
from ._state import checked_batch, square
from .kinematics import (_C, configuration_ok, configuration_size, forward_kinematics,
                         KIN_WIDTH, origin_inertia, zero_unless_chain)

__all__ = ['mass_matrix']

# Columns of the composite buffer ``I_c`` (nb, IC_WIDTH): the spatial inertia of body i's
# subtree at the base origin, as the rotational inertia about the origin (xx, xy, xz, yy, yz,
# zz), the first moment h = sum m c, and the mass.
_JXX, _JXY, _JXZ, _JYY, _JYZ, _JZZ, _HX, _HY, _HZ, _M = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
IC_WIDTH = 10


@jit
def composite_inertias(ints, reals, kin, P, I_c):
    """
    Fill ``I_c`` with each body's own spatial inertia ``M_i`` at the base origin.

    :func:`generalized_inertia_matrix` sums them into the composites ``M~_i`` (Eq. 23b) as it
    goes. On the way the columns ``P`` are carried to the origin (``[e; v_O]``, the joints'
    screws).
    """
    nb = ints.shape[0]
    for i in range(nb):
        # M_i moved from C_i to the origin (Eq. 2 and the parallel-axis theorem).
        (I_c[i, _JXX], I_c[i, _JXY], I_c[i, _JXZ], I_c[i, _JYY], I_c[i, _JYZ], I_c[i, _JZZ],
         I_c[i, _HX], I_c[i, _HY], I_c[i, _HZ], I_c[i, _M]) = origin_inertia(reals, kin, i)
        c0, c1, c2 = kin[i, _C], kin[i, _C + 1], kin[i, _C + 2]
        for a in range(ints[i, V0], ints[i, V0] + ints[i, NV]):
            x0, x1, x2 = cross(c0, c1, c2, P[a, 0], P[a, 1], P[a, 2])
            P[a, 3] += x0
            P[a, 4] += x1
            P[a, 5] += x2


@jit
def generalized_inertia_matrix(ints, kin, P, I_c, out):
    """
    Write the GIM ``i_ab = i_ba = p_a^T M~_i B_ij p_b`` into ``out`` (Saha Eq. 24).

    Evaluated at the base origin, where ``B_ij`` is the identity and the composite of Eq. 23b
    a plain sum: the bodies are visited children first, and body ``i``'s ``M~_i`` is complete
    when its turn comes (``I_c`` and ``P`` as :func:`composite_inertias` leaves them; ``I_c``
    then holds the composites). Returns True if every entry is finite (checked on the way: a
    second pass over the matrix would cost a third of the recursion's time).
    """
    nb = ints.shape[0]
    finite = 0.0
    zero_unless_chain(ints, out)
    for i in range(nb - 1, -1, -1):
        h0, h1, h2, m = I_c[i, _HX], I_c[i, _HY], I_c[i, _HZ], I_c[i, _M]
        for a in range(ints[i, V0], ints[i, V0] + ints[i, NV]):
            # psi_a = M~_i p_a at the origin: [I_O w + h x v; m v - h x w].
            w0, w1, w2, v0, v1, v2 = P[a, 0], P[a, 1], P[a, 2], P[a, 3], P[a, 4], P[a, 5]
            x0, x1, x2 = cross(h0, h1, h2, v0, v1, v2)
            n0 = I_c[i, _JXX] * w0 + I_c[i, _JXY] * w1 + I_c[i, _JXZ] * w2 + x0
            n1 = I_c[i, _JXY] * w0 + I_c[i, _JYY] * w1 + I_c[i, _JYZ] * w2 + x1
            n2 = I_c[i, _JXZ] * w0 + I_c[i, _JYZ] * w1 + I_c[i, _JZZ] * w2 + x2
            y0, y1, y2 = cross(h0, h1, h2, w0, w1, w2)
            f0, f1, f2 = m * v0 - y0, m * v1 - y1, m * v2 - y2
            # Columns of body i itself (b <= a), then of its ancestors j.
            j = i
            while j >= 0:
                for b in range(ints[j, V0], a + 1 if j == i else ints[j, V0] + ints[j, NV]):
                    value = (P[b, 0] * n0 + P[b, 1] * n1 + P[b, 2] * n2
                             + P[b, 3] * f0 + P[b, 4] * f1 + P[b, 5] * f2)
                    finite += value * 0.0
                    out[a, b] = value
                    out[b, a] = value
                j = ints[j, PARENT]
        k = ints[i, PARENT]
        if k >= 0:  # M~_k += M~_i (Eq. 23b at the origin)
            for r in range(IC_WIDTH):
                I_c[k, r] += I_c[i, r]
    return finite == 0.0


@jit
def mass_matrix_state(ints, reals, q, kin, P, I_c, out):
    """Write ``M(q)`` (Saha Eq. 24) of one state into ``out`` (nv, nv); True if finite."""
    forward_kinematics(ints, reals, q, kin, P)
    composite_inertias(ints, reals, kin, P, I_c)
    return generalized_inertia_matrix(ints, kin, P, I_c, out)


@jit
def mass_matrix_one(handle, q, out):
    """Write ``M(q)`` (Saha Eq. 24) into ``out`` (nv, nv); return a status."""
    ints, reals, work, _ = model_arrays(handle)
    q = np.ascontiguousarray(q)
    if not (q.shape[0] == configuration_size(ints) and configuration_ok(ints, q)):
        return _compile.BAD_INPUT
    return _compile.OK if mass_matrix_state(ints, reals, q, work[0], work[1], work[2], out) \
        else _compile.BAD_OUTPUT


@jit
def mass_matrix_batch(ints, reals, q, out):
    """Write ``M(q)`` (Saha Eq. 24) of each row of ``q`` (B, nq) into ``out`` (B, nv, nv)."""
    nb, nv = ints.shape[0], out.shape[1]
    kin, P, I_c = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)), np.empty((nb, IC_WIDTH))
    for b in range(q.shape[0]):
        mass_matrix_state(ints, reals, q[b], kin, P, I_c, out[b])
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@fast_path(mass_matrix_one, 'vm', 'M', states='q',
           result='pk.square')
def mass_matrix(model, q):
    """Return the symmetric positive definite mass matrix ``M(q)``, (..., nv, nv) (Eq. 24)."""
    return checked_batch(model, mass_matrix_batch, (('q', q),), square, 'mass_matrix')
