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
Forward dynamics: the O(n) recursion and the Cholesky cross-check.

:func:`forward_dynamics` is the articulated-body form of Saha's recursive forward dynamics (the
UDU^T decomposition of the GIM ``I = N_d^T N_l^T M N_l N_d`` of Eq. 21, done body by body), in
the DeNOC quantities at the mass centres. Backward pass, children before parents, with the
articulated mass matrix ``M^_i`` (``M_i`` plus what the children pass up) and bias wrench
``eta^_i``::

    psi_i = M^_i p_i,   m^_i = p_i^T psi_i,   phi_i = tau_i - p_i^T eta^_i
    M^_k   += B_ik^T (M^_i - psi_i psi_i^T / m^_i) B_ik                  (k = parent of i)
    eta^_k += B_ik^T (eta^_i + (M^_i - psi_i psi_i^T / m^_i) kappa_i + psi_i phi_i / m^_i)

with ``eta_i = Omega_i M_i E_i t_i - w^E_i`` (Eq. 7-8 and the external wrench) and
``kappa_i = B_dot_ik t_k + Omega_i p_i qd_i`` the velocity-product part of the twist rate
(Eq. 12 differentiated). Forward pass, parents first, from the base's fictitious acceleration
``[0; -g]``::

    qdd_i   = (phi_i - psi_i^T (B_ik t_dot_k + kappa_i)) / m^_i
    t_dot_i = B_ik t_dot_k + kappa_i + p_i qdd_i

:func:`forward_dynamics_cholesky` solves ``M qdd = tau - (C qd + g - sum J^T f)`` with the
mass matrix of Eq. 24 and the bias of Eq. 30 by a Cholesky factorisation, O(n^3).

