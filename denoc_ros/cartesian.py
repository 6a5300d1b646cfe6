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
Cartesian (operational-space) quantities of a link frame: pose, Jacobian, J-dot qd, dynamics.

Conventions (DESIGN.md): every vector is expressed in the base frame; a 6-vector is
``[linear; angular]``, the linear part being the velocity (acceleration) of the frame's
origin. The frame is any link the model keeps (:meth:`RobotModel.frame`), default the tip.

==========================  ===============================================================
function                    equations
==========================  ===============================================================
frame_pose                  forward kinematics, R = R_b R_f, p = O_b + R_b t_f
jacobian                    columns [e_j x (p - O_j); e_j] (revolute), [e_j; 0] (prismatic)
jacobian_dot_times_qd       seed 001: d/dt of the joint screws; r_dd = a + alpha x r + w x v
cartesian_dynamics          seed 002 (Craig): M_x = J^-T M J^-1, V_x, G_x, generalised to
                            Lambda = (J M^-1 J^T)^+ for redundant, deficient or singular J
==========================  ===============================================================

Every function accepts leading batch axes: ``q`` of shape ``(..., n)`` gives a pose of shape
``(..., 3, 3)`` and ``(..., 3)``, a Jacobian of shape ``(..., 6, n)`` and so on.

:func:`jacobian`, :func:`jacobian_dot_times_qd` and :func:`cartesian_dynamics` run the compiled
kernels of :mod:`denoc_ros.dynamics._kernels` (``jacobian_state``,
``jacobian_dot_times_qd_state``, and ``cartesian_terms_batch`` for J, Jdot qd, M, C qd and g in
one pass); the NumPy functions below state the same formulas vectorised over a batch.
"""

from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from .dynamics import _kernels as K
from .dynamics import coriolis_torques, gravity_torques, mass_matrix
from .dynamics._state import finish, kernel_arrays, prepare
from .dynamics.kinematics import ancestors, body_kinematics, cross
from .errors import InputError
from .model import PRISMATIC

__all__ = ['CartesianDynamics', 'cartesian_dynamics', 'frame_pose', 'jacobian',
           'jacobian_dot_times_qd']

_jacobian_one = K.single_state(K.jacobian_one, globals(), '_jacobian_one', 'virm')

# Singular values of L^-1 J^T below EPS * (largest one) are round-off: the reported condition
# number of J M^-1 J^T is capped at 1 / EPS**2 (about 2.0e31) instead of being infinite.
EPS = np.finfo(float).eps
CONDITION_CAP = 1.0 / EPS ** 2


def _resolve_frame(model, frame):
    """Return the :class:`Frame` called ``frame`` (None or '': the tip) or raise InputError."""
    if frame is not None and not isinstance(frame, str):
        raise InputError(f'frame must be a link name (str) or None, got {type(frame).__name__}')
    return model.frame(frame)


def _pose(model, kin, frame):
    """Return the pose (R (B, 3, 3), p (B, 3)) of ``frame`` from the body poses ``kin``."""
    batch = kin.R.shape[0]
    if frame.body < 0:
        return (np.broadcast_to(frame.rotation, (batch, 3, 3)).copy(),
                np.broadcast_to(frame.translation, (batch, 3)).copy())
    R_b = kin.R[:, frame.body]
    return R_b @ frame.rotation, kin.origin[:, frame.body] + R_b @ frame.translation


def _path(model, frame):
    """Return the joints from the base to ``frame``'s body and a prismatic mask, both (k,)."""
    if frame.body < 0:
        path = np.zeros(0, dtype=np.int64)
    else:
        path = ancestors(model)[frame.body]
    return path, model.joint_type[path] == PRISMATIC


