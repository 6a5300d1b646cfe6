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
Frame kinematics: pose, geometric Jacobian and J-dot qd of a link frame, point velocities.

Conventions: every vector is expressed in the base (world) frame; a 6-vector is ``[linear;
angular]``, the linear part being the velocity (acceleration) of the frame's origin
(Pinocchio's ``LOCAL_WORLD_ALIGNED``). The frame is any link the model keeps
(:meth:`RobotModel.frame`), default the tip.

==========================  ===============================================================
function                    equations
==========================  ===============================================================
frame_pose                  forward kinematics, R = R_b R_f, p = O_b + R_b t_f
jacobian                    column of velocity a of body j: [p_lin + p_ang x (p - C_j);
                            p_ang] (revolute: [e_j x (p - O_j); e_j], prismatic [e_j; 0])
jacobian_dot_times_qd       seed 001: d/dt of the columns (fixed in their bodies, so
                            rotating with w_j); r_dd = a + alpha x r + w x v
==========================  ===============================================================

Every function accepts leading batch axes: ``q`` of shape ``(..., nq)`` gives a pose of shape
``(..., 3, 3)`` and ``(..., 3)``, a Jacobian of shape ``(..., 6, nv)`` and so on.
"""

from typing import Optional

import numpy as np

from . import _compile
from ._compile import all_finite, cross, jit, model_arrays
from ._fast import fast_path
from ._packed import FRAME_BODY, FRAME_WIDTH, NV, PARENT, V0
from ._packed import packed
from ._state import finish, kernel_arrays, prepare
from .kinematics import (_C, _O, _R, _T, configuration_ok, configuration_size, forward_kinematics,
                         frame_kinematics, frame_pose_batch, KIN_WIDTH, kinematics_pass,
                         MOT_WIDTH, twists)
from ..errors import InputError

__all__ = ['frame_pose', 'jacobian', 'jacobian_dot_times_qd', 'point_acceleration',
           'point_velocity']


@jit
def frame_origin(kin, body, frame):
    """Return the origin p = O_b + R_b t_f of a frame on body ``body`` (-1: the base)."""
    t0, t1, t2 = frame[9], frame[10], frame[11]
    if body < 0:
        return t0, t1, t2
    return (kin[body, _O] + kin[body, _R] * t0 + kin[body, _R + 1] * t1 + kin[body, _R + 2] * t2,
            kin[body, _O + 1] + kin[body, _R + 3] * t0 + kin[body, _R + 4] * t1
            + kin[body, _R + 5] * t2,
            kin[body, _O + 2] + kin[body, _R + 6] * t0 + kin[body, _R + 7] * t1
            + kin[body, _R + 8] * t2)


@jit(inline=True)
def jacobian_state(ints, kin, P, body, frame, J):
    """
    Write J (6, nv): columns [p_lin + p_ang x (p - C_j); p_ang] on the path, else 0.

    Reads ``kin`` and ``P`` of the bodies on the path from ``body`` to the base only: the
    callers run the forward kinematics over the bodies ``0 .. body`` (parents come first), not
    the branches beyond the frame's link (a quadruped's foot: 4 of 13 bodies).
    """
    # One pass over the bodies from the last to the first, writing each column once: bodies
    # come after their parents, so the path from ``body`` is met in the order of the pass.
    p0, p1, p2 = frame_origin(kin, body, frame)
    j = body
    for i in range(ints.shape[0] - 1, -1, -1):
        if i == j:
            r0, r1, r2 = p0 - kin[j, _C], p1 - kin[j, _C + 1], p2 - kin[j, _C + 2]
            for a in range(ints[j, V0], ints[j, V0] + ints[j, NV]):
                x0, x1, x2 = cross(P[a, 0], P[a, 1], P[a, 2], r0, r1, r2)
                J[0, a], J[1, a], J[2, a] = P[a, 3] + x0, P[a, 4] + x1, P[a, 5] + x2
                J[3, a], J[4, a], J[5, a] = P[a, 0], P[a, 1], P[a, 2]
            j = ints[j, PARENT]
        else:
            for a in range(ints[i, V0], ints[i, V0] + ints[i, NV]):
                for r in range(6):
                    J[r, a] = 0.0


@jit
def jacobian_dot_times_qd_state(ints, kin, P, t, qd, body, frame, out):
    """Write Jdot qd (6,): sum over the path of qd_a d/dt of column a (seed 001)."""
    for r in range(6):
        out[r] = 0.0
    if body < 0:
        return
    p0, p1, p2 = frame_origin(kin, body, frame)
    # Velocity of the frame origin: v_p = v_Cb + w_b x (p - C_b).
    x0, x1, x2 = cross(t[body, 0], t[body, 1], t[body, 2], p0 - kin[body, _C],
                       p1 - kin[body, _C + 1], p2 - kin[body, _C + 2])
    vp0, vp1, vp2 = t[body, 3] + x0, t[body, 4] + x1, t[body, 5] + x2
    j = body
    while j >= 0:
        w0, w1, w2 = t[j, 0], t[j, 1], t[j, 2]
        r0, r1, r2 = p0 - kin[j, _C], p1 - kin[j, _C + 1], p2 - kin[j, _C + 2]
        u0, u1, u2 = vp0 - t[j, 3], vp1 - t[j, 4], vp2 - t[j, 5]  # d/dt (p - C_j)
        for a in range(ints[j, V0], ints[j, V0] + ints[j, NV]):
            # d/dt [p_lin + p_ang x r; p_ang] = [w x p_lin + (w x p_ang) x r + p_ang x r_dot;
            # w x p_ang], the column being fixed in body j.
            ad0, ad1, ad2 = cross(w0, w1, w2, P[a, 0], P[a, 1], P[a, 2])
            ld0, ld1, ld2 = cross(w0, w1, w2, P[a, 3], P[a, 4], P[a, 5])
            x0, x1, x2 = cross(ad0, ad1, ad2, r0, r1, r2)
            y0, y1, y2 = cross(P[a, 0], P[a, 1], P[a, 2], u0, u1, u2)
            out[0] += (ld0 + x0 + y0) * qd[a]
            out[1] += (ld1 + x1 + y1) * qd[a]
            out[2] += (ld2 + x2 + y2) * qd[a]
            out[3] += ad0 * qd[a]
            out[4] += ad1 * qd[a]
            out[5] += ad2 * qd[a]
        j = ints[j, PARENT]


@jit
def jacobian_one(handle, q, f, out):
    """Write the Jacobian (6, nv) of frame ``f`` (its packed row) into ``out``; return a status."""
    ints, reals, work, _ = model_arrays(handle)
    q = np.ascontiguousarray(q)
    if not (q.shape[0] == configuration_size(ints) and configuration_ok(ints, q)):
        return _compile.BAD_INPUT
    row = ints.shape[0] + 1 + f
    body, frame = int(reals[row, FRAME_BODY]), reals[row, :FRAME_WIDTH]
    kin, P = work[0], work[1]
    kinematics_pass(ints[:body + 1], reals, q, kin, P, False)  # frame_kinematics, inlined
    jacobian_state(ints, kin, P, body, frame, out)
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@jit
def jacobian_batch(ints, reals, q, body, frame, out):
    """Write the frame Jacobian of each row of ``q`` (B, nq) into ``out`` (B, 6, nv)."""
    nb, nv = ints.shape[0], out.shape[2]
    kin, P = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6))
    for b in range(q.shape[0]):
        frame_kinematics(ints[:body + 1], reals, q[b], kin, P)
        jacobian_state(ints, kin, P, body, frame, out[b])
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@jit
def jacobian_dot_times_qd_batch(ints, reals, q, qd, body, frame, out):
    """Write Jdot qd (6,) of each row of (B, ...) states into ``out`` (B, 6)."""
    nb, nv = ints.shape[0], qd.shape[1]
    kin, P, mot = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)), np.empty((nb, MOT_WIDTH))
    t = mot[:, _T:_T + 6]
    for b in range(q.shape[0]):
        forward_kinematics(ints[:body + 1], reals, q[b], kin, P)
        twists(ints[:body + 1], kin, P, qd[b], t)
        jacobian_dot_times_qd_state(ints, kin, P, t, qd[b], body, frame, out[b])
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


def resolve_frame(model, frame):
    """Return the :class:`Frame` called ``frame`` (None or '': the tip) or raise InputError."""
    if frame is not None and not isinstance(frame, str):
        raise InputError(f'frame must be a link name (str) or None, got {type(frame).__name__}')
    return model.frame(frame)


def frame_pose(model, q, frame: Optional[str] = None):
    """
    Return the pose ``(R, p)`` of a link frame in the base frame: R = R_b R_f, p = O_b + R_b t_f.

    ``frame``: a link name, default the tip. ``q`` (..., nq) gives R (..., 3, 3) and p (..., 3).
    """
    batch, (qf,), _ = prepare(model, (('q', q),))
    fr = resolve_frame(model, frame)
    (qf,), _ = kernel_arrays(model, (qf,))
    pk = packed(model)
    body, data = pk.frames[fr.name]
    R, p = np.empty((qf.shape[0], 3, 3)), np.empty((qf.shape[0], 3))
    frame_pose_batch(pk.ints, pk.reals, qf, body, data, R, p)
    return finish(batch, R, 'frame rotation'), finish(batch, p, 'frame position')


@jit
def frames_state(ints, reals, q, bodies, data, R, p, J):
    """
    Write the pose R (L, 3, 3), p (L, 3) and Jacobian J (L, 6, nv) of L frames of one state.

    One forward kinematics for all of them (frame ``l`` on body ``bodies[l]``, its packed data
    ``data[l]``); the contact locator's per-message kinematics. Returns a status.
    """
    nb, nv = ints.shape[0], J.shape[2]
    if not (q.shape[0] == configuration_size(ints) and configuration_ok(ints, q)):
        return _compile.BAD_INPUT
    kin, P = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6))
    frame_kinematics(ints, reals, q, kin, P)
    for f in range(bodies.shape[0]):
        body, frame = bodies[f], data[f]
        for r in range(3):
            for c in range(3):
                R[f, r, c] = (kin[body, _R + 3 * r] * frame[c] + kin[body, _R + 3 * r + 1]
                              * frame[3 + c] + kin[body, _R + 3 * r + 2] * frame[6 + c])
        p[f, 0], p[f, 1], p[f, 2] = frame_origin(kin, body, frame)
        jacobian_state(ints, kin, P, body, frame, J[f])
    return _compile.OK if all_finite(J) and all_finite(R) and all_finite(p) else \
        _compile.BAD_OUTPUT


# A known frame (None and '' give the tip) goes to the kernel as its packed row; anything else
# (an unknown name, another type: a TypeError if unhashable) takes the checked path.
@fast_path(jacobian_one, 'vim', 'J', states='q',
           result='pk.jacobian_shape', args='q, known',
           lookup='known = pk.frame_ids[frame]')
def jacobian(model, q, frame: Optional[str] = None):
    """
    Return the geometric Jacobian J (..., 6, nv) of a frame: rows [linear; angular], base axes.

    ``J qd = [v_p; w]``, the velocity of the frame origin and the angular velocity of its link.
    Columns of joints not between the base and the frame's link are zero (trees).
    """
    batch, (qf,), _ = prepare(model, (('q', q),))
    fr = resolve_frame(model, frame)
    (qf,), _ = kernel_arrays(model, (qf,))
    pk = packed(model)
    body, data = pk.frames[fr.name]
    J = np.empty((qf.shape[0], 6, pk.nv))
    jacobian_batch(pk.ints, pk.reals, qf, body, data, J)
    return finish(batch, J, 'jacobian')


def jacobian_dot_times_qd(model, q, qd, frame: Optional[str] = None):
    """
    Return Jdot qd (..., 6): the classical acceleration [linear; angular] of the frame origin.

    It is the acceleration when qdd = 0 and no gravity acts (seed 001, ``a_ee = J qdd + Jdot
    qd``), converted to the point acceleration ``r_dd = a + alpha x r + w x v``: the linear part
    is the second time derivative of the origin's position, centripetal term included.
    """
    batch, (qf, qdf), _ = prepare(model, (('q', q), ('qd', qd)))
    fr = resolve_frame(model, frame)
    (qf, qdf), _ = kernel_arrays(model, (qf, qdf))
    pk = packed(model)
    body, data = pk.frames[fr.name]
    out = np.empty((qf.shape[0], 6))
    jacobian_dot_times_qd_batch(pk.ints, pk.reals, qf, qdf, body, data, out)
    return finish(batch, out, 'jacobian_dot_times_qd')


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
