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
Forward dynamics: the O(n) articulated-body recursion, and the Cholesky cross-check.

:func:`forward_dynamics` is the articulated-body form of Saha's recursive forward dynamics (the
UDU^T decomposition of the GIM ``I = N_d^T N_l^T M N_l N_d`` of Eq. 21, done body by body), in
the DeNOC quantities at the mass centres. Backward pass, children before parents, with the
articulated mass matrix ``M^_i`` (``M_i`` plus what the children pass up) and bias wrench
``eta^_i``; for a joint with one velocity::

    psi_i = M^_i p_i,   m^_i = p_i^T psi_i,   phi_i = tau_i - p_i^T eta^_i
    M^_k   += B_ik^T (M^_i - psi_i psi_i^T / m^_i) B_ik                  (k = parent of i)
    eta^_k += B_ik^T (eta^_i + (M^_i - psi_i psi_i^T / m^_i) kappa_i + psi_i phi_i / m^_i)

with ``eta_i = Omega_i M_i E_i t_i - w^E_i`` (Eq. 7-8 and the external wrench) and
``kappa_i = B_dot_ik t_k + Omega_i P_i qd_i`` the velocity-product part of the twist rate
(Eq. 12 differentiated). Forward pass, parents first, from the base's fictitious acceleration
``[0; -g]``::

    qdd_i   = (phi_i - psi_i^T (B_ik t_dot_k + kappa_i)) / m^_i
    t_dot_i = B_ik t_dot_k + kappa_i + p_i qdd_i

A joint with several velocities (the free-flyer root: six) has the matrix ``D_i = P_i^T M^_i
P_i`` in place of ``m^_i``; it is factored as ``L diag(d) L^T`` (unit lower ``L``, no square
roots), and with ``W_i = M^_i P_i L^-T`` and ``y_i = L^-1 phi_i`` the updates are the sums of
the one-velocity updates over the columns of ``W_i``: the same code serves both.

