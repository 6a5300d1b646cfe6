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
The joint-torque regressor: inverse dynamics written linear in the inertial parameters.

Newton-Euler (Saha Eq. 7-8, 30) is linear in each body's ten inertial parameters
``pi_i = [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]`` when the body's
equations are written about its frame origin ``O_i`` in its own axes (Atkeson, An &
Hollerbach 1986; ``c`` the centre of mass and ``I`` the inertia about ``O_i``, Pinocchio's
``Inertia.toDynamicParameters`` order). With ``w``, ``alpha`` the angular velocity and
acceleration and ``a`` the acceleration of ``O_i`` less gravity, all in body axes, and
``h = m c``::

    f_i = m a + alpha x h + w x (w x h)
    n_i = I alpha + w x (I w) + h x a              (moment about O_i)

so ``[n_i; f_i] = A_i(w, alpha, a) pi_i`` with a 6x10 matrix ``A_i`` of motion only. The
resultant wrench on joint ``j`` is the sum of ``A_i pi_i`` over the bodies ``i`` it carries
(Eq. 30), so ``tau_j = sum_i P_j^T X_ji A_i pi_i``: the block ``Y[j, 10 i:10 i + 10] =
P_j^T X_ji A_i`` for every body ``i`` in the subtree of ``j``, and ``Y pi = tau``.

