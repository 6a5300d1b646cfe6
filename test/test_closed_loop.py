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
Closed loop over real ROS topics with a physics engine that is not ours (MuJoCo, ``sim_arm``).

Every executable runs as its own process, as in a robot's launch file; DDS stays on loopback.
The simulated arm runs in lockstep (it waits for the command each joint state causes), so the
loop behaves like a 1 kHz ros2_control loop whatever this machine's speed; it logs its
trajectory to a file that the test reads afterwards. Each test prints its figures.
"""

import subprocess
import time

from conftest import venv_executable
import denoc_ros as dr
from denoc_ros.resources import bundled_urdf
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROBOT = 'panda'
Q0 = np.array([0.3, -0.5, 0.2, -2.0, 0.1, 1.5, 0.4])   # a pose far from any singularity
T_HOLD = 0.3                                             # trajectory start [s of sim time]


def ros_list(values):
    """Format numbers as a ROS parameter list."""
    return '[' + ','.join(repr(float(v)) for v in values) + ']'


class Processes:
    """Start executables of the package and stop whatever is left at the end."""

    def __init__(self, tmp_path):
        self.tmp_path = tmp_path
        self.procs = []

    def start(self, name, *ros_args):
        """Start executable ``name`` (console script denoc_<name>) with ``--ros-args ...``."""
        log = open(self.tmp_path / f'{name}_{len(self.procs)}.log', 'w')
        proc = subprocess.Popen([str(venv_executable(f'denoc_{name}')), '--ros-args', *ros_args],
                                stdout=log, stderr=subprocess.STDOUT, cwd=self.tmp_path)
        proc.log_path = log.name
        self.procs.append((proc, log))
        return proc

    def output(self, proc):
        """Return what a process printed so far."""
        with open(proc.log_path) as f:
            return f.read()

    def stop(self, proc=None):
        """Terminate ``proc`` (default: every process) if still running."""
        for p, log in self.procs:
            if proc is not None and p is not proc:
                continue
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            log.close()


@pytest.fixture
def processes(tmp_path):
    """Yield a process starter; stop all of them afterwards."""
    p = Processes(tmp_path)
    yield p
    p.stop()


def run_sim(processes, tmp_path, duration, lockstep=True, extra=(), spin=None, timeout=300.0):
    """Run sim_arm from Q0 for ``duration`` s of simulated time; return its log (npz dict)."""
    log_file = tmp_path / 'sim.npz'
    sim = processes.start(
        'sim_arm', '-p', f'urdf_path:={ROBOT}', '-p', f'initial_positions:={ros_list(Q0)}',
        '-p', f'lockstep:={str(lockstep).lower()}', '-p', 'real_time:=false',
        '-p', f'duration:={duration}', '-p', f'log_file:={log_file}',
        '-p', 'wait_for_peers:=30.0' if lockstep else 'wait_for_peers:=0.0', *extra)
    end = time.monotonic() + timeout
    while sim.poll() is None and time.monotonic() < end:
        if spin is not None:
            spin(0.01)
        else:
            time.sleep(0.05)
    assert sim.poll() == 0, f'sim_arm did not finish:\n{processes.output(sim)}'
    data = np.load(log_file)
    return {k: data[k] for k in data.files}


def test_gravity_compensation_holds_the_arm(processes, tmp_path):
    """The dynamics node's effort command holds the arm: drift < 1e-3 rad over 2 s."""
    fallen = run_sim(processes, tmp_path, 2.0, lockstep=False)   # the control: no command
    fall = np.abs(fallen['q'] - Q0).max()
    (tmp_path / 'sim.npz').unlink()
    processes.start('dynamics_node', '-p', f'urdf_path:={ROBOT}',
                    '-r', '/denoc_dynamics/effort_command:=/sim_arm/commands')
    held = run_sim(processes, tmp_path, 2.0)
    drift = np.abs(held['q'] - Q0).max()
    print(f'\ngravity compensation over {held["t"][-1]:.3f} s: max joint drift {drift:.2e} rad '
          f'(without compensation: {fall:.2f} rad)')
    assert held['t'][-1] == pytest.approx(2.0)
    assert len(held['t']) == 2001
    assert drift < 1e-3
    assert fall > 0.1


def reference_trajectory(duration=2.0, dt=0.01):
    """Return (t, q, qd, qdd) of a smooth multi-joint motion starting at rest at Q0."""
    t = np.arange(0.0, duration + 1e-9, dt)[:, None]
    amplitude = np.array([0.25, 0.2, 0.25, 0.2, 0.3, 0.25, 0.3])
    w = 2 * np.pi * np.array([0.5, 0.6, 0.7, 0.5, 0.8, 0.6, 0.9])
    q = Q0 + amplitude * (1 - np.cos(w * t))
    qd = amplitude * w * np.sin(w * t)
    qdd = amplitude * w * w * np.cos(w * t)
    return t[:, 0], q, qd, qdd


