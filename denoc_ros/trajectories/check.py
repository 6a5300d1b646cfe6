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
Whether an arm can follow a joint trajectory: its efforts checked densely against the limits.

:func:`check_trajectory` samples the trajectory between its points exactly as ros2_control's
joint_trajectory_controller does (:mod:`.sampling`: quintic, cubic or linear Hermite polynomials
by what the points carry), every ``check_period`` seconds and at the points themselves, and
evaluates the efforts of all samples in one batch inverse dynamics call (Saha's DeNOC recursion,
:func:`denoc_ros.inverse_dynamics`) on the model as it is, payloads included
(:func:`denoc_ros.attach_payload`), plus the joint friction when asked
(:mod:`denoc_ros.friction`).
"""

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from .sampling import TrajectorySampler
from ..dynamics import inverse_dynamics
from ..dynamics._compile import OK
from ..dynamics._packed import packed
from ..dynamics._state import check_model
from ..dynamics.rnea import inverse_dynamics_batch
from ..errors import InputError
from ..friction import JointFriction

_NO_WRENCH = np.zeros((0, 0, 6))  # the batch kernel's "no external wrench"
DEFAULT_CHECK_PERIOD = 1e-3
"""Default sampling period of the dense check [s]: a 1 kHz controller."""


@dataclass(frozen=True)
class TrajectoryCheck:
    """The result of :func:`check_trajectory` (ratios ``|effort| / limit``, 0 without limit)."""

    joint_names: Tuple[str, ...]
    max_effort_ratio: np.ndarray    # (n,) worst over the dense samples and the points
    max_velocity_ratio: np.ndarray  # (n,) likewise, |qd| / velocity limit
    worst_time: float               # [s] time of the worst effort ratio
    worst_joint: str                # joint of the worst effort ratio
    efforts: np.ndarray             # (N, n) required effort at each input point
    feasible: bool                  # every effort and velocity ratio <= 1
    samples: int                    # number of states evaluated


def joint_limits(model, name, value, default):
    """Return positive per-joint limits ``(n,)`` from None (``default``), a scalar or ``(n,)``."""
    n = model.dof
    if value is None:
        out = np.array(default, dtype=float)
    else:
        try:
            out = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            raise InputError(f'{name} must be a number or {n} numbers, got {value!r}') from None
        if out.ndim == 0:
            out = np.full(n, float(out))
        elif out.shape != (n,):
            raise InputError(f'{name} has shape {out.shape}: expected one value or {n} (one per '
                             f'joint: {", ".join(model.joint_names)})')
    for j, v in enumerate(out):
        if np.isnan(v) or v <= 0.0:
            raise InputError(f'{name} of joint {model.joint_names[j]!r} is {v}: it must be '
                             'positive (inf for none)')
    return out


def friction_law(model, friction):
    """Return the :class:`~denoc_ros.friction.JointFriction` asked for, or None (off)."""
    if friction is None or friction is False:
        return None
    if friction is True:
        law = JointFriction(model)
    elif isinstance(friction, JointFriction):
        law = friction
    else:
        raise InputError(f'friction must be True, False or a JointFriction, got {friction!r}')
    return law if law.nonzero else None


def efforts_of(model, q, qd, qdd, law):
    """Return the efforts ``ID(q, qd, qdd) + friction(qd)`` of states ``(m, n)``, one call."""
    if all(a.dtype == np.float64 and a.ndim == 2 and a.flags.c_contiguous
           and a.shape == q.shape == (q.shape[0], model.dof) for a in (q, qd, qdd)):
        # Sampled states, finite by construction and already in the kernel's layout: the
        # batch kernel of inverse_dynamics without the wrapper's checks and copies.
        pk = packed(model)
        tau = np.empty((q.shape[0], pk.nv))
        if inverse_dynamics_batch(pk.ints, pk.reals, q, qd, qdd, _NO_WRENCH, 1.0, tau) != OK:
            tau = inverse_dynamics(model, q, qd, qdd)  # its error
    else:
        tau = inverse_dynamics(model, q, qd, qdd)
    if law is not None:
        tau = tau + law(qd)
    return tau


def ratios(values, limits):
    """Return ``|values| / limits`` (0 where the limit is infinite)."""
    return np.abs(values) / limits


def _fixed_base(model):
    check_model(model)
    if model.floating:
        raise InputError('trajectory checks and retiming need a fixed-base model; this one has '
                         'a floating base')


def check_trajectory(model, t, q, qd=None, qdd=None, effort_limits=None, friction=False,
                     check_period=DEFAULT_CHECK_PERIOD, velocity_limits=None):
    """
    Return a :class:`TrajectoryCheck` of ``(t, q[, qd[, qdd]])`` (model joint order).

    ``t`` (N,) strictly increasing [s], ``q``/``qd``/``qdd`` (N, n). Sampled as the
    joint_trajectory_controller samples it every ``check_period`` s from ``t[0]`` and at every
    point; efforts ``ID + friction`` against ``effort_limits`` (default the URDF's
    ``<limit effort>``; scalar or per joint) and velocities against ``velocity_limits``
    (default ``<limit velocity>``). ``friction``: True for the model's URDF friction, or a
    :class:`~denoc_ros.friction.JointFriction`.
    """
    _fixed_base(model)
    if not (np.isfinite(check_period) and check_period > 0.0):
        raise InputError(f'check_period is {check_period}: it must be positive')
    effort_limits = joint_limits(model, 'effort_limits', effort_limits, model.effort_limit)
    velocity_limits = joint_limits(model, 'velocity_limits', velocity_limits,
                                   model.velocity_limit)
    sampler = TrajectorySampler(t, q, qd, qdd)
    times, P = sampler.times, sampler.positions
    n = model.dof
    if P.shape[1] != n:
        raise InputError(f'trajectory has {P.shape[1]} joints per point, the model {n} '
                         f'({", ".join(model.joint_names)})')
    law = friction_law(model, friction)
    dense = np.arange(times[0], times[-1], check_period)
    # At the points: what the points carry (the sampled values where they carry nothing).
    _, pqd, pqdd = sampler.sample_many(times)
    if sampler.velocities is not None:
        pqd = sampler.velocities
    if sampler.accelerations is not None:
        pqdd = sampler.accelerations
    dq, dqd, dqdd = sampler.sample_many(dense)
    Q, QD, QDD = (np.concatenate(pair) for pair in ((P, dq), (pqd, dqd), (pqdd, dqdd)))
    tau = efforts_of(model, Q, QD, QDD, law)
    effort_ratio = ratios(tau, effort_limits)
    velocity_ratio = ratios(QD, velocity_limits)
    worst = np.unravel_index(int(np.argmax(effort_ratio)), effort_ratio.shape)
    all_times = np.concatenate((times, dense))
    max_effort = effort_ratio.max(axis=0)
    max_velocity = velocity_ratio.max(axis=0)
    return TrajectoryCheck(
        joint_names=tuple(model.joint_names), max_effort_ratio=max_effort,
        max_velocity_ratio=max_velocity, worst_time=float(all_times[worst[0]]),
        worst_joint=model.joint_names[worst[1]], efforts=tau[:times.size],
        feasible=bool(max_effort.max() <= 1.0 and max_velocity.max() <= 1.0),
        samples=int(tau.shape[0]))