:func:`forward_dynamics_cholesky` solves ``M qdd = tau - (C qd + g - sum J^T f)`` with the
mass matrix of Eq. 24 and the bias of Eq. 30 by a Cholesky factorisation, O(n^3).
Integrating the forward dynamics over time: :mod:`.prediction` (compiled, the node's
``~/prediction``) and :mod:`denoc_ros.simulation`.
"""

import numpy as np

from . import _compile
from ._compile import add_row6, all_finite, cross, jit, mat6_vec, model_arrays
from ._fast import fast_path
from ._packed import MASS, NV, PARENT, V0
from ._packed import packed
from ._state import finish, kernel_arrays, prepare
from .crba import mass_matrix_batch
from .kinematics import (_C, _I, _KAPPA, _T, _TD, _W, carried, configuration_ok,
                         configuration_size, congruence_add, forward_kinematics,
                         gyroscopic_moment, KIN_WIDTH, MOT_WIDTH, twists, world_inertias,
                         wrench_to_parent)
from .rnea import inverse_dynamics_batch, subtract_external_wrench
from ..errors import InputError

__all__ = ['forward_dynamics', 'forward_dynamics_cholesky']

# Columns of the per-velocity buffer ``ab`` (nv, AB_WIDTH): W (= psi for one velocity), y
# (= phi), d (= m^), and the row of the unit lower factor L within the joint.
_PSI, _PHI, _MHAT, _L = 0, 6, 7, 8
AB_WIDTH = 14


@jit
def articulated_body_state(ints, reals, q, qd, tau, fext, kin, P, mot, M_hat, T, ab, qdd):
    """Write ``qdd`` by the O(n) articulated-body (UDU^T) recursion; return a status."""
    nb = ints.shape[0]
    forward_kinematics(ints, reals, q, kin, P)
    world_inertias(ints, reals, kin)
    t, t_dot, eta, kappa = mot[:, _T:_T + 6], mot[:, _TD:_TD + 6], mot[:, _W:_W + 6], \
        mot[:, _KAPPA:_KAPPA + 6]
    twists(ints, kin, P, qd, t)
    inertia = kin[:, _I:_I + 9]
    for i in range(nb):
        # M^_i = M_i = [[I_i, 0], [0, m_i 1]] (Eq. 2) before the children add theirs.
        m = reals[i, MASS]
        for r in range(3):
            for col in range(3):
                M_hat[i, r, col] = inertia[i, 3 * r + col]
                M_hat[i, r, 3 + col] = 0.0
                M_hat[i, 3 + r, col] = 0.0
                M_hat[i, 3 + r, 3 + col] = m if r == col else 0.0
        # eta_i = Omega_i M_i E_i t_i - w^E_i (Eq. 7-8 and the external wrench).
        eta[i, 0], eta[i, 1], eta[i, 2] = gyroscopic_moment(kin, t, i)
        eta[i, 3], eta[i, 4], eta[i, 5] = 0.0, 0.0, 0.0
        if fext.shape[0] > 0:
            subtract_external_wrench(kin, fext, i, eta)
        w0, w1, w2 = t[i, 0], t[i, 1], t[i, 2]
        # kappa_i = B_dot_ik t_k + Omega_i P_i qd_i (Saha Eq. 12, differentiated).
        k0 = k1 = k2 = k3 = k4 = k5 = 0.0
        for b in range(ints[i, V0], ints[i, V0] + ints[i, NV]):
            u0, u1, u2 = cross(w0, w1, w2, P[b, 0], P[b, 1], P[b, 2])
            v0, v1, v2 = cross(w0, w1, w2, P[b, 3], P[b, 4], P[b, 5])
            s = qd[b]
            k0 += u0 * s
            k1 += u1 * s
            k2 += u2 * s
            k3 += v0 * s
            k4 += v1 * s
            k5 += v2 * s
        k = ints[i, PARENT]
        if k >= 0:
            x0, x1, x2 = cross(t[k, 3] - t[i, 3], t[k, 4] - t[i, 4], t[k, 5] - t[i, 5],
                               t[k, 0], t[k, 1], t[k, 2])
            k3 += x0
            k4 += x1
            k5 += x2
        kappa[i, 0], kappa[i, 1], kappa[i, 2] = k0, k1, k2
        kappa[i, 3], kappa[i, 4], kappa[i, 5] = k3, k4, k5
    psi = ab[:, _PSI:_PSI + 6]
    singular = -1
    for i in range(nb - 1, -1, -1):
        Mi = M_hat[i]
        v0, m = ints[i, V0], ints[i, NV]
        # The scale for the singularity test: the largest entry of the positive semi-definite
        # M^_i, which is on its diagonal (|M_rc| <= sqrt(M_rr M_cc)).
        largest = max(max(Mi[0, 0], Mi[1, 1]), max(Mi[2, 2], Mi[3, 3]), max(Mi[4, 4], Mi[5, 5]))
        for a in range(v0, v0 + m):
            # psi_a = M^_i p_a, phi_a = tau_a - p_a^T eta^_i, m^_a = p_a^T psi_a (in locals: the
            # compiler cannot tell that the arrays do not overlap).
            p0, p1, p2, p3, p4, p5 = P[a, 0], P[a, 1], P[a, 2], P[a, 3], P[a, 4], P[a, 5]
            s0, s1, s2, s3, s4, s5 = mat6_vec(Mi, p0, p1, p2, p3, p4, p5)
            phi = tau[a] - (p0 * eta[i, 0] + p1 * eta[i, 1] + p2 * eta[i, 2] + p3 * eta[i, 3]
                            + p4 * eta[i, 4] + p5 * eta[i, 5])
            d = p0 * s0 + p1 * s1 + p2 * s2 + p3 * s3 + p4 * s4 + p5 * s5
            # A joint with several velocities: D = L diag(d) L^T row by row, W_a = psi_a -
            # sum_c L_ac W_c, y_a = phi_a - sum_c L_ac y_c over the earlier columns c of the
            # joint, where L_ac = p_a^T W_c / d_c (psi_c already holds W_c).
            for c in range(v0, a):
                lac = (p0 * psi[c, 0] + p1 * psi[c, 1] + p2 * psi[c, 2] + p3 * psi[c, 3]
                       + p4 * psi[c, 4] + p5 * psi[c, 5]) / ab[c, _MHAT]
                ab[a, _L + c - v0] = lac
                d -= lac * lac * ab[c, _MHAT]
                phi -= lac * ab[c, _PHI]
                s0 -= lac * psi[c, 0]
                s1 -= lac * psi[c, 1]
                s2 -= lac * psi[c, 2]
                s3 -= lac * psi[c, 3]
                s4 -= lac * psi[c, 4]
                s5 -= lac * psi[c, 5]
            if not d > 1e-12 * largest:
                singular = a
                break
            psi[a, 0], psi[a, 1], psi[a, 2] = s0, s1, s2
            psi[a, 3], psi[a, 4], psi[a, 5] = s3, s4, s5
            ab[a, _MHAT] = d
            ab[a, _PHI] = phi
        if singular >= 0:
            break
        k = ints[i, PARENT]
        if k >= 0:
            # M_bar = M^_i - sum_a W_a W_a^T / d_a; eta_bar = eta^_i + M_bar kappa_i
            # + sum_a W_a y_a / d_a.
            for a in range(v0, v0 + m):
                for r in range(6):
                    u = psi[a, r] / ab[a, _MHAT]
                    for col in range(6):
                        Mi[r, col] -= u * psi[a, col]
            e = add_row6(mat6_vec(Mi, kappa[i, 0], kappa[i, 1], kappa[i, 2], kappa[i, 3],
                                  kappa[i, 4], kappa[i, 5]), eta, i, 1.0)
            for a in range(v0, v0 + m):
                e = add_row6(e, psi, a, ab[a, _PHI] / ab[a, _MHAT])
            c0, c1, c2 = kin[k, _C] - kin[i, _C], kin[k, _C + 1] - kin[i, _C + 1], \
                kin[k, _C + 2] - kin[i, _C + 2]
            # M^_k += B_ik^T M_bar B_ik, eta^_k += B_ik^T eta_bar.
            congruence_add(Mi, c0, c1, c2, T, M_hat[k])
            wrench_to_parent(kin, k, i, e[0], e[1], e[2], e[3], e[4], e[5], eta)
    if singular >= 0:
        return _compile.SINGULAR + singular
    g0, g1, g2 = reals[nb, 0], reals[nb, 1], reals[nb, 2]
    for i in range(nb):
        # a = B_ik t_dot_k + kappa_i (base: [0; -g]); qdd = L^-T ((y - W^T a) / d).
        k = ints[i, PARENT]
        if k < 0:
            acc = (0.0, 0.0, 0.0, -g0, -g1, -g2)
        else:
            acc = carried(kin, t_dot, k, i)
        a0, a1, a2, a3, a4, a5 = add_row6(acc, kappa, i, 1.0)
        v0, m = ints[i, V0], ints[i, NV]
        for a in range(v0, v0 + m):
            qdd[a] = (ab[a, _PHI] - (psi[a, 0] * a0 + psi[a, 1] * a1 + psi[a, 2] * a2
                                     + psi[a, 3] * a3 + psi[a, 4] * a4 + psi[a, 5] * a5)) \
                / ab[a, _MHAT]
        if m > 1:  # a joint with several velocities: back substitution with L^T
            for a in range(v0 + m - 2, v0 - 1, -1):
                for c in range(a + 1, v0 + m):
                    qdd[a] -= ab[c, _L + a - v0] * qdd[c]
        acc = (a0, a1, a2, a3, a4, a5)
        for a in range(v0, v0 + m):
            acc = add_row6(acc, P, a, qdd[a])
        t_dot[i, 0], t_dot[i, 1], t_dot[i, 2], t_dot[i, 3], t_dot[i, 4], t_dot[i, 5] = acc
    return _compile.OK


@jit
def forward_dynamics_one(handle, q, qd, tau, fext, out):
    """Write ``qdd`` (O(n), Saha's UDU^T) of one state into ``out``; return a status."""
    ints, reals, work, M6 = model_arrays(handle)
    nb, nv = ints.shape[0], out.shape[0]
    q = np.ascontiguousarray(q)
    qd = np.ascontiguousarray(qd)
    tau = np.ascontiguousarray(tau)
    fext = np.ascontiguousarray(fext)
    if not (q.shape[0] == configuration_size(ints) and qd.shape[0] == nv
            and tau.shape[0] == nv
            and (fext.shape[0] == 0 or (fext.shape[0] == nb and fext.shape[1] == 6))
            and configuration_ok(ints, q) and all_finite(qd) and all_finite(tau)
            and all_finite(fext)):
        return _compile.BAD_INPUT
    status = articulated_body_state(ints, reals, q, qd, tau, fext, work[0], work[1], work[2],
                                    M6[:nb], M6[nb], work[3], out)
    if status != _compile.OK:
        return status
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@jit
def forward_dynamics_batch(ints, reals, q, qd, tau, fext, out):
    """Write ``qdd`` of each row of (B, ...) states into ``out``; the singular joint wins."""
    nb, nv = ints.shape[0], out.shape[1]
    kin, P, mot = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)), np.empty((nb, MOT_WIDTH))
    M_hat, T, ab = np.empty((nb, 6, 6)), np.empty((6, 6)), np.empty((nv, AB_WIDTH))
    none = np.zeros((0, 6))  # of fext[b]'s type (a read-only constant would add a compilation)
    singular = -1
    for b in range(q.shape[0]):
        status = articulated_body_state(ints, reals, q[b], qd[b], tau[b],
                                        fext[b] if fext.shape[0] > 0 else none, kin, P, mot,
                                        M_hat, T, ab, out[b])
        if status != _compile.OK:
            singular = max(singular, status - _compile.SINGULAR)
    if singular >= 0:
        return _compile.SINGULAR + singular
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


