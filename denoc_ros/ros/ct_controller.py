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
``ct_controller``: a computed-torque controller on joint_states, commanding efforts.

The law is the library's, in full (not feed-forward plus a separate PD):

    tau = M(q) (qdd_d + Kd (qd_d - qd) + Kp (q_d - q)) + C(q, qd) qd + g(q)

evaluated as one inverse dynamics at the servoed acceleration
(:func:`denoc_ros.feedforward.computed_torque`). The desired state comes from the trajectory on
``~/reference`` (trajectory_msgs/JointTrajectory, all its points), sampled between points with
Hermite polynomials (:mod:`denoc_ros.trajectories.sampling`) at the time stamp of each
joint state: a trajectory stamped 0 starts at the first joint state after it arrives, otherwise at
its header stamp. Before any trajectory, and after its end, it holds the last desired (at start:
the first measured) positions. Efforts go out on ``~/commands`` (Float64MultiArray in ``joints``
order, for a JointGroupEffortController); ``~/tracking_error`` (JointState: position = q_d - q,
velocity = qd_d - qd) shows how well it tracks.

``mass_scale`` multiplies every mass and inertia of the controller's model, to study a wrong
model (1.1 = 10 % too heavy): its inertial parameters times the factor, through
:func:`denoc_ros.with_inertial_parameters`, so the model's warnings judge the scaled bodies.

``trajectory_file``: a YAML file holding one JointTrajectory in the form ``ros2 topic pub``
accepts (what ``denoc_excitation --output`` writes)::

    joint_names: [joint1, joint2]
    points:
      - {positions: [0.0, 0.1], velocities: [0.0, 0.0], time_from_start: {sec: 0, nanosec: 0}}
      - {positions: [0.2, 0.3], velocities: [0.1, 0.0], time_from_start: {sec: 1, nanosec: 0}}

(``accelerations`` and ``effort`` per point and ``header`` optional). It is loaded at start-up
and whenever the parameter is set at run time (a bad file is then rejected with the reason; an
empty name leaves the trajectory being played alone), and played exactly like a trajectory
arriving on ``~/reference`` stamped 0: from the next joint state on, whatever its header says.
``loop``: after the last point the trajectory (from the file or the topic) starts again from
its time 0, a whole number of durations after its start, instead of holding the last point;
meant for periodic trajectories such as excitation trajectories (a warning says by how much one
that does not end where it starts jumps at each restart). Both can change at run time; the
other parameters are read at start-up.

``~/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory, when control_msgs is
installed) takes goals as ros2_control's joint_trajectory_controller in effort mode does, so
that a client (MoveIt, the trajectory gate) drives ``sim_arm`` as it drives a real arm. A goal
must name every joint of the model (else it is rejected); its points are sampled as that
controller samples them (:mod:`denoc_ros.trajectories.sampling`, from the next joint state when
the header stamp is 0, else from the stamp; a first point after time 0 is reached from the
position held at the start), and the law is the controller's PID in effort mode without the
integral term, plus the points' ``effort`` as feed-forward (linear in time between points; none
when the points carry none)::

    tau = Kp_e (q_d - q) + Kd_e (qd_d - qd) + effort_d

