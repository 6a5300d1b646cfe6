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
The dynamics node's task services over rclpy: estimate_payload, check_trajectory, retime.

A probe publishes joint states of a UR5e whose efforts come from Pinocchio's RNEA (independent
of the code under test) for the arm carrying a payload the node does not know; the node's
estimate, its applied payload (diagnostics, inverse dynamics, the observer at rest) and the
trajectory services are checked against the truth and against the library called directly.
One test spins the node with its own multi-threaded executor and checks that joint states
sent at ~1 kHz while an estimate runs are all answered.
"""

from pathlib import Path
import threading
import time

from conftest import require_oracle
import denoc_ros as dr
from denoc_ros.payload import attached_payloads
from denoc_ros_interfaces.srv import (CheckTrajectory, ComputeInverseDynamics, EstimatePayload,
                                      RetimeTrajectory, SetPayload)
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from test_dynamics_node_observer import ObserverHarness
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = pytest.mark.ros
URDF = Path(__file__).resolve().parents[1] / 'urdf' / 'ur5e.urdf'
MASS, COM = 1.5, np.array([0.02, -0.015, 0.06])
INERTIA = np.array([[0.006, 0.0004, -0.0002], [0.0004, 0.005, 0.0003],
                    [-0.0002, 0.0003, 0.004]])
REST = np.array([0.3, -1.3, 1.4, -1.2, -1.4, 0.3])
RATE = 500.0  # stamps of the motion [Hz]


class Truth:
    """Pinocchio's UR5e with the payload welded to tool0: the arm the joint states come from."""

    def __init__(self, joint_names):
        pin = require_oracle('pinocchio')
        self.pin = pin
        pm = pin.buildModelFromUrdf(str(URDF))
        assert list(pm.names)[1:] == list(joint_names)
        frame = pm.frames[pm.getFrameId('tool0')]
        parent = getattr(frame, 'parentJoint', None) or frame.parent
        pm.appendBodyToJoint(parent, pin.Inertia(MASS, COM, INERTIA), frame.placement)
        self.model, self.data = pm, pm.createData()

    def effort(self, q, qd, qdd):
        """Return tau = RNEA(q, qd, qdd) of the arm with the payload."""
        return self.pin.rnea(self.model, self.data, q, qd, qdd).copy()


def wrist_motion(t):
    """Return q, qd, qdd (rows) of a motion exciting the wrist around REST."""
    w = 2.0 * np.pi * np.array([0.05, 0.07, 0.0, 0.4, 0.45, 0.5])
    a = np.array([0.2, 0.2, 0.0, 0.8, 0.8, 0.8])
    wt = np.outer(t, w)
    return REST + a * np.sin(wt), a * w * np.cos(wt), -a * w ** 2 * np.sin(wt)


def joint_state(names, stamp, q, qd, effort):
    msg = JointState(name=list(names), position=q.tolist(), velocity=qd.tolist(),
                     effort=effort.tolist())
    sec = int(stamp)
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, int(round((stamp - sec) * 1e9))
    return msg


def motion_states(names, truth, t0, seconds, rate=RATE):
    t = np.arange(0.0, seconds, 1.0 / rate)
    q, qd, qdd = wrist_motion(t)
    return [joint_state(names, t0 + t[k], q[k], qd[k], truth.effort(q[k], qd[k], qdd[k]))
            for k in range(t.size)]


def rest_states(names, truth, t0, seconds=0.5, rate=1000.0):
    zero = np.zeros(len(names))
    tau = truth.effort(REST, zero, zero)
    return [joint_state(names, t0 + k / rate, REST, zero, tau)
            for k in range(int(seconds * rate))]


def send_all(h, messages, key='feedforward', burst=50):
    """Publish in bursts, waiting until the node answered each burst."""
    for k in range(0, len(messages), burst):
        chunk = messages[k:k + burst]
        before = h.count(key)
        for msg in chunk:
            h.joint_pub.publish(msg)
        assert h.spin_until(lambda: h.count(key) >= before + len(chunk), timeout=20.0), \
            f'{h.count(key) - before} answers to {len(chunk)} joint states'