Both run compiled kernels of :mod:`._kernels` (``articulated_body_state`` is the recursion above
in scalar code); :func:`articulated_body` states it vectorised over a batch.
"""

import numpy as np

from . import _kernels as K
from ._state import finish, kernel_arrays, prepare
from .inverse_dynamics import external_wrenches
from .kinematics import body_kinematics, cross, mass_matrices, propagate_twist, \
    propagate_wrench, twist_propagation_matrix
from ..errors import InputError

_nd, _F8, _VEC, _WRENCHES = np.ndarray, K.FLOAT64, K.VECTOR_STRIDES, K.WRENCH_STRIDES
_forward_dynamics_one = K.single_state(K.forward_dynamics_one, globals(),
                                       '_forward_dynamics_one', 'vvvmv')


def _singular_joint(model, i):
    return InputError(f'the mass matrix is singular: nothing with mass or inertia moves with '
                      f'joint {model.joint_names[i]!r} (the bodies it carries are massless '
                      'along its axis)')


def velocity_product_rates(model, kin, qd):
    """Return ``kappa_i = B_dot_ik t_k + Omega_i p_i qd_i`` (Saha Eq. 12, differentiated)."""
    t, p = kin.t, kin.p
    w = t[..., :3]
    kappa = np.concatenate((cross(w, p[..., :3]), cross(w, p[..., 3:])), axis=-1)
    kappa *= qd[..., None]
    for i in range(model.dof):
        k = model.parent[i]
        if k >= 0:
            kappa[:, i, 3:] += cross(t[:, k, 3:] - t[:, i, 3:], t[:, k, :3])
    return kappa


def articulated_body(model, q, qd, tau, f_ext, gravity):
    """Return ``qdd`` by the O(n) articulated-body (UDU^T) recursion for (B, n) arrays."""
    batch, n = q.shape
    kin = body_kinematics(model, q, qd)
    w = kin.t[..., :3]
    kappa = velocity_product_rates(model, kin, qd)
    M_hat = mass_matrices(model, kin)
    eta_hat = np.zeros((batch, n, 6))
    eta_hat[..., :3] = cross(w, np.einsum('bnij,bnj->bni', kin.inertia, w))
    if f_ext is not None:
        eta_hat -= external_wrenches(kin, f_ext)
    psi = np.empty((batch, n, 6))
    m_hat = np.empty((batch, n))
    phi = np.empty((batch, n))
    for i in range(n - 1, -1, -1):
        psi[:, i] = np.einsum('bkl,bl->bk', M_hat[:, i], kin.p[:, i])
        m_hat[:, i] = np.einsum('bk,bk->b', kin.p[:, i], psi[:, i])
        if not np.all(m_hat[:, i] > 1e-12 * np.abs(M_hat[:, i]).max(axis=(-1, -2))):
            raise _singular_joint(model, i)
        phi[:, i] = tau[:, i] - np.einsum('bk,bk->b', kin.p[:, i], eta_hat[:, i])
        k = model.parent[i]
        if k >= 0:
            M_bar = M_hat[:, i] - psi[:, i, :, None] * psi[:, i, None, :] / m_hat[:, i, None, None]
            eta_bar = (eta_hat[:, i] + np.einsum('bkl,bl->bk', M_bar, kappa[:, i])
                       + psi[:, i] * (phi[:, i] / m_hat[:, i])[:, None])
            c_ik = kin.C[:, k] - kin.C[:, i]
            B_ik = twist_propagation_matrix(c_ik)
            M_hat[:, k] += np.swapaxes(B_ik, -1, -2) @ M_bar @ B_ik
            eta_hat[:, k] += propagate_wrench(c_ik, eta_bar)
    qdd = np.empty((batch, n))
    t_dot = np.empty((batch, n, 6))
    base_rate = np.concatenate((np.zeros(3), -np.asarray(gravity, dtype=float)))
    for i in range(n):
        k = model.parent[i]
        if k < 0:
            a = base_rate + kappa[:, i]
        else:
            a = propagate_twist(kin.C[:, k] - kin.C[:, i], t_dot[:, k]) + kappa[:, i]
        qdd[:, i] = (phi[:, i] - np.einsum('bk,bk->b', psi[:, i], a)) / m_hat[:, i]
        t_dot[:, i] = a + kin.p[:, i] * qdd[:, i, None]
    return qdd


def forward_dynamics(model, q, qd, tau, f_ext=None):
    """
    Return the joint accelerations ``qdd`` under joint forces ``tau`` (O(n), Saha's UDU^T).

    Solves ``M(q) qdd + C(q, qd) qd + g(q) = tau + sum_i J_i^T f_i``; ``f_ext`` as in
    :func:`denoc_ros.inverse_dynamics`. Shape ``(..., n)``.
    """
    if (type(q) is _nd and type(qd) is _nd and type(tau) is _nd and q.dtype is _F8
            and qd.dtype is _F8 and tau.dtype is _F8 and q.strides == _VEC
            and qd.strides == _VEC and tau.strides == _VEC
            and (f_ext is None or (type(f_ext) is _nd and f_ext.dtype is _F8
                                   and f_ext.strides == _WRENCHES))):
        try:  # one state: straight to the kernel (see inverse_dynamics)
            pk = model.packed
            out = np.empty(pk.n)
            if f_ext is None:
                status = _forward_dynamics_one(pk.ints, pk.reals, q, qd, tau, pk.no_wrench, out)
            elif len(f_ext) == pk.n:  # (0, 6) would read as "no wrenches" in the kernel
                status = _forward_dynamics_one(pk.ints, pk.reals, q, qd, tau, f_ext, out)
            else:
                status = K.BAD_INPUT
        except Exception:
            status = K.BAD_INPUT
        if not status:
            return out
    batch, (q, qd, tau), f_ext = prepare(model, (('q', q), ('qd', qd), ('tau', tau)), f_ext)
    (q, qd, tau), f_ext = kernel_arrays(model, (q, qd, tau), f_ext)
    pk = model.packed
    qdd = np.empty(q.shape)
    status = K.forward_dynamics_batch(pk.ints, pk.reals, q, qd, tau, f_ext, qdd)
    if status >= K.SINGULAR:
        raise _singular_joint(model, status - K.SINGULAR)
    return finish(batch, qdd, 'forward_dynamics')


def cholesky_solve(M, b):
    """Return ``x`` with ``M x = b`` for SPD ``M`` (B, n, n), by ``M = L L^T`` and substitution."""
    L = np.linalg.cholesky(M)
    n = b.shape[-1]
    y = np.empty_like(b)
    for i in range(n):
        y[:, i] = (b[:, i] - np.einsum('bk,bk->b', L[:, i, :i], y[:, :i])) / L[:, i, i]
    x = np.empty_like(b)
    for i in range(n - 1, -1, -1):
        x[:, i] = (y[:, i] - np.einsum('bk,bk->b', L[:, i + 1:, i], x[:, i + 1:])) / L[:, i, i]
    return x


def forward_dynamics_cholesky(model, q, qd, tau, f_ext=None):
    r"""Return ``qdd = M \ (tau - C qd - g + sum J^T f)`` by Cholesky (Saha Eq. 20, 24, 30)."""
    batch, (q, qd, tau), f_ext = prepare(model, (('q', q), ('qd', qd), ('tau', tau)), f_ext)
    (q, qd, tau), f_ext = kernel_arrays(model, (q, qd, tau), f_ext)
    pk = model.packed
    bias = np.empty(q.shape)
    K.inverse_dynamics_batch(pk.ints, pk.reals, q, qd, np.zeros((1, pk.n)), f_ext, 1.0, bias)
    M = np.empty(q.shape + (pk.n,))
    K.mass_matrix_batch(pk.ints, pk.reals, q, M)
    try:
        qdd = cholesky_solve(M, tau - bias)
    except np.linalg.LinAlgError:
        bad = int(np.argmin(np.min(np.linalg.eigvalsh(M), axis=-1)))
        raise InputError('the mass matrix is not positive definite (a joint moves nothing with '
                         f'mass or inertia; batch element {bad})') from None
    return finish(batch, qdd, 'forward_dynamics_cholesky')
