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
``trajectory_gate``: a FollowJointTrajectory action in front of a trajectory controller.

Node ``denoc_trajectory_gate``. It offers ``control_msgs/action/FollowJointTrajectory`` on
``~/follow_joint_trajectory`` (point MoveIt's controller there) and forwards every goal it
accepts to the controller's action named by ``controller_action`` (default
``/joint_trajectory_controller/follow_joint_trajectory``), after the library's per-goal step
(:func:`denoc_ros.trajectories.gate.gate_trajectory`): joints reordered by name (unknown or
missing: aborted with ``INVALID_JOINTS``), the dense check as the controller samples the
trajectory, the timing kept, repaired or made time-optimal (``timing``: ``keep`` | ``repair`` |
``optimal``) under the URDF's effort and velocity limits times ``effort_scaling`` /
``velocity_scaling``, and every forwarded point's ``effort`` set to the torque the arm needs
there (inverse dynamics with the payloads, friction when ``friction`` is on): the feed-forward
a joint_trajectory_controller in effort mode adds to its PID output. Tolerances, goal time
tolerance and header are passed through.

The model is the robot description as the dynamics node takes it (``robot_description``,
``urdf_path``, else the ``/robot_description`` topic; ``base_link``, ``tip_link``,
``gravity``), with the payloads the dynamics node ``dynamics_node`` holds: its ``~/payloads``
(transient local, sent on every change) are applied in order with
:func:`denoc_ros.attach_payload`. Its ``~/contact`` is followed: with ``stop_on_contact`` (default
true), a contact while a goal runs cancels the controller's goal at once and aborts the client's
with ``PATH_TOLERANCE_VIOLATED`` and an error string naming the joint and its external torque.

Feedback and the result are relayed; a cancel is forwarded (the client's goal is canceled when
the controller's is done); a new goal preempts the running one as the controller does (once the
controller accepted the new goal, the old one is aborted, "preempted by a new goal"; a new goal
the gate or the controller refuses leaves the running one alone). The controller's action
missing (``server_timeout`` s), refusing the goal, or going away while a goal runs: the
client's goal is aborted with a message saying so, never left hanging.

Every goal is accepted, then aborted with its error code if refused, so that the client gets
the reason (a goal rejected at once carries none). Needs ``control_msgs`` (not on PyPI: built
into the venv by ``scripts/setup_env.sh``); without it the executable says how to get it.
"""

import sys
import threading
import time

import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from . import settings as parameters
from ._main import spin_node
from .settings import Spec
from .trajectory_services import _duration as duration_message, trajectory_tables
from ..description import read_description
from ..errors import DenocError, InputError
from ..joints import PRISMATIC
from ..trajectories.gate import (contact_reason, gate_trajectory, GateRejection, TIMINGS,
                                 with_payloads)
from ..urdf import load_urdf

NODE_NAME = 'denoc_trajectory_gate'
CONTROL_MSGS_HELP = (
    'control_msgs (ros-controls) is not installed: it has no PyPI wheel. scripts/setup_env.sh '
    'builds it into the venv from ../shared/control_msgs or a clone of its release tag '
    '(DENOC_CONTROL_MSGS_SRC=<dir> for another copy); on an apt ROS 2 install: apt-get install '
    'ros-$ROS_DISTRO-control-msgs and source /opt/ros/$ROS_DISTRO/setup.bash')

PARAMETERS = parameters.table(
    *parameters.read_only(
        *parameters.model_specs(),
        Spec('base_link', 'string', '', 'base of the modelled chain; empty: the URDF root',
             example='panda_link0'),
        Spec('tip_link', 'string', '', 'tip of the modelled chain; empty: the whole tree',
             example='panda_link8'),
        parameters.gravity_spec(),
        Spec('controller_action', 'string',
             '/joint_trajectory_controller/follow_joint_trajectory',
             "the controller's FollowJointTrajectory action the goals are forwarded to"),
        Spec('dynamics_node', 'string', '/denoc_dynamics',
             'the dynamics node whose ~/payloads and ~/contact the gate follows'),
        Spec('server_timeout', 'double', 2.0,
             "longest wait for the controller's action server and its answers [s]", 0.0, 3600.0,
             open_low=True)),
    Spec('timing', 'string', 'repair', 'keep, repair or optimal (see the README)',
         choices=TIMINGS),
    Spec('effort_scaling', 'double', 1.0, "factor on the URDF's effort limits", 0.0, 1e6,
         open_low=True, example=0.9),
    Spec('velocity_scaling', 'double', 1.0, "factor on the URDF's velocity limits", 0.0, 1e6,
         open_low=True, example=0.9),
    Spec('friction', 'bool', False, "add the URDF's joint friction to the efforts"),
    Spec('stop_on_contact', 'bool', True,
         'cancel the running goal when the dynamics node flags a contact'),
)

# error codes of FollowJointTrajectory.Result, by name (the class is imported in main)
SUCCESSFUL, INVALID_GOAL, INVALID_JOINTS, PATH_TOLERANCE_VIOLATED = 0, -1, -2, -4
CODES = {'INVALID_GOAL': INVALID_GOAL, 'INVALID_JOINTS': INVALID_JOINTS}
WATCH_PERIOD = 0.1  # [s] how often a running goal looks at the controller's server


def action_type():
    """Return control_msgs' FollowJointTrajectory, or raise InputError saying how to get it."""
    try:
        from control_msgs.action import FollowJointTrajectory
    except ImportError as err:
        raise InputError(f'{CONTROL_MSGS_HELP} ({err})') from None
    return FollowJointTrajectory


