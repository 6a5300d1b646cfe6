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
The node's external torques, contact flags and contact wrench over real rclpy topics.

A probe publishes 1 kHz joint states of the Panda moving along a smooth motion, with efforts
``ID(q, qd, qdd) - J^T F`` (the library's inverse dynamics; the wrench F pushes on the tool
from t = 1 s), and checks ``~/external_torques`` against ``J^T F``, ``~/external_wrench``
against F, ``~/contact`` against the thresholds, the reset service, and that joint states
without efforts give no output but a diagnostic.
"""

import math

import denoc_ros as dr
from denoc_ros.resources import bundled_urdf
from denoc_ros_interfaces.msg import ContactState
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger
from test_dynamics_node import Harness

pytestmark = pytest.mark.ros
RATE = 1000.0
F_TOOL = np.array([12.0, -5.0, 20.0, 0.5, -0.8, 0.3])   # [force; torque] in the tool's axes


class ObserverHarness(Harness):
    """The harness with subscriptions to the observer's outputs."""

    def __init__(self, context, node):
        super().__init__(context, node)
        p = self.probe
        for kind, topic, key in ((JointState, '/denoc_dynamics/external_torques', 'external'),
                                 (WrenchStamped, '/denoc_dynamics/external_wrench', 'wrench'),
                                 (ContactState, '/denoc_dynamics/contact', 'contact')):
            self.subs.append(p.create_subscription(
                kind, topic, lambda m, key=key: self.received.setdefault(key, []).append(m),
                1000))

    def connect(self):
        """Wait for the node and the probe to see each other on every topic used here."""
        assert self.spin_until(lambda: self.joint_pub.get_subscription_count() > 0 and all(
            s.get_publisher_count() > 0 for s in self.subs[-3:] + self.subs[3:4])), \
            'node never connected'


@pytest.fixture
def harness(rclpy_context):
    """Start the node on the bundled Panda (2 N m threshold) and connect the probe."""
    from denoc_ros.ros.dynamics_node import DynamicsNode
    from rclpy.parameter import Parameter
    node = DynamicsNode(context=rclpy_context, parameter_overrides=[
        Parameter('urdf_path', value='panda'), Parameter('observer_gain', value=50.0),
        Parameter('contact_threshold', value=[2.0]), Parameter('contact_hysteresis', value=0.2)])
    h = ObserverHarness(rclpy_context, node)
    h.connect()
    yield h
    h.close()


def motion(t):
    """Return q, qd, qdd of a smooth motion around a pose far from singularities."""
    q0 = np.array([0.3, -0.5, 0.2, -2.0, 0.1, 1.5, 0.4])
    w = np.linspace(0.8, 1.6, 7)
    return (q0 + 0.1 * np.sin(w * t), 0.1 * w * np.cos(w * t), -0.1 * w ** 2 * np.sin(w * t))


def tool_wrench_torques(model, q):
    """Return J^T F for the tool wrench F_TOOL (rotated to base axes)."""
    R, _ = dr.frame_pose(model, q)
    F = np.concatenate((R @ F_TOOL[:3], R @ F_TOOL[3:]))
    return dr.jacobian(model, q).T @ F


def stream(h, model, t_end, push_at=1.0, with_effort=True, t_start=0.0):
    """Publish joint states from t_start to t_end at 1 kHz; return the sent tau_ext."""
    sent = []
    for k in range(int(round(t_start * RATE)), int(round(t_end * RATE))):
        t = k / RATE
        q, qd, qdd = motion(t)
        tau_ext = tool_wrench_torques(model, q) if t >= push_at else np.zeros(7)
        effort = dr.inverse_dynamics(model, q, qd, qdd) - tau_ext if with_effort else []
        msg = JointState(name=list(model.joint_names), position=q.tolist(),
                         velocity=qd.tolist(), effort=list(effort))
        msg.header.stamp.sec = int(100 + t)
        msg.header.stamp.nanosec = int(round((100 + t - int(100 + t)) * 1e9))
        key = 'external' if with_effort else 'feedforward'
        before = h.count(key)
        h.joint_pub.publish(msg)
        h.spin_until(lambda: h.count(key) > before, timeout=2.0)
        sent.append((t, tau_ext))
    h.spin_until(lambda: False, timeout=0.3)  # let the last answers arrive
    return sent


def stamp_seconds(msg):
    """Return a header stamp as seconds since 100 s (the motion's time)."""
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec - 100.0


