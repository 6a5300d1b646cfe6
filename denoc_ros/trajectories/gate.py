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
The trajectory gate's decision on one goal: reorder, check, keep or retime, fill the efforts.

:func:`gate_trajectory` takes a trajectory as a FollowJointTrajectory goal carries it (joint
names in any order, times, positions, velocities and accelerations where given) and returns the
trajectory to forward to the controller (:class:`GatedTrajectory`, in the goal's joint order),
or raises :class:`GateRejection` carrying the FollowJointTrajectory error code to answer with
(``'INVALID_JOINTS'`` or ``'INVALID_GOAL'``) and a one-line reason. The ROS node
(:mod:`denoc_ros.ros.trajectory_gate`) only converts messages.

1. The joints: every joint of the model once, no other (unknown, missing or repeated names:
   ``INVALID_JOINTS``, naming them).
2. The dense check of the goal as it is, sampled as the joint_trajectory_controller samples it
   (:func:`~denoc_ros.trajectories.check.check_trajectory`: its Hermite polynomials, every
   ``check_period`` s and at the points), against the URDF's effort and velocity limits times
   ``effort_scaling`` / ``velocity_scaling``, with the model's payloads and friction when asked.
3. The timing (:data:`TIMINGS`): ``keep`` forwards a feasible goal's timing and refuses an
   infeasible one (``INVALID_GOAL``, naming the joint, the time and the ratio); ``repair`` keeps
   a feasible timing and retimes an infeasible one; ``optimal`` always retimes. A retime
   (:func:`~denoc_ros.trajectories.retime.retime`, TOPP-RA under the same limits) follows the
   natural cubic spline through the goal's positions (each waypoint is on it; consecutive
   repeated waypoints are merged first), rest to rest, and is itself checked densely.
