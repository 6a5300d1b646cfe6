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
Identification end to end over ROS: excite, record a bag, identify, track better.

The "true" arm is MuJoCo (``sim_arm``) compiling a Panda whose masses, centres of mass and
inertias differ substantially from the bundled description; ``ct_controller`` knows only the
bundled (nominal) one and plays a designed excitation trajectory (``trajectory_file``,
``loop``). The test process records ``/joint_states`` over DDS, the raw CDR messages as they
arrive, into a rosbag2 (what ``ros2 bag record --use-sim-time`` would write), and runs
``denoc_identify`` on it. The identified URDF then replaces the nominal one in the controller:
on the same trajectory the computed-torque tracking error must shrink to well under half.
Every executable runs as its own process, sim_arm in lockstep (a deterministic 1 kHz
read-update-write loop whatever this machine's speed). The test prints its figures.
"""

import json
import math
import time

import denoc_ros as dr
from denoc_ros.description import read_description
from denoc_ros.identification.excitation import design_excitation, write_trajectory_yaml
from denoc_ros.identification.parameters import body_inertials, parameters_of
from denoc_ros.identification.urdf_output import identified_urdf
from denoc_ros.tools import identify
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from test_closed_loop import processes, ros_list  # noqa: F401 - the fixture

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ROBOT = 'panda'
START = np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8])  # q(0) of the excitation, at rest
PERIOD = 8.0           # excitation period [s]
HARMONICS = 4
SAFETY = 0.6           # fraction of the URDF's position, velocity and effort limits used
# Of the perturbation and of the design's random start. Seed 7 made the earlier
# Levenberg-Marquardt fit in log-Cholesky coordinates stop far from the optimum; the
# interior-point fit that replaced it reaches the optimum for every seed tried (0-11 offline).
SEED = 7


def true_panda(text, rng):
    """
    Return the URDF of a Panda whose every body differs from ``text``'s.

    Masses times U(0.7, 1.4), centres of mass moved by about 2.5 cm, and the principal second
    moments of the mass distribution times U(0.6, 1.6) in rotated axes: the inertia stays
    physical (positive, triangle inequality) by construction.
    """
    model = dr.load_urdf(text)
    mass, com, inertia = body_inertials(model, dr.inertial_parameters(model))
    pi = []
    for m, c, I_c in zip(mass, com, inertia):
        second = 0.5 * np.trace(I_c) * np.eye(3) - I_c          # int r r^T dm about the COM
        rotation, _ = np.linalg.qr(rng.normal(size=(3, 3)))
        second = rotation @ second @ rotation.T
        lam, vec = np.linalg.eigh(second)
        second = vec @ np.diag(np.maximum(lam, 1e-6) * rng.uniform(0.6, 1.6, 3)) @ vec.T
        second = rotation.T @ second @ rotation
        I_true = np.trace(second) * np.eye(3) - second
        pi.append(parameters_of(m * rng.uniform(0.7, 1.4), c + rng.normal(0.0, 0.015, 3),
                                I_true))
    return identified_urdf(text, model, np.concatenate(pi))


class Recorder:
    """Record ``/joint_states`` as raw CDR messages, as ``ros2 bag record`` does."""

    def __init__(self, context):
        self.node = rclpy.create_node('joint_state_recorder', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.messages = []
        qos = QoSProfile(history=HistoryPolicy.KEEP_ALL, reliability=ReliabilityPolicy.RELIABLE)
        self.subscription = self.node.create_subscription(
            JointState, '/joint_states', self.messages.append, qos, raw=True)

    def spin(self, seconds):
        """Take the messages that arrive within ``seconds``."""
        end = time.monotonic() + seconds
        while True:
            self.executor.spin_once(timeout_sec=max(0.0, end - time.monotonic()))
            if time.monotonic() >= end:
                return

    def write(self, path):
        """Write the messages to a rosbag2 (mcap) stamped with their header (sim) time."""
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import get_typestore, Stores

        typestore = get_typestore(Stores.ROS2_HUMBLE)
        with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
            conn = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                         typestore=typestore)
            for raw in self.messages:
                assert raw[:2] == b'\x00\x01'                   # CDR, little endian
                sec, nanosec = np.frombuffer(raw, '<i4', 1, 4)[0], np.frombuffer(
                    raw, '<u4', 1, 8)[0]
                writer.write(conn, int(sec) * 1_000_000_000 + int(nanosec), raw)

    def close(self):
        """Destroy the node."""
        self.executor.shutdown()
        self.node.destroy_node()


def run_loop(procs, tmp_path, name, sim_urdf, controller_urdf, trajectory, duration,
             recorder=None, timeout=240.0):
    """
    Run sim_arm (``sim_urdf``) under ct_controller (``controller_urdf``) playing ``trajectory``.

    Lockstep, ``duration`` s of simulated time from the trajectory's start at rest. Returns
    sim_arm's log (npz dict); ``recorder``, if given, is spun meanwhile.
    """
    log_file = tmp_path / f'{name}.npz'

    def wait(seconds):
        if recorder is not None:
            recorder.spin(seconds)
        else:
            time.sleep(seconds)

    sim = procs.start(
        'sim_arm', '-p', f'urdf_path:={sim_urdf}', '-p', f'initial_positions:={ros_list(START)}',
        '-p', 'lockstep:=true', '-p', 'real_time:=false', '-p', f'duration:={duration}',
        '-p', f'log_file:={log_file}', '-p', 'wait_for_peers:=60.0',
        # the controller's joint-state subscription, and the recorder's if there is one
        '-p', f'wait_for_subscribers:={1 if recorder is None else 2}')
    if recorder is not None:
        # sim_arm waits for a command publisher too: the recorder is matched before it starts.
        end = time.monotonic() + 60
        while recorder.subscription.get_publisher_count() == 0 and time.monotonic() < end:
            assert sim.poll() is None, procs.output(sim)
            wait(0.05)
        wait(0.5)
    controller = procs.start(
        'ct_controller', '-p', f'urdf_path:={controller_urdf}',
        '-p', f'trajectory_file:={trajectory}', '-p', 'loop:=true',
        '-r', '/ct_controller/commands:=/sim_arm/commands')
    end = time.monotonic() + timeout
    while sim.poll() is None and time.monotonic() < end:
        assert controller.poll() is None, procs.output(controller)
        wait(0.05)
    assert sim.poll() == 0, f'sim_arm did not finish:\n{procs.output(sim)}'
    if recorder is not None:
        wait(0.5)   # the last messages in flight
    procs.stop(controller)
    data = np.load(log_file)
    return {k: data[k] for k in data.files}


def trajectory_start(log):
    """
    Return when ct_controller started the trajectory: at the first joint state it received.

    sim_arm's logged effort at a state is the command the previous state caused. sim_arm starts
    once it sees the controller's command publisher; when the controller's joint_states
    subscription is matched a moment later, the first state does not reach it (sim_arm then
    waits ``lockstep_timeout`` for a command and steps once with zero effort).
    """
    commanded = np.flatnonzero(np.abs(log['effort']).sum(axis=1) > 0.0)
    assert commanded.size, 'no command reached sim_arm'
    return float(log['t'][commanded[0] - 1])


def tracking_error(log, excitation, duration=math.inf):
    """Return (rms, max) over all joints of q_d - q on sim_arm's log (its first ``duration`` s)."""
    start = trajectory_start(log)
    assert start < 0.0105, f'the trajectory started at {start} s'
    on = (log['t'] >= start) & (log['t'] <= start + duration)
    q_d, _, _ = excitation.trajectory(log['t'][on] - start)
    error = q_d - log['q'][on]
    return float(np.sqrt(np.mean(error ** 2))), float(np.abs(error).max())


def test_identified_model_tracks_better(processes, tmp_path, rclpy_context):  # noqa: F811
    """Excite the true arm with the nominal controller, identify from the bag, track again."""
    nominal_text = read_description(ROBOT)
    nominal = dr.load_urdf(nominal_text)
    true_urdf = tmp_path / 'true_panda.urdf'
    true_urdf.write_text(true_panda(nominal_text, np.random.default_rng(SEED)))
    true = dr.load_urdf(str(true_urdf))
    assert np.abs(true.mass / nominal.mass - 1.0).max() > 0.2

    t0 = time.perf_counter()
    excitation = design_excitation(nominal, duration=PERIOD, harmonics=HARMONICS, joint_terms=(),
                                   max_iterations=20, safety=SAFETY, start=START, seed=SEED)
    design_time = time.perf_counter() - t0
    np.testing.assert_allclose(excitation.start, START, atol=1e-9)
    t, q, qd, qdd = excitation.sampled(rate=100.0)
    trajectory = tmp_path / 'excitation.yaml'
    write_trajectory_yaml(trajectory, nominal.joint_names, t, q, qd, qdd)

    # Excite: two periods and a bit, recorded over DDS.
    t0 = time.perf_counter()
    recorder = Recorder(rclpy_context)
    try:
        excited = run_loop(processes, tmp_path, 'excitation', true_urdf, ROBOT, trajectory,
                           2 * PERIOD + 0.5, recorder=recorder)
        bag = tmp_path / 'excitation_bag'
        recorder.write(bag)
        recorded = len(recorder.messages)
    finally:
        recorder.close()
    excite_time = time.perf_counter() - t0
    assert recorded == len(excited['t']), \
        f'{recorded} joint states recorded, sim_arm published {len(excited["t"])}'

    t0 = time.perf_counter()
    out_urdf = tmp_path / 'identified_panda.urdf'
    report_dir = tmp_path / 'report'
    status = identify.main(['--urdf', ROBOT, '--data', str(bag), '--friction', 'none',
                            '--output-urdf', str(out_urdf), '--report', str(report_dir),
                            '--no-plots'])
    identify_time = time.perf_counter() - t0
    assert status == 0
    validation = json.loads((report_dir / 'report.json').read_text())['validation']

    # Track the same trajectory, one period, with each model. The nominal model's run is the
    # excitation's first period: the same lockstep loop from the same start, so not run twice.
    t0 = time.perf_counter()
    with_nominal = tracking_error(excited, excitation, PERIOD)
    with_identified = tracking_error(
        run_loop(processes, tmp_path, 'identified', true_urdf, out_urdf, trajectory,
                 PERIOD + 0.01),
        excitation, PERIOD)
    track_time = time.perf_counter() - t0
    excitation_error = tracking_error(excited, excitation)

    print(f'\nexcitation: period {PERIOD:g} s, {HARMONICS} harmonics, condition number '
          f'{excitation.condition:.3g} (designed in {design_time:.1f} s); '
          f'{recorded} joint states recorded over {excited["t"][-1]:.1f} s of sim time in '
          f'{excite_time:.1f} s (tracking RMS {excitation_error[0]:.2e} rad)')
    print(f'identification ({identify_time:.1f} s): validation torque NRMSE nominal '
          f'{100 * validation["nrmse_nominal"]:.2f} %, identified '
          f'{100 * validation["nrmse_identified"]:.2f} %')
    print(f'computed-torque tracking over one period (identified model: {track_time:.1f} s): '
          f'nominal model RMS {with_nominal[0]:.2e} rad, max {with_nominal[1]:.2e} rad; '
          f'identified model RMS {with_identified[0]:.2e} rad, max {with_identified[1]:.2e} rad')
    assert all(math.isfinite(v) for v in with_nominal + with_identified)
    assert validation['nrmse_identified'] < 0.5 * validation['nrmse_nominal']
    assert with_nominal[0] > 1e-3               # the model error shows in the tracking
    assert with_identified[0] < 0.5 * with_nominal[0]
    assert with_identified[1] < 0.5 * with_nominal[1]
