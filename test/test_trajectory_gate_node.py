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
The trajectory gate node over ROS, in one process: the gate, a scripted controller and a client.

The scripted controller is a FollowJointTrajectory server that records what it receives and
answers as it is told (accept or refuse; succeed after a time with feedback meanwhile; cancel on
request); a publisher stands in for the dynamics node's ``~/payloads`` and ``~/contact``. What
is checked: the goal the controller receives (joint order, efforts = Pinocchio's RNEA on the
URDF with the payload written in, tolerances passed through), the relay of feedback and result,
cancel, preemption, a missing or refusing controller, and the stop on contact.
"""

import threading
import time

from conftest import require_module, require_oracle
import denoc_ros as dr
from denoc_ros.identification.urdf_output import payload_urdf
from denoc_ros.resources import bundled_urdf
import numpy as np
import pytest

pytestmark = [pytest.mark.ros]

control_msgs = require_module('control_msgs.action')
FollowJointTrajectory = control_msgs.FollowJointTrajectory
rclpy = require_module('rclpy')
from action_msgs.msg import GoalStatus  # noqa: E402, I100
from control_msgs.msg import JointTolerance  # noqa: E402
from denoc_ros.ros.trajectory_gate import TrajectoryGate  # noqa: E402
from denoc_ros_interfaces.msg import ContactState, Payloads  # noqa: E402
from geometry_msgs.msg import Inertia  # noqa: E402
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse  # noqa: E402
from rclpy.callback_groups import ReentrantCallbackGroup  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

LINK = 'panda_link8'
MASS, COM, INERTIA = 3.0, np.array([0.0, 0.03, 0.12]), np.diag([0.012, 0.012, 0.006])
WAYPOINTS = np.array([
    [0.16, 0.33, -0.15, -1.27, 0.28, 1.75, 0.53],
    [-0.41, 0.52, 0.2, -0.53, 0.11, 2.57, 0.34],
    [-0.52, 0.2, 0.52, -0.37, 0.11, 2.3, -0.54],
])
SHUFFLE = [3, 0, 6, 1, 5, 2, 4]
CONTROLLER = '/test_controller/follow_joint_trajectory'
TIMEOUT = 30.0


class ScriptedController:
    """A FollowJointTrajectory server: records goals, answers as ``self.mode`` says."""

    def __init__(self, node):
        self.goals, self.cancels = [], []
        self.mode = 'succeed'       # 'succeed' | 'refuse' | 'run' (until canceled or preempted)
        self.run_time = 0.3         # [s] before 'succeed' succeeds
        self.lock = threading.Lock()
        self.current = None
        self.server = ActionServer(
            node, FollowJointTrajectory, CONTROLLER, self.execute,
            goal_callback=lambda g: (GoalResponse.REJECT if self.mode == 'refuse'
                                     else GoalResponse.ACCEPT),
            handle_accepted_callback=self.accepted,
            cancel_callback=self.cancel, callback_group=ReentrantCallbackGroup())

    def accepted(self, handle):
        """Preempt as joint_trajectory_controller does: the old goal ends, the new runs."""
        with self.lock:
            self.current = handle
        handle.execute()

    def cancel(self, handle):
        self.cancels.append(time.monotonic())
        return CancelResponse.ACCEPT

    def execute(self, handle):
        self.goals.append(handle.request)
        end = time.monotonic() + (self.run_time if self.mode == 'succeed' else TIMEOUT)
        while time.monotonic() < end:
            if handle.is_cancel_requested:
                handle.canceled()
                return FollowJointTrajectory.Result(error_code=0)
            if self.current is not handle:
                handle.abort()
                return FollowJointTrajectory.Result(error_code=-1, error_string='preempted')
            handle.publish_feedback(FollowJointTrajectory.Feedback(joint_names=['fb']))
            time.sleep(0.02)
        handle.succeed()
        return FollowJointTrajectory.Result(error_code=0, error_string='reached')


@pytest.fixture(scope='module')
def model():
    """Return the Panda with the payload (the gate learns of it from the Payloads message)."""
    return dr.attach_payload(dr.load_urdf(str(bundled_urdf('panda'))), LINK, MASS, COM, INERTIA)


@pytest.fixture(scope='module')
def ros():
    """Yield (client node, gate, controller, dynamics publishers); one set for the module."""
    context = rclpy.context.Context()
    rclpy.init(context=context)
    executor = MultiThreadedExecutor(num_threads=6, context=context)
    gate = TrajectoryGate(FollowJointTrajectory, context=context, parameter_overrides=[
        Parameter('urdf_path', value='panda'), Parameter('controller_action', value=CONTROLLER),
        Parameter('dynamics_node', value='/test_dynamics'),
        Parameter('server_timeout', value=1.0)])
    node = rclpy.create_node('gate_test_client', context=context)
    latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)
    payloads = node.create_publisher(Payloads, '/test_dynamics/payloads', latched)
    contact = node.create_publisher(ContactState, '/test_dynamics/contact', 10)
    controller = ScriptedController(node)
    client = ActionClient(node, FollowJointTrajectory, '/denoc_trajectory_gate/'
                          'follow_joint_trajectory', callback_group=ReentrantCallbackGroup())
    executor.add_node(gate)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    msg = Payloads(links=[LINK])
    inertia = Inertia(m=MASS, ixx=INERTIA[0, 0], iyy=INERTIA[1, 1], izz=INERTIA[2, 2])
    inertia.com.x, inertia.com.y, inertia.com.z = COM.tolist()
    msg.payloads.append(inertia)
    payloads.publish(msg)
    until(lambda: gate.model is not None and dr.payload.attached_payloads(gate.model))
    assert client.wait_for_server(timeout_sec=TIMEOUT)
    yield node, gate, controller, client, contact
    executor.shutdown()
    gate.destroy_node()
    node.destroy_node()
    rclpy.try_shutdown(context=context)
    spinner.join(timeout=5)


def until(predicate, timeout=TIMEOUT):
    """Wait until ``predicate()`` holds; return whether it does."""
    end = time.monotonic() + timeout
    while not predicate() and time.monotonic() < end:
        time.sleep(0.005)
    return bool(predicate())


def goal_of(names, t, q, qd=None, qdd=None):
    """Return a FollowJointTrajectory goal."""
    goal = FollowJointTrajectory.Goal()
    goal.trajectory.joint_names = list(names)
    for k in range(len(t)):
        p = JointTrajectoryPoint(positions=q[k].tolist())
        if qd is not None:
            p.velocities, p.accelerations = qd[k].tolist(), qdd[k].tolist()
        sec, nanosec = divmod(int(round(t[k] * 1e9)), 10 ** 9)
        p.time_from_start.sec, p.time_from_start.nanosec = sec, nanosec
        goal.trajectory.points.append(p)
    return goal


def send(client, goal, feedback=None):
    """Send ``goal``; return (goal handle, result future)."""
    sent = client.send_goal_async(goal, feedback_callback=feedback)
    assert until(sent.done)
    handle = sent.result()
    assert handle.accepted  # the gate accepts every goal, and aborts it with a reason
    return handle, handle.get_result_async()


def outcome(client, goal, feedback=None):
    """Send ``goal`` and return the result response (status, result)."""
    _, result = send(client, goal, feedback)
    assert until(result.done)
    return result.result()


def plan(model, scale):
    """Return (t, q, qd, qdd) through WAYPOINTS, 15 rad/s^2 (a planner's timing) times scale."""
    timed = dr.retime(model, WAYPOINTS, acceleration_limits=15.0, effort_limits=1e6)
    return timed.t * scale, timed.q, timed.qd / scale, timed.qdd / scale ** 2


def test_goal_forwarded_with_efforts_tolerances_feedback_and_result(ros, model):
    """A feasible goal in another joint order: forwarded as it came plus Pinocchio's efforts."""
    pin = require_oracle('pinocchio')
    node, gate, controller, client, _ = ros
    controller.mode = 'succeed'
    gate.set_parameters([Parameter('timing', value='repair')])
    t, q, qd, qdd = plan(model, 3.0)
    names = [model.joint_names[j] for j in SHUFFLE]
    goal = goal_of(names, t, q[:, SHUFFLE], qd[:, SHUFFLE], qdd[:, SHUFFLE])
    goal.goal_tolerance = [JointTolerance(name='panda_joint2', position=0.01)]
    goal.goal_time_tolerance.sec = 2
    feedback = []
    before = len(controller.goals)
    response = outcome(client, goal, feedback.append)
    assert response.status == GoalStatus.STATUS_SUCCEEDED, response.result.error_string
    assert response.result.error_string == 'reached'
    assert feedback and list(feedback[0].feedback.joint_names) == ['fb']
    sent = controller.goals[before]
    assert list(sent.trajectory.joint_names) == names
    assert sent.goal_tolerance[0].name == 'panda_joint2'
    assert sent.goal_tolerance[0].position == 0.01 and sent.goal_time_tolerance.sec == 2
    got = np.array([p.effort for p in sent.trajectory.points])
    pm = pin.buildModelFromXML(payload_urdf(bundled_urdf('panda').read_text(), LINK, MASS, COM,
                                            INERTIA))
    data = pm.createData()
    want = np.array([pin.rnea(pm, data, *row) for row in zip(q, qd, qdd)])[:, SHUFFLE]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    np.testing.assert_array_equal([p.positions for p in sent.trajectory.points], q[:, SHUFFLE])


def test_infeasible_goal_retimed_or_refused_by_mode(ros, model):
    """repair: retimed (rest to rest, feasible); keep: INVALID_GOAL naming joint and ratio."""
    node, gate, controller, client, _ = ros
    controller.mode = 'succeed'
    t, q, qd, qdd = plan(model, 1.0)
    gate.set_parameters([Parameter('timing', value='keep')])
    response = outcome(client, goal_of(model.joint_names, t, q, qd, qdd))
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
    check = dr.check_trajectory(model, t, q, qd, qdd)
    assert check.worst_joint in response.result.error_string
    assert f'{check.max_effort_ratio.max():.3g} x' in response.result.error_string
    gate.set_parameters([Parameter('timing', value='repair')])
    before = len(controller.goals)
    response = outcome(client, goal_of(model.joint_names, t, q, qd, qdd))
    assert response.status == GoalStatus.STATUS_SUCCEEDED
    sent = controller.goals[before].trajectory
    st = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec
                   for p in sent.points])
    sq, sqd, sqdd = (np.array([getattr(p, f) for p in sent.points])
                     for f in ('positions', 'velocities', 'accelerations'))
    np.testing.assert_array_equal(sqd[[0, -1]], 0.0)
    again = dr.check_trajectory(model, st, sq, sqd, sqdd)
    assert again.max_effort_ratio.max() <= 1.0
    assert st[-1] == pytest.approx(dr.retime(model, q).duration, abs=1e-9)