The motion (``w``, ``alpha``, ``a``) comes from the shared forward recursion
(:mod:`.kinematics`) run with every centre of mass at its frame origin, which makes the twists
and twist rates those of the origins and leaves them independent of the parameters.
"""

import numpy as np

from . import _compile as K
from ._compile import all_finite, cross, jit
from ._packed import COM, NV, PARENT, V0
from ._state import finish, kernel_arrays, prepare
from .kinematics import (_O, _R, _T, _TD, configuration_ok, configuration_size,
                         forward_kinematics, KIN_WIDTH, MOT_WIDTH, twist_rates, twists)

__all__ = ['regressor', 'PARAMETERS_PER_BODY']

PARAMETERS_PER_BODY = 10


@jit
def origin_reals(reals):
    """Return a copy of the packed bodies with every centre of mass at its frame origin."""
    out = reals.copy()
    for i in range(out.shape[0] - 1):
        out[i, COM], out[i, COM + 1], out[i, COM + 2] = 0.0, 0.0, 0.0
    return out


@jit
def body_block(kin, t, t_dot, i, W):
    """
    Write ``R_i A_i`` into W (6, 10): body i's wrench [n; f] about O_i, base axes, per parameter.

    ``A_i`` (the module docstring) is built in body axes from the motion of ``O_i``, then
    rotated to the base axes in which the columns P are expressed.
    """
    R = kin[i, _R:_R + 9]
    # Body-axis motion: R^T times the base-axis vectors.
    w0 = R[0] * t[i, 0] + R[3] * t[i, 1] + R[6] * t[i, 2]
    w1 = R[1] * t[i, 0] + R[4] * t[i, 1] + R[7] * t[i, 2]
    w2 = R[2] * t[i, 0] + R[5] * t[i, 1] + R[8] * t[i, 2]
    b0 = R[0] * t_dot[i, 0] + R[3] * t_dot[i, 1] + R[6] * t_dot[i, 2]
    b1 = R[1] * t_dot[i, 0] + R[4] * t_dot[i, 1] + R[7] * t_dot[i, 2]
    b2 = R[2] * t_dot[i, 0] + R[5] * t_dot[i, 1] + R[8] * t_dot[i, 2]
    a0 = R[0] * t_dot[i, 3] + R[3] * t_dot[i, 4] + R[6] * t_dot[i, 5]
    a1 = R[1] * t_dot[i, 3] + R[4] * t_dot[i, 4] + R[7] * t_dot[i, 5]
    a2 = R[2] * t_dot[i, 3] + R[5] * t_dot[i, 4] + R[8] * t_dot[i, 5]
    A = np.zeros((6, 10))
    # m: f = a.
    A[3, 0], A[4, 0], A[5, 0] = a0, a1, a2
    # h = m c: f = (alpha x 1 + w w^T - |w|^2 1) h, n = h x a = -(a x 1) h.
    ww = w0 * w0 + w1 * w1 + w2 * w2
    A[3, 1], A[3, 2], A[3, 3] = w0 * w0 - ww, w0 * w1 - b2, w0 * w2 + b1
    A[4, 1], A[4, 2], A[4, 3] = w1 * w0 + b2, w1 * w1 - ww, w1 * w2 - b0
    A[5, 1], A[5, 2], A[5, 3] = w2 * w0 - b1, w2 * w1 + b0, w2 * w2 - ww
    A[0, 2], A[0, 3] = a2, -a1
    A[1, 1], A[1, 3] = -a2, a0
    A[2, 1], A[2, 2] = a1, -a0
    # I about O_i: n = L(alpha) + w x L(w), I x = L(x) [Ixx Ixy Iyy Ixz Iyz Izz].
    # Columns of L(x): Ixx (x0,0,0), Ixy (x1,x0,0), Iyy (0,x1,0), Ixz (x2,0,x0), Iyz (0,x2,x1),
    # Izz (0,0,x2).
    A[0, 4], A[0, 5], A[1, 5], A[1, 6] = b0, b1, b0, b1
    A[0, 7], A[2, 7], A[1, 8], A[2, 8], A[2, 9] = b2, b0, b2, b1, b2
    L = ((w0, 0.0, 0.0), (w1, w0, 0.0), (0.0, w1, 0.0), (w2, 0.0, w0), (0.0, w2, w1),
         (0.0, 0.0, w2))
    for c in range(6):
        x0, x1, x2 = cross(w0, w1, w2, L[c][0], L[c][1], L[c][2])
        A[0, 4 + c] += x0
        A[1, 4 + c] += x1
        A[2, 4 + c] += x2
    for c in range(10):
        for h in range(2):
            u0, u1, u2 = A[3 * h, c], A[3 * h + 1, c], A[3 * h + 2, c]
            for r in range(3):
                W[3 * h + r, c] = R[3 * r] * u0 + R[3 * r + 1] * u1 + R[3 * r + 2] * u2


@jit
def regressor_state(ints, reals0, q, qd, qdd, kin, P, mot, W, Y):
    """Write the regressor ``Y`` (nv, 10 nb) of one state; ``reals0`` from origin_reals."""
    nb = ints.shape[0]
    forward_kinematics(ints, reals0, q, kin, P)
    t, t_dot = mot[:, _T:_T + 6], mot[:, _TD:_TD + 6]
    twists(ints, kin, P, qd, t)
    twist_rates(ints, reals0, kin, P, t, qd, qdd, 1.0, t_dot)
    for r in range(Y.shape[0]):
        for c in range(Y.shape[1]):
            Y[r, c] = 0.0
    for i in range(nb):
        body_block(kin, t, t_dot, i, W)
        # Carry the wrench to each joint j that bears body i (i and its ancestors), as a moment
        # about O_j, and project it on the joint's columns P (here at O_j: d_j = 0).
        j = i
        while j >= 0:
            r0, r1, r2 = (kin[i, _O] - kin[j, _O], kin[i, _O + 1] - kin[j, _O + 1],
                          kin[i, _O + 2] - kin[j, _O + 2])
            for c in range(10):
                f0, f1, f2 = W[3, c], W[4, c], W[5, c]
                x0, x1, x2 = cross(r0, r1, r2, f0, f1, f2)
                n0, n1, n2 = W[0, c] + x0, W[1, c] + x1, W[2, c] + x2
                for b in range(ints[j, V0], ints[j, V0] + ints[j, NV]):
                    Y[b, 10 * i + c] = (P[b, 0] * n0 + P[b, 1] * n1 + P[b, 2] * n2
                                        + P[b, 3] * f0 + P[b, 4] * f1 + P[b, 5] * f2)
            j = ints[j, PARENT]


@jit
def regressor_one(ints, reals, q, qd, qdd, out):
    """Write the regressor of one state into ``out`` (nv, 10 nb); return a status."""
    nb, nv = ints.shape[0], out.shape[0]
    q, qd, qdd = np.ascontiguousarray(q), np.ascontiguousarray(qd), np.ascontiguousarray(qdd)
    if not (q.shape[0] == configuration_size(ints) and qd.shape[0] == nv
            and qdd.shape[0] == nv and out.shape[1] == 10 * nb
            and configuration_ok(ints, q) and all_finite(qd) and all_finite(qdd)):
        return K.BAD_INPUT
    kin, P, mot = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)), np.empty((nb, MOT_WIDTH))
    regressor_state(ints, origin_reals(reals), q, qd, qdd, kin, P, mot, np.empty((6, 10)),
                    out)
    return K.OK if all_finite(out) else K.BAD_OUTPUT


@jit
def regressor_batch(ints, reals, q, qd, qdd, out):
    """Write the regressor of each row of (B, nq) states into ``out`` (B, nv, 10 nb)."""
    nb, nv = ints.shape[0], qd.shape[1]
    kin, P, mot = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)), np.empty((nb, MOT_WIDTH))
    W, reals0 = np.empty((6, 10)), origin_reals(reals)
    for b in range(q.shape[0]):
        regressor_state(ints, reals0, q[b], qd[b], qdd[b], kin, P, mot, W, out[b])
    return K.OK if all_finite(out) else K.BAD_OUTPUT


_F8, _empty = K.FLOAT64, np.empty
_regressor_one = K.single_state(regressor_one, globals(), '_regressor_one', 'vvvm')


def regressor(model, q, qd, qdd):
    """
    Return the joint-torque regressor ``Y``, shape ``(..., nv, 10 nbodies)``.

    ``Y(q, qd, qdd) @ dr.inertial_parameters(model) == dr.inverse_dynamics(model, q, qd, qdd)``
    for every model with the same kinematics: the columns ``10 i .. 10 i + 9`` belong to body
    ``i`` (joint order; body 0 is the base of a floating model) and its parameters
    ``[m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]``, in the body's joint frame
    with the inertia about the frame origin (Pinocchio's ``computeJointTorqueRegressor``).
    Gravity is the model's. Joint friction, offsets and rotor inertia are extra columns, from
    :func:`denoc_ros.identification.joint_columns`.
    """
    try:  # one state: straight to the kernel (see rnea.inverse_dynamics)
        if (q.ndim == 1 and qd.ndim == 1 and qdd.ndim == 1 and q.dtype is _F8
                and qd.dtype is _F8 and qdd.dtype is _F8):
            pk = model.packed
            out = _empty((pk.n, 10 * pk.nb))
            if not _regressor_one(pk.ints, pk.reals, q, qd, qdd, out):
                return out
    except Exception:
        pass
    batch, (q, qd, qdd), _ = prepare(model, (('q', q), ('qd', qd), ('qdd', qdd)))
    (q, qd, qdd), _ = kernel_arrays(model, (q, qd, qdd))
    pk = model.packed
    out = np.empty((q.shape[0], pk.n, 10 * pk.nb))
    regressor_batch(pk.ints, pk.reals, q, qd, qdd, out)
    return finish(batch, out, 'regressor')
