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
Joint friction (Craig ch. 6, "non-rigid-body effects"; seed 002) added to the rigid-body dynamics.

The model is Craig's viscous plus Coulomb friction, one pair of coefficients per joint::

    tau_friction = v qd + c sgn(qd)                                   (Craig, seed 002)

with the sign function smoothed by a hyperbolic tangent of velocity scale ``v_s``::

    tau_friction = v qd + c tanh(qd / v_s)

Why smoothed: ``sgn`` jumps at ``qd = 0``, so forward dynamics with exact Coulomb friction is a
discontinuous ODE right-hand side (chattering, step-size collapse in adaptive integrators). The
tanh is smooth, odd and bounded by ``c``; it equals ``c sgn(qd)`` up to ``2 c exp(-2 |qd| / v_s)``,
i.e. to machine precision once ``|qd| > 20 v_s``, and tends to ``c sgn(qd)`` pointwise as
``v_s -> 0``. ``smoothing=0`` selects the exact ``c sgn(qd)`` (``sgn(0) = 0``). The default
``v_s = 1e-3`` (rad/s for revolute, m/s for prismatic joints) is far below the velocities of a
moving arm. Stiction (static friction above the Coulomb level) is not modelled.

The coefficients default to the URDF's ``<dynamics damping="v" friction="c"/>`` of each joint
(``model.damping``, ``model.friction``; 0 where absent), and each can be overridden: a scalar for
every joint, a length-``n`` sequence, or a mapping ``{joint_name: value}`` that replaces only the
named joints. Friction opposes the motion, so a motor has to supply it:
``tau = ID(q, qd, qdd) + tau_friction(qd)`` and ``qdd = FD(q, qd, tau - tau_friction(qd))``.
"""

from collections.abc import Mapping

import numpy as np

from .dynamics import forward_dynamics, inverse_dynamics
from .dynamics._state import check_model, finish, joint_vector, prepare
from .errors import InputError

DEFAULT_SMOOTHING = 1e-3
"""Default velocity scale ``v_s`` of the tanh-smoothed Coulomb term (rad/s or m/s)."""


def friction_coefficients(model, name, value, default):
    """
    Return per-joint, non-negative, finite coefficients ``(n,)`` from an override or a default.

    ``value``: ``None`` (use ``default``), a scalar, a length-``n`` sequence, or a mapping from
    joint names to values (joints not named keep ``default``).
    """
    n = model.dof
    out = np.array(default, dtype=float, copy=True)
    if value is None:
        pass
    elif isinstance(value, Mapping):
        index = {joint: i for i, joint in enumerate(model.joint_names)}
        for joint, v in value.items():
            if joint not in index:
                raise InputError(f'{name}: unknown joint {joint!r}; the joints of the model are '
                                 f'{", ".join(model.joint_names)}')
            try:
                out[index[joint]] = float(v)
            except (TypeError, ValueError):
                raise InputError(f'{name}[{joint!r}] must be a number, got {v!r}') from None
    else:
        try:
            arr = np.asarray(value, dtype=float)
        except (TypeError, ValueError) as exc:
            raise InputError(f'{name} must be a number or an array of numbers: {exc}') from None
        if arr.ndim == 0:
            out[:] = arr
        elif arr.shape == (n,):
            out[:] = arr
        else:
            raise InputError(f'{name} has shape {arr.shape}, expected a scalar or length {n} '
                             f'(one value per joint: {", ".join(model.joint_names)})')
    for i, v in enumerate(out):
        if not np.isfinite(v) or v < 0.0:
            raise InputError(f'{name} of joint {model.joint_names[i]!r} is {v}: it must be '
                             'finite and non-negative')
    return out


def coulomb_sign(qd, smoothing=DEFAULT_SMOOTHING, exact=None):
    """
    Return the smoothed sign of the Coulomb term, ``tanh(qd / v_s)`` (``sgn(qd)`` where v_s = 0).

    ``smoothing`` ``v_s``: a scalar or one per joint. ``exact`` (optional): the mask of joints
    with ``v_s = 0`` when the caller has it already (then ``smoothing`` holds any positive
    value there), or False for none. Used by the friction law and by the identification's
    Coulomb column.
    """
    smoothing = np.asarray(smoothing, dtype=float)
    if exact is None:
        exact = smoothing == 0.0
        if exact.any():
            smoothing = np.where(exact, 1.0, smoothing)
    sign = np.tanh(qd / smoothing)
    if exact is not False and np.any(exact):
        sign = np.where(exact, np.sign(qd), sign)
    return sign


def friction_torques(model, qd, viscous=None, coulomb=None, smoothing=DEFAULT_SMOOTHING):
    """
    Return the joint friction ``v qd + c tanh(qd / v_s)`` (Craig's ``v qd + c sgn(qd)``).

    ``qd`` has shape ``(..., nv)``; so has the result. ``viscous`` (``v``) and ``coulomb``
    (``c``) default to the model's URDF ``damping`` and ``friction``; pass a scalar, a
    length-``n`` array or a ``{joint_name: value}`` mapping to override them. ``smoothing`` is
    the velocity scale ``v_s`` > 0 (scalar or per joint); ``0`` gives the exact ``c sgn(qd)``.
    The result opposes the motion when subtracted from the motor torque (see module docstring).
    For a floating-base model friction acts on the joint rates ``qd[..., 6:]``; the base's six
    entries of the result are zero.
    """
    batch, (qd,), _ = prepare(model, (('qd', qd),))
    tau = JointFriction(model, viscous, coulomb, smoothing)(qd)
    return finish(batch, tau, 'friction_torques')


class JointFriction:
    """
    The friction ``v qd + c tanh(qd / v_s)`` of a model's joints, coefficients checked once.

    The one implementation of the friction law: :func:`friction_torques` builds one per call;
    the dynamics node keeps one per model, so that a joint state costs three operations on
    ``(nv,)`` vectors rather than the coefficient checks (about 50 us). Coefficients as in
    :func:`friction_torques`; a floating base's six velocities feel no friction.
    """

    def __init__(self, model, viscous=None, coulomb=None, smoothing=DEFAULT_SMOOTHING):
        check_model(model)
        base = model.nv - model.dof  # 6 for a floating base
        self.viscous, self.coulomb = np.zeros(model.nv), np.zeros(model.nv)
        self.viscous[base:] = friction_coefficients(model, 'viscous', viscous, model.damping)
        self.coulomb[base:] = friction_coefficients(model, 'coulomb', coulomb, model.friction)
        if smoothing is None:
            smoothing = DEFAULT_SMOOTHING
        v_s = np.ones(model.nv)
        v_s[base:] = friction_coefficients(model, 'smoothing', smoothing, np.zeros(model.dof))
        exact = v_s == 0.0  # exact c sgn(qd) for these joints
        self.smoothing = np.where(exact, 1.0, v_s)
        self.exact = exact if exact.any() else False  # False: no mask to apply per call

    @property
    def nonzero(self):
        """Return whether any joint has a non-zero coefficient."""
        return bool(self.viscous.any() or self.coulomb.any())

    def __call__(self, qd):
        """Return the friction torques at velocities ``qd`` (..., nv) (Craig, seed 002)."""
        return self.viscous * qd + self.coulomb * coulomb_sign(qd, self.smoothing, self.exact)


def inverse_dynamics_with_friction(model, q, qd, qdd, f_ext=None, viscous=None, coulomb=None,
                                   smoothing=DEFAULT_SMOOTHING):
    """
    Return ``tau = ID(q, qd, qdd) + tau_friction(qd)``: the motor torque including friction.

    Craig's ``tau = M qdd + V + G + F(q, qd)`` (seed 002); shape ``(..., nv)``. Friction keywords
    as in :func:`friction_torques`; ``f_ext`` as in :func:`denoc_ros.inverse_dynamics`.
    """
    tau = inverse_dynamics(model, q, qd, qdd, f_ext)
    return tau + friction_torques(model, qd, viscous, coulomb, smoothing)


def forward_dynamics_with_friction(model, q, qd, tau, f_ext=None, viscous=None, coulomb=None,
                                   smoothing=DEFAULT_SMOOTHING):
    """
    Return ``qdd = FD(q, qd, tau - tau_friction(qd))``: the motion under motor torque and friction.

    Shape ``(..., nv)``. Friction keywords as in :func:`friction_torques`; ``f_ext`` as in
    :func:`denoc_ros.forward_dynamics`. With the default smooth Coulomb term the right-hand side
    is continuous in ``qd``, so it can be integrated by ordinary ODE solvers.
    """
    check_model(model)
    tau = joint_vector(model, 'tau', tau)
    fr = friction_torques(model, qd, viscous, coulomb, smoothing)
    try:
        np.broadcast_shapes(tau.shape, fr.shape)
    except ValueError:
        raise InputError(f'the leading (batch) axes do not broadcast together: tau {tau.shape}, '
                         f'qd {fr.shape}') from None
    return forward_dynamics(model, q, qd, tau - fr, f_ext)
