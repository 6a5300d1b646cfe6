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
The dynamics node's contact localization, as a user runs it: the installed executable.

``denoc_dynamics_node`` starts with ``contact_localization:=true`` on the Panda with cylinders
for collision geometry (:mod:`test_contact_processor`), link 5's shape being a mesh that does not
exist. A probe publishes joint states of the still arm whose efforts imply a push on link 7,
``tau = g(q) - J(q, r)^T F`` (``M qdd + C qd + g = tau + tau_ext``; g and the point's Jacobian
from Pinocchio), from 0.3 s to 0.6 s, and checks ``~/contact_location`` (link, point and force
against the truth, one ``in_contact: false`` when the push ends), ``~/contact_markers`` (sphere
on the link at the point, arrow into the surface, label; DELETEALL at the end), the diagnostics
(the unreadable mesh named, the localization's cost) and the log (the mesh named once). Then
pushes on links 4 and 7 at once: 'unexplained', no point, the label alone. Then the robot
description changes at run time to the bundled Panda, which has no collision geometry: the node
says so and goes on.
"""

import os
import subprocess
import time

from conftest import interrupt, require_module, venv_executable
import numpy as np
import pytest
from test_contact_processor import (panda_with_collisions, PinocchioArm, push_force, Q,
                                    side_point)

pytestmark = pytest.mark.ros
rclpy = require_module('rclpy')
from denoc_ros_interfaces.msg import ContactLocation, ContactState  # noqa: E402, I100
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

MISSING_MESH = 'package://no_such_package/meshes/link5.stl'
LINK, THETA, HEIGHT, FORCE = 'panda_link7', 0.7, 0.04, 30.0
PUSH = (0.3, 0.6)     # [s] of the stream's time: the noise at rest is measured before
END = 0.9
TWO = (0.95, 1.2)     # two pushes at once
RATE = 1000.0


class Probe:
    """Publishes joint states, records the node's outputs; one executor."""

    def __init__(self, context):
        from rclpy.executors import SingleThreadedExecutor
        self.node = rclpy.create_node('contact_probe', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.joint_pub = self.node.create_publisher(JointState, 'joint_states', 10)
        self.received = {'contact': [], 'location': [], 'markers': [], 'diagnostics': []}
        self.subs = [self.node.create_subscription(
            kind, topic, self.received[key].append, 1000) for kind, topic, key in (
            (ContactState, '/denoc_dynamics/contact', 'contact'),
            (ContactLocation, '/denoc_dynamics/contact_location', 'location'),
            (MarkerArray, '/denoc_dynamics/contact_markers', 'markers'),
            (DiagnosticArray, '/diagnostics', 'diagnostics'))]

    def spin_until(self, predicate, timeout=10.0):
        """Spin until ``predicate()`` holds; return whether it did."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.01)
        return predicate()

    def set_parameter(self, name, value):
        """Set one parameter of the node; return the SetParametersResult."""
        client = self.node.create_client(SetParameters, '/denoc_dynamics/set_parameters')
        assert client.wait_for_service(timeout_sec=20.0)
        future = client.call_async(SetParameters.Request(
            parameters=[Parameter(name, value=value).to_parameter_msg()]))
        self.executor.spin_until_future_complete(future, timeout_sec=60.0)
        assert future.done()
        self.node.destroy_client(client)
        return future.result().results[0]

    def close(self):
        """Destroy the probe."""
        self.executor.shutdown()
        self.node.destroy_node()


def stream(probe, names, g, tau_ext_at, t0=0.0, t1=END):
    """Publish the still arm's joint states from t0 to t1; wait for each ~/contact answer."""
    for k in range(int(round(t0 * RATE)), int(round(t1 * RATE))):
        t = k / RATE
        msg = JointState(name=list(names), position=Q.tolist(), velocity=[0.0] * 7,
                         effort=(g - tau_ext_at(t)).tolist())
        msg.header.stamp.sec = 50 + int(t)
        msg.header.stamp.nanosec = int(round((t - int(t)) * 1e9))
        before = len(probe.received['contact'])
        probe.joint_pub.publish(msg)
        probe.spin_until(lambda: len(probe.received['contact']) > before, timeout=2.0)
    probe.spin_until(lambda: False, timeout=0.3)   # the last answers


def seconds(msg):
    """Return a message's stamp as the stream's time."""
    return msg.header.stamp.sec - 50 + 1e-9 * msg.header.stamp.nanosec


def diagnostic_values(probe, since):
    """Return the key-values of the first /diagnostics after ``since`` (monotonic time)."""
    start = len(probe.received['diagnostics'])
    assert probe.spin_until(lambda: len(probe.received['diagnostics']) > start, timeout=10.0)
    status = probe.received['diagnostics'][-1].status[0]
    return status, {kv.key: kv.value for kv in status.values}


def test_node_locates_a_push_and_its_end(tmp_path, rclpy_context):
    """Location and markers while pushed on link 7, their end; the bad mesh said once."""
    text = panda_with_collisions(meshes={'panda_link5': MISSING_MESH})
    urdf = tmp_path / 'panda_collision.urdf'
    urdf.write_text(text)
    arm = PinocchioArm(text)
    names = [f'panda_joint{k}' for k in range(1, 8)]
    point, normal = side_point(LINK, THETA, HEIGHT)
    R, o = arm.pose(Q, LINK)
    force = push_force(R, normal, FORCE)
    tau_ext = arm.push_torques(Q, LINK, point, force)
    g = arm.gravity(Q)
    args = [str(venv_executable('denoc_dynamics_node')), '--ros-args', '-p',
            f'urdf_path:={urdf}', '-p', 'contact_localization:=true', '-p',
            'contact_threshold:=5.0', '-p', 'contact_relative_noise:=0', '-p',
            'diagnostics_period:=0.25']   # no relative noise: the torques have no model error
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env=dict(os.environ, RCUTILS_LOGGING_BUFFERED_STREAM='0'))
    probe = Probe(rclpy_context)
    try:
        assert probe.spin_until(lambda: process.poll() is None and (
            probe.joint_pub.get_subscription_count() > 0
            and all(s.get_publisher_count() > 0 for s in probe.subs)), timeout=60.0), \
            interrupt(process)[1]
        start = time.monotonic()
        stream(probe, names, g, lambda t: tau_ext if PUSH[0] <= t < PUSH[1] else np.zeros(7))
        print(f'\n{int(END * RATE)} joint states answered in {time.monotonic() - start:.1f} s')
        status, values = diagnostic_values(probe, time.monotonic())

        locations = probe.received['location']
        assert locations and all(PUSH[0] < seconds(m) for m in locations)
        in_contact = [m for m in locations if m.in_contact]
        assert in_contact and not locations[-1].in_contact
        assert [m.in_contact for m in locations] == [True] * len(in_contact) + [False]
        last = [m for m in in_contact if seconds(m) < PUSH[1]][-1]   # before the push ends
        assert last.status == 'located' and last.link == LINK, last.message
        assert last.header.frame_id == 'panda_link0'
        p = np.array([last.point_base.x, last.point_base.y, last.point_base.z])
        p_link = np.array([last.point.x, last.point.y, last.point.z])
        f = np.array([last.force.x, last.force.y, last.force.z])
        n = np.array([last.normal.x, last.normal.y, last.normal.z])
        error, force_error = np.linalg.norm(p - (R @ point + o)), np.linalg.norm(f - force)
        print(f'located {last.link}: point error {100 * error:.2f} cm, force error '
              f'{force_error:.2f} N of {FORCE} N; {last.message}')
        assert error < 0.02 and force_error < 0.15 * FORCE
        np.testing.assert_allclose(R @ p_link + o, p, atol=1e-9)
        assert float((R @ n) @ f) < 0.0     # the force pushes into the surface
        assert np.all(np.isfinite(last.covariance)) and last.residual >= 0.0
        assert locations[-1].status == 'no_contact' and locations[-1].link == ''
        assert PUSH[1] < seconds(locations[-1]) < PUSH[1] + 0.1

        arrays = probe.received['markers']
        assert len(arrays) >= 2
        drawn = arrays[-2].markers
        kinds = {m.type: m for m in drawn if m.action == Marker.ADD}
        sphere, arrow = kinds[Marker.SPHERE], kinds[Marker.ARROW]
        label = kinds[Marker.TEXT_VIEW_FACING]
        assert sphere.header.frame_id == arrow.header.frame_id == LINK
        at = np.array([sphere.pose.position.x, sphere.pose.position.y, sphere.pose.position.z])
        assert np.linalg.norm(at - point) < 0.02
        tail, head = ([a.x, a.y, a.z] for a in arrow.points)
        assert np.allclose(head, at) and float(normal @ (np.array(head) - tail)) < 0.0
        assert LINK in label.text
        assert [m.action for m in arrays[-1].markers] == [Marker.DELETEALL]
        # at most every 20 ms of stamp time while the link and status stay the same
        assert len(arrays) <= 2 + (PUSH[1] - PUSH[0]) / 0.02 + 1

        note = values['contact_localization']
        assert note.startswith('on: 6 of 7') and note.endswith('without: panda_link5 (a '
                                                               'contact there is not located)')
        assert values['contact_geometry_warnings'] == '1'
        assert 'link5.stl' in values['contact_geometry_warning_1']
        assert status.level == status.WARN   # 'no joint states' now; while they came:
        assert any(d.status[0].level == status.WARN and d.status[0].message ==
                   'publishing; 1 collision geometry warning(s)'
                   for d in probe.received['diagnostics'])
        costs = [(float(v['contact_localization_time_mean_ms']),
                  float(v['contact_localization_time_max_ms']), int(v['contact_localizations']))
                 for v in ({kv.key: kv.value for kv in d.status[0].values}
                           for d in probe.received['diagnostics']) if v['contact_localizations']
                 != '0']
        assert costs and all(0.0 < mean <= top for mean, top, _ in costs)
        print('localization per period (mean ms, max ms, count): ' + ', '.join(
            f'({mean:.3f}, {top:.3f}, {count})' for mean, top, count in costs))

        # two pushes at once (link 4 too): unexplained, the label alone, at the base
        p4, n4 = side_point('panda_link4', 1.0, 0.0)
        R4, _ = arm.pose(Q, 'panda_link4')
        both = tau_ext + arm.push_torques(Q, 'panda_link4', p4, push_force(R4, n4, 40.0))
        for key in ('location', 'markers'):
            probe.received[key].clear()
        stream(probe, names, g, lambda t: both if TWO[0] <= t < TWO[1] else np.zeros(7), END,
               TWO[1] + 0.1)
        locations = probe.received['location']
        settled = [m for m in locations if TWO[0] + 0.05 < seconds(m) < TWO[1]]
        assert settled and all(m.status == 'unexplained' and m.link == '' for m in settled), \
            [m.message for m in settled]
        assert not any(m.point_base.x or m.force.x for m in settled)
        assert not locations[-1].in_contact
        unexplained = [a for a in probe.received['markers'] if any(
            m.type == Marker.TEXT_VIEW_FACING and m.text == 'contact: unexplained'
            for m in a.markers)]
        assert unexplained
        actions = {(m.id, m.action) for m in unexplained[-1].markers}
        assert {(0, Marker.DELETE), (1, Marker.DELETE)} <= actions
        label = [m for m in unexplained[-1].markers if m.type == Marker.TEXT_VIEW_FACING][0]
        assert label.header.frame_id == 'panda_link0'
        print(f'two pushes: {settled[-1].message}')

        # a description without collision geometry: said, and the node goes on
        result = probe.set_parameter('urdf_path', 'panda')
        assert result.successful, result.reason
        probe.received['contact'].clear()
        stream(probe, names, g, lambda t: np.zeros(7), 1.6, 1.62)
        assert len(probe.received['contact']) >= 15
        _, values = diagnostic_values(probe, time.monotonic())
        assert values['contact_localization'].startswith('off: no moving link'), values
        assert process.poll() is None
    finally:
        probe.close()
        code, out = interrupt(process)
    assert code == 0 and 'Traceback' not in out, out
    mesh_lines = [line for line in out.splitlines() if 'link5.stl' in line]
    assert len(mesh_lines) == 1 and 'WARN' in mesh_lines[0], out
    assert sum('contact_localization is on, but off: no moving link' in line
               for line in out.splitlines()) == 1, out
