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
Computed-torque feed-forward and short-horizon predictions: what the dynamics node publishes.

Feed-forward (Craig's computed-torque law without the servo part): with a desired state
``(q_d, qd_d, qdd_d)`` the joint effort ``M qdd_d + C qd_d + g``, split into its three terms and
evaluated either at the desired state (``'desired'``: ``M(q_d)``, ``C(q_d, qd_d)``, ``g(q_d)``)
or at the measured one (``'measured'``: ``M(q)``, ``C(q, qd)``, ``g(q)``, the Christoffel ``C``).
Without a desired state the terms are taken at the measured state with zero desired
acceleration: ``0``, ``C(q, qd) qd``, ``g(q)``.

Joint friction, when a user asks for it (``friction=``, e.g. a
:class:`denoc_ros.friction.JointFriction`: the URDF's viscous and Coulomb coefficients in the
model of :func:`denoc_ros.friction.friction_torques`, checked once for a stream of velocities),
is a fourth term of the feed-forward, taken at the velocity of the state the terms are evaluated
at (Craig's ``tau = M qdd + V + G + F``, seed 002); :func:`predict` subtracts it, at the
measured velocity and held like the effort, from the effort it integrates.
:func:`inverse_dynamics_terms` splits one inverse dynamics into the same three terms.

A floating-base model works as everywhere in the library (states of ``nq`` and ``nv``, terms of
``nv``, the first six the base wrench); :func:`predict` then integrates on the free flyer's Lie
group (:func:`denoc_ros.simulate`). :func:`computed_torque` refuses it: its position error
``q_d - q`` has no meaning for the base quaternion.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .dynamics import _compile
from .dynamics import (coriolis_matrix, coriolis_torques, forward_dynamics, gravity_torques,
                       inverse_dynamics, mass_matrix)
from .dynamics._fast import one_state
from .dynamics.prediction import prediction_one
from .errors import InputError
from .model import RobotModel
from .simulation import simulate

_prediction_one = _compile.single_state(prediction_one, globals(), '_prediction_one',
                                        'vvvfim')

EVALUATE_AT = ('desired', 'measured')


@dataclass(frozen=True, eq=False)
class FeedforwardTerms:
    """The terms of the feed-forward effort, each (nv,); ``total`` is their sum."""

    inertia: np.ndarray
    coriolis: np.ndarray
    gravity: np.ndarray
    friction: Optional[np.ndarray] = None  # None: no friction asked for

    @property
    def total(self):
        """Return inertia + coriolis + gravity (+ friction): a new array."""
        total = self.inertia + self.coriolis + self.gravity
        if self.friction is not None:
            total += self.friction
        return total


def feedforward_terms(model, q, qd, desired=None, evaluate_at='desired', friction=None):
    """
    Return the :class:`FeedforwardTerms` at a measured state and an optional desired one.

    ``desired``: None, or ``(q_d, qd_d, qdd_d)``. ``evaluate_at``: ``'desired'`` or
    ``'measured'`` (see the module docstring). ``friction``: None, or a function of the joint
    velocities returning the friction torques (a :class:`denoc_ros.friction.JointFriction`),
    evaluated at ``qd_d`` with the terms at the desired state, else at the measured ``qd``.
    """
    if evaluate_at not in EVALUATE_AT:
        raise InputError(f'evaluate_at is {evaluate_at!r}; choose one of {EVALUATE_AT}')
    if desired is None:
        return FeedforwardTerms(np.zeros(model.nv), coriolis_torques(model, q, qd),
                                gravity_torques(model, q),
                                None if friction is None else friction(qd))
    q_d, qd_d, qdd_d = desired
    if evaluate_at == 'desired':
        terms = inverse_dynamics_terms(model, q_d, qd_d, qdd_d)
        if friction is None:
            return terms
        return FeedforwardTerms(terms.inertia, terms.coriolis, terms.gravity, friction(qd_d))
    return FeedforwardTerms(mass_matrix(model, q) @ np.asarray(qdd_d, dtype=float),
                            coriolis_matrix(model, q, qd) @ np.asarray(qd_d, dtype=float),
                            gravity_torques(model, q), None if friction is None else friction(qd))


def inverse_dynamics_terms(model, q, qd, qdd):
    """Return ``tau = M qdd + C qd + g`` as :class:`FeedforwardTerms`: inertia = ID - C qd - g."""
    gravity = gravity_torques(model, q)
    coriolis = coriolis_torques(model, q, qd)
    inertia = inverse_dynamics(model, q, qd, qdd) - coriolis - gravity
    return FeedforwardTerms(inertia, coriolis, gravity)


def predict(model, q, qd, effort, horizon, substeps=1, friction=None):
    """
    Return ``(q, qd, qdd)`` after ``horizon`` seconds of contact-free motion under ``effort``.

    The effort is held constant; the forward dynamics is integrated with ``substeps`` classical
    Runge-Kutta steps. ``horizon = 0`` gives the present state and ``qdd = FD(q, qd, effort)``.
    ``friction``: None, or a function of the joint velocities (a
    :class:`denoc_ros.friction.JointFriction`); its torques at the present ``qd`` are subtracted
    from the effort and held with it. A floating-base model takes ``q`` (7 + n), ``qd`` and
    ``effort`` (6 + n) and is integrated by :func:`denoc_ros.simulate` (RK4 on the Lie group).
    """
    if horizon < 0:
        raise InputError(f'prediction horizon is {horizon}; it must be >= 0')
    if friction is not None:
        effort = effort - friction(qd)
    steps = max(1, int(substeps)) if horizon > 0 else 0
    pk = one_state(model, q, qd, effort)
    if pk is not None:
        # One compiled call for the whole integration (dynamics.prediction.prediction_one);
        # anything it refuses (bad input, a singular joint, an overflow) takes the checked path
        # below.
        out = np.empty((3, pk.nv))
        if not _prediction_one(pk.handle, q, qd, effort, float(horizon), steps, out):
            return out[0], out[1], out[2]
    q_h, qd_h = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    if horizon > 0:
        run = simulate(model, q_h, qd_h, horizon, dt=horizon / steps, tau=effort, method='rk4')
        q_h, qd_h = run.q[-1], run.qd[-1]
    return q_h, qd_h, forward_dynamics(model, q_h, qd_h, effort)


def computed_torque(model, q, qd, desired, kp, kd):
    """
    Return Craig's computed-torque law M(q)(qdd_d + Kd e_dot + Kp e) + C(q, qd) qd + g(q).

    ``desired = (q_d, qd_d, qdd_d)``, ``e = q_d - q``; ``kp``, ``kd``: scalars or (n,) diagonal
    gains. Evaluated as one inverse dynamics at the servoed acceleration (Craig ch. 10).
    Fixed-base models only (InputError for a floating base).
    """
    if isinstance(model, RobotModel) and model.floating:
        raise InputError(f'computed_torque serves fixed-base arms; model {model.name!r} has a '
                         'floating base, whose quaternion has no position error q_d - q (use '
                         'denoc_ros.floating_base.free_floating_inverse_dynamics)')
    q_d, qd_d, qdd_d = (np.asarray(x, dtype=float) for x in desired)
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    servo = qdd_d + np.asarray(kd, dtype=float) * (qd_d - qd) + np.asarray(kp, dtype=float) * (
        q_d - q)
    return inverse_dynamics(model, q, qd, servo)
