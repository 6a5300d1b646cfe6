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
The forward recursion shared by every dynamics algorithm: body poses, DeNOC vectors, twists.

Notation follows Saha (1999), seed 000. Every vector is expressed in the base frame. For body
``i`` (the child link of joint ``i``):

* ``O_i`` -- origin of the body frame, a point of joint ``i``'s axis (the joint frame origin);
* ``C_i`` -- its mass centre, ``d_i = C_i - O_i``;
* ``e_i`` -- unit vector of joint ``i``'s axis;
* ``t_i = [w_i; v_i]`` -- twist at the mass centre: angular velocity and velocity of ``C_i``
  (Eq. 1); wrenches ``[n_i; f_i]`` are moment about ``C_i`` and force;
* ``B_ij = [[1, 0], [c_ij x 1, 1]]``, ``c_ij = C_j - C_i`` -- twist propagation matrix, so
  that ``t_i = B_ij t_j + p_i qd_i`` (Eq. 12-13); its transpose carries a wrench at ``C_i``
  to ``C_j``;
* ``p_i = [e_i; e_i x d_i]`` (revolute, Eq. 13) or ``[0; e_i]`` (prismatic, Eq. 15) -- joint-rate
  propagation vector; its time derivative is ``Omega_i p_i`` (Eq. 26, for both joint types);
* ``M_i = [[I_i, 0], [0, m_i 1]]`` -- 6x6 mass matrix about ``C_i`` (Eq. 2) and
  ``Omega_i = diag(w_i x 1, w_i x 1)`` -- angular-velocity matrix (Eq. 2).

Arrays carry a leading batch axis ``B`` and a body axis ``n``; the loops run over bodies in
parents-first order and are vectorised over the batch.
"""

from typing import NamedTuple, Optional

import numpy as np

from ..model import PRISMATIC


class BodyKinematics(NamedTuple):
    """Per-body kinematic quantities of one call (arrays, leading axes ``(B, n)``)."""

    R: np.ndarray        # (B, n, 3, 3) orientation of body frame i in the base frame
    origin: np.ndarray   # (B, n, 3) origin O_i of body frame i (on joint i's axis)
    e: np.ndarray        # (B, n, 3) unit axis e_i of joint i
    C: np.ndarray        # (B, n, 3) mass centre C_i
    d: np.ndarray        # (B, n, 3) d_i = C_i - O_i
    inertia: np.ndarray  # (B, n, 3, 3) inertia tensor I_i about C_i, base-frame axes
    p: np.ndarray        # (B, n, 6) joint-rate propagation vectors p_i (Eq. 13, 15)
    t: Optional[np.ndarray] = None  # (B, n, 6) twists t_i = [w_i; v_i] at C_i (Eq. 1, 12)


def skew(a):
    """Return the cross-product tensor ``a x 1`` of vectors ``a`` (..., 3) -> (..., 3, 3)."""
    out = np.zeros(a.shape + (3,))
    out[..., 0, 1] = -a[..., 2]
    out[..., 0, 2] = a[..., 1]
    out[..., 1, 0] = a[..., 2]
    out[..., 1, 2] = -a[..., 0]
    out[..., 2, 0] = -a[..., 1]
    out[..., 2, 1] = a[..., 0]
    return out


def cross(a, b):
    """Return the cross product of broadcastable vector arrays (..., 3)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=-1)


def axis_rotation(axis, angle):
    """Return rotation matrices (B, 3, 3) about a fixed unit ``axis`` by angles (B,)."""
    K = skew(np.asarray(axis, dtype=float))
    s = np.sin(angle)[:, None, None]
    c = np.cos(angle)[:, None, None]
    return np.eye(3) + s * K + (1.0 - c) * (K @ K)


def twist_propagation_matrix(c_ij):
    """Return ``B_ij = [[1, 0], [c_ij x 1, 1]]`` (Saha Eq. 13) for ``c_ij`` (..., 3)."""
    out = np.zeros(c_ij.shape[:-1] + (6, 6))
    out[..., :, :] = np.eye(6)
    out[..., 3:, :3] = skew(c_ij)
    return out


