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
Lagrange equations by the inner-product method (Feng Dekun 1986, seed 004): an O(n^4) reference.

The equations of motion of joint ``i`` in Uicker/Kahn form (Feng Eq. 1; no actuator inertia)::

    F_i = sum_j D_ij qdd_j + sum_j sum_k D_ijk qd_j qd_k + D_i
    D_ij  = sum_p Trace(dT_p/dq_j J_p dT_p^T/dq_i)                       (Feng Eq. 2)
    D_ijk = sum_p Trace(d2T_p/dq_j dq_k J_p dT_p^T/dq_i)                 (Feng Eq. 3)
    D_i   = -sum_p m_p g^T dT_p/dq_i r_p                                   (Feng Eq. 4)

with ``T_p`` the 4x4 homogeneous transform of body ``p`` in the base frame, ``J_p`` its 4x4
pseudo-inertia matrix, ``r_p = [c_p; 1]`` its mass centre in body coordinates and
``g = [g; 0]``. Feng's sums run over ``p >= max(i, j, ...)`` on a serial chain; on a tree they run
over the bodies ``p`` that joints ``i``, ``j`` (and ``k``) all support, since ``dT_p/dq_j = 0``
for any other ``p``. Each trace is evaluated by the inner-product identity (Feng Eq. 5)::

    Trace(B J C^T) = sum_r sum_s lambda_rs b_r . c_s

(``lambda_rs`` the entries of ``J``, ``b_r`` and ``c_s`` the columns of ``B`` and ``C``; only
their first three elements, as the last row of a derivative of ``T_p`` is zero).