with the per-joint gains ``effort_kp`` [N m/rad] and ``effort_kd`` [N m s/rad] (the model is
not used: what the points carry is all the feed-forward there is). The defaults suit the Panda
at 1 kHz: a decentralized PD sees the smallest eigenvalue of M(q), 0.0075 kg m^2 where the axes
of joints 1 and 3 nearly align (joint 2 near 0); 30 N m s/rad there oscillated at half the
loop rate and diverged on MuJoCo (the loop's one-step delay needs ``Kd dt / lambda`` well below
1), hence the small velocity gains of joints 1, 3 and 5. After the last point the
last point is held (its effort too); the goal succeeds once every joint is within its goal
tolerance (the goal's ``goal_tolerance`` position, else ``goal_tolerance``) and aborts with
``GOAL_TOLERANCE_VIOLATED`` if that takes longer than the goal's ``goal_time_tolerance`` (else
``goal_time``). A cancel holds the positions measured at the next joint state with the
computed-torque law (``kp``, ``kd``: critically damped by default, where the PD above, its
velocity gains kept small for stability, rings for a second; joint_trajectory_controller holds
with its PID), logs the stamp of that joint state, and cancels the goal; a
new goal preempts the running one (aborted, "preempted by a new goal"; the controller cancels
it). Feedback (desired, actual, error) goes out every ``feedback_every`` joint states.
A trajectory on ``~/reference`` or a trajectory file replaces a goal (aborted) and is played
with the computed-torque law as before.
"""

import math
import sys

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.node import Node
from rclpy.task import Future
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
import yaml

from . import settings as parameters
from ._main import spin_node
from .conversions import command_order, JointMap
from .settings import PER_JOINT, Spec
from ..description import read_description
from ..dynamics import gravity_torques
from ..errors import DenocError, InputError
from ..feedforward import computed_torque
from ..identification.parameters import inertial_parameters, with_inertial_parameters
from ..model import joint_order
from ..trajectories.sampling import TrajectorySampler
from ..urdf import load_urdf


try:  # control_msgs has no wheel: without it, no action server (the topic interface works)
    from control_msgs.action import FollowJointTrajectory
except ImportError:  # pragma: no cover - depends on the install
    FollowJointTrajectory = None

POINT_FIELDS = ('positions', 'velocities', 'accelerations', 'effort')
LOOP_TOLERANCE = 1e-6   # [rad or m, per s]: a looped trajectory ending further off jumps


def _mapping(data, where, fields):
    """Return ``data`` if it is a mapping whose keys are all in ``fields``; else InputError."""
    if not isinstance(data, dict):
        raise InputError(f'{where} must be a mapping, got {type(data).__name__} {data!r:.40}')
    unknown = [k for k in data if k not in fields]
    if unknown:
        raise InputError(f'{where} has no field {unknown[0]!r} (it has {", ".join(fields)})')
    return data


def _integer(value, where, low, high):
    """Return ``value`` if it is an integer in [low, high]; else InputError."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f'{where} must be an integer in [{low}, {high}], got {value!r}')
    return value


def _time(data, where, msg):
    """Fill ``msg`` (a builtin_interfaces Time or Duration) from ``{sec: , nanosec: }``."""
    _mapping(data, where, ('sec', 'nanosec'))
    msg.sec = _integer(data.get('sec', 0), f'{where}.sec', -2 ** 31, 2 ** 31 - 1)
    msg.nanosec = _integer(data.get('nanosec', 0), f'{where}.nanosec', 0, 2 ** 32 - 1)


