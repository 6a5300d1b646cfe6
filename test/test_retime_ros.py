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
A retimed trajectory played over ROS on a simulated arm carrying a payload (issue 23, item 4).

Every executable runs as its own process: ``sim_arm`` (MuJoCo, not our dynamics) steps the
Panda with a payload welded to ``panda_link8`` (the URDF with the payload as a fixed child link,
:func:`~denoc_ros.identification.urdf_output.payload_urdf`); ``ct_controller`` has the same URDF;
the dynamics node has the bare Panda and learns the payload through ``~/set_payload``, then
retimes a path with ``~/retime_trajectory`` (effort limits times ``EFFORT_SCALING``, leaving
the rest of the limit to the controller's feedback). The path's "planned" timing (what a
planner that knows only velocity and acceleration limits gives: the same service without
effort limits, with MoveIt's Panda acceleration limits) is scaled in time by one constant factor
to the retimed duration. Both are played by ``ct_controller`` on ``sim_arm`` in lockstep (a 1 kHz
loop over topics, as fast as the machine allows); the efforts ``sim_arm`` applied, i.e. the
controller's commands, stay within the URDF's effort limits for the retimed trajectory and
exceed them for the scaled plan. The test prints the worst ratios.
"""

import time

import denoc_ros as dr
from denoc_ros.identification.urdf_output import payload_urdf
from denoc_ros.resources import bundled_urdf
from denoc_ros_interfaces.srv import RetimeTrajectory, SetPayload
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.qos import QoSProfile, ReliabilityPolicy
from test_closed_loop import Processes, ros_list
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = [pytest.mark.ros, pytest.mark.slow]

LINK = 'panda_link8'
MASS = 3.0                                   # [kg], the Panda's rated payload
COM = np.array([0.0, 0.03, 0.12])            # [m] in panda_link8's frame
INERTIA = np.diag([0.012, 0.012, 0.006])     # [kg m^2] about the centre of mass
EFFORT_SCALING = 0.9                         # of the URDF limits, for the retime
# MoveIt's Panda acceleration limits (panda_moveit_config joint_limits.yaml) [rad/s^2]
PLANNER_ACCELERATION = [15.0, 7.5, 10.0, 12.5, 15.0, 20.0, 20.0]
WAYPOINTS = np.array([
    [0.16, 0.33, -0.15, -1.27, 0.28, 1.75, 0.53],
    [-0.41, 0.52, 0.2, -0.53, 0.11, 2.57, 0.34],
    [-0.52, 0.2, 0.52, -0.37, 0.11, 2.3, -0.54],
    [-0.42, 0.02, 0.42, -0.37, -0.38, 2.06, -0.26],
])
T_HOLD = 0.3                                 # [s of sim time] before the trajectory starts
TIMEOUT = 120.0                              # [s] longest wait for any one step


class Client:
    """An rclpy node in the test's context: service calls and a trajectory publisher."""

    def __init__(self, context):
        self.node = rclpy.create_node('retime_over_ros_test', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.reference = self.node.create_publisher(
            JointTrajectory, '/ct_controller/reference',
            QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE))

    def until(self, predicate, timeout=TIMEOUT):
        """Spin until ``predicate()`` holds or ``timeout`` s pass; return whether it holds."""
        end = time.monotonic() + timeout
        while not predicate() and time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.02)
        return bool(predicate())

    def call(self, srv_type, name, request):
        """Call service ``name`` of the dynamics node and return the response."""
        client = self.node.create_client(srv_type, f'/denoc_dynamics/{name}')
        assert client.wait_for_service(timeout_sec=TIMEOUT), f'no service {name}'
        future = client.call_async(request)
        assert self.until(future.done), f'{name} did not answer'
        self.node.destroy_client(client)
        return future.result()

    def close(self):
        """Stop spinning and destroy the node."""
        self.executor.shutdown()
        self.node.destroy_node()


def path_message(names, q):
    """Return a JointTrajectory holding only positions (a path; times ignored by the retime)."""
    msg = JointTrajectory(joint_names=list(names))
    for k, row in enumerate(q):
        point = JointTrajectoryPoint(positions=[float(v) for v in row])
        point.time_from_start.sec = k
        msg.points.append(point)
    return msg


def time_scaled(msg, factor, stamp):
    """Return ``msg`` with its times multiplied by ``factor`` (velocities, accelerations too)."""
    out = JointTrajectory(joint_names=list(msg.joint_names))
    out.header.stamp.nanosec = int(round(stamp * 1e9))
    for p in msg.points:
        t = (p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec) * factor
        sec, nanosec = divmod(int(round(t * 1e9)), 1_000_000_000)
        point = JointTrajectoryPoint(
            positions=list(p.positions), velocities=[v / factor for v in p.velocities],
            accelerations=[a / factor ** 2 for a in p.accelerations])
        point.time_from_start.sec, point.time_from_start.nanosec = sec, nanosec
        out.points.append(point)
    return out


def play(processes, client, controller, urdf, msg, duration, played, tmp_path):
    """Send ``msg`` to ct_controller, run sim_arm in lockstep; return its log (npz dict)."""
    client.reference.publish(msg)
    assert client.until(
        lambda: processes.output(controller).count('trajectory of') > played), \
        processes.output(controller)
    log_file = tmp_path / f'sim_{played}.npz'
    sim = processes.start(
        'sim_arm', '-p', f'urdf_path:={urdf}',
        '-p', f'initial_positions:={ros_list(WAYPOINTS[0])}', '-p', 'lockstep:=true',
        '-p', 'lockstep_timeout:=10.0', '-p', 'real_time:=false',
        '-p', f'duration:={T_HOLD + duration + 0.1}',
        '-p', f'log_file:={log_file}', '-p', f'wait_for_peers:={TIMEOUT}')
    assert client.until(lambda: sim.poll() is not None, 2 * TIMEOUT), \
        f'sim_arm did not finish:\n{processes.output(sim)}'
    assert sim.poll() == 0, processes.output(sim)
    data = np.load(log_file)
    return {k: data[k] for k in data.files}


def test_retimed_trajectory_stays_within_the_effort_limits_on_mujoco(tmp_path, rclpy_context):
    """Played by ct_controller on sim_arm with 3 kg: retimed within limits, scaled plan not."""
    text = bundled_urdf('panda').read_text()
    urdf = tmp_path / 'panda_payload.urdf'
    urdf.write_text(payload_urdf(text, LINK, MASS, COM, INERTIA))
    model = dr.load_urdf(str(urdf))
    names, limits = model.joint_names, model.effort_limit
    processes = Processes(tmp_path)
    client = Client(rclpy_context)
    try:
        processes.start('dynamics_node', '-p', 'urdf_path:=panda')
        controller = processes.start('ct_controller', '-p', f'urdf_path:={urdf}',
                                     '-r', '/ct_controller/commands:=/sim_arm/commands')
        request = SetPayload.Request(link=LINK)
        request.payload.m = MASS
        request.payload.com.x, request.payload.com.y, request.payload.com.z = COM.tolist()
        (request.payload.ixx, request.payload.ixy, request.payload.ixz, request.payload.iyy,
         request.payload.iyz, request.payload.izz) = INERTIA[np.triu_indices(3)].tolist()
        response = client.call(SetPayload, 'set_payload', request)
        assert response.success, response.message

        path = path_message(names, WAYPOINTS)
        retimed = client.call(RetimeTrajectory, 'retime_trajectory', RetimeTrajectory.Request(
            trajectory=path, effort_scaling=EFFORT_SCALING))
        assert retimed.success, retimed.message
        plan = client.call(RetimeTrajectory, 'retime_trajectory', RetimeTrajectory.Request(
            trajectory=path, effort_scaling=1e6, acceleration_limits=PLANNER_ACCELERATION))
        assert plan.success, plan.message
        processes.stop(processes.procs[0][0])  # the dynamics node: not needed any more
        T = retimed.duration

        assert client.until(lambda: client.reference.get_subscription_count() > 0), \
            processes.output(controller)
        logs = [play(processes, client, controller, urdf, time_scaled(m.trajectory, f, T_HOLD),
                     T, k, tmp_path)
                for k, (m, f) in enumerate(((retimed, 1.0), (plan, T / plan.duration)))]
    finally:
        client.close()
        processes.stop()
    # The node retimed with the payload it was given (the library on the payload URDF agrees).
    local = dr.retime(model, WAYPOINTS, effort_limits=EFFORT_SCALING * limits)
    assert T == pytest.approx(local.duration, rel=1e-3)
    ratios = []
    for log in logs:
        on = log['t'] >= T_HOLD - 1e-9
        assert log['t'][-1] >= T_HOLD + T
        ratios.append(np.abs(log['effort'][on]) / limits)
    ours, theirs = (r.max(axis=0) for r in ratios)
    print(f'\nPanda + {MASS} kg on MuJoCo, {T:.3f} s: commanded effort / limit, retimed '
          f'(at {EFFORT_SCALING} of the limits) {np.round(ours, 3).tolist()}, worst '
          f'{ours.max():.4f}; the plan ({plan.duration:.3f} s) scaled in time by '
          f'{T / plan.duration:.3f}: {np.round(theirs, 3).tolist()}, worst {theirs.max():.4f}')
    assert ours.max() <= 1.0
    assert theirs.max() > 1.05