def _jacobian(model, kin, frame, p):
    """Return J (B, 6, n): columns [e_j x (p - O_j); e_j] or [e_j; 0] on the path, else 0."""
    batch, n = kin.R.shape[0], model.dof
    J = np.zeros((batch, 6, n))
    path, prismatic = _path(model, frame)
    if path.size:
        e = kin.e[:, path]                                   # (B, k, 3)
        r = p[:, None, :] - kin.origin[:, path]              # p - O_j
        pr = prismatic[None, :, None]
        J[:, :3, path] = np.swapaxes(np.where(pr, e, cross(e, r)), 1, 2)
        J[:, 3:, path] = np.swapaxes(np.where(pr, 0.0, e), 1, 2)
    return J


def _jacobian_dot_times_qd(model, kin, frame, p, qd):
    """
    Return Jdot qd (B, 6): the time derivative of each Jacobian column, weighted by qd.

    With ``w_j`` the angular velocity of body j and ``v_X`` point velocities (seed 001:
    ``e_dot = w x e``, ``r_dot = v_p - v_O``): revolute column derivative
    ``[(w_j x e_j) x (p - O_j) + e_j x (v_p - v_Oj); w_j x e_j]``, prismatic ``[w_j x e_j; 0]``.
    This is the classical acceleration of the frame origin at qdd = 0, w x v term included.
    """
    batch = kin.R.shape[0]
    out = np.zeros((batch, 6))
    path, prismatic = _path(model, frame)
    if not path.size:
        return out
    b = frame.body
    w_b, v_Cb = kin.t[:, b, :3], kin.t[:, b, 3:]
    v_p = v_Cb + cross(w_b, p - kin.C[:, b])                  # velocity of the frame origin
    w = kin.t[:, path, :3]                                    # (B, k, 3)
    v_O = kin.t[:, path, 3:] - cross(w, kin.d[:, path])       # velocity of O_j (on axis j)
    e = kin.e[:, path]
    r = p[:, None, :] - kin.origin[:, path]
    e_dot = cross(w, e)
    pr = prismatic[None, :, None]
    lin = np.where(pr, e_dot, cross(e_dot, r) + cross(e, v_p[:, None, :] - v_O))
    ang = np.where(pr, 0.0, e_dot)
    weights = qd[:, path, None]
    out[:, :3] = np.sum(lin * weights, axis=1)
    out[:, 3:] = np.sum(ang * weights, axis=1)
    return out


def frame_pose(model, q, frame: Optional[str] = None):
    """
    Return the pose ``(R, p)`` of a link frame in the base frame: R = R_b R_f, p = O_b + R_b t_f.

    ``frame``: a link name, default the tip. ``q`` (..., n) gives R (..., 3, 3) and p (..., 3).
    """
    batch, (qf,), _ = prepare(model, (('q', q),))
    fr = _resolve_frame(model, frame)
    R, p = _pose(model, body_kinematics(model, qf), fr)
    return finish(batch, R, 'frame rotation'), finish(batch, p, 'frame position')


def jacobian(model, q, frame: Optional[str] = None):
    """
    Return the geometric Jacobian J (..., 6, n) of a frame: rows [linear; angular], base axes.

    ``J qd = [v_p; w]``, the velocity of the frame origin and the angular velocity of its link.
    Columns of joints not between the base and the frame's link are zero (trees).
    """
    if type(q) is np.ndarray and q.dtype is K.FLOAT64 and q.strides == K.VECTOR_STRIDES:
        try:  # one state: straight to the kernel (see denoc_ros.inverse_dynamics)
            pk = model.packed
            body, data = pk.frames[model.tip_link if frame is None or frame == '' else frame]
            out = np.empty((6, pk.n))
            status = _jacobian_one(pk.ints, pk.reals, q, body, data, out)
        except Exception:
            status = K.BAD_INPUT
        if not status:
            return out
    batch, (qf,), _ = prepare(model, (('q', q),))
    fr = _resolve_frame(model, frame)
    (qf,), _ = kernel_arrays(model, (qf,))
    pk = model.packed
    body, data = pk.frames[fr.name]
    J = np.empty((qf.shape[0], 6, pk.n))
    K.jacobian_batch(pk.ints, pk.reals, qf, body, data, J)
    return finish(batch, J, 'jacobian')


