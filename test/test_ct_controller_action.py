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
``ct_controller``'s FollowJointTrajectory action, in one process, joint states fed by hand.

The command at each joint state is checked against joint_trajectory_controller's effort law
written out here, ``Kp (q_d - q) + Kd (qd_d - qd) + effort_d``, with ``q_d``, ``qd_d`` from SciPy's
``BPoly.from_derivatives`` (not our sampler) and the effort interpolated linearly; then the goal's
end (succeeded within tolerance), preemption, rejection, and a cancel (held with the
computed-torque law at the measured position).
"""

import threading
import time

from conftest import require_module
from denoc_ros.feedforward import computed_torque
import numpy as np
import pytest
from scipy.interpolate import BPoly

pytestmark = [pytest.mark.ros]

FollowJointTrajectory = require_module('control_msgs.action').FollowJointTrajectory
rclpy = require_module('rclpy')
from action_msgs.msg import GoalStatus  # noqa: E402, I100
from denoc_ros.ros.ct_controller import ComputedTorqueController  # noqa: E402
from rclpy.action import ActionClient  # noqa: E402
from rclpy.executors import MultiThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectoryPoint  # noqa: E402

KP = np.array([400.0, 400.0, 400.0, 400.0, 100.0, 100.0, 40.0])  # the defaults
KD = np.array([5.0, 20.0, 5.0, 20.0, 2.0, 2.0, 1.0])
T = np.array([0.0, 0.4, 1.0])
Q = np.array([[0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.5],
              [0.2, -0.4, 0.1, -1.8, 0.1, 1.6, 0.4],
              [0.3, -0.3, 0.2, -1.7, 0.2, 1.7, 0.3]])
QD = np.array([np.zeros(7), [0.4, 0.2, 0.2, 0.3, 0.2, 0.1, -0.2], np.zeros(7)])
QDD = np.array([[0.5] * 7, [0.0] * 7, [-0.5] * 7])
EFFORT = np.array([[1.0, -20.0, 2.0, 10.0, 0.5, 1.0, 0.1],
                   [2.0, -25.0, 1.0, 12.0, 0.4, 1.2, 0.2],
                   [3.0, -22.0, 0.0, 11.0, 0.3, 1.1, 0.0]])
TIMEOUT = 30.0


def until(predicate, timeout=TIMEOUT):
    """Wait until ``predicate()`` holds; return whether it does."""
    end = time.monotonic() + timeout
    while not predicate() and time.monotonic() < end:
        time.sleep(0.005)
    return bool(predicate())


@pytest.fixture(scope='module')
def setup():
    """Yield (controller, action client, sent commands); spun in a thread."""
    context = rclpy.context.Context()
    rclpy.init(context=context)
    controller = ComputedTorqueController(
        context=context, parameter_overrides=[Parameter('urdf_path', value='panda')])
    commands = []
    controller._command_pub.publish = lambda msg: commands.append(np.array(msg.data))
    node = rclpy.create_node('ct_action_test', context=context)
    client = ActionClient(node, FollowJointTrajectory, '/ct_controller/follow_joint_trajectory')
    executor = MultiThreadedExecutor(num_threads=3, context=context)
    executor.add_node(controller)
    executor.add_node(node)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    assert client.wait_for_server(timeout_sec=TIMEOUT)
    yield controller, client, commands
    executor.shutdown()
    controller.destroy_node()
    node.destroy_node()
    rclpy.try_shutdown(context=context)
    spinner.join(timeout=5)


def goal(names, effort=True):
    """Return the goal of T, Q, QD, QDD (and EFFORT), stamped 0."""
    out = FollowJointTrajectory.Goal()
    out.trajectory.joint_names = list(names)
    for k in range(T.size):
        p = JointTrajectoryPoint(positions=Q[k].tolist(), velocities=QD[k].tolist(),
                                 accelerations=QDD[k].tolist())
        if effort:
            p.effort = EFFORT[k].tolist()
        p.time_from_start.sec, p.time_from_start.nanosec = divmod(int(round(T[k] * 1e9)),
                                                                  10 ** 9)
        out.trajectory.points.append(p)
    return out


def send(controller, client, msg):
    """Send a goal; return the client goal handle once the controller follows it."""
    sent = client.send_goal_async(msg)
    assert until(sent.done)
    handle = sent.result()
    if handle.accepted:
        assert until(lambda: controller._goal is not None
                     and controller._goal.handle.goal_id.uuid.tobytes()
                     == handle.goal_id.uuid.tobytes())
    return handle


def state(controller, names, t, q, qd):
    """Feed one joint state stamped ``t`` to the controller; return the command it sent."""
    msg = JointState(name=list(names), position=q.tolist(), velocity=qd.tolist())
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(round(t * 1e9)), 10 ** 9)
    controller.joint_state_callback(msg)


def test_goal_is_followed_with_the_pd_law_and_the_efforts(setup):
    """Commands = Kp e + Kd e_dot + linear effort; SciPy's quintics for the desired state."""
    controller, client, commands = setup
    names = controller.model.joint_names
    rejected = goal(names)
    rejected.trajectory.joint_names[3] = 'elbow'
    assert not send(controller, client, rejected).accepted
    handle = send(controller, client, goal(names))
    result = handle.get_result_async()
    polys = [BPoly.from_derivatives(T, np.stack([Q[:, j], QD[:, j], QDD[:, j]], axis=1))
             for j in range(7)]
    rng = np.random.default_rng(3)
    t0 = 12.5
    for s in (0.0, 0.13, 0.4, 0.71, 0.999):
        q = Q[0] + rng.uniform(-0.05, 0.05, 7)
        qd = rng.uniform(-0.2, 0.2, 7)
        state(controller, names, t0 + s, q, qd)
        q_d = np.array([p(s) for p in polys])
        qd_d = np.array([p.derivative()(s) for p in polys])
        ff = np.array([np.interp(s, T, EFFORT[:, j]) for j in range(7)])
        np.testing.assert_allclose(commands[-1], KP * (q_d - q) + KD * (qd_d - qd) + ff,
                                   rtol=0, atol=1e-8, err_msg=f's = {s}')
    assert not result.done()
    state(controller, names, t0 + 1.01, Q[-1] + 0.01, np.zeros(7))   # within 0.02 rad
    assert until(result.done)
    assert result.result().status == GoalStatus.STATUS_SUCCEEDED
    # after the end: the last point held, its effort too
    state(controller, names, t0 + 1.2, Q[-1], np.zeros(7))
    np.testing.assert_allclose(commands[-1], EFFORT[-1], rtol=0, atol=1e-12)


