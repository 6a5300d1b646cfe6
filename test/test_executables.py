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
The executables, run as a user runs them: ``denoc_demo`` (``make run``) and the dynamics node.

Real processes and real DDS on loopback (set up in conftest.py); the test side is an rclpy node in
this process. Nothing sleeps a fixed time: every wait is for a peer or a message, with a timeout.
"""

import re
import subprocess
import time

from conftest import require_module, venv_executable
import denoc_ros as dr
from denoc_ros.resources import bundled_urdf
import numpy as np
import pytest

rclpy = require_module('rclpy')
JointState = require_module('sensor_msgs.msg').JointState
Float64MultiArray = require_module('std_msgs.msg').Float64MultiArray

pytestmark = pytest.mark.ros


def test_demo_prints_torques():
    """``denoc_demo`` (what ``make run`` starts) shows torques arriving from the node."""
    demo = venv_executable('denoc_demo')
    run = subprocess.run([str(demo), '--robot', 'craig_rr', '--rate', '50', '--duration', '12'],
                         capture_output=True, text=True, timeout=90)
    assert run.returncode == 0, run.stderr
    rates = [float(r) for r in re.findall(r'([0-9.]+) msg/s', run.stdout)]
    assert rates and max(rates) > 10.0, run.stdout[-2000:]
    gravity = re.findall(r'gravity:\s+([-+0-9. ]+)', run.stdout)
    assert gravity, run.stdout[-2000:]
    values = [float(v) for v in gravity[-1].split()]
    assert len(values) == 2 and any(abs(v) > 0.1 for v in values)


class Probe:
    """An in-process node that publishes joint states and records the node's outputs."""

    TOPICS = ('gravity', 'coriolis', 'inertia', 'feedforward')

    def __init__(self, context):
        from rclpy.executors import SingleThreadedExecutor
        self.node = rclpy.create_node('probe', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.pub = self.node.create_publisher(JointState, 'joint_states', 10)
        self.received = {}
        self.subs = [self.node.create_subscription(
            JointState, f'/denoc_dynamics/{t}_torques',
            lambda m, t=t: self.received.setdefault(t, []).append(m), 10) for t in self.TOPICS]
        self.subs.append(self.node.create_subscription(
            Float64MultiArray, '/denoc_dynamics/effort_command',
            lambda m: self.received.setdefault('command', []).append(m), 10))

    def spin_until(self, predicate, timeout):
        """Spin until ``predicate()`` holds; return whether it did within ``timeout`` s."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.05)
        return predicate()

    def close(self):
        """Destroy the node and its executor."""
        self.executor.shutdown()
        self.node.destroy_node()


@pytest.fixture
def craig_node():
    """Run ``denoc_dynamics_node`` on the bundled Craig RR arm; stop it afterwards."""
    exe = venv_executable('denoc_dynamics_node')
    proc = subprocess.Popen([str(exe), '--ros-args', '-p', 'urdf_path:=craig_rr'],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_dynamics_node_publishes_library_torques(craig_node, rclpy_context):
    """Joint states in any order with an extra joint give the library's torques, stamp copied."""
    model = dr.load_urdf(bundled_urdf('craig_rr'))
    probe = Probe(rclpy_context)
    try:
        assert probe.spin_until(lambda: probe.pub.get_subscription_count() > 0 and all(
            s.get_publisher_count() > 0 for s in probe.subs), 20.0), 'node never appeared'
        q, qd = np.array([0.4, -1.1]), np.array([0.7, 1.3])
        msg = JointState()
        msg.header.stamp.sec, msg.header.stamp.nanosec = 1234, 5678
        msg.name = ['gripper', model.joint_names[1], model.joint_names[0]]
        msg.position = [0.01, q[1], q[0]]
        msg.velocity = [0.0, qd[1], qd[0]]
        got = probe.spin_until(lambda: probe.pub.publish(msg) or all(
            t in probe.received for t in Probe.TOPICS + ('command',)), 10.0)
        assert got, f'outputs received: {sorted(probe.received)}'
        g = dr.gravity_torques(model, q)
        c = dr.coriolis_torques(model, q, qd)
        expected = {'gravity': g, 'coriolis': c, 'inertia': np.zeros(2), 'feedforward': g + c}
        for term, value in expected.items():
            out = probe.received[term][-1]
            assert list(out.name) == list(model.joint_names)
            assert (out.header.stamp.sec, out.header.stamp.nanosec) == (1234, 5678)
            np.testing.assert_allclose(out.effort, value, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(probe.received['command'][-1].data, g + c, rtol=1e-12)
    finally:
        probe.close()
    assert craig_node.poll() is None, 'dynamics_node died'


def _started(proc, timeout=60.0):
    """Wait until the process has logged its first line (its node is built); return it."""
    import selectors
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(timeout):
            raise AssertionError('the executable printed nothing in time')
    return proc.stdout.readline()


def _signalled(command, signals, settle=0.0):
    """Start ``command``, await its first line, send ``signals``; return status and output."""
    import signal
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)
    try:
        first = _started(proc)
        time.sleep(settle)
        for sig in signals:
            proc.send_signal(getattr(signal, sig))
            time.sleep(0.01)
        rest, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, first + rest


SIGNALS = pytest.mark.parametrize('signals', [('SIGINT', 'SIGINT'), ('SIGTERM',)],
                                  ids=['ctrl-c in a terminal under ros2 launch', 'sigterm'])


@pytest.mark.slow
@pytest.mark.parametrize('name, args', [
    ('denoc_dynamics_node', ('--ros-args', '-p', 'urdf_path:=craig_rr')),
    ('denoc_sim_arm', ('--ros-args', '-p', 'urdf_path:=panda')),
    ('denoc_joint_state_source', ('--ros-args', '-p', 'urdf_path:=craig_rr')),
    ('denoc_torque_monitor', ('--ros-args', '-p', 'interval:=0.2')),
    ('denoc_ct_controller', ('--ros-args', '-p', 'urdf_path:=craig_rr')),
    ('denoc_contact_demo', ('--ros-args', '-p', 'period:=4.0')),
    ('denoc_demo', ('--robot', 'craig_rr'))], ids=lambda x: x if isinstance(x, str) else '')
@SIGNALS
def test_signals_end_the_executable_quietly(name, args, signals):
    """Two SIGINTs in quick succession (a terminal's and launch's), or a SIGTERM: status 0."""
    status, output = _signalled([str(venv_executable(name)), *args], signals)
    assert status == 0, output
    assert 'Traceback' not in output and 'KeyboardInterrupt' not in output, output


@pytest.mark.slow
@SIGNALS
def test_signals_end_a_tool_quietly(signals, tmp_path):
    """denoc_excitation interrupted mid-design: status 0, one line, no traceback, no file."""
    output = tmp_path / 'traj.yaml'
    status, text = _signalled([str(venv_executable('denoc_excitation')), '--urdf', 'panda',
                               '--duration', '20', '--harmonics', '5', '--max-iterations', '500',
                               '--output', str(output)], signals, settle=0.5)
    assert status == 0, text
    assert 'Traceback' not in text and 'KeyboardInterrupt' not in text, text
    assert 'denoc_excitation: interrupted, no complete result' in text, text
    assert not output.exists()