def test_invalid_joints_named(ros, model):
    """A goal with an unknown joint and one missing: INVALID_JOINTS naming both."""
    _, _, controller, client, _ = ros
    t, q, qd, qdd = plan(model, 3.0)
    names = list(model.joint_names)
    names[6] = 'gripper'
    response = outcome(client, goal_of(names, t, q, qd, qdd))
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == FollowJointTrajectory.Result.INVALID_JOINTS
    assert 'gripper' in response.result.error_string
    assert 'panda_joint7' in response.result.error_string


def test_refusing_controller_and_missing_controller_are_clear_errors(ros, model):
    """The controller refusing, or not there at all: aborted with a message, no hang."""
    _, gate, controller, client, _ = ros
    t, q, qd, qdd = plan(model, 3.0)
    controller.mode = 'refuse'
    response = outcome(client, goal_of(model.joint_names, t, q, qd, qdd))
    assert response.status == GoalStatus.STATUS_ABORTED
    assert 'refused the goal' in response.result.error_string
    controller.mode = 'succeed'
    gate.values = {**gate.values, 'controller_action': '/nobody'}
    old = gate._client
    gate._client = ActionClient(gate, FollowJointTrajectory, '/nobody/follow_joint_trajectory')
    try:
        response = outcome(client, goal_of(model.joint_names, t, q, qd, qdd))
    finally:
        gate._client = old
        gate.values = {**gate.values, 'controller_action': CONTROLLER}
    assert response.status == GoalStatus.STATUS_ABORTED
    assert 'is not available' in response.result.error_string