def jacobian_dot_times_qd(model, q, qd, frame: Optional[str] = None):
    """
    Return Jdot qd (..., 6): the classical acceleration [linear; angular] of the frame origin.

    It is the acceleration when qdd = 0 and no gravity acts (seed 001, ``a_ee = J qdd + Jdot
    qd``), converted to the point acceleration ``r_dd = a + alpha x r + w x v``: the linear part
    is the second time derivative of the origin's position, centripetal term included.
    """
    batch, (qf, qdf), _ = prepare(model, (('q', q), ('qd', qd)))
    fr = _resolve_frame(model, frame)
    (qf, qdf), _ = kernel_arrays(model, (qf, qdf))
    pk = model.packed
    body, data = pk.frames[fr.name]
    out = np.empty((qf.shape[0], 6))
    K.jacobian_dot_times_qd_batch(pk.ints, pk.reals, qf, qdf, body, data, out)
    return finish(batch, out, 'jacobian_dot_times_qd')


@dataclass(frozen=True, eq=False)
class CartesianDynamics:
    """
    Operational-space dynamics of one frame: ``F = Lambda x_dd + mu + p`` (Craig, seed 002).

    Arrays carry the batch axes of the state (shapes below are for a single state).
    ``jacobian`` J (6, n); ``inertia`` Lambda (6, 6); ``coriolis`` mu (6,); ``gravity`` p (6,);
    ``jacobian_bar`` J_bar = M^-1 J^T Lambda (n, 6), the dynamically consistent generalised
    inverse; ``condition_number`` of J M^-1 J^T (a float, or an array for a batch, at most
    about 2.0e31); ``frame`` the link name.
    """

    jacobian: np.ndarray
    inertia: np.ndarray
    coriolis: np.ndarray
    gravity: np.ndarray
    jacobian_bar: np.ndarray
    condition_number: Union[float, np.ndarray]
    frame: str


def _check_nonnegative(name, value):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f'{name} must be a number, got {value!r}') from None
    if not np.isfinite(x) or x < 0.0:
        raise InputError(f'{name} must be a finite number >= 0, got {value!r}')
    return x