The derivatives use Uicker's 4x4 joint generators ``Q_j`` (the joint's twist in its own frame):
``dT_p/dq_j = T_j Q_j (T_j^-1 T_p)`` and, for ``j`` supporting ``k`` (or ``j == k``),
``d2T_p/dq_j dq_k = T_j Q_j (T_j^-1 T_k) Q_k (T_k^-1 T_p)``. The kinematics are written here
from the model arrays, independently of :mod:`denoc_ros.dynamics.kinematics`. Single states
of fixed-base models only (a floating base raises InputError): this module is a check on the
O(n) algorithms, not a fast path.
"""

import numpy as np

from .dynamics._state import check_model, joint_vector
from .errors import InputError
from .model import PRISMATIC
from .spatial import axis_rotation, parallel_axis, skew


def inner_product_trace(B, J, C):
    """
    Return ``Trace(B J C^T)`` as ``sum_rs lambda_rs b_r . c_s`` (Feng Eq. 5).

    ``B`` and ``C`` are (m, k) matrices with columns ``b_r``, ``c_s``; ``J`` is (k, k) with
    entries ``lambda_rs``. No triple matrix product is formed.
    """
    B, J, C = np.asarray(B, dtype=float), np.asarray(J, dtype=float), np.asarray(C, dtype=float)
    if B.ndim != 2 or B.shape != C.shape or J.shape != (B.shape[1], B.shape[1]):
        raise InputError(f'inner_product_trace needs B, C of one shape (m, k) and J (k, k); got '
                         f'B {B.shape}, J {J.shape}, C {C.shape}')
    total = 0.0
    for r in range(J.shape[0]):
        for s in range(J.shape[1]):
            if J[r, s] != 0.0:
                total += J[r, s] * float(np.dot(B[:, r], C[:, s]))
    return total


def joint_generator(model, i):
    """
    Return Uicker's 4x4 generator ``Q_i`` of joint ``i`` in its own frame: ``dA/dq = A Q``.

    Revolute about the unit axis ``a``: ``[[a x 1, 0], [0, 0]]``; prismatic along ``a``:
    ``[[0, a], [0, 0]]`` (for ``a = z`` these are Uicker's ``Q`` matrices).
    """
    Q = np.zeros((4, 4))
    a = np.asarray(model.axis[i], dtype=float)
    if model.joint_type[i] == PRISMATIC:
        Q[:3, 3] = a
    else:
        Q[:3, :3] = skew(a)
    return Q


def joint_transform(model, i, qi):
    """Return the 4x4 transform ``A_i(q_i)`` of body ``i`` in its parent's frame (or the base)."""
    fixed = np.eye(4)
    fixed[:3, :3] = model.joint_rotation[i]
    fixed[:3, 3] = model.joint_translation[i]
    motion = np.eye(4)
    a = np.asarray(model.axis[i], dtype=float)
    if model.joint_type[i] == PRISMATIC:
        motion[:3, 3] = a * qi
    else:
        motion[:3, :3] = axis_rotation(a, qi)      # Rodrigues: exp([a]x q_i)
    return fixed @ motion


def link_transforms(model, q):
    """Return ``T_p`` (n, 4, 4): body frames in the base frame, ``T_p = T_parent(p) A_p``."""
    n = model.dof
    T = np.empty((n, 4, 4))
    for p in range(n):
        k = model.parent[p]
        A = joint_transform(model, p, q[p])
        T[p] = A if k < 0 else T[k] @ A
    return T


def supports(model):
    """Return, per body ``p``, the set of joints ``j`` with ``dT_p/dq_j != 0`` (``p`` included)."""
    out = []
    for p in range(model.dof):
        chain, k = {p}, model.parent[p]
        while k >= 0:
            chain.add(int(k))
            k = model.parent[k]
        out.append(chain)
    return out


def pseudo_inertia(model, p):
    """
    Return the 4x4 pseudo-inertia ``J_p = int [r; 1][r; 1]^T dm`` of body ``p`` (body frame).

    ``J = [[tr(I_o)/2 1 - I_o, m c], [m c^T, m]]`` with ``I_o = I_c + m (c.c 1 - c c^T)`` the
    inertia about the body-frame origin (parallel axes, Craig ch. 6).
    """
    m, c = float(model.mass[p]), np.asarray(model.com[p], dtype=float)
    I_o = parallel_axis(m, c, model.inertia[p])
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(I_o) * np.eye(3) - I_o
    J[:3, 3] = J[3, :3] = m * c
    J[3, 3] = m
    return J


class _Derivatives:
    """First and second derivatives of every ``T_p`` at one configuration (Uicker)."""

    def __init__(self, model, q):
        n = model.dof
        self.model = model
        self.T = link_transforms(model, q)
        self.T_inv = np.linalg.inv(self.T)
        self.Q = [joint_generator(model, j) for j in range(n)]
        self.support = supports(model)
        # T_j Q_j T_j^-1: the joint's twist in base coordinates, so dT_p/dq_j = (it) T_p.
        self.twist = [self.T[j] @ self.Q[j] @ self.T_inv[j] for j in range(n)]

    def first(self, p, j):
        """Return ``dT_p/dq_j = T_j Q_j (T_j^-1 T_p)``, zero unless joint j supports p."""
        if j not in self.support[p]:
            return None
        return self.twist[j] @ self.T[p]

    def second(self, p, j, k):
        """Return ``d2T_p/dq_j dq_k``; the joint nearer the base acts last (outermost)."""
        if j not in self.support[p] or k not in self.support[p]:
            return None
        outer, inner = (j, k) if j in self.support[k] else (k, j)
        return self.twist[outer] @ self.twist[inner] @ self.T[p]


def _fixed_base(model):
    """Raise InputError unless ``model`` is a fixed-base RobotModel (the reference's scope)."""
    check_model(model)
    if model.floating:
        raise InputError(f'model {model.name!r} has a floating base: the Lagrange reference '
                         'covers fixed-base models only (revolute and prismatic joints); use '
                         'the floating-base model with the denoc_ros.dynamics functions')


def _state(model, name, value):
    _fixed_base(model)
    arr = joint_vector(model, name, value)
    if arr.shape != (model.dof,):
        raise InputError(f'{name} has shape {arr.shape}: the Lagrange reference takes one state '
                         f'of length {model.dof}')
    return arr


def _first_derivatives(der, p):
    """Return ``{j: dT_p/dq_j[:3]}`` over the joints that support body ``p``."""
    return {j: der.first(p, j)[:3] for j in der.support[p]}


def lagrange_mass_matrix(model, q):
    """Return ``D_ij = sum_p Trace(dT_p/dq_j J_p dT_p^T/dq_i)`` (Feng Eq. 2), (n, n)."""
    q = _state(model, 'q', q)
    n = model.dof
    der = _Derivatives(model, q)
    D = np.zeros((n, n))
    for p in range(n):
        J = pseudo_inertia(model, p)
        U = _first_derivatives(der, p)
        for i in U:
            for j in U:
                if j <= i:
                    D[i, j] += inner_product_trace(U[j], J, U[i])
    return D + np.tril(D, -1).T


def lagrange_coriolis_coefficients(model, q):
    """Return ``D_ijk = sum_p Trace(d2T_p/dq_j dq_k J_p dT_p^T/dq_i)`` (Feng Eq. 3), (n, n, n)."""
    q = _state(model, 'q', q)
    n = model.dof
    der = _Derivatives(model, q)
    D = np.zeros((n, n, n))
    for p in range(n):
        J = pseudo_inertia(model, p)
        U = _first_derivatives(der, p)
        for j in U:
            for k in U:
                if k < j:
                    continue
                U2 = der.second(p, j, k)[:3]
                for i in U:
                    D[i, j, k] += inner_product_trace(U2, J, U[i])
    upper = np.triu(np.ones((n, n), dtype=bool), 1)
    D[:, upper.T] = np.swapaxes(D, 1, 2)[:, upper.T]     # D_ijk = D_ikj
    return D


def lagrange_coriolis_torques(model, q, qd):
    """Return the velocity terms ``sum_jk D_ijk qd_j qd_k`` (Feng Eq. 1, 3), (n,)."""
    qd = _state(model, 'qd', qd)
    return np.einsum('ijk,j,k->i', lagrange_coriolis_coefficients(model, q), qd, qd)


def lagrange_gravity_torques(model, q):
    """Return ``D_i = -sum_p m_p g^T dT_p/dq_i r_p`` (Feng Eq. 4), (n,)."""
    q = _state(model, 'q', q)
    n = model.dof
    der = _Derivatives(model, q)
    g = np.append(model.gravity, 0.0)
    D = np.zeros(n)
    for p in range(n):
        r = np.append(model.com[p], 1.0)
        for i in der.support[p]:
            D[i] -= model.mass[p] * (g @ der.first(p, i) @ r)
    return D


def lagrange_inverse_dynamics(model, q, qd, qdd):
    """Return ``F_i = sum_j D_ij qdd_j + sum_jk D_ijk qd_j qd_k + D_i`` (Feng Eq. 1), (n,)."""
    qdd = _state(model, 'qdd', qdd)
    return (lagrange_mass_matrix(model, q) @ qdd + lagrange_coriolis_torques(model, q, qd)
            + lagrange_gravity_torques(model, q))