def test_external_torques_wrench_and_contact(harness):
    """Before the push ~0 and no contact; after it J^T F within 3 %, F within 5 %, contact."""
    model = dr.load_urdf(bundled_urdf('panda').read_text())
    K_O = 50.0
    stream(harness, model, 1.4)
    external = harness.received['external']
    assert len(external) >= 1390, 'every joint state answered'
    before = [np.array(m.effort) for m in external if 0.1 < stamp_seconds(m) < 0.999]
    assert max(np.abs(b).max() for b in before) < 0.02
    late = [m for m in external if stamp_seconds(m) > 1.3]
    t_late = stamp_seconds(late[-1])
    expected = tool_wrench_torques(model, motion(t_late)[0])
    got = np.array(late[-1].effort)
    print(f'\ntau_ext at {t_late:.3f} s: {np.round(got, 3)}; J^T F: {np.round(expected, 3)}')
    assert np.abs(got - expected).max() <= 0.03 * np.abs(expected).max()
    wrench = [m for m in harness.received['wrench'] if stamp_seconds(m) > 1.3][-1]
    assert wrench.header.frame_id == model.tip_link
    f, m = wrench.wrench.force, wrench.wrench.torque
    w = np.array([f.x, f.y, f.z, m.x, m.y, m.z])
    print(f'wrench: {np.round(w, 3)}; applied {F_TOOL}')
    assert np.abs(w[:3] - F_TOOL[:3]).max() <= 0.05 * np.abs(F_TOOL[:3]).max()
    assert np.abs(w[3:] - F_TOOL[3:]).max() <= 0.05 * np.abs(F_TOOL[3:]).max() + 0.05
    contacts = harness.received['contact']
    assert not any(c.in_contact for c in contacts if stamp_seconds(c) < 0.999)
    first = next(c for c in contacts if c.in_contact)
    assert list(first.thresholds) == [2.0] * 7 and list(first.joint_names) == \
        list(model.joint_names)
    assert first.max_ratio == pytest.approx(np.abs(first.external_torques).max() / 2.0)
    assert first.max_ratio > 1.0
    # Detection delay: the first joint over 2 N m, against the first-order bound
    T = np.abs(tool_wrench_torques(model, motion(1.0)[0]))
    bound = min(math.log(Ti / (Ti - 2.0)) / K_O for Ti in T if Ti > 2.0)
    delay = stamp_seconds(first) - 1.0
    print(f'detected after {1e3 * delay:.1f} ms; first-order bound {1e3 * bound:.1f} ms')
    assert abs(delay - bound) < 3e-3


def test_reset_service_rezeros(harness):
    """The reset service answers success, and the estimate restarts from zero."""
    model = dr.load_urdf(bundled_urdf('panda').read_text())
    stream(harness, model, 1.2, push_at=0.5)
    assert np.abs(harness.received['external'][-1].effort).max() > 2.0
    response = harness.call(Trigger, 'reset_external_torques', Trigger.Request())
    assert response.success, response.message
    harness.received['external'] = []
    stream(harness, model, 1.25, push_at=0.5, t_start=1.2)
    first = harness.received['external'][0]
    assert np.abs(first.effort).max() == 0.0     # restarted at that sample
    assert harness.node.processor.observer.reason == 'reset_external_torques service'


def test_joint_states_without_efforts(harness):
    """No efforts: no external torques are published, and diagnostics say why."""
    model = dr.load_urdf(bundled_urdf('panda').read_text())
    stream(harness, model, 0.2, with_effort=False)
    assert not harness.received.get('external')
    got = []
    sub = harness.probe.create_subscription(DiagnosticArray, '/diagnostics', got.append, 10)
    harness.spin_until(lambda: bool(got), timeout=5.0)
    harness.probe.destroy_subscription(sub)
    values = {kv.key: kv.value for kv in got[-1].status[0].values}
    assert 'carry no efforts' in values['external_torques']


def test_observer_off_and_bad_parameters(harness):
    """observer_gain 0 turns it off; a wrong threshold count or an unknown frame is refused."""
    from rclpy.parameter import Parameter
    node = harness.node
    result = node.set_parameters([Parameter('contact_threshold', value=[1.0, 2.0])])
    assert not result[0].successful and '7' in result[0].reason
    result = node.set_parameters([Parameter('contact_frame', value='no_such_link')])
    assert not result[0].successful and 'no_such_link' in result[0].reason
    assert node.set_parameters([Parameter('contact_frame', value='panda_link5')])[0].successful
    assert node.processor.contact_frame == 'panda_link5'
    assert node.set_parameters([Parameter('observer_gain', value=0.0)])[0].successful
    assert node.processor.observer is None
    response = harness.call(Trigger, 'reset_external_torques', Trigger.Request())
    assert not response.success and 'off' in response.message
