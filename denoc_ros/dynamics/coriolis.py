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
Coriolis/centrifugal terms: two valid matrices C(q, qd) and the torque vector C qd.

Both matrices satisfy ``C qd = ID(q, qd, 0) - g(q)`` and make ``dM/dt - 2 C`` skew-symmetric, yet
they differ entry by entry; both are computed by recursion over the bodies, never by
differentiating ``M``.

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

:func:`coriolis_matrix` -- the Christoffel-consistent ``C_ij = sum_k Gamma_ijk qd_k`` (Pinocchio's
``computeCoriolisMatrix``), by the method of Echeandia & Wensing (2021): with spatial quantities
at the base-frame origin (Featherstone's convention) -- joint screws ``S_j``, body twists ``v_i``,
spatial inertias ``I_i`` --, ``J_i`` the Jacobian of body ``i`` (columns ``S_j`` of its
ancestors-or-self), ``C = sum_i J_i^T (I_i J_dot_i + K_i J_i)`` with
``K_i = 1/2 [(v_i x*) I_i + (I_i v_i) xbar* - I_i (v_i x)]``, ``(f xbar*) v = v x* f``, and
``S_dot_j = v_j x S_j``. As every quantity is in the base frame, the composite sums
``I^c_i = sum_{k in subtree(i)} I_k`` and ``K^c_i`` are plain sums over subtrees and
``C_ab = S_a^T (I^c_m S_dot_b + K^c_m S_b)`` with ``m`` the deeper of ``a, b``.

The public functions run the compiled kernels of :mod:`._kernels` (``convective_state``,
``christoffel_state``, ``newton_euler_state``: the same recursions in scalar code); the NumPy
functions below state them vectorised over a batch.
"""

import numpy as np

from . import _kernels as K
from ._state import finish, kernel_arrays, prepare
from .kinematics import (ancestors, cross, propagate_twist, propagate_wrench,
                         skew, twist_propagation_matrix, twist_propagation_rate)
from .mass_matrix import composite_mass_matrices
from ..model import PRISMATIC

_nd, _F8, _VEC = np.ndarray, K.FLOAT64, K.VECTOR_STRIDES
_coriolis_matrix_one = K.single_state(K.coriolis_matrix_one, globals(), '_coriolis_matrix_one',
                                      'vvm')
_convective_inertia_matrix_one = K.single_state(
    K.convective_inertia_matrix_one, globals(), '_convective_inertia_matrix_one', 'vvm')
_coriolis_torques_one = K.single_state(K.coriolis_torques_one, globals(),
                                       '_coriolis_torques_one', 'vvv')


def _single(kernel, model, q, qd, square):
    """Return the kernel's result for one state given as vectors, or None to take the checks."""
    if (type(q) is _nd and type(qd) is _nd and q.dtype is _F8 and qd.dtype is _F8
            and q.strides == _VEC and qd.strides == _VEC):
        try:  # see inverse_dynamics
            pk = model.packed
            out = np.empty(pk.square if square else pk.n)
            status = kernel(pk.ints, pk.reals, q, qd, out)
        except Exception:
            status = K.BAD_INPUT
        if not status:
            return out
    return None


def _checked(model, kernel, q, qd, square):
    """Run a ``(q, qd)`` batch kernel after the full argument checks; return (batch, out)."""
    batch, (q, qd), _ = prepare(model, (('q', q), ('qd', qd)))
    (q, qd), _ = kernel_arrays(model, (q, qd))
    pk = model.packed
    out = np.empty(q.shape + ((pk.n,) if square else ()))
    kernel(pk.ints, pk.reals, q, qd, out)
    return batch, out


# ----------------------------------------------------------------------------------------------
# Saha's convective inertia matrix


def composite_mass_rates(model, kin):
    """Return ``M'~_i = M'_i + sum_children M'~_c``, ``M'_i = Omega_i M_i E_i`` (Eq. 8, 28)."""
    w = kin.t[..., :3]
    batch, n = w.shape[:2]
    M_prime = np.zeros((batch, n, 6, 6))
    M_prime[..., :3, :3] = skew(w) @ kin.inertia
    for i in range(n - 1, -1, -1):
        k = model.parent[i]
        if k >= 0:
            M_prime[:, k] += M_prime[:, i]
    return M_prime


def composite_convective_matrices(model, kin, M_tilde):
    """Return ``H_i = sum_c B_ci^T H~_ci``, ``H~_ci = M~_c B_dot_ci + H_c B_ci`` (Eq. 28)."""
    batch, n = kin.C.shape[:2]
    H = np.zeros((batch, n, 6, 6))
    for c in range(n - 1, -1, -1):
        i = model.parent[c]
        if i >= 0:
            B_ci = twist_propagation_matrix(kin.C[:, i] - kin.C[:, c])
            B_dot_ci = twist_propagation_rate(kin.t[:, i, 3:] - kin.t[:, c, 3:])
            H_tilde_ci = M_tilde[:, c] @ B_dot_ci + H[:, c] @ B_ci
            H[:, i] += np.swapaxes(B_ci, -1, -2) @ H_tilde_ci
    return H


def _angular_velocity_times(w, x):
    """Return ``Omega x`` for 6-vectors ``x`` (Saha Eq. 2), broadcasting ``w`` (..., 3)."""
    return np.concatenate((cross(w, x[..., :3]), cross(w, x[..., 3:])), axis=-1)


def _matvec(A, x):
    return np.einsum('...kl,...l->...k', A, x)


def convective_matrix(model, kin):
    """Return Saha's ``C`` with entries ``c_ij`` of (corrected) Eq. 29, (B, n, n)."""
    batch, n = kin.C.shape[:2]
    p, C, t = kin.p, kin.C, kin.t
    M_tilde = composite_mass_matrices(model, kin)
    M_prime_tilde = composite_mass_rates(model, kin)
    H = composite_convective_matrices(model, kin, M_tilde)
    p_dot = _angular_velocity_times(t[..., :3], p)                       # Omega_j p_j
    C_conv = np.zeros((batch, n, n))
    for i, js in enumerate(ancestors(model)):
        # Row i, columns j = i, parent(i), ...: p_i^T (M~_i B_ij Omega_j + H~_ij + M'~_i) p_j.
        c_ij = C[:, js] - C[:, i, None]
        c_dot_ij = t[:, js, 3:] - t[:, i, None, 3:]
        s = propagate_twist(c_ij, p[:, js])                               # B_ij p_j
        s_dot = propagate_twist(c_ij, p_dot[:, js])                       # B_ij Omega_j p_j
        s_dot[..., 3:] += cross(c_dot_ij, p[:, js, :3])                   # + B_dot_ij p_j
        wrench = (_matvec(M_tilde[:, i, None], s_dot) + _matvec(H[:, i, None], s)
                  + _matvec(M_prime_tilde[:, i, None], s))
        C_conv[:, i, js] = np.einsum('bk,bjk->bj', p[:, i], wrench)
        # Column i, rows of the proper ancestors a: p_a^T B_ia^T (M~_i Omega_i + H_i + M'~_i) p_i.
        a = js[1:]
        if len(a):
            wrench_i = (_matvec(M_tilde[:, i], p_dot[:, i]) + _matvec(H[:, i], p[:, i])
                        + _matvec(M_prime_tilde[:, i], p[:, i]))
            at_C_a = propagate_wrench(C[:, a] - C[:, i, None], wrench_i[:, None])
            C_conv[:, a, i] = np.einsum('bak,bak->ba', p[:, a], at_C_a)
    return C_conv


def convective_inertia_matrix(model, q, qd):
    """
    Return Saha's convective inertia matrix ``C = N^T (M N_dot + M_dot N)`` (Eq. 20, 25-29).

    Shape ``(..., n, n)``; ``C qd`` is the Coriolis/centrifugal torque and ``dM/dt - 2 C`` is
    skew-symmetric, but ``C`` differs from the Christoffel :func:`coriolis_matrix`.
    """
    out = _single(_convective_inertia_matrix_one, model, q, qd, True)
    if out is not None:
        return out
    batch, out = _checked(model, K.convective_inertia_matrix_batch, q, qd, True)
    return finish(batch, out, 'convective_inertia_matrix')


# ----------------------------------------------------------------------------------------------
# Christoffel-consistent Coriolis matrix (Echeandia & Wensing 2021)


def _motion_cross(v):
    """Return the 6x6 matrix ``v x`` acting on spatial motion vectors [w; v_O]."""
    out = np.zeros(v.shape[:-1] + (6, 6))
    W = skew(v[..., :3])
    out[..., :3, :3] = W
    out[..., 3:, 3:] = W
    out[..., 3:, :3] = skew(v[..., 3:])
    return out


def _force_cross_bar(f):
    """Return the 6x6 matrix ``f xbar*`` with ``(f xbar*) v = v x* f`` for f = [n; f]."""
    out = np.zeros(f.shape[:-1] + (6, 6))
    F = -skew(f[..., 3:])
    out[..., :3, :3] = -skew(f[..., :3])
    out[..., :3, 3:] = F
    out[..., 3:, :3] = F
    return out


def spatial_quantities(model, kin):
    """Return joint screws S_j, twists v_i and spatial inertias I_i at the base-frame origin."""
    e, C = kin.e, kin.C
    prismatic = (model.joint_type == PRISMATIC)[None, :, None]
    S = np.concatenate((np.where(prismatic, 0.0, e), np.where(prismatic, e, cross(kin.origin, e))),
                       axis=-1)
    w, v_C = kin.t[..., :3], kin.t[..., 3:]
    v = np.concatenate((w, v_C + cross(C, w)), axis=-1)
    m = model.mass[None, :, None, None]
    Cx = skew(C)
    inertia = np.empty(C.shape[:2] + (6, 6))
    inertia[..., :3, :3] = kin.inertia + m * (Cx @ np.swapaxes(Cx, -1, -2))
    inertia[..., :3, 3:] = m * Cx
    inertia[..., 3:, :3] = m * np.swapaxes(Cx, -1, -2)
    inertia[..., 3:, 3:] = m * np.eye(3)
    return S, v, inertia


def christoffel_matrix(model, kin):
    """Return ``C = sum_i J_i^T (I_i J_dot_i + K_i J_i)`` by composite bodies, (B, n, n)."""
    batch, n = kin.C.shape[:2]
    S, v, inertia = spatial_quantities(model, kin)
    v_cross = _motion_cross(v)
    S_dot = np.einsum('bnkl,bnl->bnk', v_cross, S)                        # v_j x S_j
    force_cross = -np.swapaxes(v_cross, -1, -2)                             # v_i x*
    K = 0.5 * (force_cross @ inertia + _force_cross_bar(_matvec(inertia, v))
               - inertia @ v_cross)
    I_c, K_c = inertia.copy(), K.copy()
    for i in range(n - 1, -1, -1):
        k = model.parent[i]
        if k >= 0:
            I_c[:, k] += I_c[:, i]
            K_c[:, k] += K_c[:, i]
    C_chr = np.zeros((batch, n, n))
    for i, js in enumerate(ancestors(model)):
        # Row i, columns j = i, parent(i), ...: S_i^T (I^c_i S_dot_j + K^c_i S_j).
        f = _matvec(I_c[:, i, None], S_dot[:, js]) + _matvec(K_c[:, i, None], S[:, js])
        C_chr[:, i, js] = np.einsum('bk,bjk->bj', S[:, i], f)
        # Column i, rows of the proper ancestors a: S_a^T (I^c_i S_dot_i + K^c_i S_i).
        a = js[1:]
        if len(a):
            f_i = _matvec(I_c[:, i], S_dot[:, i]) + _matvec(K_c[:, i], S[:, i])
            C_chr[:, a, i] = np.einsum('bak,bk->ba', S[:, a], f_i)
    return C_chr


def coriolis_matrix(model, q, qd):
    """
    Return the Christoffel-consistent Coriolis matrix, ``C_ij = sum_k Gamma_ijk qd_k``.

    ``Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)``; shape ``(..., n, n)``; equals
    Pinocchio's ``computeCoriolisMatrix``. Computed by composite bodies (Echeandia & Wensing).
    """
    out = _single(_coriolis_matrix_one, model, q, qd, True)
    if out is not None:
        return out
    batch, out = _checked(model, K.coriolis_matrix_batch, q, qd, True)
    return finish(batch, out, 'coriolis_matrix')


def coriolis_torques(model, q, qd):
    """Return ``C(q, qd) qd = ID(q, qd, 0) - g(q)`` by the O(n) recursion of Saha Eq. 30."""
    out = _single(_coriolis_torques_one, model, q, qd, False)
    if out is not None:
        return out
    batch, out = _checked(model, K.coriolis_torques_batch, q, qd, False)
    return finish(batch, out, 'coriolis_torques')