def singular_error(model, k):
    """Return the InputError for a mass matrix that is singular along velocity ``k``."""
    if model.floating and k < 6:
        what = 'the floating base'
    else:
        what = f'joint {model.joint_names[k - (6 if model.floating else 0)]!r}'
    return InputError(f'the mass matrix is singular: nothing with mass or inertia moves with '
                      f'{what} (the bodies it carries are massless along its motion)')


@fast_path(forward_dynamics_one, 'vvvwo', 'ddq', states='q qd tau',
           wrench='f_ext',
           args='q, qd, tau, f_ext', result='pk.nv')
def forward_dynamics(model, q, qd, tau, f_ext=None):
    """
    Return the accelerations ``qdd`` under the forces ``tau`` (O(n), Saha's UDU^T).

    Solves ``M(q) qdd + C(q, qd) qd + g(q) = tau + sum_i J_i^T f_i``; ``f_ext`` as in
    :func:`denoc_ros.inverse_dynamics`. Shape ``(..., nv)``; for a floating model ``qdd[:6]``
    is the base acceleration (the time derivative of ``v[:6]``, base frame) and ``tau[:6]`` the
    wrench applied to the base (zeros: free floating).
    """
    batch, (q, qd, tau), f_ext = prepare(model, (('q', q), ('qd', qd), ('tau', tau)), f_ext)
    (q, qd, tau), f_ext = kernel_arrays(model, (q, qd, tau), f_ext)
    pk = packed(model)
    qdd = np.empty(qd.shape)
    status = forward_dynamics_batch(pk.ints, pk.reals, q, qd, tau, f_ext, qdd)
    if status >= _compile.SINGULAR:
        raise singular_error(model, status - _compile.SINGULAR)
    return finish(batch, qdd, 'forward_dynamics')