def _numbers(values, where, n):
    """Return ``values`` as a list of ``n`` finite floats; else InputError."""
    if not isinstance(values, list) or any(
            isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        raise InputError(f'{where} must be a list of numbers, got {values!r:.60}')
    if len(values) != n:
        raise InputError(f'{where} has {len(values)} values; joint_names has {n}')
    out = [float(v) for v in values]
    if not all(math.isfinite(v) for v in out):
        raise InputError(f'{where} contains NaN or inf')
    return out


def joint_trajectory_from_dict(data):
    """Return the JointTrajectory of a mapping in ``ros2 topic pub`` form; else InputError."""
    _mapping(data, 'the file', ('header', 'joint_names', 'points'))
    msg = JointTrajectory()
    if data.get('header') is not None:
        header = _mapping(data['header'], 'header', ('stamp', 'frame_id'))
        _time(header.get('stamp') or {}, 'header.stamp', msg.header.stamp)
        msg.header.frame_id = str(header.get('frame_id') or '')
    names = data.get('joint_names')
    if not isinstance(names, list) or not names or not all(isinstance(j, str) for j in names):
        raise InputError(f'joint_names must be a non-empty list of names, got {names!r:.60}')
    twice = sorted({j for j in names if names.count(j) > 1})
    if twice:
        raise InputError(f'joint_names lists {", ".join(twice)} twice')
    msg.joint_names = names
    points = data.get('points')
    if not isinstance(points, list) or not points:
        raise InputError(f'points must be a non-empty list, got {points!r:.60}')
    for k, item in enumerate(points):
        where = f'points[{k}]'
        _mapping(item, where, POINT_FIELDS + ('time_from_start',))
        point = JointTrajectoryPoint()
        for field in POINT_FIELDS:
            values = item.get(field) or []
            if values or field == 'positions':
                setattr(point, field, _numbers(values, f'{where}.{field}', len(names)))
        _time(item.get('time_from_start') or {}, f'{where}.time_from_start',
              point.time_from_start)
        msg.points.append(point)
    for field in ('velocities', 'accelerations'):  # the sampler needs whole columns
        given = [bool(len(getattr(p, field))) for p in msg.points]
        if any(given) and not all(given):
            raise InputError(f'points[{given.index(False)}] has no {field}, other points have: '
                             'give them in every point or in none')
    return msg


def load_trajectory_yaml(path):
    """
    Return the trajectory_msgs/JointTrajectory a YAML file holds (``ros2 topic pub``'s form).

    Keys ``joint_names``, ``points`` (each: ``positions``, optional ``velocities``,
    ``accelerations``, ``effort``, ``time_from_start: {sec: , nanosec: }``) and an optional
    ``header``. A file that cannot be read or holds anything else raises InputError, one line
    naming the file and the field at fault.
    """
    try:
        with open(path) as f:
            data = yaml.safe_load(f)
    except OSError as err:
        raise InputError(f'trajectory file {path}: {err.strerror or err}') from None
    except yaml.YAMLError as err:
        mark = getattr(err, 'problem_mark', None)
        where = f' at line {mark.line + 1}' if mark is not None else ''
        problem = getattr(err, 'problem', None) or str(err).splitlines()[0]
        raise InputError(f'trajectory file {path}: not YAML{where}: {problem}') from None
    try:
        return joint_trajectory_from_dict(data)
    except InputError as err:
        raise InputError(f'trajectory file {path}: {err}') from None


# read at start-up (read-only), except trajectory_file and loop
PARAMETERS = parameters.table(*parameters.read_only(
    *parameters.model_specs(urdf_path='panda'),
    parameters.gravity_spec(),
    Spec('kp', 'doubles', [400.0], 'position gains Kp [1/s^2]', 0.0, length=PER_JOINT),
    Spec('kd', 'doubles', [40.0], 'velocity gains Kd [1/s]', 0.0, length=PER_JOINT),
    Spec('mass_scale', 'double', 1.0, 'factor on every mass and inertia of the model', 0.0,
         100.0, open_low=True, open_high=True, example=1.1),
    Spec('joints', 'strings', [], 'joint order of ~/commands; unset: model order',
         example=['panda_joint1', 'panda_joint2']),
    Spec('effort_kp', 'doubles', [400.0, 400.0, 400.0, 400.0, 100.0, 100.0, 40.0],
         'action goals: position gains [N m/rad or N/m]', 0.0, length=PER_JOINT),
    Spec('effort_kd', 'doubles', [5.0, 20.0, 5.0, 20.0, 2.0, 2.0, 1.0],
         'action goals: velocity gains [N m s/rad or N s/m]', 0.0, length=PER_JOINT),
    Spec('goal_tolerance', 'double', 0.02,
         'action goals: position tolerance at the end unless the goal gives one [rad or m]',
         0.0, open_low=True),
    Spec('goal_time', 'double', 1.0,
         'action goals: time after the end to be within tolerance unless the goal gives one '
         '[s]', 0.0, open_low=True),
    Spec('feedback_every', 'integer', 10, 'action goals: joint states per feedback', 1,
         1000000)),
    Spec('trajectory_file', 'string', '', 'YAML trajectory to play (run time too)',
         example='trajectory.yaml'),
    Spec('loop', 'bool', False, 'restart the trajectory after its end (run time too)'),
)


def _gains(name, values, n):
    """Return (n,) gains from one value for all joints or one per joint."""
    if len(values) not in (1, n):
        raise InputError(f'parameter {name}: has {len(values)} values; give 1 or {n} '
                         '(one per joint)')
    return np.full(n, values[0]) if len(values) == 1 else np.asarray(values, dtype=float)


class ComputedTorqueController(Node):
    """Track a joint trajectory with the computed-torque law of the library."""

    def __init__(self, **kwargs):
        super().__init__('ct_controller', **kwargs)
        values = parameters.declare(self, PARAMETERS)
        get = values.get
        xml = get('robot_description') or read_description(get('urdf_path'))
        model = load_urdf(xml, gravity=get('gravity'))
        scale = get('mass_scale')  # > 0: scaled bodies stay physical, but keep them as they are
        self.model = with_inertial_parameters(model, scale * inertial_parameters(model),
                                              check=False)
        n = self.model.dof
        self.kp = _gains('kp', get('kp'), n)
        self.kd = _gains('kd', get('kd'), n)
        names = self.model.joint_names
        self._command_index = command_order(names, get('joints'))
        self._joint_map = JointMap(self.model.joint_names)
        zero = np.zeros(n)  # warm up: compilation is not paid by the first joint state
        computed_torque(self.model, zero, zero, (zero, zero, zero), self.kp, self.kd)
        self._sampler = None
        self._start = None          # trajectory start time [s], None: at the next joint state
        self._hold = None           # positions held without a trajectory
        self._goal = None           # the _Goal of the action being followed
        self._goals = {}            # every accepted _Goal whose execution has not started
        self._effort = None         # (times, efforts) of its points, model order; or None
        self._pd_hold = None        # (q, effort) held with the PD law after a goal or cancel
        self._last_q = None
        try:
            self.effort_kp = _gains('effort_kp', get('effort_kp'), n)
            self.effort_kd = _gains('effort_kd', get('effort_kd'), n)
            self._gain_error = None
        except InputError as err:
            self._gain_error = str(err)
        self.goal_tolerance = get('goal_tolerance')
        self.goal_time = get('goal_time')
        self.feedback_every = get('feedback_every')
        self._loop = get('loop')
        if get('trajectory_file'):
            self._play_file(get('trajectory_file'))
        self._command_pub = self.create_publisher(Float64MultiArray, '~/commands', 10)
        self._error_pub = self.create_publisher(JointState, '~/tracking_error', 10)
        self.create_subscription(JointState, 'joint_states', self.joint_state_callback, 100)
        self.create_subscription(JointTrajectory, '~/reference', self.reference_callback, 10)
        if FollowJointTrajectory is not None:
            # wakes the executor to finish a goal's execution once the goal is over
            self._wake = self.create_guard_condition(lambda: None)
            self._server = ActionServer(
                self, FollowJointTrajectory, '~/follow_joint_trajectory', self.execute_callback,
                goal_callback=self.goal_callback, handle_accepted_callback=self.accepted_callback,
                cancel_callback=lambda handle: CancelResponse.ACCEPT)
        self.get_logger().info(
            f'computed-torque control of {self.model.name!r} ({self.model.dof} joints): commands '
            'on ~/commands, trajectories on ~/reference' + (
                ', FollowJointTrajectory goals on ~/follow_joint_trajectory'
                if FollowJointTrajectory is not None else
                ' (no control_msgs: no ~/follow_joint_trajectory action)'))
        self.add_on_set_parameters_callback(self.parameters_callback)

    def _sampler_of(self, msg):
        """Return a TrajectorySampler over a trajectory message's points, in model joint order."""
        index = joint_order(self.model.joint_names, list(msg.joint_names), 'the trajectory')
        times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points]

        def table(field):
            rows = [getattr(p, field) for p in msg.points]
            if all(len(r) == 0 for r in rows):
                return None
            return np.asarray(rows, dtype=float)[:, index]
        return TrajectorySampler(times, table('positions'), table('velocities'),
                                 table('accelerations'))

    def _track(self, sampler, stamp, source=''):
        """Track ``sampler`` from ``stamp`` [s] (0: from the next joint state on)."""
        if self._goal is not None and source != ' (action goal)':
            self._end_goal('abort', -1, 'replaced by a trajectory on ~/reference or from a file')
        if source != ' (action goal)':
            self._effort = self._pd_hold = None
        self._sampler = sampler
        self._start = stamp if stamp > 0 else None
        self.get_logger().info(f'trajectory of {len(sampler.times)} points, '
                               f'{sampler.duration:.2f} s{source}')
        self._check_loop()

    def _play_file(self, path, sampler=None):
        """Play the trajectory of a YAML file as a reference stamped 0; InputError if unusable."""
        if sampler is None:
            sampler = self._file_sampler(path)
        self._track(sampler, 0.0, f' from {path}')

    def _file_sampler(self, path):
        """Return the sampler of a trajectory file; InputError naming the file if unusable."""
        msg = load_trajectory_yaml(path)
        try:
            return self._sampler_of(msg)
        except ValueError as err:  # InputError (missing joints, times), ragged rows
            raise InputError(f'trajectory file {path}: {err}') from None

    def _check_loop(self):
        """Warn when a looped trajectory does not end in the state it starts from."""
        sampler = self._sampler
        if not self._loop or sampler is None or sampler.duration <= 0.0:
            return
        gap = float(np.abs(sampler.positions[-1] - sampler.positions[0]).max())
        if sampler.velocities is not None:
            gap = max(gap, float(np.abs(sampler.velocities[-1] - sampler.velocities[0]).max()))
        if gap > LOOP_TOLERANCE:
            self.get_logger().warning(f'loop: the trajectory ends {gap:.3g} (rad, rad/s) away '
                                      'from its start: each restart jumps by that much')

    def parameters_callback(self, changes):
        """Load a new ``trajectory_file`` (rejected with the reason if unusable); set ``loop``."""
        sampler = None
        try:
            new = parameters.changes(PARAMETERS, changes)
            if new.get('trajectory_file'):
                sampler = self._file_sampler(new['trajectory_file'])
        except DenocError as err:
            return SetParametersResult(successful=False, reason=str(err))
        if 'loop' in new:
            self._loop = new['loop']
        if sampler is not None:
            self._play_file(new['trajectory_file'], sampler)
        elif 'loop' in new:
            self._check_loop()
        return SetParametersResult(successful=True)

    def reference_callback(self, msg):
        """Take a new trajectory (replacing the current one)."""
        try:
            sampler = self._sampler_of(msg)
        except (DenocError, ValueError) as err:
            self.get_logger().warning(f'reference ignored: {err}', throttle_duration_sec=2.0)
            return
        self._track(sampler, Time.from_msg(msg.header.stamp).nanoseconds * 1e-9)

    # -- FollowJointTrajectory (joint_trajectory_controller's way) ------------------------------
    def goal_callback(self, goal):
        """Accept a goal naming every joint once whose points can be sampled; reject others."""
        try:
            self._goal_sampler(goal.trajectory)
        except (DenocError, ValueError) as err:
            self.get_logger().warning(f'goal rejected: {err}')
            return GoalResponse.REJECT
        if self._gain_error is not None:
            self.get_logger().warning(f'goal rejected: {self._gain_error}')
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _goal_sampler(self, msg):
        """Return (sampler, effort table or None) of a goal's trajectory, model order."""
        index = joint_order(self.model.joint_names, list(msg.joint_names), 'the goal',
                            others=False)
        if len(msg.points) == 0:
            raise InputError('the goal has no points')
        sampler = self._sampler_of(msg)
        rows = [p.effort for p in msg.points]
        effort = None
        if any(len(r) for r in rows):
            effort = np.asarray(rows, dtype=float)[:, index]  # ragged: ValueError
            if not np.all(np.isfinite(effort)):
                raise InputError("the goal's efforts contain NaN or inf")
        return sampler, effort

    def accepted_callback(self, goal_handle):
        """Preempt the running goal; follow the new one from the next joint state (or stamp)."""
        sampler, effort = self._goal_sampler(goal_handle.request.trajectory)
        if self._goal is not None:
            self._end_goal('abort', -1, 'preempted by a new goal')
        self._goal = _Goal(goal_handle, self._tolerances(goal_handle.request))
        self._goals[bytes(goal_handle.goal_id.uuid)] = self._goal
        times = sampler.times
        if times[0] > 0.0:  # reached from the position held at the start, at rest
            if self._pd_hold is not None:
                start = self._pd_hold[0]
            elif self._sampler is None and self._hold is not None:
                start = self._hold
            else:
                start = self._last_q
            if start is not None:
                def rows(table, first):
                    return None if table is None else np.vstack((first, table))
                zero = np.zeros(self.model.dof)
                held = None if effort is None else (
                    self._pd_hold[1] if self._pd_hold is not None
                    else gravity_torques(self.model, start))
                sampler = TrajectorySampler(
                    np.concatenate(([0.0], times)), rows(sampler.positions, start),
                    rows(sampler.velocities, zero), rows(sampler.accelerations, zero))
                effort = rows(effort, held)
        stamp = Time.from_msg(goal_handle.request.trajectory.header.stamp).nanoseconds * 1e-9
        self._track(sampler, stamp, ' (action goal)')
        self._effort = None if effort is None else (sampler.times, effort)
        self._pd_hold = None
        goal_handle.execute()

    def _tolerances(self, goal):
        """Return (position tolerances (n,), goal time [s]) of a goal, defaults where unset."""
        tol = np.full(self.model.dof, self.goal_tolerance)
        names = list(self.model.joint_names)
        for item in goal.goal_tolerance:
            if item.name in names and item.position != 0.0:
                tol[names.index(item.name)] = np.inf if item.position < 0.0 else item.position
        d = goal.goal_time_tolerance
        extra = d.sec + 1e-9 * d.nanosec
        return tol, (extra if extra > 0.0 else self.goal_time)

    async def execute_callback(self, goal_handle):
        """Wait until the goal is over (the joint states decide); end it as it ended."""
        goal = self._goals.pop(bytes(goal_handle.goal_id.uuid))
        how, result = await goal.done
        getattr(goal_handle, how)()
        return result

    def _end_goal(self, how, code, text):
        """End the action goal followed now (``how``: 'succeed', 'abort', 'canceled')."""
        goal, self._goal = self._goal, None
        if goal is None or goal.done.done():
            return
        result = FollowJointTrajectory.Result(error_code=code, error_string=text)
        goal.done.set_result((how, result))
        self._wake.trigger()
        if how != 'succeed':
            self.get_logger().info(f'goal {how}: {text}')

    def _follow_goal(self, t, q, qd, q_d, qd_d, stamp):
        """Cancel, succeed or abort the action goal at this joint state; send feedback."""
        goal = self._goal
        handle = goal.handle
        if handle.is_cancel_requested:
            # held with the computed-torque law (the model's damping of every joint at once)
            self._hold, self._sampler, self._effort = q.copy(), None, None
            self.get_logger().info(f'goal canceled: holding at t = {t:.4f} s')
            self._end_goal('canceled', 0, 'canceled')
            return
        goal.states += 1
        if goal.states % self.feedback_every == 0:
            feedback = FollowJointTrajectory.Feedback(joint_names=list(self.model.joint_names))
            feedback.header = stamp
            feedback.desired = JointTrajectoryPoint(positions=q_d.tolist(),
                                                    velocities=qd_d.tolist())
            feedback.actual = JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist())
            feedback.error = JointTrajectoryPoint(positions=(q_d - q).tolist(),
                                                  velocities=(qd_d - qd).tolist())
            handle.publish_feedback(feedback)
        if self._start is None:  # a goal accepted since this joint state's sample: it starts
            return               # at the next one
        elapsed = t - self._start
        end = self._sampler.duration
        if elapsed < end:
            return
        tolerance, extra = goal.tolerances
        error = np.abs(self._sampler.positions[-1] - q)
        if np.all(error <= tolerance):
            self._end_goal('succeed', 0, '')
        elif elapsed > end + extra:
            j = int(np.argmax(error - tolerance))
            self._end_goal('abort', -5, f'joint {self.model.joint_names[j]} is {error[j]:.4g} '
                           f'from its goal {extra:g} s after the end (tolerance '
                           f'{tolerance[j]:.4g})')

    def _pd(self, q, qd, q_d, qd_d, effort):
        """Return joint_trajectory_controller's effort-mode command: PD + feed-forward."""
        return self.effort_kp * (q_d - q) + self.effort_kd * (qd_d - qd) + effort

    def _effort_at(self, elapsed):
        """Return the points' effort at ``elapsed`` s (linear between points), zeros if none."""
        if self._effort is None:
            return np.zeros(self.model.dof)
        times, table = self._effort
        k = int(np.searchsorted(times, elapsed, side='right'))  # one search for every joint
        if k == 0 or k == times.size:
            return table[min(k, times.size - 1)].copy()
        w = (elapsed - times[k - 1]) / (times[k] - times[k - 1])
        return table[k - 1] + w * (table[k] - table[k - 1])

    def desired(self, t, q):
        """Return the desired positions, velocities and accelerations at time ``t``."""
        zero = np.zeros(self.model.dof)
        if self._sampler is None:
            if self._hold is None:
                self._hold = q.copy()
            return self._hold, zero, zero
        if self._start is None:
            self._start = t
        elapsed = t - self._start
        duration = self._sampler.duration
        if self._loop and duration > 0.0 and elapsed >= duration:
            self._start += math.floor(elapsed / duration) * duration
            elapsed = t - self._start
        q_d, qd_d, qdd_d = self._sampler.sample(elapsed)
        return q_d, qd_d, qdd_d

    def joint_state_callback(self, msg):
        """Compute and publish the computed-torque efforts for one joint state."""
        try:
            q = self._joint_map.gather(msg.name, msg.position, 'positions', required=True)
            qd = self._joint_map.gather(msg.name, msg.velocity, 'velocities')
        except DenocError as err:
            self.get_logger().warning(f'joint state ignored: {err}', throttle_duration_sec=2.0)
            return
        t = Time.from_msg(msg.header.stamp).nanoseconds * 1e-9
        self._last_q = q
        if self._pd_hold is not None:  # after an action goal: PD law on the held state
            q_d, qd_d = self._pd_hold[0], np.zeros(self.model.dof)
            tau = self._pd(q, qd, q_d, qd_d, self._pd_hold[1])
        else:
            q_d, qd_d, qdd_d = self.desired(t, q)
            if self._goal is not None or self._effort is not None:
                tau = self._pd(q, qd, q_d, qd_d, self._effort_at(t - self._start))
            else:
                tau = computed_torque(self.model, q, qd, (q_d, qd_d, qdd_d), self.kp, self.kd)
        if self._goal is not None:
            self._follow_goal(t, q, qd, q_d, qd_d, msg.header)
            if self._goal is None and self._sampler is not None and self._pd_hold is None:
                # over (not canceled): hold the last point, its effort too
                last = self._sampler.positions[-1]
                self._pd_hold = (last, self._effort_at(self._sampler.duration))
        if not np.all(np.isfinite(tau)):
            self.get_logger().error('non-finite effort: command not sent',
                                    throttle_duration_sec=2.0)
            return
        command = Float64MultiArray(data=tau[self._command_index].tolist())
        n = len(self._command_index)
        command.layout.dim = [MultiArrayDimension(label='joints', size=n, stride=n)]
        self._command_pub.publish(command)
        error = JointState(name=list(self.model.joint_names), position=(q_d - q).tolist(),
                           velocity=(qd_d - qd).tolist())
        error.header = msg.header
        self._error_pub.publish(error)


class _Goal:
    """An action goal being followed: its handle, tolerances and the future of its end."""

    def __init__(self, handle, tolerances):
        self.handle = handle
        self.tolerances = tolerances
        self.done = Future()
        self.states = 0


def main(args=None):
    """Run the controller until shutdown."""
    return spin_node(ComputedTorqueController, 'ct_controller', args)


if __name__ == '__main__':
    sys.exit(main())