def track(processes, tmp_path, rclpy_context, mass_scale):
    """Run the computed-torque loop on the reference; return (rms, max) position error."""
    controller = processes.start('ct_controller', '-p', f'urdf_path:={ROBOT}',
                                 '-p', f'mass_scale:={mass_scale}',
                                 '-r', '/ct_controller/commands:=/sim_arm/commands')
    t, q, qd, qdd = reference_trajectory()
    node = rclpy.create_node('reference_publisher', context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    try:
        pub = node.create_publisher(JointTrajectory, '/ct_controller/reference',
                                    QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))
        end = time.monotonic() + 30
        while pub.get_subscription_count() == 0 and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        assert pub.get_subscription_count() > 0, processes.output(controller)
        msg = JointTrajectory(joint_names=list(dr.load_urdf(bundled_urdf(ROBOT)).joint_names))
        msg.header.stamp.nanosec = int(T_HOLD * 1e9)
        for k in range(len(t)):
            point = JointTrajectoryPoint(positions=q[k].tolist(), velocities=qd[k].tolist(),
                                         accelerations=qdd[k].tolist())
            point.time_from_start.sec = int(t[k])
            point.time_from_start.nanosec = int(round((t[k] - int(t[k])) * 1e9))
            msg.points.append(point)
        pub.publish(msg)
        end = time.monotonic() + 10
        while 'trajectory of' not in processes.output(controller) and time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        assert 'trajectory of' in processes.output(controller), processes.output(controller)
        log = run_sim(processes, tmp_path, T_HOLD + t[-1] + 0.2)
    finally:
        executor.shutdown()
        node.destroy_node()
    on = (log['t'] >= T_HOLD - 1e-9) & (log['t'] <= T_HOLD + t[-1] + 1e-9)
    tau = log['t'][on] - T_HOLD
    w = 2 * np.pi * np.array([0.5, 0.6, 0.7, 0.5, 0.8, 0.6, 0.9])
    amplitude = np.array([0.25, 0.2, 0.25, 0.2, 0.3, 0.25, 0.3])
    q_ref = Q0 + amplitude * (1 - np.cos(w * tau[:, None]))
    error = log['q'][on] - q_ref
    return float(np.sqrt(np.mean(error ** 2))), float(np.abs(error).max()), log


def test_computed_torque_tracking(processes, tmp_path, rclpy_context):
    """Computed torque tracks a smooth 7-joint trajectory: RMS < 1e-3 rad, max < 5e-3 rad."""
    rms, worst, log = track(processes, tmp_path, rclpy_context, 1.0)
    print(f'\ncomputed-torque tracking on MuJoCo, exact model: RMS {rms:.2e} rad, '
          f'max {worst:.2e} rad, peak effort {np.abs(log["effort"]).max():.1f} N m')
    assert rms < 1e-3
    assert worst < 5e-3


def test_computed_torque_with_wrong_masses_stays_stable(processes, tmp_path, rclpy_context):
    """With every mass and inertia 10 % too large the tracking degrades but stays bounded."""
    rms, worst, log = track(processes, tmp_path, rclpy_context, 1.1)
    print(f'\ncomputed-torque tracking, controller masses +10 %: RMS {rms:.2e} rad, '
          f'max {worst:.2e} rad')
    assert np.all(np.isfinite(log['q']))
    assert worst < 0.05          # stable: bounded by a few PD steady-state errors
    assert rms > 1e-5            # and visibly worse than an exact model would be


def test_prediction_matches_the_simulated_motion(processes, tmp_path, rclpy_context):
    """~/prediction vs MuJoCo's actual state at stamp + horizon, the arm swinging freely."""
    horizon = 0.02
    node = rclpy.create_node('prediction_listener', context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    predictions = []
    node.create_subscription(JointTrajectory, '/denoc_dynamics/prediction', predictions.append,
                             QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE))
    try:
        processes.start('dynamics_node', '-p', f'urdf_path:={ROBOT}',
                        '-p', f'prediction_horizon:={horizon}', '-p', 'prediction_substeps:=4')
        end = time.monotonic() + 30
        while node.count_publishers('/denoc_dynamics/prediction') == 0 and \
                time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
        log = run_sim(processes, tmp_path, 1.0, lockstep=False,
                      extra=('-p', 'publish_rate:=50.0', '-p', 'real_time:=true',
                             '-p', 'wait_for_peers:=30.0'),
                      spin=lambda s: executor.spin_once(timeout_sec=s))
        end = time.monotonic() + 2
        while time.monotonic() < end:
            executor.spin_once(timeout_sec=0.05)
    finally:
        executor.shutdown()
        node.destroy_node()
    errors = []
    for msg in predictions:
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        k = np.flatnonzero(np.abs(log['t'] - (stamp + horizon)) < 1e-6)
        if k.size:
            errors.append(np.abs(np.asarray(msg.points[0].positions) - log['q'][k[0]]).max())
    motion = np.abs(log['q'] - Q0).max()
    print(f'\nprediction over {horizon} s: {len(errors)} compared, max error '
          f'{max(errors):.2e} rad while the arm moved {motion:.2f} rad')
    assert len(errors) >= 10
    assert motion > 0.1
    assert max(errors) < 1e-4