4. The efforts: every forwarded point carries the torque the arm needs there,
   ``ID(q, qd, qdd)`` on the model with its payloads plus friction when on (the check's or the
   retime's efforts), the inverse-dynamics feed-forward a controller in effort mode adds.
"""

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from .check import check_trajectory, DEFAULT_CHECK_PERIOD, friction_law, joint_limits
from .retime import DEFAULT_SAMPLE_PERIOD, retime
from ..errors import DenocError, InputError
from ..payload import attach_payload

TIMINGS = ('keep', 'repair', 'optimal')
"""The gate's timing modes (parameter ``timing``)."""

SAME_WAYPOINT = 1e-9
"""[rad or m] consecutive waypoints closer than this in every joint are one waypoint."""


class GateRejection(InputError):
    """A goal the gate refuses; ``code``: the FollowJointTrajectory error code's name."""

    def __init__(self, code, message):
        """Hold the error code's name (``'INVALID_JOINTS'``, ``'INVALID_GOAL'``)."""
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class GatedTrajectory:
    """What the gate forwards (arrays in the goal's joint order) and why."""

    joint_names: Tuple[str, ...]  # the goal's order
    t: np.ndarray                 # (M,) time from start [s]
    q: np.ndarray                 # (M, n)
    qd: np.ndarray                # (M, n) or None (the goal carried none and was kept)
    qdd: np.ndarray               # (M, n) or None
    effort: np.ndarray            # (M, n) feed-forward: ID + friction at each point
    retimed: bool
    goal_ratio: float             # worst effort or velocity ratio of the goal as it came
    goal_worst: str               # e.g. "panda_joint2 at 1.02 x its effort limit at t = 0.5 s"
    ratio: float                  # worst effort ratio of what is forwarded (dense check)
    duration: float               # [s] of what is forwarded

    @property
    def summary(self):
        """One line: what was done to the goal."""
        kept = 'retimed' if self.retimed else 'timing kept'
        return (f'{kept}: {self.t.size} points, {self.duration:.9g} s, worst effort ratio '
                f'{self.ratio:.3g} (the goal as sent: {self.goal_worst})')


def goal_order(model, names):
    """
    Return ``index`` with ``index[j]`` the goal's column of model joint ``j``.

    :class:`GateRejection` ``INVALID_JOINTS`` naming the unknown, repeated and missing joints.
    """
    names = list(names)
    known = set(model.joint_names)
    unknown = [j for j in names if j not in known]
    twice = sorted({j for j in names if names.count(j) > 1})
    missing = [j for j in model.joint_names if j not in names]
    problems = []
    if unknown:
        problems.append('unknown joint(s) ' + ', '.join(unknown))
    if twice:
        problems.append('joint(s) given twice ' + ', '.join(twice))
    if missing:
        problems.append('missing joint(s) ' + ', '.join(missing))
    if problems:
        raise GateRejection('INVALID_JOINTS', 'the trajectory has ' + '; '.join(problems)
                            + f' (the arm\'s joints: {", ".join(model.joint_names)})')
    return np.array([names.index(j) for j in model.joint_names], dtype=np.intp)


def _worst_text(model, check, effort_limits, velocity_limits):
    """Return ``(ratio, text)`` of a check's worst effort or velocity ratio."""
    e = float(check.max_effort_ratio.max())
    v = float(check.max_velocity_ratio.max())
    if e >= v:
        j = check.worst_joint
        limit = effort_limits[model.joint_names.index(j)]
        return e, (f'{j} at {e:.3g} x its effort limit ({limit:.4g}) at t = '
                   f'{check.worst_time:.4g} s')
    k = int(np.argmax(check.max_velocity_ratio))
    return v, (f'{model.joint_names[k]} at {v:.3g} x its velocity limit '
               f'({velocity_limits[k]:.4g})')


def distinct_waypoints(q):
    """Return the rows of ``q`` (W, n) without those equal to the previous kept one."""
    keep = [0]
    for k in range(1, q.shape[0]):
        if np.abs(q[k] - q[keep[-1]]).max() > SAME_WAYPOINT:
            keep.append(k)
    return q[keep]


def gate_trajectory(model, joint_names, t, q, qd=None, qdd=None, timing='repair',
                    effort_scaling=1.0, velocity_scaling=1.0, friction=False,
                    check_period=DEFAULT_CHECK_PERIOD, sample_period=DEFAULT_SAMPLE_PERIOD):
    """
    Return the :class:`GatedTrajectory` to forward for a goal, or raise :class:`GateRejection`.

    ``joint_names`` (n,) the goal's joint order; ``t`` (N,) its times from start [s], strictly
    increasing; ``q`` (N, n), ``qd`` and ``qdd`` (N, n) or None, in the goal's order. ``model``:
    the model with the payloads the arm carries; ``friction`` True (the URDF's) or a
    :class:`~denoc_ros.friction.JointFriction`. See the module docstring for the steps.
    """
    if timing not in TIMINGS:
        raise InputError(f'timing is {timing!r}: expected one of {", ".join(TIMINGS)}')
    for name, value in (('effort_scaling', effort_scaling),
                        ('velocity_scaling', velocity_scaling)):
        if not (np.isfinite(value) and value > 0.0):
            raise InputError(f'{name} is {value}: it must be positive')
    index = goal_order(model, joint_names)
    effort_limits = joint_limits(model, 'effort_limits', None, model.effort_limit) \
        * effort_scaling
    velocity_limits = joint_limits(model, 'velocity_limits', None, model.velocity_limit) \
        * velocity_scaling
    law = friction_law(model, friction)
    order = (lambda x: None if x is None else np.asarray(x, dtype=float)[:, index])
    mq, mqd, mqdd = order(q), order(qd), order(qdd)
    try:
        check = check_trajectory(model, t, mq, mqd, mqdd, effort_limits=effort_limits,
                                 friction=law, check_period=check_period,
                                 velocity_limits=velocity_limits)
    except DenocError as err:
        raise GateRejection('INVALID_GOAL', f'the trajectory cannot be checked: {err}') from None
    goal_ratio, goal_worst = _worst_text(model, check, effort_limits, velocity_limits)
    if not np.all(np.isfinite(check.efforts)):
        raise GateRejection('INVALID_GOAL', 'the efforts of the trajectory are not finite')
    back = np.argsort(index)  # model order -> goal order
    if timing == 'keep' and not check.feasible:
        raise GateRejection('INVALID_GOAL', f'timing keep: the trajectory exceeds a limit: '
                            f'{goal_worst}')
    if timing != 'optimal' and check.feasible:
        return GatedTrajectory(
            joint_names=tuple(joint_names), t=np.asarray(t, dtype=float),
            q=np.asarray(q, dtype=float), qd=None if qd is None else np.asarray(qd, float),
            qdd=None if qdd is None else np.asarray(qdd, float),
            effort=check.efforts[:, back], retimed=False, goal_ratio=goal_ratio,
            goal_worst=goal_worst, ratio=float(check.max_effort_ratio.max()),
            duration=float(t[-1] - t[0]))
    waypoints = distinct_waypoints(mq)
    if waypoints.shape[0] < 2:
        raise GateRejection('INVALID_GOAL', 'the trajectory does not move (every point at the '
                            'same positions) and its timing exceeds a limit: ' + goal_worst)
    try:
        out = retime(model, waypoints, velocity_limits=velocity_limits,
                     effort_limits=effort_limits, friction=law, sample_period=sample_period,
                     check_period=check_period)
    except DenocError as err:
        raise GateRejection('INVALID_GOAL', f'the trajectory cannot be retimed: {err}') from None
    return GatedTrajectory(
        joint_names=tuple(joint_names), t=out.t, q=out.q[:, back], qd=out.qd[:, back],
        qdd=out.qdd[:, back], effort=out.effort[:, back], retimed=True, goal_ratio=goal_ratio,
        goal_worst=goal_worst, ratio=out.max_effort_ratio, duration=out.duration)


def with_payloads(model, payloads):
    """
    Return ``model`` with each ``(link, mass, com, inertia)`` of ``payloads`` attached, in order.

    What the dynamics node publishes on ``~/payloads`` rebuilds its model this way
    (:func:`denoc_ros.attach_payload`, added to what the link carries). InputError naming the
    payload at fault (an unknown link, a body that is not rigid).
    """
    for k, (link, mass, com, inertia) in enumerate(payloads):
        try:
            model = attach_payload(model, link, mass, com, inertia)
        except DenocError as err:
            raise InputError(f'payload {k} on {link!r}: {err}') from None
    return model


def contact_reason(joint_names, external_torques, thresholds, in_contact, units=None):
    """
    Return ``(joint, text)`` of the joint in contact whose ``|tau_ext| / threshold`` is largest.

    ``in_contact`` (n,) bools as the dynamics node's ContactState flags them (all false: the
    largest ratio of all joints); ``units`` (n,) 'N m' or 'N' (default 'N m').
    """
    tau = np.asarray(external_torques, dtype=float)
    limit = np.asarray(thresholds, dtype=float)
    n = len(joint_names)
    if tau.shape != (n,) or limit.shape != (n,) or len(in_contact) != n:
        raise InputError(f'contact state: {n} joints, {tau.size} external torques, '
                         f'{limit.size} thresholds, {len(in_contact)} flags')
    ratio = np.abs(tau) / np.where(limit > 0.0, limit, np.inf)
    flagged = np.asarray(in_contact, dtype=bool)
    if flagged.any():
        ratio = np.where(flagged, ratio, -1.0)
    j = int(np.argmax(ratio))
    unit = 'N m' if units is None else units[j]
    return joint_names[j], (f'contact at joint {joint_names[j]}: external torque '
                            f'{tau[j]:+.3g} {unit} (threshold {limit[j]:.3g} {unit})')
