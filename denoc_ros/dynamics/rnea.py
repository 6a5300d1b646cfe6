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
Inverse dynamics by the recursive Newton-Euler algorithm in DeNOC form (Saha 1999, Eq. 7-8, 30).

Forward pass: twists ``t_i`` and twist rates ``t_dot_i`` at the mass centres, propagated from
parent to child with ``B_ij`` and ``P_i`` (:mod:`.kinematics`). Uncoupled Newton-Euler wrenches
``w_i = M_i t_dot_i + Omega_i M_i E_i t_i`` (Eq. 7-8, ``E_i = diag(1, 0)``). Backward pass: the
resultant wrench of the composite body ``w~_i = w_i + sum_children B_ci^T w~_c`` (Eq. 30, a sum
over the children for a tree) and the joint forces ``tau_i = P_i^T w~_i``, evaluated with the
wrenches carried to the base origin, where ``B_ci`` is the identity (:func:`origin_resultants`).

Gravity enters as a fictitious acceleration ``-g`` of the base (Craig's ``0v_dot_0 = -g``), so
every ``t_dot_i`` carries ``[0; -g]`` and the wrenches include the weights. External wrenches
``f_ext`` (Pinocchio's ``fext`` convention, see :func:`inverse_dynamics`) are subtracted from the
body wrenches, which gives ``tau = ID(q, v, a) - sum_i J_i^T f_i``. The same recursion gives
``gravity_torques`` (``v = a = 0``), ``coriolis_torques`` (``a = 0``, no gravity) and the joint
reaction wrenches (:mod:`.reactions`).
"""

import numpy as np

from . import _compile
from ._compile import all_finite, cross, jit, model_arrays, row
from ._fast import fast_path
from ._packed import GRAVITY, INERTIA, MASS, NV, PARENT, V0
from ._packed import packed
from ._state import checked_batch, finish, kernel_arrays, prepare, vector
from .kinematics import (_C, _D, _O, _R, _T, _TD, _W, configuration_ok, configuration_size,
                         forward_kinematics, KIN_WIDTH, MOT_WIDTH, twist_rates, twists)

__all__ = ['coriolis_torques', 'gravity_torques', 'inverse_dynamics']


@jit
def subtract_external_wrench(kin, fext, i, w):
    """Subtract ``f_ext[i]`` (body frame, [force; torque about O_i]) as [n; f] at C_i from w[i]."""
    f0 = kin[i, _R] * fext[i, 0] + kin[i, _R + 1] * fext[i, 1] + kin[i, _R + 2] * fext[i, 2]
    f1 = kin[i, _R + 3] * fext[i, 0] + kin[i, _R + 4] * fext[i, 1] + kin[i, _R + 5] * fext[i, 2]
    f2 = kin[i, _R + 6] * fext[i, 0] + kin[i, _R + 7] * fext[i, 1] + kin[i, _R + 8] * fext[i, 2]
    n0 = kin[i, _R] * fext[i, 3] + kin[i, _R + 1] * fext[i, 4] + kin[i, _R + 2] * fext[i, 5]
    n1 = kin[i, _R + 3] * fext[i, 3] + kin[i, _R + 4] * fext[i, 4] + kin[i, _R + 5] * fext[i, 5]
    n2 = kin[i, _R + 6] * fext[i, 3] + kin[i, _R + 7] * fext[i, 4] + kin[i, _R + 8] * fext[i, 5]
    x0, x1, x2 = cross(kin[i, _D], kin[i, _D + 1], kin[i, _D + 2], f0, f1, f2)
    w[i, 0] -= n0 - x0
    w[i, 1] -= n1 - x1
    w[i, 2] -= n2 - x2
    w[i, 3] -= f0
    w[i, 4] -= f1
    w[i, 5] -= f2


@jit
def origin_resultants(ints, kin, P, W, tau):
    """
    Sum ``W~_i = W_i + sum_children W~_c`` backwards, ``tau = P_i^T w~_i`` (Saha Eq. 30).

    ``W`` (nb, 6) holds the body wrenches carried to the base origin, ``[n + C_i x f; f]``:
    there ``B_ic^T`` is the identity and Eq. 30 a plain sum over the subtree (as the mass
    matrix's composites, :mod:`.crba`); ``P_i^T w~_i`` at ``C_i`` equals the screw at the origin
    ``[p_ang; p_lin + C_i x p_ang]`` applied to ``W~_i``. ``W`` is left holding the resultants
    ``W~_i``. A child that is the next body visited (a chain) passes its resultant in locals.
    """
    c0, c1, c2, c3, c4, c5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    for i in range(ints.shape[0] - 1, -1, -1):
        n0, n1, n2 = W[i, 0] + c0, W[i, 1] + c1, W[i, 2] + c2
        f0, f1, f2 = W[i, 3] + c3, W[i, 4] + c4, W[i, 5] + c5
        W[i, 0], W[i, 1], W[i, 2], W[i, 3], W[i, 4], W[i, 5] = n0, n1, n2, f0, f1, f2
        C0, C1, C2 = kin[i, _C], kin[i, _C + 1], kin[i, _C + 2]
        for b in range(ints[i, V0], ints[i, V0] + ints[i, NV]):
            s0, s1, s2 = cross(C0, C1, C2, P[b, 0], P[b, 1], P[b, 2])
            tau[b] = (P[b, 0] * n0 + P[b, 1] * n1 + P[b, 2] * n2 + (P[b, 3] + s0) * f0
                      + (P[b, 4] + s1) * f1 + (P[b, 5] + s2) * f2)
        k = ints[i, PARENT]
        if k >= 0 and k == i - 1:
            c0, c1, c2, c3, c4, c5 = n0, n1, n2, f0, f1, f2
        else:
            c0, c1, c2, c3, c4, c5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
            if k >= 0:
                W[k, 0] += n0
                W[k, 1] += n1
                W[k, 2] += n2
                W[k, 3] += f0
                W[k, 4] += f1
                W[k, 5] += f2


@jit
def newton_euler_state(ints, reals, q, qd, qdd, fext, gscale, kin, P, mot, tau):
    """Write ``tau = P_i^T w~_i`` (Saha Eq. 30) of one state; gravity scaled by ``gscale``."""
    nb = ints.shape[0]
    forward_kinematics(ints, reals, q, kin, P)
    t, t_dot, w = mot[:, _T:_T + 6], mot[:, _TD:_TD + 6], mot[:, _W:_W + 6]
    twists(ints, kin, P, qd, t)
    twist_rates(ints, reals, kin, P, t, qd, qdd, gscale, t_dot)
    # Uncoupled Newton-Euler wrenches w_i = M_i t_dot_i + Omega_i M_i E_i t_i (Eq. 7-8), the
    # moment I_i alpha + w x I_i w with I_i = R_i Ib_i R_i^T applied in body i's axes.
    for i in range(nb):
        R0, R1, R2 = kin[i, _R], kin[i, _R + 1], kin[i, _R + 2]
        R3, R4, R5 = kin[i, _R + 3], kin[i, _R + 4], kin[i, _R + 5]
        R6, R7, R8 = kin[i, _R + 6], kin[i, _R + 7], kin[i, _R + 8]
        w0, w1, w2 = t[i, 0], t[i, 1], t[i, 2]
        a0, a1, a2 = t_dot[i, 0], t_dot[i, 1], t_dot[i, 2]
        u0, u1, u2 = (R0 * w0 + R3 * w1 + R6 * w2, R1 * w0 + R4 * w1 + R7 * w2,
                      R2 * w0 + R5 * w1 + R8 * w2)
        b0, b1, b2 = (R0 * a0 + R3 * a1 + R6 * a2, R1 * a0 + R4 * a1 + R7 * a2,
                      R2 * a0 + R5 * a1 + R8 * a2)
        J0, J1, J2 = reals[i, INERTIA], reals[i, INERTIA + 1], reals[i, INERTIA + 2]
        J4, J5, J8 = reals[i, INERTIA + 4], reals[i, INERTIA + 5], reals[i, INERTIA + 8]
        z0, z1, z2 = (J0 * u0 + J1 * u1 + J2 * u2, J1 * u0 + J4 * u1 + J5 * u2,
                      J2 * u0 + J5 * u1 + J8 * u2)
        x0, x1, x2 = cross(u0, u1, u2, z0, z1, z2)
        y0 = J0 * b0 + J1 * b1 + J2 * b2 + x0
        y1 = J1 * b0 + J4 * b1 + J5 * b2 + x1
        y2 = J2 * b0 + J5 * b1 + J8 * b2 + x2
        m = reals[i, MASS]
        w[i, 0] = R0 * y0 + R1 * y1 + R2 * y2
        w[i, 1] = R3 * y0 + R4 * y1 + R5 * y2
        w[i, 2] = R6 * y0 + R7 * y1 + R8 * y2
        w[i, 3] = m * t_dot[i, 3]
        w[i, 4] = m * t_dot[i, 4]
        w[i, 5] = m * t_dot[i, 5]
        if fext.shape[0] > 0:
            subtract_external_wrench(kin, fext, i, w)
        # Carried to the base origin: [n + C_i x f; f].
        x0, x1, x2 = cross(kin[i, _C], kin[i, _C + 1], kin[i, _C + 2], w[i, 3], w[i, 4],
                           w[i, 5])
        w[i, 0] += x0
        w[i, 1] += x1
        w[i, 2] += x2
    origin_resultants(ints, kin, P, w, tau)  # backwards (Eq. 30)


@jit
def newton_euler_one(handle, q, qd, qdd, fext, gscale, out):
    """
    Write ``tau`` (Saha Eq. 30) of one state into ``out``; return a status.

    The entry point of inverse dynamics with external wrenches and of the Coriolis torques:
    ``gscale`` scales gravity, and without gravity (``gscale == 0``, the Coriolis torques)
    ``qdd`` of length 0 means zero accelerations; ``fext`` of length 0 means no wrenches.
    Inputs of any strides are made contiguous.
    """
    return newton_euler_entry(handle, q, qd, qdd, fext, gscale, out)


@jit
def inverse_dynamics_one(handle, q, qd, qdd, out):
    """Write ``tau`` (Saha Eq. 30) of one state without external wrenches; return a status."""
    # newton_euler_one with two arguments fewer for the entry point to convert; the "no
    # wrenches" is an empty view of the scratch space, C-contiguous as fext is there.
    _, _, work, _ = model_arrays(handle)
    return newton_euler_entry(handle, q, qd, qdd, work[0, :0], 1.0, out)


@jit(inline=True)
def newton_euler_entry(handle, q, qd, qdd, fext, gscale, out):
    """Check one state, write its ``tau`` (Saha Eq. 30) into ``out``; return a status."""
    ints, reals, work, _ = model_arrays(handle)
    nb, nv = ints.shape[0], out.shape[0]
    q, qd = np.ascontiguousarray(q), np.ascontiguousarray(qd)
    qdd, fext = np.ascontiguousarray(qdd), np.ascontiguousarray(fext)
    if not (q.shape[0] == configuration_size(ints) and qd.shape[0] == nv
            and (qdd.shape[0] == nv or (qdd.shape[0] == 0 and gscale == 0.0))
            and (fext.shape[0] == 0 or (fext.shape[0] == nb and fext.shape[1] == 6))
            and configuration_ok(ints, q) and all_finite(qd) and all_finite(qdd)
            and all_finite(fext)):
        return _compile.BAD_INPUT
    if qdd.shape[0] == 0:
        qdd = np.zeros(nv)
    newton_euler_state(ints, reals, q, qd, qdd, fext, gscale, work[0], work[1], work[2], out)
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@jit
def inverse_dynamics_batch(ints, reals, q, qd, qdd, fext, gscale, out):
    """Write ``tau`` (Saha Eq. 30) of each row of (B, nq) states into ``out`` (B, nv)."""
    nb, nv = ints.shape[0], out.shape[1]
    kin, P, mot = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)), np.empty((nb, MOT_WIDTH))
    none = np.zeros((0, 6))  # of fext[b]'s type (a read-only constant would add a compilation)
    for b in range(q.shape[0]):
        newton_euler_state(ints, reals, q[b], row(qd, b), row(qdd, b),
                           row(fext, b) if fext.shape[0] > 0 else none, gscale, kin, P,
                           mot, out[b])
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@jit
def reaction_wrenches_batch(ints, reals, q, qd, qdd, fext, local, out):
    """Write the resultant wrenches ``w~_i`` as [f; n about O_i], (B, nb, 6), base or body axes."""
    nb, nv = ints.shape[0], qd.shape[1]
    kin, P, mot = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)), np.empty((nb, MOT_WIDTH))
    tau, none = np.empty(nv), np.zeros((0, 6))
    for b in range(q.shape[0]):
        newton_euler_state(ints, reals, q[b], qd[b], qdd[b],
                           fext[b] if fext.shape[0] > 0 else none, 1.0, kin, P, mot, tau)
        for i in range(nb):
            # The resultant W~_i about the base origin, moved to O_i: n - O_i x f.
            f0, f1, f2 = mot[i, _W + 3], mot[i, _W + 4], mot[i, _W + 5]
            x0, x1, x2 = cross(kin[i, _O], kin[i, _O + 1], kin[i, _O + 2], f0, f1, f2)
            out[b, i, 0], out[b, i, 1], out[b, i, 2] = f0, f1, f2
            out[b, i, 3] = mot[i, _W] - x0
            out[b, i, 4] = mot[i, _W + 1] - x1
            out[b, i, 5] = mot[i, _W + 2] - x2
            if local:
                # Base axes -> body i's axes: R_i^T.
                for h in range(2):
                    u0, u1, u2 = out[b, i, 3 * h], out[b, i, 3 * h + 1], out[b, i, 3 * h + 2]
                    for r in range(3):
                        out[b, i, 3 * h + r] = (kin[i, _R + r] * u0 + kin[i, _R + 3 + r] * u1
                                                + kin[i, _R + 6 + r] * u2)
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@jit
def gravity_state(ints, reals, q, kin, P, w, tau):
    """Write ``g(q) = ID(q, 0, 0)``: Eq. 30 with t_dot_i = [0; -g], w_i = [0; -m_i g] only."""
    nb = ints.shape[0]
    forward_kinematics(ints, reals, q, kin, P)
    g0, g1, g2 = reals[nb, GRAVITY], reals[nb, GRAVITY + 1], reals[nb, GRAVITY + 2]
    for i in range(nb):
        m = reals[i, MASS]
        f0, f1, f2 = -m * g0, -m * g1, -m * g2
        # [0; f] at C_i carried to the base origin: [C_i x f; f].
        w[i, 0], w[i, 1], w[i, 2] = cross(kin[i, _C], kin[i, _C + 1], kin[i, _C + 2], f0, f1,
                                          f2)
        w[i, 3], w[i, 4], w[i, 5] = f0, f1, f2
    origin_resultants(ints, kin, P, w, tau)  # backwards (Eq. 30)


@jit
def gravity_torques_one(handle, q, out):
    """Write ``g(q) = ID(q, 0, 0)`` (Eq. 30) into ``out``; return a status."""
    ints, reals, work, _ = model_arrays(handle)
    q = np.ascontiguousarray(q)
    if not (q.shape[0] == configuration_size(ints)
            and configuration_ok(ints, q)):
        return _compile.BAD_INPUT
    gravity_state(ints, reals, q, work[0], work[1], work[2], out)
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@jit
def gravity_torques_batch(ints, reals, q, out):
    """Write ``g(q)`` (Eq. 30) of each row of ``q`` (B, nq) into ``out`` (B, nv)."""
    nb, nv = ints.shape[0], out.shape[1]
    kin, P, w = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)), np.empty((nb, 6))
    for b in range(q.shape[0]):
        gravity_state(ints, reals, q[b], kin, P, w, out[b])
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@fast_path(newton_euler_one, 'vvvwfo', 'tau', states='q qd qdd',
           wrench='f_ext', plain=(inverse_dynamics_one, 'vvvo', 'q, qd, qdd'),
           args='q, qd, qdd, f_ext, 1.0', result='pk.nv')
def inverse_dynamics(model, q, qd, qdd, f_ext=None):
    """
    Return the generalized forces ``tau`` that produce ``qdd`` at ``(q, qd)`` (Saha Eq. 30).

    ``tau = M(q) qdd + C(q, qd) qd + g(q) - sum_i J_i(q)^T f_i``, shape ``(..., nv)``. For a
    floating-base model ``tau[:6]`` is the base wrench ``[force; torque about the base
    origin]`` in the base frame that the motion needs (zero for a free-floating system that
    really moves so).

    ``f_ext`` (optional, shape ``(..., nbodies, 6)``): the wrench applied by the environment to
    each body, ``[force(3); torque(3)]`` in the body's own frame, torque about the body frame
    origin (Pinocchio's ``fext`` in the joint-local frame, ``[linear; angular]``); for a
    floating model row 0 is the base.
    """
    batch, (q, qd, qdd), f_ext = prepare(model, (('q', q), ('qd', qd), ('qdd', qdd)), f_ext)
    (q, qd, qdd), f_ext = kernel_arrays(model, (q, qd, qdd), f_ext)
    pk = packed(model)
    tau = np.empty((q.shape[0], pk.nv))
    inverse_dynamics_batch(pk.ints, pk.reals, q, qd, qdd, f_ext, 1.0, tau)
    return finish(batch, tau, 'inverse_dynamics')


@fast_path(gravity_torques_one, 'vo', 'g', states='q',
           result='pk.nv')
def gravity_torques(model, q):
    """Return ``g(q) = ID(q, 0, 0)``, the forces holding the robot against gravity (Eq. 30)."""
    return checked_batch(model, gravity_torques_batch, (('q', q),), vector, 'gravity_torques')


@fast_path(newton_euler_one, 'vvvwfo', 'coriolis', states='q qd',
           args='q, qd, NO_ACCEL, NO_WRENCH, 0.0',
           result='pk.nv')
def coriolis_torques(model, q, qd):
    """Return ``C(q, qd) qd``, shape (..., nv): Eq. 30 with ``qdd = 0`` and no gravity."""
    batch, (q, qd), _ = prepare(model, (('q', q), ('qd', qd)))
    (q, qd), f_ext = kernel_arrays(model, (q, qd))
    pk = packed(model)
    out = np.empty((q.shape[0], pk.nv))
    inverse_dynamics_batch(pk.ints, pk.reals, q, qd, np.zeros((1, pk.nv)), f_ext, 0.0, out)
    return finish(batch, out, 'coriolis_torques')
