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

from . import _compile
from ._compile import all_finite, cross, jit, model_arrays
from ._fast import fast_path
from ._packed import COM, NV, PARENT, V0
from ._state import checked_batch
from .kinematics import (_O, _R, _T, _TD, configuration_ok, configuration_size,
                         forward_kinematics, KIN_WIDTH, MOT_WIDTH, twist_rates, twists)

__all__ = ['regressor', 'PARAMETERS_PER_BODY']

PARAMETERS_PER_BODY = 10


@jit
def origin_reals(reals, nb):
    """Return a copy of the packed model with each of the nb bodies' mass centres at its origin."""
    out = reals.copy()
    for i in range(nb):
        out[i, COM], out[i, COM + 1], out[i, COM + 2] = 0.0, 0.0, 0.0
    return out


@jit
def regressor_state(ints, reals0, q, qd, qdd, kin, P, mot, Y):
    """
    Write the regressor ``Y`` (nv, 10 nb) of one state; ``reals0`` from origin_reals.

    Block ``(b, i)`` is ``P_b^T X A_i`` with ``A_i`` of the module docstring: with the column
    carried to O_i, ``a = P_ang`` and ``c = P_lin + P_ang x (O_i - O_j)`` (so that
    ``P_b^T [n + r x f; f] = a . n + c . f``), both turned into body i's axes, the ten entries
    are ``c . a_O`` (m), ``(S^T c + a_O x a)_k`` (h, ``S = alpha x 1 + w x w x 1``), and
    ``a . L(alpha) + (a x w) . L(w)`` (inertia), ``L(x)`` the 3x6 map ``I x = L(x) I_vec``.
    """
    nb = ints.shape[0]
    forward_kinematics(ints, reals0, q, kin, P)
    t, t_dot = mot[:, _T:_T + 6], mot[:, _TD:_TD + 6]
    twists(ints, kin, P, qd, t)
    twist_rates(ints, reals0, kin, P, t, qd, qdd, 1.0, t_dot)
    for r in range(Y.shape[0]):
        for c in range(Y.shape[1]):
            Y[r, c] = 0.0
    for i in range(nb):
        R = kin[i, _R:_R + 9]
        # Motion of O_i in body axes: R^T times the base-axis vectors.
        w0 = R[0] * t[i, 0] + R[3] * t[i, 1] + R[6] * t[i, 2]
        w1 = R[1] * t[i, 0] + R[4] * t[i, 1] + R[7] * t[i, 2]
        w2 = R[2] * t[i, 0] + R[5] * t[i, 1] + R[8] * t[i, 2]
        b0 = R[0] * t_dot[i, 0] + R[3] * t_dot[i, 1] + R[6] * t_dot[i, 2]
        b1 = R[1] * t_dot[i, 0] + R[4] * t_dot[i, 1] + R[7] * t_dot[i, 2]
        b2 = R[2] * t_dot[i, 0] + R[5] * t_dot[i, 1] + R[8] * t_dot[i, 2]
        x0 = R[0] * t_dot[i, 3] + R[3] * t_dot[i, 4] + R[6] * t_dot[i, 5]
        x1 = R[1] * t_dot[i, 3] + R[4] * t_dot[i, 4] + R[7] * t_dot[i, 5]
        x2 = R[2] * t_dot[i, 3] + R[5] * t_dot[i, 4] + R[8] * t_dot[i, 5]
        # S = alpha x 1 + w w^T - |w|^2 1 (the first moments' force per unit h).
        ww = w0 * w0 + w1 * w1 + w2 * w2
        S00, S01, S02 = w0 * w0 - ww, w0 * w1 - b2, w0 * w2 + b1
        S10, S11, S12 = w1 * w0 + b2, w1 * w1 - ww, w1 * w2 - b0
        S20, S21, S22 = w2 * w0 - b1, w2 * w1 + b0, w2 * w2 - ww
        col = 10 * i
        j = i
        while j >= 0:
            r0, r1, r2 = (kin[i, _O] - kin[j, _O], kin[i, _O + 1] - kin[j, _O + 1],
                          kin[i, _O + 2] - kin[j, _O + 2])
            for k in range(ints[j, V0], ints[j, V0] + ints[j, NV]):
                p0, p1, p2 = P[k, 0], P[k, 1], P[k, 2]
                y0, y1, y2 = cross(p0, p1, p2, r0, r1, r2)
                c0, c1, c2 = P[k, 3] + y0, P[k, 4] + y1, P[k, 5] + y2
                # Into body i's axes.
                a0 = R[0] * p0 + R[3] * p1 + R[6] * p2
                a1 = R[1] * p0 + R[4] * p1 + R[7] * p2
                a2 = R[2] * p0 + R[5] * p1 + R[8] * p2
                d0 = R[0] * c0 + R[3] * c1 + R[6] * c2
                d1 = R[1] * c0 + R[4] * c1 + R[7] * c2
                d2 = R[2] * c0 + R[5] * c1 + R[8] * c2
                u0, u1, u2 = cross(x0, x1, x2, a0, a1, a2)
                g0, g1, g2 = cross(a0, a1, a2, w0, w1, w2)
                Y[k, col] = d0 * x0 + d1 * x1 + d2 * x2
                Y[k, col + 1] = S00 * d0 + S10 * d1 + S20 * d2 + u0
                Y[k, col + 2] = S01 * d0 + S11 * d1 + S21 * d2 + u1
                Y[k, col + 3] = S02 * d0 + S12 * d1 + S22 * d2 + u2
                Y[k, col + 4] = a0 * b0 + g0 * w0
                Y[k, col + 5] = a0 * b1 + a1 * b0 + g0 * w1 + g1 * w0
                Y[k, col + 6] = a1 * b1 + g1 * w1
                Y[k, col + 7] = a0 * b2 + a2 * b0 + g0 * w2 + g2 * w0
                Y[k, col + 8] = a1 * b2 + a2 * b1 + g1 * w2 + g2 * w1
                Y[k, col + 9] = a2 * b2 + g2 * w2
            j = ints[j, PARENT]