def make_harness(context, **params):
    from denoc_ros.ros.dynamics_node import DynamicsNode
    values = {'urdf_path': str(URDF), 'observer_gain': 50.0, 'diagnostics_period': 0.1}
    values.update(params)
    node = DynamicsNode(context=context, parameter_overrides=[
        Parameter(k, value=v) for k, v in values.items()])
    h = ObserverHarness(context, node)
    h.connect()
    return h


@pytest.fixture
def harness(rclpy_context):
    h = make_harness(rclpy_context)
    yield h
    h.close()


def call(h, srv_type, name, request, timeout=120.0):
    """Call a task service (the first estimate in a process may compile for seconds)."""
    client = h.probe.create_client(srv_type, f'/denoc_dynamics/{name}')
    try:
        assert client.wait_for_service(timeout_sec=10.0)
        future = client.call_async(request)
        h.executor.spin_until_future_complete(future, timeout_sec=timeout)
        assert future.done(), f'{name} did not answer'
        return future.result()
    finally:
        h.probe.destroy_client(client)


def diagnostic_value(h, key):
    for array in reversed(h.received.get('diagnostics', [])):
        for status in array.status:
            for kv in status.values:
                if kv.key == key:
                    return kv.value
    return None


def test_estimate_apply_and_the_observer_at_rest(harness):
    h = harness
    base = h.node.model
    names = base.joint_names
    truth = Truth(names)
    send_all(h, motion_states(names, truth, 100.0, 8.0))
    # at rest, before apply: the observer sees the payload's gravity torque
    send_all(h, rest_states(names, truth, 110.0), key='external')
    zero = np.zeros(6)
    payload_torque = truth.effort(REST, zero, zero) - dr.gravity_torques(base, REST)
    before = np.array(h.received['external'][-1].effort)
    assert np.abs(payload_torque).max() > 5.0
    np.testing.assert_allclose(before, -payload_torque, atol=0.02)  # tau_ext = ID - tau

    r = call(h, EstimatePayload, 'estimate_payload',
             EstimatePayload.Request(link='tool0', apply=True))
    assert r.success, r.message
    assert 'applied' in r.message and r.inertia_identified
    p = r.payload
    com = np.array([p.com.x, p.com.y, p.com.z])
    inertia = np.array([[p.ixx, p.ixy, p.ixz], [p.ixy, p.iyy, p.iyz], [p.ixz, p.iyz, p.izz]])
    print(f'mass error {p.m / MASS - 1:.2e}, com error {np.abs(com - COM).max():.2e} m, '
          f'inertia error {np.linalg.norm(inertia - INERTIA) / np.linalg.norm(INERTIA):.2e}')
    assert p.m == pytest.approx(MASS, rel=1e-4)
    np.testing.assert_allclose(com, COM, atol=1e-4)
    assert np.linalg.norm(inertia - INERTIA) < 0.01 * np.linalg.norm(INERTIA)
    assert len(r.standard_deviation) == 10 and np.all(np.isfinite(r.standard_deviation))

    assert h.spin_until(lambda: diagnostic_value(h, 'payload_links') == 'tool0')
    q, qd = REST + 0.1, np.linspace(-0.5, 0.5, 6)
    qdd = np.linspace(1.0, -1.0, 6)
    idr = h.call(ComputeInverseDynamics, 'compute_inverse_dynamics',
                 ComputeInverseDynamics.Request(positions=q.tolist(), velocities=qd.tolist(),
                                                accelerations=qdd.tolist()))
    assert idr.success, idr.message
    error = np.abs(np.array(idr.effort) - truth.effort(q, qd, qdd)).max()
    print(f'inverse dynamics with the estimate: max error {error:.2e} N m')
    assert error < 1e-3
    # at rest after apply: nothing external left
    send_all(h, rest_states(names, truth, 120.0), key='external')
    after = np.array(h.received['external'][-1].effort)
    print(f'|tau_ext| at rest: before {np.abs(before).max():.3f}, after '
          f'{np.abs(after).max():.4f} N m')
    assert np.abs(after).max() < 0.3