def test_preemption_and_cancel(setup):
    """A new goal aborts the running one; a cancel holds the measured q (computed torque)."""
    controller, client, commands = setup
    names = controller.model.joint_names
    first = send(controller, client, goal(names))
    first_result = first.get_result_async()
    state(controller, names, 30.0, Q[0], np.zeros(7))
    second = send(controller, client, goal(names, effort=False))
    assert until(first_result.done)
    assert first_result.result().status == GoalStatus.STATUS_ABORTED
    assert first_result.result().result.error_string == 'preempted by a new goal'
    second_result = second.get_result_async()
    state(controller, names, 40.0, Q[0], np.zeros(7))
    state(controller, names, 40.2, Q[0], np.zeros(7))
    second.cancel_goal_async()
    assert until(lambda: controller._goal.handle.is_cancel_requested)
    q, qd = Q[1] + 0.01, np.full(7, 0.1)
    state(controller, names, 40.3, q, qd)
    assert until(second_result.done)
    assert second_result.result().status == GoalStatus.STATUS_CANCELED
    state(controller, names, 40.31, q + 0.001, qd)
    want = computed_torque(controller.model, q + 0.001, qd, (q, np.zeros(7), np.zeros(7)),
                           400.0, 40.0)
    np.testing.assert_allclose(commands[-1], want, rtol=1e-12, atol=1e-9)