def twist_propagation_rate(c_dot_ij):
    """Return ``dB_ij/dt = [[0, 0], [c_dot_ij x 1, 0]]`` (time derivative of Saha Eq. 13)."""
    out = np.zeros(c_dot_ij.shape[:-1] + (6, 6))
    out[..., 3:, :3] = skew(c_dot_ij)
    return out


def angular_velocity_matrix(w):
    """Return ``Omega_i = diag(w_i x 1, w_i x 1)`` (Saha Eq. 2) for ``w`` (..., 3)."""
    out = np.zeros(w.shape[:-1] + (6, 6))
    W = skew(w)
    out[..., :3, :3] = W
    out[..., 3:, 3:] = W
    return out


def propagate_twist(c_ij, t_j):
    """Return ``B_ij t_j`` (Saha Eq. 12 without the joint term): move a twist from C_j to C_i."""
    v_i = t_j[..., 3:] + cross(c_ij, t_j[..., :3])
    return np.concatenate((np.broadcast_to(t_j[..., :3], v_i.shape), v_i), axis=-1)


def propagate_wrench(c_ij, w_i):
    """Return ``B_ij^T w_i`` (Saha Eq. 30): move a wrench [n; f] from C_i to C_j."""
    n_j = w_i[..., :3] - cross(c_ij, w_i[..., 3:])
    return np.concatenate((n_j, np.broadcast_to(w_i[..., 3:], n_j.shape)), axis=-1)


def mass_matrices(model, kin):
    """Return the 6x6 body mass matrices ``M_i`` about ``C_i`` (Saha Eq. 2), (B, n, 6, 6)."""
    batch, n = kin.C.shape[:2]
    M = np.zeros((batch, n, 6, 6))
    M[:, :, :3, :3] = kin.inertia
    M[:, :, 3:, 3:] = model.mass[None, :, None, None] * np.eye(3)
    return M


def body_kinematics(model, q, qd=None):
    """Return poses, joint-rate propagation vectors p_i and twists t_i (Saha Eq. 12-15)."""
    batch, n = q.shape
    R = np.empty((batch, n, 3, 3))
    origin = np.empty((batch, n, 3))
    for i in range(n):
        Rj, xj, a = model.joint_rotation[i], model.joint_translation[i], model.axis[i]
        if model.joint_type[i] == PRISMATIC:
            R_local = np.broadcast_to(Rj, (batch, 3, 3))
            x_local = xj + q[:, i, None] * (Rj @ a)
        else:
            R_local = Rj @ axis_rotation(a, q[:, i])
            x_local = np.broadcast_to(xj, (batch, 3))
        k = model.parent[i]
        if k < 0:
            R[:, i] = R_local
            origin[:, i] = x_local
        else:
            R[:, i] = R[:, k] @ R_local
            origin[:, i] = origin[:, k] + np.einsum('bij,bj->bi', R[:, k], x_local)
    e = np.einsum('bnij,nj->bni', R, model.axis)
    d = np.einsum('bnij,nj->bni', R, model.com)
    C = origin + d
    inertia = R @ model.inertia[None] @ np.swapaxes(R, -1, -2)
    prismatic = (model.joint_type == PRISMATIC)[None, :, None]
    p = np.concatenate((np.where(prismatic, 0.0, e), np.where(prismatic, e, cross(e, d))),
                       axis=-1)
    kin = BodyKinematics(R=R, origin=origin, e=e, C=C, d=d, inertia=inertia, p=p)
    if qd is None:
        return kin
    return kin._replace(t=twists(model, kin, qd))


def twists(model, kin, qd):
    """Return the twists ``t_i = B_ij t_j + p_i qd_i`` at the mass centres (Saha Eq. 12)."""
    batch, n = qd.shape
    t = np.empty((batch, n, 6))
    for i in range(n):
        k = model.parent[i]
        t[:, i] = kin.p[:, i] * qd[:, i, None]
        if k >= 0:
            t[:, i] += propagate_twist(kin.C[:, k] - kin.C[:, i], t[:, k])
    return t


def ancestors(model):
    """Return, per body ``i``, the int array ``[i, parent(i), ...]`` of its ancestors-or-self."""
    out = []
    for i in range(model.dof):
        chain = [i]
        while model.parent[chain[-1]] >= 0:
            chain.append(int(model.parent[chain[-1]]))
        out.append(np.array(chain, dtype=np.int64))
    return out