# A pivot of M = L L^T at or below this times the largest diagonal entry of M counts as zero
# (the articulated-body recursion's test is the same relative to each body's articulated inertia).
PIVOT_RTOL = 1e-12


def cholesky_factor(model, M):
    """
    Return the Cholesky factors of the mass matrices ``M`` (B, nv, nv).

    Raises :func:`singular_error` naming the degree of freedom of the first pivot that vanishes
    (at or below ``PIVOT_RTOL`` times the largest diagonal entry) in the first such matrix.
    """
    scale = np.max(np.diagonal(M, axis1=-2, axis2=-1), axis=-1)
    try:
        L = np.linalg.cholesky(M)
        pivots = np.diagonal(L, axis1=-2, axis2=-1) ** 2
        if np.all(pivots > PIVOT_RTOL * scale[..., None]):
            return L
    except np.linalg.LinAlgError:
        pass
    for b in range(M.shape[0]):
        # Unpivoted L D L^T of this matrix: D's first pivot that vanishes names the DoF.
        A = np.array(M[b])
        for k in range(A.shape[0]):
            if not A[k, k] > PIVOT_RTOL * scale[b]:
                raise singular_error(model, k)
            column = A[k + 1:, k] / A[k, k]
            A[k + 1:, k + 1:] -= np.outer(column, A[k, k + 1:])
    raise InputError('the mass matrix is not positive definite')  # not reached: D had a pivot


def forward_dynamics_cholesky(model, q, qd, tau, f_ext=None):
    r"""Return ``qdd = M \ (tau - C qd - g + sum J^T f)`` by Cholesky (Saha Eq. 20, 24, 30)."""
    batch, (q, qd, tau), f_ext = prepare(model, (('q', q), ('qd', qd), ('tau', tau)), f_ext)
    (q, qd, tau), f_ext = kernel_arrays(model, (q, qd, tau), f_ext)
    pk = packed(model)
    bias = np.empty(qd.shape)
    inverse_dynamics_batch(pk.ints, pk.reals, q, qd, np.zeros((1, pk.nv)), f_ext, 1.0, bias)
    M = np.empty(qd.shape + (pk.nv,))
    mass_matrix_batch(pk.ints, pk.reals, q, M)
    L = cholesky_factor(model, M)
    y = np.linalg.solve(L, (tau - bias)[..., None])
    qdd = np.linalg.solve(np.swapaxes(L, -1, -2), y)[..., 0]
    return finish(batch, qdd, 'forward_dynamics_cholesky')
