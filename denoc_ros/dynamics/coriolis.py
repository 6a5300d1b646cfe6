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
The Christoffel-consistent Coriolis matrix ``C_ij = sum_k Gamma_ijk qd_k`` (Echeandia & Wensing).

One of two valid Coriolis matrices: it satisfies ``C qd = ID(q, qd, 0) - g(q)`` and makes
``dM/dt - 2 C`` skew-symmetric, yet differs entry by entry from Saha's convective inertia matrix
(:mod:`.convective`); computed by recursion over the bodies, never by differentiating ``M``. The
torque vector ``C qd`` itself is :func:`.rnea.coriolis_torques`.

:func:`coriolis_matrix` -- the Christoffel-consistent ``C_ij = sum_k Gamma_ijk qd_k`` (Pinocchio's
``computeCoriolisMatrix``), by the method of Echeandia & Wensing (2021): with spatial quantities
at the base-frame origin (Featherstone's convention) -- joint screws ``S_j``, body twists ``v_i``,
spatial inertias ``I_i`` --, ``J_i`` the Jacobian of body ``i`` (columns ``S_j`` of its
ancestors-or-self), ``C = sum_i J_i^T (I_i J_dot_i + B_i J_i)`` with the paper's (and
Pinocchio's ``data.B``)
``B_i = 1/2 [(v_i x*) I_i + (I_i v_i) xbar* - I_i (v_i x)]``, ``(f xbar*) v = v x* f``, and
``S_dot_j = v_j x S_j``. As every quantity is in the base frame, the composite sums
``I^c_i = sum_{k in subtree(i)} I_k`` and ``B^c_i`` are plain sums over subtrees and
``C_ab = S_a^T (I^c_m S_dot_b + B^c_m S_b)`` with ``m`` the deeper of ``a, b``.
"""

from ._compile import add_row6, cross, jit, literally, mat6_vec
from ._fast import fast_path
from ._packed import GRAVITY, NV, PARENT, V0
from ._state import checked_batch, square
from .kinematics import (_C, _T, expand_inertia, forward_kinematics, origin_inertia, twists,
                         velocity_matrix_batch, velocity_matrix_one, zero_unless_chain)

__all__ = ['coriolis_matrix']

# ----------------------------------------------------------------------------------------------
# Christoffel-consistent Coriolis matrix (Echeandia & Wensing 2021)

# Columns of the per-velocity screw buffer ``sp`` (nv, SP_WIDTH): the screw S_a of each
# velocity and its rate S_dot_a = v_i x S_a, both at the base-frame origin.
_S, _SD = 0, 6
SP_WIDTH = 12
# Columns of the motion buffer (beside the twists at C_i and at the origin): the composite
# spatial inertias I^c_i (10 numbers each).
_IC = 12


@jit(inline=True)
def spatial_inertia_terms(reals, kin, t, i, v, I10, I6, B6):
    """Write ``I_i`` at the base origin and ``B_i = 1/2 [(v x*) I + (I v) xbar* - I (v x)]``."""
    # I_i = [[I_O, h x 1], [(h x 1)^T, m 1]] at the origin (Eq. 2 and the parallel axes): its
    # 10 numbers into I10, its 6x6 form into I6.
    inertia = origin_inertia(reals, kin, i)
    for r in range(10):
        I10[r] = inertia[r]
    expand_inertia(inertia, I6)
    c0, c1, c2 = kin[i, _C], kin[i, _C + 1], kin[i, _C + 2]
    # v_i = [w; v_C + C x w], the twist at the origin.
    w0, w1, w2 = t[i, 0], t[i, 1], t[i, 2]
    x0, x1, x2 = cross(c0, c1, c2, w0, w1, w2)
    v[0], v[1], v[2], v[3], v[4], v[5] = w0, w1, w2, t[i, 3] + x0, t[i, 4] + x1, t[i, 5] + x2
    # With v x = X = [[W, 0], [V, W]] and v x* = -X^T: (v x*) I - I (v x) = -(P + P^T),
    # P = I X (I is symmetric); row r of P is [I_r,ang x w + I_r,lin x v_O, I_r,lin x w].
    for r in range(6):
        a0, a1, a2 = cross(I6[r, 0], I6[r, 1], I6[r, 2], w0, w1, w2)
        b0, b1, b2 = cross(I6[r, 3], I6[r, 4], I6[r, 5], v[3], v[4], v[5])
        B6[r, 0], B6[r, 1], B6[r, 2] = a0 + b0, a1 + b1, a2 + b2
        B6[r, 3], B6[r, 4], B6[r, 5] = cross(I6[r, 3], I6[r, 4], I6[r, 5], w0, w1, w2)
    for r in range(6):
        for col in range(r, 6):
            s = -0.5 * (B6[r, col] + B6[col, r])
            B6[r, col] = s
            B6[col, r] = s
    # + 1/2 (h xbar*), (h xbar*) = [[-h_n x 1, -h_f x 1], [-h_f x 1, 0]], h = I_i v_i.
    h0, h1, h2, h3, h4, h5 = mat6_vec(I6, v[0], v[1], v[2], v[3], v[4], v[5])
    h0, h1, h2, h3, h4, h5 = 0.5 * h0, 0.5 * h1, 0.5 * h2, 0.5 * h3, 0.5 * h4, 0.5 * h5
    B6[0, 1] += h2
    B6[0, 2] -= h1
    B6[1, 0] -= h2
    B6[1, 2] += h0
    B6[2, 0] += h1
    B6[2, 1] -= h0
    for o, p in ((0, 3), (3, 0)):
        B6[o + 0, p + 1] += h5
        B6[o + 0, p + 2] -= h4
        B6[o + 1, p + 0] -= h5
        B6[o + 1, p + 2] += h3
        B6[o + 2, p + 0] += h4
        B6[o + 2, p + 1] -= h3


@jit(inline=True)
def inertia_times(I10, w0, w1, w2, v0, v1, v2):
    """Return ``I [w; v] = [J w + h x v; m v - h x w]`` for a spatial inertia's 10 numbers."""
    J0, J1, J2, J3, J4, J5, h0, h1, h2, m = I10
    x0, x1, x2 = cross(h0, h1, h2, v0, v1, v2)
    y0, y1, y2 = cross(h0, h1, h2, w0, w1, w2)
    return (J0 * w0 + J1 * w1 + J2 * w2 + x0, J1 * w0 + J3 * w1 + J4 * w2 + x1,
            J2 * w0 + J4 * w1 + J5 * w2 + x2, m * v0 - y0, m * v1 - y1, m * v2 - y2)


@jit
def christoffel_state(ints, reals, q, qd, work, blocks, out):
    """
    Write ``C = sum_i J_i^T (I_i J_dot_i + K_i J_i)`` by composite bodies into ``out``.

    ``work`` and ``blocks``: a scratch space of a model handle's shapes (kinematics, columns P,
    motion with the composites I^c, screws; the bodies' 6x6 inertias and the composites B^c).
    """
    christoffel_terms_state(ints, reals, q, qd, work, blocks, out, out, out[0], False)


@jit
def christoffel_terms_state(ints, reals, q, qd, work, blocks, out, M, gravity, terms):
    """
    Write the Christoffel ``C`` into ``out``; with ``terms``, ``M`` (Eq. 24) and ``gravity`` too.

    The composites of the Coriolis recursion give the mass matrix and the gravity torques on
    the way (Featherstone's CRBA at the base origin): with ``x = I^c_i S_a`` for a velocity
    ``a`` of body ``i``, ``M_ab = x^T S_b`` for ``b`` on the path to the base, and
    ``g_a = x^T [0; -g]`` (every body at rest accelerates as the base's fictitious ``[0; -g]``).
    ``work[0]`` and ``work[1]`` keep the forward kinematics and the columns P of ``q``.
    ``terms`` is compiled as a constant (two specializations, the branches folded): the Coriolis
    matrix alone pays nothing for the terms.
    """
    literally(terms)
    nb = ints.shape[0]
    kin, P, mot, sp = work[0], work[1], work[2], work[3]
    # The composites: I^c_i in its 10 numbers (origin_inertia's order), B^c_i as a 6x6 matrix.
    I_c, I6, B_c = mot[:, _IC:_IC + 10], blocks[:nb], blocks[nb:2 * nb]
    forward_kinematics(ints, reals, q, kin, P)
    t = mot[:, _T:_T + 6]
    twists(ints, kin, P, qd, t)
    v = mot[:, 6:12]
    S, S_dot = sp[:, _S:_S + 6], sp[:, _SD:_SD + 6]
    for i in range(nb):
        spatial_inertia_terms(reals, kin, t, i, v[i], I_c[i], I6[i], B_c[i])
        c0, c1, c2 = kin[i, _C], kin[i, _C + 1], kin[i, _C + 2]
        w0, w1, w2 = v[i, 0], v[i, 1], v[i, 2]
        for a in range(ints[i, V0], ints[i, V0] + ints[i, NV]):
            # Screw at the base origin: S = [p_ang; p_lin + C x p_ang] (a point of body i).
            x0, x1, x2 = cross(c0, c1, c2, P[a, 0], P[a, 1], P[a, 2])
            S[a, 0], S[a, 1], S[a, 2] = P[a, 0], P[a, 1], P[a, 2]
            S[a, 3], S[a, 4], S[a, 5] = P[a, 3] + x0, P[a, 4] + x1, P[a, 5] + x2
            # S_dot = v_i x S = [w x S_ang; v_O x S_ang + w x S_lin].
            S_dot[a, 0], S_dot[a, 1], S_dot[a, 2] = cross(w0, w1, w2, S[a, 0], S[a, 1],
                                                          S[a, 2])
            x0, x1, x2 = cross(v[i, 3], v[i, 4], v[i, 5], S[a, 0], S[a, 1], S[a, 2])
            y0, y1, y2 = cross(w0, w1, w2, S[a, 3], S[a, 4], S[a, 5])
            S_dot[a, 3], S_dot[a, 4], S_dot[a, 5] = x0 + y0, x1 + y1, x2 + y2
    zero_unless_chain(ints, out)
    if terms:
        zero_unless_chain(ints, M)
    ng0, ng1, ng2 = -reals[nb, GRAVITY], -reals[nb, GRAVITY + 1], -reals[nb, GRAVITY + 2]
    # Children first: every quantity is at the base origin, so the composites I^c_i, B^c_i are
    # plain sums over the subtree, complete when body i's turn comes (added to the parent after).
    for i in range(nb - 1, -1, -1):
        Ii = I_c[i, 0], I_c[i, 1], I_c[i, 2], I_c[i, 3], I_c[i, 4], I_c[i, 5], I_c[i, 6], \
            I_c[i, 7], I_c[i, 8], I_c[i, 9]
        Bi = B_c[i]
        for a in range(ints[i, V0], ints[i, V0] + ints[i, NV]):
            # Row a, columns b of bodies j = i, parent(i), ...: S_a^T (I^c_i S_dot_b + B^c_i
            # S_b), with the row vectors x = I^c_i S_a and y = B^c_i^T S_a (I^c_i symmetric).
            x = inertia_times(Ii, S[a, 0], S[a, 1], S[a, 2], S[a, 3], S[a, 4], S[a, 5])
            y = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            for r in range(6):
                y = add_row6(y, Bi, r, S[a, r])
            x0, x1, x2, x3, x4, x5 = x
            y0, y1, y2, y3, y4, y5 = y
            if terms:
                gravity[a] = x3 * ng0 + x4 * ng1 + x5 * ng2
            j = i
            while j >= 0:
                for b in range(ints[j, V0], ints[j, V0] + ints[j, NV]):
                    out[a, b] = (x0 * S_dot[b, 0] + x1 * S_dot[b, 1] + x2 * S_dot[b, 2]
                                 + x3 * S_dot[b, 3] + x4 * S_dot[b, 4] + x5 * S_dot[b, 5]
                                 + y0 * S[b, 0] + y1 * S[b, 1] + y2 * S[b, 2]
                                 + y3 * S[b, 3] + y4 * S[b, 4] + y5 * S[b, 5])
                    if terms:
                        value = (x0 * S[b, 0] + x1 * S[b, 1] + x2 * S[b, 2]
                                 + x3 * S[b, 3] + x4 * S[b, 4] + x5 * S[b, 5])
                        M[a, b] = value
                        M[b, a] = value
                j = ints[j, PARENT]
            # Column a, rows of the proper ancestors: S_c^T (I^c_i S_dot_a + B^c_i S_a).
            j = ints[i, PARENT]
            if j >= 0:
                f = inertia_times(Ii, S_dot[a, 0], S_dot[a, 1], S_dot[a, 2], S_dot[a, 3],
                                  S_dot[a, 4], S_dot[a, 5])
                g = mat6_vec(B_c[i], S[a, 0], S[a, 1], S[a, 2], S[a, 3], S[a, 4], S[a, 5])
                f0, f1, f2 = f[0] + g[0], f[1] + g[1], f[2] + g[2]
                f3, f4, f5 = f[3] + g[3], f[4] + g[4], f[5] + g[5]
                while j >= 0:
                    for c in range(ints[j, V0], ints[j, V0] + ints[j, NV]):
                        out[c, a] = (S[c, 0] * f0 + S[c, 1] * f1 + S[c, 2] * f2
                                     + S[c, 3] * f3 + S[c, 4] * f4 + S[c, 5] * f5)
                    j = ints[j, PARENT]
        k = ints[i, PARENT]
        if k >= 0:
            for r in range(10):
                I_c[k, r] += Ii[r]
            for r in range(6):
                for col in range(6):
                    B_c[k, r, col] += B_c[i, r, col]


@jit
def coriolis_matrix_one(handle, q, qd, out):
    """Write the Christoffel Coriolis matrix of one state into ``out``; return a status."""
    return velocity_matrix_one(christoffel_state, handle, q, qd, out)


@jit
def coriolis_matrix_batch(ints, reals, q, qd, out):
    """Write the Christoffel Coriolis matrix of each row of (B, ...) states into ``out``."""
    return velocity_matrix_batch(christoffel_state, ints, reals, q, qd, out)


@fast_path(coriolis_matrix_one, 'vvm', 'C', states='q qd',
           result='pk.square')
def coriolis_matrix(model, q, qd):
    """
    Return the Christoffel-consistent Coriolis matrix, ``C_ij = sum_k Gamma_ijk qd_k``.

    ``Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)``; shape ``(..., nv, nv)``; equals
    Pinocchio's ``computeCoriolisMatrix``. Computed by composite bodies (Echeandia & Wensing).
    """
    return checked_batch(model, coriolis_matrix_batch, (('q', q), ('qd', qd)), square,
                         'coriolis_matrix')