def forwarded_goal(action, goal, gated):
    """Return the controller's goal: ``gated``'s points, everything else of ``goal`` as is."""
    out = action.Goal()
    out.trajectory = JointTrajectory(header=goal.trajectory.header,
                                     joint_names=list(gated.joint_names))
    for k in range(gated.t.size):
        point = JointTrajectoryPoint(time_from_start=duration_message(gated.t[k]),
                                     positions=gated.q[k].tolist(),
                                     effort=gated.effort[k].tolist())
        if gated.qd is not None:
            point.velocities = gated.qd[k].tolist()
        if gated.qdd is not None:
            point.accelerations = gated.qdd[k].tolist()
        out.trajectory.points.append(point)
    for field in ('path_tolerance', 'goal_tolerance', 'goal_time_tolerance',
                  'component_path_tolerance', 'component_goal_tolerance'):
        if hasattr(goal, field):  # the component tolerances: Kilted's control_msgs only
            setattr(out, field, getattr(goal, field))
    return out


class _Run:
    """One client goal: its handle, the controller's goal and how it is to end."""

    def __init__(self, goal_handle):
        self.goal_handle = goal_handle
        self.wake = threading.Event()
        self.lock = threading.Lock()
        self.downstream = None      # the controller's ClientGoalHandle once accepted
        self.result_future = None
        self.stop = None            # (code, text) of a contact stop or a preemption
        self.finished = False

    def end(self, code, text):
        """Ask the run to end with ``code`` and ``text`` (the first request wins)."""
        with self.lock:
            if self.stop is not None or self.finished:
                return False
            self.stop = (code, text)
        self.wake.set()
        return True


