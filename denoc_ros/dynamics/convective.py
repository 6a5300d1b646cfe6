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
Saha's convective inertia matrix ``C = N^T (M N_dot + M_dot N)`` (Eq. 20, 25-29, corrected).

One of two valid Coriolis matrices: it satisfies ``C qd = ID(q, qd, 0) - g(q)`` and makes
``dM/dt - 2 C`` skew-symmetric, yet differs entry by entry from the Christoffel matrix of
:mod:`.coriolis`; computed by recursion over the bodies, never by differentiating ``M``.

:func:`convective_inertia_matrix` -- Saha's ``C = N^T (M N_dot + M_dot N)`` (Eq. 20, 25-29),
with ``M_dot_i = Omega_i M_i E_i = [[w_i x I_i, 0], [0, 0]]`` as in Eq. 8. Eq. 27-29 as printed in
the seed lost dots and factors; rederived from ``C = N^T (M N_dot + M_dot N)`` with
``N_kj = B_kj p_j`` and ``N_dot_kj = B_dot_kj p_j + B_kj Omega_j p_j`` they read, for a tree
(sums over the children ``c`` of ``i``)::

    M~_i  = M_i  + sum_c B_ci^T M~_c B_ci                      (Eq. 23b)
    M'~_i = M'_i + sum_c M'~_c        (M'_i = Omega_i M_i E_i; B^T M' B = M' as M' = [[X,0],[0,0]])
    H_i   = sum_c B_ci^T H~_ci,   H~_ij = M~_i B_dot_ij + H_i B_ij      (Eq. 28, corrected)
    c_ij  = p_i^T (M~_i B_ij Omega_j + H~_ij + M'~_i) p_j     j ancestor-or-self of i (Eq. 29)
    c_ij  = p_i^T B_ji^T (M~_j Omega_j + H_j + M'~_j) p_j      i a proper ancestor of j (Eq. 29)

and ``c_ij = 0`` for joints on different branches. (For a chain ``H_i = B_{i+1,i}^T H~_{i+1,i}``,
Saha's term; the printed Eq. 28 has ``B_ij`` where ``B_dot_ij`` belongs and drops the trailing
``B_ij``, and ``M~`` where the composite ``M'~`` of ``M_dot`` belongs.)
"""

from ._compile import cross, jit, mat6_vec
from ._fast import fast_path
from ._packed import MASS, NV, PARENT, V0
from ._state import checked_batch, square
from .kinematics import (_C, _I, _T, add_b_transpose_times, expand_inertia, forward_kinematics,
                         times_b, twists, velocity_matrix_batch, velocity_matrix_one,
                         world_inertias, zero_unless_chain)

__all__ = ['convective_inertia_matrix']

# ----------------------------------------------------------------------------------------------
# Saha's convective inertia matrix (Eq. 20, 25-29 corrected)


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
def convective_state(ints, reals, q, qd, work, blocks, out):
    """
    Write Saha's ``C = N^T (M N_dot + M_dot N)``, entries of (corrected) Eq. 29.

    ``work`` and ``blocks``: a scratch space of a model handle's shapes (kinematics, columns P,
    motion, the compact M~; the 6x6 M~, M'~, H and one more).
    """
    nb = ints.shape[0]
    kin, P, mot, M_compact = work[0], work[1], work[2], work[3]
    M_tilde, M_prime, H, T = blocks[:nb], blocks[nb:2 * nb], blocks[2 * nb:3 * nb], blocks[3 * nb]
    forward_kinematics(ints, reals, q, kin, P)
    world_inertias(ints, reals, kin)
    t = mot[:, _T:_T + 6]
    twists(ints, kin, P, qd, t)
    C, inertia = kin[:, _C:_C + 3], kin[:, _I:_I + 9]
    composite_mass_matrices(ints, reals, kin, M_compact)
    for i in range(nb):
        expand_inertia(M_compact[i], M_tilde[i])
        # M'_i = Omega_i M_i E_i = [[w_i x I_i, 0], [0, 0]] (Eq. 8).
        w0, w1, w2 = t[i, 0], t[i, 1], t[i, 2]
        for r in range(6):
            for col in range(6):
                M_prime[i, r, col] = 0.0
                H[i, r, col] = 0.0
        for col in range(3):
            M_prime[i, 0, col], M_prime[i, 1, col], M_prime[i, 2, col] = cross(
                w0, w1, w2, inertia[i, col], inertia[i, 3 + col], inertia[i, 6 + col])
    for c in range(nb - 1, -1, -1):
        i = ints[c, PARENT]
        if i >= 0:
            # M'~_i += M'~_c (Eq. 28); H_i += B_ci^T H~_ci, H~_ci = M~_c B_dot_ci + H_c B_ci.
            for r in range(6):
                for col in range(6):
                    M_prime[i, r, col] += M_prime[c, r, col]
            b0, b1, b2 = C[i, 0] - C[c, 0], C[i, 1] - C[c, 1], C[i, 2] - C[c, 2]
            d0, d1, d2 = t[i, 3] - t[c, 3], t[i, 4] - t[c, 4], t[i, 5] - t[c, 5]
            times_b(H[c], b0, b1, b2, T)
            for r in range(6):  # + M~_c B_dot_ci, B_dot_ci = [[0, 0], [d x 1, 0]]
                x0, x1, x2 = cross(M_tilde[c, r, 3], M_tilde[c, r, 4], M_tilde[c, r, 5],
                                   d0, d1, d2)
                T[r, 0] += x0
                T[r, 1] += x1
                T[r, 2] += x2
            add_b_transpose_times(T, b0, b1, b2, H[i])
    zero_unless_chain(ints, out)
    for i in range(nb):
        for a in range(ints[i, V0], ints[i, V0] + ints[i, NV]):
            # Row a, columns b of body j = i, parent(i), ...:
            # p_a^T (M~_i B_ij Omega_j + H~_ij + M'~_i) p_b.
            j = i
            while j >= 0:
                c0, c1, c2 = C[j, 0] - C[i, 0], C[j, 1] - C[i, 1], C[j, 2] - C[i, 2]
                for b in range(ints[j, V0], ints[j, V0] + ints[j, NV]):
                    # s = B_ij p_b, s_dot = B_ij Omega_j p_b + B_dot_ij p_b.
                    pd0, pd1, pd2 = cross(t[j, 0], t[j, 1], t[j, 2], P[b, 0], P[b, 1], P[b, 2])
                    pd3, pd4, pd5 = cross(t[j, 0], t[j, 1], t[j, 2], P[b, 3], P[b, 4], P[b, 5])
                    x0, x1, x2 = cross(c0, c1, c2, P[b, 0], P[b, 1], P[b, 2])
                    s = (P[b, 0], P[b, 1], P[b, 2], P[b, 3] + x0, P[b, 4] + x1, P[b, 5] + x2)
                    x0, x1, x2 = cross(c0, c1, c2, pd0, pd1, pd2)
                    y0, y1, y2 = cross(t[j, 3] - t[i, 3], t[j, 4] - t[i, 4], t[j, 5] - t[i, 5],
                                       P[b, 0], P[b, 1], P[b, 2])
                    s_dot = (pd0, pd1, pd2, pd3 + x0 + y0, pd4 + x1 + y1, pd5 + x2 + y2)
                    value = 0.0
                    for r in range(6):
                        wr = 0.0
                        for col in range(6):
                            wr += (M_tilde[i, r, col] * s_dot[col]
                                   + (H[i, r, col] + M_prime[i, r, col]) * s[col])
                        value += P[a, r] * wr
                    out[a, b] = value
                j = ints[j, PARENT]
        for b in range(ints[i, V0], ints[i, V0] + ints[i, NV]):
            # Column b, rows c of the proper ancestors: p_c^T B_ia^T (M~_i Omega_i + H_i
            # + M'~_i) p_b.
            k = ints[i, PARENT]
            if k < 0:
                continue
            pd = (cross(t[i, 0], t[i, 1], t[i, 2], P[b, 0], P[b, 1], P[b, 2])
                  + cross(t[i, 0], t[i, 1], t[i, 2], P[b, 3], P[b, 4], P[b, 5]))
            x = mat6_vec(M_tilde[i], pd[0], pd[1], pd[2], pd[3], pd[4], pd[5])
            y = mat6_vec(H[i], P[b, 0], P[b, 1], P[b, 2], P[b, 3], P[b, 4], P[b, 5])
            z = mat6_vec(M_prime[i], P[b, 0], P[b, 1], P[b, 2], P[b, 3], P[b, 4], P[b, 5])
            n0, n1, n2 = x[0] + y[0] + z[0], x[1] + y[1] + z[1], x[2] + y[2] + z[2]
            f0, f1, f2 = x[3] + y[3] + z[3], x[4] + y[4] + z[4], x[5] + y[5] + z[5]
            while k >= 0:
                x0, x1, x2 = cross(C[k, 0] - C[i, 0], C[k, 1] - C[i, 1], C[k, 2] - C[i, 2],
                                   f0, f1, f2)
                for c in range(ints[k, V0], ints[k, V0] + ints[k, NV]):
                    out[c, b] = (P[c, 0] * (n0 - x0) + P[c, 1] * (n1 - x1)
                                 + P[c, 2] * (n2 - x2) + P[c, 3] * f0 + P[c, 4] * f1
                                 + P[c, 5] * f2)
                k = ints[k, PARENT]


@jit
def convective_inertia_matrix_one(handle, q, qd, out):
    """Write Saha's convective inertia matrix of one state into ``out``; return a status."""
    return velocity_matrix_one(convective_state, handle, q, qd, out)


@jit
def convective_inertia_matrix_batch(ints, reals, q, qd, out):
    """Write Saha's convective inertia matrix of each row of (B, ...) states into ``out``."""
    return velocity_matrix_batch(convective_state, ints, reals, q, qd, out)


@fast_path(convective_inertia_matrix_one, 'vvm', 'convective', states='q qd',
           result='pk.square')
def convective_inertia_matrix(model, q, qd):
    """
    Return Saha's convective inertia matrix ``C = N^T (M N_dot + M_dot N)`` (Eq. 20, 25-29).

    Shape ``(..., nv, nv)``; ``C qd`` is the Coriolis/centrifugal force and ``dM/dt - 2 C`` is
    skew-symmetric, but ``C`` differs from the Christoffel :func:`coriolis_matrix`.
    """
    return checked_batch(model, convective_inertia_matrix_batch, (('q', q), ('qd', qd)), square,
                         'convective_inertia_matrix')