@jit
def regressor_one(handle, q, qd, qdd, out):
    """Write the regressor of one state into ``out`` (nv, 10 nb); return a status."""
    ints, reals, work, _ = model_arrays(handle)
    nb, nv = ints.shape[0], out.shape[0]
    q, qd, qdd = np.ascontiguousarray(q), np.ascontiguousarray(qd), np.ascontiguousarray(qdd)
    if not (q.shape[0] == configuration_size(ints) and qd.shape[0] == nv
            and qdd.shape[0] == nv and out.shape[1] == 10 * nb
            and configuration_ok(ints, q) and all_finite(qd) and all_finite(qdd)):
        return _compile.BAD_INPUT
    regressor_state(ints, origin_reals(reals, ints.shape[0]), q, qd, qdd, work[0], work[1],
                    work[2], out)
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@jit
def regressor_batch(ints, reals, q, qd, qdd, out):
    """Write the regressor of each row of (B, nq) states into ``out`` (B, nv, 10 nb)."""
    nb, nv = ints.shape[0], qd.shape[1]
    kin, P, mot = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)), np.empty((nb, MOT_WIDTH))
    reals0 = origin_reals(reals, ints.shape[0])
    for b in range(q.shape[0]):
        regressor_state(ints, reals0, q[b], qd[b], qdd[b], kin, P, mot, out[b])
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@fast_path(regressor_one, 'vvvm', 'Y', states='q qd qdd',
           result='(pk.nv, 10 * pk.nb)')
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
    return checked_batch(model, regressor_batch, (('q', q), ('qd', qd), ('qdd', qdd)),
                         _regressor_shape, 'regressor')


def _regressor_shape(pk):
    """Return ``(nv, 10 nb)``: the shape of one state's regressor."""
    return (pk.nv, 10 * pk.nb)