class TrajectoryGate(Node):
    """Check, retime and fill the efforts of FollowJointTrajectory goals; forward them."""

    def __init__(self, action, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self.action = action
        values = parameters.declare(self, PARAMETERS)
        self.values = values
        self.base = None            # the model as loaded
        self.model = None           # with the dynamics node's payloads
        self._payloads = ()         # (link, mass, com, inertia) as last received
        self._payload_error = None
        self._units = None
        self._lock = threading.Lock()
        self._active = None         # the _Run the controller is executing
        self._sending = 0           # goals sent to the controller, not answered yet
        self._group = ReentrantCallbackGroup()
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        source = values['robot_description'] or (
            read_description(values['urdf_path']) if values['urdf_path'] else None)
        if source is not None:
            self._set_model(source)
        else:
            self.create_subscription(String, '/robot_description',
                                     self.robot_description_callback, latched)
            self.get_logger().info('no robot_description or urdf_path parameter: waiting for '
                                   'a URDF on /robot_description')
        from denoc_ros_interfaces.msg import ContactState, Payloads
        dynamics = values['dynamics_node'].rstrip('/')
        topics = MutuallyExclusiveCallbackGroup()
        self.create_subscription(Payloads, f'{dynamics}/payloads', self.payloads_callback,
                                 latched, callback_group=topics)
        # its own group: a contact is acted on while a goal is being retimed
        self.create_subscription(ContactState, f'{dynamics}/contact', self.contact_callback, 10,
                                 callback_group=MutuallyExclusiveCallbackGroup())
        self._client = ActionClient(self, action, values['controller_action'],
                                    callback_group=self._group)
        self._server = ActionServer(
            self, action, '~/follow_joint_trajectory', self.execute_callback,
            goal_callback=lambda goal: GoalResponse.ACCEPT,
            cancel_callback=self.cancel_callback, callback_group=self._group)
        self.add_on_set_parameters_callback(self.parameters_callback)
        self.get_logger().info(
            f'gate on {self._server_name()} -> {values["controller_action"]}; timing '
            f'{values["timing"]}, payloads and contacts of {dynamics}')

    def _server_name(self):
        return self.resolve_topic_name('~/follow_joint_trajectory')

    # -- model ---------------------------------------------------------------------------------
    def _set_model(self, source):
        base = load_urdf(source, base_link=self.values['base_link'] or None,
                         tip_link=self.values['tip_link'] or None, gravity=self.values['gravity'])
        types = np.asarray(base.joint_type)[-base.dof:]
        self._units = ['N' if k == PRISMATIC else 'N m' for k in types]
        self.base = base
        self._apply_payloads()
        self.get_logger().info(f'model {base.name!r}: {base.dof} joints')

    def _apply_payloads(self):
        if self.base is None:
            return
        try:
            self.model = with_payloads(self.base, self._payloads)
            self._payload_error = None
        except DenocError as err:
            self.model = None
            self._payload_error = f'the payloads of {self.values["dynamics_node"]}: {err}'
            self.get_logger().error(self._payload_error + ': goals are refused until they fit')

    def robot_description_callback(self, msg):
        """Load the model from a URDF on /robot_description (a bad one: logged, ignored)."""
        try:
            self._set_model(msg.data)
        except DenocError as err:
            self.get_logger().error(f'robot_description ignored: {err}')

    def payloads_callback(self, msg):
        """Take the dynamics node's payloads (applied in order to the model as loaded)."""
        table = []
        for link, p in zip(msg.links, msg.payloads):
            inertia = np.array([[p.ixx, p.ixy, p.ixz], [p.ixy, p.iyy, p.iyz],
                                [p.ixz, p.iyz, p.izz]])
            table.append((link, p.m, np.array([p.com.x, p.com.y, p.com.z]), inertia))
        self._payloads = tuple(table)
        self._apply_payloads()
        self.get_logger().info('payloads: ' + (', '.join(
            f'{m:g} kg on {link}' for link, m, _, _ in table) or 'none'))

    def parameters_callback(self, changes):
        """Take new run-time settings (timing, scalings, friction, stop_on_contact)."""
        try:
            new = parameters.changes(PARAMETERS, changes)
        except DenocError as err:
            return SetParametersResult(successful=False, reason=str(err))
        self.values = {**self.values, **new}
        return SetParametersResult(successful=True)

    # -- goals ---------------------------------------------------------------------------------
    def cancel_callback(self, goal_handle):
        """Accept every cancel request; the running goal forwards it."""
        return CancelResponse.ACCEPT

    def _gate(self, goal):
        """Return the GatedTrajectory of a goal; GateRejection if refused."""
        model, values = self.model, self.values
        if model is None:
            raise GateRejection('INVALID_GOAL', self._payload_error or
                                'no robot model yet (waiting for /robot_description)')
        if len(goal.multi_dof_trajectory.points):
            raise GateRejection('INVALID_GOAL', 'multi-DOF trajectories are not handled')
        try:
            t, q, qd, qdd = trajectory_tables(goal.trajectory)
        except InputError as err:
            raise GateRejection('INVALID_GOAL', str(err)) from None
        return gate_trajectory(model, list(goal.trajectory.joint_names), t, q, qd, qdd,
                               timing=values['timing'],
                               effort_scaling=values['effort_scaling'],
                               velocity_scaling=values['velocity_scaling'],
                               friction=values['friction'])

    def _finish(self, run, how, code, text, result=None):
        """End the client's goal (``how``: 'succeed', 'abort', 'canceled'); return its result."""
        if result is None:
            result = self.action.Result(error_code=code, error_string=text)
        with run.lock:
            run.finished = True
        with self._lock:
            if self._active is run:
                self._active = None
        getattr(run.goal_handle, how)()
        text = f'goal {how}: {result.error_string or "done"}'
        if how == 'succeed':
            self.get_logger().info(text)
        else:
            self.get_logger().warning(text)
        return result

    def execute_callback(self, goal_handle):
        """Gate one goal, forward it, relay feedback and result; end it as it ends."""
        run = _Run(goal_handle)
        goal = goal_handle.request
        timeout = self.values['server_timeout']
        try:
            gated = self._gate(goal)
        except GateRejection as err:
            return self._finish(run, 'abort', CODES[err.code], str(err))
        except DenocError as err:
            return self._finish(run, 'abort', INVALID_GOAL, str(err))
        self.get_logger().info(gated.summary)
        if goal_handle.is_cancel_requested:
            return self._finish(run, 'canceled', SUCCESSFUL, 'canceled before it was sent')
        name = self.values['controller_action']
        if not self._client.wait_for_server(timeout_sec=timeout):
            return self._finish(run, 'abort', INVALID_GOAL,
                                f"the controller's action {name} is not available (waited "
                                f'{timeout:g} s)')
        with self._lock:
            self._sending += 1
        sent = self._client.send_goal_async(
            forwarded_goal(self.action, goal, gated),
            feedback_callback=lambda msg: goal_handle.publish_feedback(msg.feedback))
        sent.add_done_callback(lambda _: run.wake.set())
        answered = self._wait(run, sent.done, timeout)
        with self._lock:
            self._sending -= 1
            active = self._active
        if active is not None:
            active.wake.set()
        if not answered:
            return self._finish(run, 'abort', INVALID_GOAL,
                                f'the controller ({name}) did not answer the goal in '
                                f'{timeout:g} s')
        downstream = sent.result()
        if downstream is None or not downstream.accepted:
            return self._finish(run, 'abort', INVALID_GOAL,
                                f'the controller ({name}) refused the goal')
        with self._lock:
            previous, self._active = self._active, run
        run.downstream = downstream
        if previous is not None:
            previous.end(INVALID_GOAL, 'preempted by a new goal')
        run.result_future = downstream.get_result_async()
        run.result_future.add_done_callback(lambda _: run.wake.set())
        return self._follow(run, name, timeout)

    def _wait(self, run, done, timeout):
        """Wait until ``done()`` or ``timeout`` s; return ``done()``."""
        end = time.monotonic() + timeout
        while not done() and time.monotonic() < end:
            run.wake.wait(min(WATCH_PERIOD, max(end - time.monotonic(), 0.0)))
            run.wake.clear()
        return done()

    def _follow(self, run, name, timeout):
        """Wait for the controller's result, a cancel, a contact or a preemption."""
        handle = run.goal_handle
        cancel_sent = False
        gone_since = None
        while True:
            if run.result_future.done() and run.stop is None and not cancel_sent:
                return self._relay(run, name)
            if run.stop is not None:
                code, text = run.stop
                if code == PATH_TOLERANCE_VIOLATED:  # a contact: the cancel went out already
                    self._wait(run, run.result_future.done, timeout)
                return self._finish(run, 'abort', code, text)
            if handle.is_cancel_requested and not cancel_sent:
                run.downstream.cancel_goal_async()
                cancel_sent = True
            if cancel_sent:
                self._wait(run, run.result_future.done, timeout)
                return self._finish(run, 'canceled', SUCCESSFUL, 'canceled')
            if not self._client.server_is_ready():
                gone_since = gone_since or time.monotonic()
                if time.monotonic() - gone_since > timeout:
                    return self._finish(run, 'abort', INVALID_GOAL,
                                        f"the controller's action {name} went away while the "
                                        'goal ran')
            else:
                gone_since = None
            run.wake.wait(WATCH_PERIOD)
            run.wake.clear()

    def _relay(self, run, name):
        """End the client's goal as the controller's ended, with its result."""
        from action_msgs.msg import GoalStatus
        response = run.result_future.result()
        result = response.result
        if response.status != GoalStatus.STATUS_SUCCEEDED:
            # the controller ends its goal when it accepts a newer one: if one is on its way,
            # wait for its answer, which ends this run as preempted
            self._wait(run, lambda: run.stop is not None or not self._sending,
                       self.values['server_timeout'])
            if run.stop is not None:
                return self._finish(run, 'abort', *run.stop)
        if response.status == GoalStatus.STATUS_SUCCEEDED:
            return self._finish(run, 'succeed', result.error_code, result.error_string, result)
        what = {GoalStatus.STATUS_ABORTED: 'aborted',
                GoalStatus.STATUS_CANCELED: 'canceled'}.get(response.status, 'ended')
        result.error_string = (f'the controller ({name}) {what} the goal'
                               + (f': {result.error_string}' if result.error_string else ''))
        if result.error_code == SUCCESSFUL:
            result.error_code = INVALID_GOAL
        return self._finish(run, 'abort', result.error_code, result.error_string, result)

    # -- contact ---------------------------------------------------------------------------------
    def contact_callback(self, msg):
        """On a contact while a goal runs (stop_on_contact): cancel the controller's goal."""
        if not msg.in_contact or not self.values['stop_on_contact']:
            return
        with self._lock:
            run = self._active
        if run is None or run.downstream is None:
            return
        received = time.monotonic()
        try:
            index = [list(msg.joint_names).index(j) for j in self.model.joint_names]
            units = self._units
        except (ValueError, AttributeError):
            index, units = list(range(len(msg.joint_names))), None
        names = [msg.joint_names[k] for k in index]
        try:
            _, text = contact_reason(
                names, np.asarray(msg.external_torques)[index],
                np.asarray(msg.thresholds)[index],
                [msg.joint_in_contact[k] for k in index], units)
        except (DenocError, IndexError):
            text = 'contact (the contact state message is malformed)'
        if run.end(PATH_TOLERANCE_VIOLATED, text):
            run.downstream.cancel_goal_async()
            self.get_logger().warning(
                f"{text}: the controller's goal canceled "
                f'{1e3 * (time.monotonic() - received):.2f} ms after the contact message '
                f'(stamped {msg.header.stamp.sec}.{msg.header.stamp.nanosec:09d})')


def main(args=None):
    """Run the gate until shutdown (exit 1 with how to get control_msgs without it)."""
    try:
        action = action_type()
    except InputError as err:
        print(f'trajectory_gate: {err}', file=sys.stderr)
        return 1
    return spin_node(lambda: TrajectoryGate(action), 'trajectory_gate', args,
                     executor_type=lambda: MultiThreadedExecutor(num_threads=4))


if __name__ == '__main__':
    sys.exit(main())
