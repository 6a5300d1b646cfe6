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
The forward recursion every algorithm shares, and the one place where joint types are told apart.

Notation follows Saha (1999), seed 000. Every vector is expressed in the base (world) frame.
For body ``i``:

* ``O_i`` -- origin of the body frame (on joint ``i``'s axis); ``C_i`` -- its mass centre,
  ``d_i = C_i - O_i``; ``R_i`` -- its orientation;
* ``t_i = [w_i; v_i]`` -- twist at the mass centre: angular velocity and velocity of ``C_i``
  (Eq. 1); wrenches ``[n_i; f_i]`` are the moment about ``C_i`` and the force;
* ``B_ij = [[1, 0], [c_ij x 1, 1]]``, ``c_ij = C_j - C_i`` -- twist propagation matrix, so
  that ``t_i = B_ij t_j + P_i qd_i`` (Eq. 12-13); its transpose carries a wrench at ``C_i``
  to ``C_j``;
* ``P_i`` -- the joint-rate propagation vectors of body ``i``'s joint, one 6-vector per velocity
  (Saha's ``p_i``): ``[e_i; e_i x d_i]`` for a revolute joint (Eq. 13), ``[0; e_i]`` for a
  prismatic one (Eq. 15), and for the free-flyer root the six columns of a prismatic joint and
  a revolute joint through ``O_i`` along each base axis (``e = R_i e_k``, k = x, y, z), which
  makes ``v`` the base velocity in the base frame (Pinocchio's free-flyer). Each column is fixed
  in its body, so its time derivative is ``Omega_i P_i`` (Eq. 26), ``Omega_i = diag(w_i x 1,
  w_i x 1)``, for every joint type;
* ``M_i = [[I_i, 0], [0, m_i 1]]`` -- 6x6 mass matrix about ``C_i`` (Eq. 2).

Inside the kernels 6-vectors are Saha's ``[angular; linear]``; at the public API every 6-vector
is ``[linear; angular]`` (see :mod:`denoc_ros.spatial`).

:func:`forward_kinematics` is the one place that tells joint types apart (Pinocchio's
``JointModel::calc``, spatial_v2's ``jcalc``): every algorithm downstream works with the columns
``P`` and never asks which joint it has.

The spatial steps the recursions share are here too, once: a twist carried to a child
(:func:`carried`, ``B_ik t_k``), a wrench carried to the parent (:func:`wrench_to_parent`,
``B_ik^T w_i``), the congruence ``B^T A B`` (:func:`congruence_add`), a body's spatial inertia
moved to the base origin (:func:`origin_inertia`) and its 6x6 form (:func:`expand_inertia`);
and the entry points of the two Coriolis matrices, which differ only in their recursion
(:func:`velocity_matrix_one`, :func:`velocity_matrix_batch`).
"""

import math

import numpy as np

from . import _compile
from ._compile import (add6, add_row6, all_finite, cross, jit, model_arrays, SCRATCH_COUNT,
                       SCRATCH_WIDTH, sincos)
from ._packed import (ALIGNED, AXIS, COM, GRAVITY, INERTIA, JOINT_TYPE, MASS, NV, PARENT, Q0,
                      ROTATED_AXIS, ROTATION, ROTATION_JA, ROTATION_JAA, TRANSLATION, V0)
from ..joints import FREE_FLYER, PRISMATIC, REVOLUTE
from ..spatial import quaternion_rotation

# Columns of the per-call kinematics buffer ``kin`` (nb, KIN_WIDTH): R_i (9, row-major), O_i,
# d_i, C_i, the inertia I_i about C_i in base axes (9), and the joint axis e_i = R_i a_i.
_R, _O, _D, _C, _I, _E = 0, 9, 12, 15, 18, 27
KIN_WIDTH = SCRATCH_WIDTH  # 30
# Columns of the per-call motion buffer ``mot`` (nb, MOT_WIDTH): t_i, t_dot_i, a wrench w_i,
# and kappa_i (the velocity-product part of t_dot_i).
_T, _TD, _W, _KAPPA = 0, 6, 12, 18
MOT_WIDTH = 24

# A free-flyer quaternion whose norm differs from 1 by more than this is rejected (InputError);
# within it, the quaternion is normalised.
QUATERNION_TOLERANCE = 1e-3


@jit(inline=True)
def zero_unless_chain(ints, out):
    """
    Zero the (nv, nv) ``out`` unless the bodies form one chain.

    The joint-space matrices have zeros only between bodies on different branches: a chain's
    are written entry by entry, and zeroing them first would be wasted.
    """
    chain = True
    for i in range(ints.shape[0]):
        chain = chain and ints[i, PARENT] == i - 1
    if not chain:
        for a in range(out.shape[0]):
            for b in range(out.shape[1]):
                out[a, b] = 0.0


@jit
def configuration_size(ints):
    """Return nq, the length of a configuration of the packed model."""
    nb = ints.shape[0]
    if nb == 0:
        return 0
    return ints[nb - 1, Q0] + (7 if ints[nb - 1, JOINT_TYPE] == FREE_FLYER else 1)


@jit
def velocity_state_ok(ints, q, qd, nv):
    """Return True if ``(q, qd)`` is one state of the model: lengths nq and nv, finite values."""
    return (q.shape[0] == configuration_size(ints) and qd.shape[0] == nv
            and configuration_ok(ints, q) and all_finite(qd))


@jit(inline=True)
def velocity_matrix_one(state, handle, q, qd, out):
    """
    Run ``state`` as the ``*_one`` entry point of a (q, qd) -> (nv, nv) matrix; return a status.

    ``state(ints, reals, q, qd, work, blocks, out)`` (the Coriolis matrices) writes the matrix
    of one state with the model handle's scratch space; here the model's arrays are read from
    the handle, the inputs made contiguous and checked, and the output checked.
    """
    ints, reals, work, blocks = model_arrays(handle)
    q, qd = np.ascontiguousarray(q), np.ascontiguousarray(qd)
    if not velocity_state_ok(ints, q, qd, out.shape[0]):
        return _compile.BAD_INPUT
    state(ints, reals, q, qd, work, blocks, out)
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@jit(inline=True)
def velocity_matrix_batch(state, ints, reals, q, qd, out):
    """Run ``state`` (as in velocity_matrix_one) on each row of (B, ...) states into ``out``."""
    nb, nv = ints.shape[0], out.shape[1]
    # A scratch space of the model handle's shapes (_compile.model_handle).
    work = np.empty((SCRATCH_COUNT, max(nb, nv), SCRATCH_WIDTH))
    blocks = np.empty((3 * nb + 1, 6, 6))
    for b in range(q.shape[0]):
        state(ints, reals, q[b], qd[b], work, blocks, out[b])
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@jit
def configuration_ok(ints, q):
    """Return True if ``q`` is finite and a free flyer's quaternion is unit length (tolerance)."""
    if not all_finite(q):
        return False
    if ints.shape[0] > 0 and ints[0, JOINT_TYPE] == FREE_FLYER:
        k = ints[0, Q0] + 3
        norm = math.sqrt(q[k] ** 2 + q[k + 1] ** 2 + q[k + 2] ** 2 + q[k + 3] ** 2)
        return abs(norm - 1.0) <= QUATERNION_TOLERANCE
    return True


# The rotation of a quaternion: the one implementation, shared with the NumPy side
# (denoc_ros.spatial.quaternion_to_matrix), compiled here for the free flyer.
free_flyer_rotation = jit(inline=True)(quaternion_rotation)


@jit(inline=True)
def rotation_row(reals, i, row, s, v):
    """Return row ``row`` of body i's ``L = J + s J A + v J A^2`` (Rodrigues, packed J, J A)."""
    J, JA, JAA = ROTATION + 3 * row, ROTATION_JA + 3 * row, ROTATION_JAA + 3 * row
    return (reals[i, J] + s * reals[i, JA] + v * reals[i, JAA],
            reals[i, J + 1] + s * reals[i, JA + 1] + v * reals[i, JAA + 1],
            reals[i, J + 2] + s * reals[i, JA + 2] + v * reals[i, JAA + 2])


@jit(inline=True)
def aligned_row(reals, i, row, axis, s, c):
    """
    Return row ``row`` of ``L = J Rot(e_axis, q)`` for a joint axis along a base vector.

    ``axis`` 0, 1, 2 (x, y, z); ``s, c = sin q, cos q``. With ``(a, b)`` the two other axes in
    cyclic order, ``Rot`` mixes only columns ``a`` and ``b`` of ``J``: ``L_a = c J_a + s J_b``,
    ``L_b = c J_b - s J_a``, ``L_axis = J_axis`` (Pinocchio's revolute-about-x/y/z joints).
    """
    j = ROTATION + 3 * row
    J0, J1, J2 = reals[i, j], reals[i, j + 1], reals[i, j + 2]
    if axis == 2:
        return c * J0 + s * J1, c * J1 - s * J0, J2
    if axis == 1:
        return c * J0 - s * J2, J1, c * J2 + s * J0
    return J0, c * J1 + s * J2, c * J2 - s * J1


@jit(inline=True)
def kin_column(r0, r1, r2, axis):
    """Return entry ``axis`` (0, 1, 2) of the row ``(r0, r1, r2)``."""
    if axis == 0:
        return r0
    if axis == 1:
        return r1
    return r2


@jit
def forward_kinematics(ints, reals, q, kin, P):
    """
    Fill poses R_i, O_i, d_i, C_i, axes e_i and the columns P (Eq. 12-15).

    The joint-type dispatch: the pose of body ``i`` in its parent is ``L = J Rot(a, q_i)``,
    origin ``x`` (revolute), ``L = J``, ``x = x_J + q_i J a`` (prismatic), or the quaternion's
    rotation and the position ``q[0:3]`` (free flyer; parent: the world); the columns ``P``
    are written at the end of the body's step. A revolute axis along +-x, +-y or +-z (the
    packed ``ALIGNED`` code) takes the cheaper :func:`aligned_row` and ``e_i`` = a column of
    ``R_i``; any other axis the general Rodrigues form.
    """
    kinematics_pass(ints, reals, q, kin, P, True)


@jit
def frame_kinematics(ints, reals, q, kin, P):
    """
    Fill what a frame's pose and Jacobian need: :func:`forward_kinematics` about the origins.

    Every body taken as if its mass centre were at its origin: ``d_i = 0``, ``C_i = O_i``, and
    the columns ``P`` about ``O_i`` (``[e; 0]`` for a revolute joint), which a Jacobian column
    ``[p_lin + p_ang x (p - C_i); p_ang]`` turns into the same column.
    """
    kinematics_pass(ints, reals, q, kin, P, False)


@jit(inline=True)
def kinematics_pass(ints, reals, q, kin, P, centres):
    """Run the recursion of :func:`forward_kinematics`; ``centres`` (a constant) False: d = 0."""
    # ``kin`` is indexed directly with the column offsets rather than through views, and each
    # body's values are kept in locals until stored: the compiler cannot tell that ``kin`` and
    # ``reals`` do not overlap, and would reload after every store.
    nb = ints.shape[0]
    # Only body 0 can be a free flyer (RobotModel checks it): then the position of every other
    # body's joint comes 6 entries later in q than the body's index, its velocity 5 later in v.
    floating = nb > 0 and ints[0, JOINT_TYPE] == FREE_FLYER
    shift, vshift = (6, 5) if floating else (0, 0)
    for i in range(nb):
        joint = ints[i, JOINT_TYPE]
        aligned = ints[i, ALIGNED]
        if joint == FREE_FLYER:
            L0, L1, L2, L3, L4, L5, L6, L7, L8 = free_flyer_rotation(q[3], q[4], q[5], q[6])
            x0, x1, x2 = q[0], q[1], q[2]
        else:
            qi = q[i + shift]
            x0, x1, x2 = (reals[i, TRANSLATION], reals[i, TRANSLATION + 1],
                          reals[i, TRANSLATION + 2])
            if joint == PRISMATIC:
                x0 += qi * reals[i, ROTATED_AXIS]
                x1 += qi * reals[i, ROTATED_AXIS + 1]
                x2 += qi * reals[i, ROTATED_AXIS + 2]
                L0, L1, L2 = rotation_row(reals, i, 0, 0.0, 0.0)
                L3, L4, L5 = rotation_row(reals, i, 1, 0.0, 0.0)
                L6, L7, L8 = rotation_row(reals, i, 2, 0.0, 0.0)
            elif aligned != 0:
                # Rot(-e, q) = Rot(e, -q): the sign goes into the sine.
                s, c = sincos(qi)
                if aligned < 0:
                    s = -s
                axis = abs(aligned) - 1
                L0, L1, L2 = aligned_row(reals, i, 0, axis, s, c)
                L3, L4, L5 = aligned_row(reals, i, 1, axis, s, c)
                L6, L7, L8 = aligned_row(reals, i, 2, axis, s, c)
            else:
                # L = J Rot(a, q) = J + sin q J A + (1 - cos q) J A^2, A = a x 1 (Rodrigues).
                s, c = sincos(qi)
                v = 1.0 - c
                L0, L1, L2 = rotation_row(reals, i, 0, s, v)
                L3, L4, L5 = rotation_row(reals, i, 1, s, v)
                L6, L7, L8 = rotation_row(reals, i, 2, s, v)
        k = ints[i, PARENT]
        if k < 0:
            R0, R1, R2, R3, R4, R5, R6, R7, R8 = L0, L1, L2, L3, L4, L5, L6, L7, L8
            O0, O1, O2 = x0, x1, x2
        else:
            # R_i = R_k L, O_i = O_k + R_k x.
            K0, K1, K2 = kin[k, _R], kin[k, _R + 1], kin[k, _R + 2]
            K3, K4, K5 = kin[k, _R + 3], kin[k, _R + 4], kin[k, _R + 5]
            K6, K7, K8 = kin[k, _R + 6], kin[k, _R + 7], kin[k, _R + 8]
            R0, R1, R2 = (K0 * L0 + K1 * L3 + K2 * L6, K0 * L1 + K1 * L4 + K2 * L7,
                          K0 * L2 + K1 * L5 + K2 * L8)
            R3, R4, R5 = (K3 * L0 + K4 * L3 + K5 * L6, K3 * L1 + K4 * L4 + K5 * L7,
                          K3 * L2 + K4 * L5 + K5 * L8)
            R6, R7, R8 = (K6 * L0 + K7 * L3 + K8 * L6, K6 * L1 + K7 * L4 + K8 * L7,
                          K6 * L2 + K7 * L5 + K8 * L8)
            O0 = kin[k, _O] + K0 * x0 + K1 * x1 + K2 * x2
            O1 = kin[k, _O + 1] + K3 * x0 + K4 * x1 + K5 * x2
            O2 = kin[k, _O + 2] + K6 * x0 + K7 * x1 + K8 * x2
        if centres:
            m0, m1, m2 = reals[i, COM], reals[i, COM + 1], reals[i, COM + 2]
            d0, d1, d2 = (R0 * m0 + R1 * m1 + R2 * m2, R3 * m0 + R4 * m1 + R5 * m2,
                          R6 * m0 + R7 * m1 + R8 * m2)
        else:
            d0, d1, d2 = 0.0, 0.0, 0.0
        if joint == REVOLUTE and aligned != 0:
            axis = abs(aligned) - 1
            sign = 1.0 if aligned > 0 else -1.0
            e0 = sign * kin_column(R0, R1, R2, axis)
            e1 = sign * kin_column(R3, R4, R5, axis)
            e2 = sign * kin_column(R6, R7, R8, axis)
        else:
            a0, a1, a2 = reals[i, AXIS], reals[i, AXIS + 1], reals[i, AXIS + 2]
            e0, e1, e2 = (R0 * a0 + R1 * a1 + R2 * a2, R3 * a0 + R4 * a1 + R5 * a2,
                          R6 * a0 + R7 * a1 + R8 * a2)
        kin[i, _R + 0], kin[i, _R + 1], kin[i, _R + 2] = R0, R1, R2
        kin[i, _R + 3], kin[i, _R + 4], kin[i, _R + 5] = R3, R4, R5
        kin[i, _R + 6], kin[i, _R + 7], kin[i, _R + 8] = R6, R7, R8
        kin[i, _O], kin[i, _O + 1], kin[i, _O + 2] = O0, O1, O2
        kin[i, _D], kin[i, _D + 1], kin[i, _D + 2] = d0, d1, d2
        kin[i, _C], kin[i, _C + 1], kin[i, _C + 2] = O0 + d0, O1 + d1, O2 + d2
        kin[i, _E], kin[i, _E + 1], kin[i, _E + 2] = e0, e1, e2
        # The columns P of the joint (Saha Eq. 13, 15): [e; e x d] (revolute), [0; e]
        # (prismatic); the free flyer: [0; e_k] then [e_k; e_k x d], e_k = R_i's columns.
        if joint == REVOLUTE:
            a = i + vshift
            P[a, 0], P[a, 1], P[a, 2] = e0, e1, e2
            if centres:
                P[a, 3], P[a, 4], P[a, 5] = cross(e0, e1, e2, d0, d1, d2)
            else:
                P[a, 3], P[a, 4], P[a, 5] = 0.0, 0.0, 0.0
        elif joint == PRISMATIC:
            a = i + vshift
            P[a, 0], P[a, 1], P[a, 2] = 0.0, 0.0, 0.0
            P[a, 3], P[a, 4], P[a, 5] = e0, e1, e2
        else:
            for c in range(3):
                e0, e1, e2 = kin[i, _R + c], kin[i, _R + 3 + c], kin[i, _R + 6 + c]
                P[c, 0], P[c, 1], P[c, 2] = 0.0, 0.0, 0.0
                P[c, 3], P[c, 4], P[c, 5] = e0, e1, e2
                P[3 + c, 0], P[3 + c, 1], P[3 + c, 2] = e0, e1, e2
                P[3 + c, 3], P[3 + c, 4], P[3 + c, 5] = cross(e0, e1, e2, d0, d1, d2)


@jit
def world_inertias(ints, reals, kin):
    """Fill ``I_i = R_i Ib_i R_i^T``, the inertia about C_i in base axes (Eq. 2)."""
    for i in range(ints.shape[0]):
        for r in range(3):
            # Row r of R Ib, times columns col >= r of R^T (I is symmetric: 6 entries).
            R0, R1, R2 = kin[i, _R + 3 * r], kin[i, _R + 3 * r + 1], kin[i, _R + 3 * r + 2]
            y0 = (R0 * reals[i, INERTIA] + R1 * reals[i, INERTIA + 3]
                  + R2 * reals[i, INERTIA + 6])
            y1 = (R0 * reals[i, INERTIA + 1] + R1 * reals[i, INERTIA + 4]
                  + R2 * reals[i, INERTIA + 7])
            y2 = (R0 * reals[i, INERTIA + 2] + R1 * reals[i, INERTIA + 5]
                  + R2 * reals[i, INERTIA + 8])
            for col in range(r, 3):
                value = (y0 * kin[i, _R + 3 * col] + y1 * kin[i, _R + 3 * col + 1]
                         + y2 * kin[i, _R + 3 * col + 2])
                kin[i, _I + 3 * r + col] = value
                kin[i, _I + 3 * col + r] = value


@jit(inline=True)
def carried(kin, x, k, i):
    """Return ``B_ik x_k``: body k's twist or twist rate at C_k carried to C_i (Saha Eq. 13)."""
    return carried_values(kin, (x[k, 0], x[k, 1], x[k, 2], x[k, 3], x[k, 4], x[k, 5]), k, i)


@jit(inline=True)
def gyroscopic_moment(kin, t, i):
    """Return ``w_i x (I_i w_i)``, the moment of ``Omega_i M_i E_i t_i`` (Saha Eq. 8)."""
    w0, w1, w2 = t[i, 0], t[i, 1], t[i, 2]
    Iw0 = kin[i, _I] * w0 + kin[i, _I + 1] * w1 + kin[i, _I + 2] * w2
    Iw1 = kin[i, _I + 3] * w0 + kin[i, _I + 4] * w1 + kin[i, _I + 5] * w2
    Iw2 = kin[i, _I + 6] * w0 + kin[i, _I + 7] * w1 + kin[i, _I + 8] * w2
    return cross(w0, w1, w2, Iw0, Iw1, Iw2)


@jit(inline=True)
def wrench_to_parent(kin, k, i, n0, n1, n2, f0, f1, f2, out):
    """Add ``B_ik^T [n; f]`` to ``out[k]``: a wrench at C_i carried to C_k (Saha Eq. 13, 30)."""
    x0, x1, x2 = cross(kin[k, _C] - kin[i, _C], kin[k, _C + 1] - kin[i, _C + 1],
                       kin[k, _C + 2] - kin[i, _C + 2], f0, f1, f2)
    out[k, 0] += n0 - x0
    out[k, 1] += n1 - x1
    out[k, 2] += n2 - x2
    out[k, 3] += f0
    out[k, 4] += f1
    out[k, 5] += f2


@jit(inline=True)
def times_b(A, c0, c1, c2, T):
    """Write ``T = A B`` for a 6x6 ``A``, ``B = [[1, 0], [c x 1, 1]]`` (Saha Eq. 13)."""
    # T[r, :3] = A[r, :3] + A[r, 3:] x c, T[r, 3:] = A[r, 3:].
    for r in range(6):
        x0, x1, x2 = cross(A[r, 3], A[r, 4], A[r, 5], c0, c1, c2)
        T[r, 0] = A[r, 0] + x0
        T[r, 1] = A[r, 1] + x1
        T[r, 2] = A[r, 2] + x2
        T[r, 3] = A[r, 3]
        T[r, 4] = A[r, 4]
        T[r, 5] = A[r, 5]


@jit(inline=True)
def add_b_transpose_times(T, c0, c1, c2, out):
    """Add ``B^T T`` to the 6x6 ``out``, ``B = [[1, 0], [c x 1, 1]]``: T's columns as wrenches."""
    for col in range(6):
        x0, x1, x2 = cross(T[3, col], T[4, col], T[5, col], c0, c1, c2)
        out[0, col] += T[0, col] + x0
        out[1, col] += T[1, col] + x1
        out[2, col] += T[2, col] + x2
        out[3, col] += T[3, col]
        out[4, col] += T[4, col]
        out[5, col] += T[5, col]


@jit
def congruence_add(A, c0, c1, c2, T, out):
    """Add ``B^T A B`` to the 6x6 ``out`` (Saha Eq. 23b); ``T`` is a 6x6 scratch matrix."""
    # Its two halves are inlined (numba calls a jit function out of line, passing each array as
    # seven arguments: two such calls per body cost forward dynamics 0.1 us on a 7-joint arm).
    times_b(A, c0, c1, c2, T)
    add_b_transpose_times(T, c0, c1, c2, out)


@jit(inline=True)
def origin_inertia(reals, kin, i):
    """
    Return body i's spatial inertia at the base origin in 10 numbers (Saha Eq. 2, moved).

    ``(J_xx, J_xy, J_xz, J_yy, J_yz, J_zz, h_x, h_y, h_z, m)``: the rotational inertia about the
    origin ``J = R Ib R^T + m (|C|^2 1 - C C^T)`` (parallel axes), the first moment ``h = m C``
    and the mass, ``C = C_i`` and ``R = R_i`` from :func:`forward_kinematics`.
    """
    m = reals[i, MASS]
    c0, c1, c2 = kin[i, _C], kin[i, _C + 1], kin[i, _C + 2]
    cc = c0 * c0 + c1 * c1 + c2 * c2
    # R Ib R^T: the rows y_r of R Ib, then their products with the rows of R (6 entries).
    R0, R1, R2 = kin[i, _R], kin[i, _R + 1], kin[i, _R + 2]
    R3, R4, R5 = kin[i, _R + 3], kin[i, _R + 4], kin[i, _R + 5]
    R6, R7, R8 = kin[i, _R + 6], kin[i, _R + 7], kin[i, _R + 8]
    b0, b1, b2 = reals[i, INERTIA], reals[i, INERTIA + 1], reals[i, INERTIA + 2]
    b4, b5, b8 = reals[i, INERTIA + 4], reals[i, INERTIA + 5], reals[i, INERTIA + 8]
    y00, y01, y02 = R0 * b0 + R1 * b1 + R2 * b2, R0 * b1 + R1 * b4 + R2 * b5, \
        R0 * b2 + R1 * b5 + R2 * b8
    y10, y11, y12 = R3 * b0 + R4 * b1 + R5 * b2, R3 * b1 + R4 * b4 + R5 * b5, \
        R3 * b2 + R4 * b5 + R5 * b8
    y20, y21, y22 = R6 * b0 + R7 * b1 + R8 * b2, R6 * b1 + R7 * b4 + R8 * b5, \
        R6 * b2 + R7 * b5 + R8 * b8
    return (y00 * R0 + y01 * R1 + y02 * R2 + m * (cc - c0 * c0),
            y00 * R3 + y01 * R4 + y02 * R5 - m * c0 * c1,
            y00 * R6 + y01 * R7 + y02 * R8 - m * c0 * c2,
            y10 * R3 + y11 * R4 + y12 * R5 + m * (cc - c1 * c1),
            y10 * R6 + y11 * R7 + y12 * R8 - m * c1 * c2,
            y20 * R6 + y21 * R7 + y22 * R8 + m * (cc - c2 * c2),
            m * c0, m * c1, m * c2, m)


@jit(inline=True)
def expand_inertia(packed10, out):
    """Write the 6x6 ``[[J, h x 1], [(h x 1)^T, m 1]]`` of a spatial inertia's 10 numbers."""
    out[0, 0], out[0, 1], out[0, 2] = packed10[0], packed10[1], packed10[2]
    out[1, 0], out[1, 1], out[1, 2] = packed10[1], packed10[3], packed10[4]
    out[2, 0], out[2, 1], out[2, 2] = packed10[2], packed10[4], packed10[5]
    h0, h1, h2, m = packed10[6], packed10[7], packed10[8], packed10[9]
    out[0, 3], out[0, 4], out[0, 5] = 0.0, -h2, h1
    out[1, 3], out[1, 4], out[1, 5] = h2, 0.0, -h0
    out[2, 3], out[2, 4], out[2, 5] = -h1, h0, 0.0
    for r in range(3):
        for col in range(3):
            out[3 + r, col] = out[col, 3 + r]
            out[3 + r, 3 + col] = m if r == col else 0.0


@jit(inline=True)
def carried_values(kin, x, k, i):
    """Return ``B_ik x`` for the 6-tuple ``x`` of body k at C_k, carried to C_i (Saha Eq. 13)."""
    c0, c1, c2 = cross(kin[k, _C] - kin[i, _C], kin[k, _C + 1] - kin[i, _C + 1],
                       kin[k, _C + 2] - kin[i, _C + 2], x[0], x[1], x[2])
    return x[0], x[1], x[2], x[3] + c0, x[4] + c1, x[5] + c2


@jit(inline=True)
def parent_values(x, k, i, last):
    """Return row ``k`` of ``x`` as a 6-tuple: ``last`` (row i - 1, in locals) if k is i - 1."""
    if k == i - 1:
        return last
    return x[k, 0], x[k, 1], x[k, 2], x[k, 3], x[k, 4], x[k, 5]


@jit
def twists(ints, kin, P, qd, t):
    """Fill the twists ``t_i = B_ik t_k + P_i qd_i`` at the mass centres (Saha Eq. 12)."""
    # The last twist stays in locals: in a chain the parent's is the one just computed.
    last = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for i in range(ints.shape[0]):
        k = ints[i, PARENT]
        # Accumulate in locals: the compiler cannot tell that t, P and qd do not overlap.
        x = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        for b in range(ints[i, V0], ints[i, V0] + ints[i, NV]):
            x = add_row6(x, P, b, qd[b])
        if k >= 0:
            x = add6(x, carried_values(kin, parent_values(t, k, i, last), k, i))
        t[i, 0], t[i, 1], t[i, 2], t[i, 3], t[i, 4], t[i, 5] = x
        last = x


@jit
def twist_rates(ints, reals, kin, P, t, qd, qdd, gscale, t_dot):
    """Fill ``t_dot_i = B_ik t_dot_k + B_dot_ik t_k + P_i qdd_i + Omega_i P_i qd_i`` (Eq. 12)."""
    nb = ints.shape[0]
    g0, g1, g2 = (gscale * reals[nb, GRAVITY], gscale * reals[nb, GRAVITY + 1],
                  gscale * reals[nb, GRAVITY + 2])
    last = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # t_dot of body i - 1 (see twists)
    for i in range(nb):
        k = ints[i, PARENT]
        w0, w1, w2 = t[i, 0], t[i, 1], t[i, 2]
        if k < 0:
            # The base's fictitious acceleration [0; -g].
            a0, a1, a2, a3, a4, a5 = 0.0, 0.0, 0.0, -g0, -g1, -g2
        else:
            # B_ik t_dot_k + B_dot_ik t_k, B_dot_ik t_k = [0; (v_k - v_i) x w_k].
            a0, a1, a2, a3, a4, a5 = carried_values(kin, parent_values(t_dot, k, i, last), k, i)
            y0, y1, y2 = cross(t[k, 3] - t[i, 3], t[k, 4] - t[i, 4], t[k, 5] - t[i, 5],
                               t[k, 0], t[k, 1], t[k, 2])
            a3 += y0
            a4 += y1
            a5 += y2
        for b in range(ints[i, V0], ints[i, V0] + ints[i, NV]):
            u0, u1, u2 = cross(w0, w1, w2, P[b, 0], P[b, 1], P[b, 2])
            v0, v1, v2 = cross(w0, w1, w2, P[b, 3], P[b, 4], P[b, 5])
            acc, rate = qdd[b], qd[b]
            a0 += P[b, 0] * acc + u0 * rate
            a1 += P[b, 1] * acc + u1 * rate
            a2 += P[b, 2] * acc + u2 * rate
            a3 += P[b, 3] * acc + v0 * rate
            a4 += P[b, 4] * acc + v1 * rate
            a5 += P[b, 5] * acc + v2 * rate
        t_dot[i, 0], t_dot[i, 1], t_dot[i, 2] = a0, a1, a2
        t_dot[i, 3], t_dot[i, 4], t_dot[i, 5] = a3, a4, a5
        last = (a0, a1, a2, a3, a4, a5)


@jit
def body_states_batch(ints, reals, q, qd, R, C, t):
    """Write each body's orientation R (B, nb, 9), mass centre C (B, nb, 3), twist t (B, nb, 6)."""
    nb, nv = ints.shape[0], qd.shape[1]
    kin, P, mot = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)), np.empty((nb, MOT_WIDTH))
    for b in range(q.shape[0]):
        forward_kinematics(ints, reals, q[b], kin, P)
        twists(ints, kin, P, qd[b], mot[:, _T:_T + 6])
        for i in range(nb):
            for r in range(6):
                t[b, i, r] = mot[i, _T + r]
            for r in range(9):
                R[b, i, r] = kin[i, _R + r]
            for r in range(3):
                C[b, i, r] = kin[i, _C + r]


@jit
def frame_pose_batch(ints, reals, q, body, frame, R, p):
    """Write the pose R (B, 3, 3), p (B, 3) of a frame on ``body`` (-1: the base)."""
    nb = ints.shape[0]
    nv = ints[nb - 1, V0] + ints[nb - 1, NV] if nb else 0
    kin, P = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6))
    for b in range(q.shape[0]):
        if body < 0:
            for r in range(3):
                for c in range(3):
                    R[b, r, c] = frame[3 * r + c]
                p[b, r] = frame[9 + r]
            continue
        frame_kinematics(ints, reals, q[b], kin, P)
        for r in range(3):
            for c in range(3):
                R[b, r, c] = (kin[body, _R + 3 * r] * frame[c] + kin[body, _R + 3 * r + 1]
                              * frame[3 + c] + kin[body, _R + 3 * r + 2] * frame[6 + c])
            p[b, r] = (kin[body, _O + r] + kin[body, _R + 3 * r] * frame[9]
                       + kin[body, _R + 3 * r + 1] * frame[10]
                       + kin[body, _R + 3 * r + 2] * frame[11])