def test_estimate_payload_errors(harness):
    h = harness
    r = call(h, EstimatePayload, 'estimate_payload', EstimatePayload.Request(apply=True))
    assert not r.success and 'no joint states' in r.message, r.message
    names = h.node.model.joint_names
    h.send(names, REST, np.zeros(6), expect=('feedforward',))  # no efforts: not in the window
    r = call(h, EstimatePayload, 'estimate_payload', EstimatePayload.Request())
    assert not r.success and 'no joint states' in r.message, r.message
    send_all(h, motion_states(names, Truth(names), 100.0, 2.0))
    r = call(h, EstimatePayload, 'estimate_payload', EstimatePayload.Request(link='nowhere'))
    assert not r.success and 'nowhere' in r.message, r.message
    assert list(r.standard_deviation) == []
    assert not attached_payloads(h.node.model)
    assert len(h.node.processor.window) == 1000  # 2 s at 500 Hz
    result = h.node.set_parameters([Parameter('payload_window', value=5)])[0]
    assert result.successful, result.reason
    assert len(h.node.processor.window) == 0 and h.node.processor.window.window_ns == 5e9
    result = h.node.set_parameters([Parameter('payload_window', value=0.0)])[0]
    assert not result.successful and 'payload_window' in result.reason


def test_joint_states_answered_while_estimating(rclpy_context):
    from denoc_ros.ros.dynamics_node import DynamicsNode
    from denoc_ros.ros.task_services import task_executor
    node = DynamicsNode(context=rclpy_context, parameter_overrides=[
        Parameter('urdf_path', value=str(URDF)), Parameter('observer_gain', value=50.0)])
    names = node.model.joint_names
    truth = Truth(names)
    node_executor = task_executor(rclpy_context)
    node_executor.add_node(node)
    probe = rclpy.create_node('probe', context=rclpy_context)
    probe_executor = SingleThreadedExecutor(context=rclpy_context)
    probe_executor.add_node(probe)
    answers = []
    probe.create_subscription(JointState, '/denoc_dynamics/feedforward_torques',
                              answers.append, 100000)
    pub = probe.create_publisher(JointState, 'joint_states', 100)
    client = probe.create_client(EstimatePayload, '/denoc_dynamics/estimate_payload')
    threads = [threading.Thread(target=e.spin, daemon=True)
               for e in (node_executor, probe_executor)]
    for thread in threads:
        thread.start()

    def wait(predicate, timeout=20.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end and not predicate():
            time.sleep(0.005)
        return predicate()
    try:
        assert wait(lambda: pub.get_subscription_count() > 0 and client.service_is_ready())
        assert wait(lambda: node.outputs.publishers['feedforward'].get_subscription_count() > 0)
        states = motion_states(names, truth, 100.0, 8.0)
        for k in range(0, len(states), 50):
            for msg in states[k:k + 50]:
                pub.publish(msg)
            assert wait(lambda: len(answers) >= k + len(states[k:k + 50]))
        extra = rest_states(names, truth, 110.0, seconds=60.0)
        sent = [len(states)]
        stop = threading.Event()

        def publish_at_1khz():
            for msg in extra:
                if stop.is_set():
                    return
                pub.publish(msg)
                sent[0] += 1
                time.sleep(1e-3)
        publisher = threading.Thread(target=publish_at_1khz, daemon=True)
        publisher.start()
        assert wait(lambda: len(answers) > len(states) + 20)  # the stream is flowing
        future = client.call_async(EstimatePayload.Request(link='tool0'))
        at_call = sent[0]
        assert wait(future.done, 60.0), 'estimate_payload did not answer'
        during = sent[0] - at_call
        publisher_more = sent[0] + 20
        assert wait(lambda: sent[0] >= publisher_more)  # a few more after the answer
        stop.set()
        publisher.join(timeout=5.0)
        assert future.result().success, future.result().message
        assert wait(lambda: len(answers) >= sent[0])
        print(f'{during} joint states sent during the estimate; {len(answers)} of {sent[0]} '
              'answered')
        assert during > 0
        assert len(answers) == sent[0]
    finally:
        node_executor.shutdown()
        probe_executor.shutdown()
        for thread in threads:
            thread.join(timeout=5.0)
        probe.destroy_node()
        node.destroy_node()


def trajectory_message(names, t, q, qd=None, qdd=None):
    msg = JointTrajectory(joint_names=list(names))
    for k in range(len(q)):
        point = JointTrajectoryPoint(positions=[float(v) for v in q[k]])
        if qd is not None:
            point.velocities = [float(v) for v in qd[k]]
        if qdd is not None:
            point.accelerations = [float(v) for v in qdd[k]]
        sec, nanosec = divmod(int(round(t[k] * 1e9)), 1_000_000_000)
        point.time_from_start.sec, point.time_from_start.nanosec = sec, nanosec
        msg.points.append(point)
    return msg


def test_trajectory_services_use_the_payload(harness):
    h = harness
    request = SetPayload.Request(link='tool0')
    request.payload.m = MASS
    request.payload.com.x, request.payload.com.y, request.payload.com.z = COM.tolist()
    assert h.call(SetPayload, 'set_payload', request).success
    model = dr.attach_payload(dr.load_urdf(str(URDF)), 'tool0', MASS, COM)
    names = model.joint_names
    waypoints = REST + np.array([[0.0] * 6, [0.4, -0.3, 0.3, 0.2, -0.4, 0.5],
                                 [0.8, -0.5, 0.1, 0.6, 0.0, 1.0]])
    retime_request = RetimeTrajectory.Request(effort_scaling=0.5)
    retime_request.trajectory = trajectory_message(names, np.arange(3.0), waypoints)
    r = call(h, RetimeTrajectory, 'retime_trajectory', retime_request)
    assert r.success, r.message
    ours = dr.retime(model, waypoints, effort_limits=0.5 * model.effort_limit)
    assert r.duration == pytest.approx(ours.duration, rel=1e-12)
    assert r.max_effort_ratio == pytest.approx(ours.max_effort_ratio, rel=1e-12)
    effort = np.array([p.effort for p in r.trajectory.points])
    np.testing.assert_allclose(effort, ours.effort, rtol=1e-12, atol=1e-12)

    for factor, feasible in ((1.0, True), (0.5, False)):
        check = CheckTrajectory.Request(effort_scaling=0.5)
        check.trajectory = trajectory_message(names, ours.t * factor, ours.q, ours.qd / factor,
                                              ours.qdd / factor ** 2)
        c = call(h, CheckTrajectory, 'check_trajectory', check)
        assert c.success, c.message
        lib = dr.check_trajectory(model, ours.t * factor, ours.q, ours.qd / factor,
                                  ours.qdd / factor ** 2, effort_limits=0.5 * model.effort_limit)
        assert c.feasible == lib.feasible == feasible
        np.testing.assert_allclose(c.max_effort_ratio, lib.max_effort_ratio, rtol=1e-5)
        assert c.worst_joint == lib.worst_joint

    bad = RetimeTrajectory.Request()
    bad.trajectory = trajectory_message(['nowhere'] + list(names[1:]), np.arange(3.0), waypoints)
    r = call(h, RetimeTrajectory, 'retime_trajectory', bad)
    assert not r.success and 'nowhere' in r.message
    weak = RetimeTrajectory.Request(effort_scaling=0.01)  # gravity alone exceeds the limits
    weak.trajectory = retime_request.trajectory
    r = call(h, RetimeTrajectory, 'retime_trajectory', weak)
    assert not r.success and r.message, r.message
    c = call(h, CheckTrajectory, 'check_trajectory',
             CheckTrajectory.Request(trajectory=bad.trajectory))
    assert not c.success and 'nowhere' in c.message