def test_cancel_forwarded_and_new_goal_preempts(ros, model):
    """A cancel reaches the controller; a second goal aborts the first, 'preempted'."""
    _, _, controller, client, _ = ros
    t, q, qd, qdd = plan(model, 3.0)
    controller.mode = 'run'
    goal = goal_of(model.joint_names, t, q, qd, qdd)
    handle, result = send(client, goal)
    assert until(lambda: controller.current is not None and controller.current.is_active)
    cancels = len(controller.cancels)
    handle.cancel_goal_async()
    assert until(result.done)
    assert result.result().status == GoalStatus.STATUS_CANCELED
    assert len(controller.cancels) == cancels + 1
    n = len(controller.goals)
    first, first_result = send(client, goal)
    assert until(lambda: len(controller.goals) == n + 1 and controller.current.is_active)
    second, second_result = send(client, goal)
    assert until(first_result.done)
    assert first_result.result().status == GoalStatus.STATUS_ABORTED
    assert 'preempted by a new goal' in first_result.result().result.error_string
    assert not second_result.done()
    second.cancel_goal_async()
    assert until(second_result.done)


def test_contact_cancels_and_aborts_naming_the_joint(ros, model):
    """A ContactState in contact while a goal runs: PATH_TOLERANCE_VIOLATED, joint, torque."""
    _, gate, controller, client, contact = ros
    t, q, qd, qdd = plan(model, 3.0)
    controller.mode = 'run'
    handle, result = send(client, goal_of(model.joint_names, t, q, qd, qdd))
    assert until(lambda: gate._active is not None and gate._active.downstream is not None)
    cancels = len(controller.cancels)
    msg = ContactState(in_contact=True, joint_names=list(model.joint_names),
                       external_torques=[0.0, 1.0, 0.0, -12.5, 0.0, 0.0, 0.0],
                       thresholds=[5.0] * 7,
                       joint_in_contact=[False, False, False, True, False, False, False])
    msg.max_ratio = 2.5
    sent = time.monotonic()
    contact.publish(msg)
    assert until(result.done)
    response = result.result()
    assert response.status == GoalStatus.STATUS_ABORTED
    assert response.result.error_code == FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED
    assert 'panda_joint4' in response.result.error_string
    assert '-12.5 N m' in response.result.error_string
    assert len(controller.cancels) == cancels + 1
    print(f'\ncontact message to the cancel at the controller: '
          f'{1e3 * (controller.cancels[-1] - sent):.1f} ms (one process, wall clock); '
          f'{response.result.error_string}')