def cartesian_dynamics(model, q, qd, frame: Optional[str] = None, damping: float = 0.0,
                       rcond: float = 1e-12):
    """
    Return the Cartesian dynamics: Lambda = (J M^-1 J^T)^-1, mu, p (Craig's M_x, V_x, G_x).

    With M the mass matrix, C qd the Coriolis/centrifugal torques and g the gravity torques:
    ``Lambda = (J M^-1 J^T)^-1``, ``mu = Lambda (J M^-1 C qd - Jdot qd)``,
    ``p = Lambda J M^-1 g``; for a square invertible J these equal Craig's
    ``J^-T M J^-1``, ``J^-T (C qd - M J^-1 Jdot qd)`` and ``J^-T g`` (seed 002).

    Inverting ``A = J M^-1 J^T`` (6 x 6, symmetric positive semi-definite): with the Cholesky
    factor ``M = L L^T``, ``A = Y^T Y`` where ``Y = L^-1 J^T``; the SVD ``Y = U S V^T`` gives
    the eigen-decomposition ``A = V S^2 V^T`` (eigenvalues ``lambda_i = s_i^2``, accurate
    even when A is badly conditioned).

    * ``damping == 0`` (default): Moore-Penrose pseudo-inverse, ``Lambda = V diag(1/lambda_i)
      V^T`` over the eigenvalues ``lambda_i > rcond * lambda_max`` and 0 on the others. Where
      A is invertible this is the inverse; for n < 6, a singular configuration or a frame
      that does not move, it is the inertia of the task subspace the frame can move in, and
      ``A Lambda A = A`` holds.
    * ``damping > 0``: the damped (Tikhonov) inverse ``Lambda = (A + damping 1)^-1``, which
      is smooth through singularities (damping has the units of A: 1/kg, 1/(kg m^2)).

    The result is always finite. ``condition_number`` is ``lambda_max / lambda_min`` of A,
    with singular values of Y below machine epsilon times the largest (round-off) taken as
    that floor, so that it is at most 1/eps^2 (about 2.0e31) instead of infinite.
    Leading batch axes of ``q`` and ``qd`` are supported.
    """
    damping = _check_nonnegative('damping', damping)
    rcond = _check_nonnegative('rcond', rcond)
    if (type(q) is np.ndarray and type(qd) is np.ndarray and q.ndim == 1 and qd.ndim == 1
            and q.dtype == float and qd.dtype == float):
        try:  # one state: one kernel call (the checks are done in the kernel)
            pk = model.packed
            name = model.tip_link if frame is None or frame == '' else frame
            data = pk.frames[name]
            fast = q.shape == qd.shape == (pk.n,) and pk.n > 0
        except Exception:
            fast = False
        if fast:
            result = _compiled(pk, (), np.ascontiguousarray(q)[None],
                               np.ascontiguousarray(qd)[None], data, damping, rcond, name)
            if result is not None:
                return result
    batch, (qf, qdf), _ = prepare(model, (('q', q), ('qd', qd)))
    fr = _resolve_frame(model, frame)
    if model.dof > 0:
        (qf, qdf), _ = kernel_arrays(model, (qf, qdf))
        result = _compiled(model.packed, batch, qf, qdf, model.packed.frames[fr.name], damping,
                           rcond, fr.name)
        if result is not None:
            return result
    # No joints, or an overflow: the NumPy formulas raise the documented error.
    J, Jdqd, M, h, g = _cartesian_terms_numpy(model, qf, qdf, fr)
    return _operational_space(batch, fr.name, J, Jdqd, M, h, g, damping, rcond)


def _not_positive_definite():
    return InputError('the mass matrix is not positive definite at this configuration (a body '
                      'without mass or inertia moves with a joint): the Cartesian inertia is '
                      'undefined')


def _compiled(pk, batch, q, qd, data, damping, rcond, name):
    """Return cartesian_dynamics of (B, n) states by one kernel call; None on overflow."""
    size, n = q.shape
    J, Lam, mu = np.empty((size, 6, n)), np.empty((size, 6, 6)), np.empty((size, 6))
    p, J_bar, cond = np.empty((size, 6)), np.empty((size, n, 6)), np.empty(size)
    status = K.cartesian_dynamics_batch(pk.ints, pk.reals, q, qd, data[0], data[1], damping,
                                        rcond, J, Lam, mu, p, J_bar, cond)
    if status == K.NOT_POSITIVE_DEFINITE:
        raise _not_positive_definite()
    if status != K.OK:
        return None
    return _result(batch, name, J, Lam, mu, p, J_bar, cond)


def _result(batch, name, J, Lam, mu, p, J_bar, cond):
    """Return the :class:`CartesianDynamics` of flattened (B, ...) arrays, batch axes restored."""
    cond = finish(batch, cond, 'condition number')
    return CartesianDynamics(
        jacobian=finish(batch, J, 'jacobian'),
        inertia=finish(batch, Lam, 'Cartesian inertia'),
        coriolis=finish(batch, mu, 'Cartesian Coriolis force'),
        gravity=finish(batch, p, 'Cartesian gravity force'),
        jacobian_bar=finish(batch, J_bar, 'jacobian_bar'),
        condition_number=float(cond) if cond.ndim == 0 else cond,
        frame=name,
    )


def _cartesian_terms_numpy(model, qf, qdf, fr):
    """Return J, Jdot qd, M, C qd, g by the NumPy formulas (raise on non-finite values)."""
    kin = body_kinematics(model, qf, qdf)
    _, p_origin = _pose(model, kin, fr)
    J = _jacobian(model, kin, fr, p_origin)
    Jdqd = _jacobian_dot_times_qd(model, kin, fr, p_origin, qdf)
    return J, Jdqd, mass_matrix(model, qf), coriolis_torques(model, qf, qdf), \
        gravity_torques(model, qf)


