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
O(n) inverse dynamics in DeNOC form (Saha 1999, Eq. 7-8, 12-15 and 30).

Forward pass: twists ``t_i`` and twist rates ``t_dot_i`` at the mass centres, propagated from
parent to child with ``B_ij`` and ``p_i``. Uncoupled Newton-Euler wrenches
``w_i = M_i t_dot_i + Omega_i M_i E_i t_i`` (Eq. 7-8, ``E_i = diag(1, 0)``). Backward pass: the
resultant wrench of the composite body ``w~_i = w_i + sum_children B_ci^T w~_c`` (Eq. 30, a sum
over the children for a tree) and the joint force ``tau_i = p_i^T w~_i``.

Gravity enters as a fictitious acceleration ``-g`` of the base (Craig's ``0v_dot_0 = -g``), so
every ``t_dot_i`` carries ``[0; -g]`` and the wrenches include the weights. External wrenches
``f_ext`` (Pinocchio's ``fext`` convention, see :func:`inverse_dynamics`) are subtracted from the
body wrenches, which gives ``tau = ID(q, qd, qdd) - sum_i J_i^T f_i``.

The public functions run the compiled kernels of :mod:`._kernels` (``newton_euler_state`` and
friends, the same recursion in scalar code); the NumPy functions below are the vectorised form,
kept for the modules that need the intermediate quantities (joint reactions, Craig's
configuration-space form) and as the readable statement of the algorithm.
"""

import numpy as np

from . import _kernels as K
from ._state import finish, kernel_arrays, prepare
from .kinematics import body_kinematics, cross, propagate_twist, propagate_wrench

_nd, _F8, _VEC, _WRENCHES = np.ndarray, K.FLOAT64, K.VECTOR_STRIDES, K.WRENCH_STRIDES
_inverse_dynamics_one = K.single_state(K.inverse_dynamics_one, globals(),
                                       '_inverse_dynamics_one', 'vvvv')
_inverse_dynamics_fext_one = K.single_state(K.inverse_dynamics_fext_one, globals(),
                                            '_inverse_dynamics_fext_one', 'vvvmv')
_gravity_torques_one = K.single_state(K.gravity_torques_one, globals(), '_gravity_torques_one',
                                      'vv')


def twist_rates(model, kin, qd, qdd, gravity):
    """Return ``t_dot_i = B_ij t_dot_j + B_dot_ij t_j + p_i qdd_i + Omega_i p_i qd_i`` (Eq. 12)."""
    batch, n = qd.shape
    t = kin.t
    t_dot = np.empty((batch, n, 6))
    base_rate = np.concatenate((np.zeros(3), -np.asarray(gravity, dtype=float)))
    for i in range(n):
        k = model.parent[i]
        w_i, p_i = t[:, i, :3], kin.p[:, i]
        if k < 0:
            t_dot[:, i] = base_rate
        else:
            c_ik = kin.C[:, k] - kin.C[:, i]
            c_dot_ik = t[:, k, 3:] - t[:, i, 3:]
            t_dot[:, i] = propagate_twist(c_ik, t_dot[:, k])
            t_dot[:, i, 3:] += cross(c_dot_ik, t[:, k, :3])
        t_dot[:, i] += p_i * qdd[:, i, None]
        t_dot[:, i, :3] += cross(w_i, p_i[:, :3]) * qd[:, i, None]
        t_dot[:, i, 3:] += cross(w_i, p_i[:, 3:]) * qd[:, i, None]
    return t_dot


def body_wrenches(model, kin, t_dot):
    """Return the uncoupled Newton-Euler wrenches ``M_i t_dot_i + Omega_i M_i E_i t_i`` (Eq. 7)."""
    w = kin.t[..., :3]
    wrench = np.empty(t_dot.shape)
    Iw = np.einsum('bnij,bnj->bni', kin.inertia, w)
    wrench[..., :3] = np.einsum('bnij,bnj->bni', kin.inertia, t_dot[..., :3]) + cross(w, Iw)
    wrench[..., 3:] = model.mass[None, :, None] * t_dot[..., 3:]
    return wrench


def external_wrenches(kin, f_ext):
    """Return ``f_ext`` (body frame, [force; torque about O_i]) as Saha wrenches [n; f] at C_i."""
    force = np.einsum('bnij,bnj->bni', kin.R, f_ext[..., :3])
    torque_O = np.einsum('bnij,bnj->bni', kin.R, f_ext[..., 3:])
    return np.concatenate((torque_O - cross(kin.d, force), force), axis=-1)


def resultant_wrenches(model, kin, wrench):
    """Return ``w~_i = w_i + sum_children B_ci^T w~_c`` by the backward recursion (Eq. 30)."""
    w_tilde = wrench.copy()
    for i in range(model.dof - 1, -1, -1):
        k = model.parent[i]
        if k >= 0:
            w_tilde[:, k] += propagate_wrench(kin.C[:, k] - kin.C[:, i], w_tilde[:, i])
    return w_tilde


def newton_euler(model, q, qd, qdd, f_ext, gravity):
    """Return ``tau_i = p_i^T w~_i`` (Saha Eq. 30) for flattened (B, n) arrays."""
    kin = body_kinematics(model, q, qd)
    wrench = body_wrenches(model, kin, twist_rates(model, kin, qd, qdd, gravity))
    if f_ext is not None:
        wrench -= external_wrenches(kin, f_ext)
    w_tilde = resultant_wrenches(model, kin, wrench)
    return np.einsum('bni,bni->bn', kin.p, w_tilde)


def inverse_dynamics(model, q, qd, qdd, f_ext=None):
    """
    Return the joint forces ``tau`` that produce ``qdd`` at ``(q, qd)`` (Saha Eq. 30).

    ``tau = M(q) qdd + C(q, qd) qd + g(q) - sum_i J_i(q)^T f_i``, shape ``(..., n)``.

    ``f_ext`` (optional, shape ``(..., n, 6)``): the wrench applied by the environment to each
    body, ``[force(3); torque(3)]`` in the body's own frame, torque about the body frame origin
    (Pinocchio's ``fext`` in the joint-local frame, ``[linear; angular]``).
    """
    if (type(q) is _nd and type(qd) is _nd and type(qdd) is _nd and q.dtype is _F8
            and qd.dtype is _F8 and qdd.dtype is _F8 and q.strides == _VEC
            and qd.strides == _VEC and qdd.strides == _VEC):
        # One state given as C-contiguous float64 vectors (exactly the types the kernel's entry
        # point takes unchecked, see _kernels.single_state): straight to the kernel. Anything
        # else (not a model, a list, float32, a strided array) or a state it rejects (wrong
        # length, NaN) goes on to the checked path, which raises the documented error.
        try:
            pk = model.packed
            out = np.empty(pk.n)
            if f_ext is None:
                status = _inverse_dynamics_one(pk.ints, pk.reals, q, qd, qdd, out)
            elif type(f_ext) is _nd and f_ext.dtype is _F8 and f_ext.strides == _WRENCHES:
                status = _inverse_dynamics_fext_one(pk.ints, pk.reals, q, qd, qdd, f_ext, out)
            else:
                status = K.BAD_INPUT
        except Exception:
            status = K.BAD_INPUT
        if not status:
            return out
    batch, (q, qd, qdd), f_ext = prepare(model, (('q', q), ('qd', qd), ('qdd', qdd)), f_ext)
    (q, qd, qdd), f_ext = kernel_arrays(model, (q, qd, qdd), f_ext)
    pk = model.packed
    tau = np.empty(q.shape)
    K.inverse_dynamics_batch(pk.ints, pk.reals, q, qd, qdd, f_ext, 1.0, tau)
    return finish(batch, tau, 'inverse_dynamics')


def gravity_torques(model, q):
    """Return ``g(q) = ID(q, 0, 0)``, the joint forces holding the arm against gravity (Eq. 30)."""
    if type(q) is _nd and q.dtype is _F8 and q.strides == _VEC:
        try:  # see inverse_dynamics
            pk = model.packed
            out = np.empty(pk.n)
            status = _gravity_torques_one(pk.ints, pk.reals, q, out)
        except Exception:
            status = K.BAD_INPUT
        if not status:
            return out
    batch, (q,), _ = prepare(model, (('q', q),))
    (q,), _ = kernel_arrays(model, (q,))
    pk = model.packed
    tau = np.empty(q.shape)
    K.gravity_torques_batch(pk.ints, pk.reals, q, tau)
    return finish(batch, tau, 'gravity_torques')