def _operational_space(batch, name, J, Jdqd, M, h, g, damping, rcond):
    """Return the :class:`CartesianDynamics` of (B, ...) terms (see cartesian_dynamics)."""
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        raise _not_positive_definite() from None
    Y = np.linalg.solve(L, np.swapaxes(J, -1, -2))            # (B, n, 6) = L^-1 J^T
    _, s, Vt = np.linalg.svd(Y, full_matrices=True)           # s (B, min(n, 6)), Vt (B, 6, 6)
    sv = np.zeros((Y.shape[0], 6))
    sv[:, :s.shape[1]] = s
    s_max = sv[:, 0]
    lam = sv ** 2
    lam_max = lam[:, 0]
    if damping > 0.0:
        inv = 1.0 / (lam + damping)
    else:
        keep = (lam > rcond * lam_max[:, None]) & (lam > 0.0)
        inv = np.where(keep, 1.0 / np.where(keep, lam, 1.0), 0.0)
    Lam = np.einsum('bki,bk,bkj->bij', Vt, inv, Vt)
    Lam = 0.5 * (Lam + np.swapaxes(Lam, -1, -2))
    s_min = np.maximum(sv[:, -1], EPS * s_max)
    cond = np.where(s_max > 0.0, (s_max / np.where(s_min > 0.0, s_min, 1.0)) ** 2,
                    CONDITION_CAP)
    cond = np.minimum(cond, CONDITION_CAP)

    J_bar = np.linalg.solve(np.swapaxes(L, -1, -2), Y @ Lam)  # M^-1 J^T Lambda, (B, n, 6)
    J_bar_T = np.swapaxes(J_bar, -1, -2)
    mu = np.einsum('bij,bj->bi', J_bar_T, h) - np.einsum('bij,bj->bi', Lam, Jdqd)
    p = np.einsum('bij,bj->bi', J_bar_T, g)
    return _result(batch, name, J, Lam, mu, p, J_bar, cond)


def _point_offset(model, q, frame, point):
    """Return ``r = R p`` (..., 3): the point's offset from the frame origin, base axes."""
    p = np.asarray(point, dtype=float)
    if p.shape != (3,) or not np.all(np.isfinite(p)):
        raise InputError(f'point must be 3 finite coordinates in the frame, got {point!r}')
    R, _ = frame_pose(model, q, frame)
    return np.einsum('...ij,j->...i', R, p)


def point_velocity(model, q, qd, frame: Optional[str] = None, point=(0.0, 0.0, 0.0)):
    """
    Return the velocity (..., 3) of a point fixed in a link frame: v = v_O + w x r.

    ``point``: the point's coordinates in the frame (default its origin); base-frame axes.
    """
    twist = np.einsum('...ij,...j->...i', jacobian(model, q, frame), qd)
    r = _point_offset(model, q, frame, point)
    return twist[..., :3] + np.cross(twist[..., 3:], r)


def point_acceleration(model, q, qd, qdd, frame: Optional[str] = None,
                       point=(0.0, 0.0, 0.0)):
    """
    Return the acceleration (..., 3) of a point fixed in a link frame (seed 001).

    a = a_O + alpha x r + w x (w x r), with [a_O; alpha] = J qdd + Jdot qd and [v_O; w] = J qd.
    """
    J = jacobian(model, q, frame)
    twist = np.einsum('...ij,...j->...i', J, qd)
    accel = (np.einsum('...ij,...j->...i', J, qdd)
             + jacobian_dot_times_qd(model, q, qd, frame))
    r = _point_offset(model, q, frame, point)
    w = twist[..., 3:]
    return accel[..., :3] + np.cross(accel[..., 3:], r) + np.cross(w, np.cross(w, r))
