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
``sim_arm``: a simulated arm behind a ros2_control-style effort interface, stepped by MuJoCo.

Publishes ``joint_states`` (positions, velocities and efforts) stamped with the simulated
time, and ``/clock`` (rosgraph_msgs/Clock) so that other nodes can run on simulated time.
Applies the efforts of the latest std_msgs/Float64MultiArray received on ``~/commands`` (in
``joints`` order), held until the next one, exactly as an
``effort_controllers/JointGroupEffortController`` would; a command of the wrong length or with
NaN/inf is ignored with a warning.

The effort of a joint state is reported the way a driver reports it: the motor effort applied
over the step (``publish_rate``'s period) that the state's stamp closes, held constant over it,
so it is also that step's mean (in lockstep it is the command the previous state caused; the
first state, before any step, reports zero). It is the motor's effort: the friction the motor
works against is in it, an external wrench is not. ``effort_noise`` (N m or N per joint, in
joint_states order; one value for all; 0: none) adds white Gaussian noise of that standard
deviation to the reported efforts only (the arm is driven by the commands as they came),
reproducibly from ``noise_seed``.

Joint friction: by default none. ``friction:=true`` applies the URDF's ``<dynamics damping
friction>`` of each joint with the library's law, ``v qd + c tanh(qd / v_s)`` at the default
``v_s`` (:mod:`denoc_ros.friction`), the law the dynamics node and the identification assume,
linearly implicit in the velocity so that the steep tanh stays stable (see
:class:`denoc_ros.mujoco_arm.MujocoArm`); ``keep_joint_dynamics:=true`` instead keeps MuJoCo's
own damping and soft ``frictionloss``, which acts as a damper at low speed. Not both.

A payload the robot description does not hold: ``payload_link`` (empty: none) carries a rigid
body of ``payload_mass`` [kg], centre of mass ``payload_com`` in the link frame [m] and inertia
``payload_inertia`` about it in the link's axes (ixx, ixy, ixz, iyy, iyz, izz) [kg m^2], welded
as a fixed child link (a robot description that already has the payload as a link is the same).

``~/external_wrench`` (geometry_msgs/WrenchStamped) pushes on the arm: the wrench acts on the
URDF link named by ``header.frame_id`` (links welded by fixed joints included), force and torque
in that link's axes, the force at the link frame's origin and the torque about that origin (the
convention of the dynamics node's ``~/external_wrench`` estimate). It replaces any wrench before
it and is held, following the link as it moves, until the next one; a zero wrench removes it.
An unknown link or a non-finite value is refused with an error.

``wait_for_peers`` (s, 0 = no wait) holds the start until joint_states has
``wait_for_subscribers`` subscribers (default 1) and, in lockstep, ``~/commands`` a publisher:
no state is published and no step taken before every expected party is connected. Stepping: in
real time by default; with ``lockstep:=true`` the simulation waits after each published joint
state for the command it causes (up to ``lockstep_timeout`` s, then it goes on with the held
effort), which makes a closed loop over ROS topics deterministic whatever the speed of the
controller: read, update, write, as ros2_control's loop does.

With ``log_file`` set, the simulated trajectory (t, q, qd, effort at every published state) is
saved as a NumPy ``.npz`` file when the node stops (``duration`` s of simulated time, or Ctrl-C),
with the external wrench (``external_wrench``: force, torque in link axes; ``external_link``:
its link, '' when none) and the joint torques it exerts (``external_torques``, J^T F, the tau_ext
of M qdd + C qd + g = tau + tau_ext). ``effort`` is the applied motor effort without noise,
``reported_effort`` the published one (with the noise), ``friction`` the mean friction torque
over the step the state closes (zero without ``friction``).
"""

import sys
import time

from geometry_msgs.msg import WrenchStamped
import numpy as np
import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from . import settings as parameters
from ._main import init_ros, startup_failed
from .conversions import command_order
from .settings import PER_JOINT, Spec
from ..description import read_description
from ..errors import DenocError, InputError
from ..mujoco_arm import MujocoArm
from ..signals import handle_interrupts, ignore_further_interrupts
from ..urdf import load_urdf


# all read at start-up
PARAMETERS = parameters.table(*parameters.read_only(
    *parameters.model_specs(urdf_path='panda'),
    parameters.gravity_spec(),
    Spec('timestep', 'double', 0.001, 'MuJoCo time step [s]', 0.0, 1.0, open_low=True),
    Spec('publish_rate', 'double', 1000.0, 'joint states per simulated second [Hz]', 0.0, 1e6,
         open_low=True),
    Spec('initial_positions', 'doubles', [], 'initial joint positions; unset: zeros',
         length=PER_JOINT, example=[0.0, -0.5]),
    Spec('joints', 'strings', [], 'joint order of ~/commands; unset: model order',
         example=['panda_joint1', 'panda_joint2']),
    Spec('lockstep', 'bool', False, 'wait for the command each joint state causes'),
    Spec('lockstep_timeout', 'double', 1.0, 'longest wait for a command in lockstep [s]', 0.0,
         3600.0),
    Spec('real_time', 'bool', True, 'step in real time (false: as fast as possible)'),
    Spec('publish_clock', 'bool', True, 'publish /clock'),
    Spec('duration', 'double', 0.0, 'simulated seconds to run; 0: until stopped', 0.0, 1e9),
    Spec('log_file', 'string', '', '.npz file the trajectory is saved to; empty: none',
         example='run.npz'),
    Spec('keep_joint_dynamics', 'bool', False,
         "keep the URDF's joint damping and friction as MuJoCo's (soft) damping and frictionloss"),
    Spec('friction', 'bool', False,
         "apply the URDF's joint damping and friction with the library's law (viscous + tanh "
         'Coulomb)'),
    Spec('effort_noise', 'doubles', [0.0],
         'standard deviation of the noise on the reported efforts [N m or N]', 0.0,
         length=PER_JOINT, example=[0.3, 0.05]),
    Spec('noise_seed', 'integer', 0, 'seed of the effort noise', 0, 2 ** 31 - 1),
    Spec('payload_link', 'string', '', 'link carrying a payload the description lacks; '
         'empty: none', example='tool0'),
    Spec('payload_mass', 'double', 0.0, 'payload mass [kg]', 0.0, 1e6, example=1.5),
    Spec('payload_com', 'doubles', [0.0, 0.0, 0.0],
         'payload centre of mass in the link frame [m]', length=3),
    Spec('payload_inertia', 'doubles', [0.0] * 6,
         'payload inertia about its centre of mass, link axes: ixx ixy ixz iyy iyz izz [kg m^2]',
         length=6, example=[0.002, 0.0, 0.0, 0.002, 0.0, 0.001]),
    Spec('wait_for_peers', 'double', 0.0, 'longest wait for the peers at start [s]; 0: none',
         0.0, 3600.0),
    Spec('wait_for_subscribers', 'integer', 1,
         'joint_states subscribers to wait for before the first step', 1, 1000)))


class SimArm(Node):
    """MuJoCo arm with a joint_states publisher and an effort command subscriber."""

    def __init__(self, **kwargs):
        super().__init__('sim_arm', **kwargs)
        get = parameters.declare(self, PARAMETERS).get

        xml = get('robot_description') or read_description(get('urdf_path'))
        if get('friction') and get('keep_joint_dynamics'):
            raise InputError('parameters friction and keep_joint_dynamics: set one of them, not '
                             "both (the library's friction law, or MuJoCo's own)")
        friction = self._friction(get, xml)
        if friction is not None and not any(
                v for coefficients in friction for v in coefficients.values()):
            self.get_logger().warning('friction is on, but the URDF gives no joint <dynamics '
                                      'damping friction>: it adds nothing')
        self.arm = MujocoArm(xml, gravity=get('gravity'), timestep=get('timestep'),
                             keep_joint_dynamics=get('keep_joint_dynamics'),
                             payload=self._payload(get), friction=friction)
        names = self.arm.joint_names
        self._command_index = command_order(names, get('joints'))
        q0 = get('initial_positions')
        if len(q0) not in (0, 1, self.arm.dof):
            raise InputError(f'parameter initial_positions: has {len(q0)} values; give none, 1 '
                             f'or {self.arm.dof} (one per joint)')
        self.arm.set_state(np.zeros(self.arm.dof) + (q0 or 0.0))
        noise = get('effort_noise')
        if len(noise) not in (1, self.arm.dof):
            raise InputError(f'parameter effort_noise: has {len(noise)} values; give 1 or '
                             f'{self.arm.dof} (one per joint)')
        self.effort_noise = np.zeros(self.arm.dof) + noise
        self._rng = np.random.default_rng(get('noise_seed'))
        rate = get('publish_rate')
        self.steps_per_state = max(1, int(round(1.0 / (rate * get('timestep')))))
        self.lockstep = bool(get('lockstep'))
        self.lockstep_timeout = float(get('lockstep_timeout'))
        self.real_time = bool(get('real_time'))
        self.duration = float(get('duration'))
        self.log_file = get('log_file')
        self.wait_for_peers = float(get('wait_for_peers'))
        self.wait_for_subscribers = int(get('wait_for_subscribers'))
        self.commands_received = 0
        self.log = {'t': [], 'q': [], 'qd': [], 'effort': [], 'reported_effort': [],
                    'friction': [], 'external_wrench': [], 'external_link': [],
                    'external_torques': []}

        self._state_pub = self.create_publisher(JointState, 'joint_states', 100)
        self._clock_pub = (self.create_publisher(Clock, '/clock', 10)
                           if get('publish_clock') else None)
        self._command_sub = self.create_subscription(Float64MultiArray, '~/commands',
                                                     self.command_callback, 100)
        self._wrench_error = None   # (text, time) of the last refused wrench's error
        self._wrench_sub = self.create_subscription(WrenchStamped, '~/external_wrench',
                                                    self.wrench_callback, 10)
        self.get_logger().info(
            f'MuJoCo arm {", ".join(names)}; {rate:g} Hz joint states, timestep '
            f'{self.arm.model.opt.timestep:g} s' + (', lockstep' if self.lockstep else '')
            + (", the library's friction law" if get('friction') else '')
            + (f', payload {get("payload_mass"):g} kg on {get("payload_link")}'
               if get('payload_link') else '')
            + (', effort noise' if self.effort_noise.any() else ''))

    @staticmethod
    def _payload(get):
        """Return MujocoArm's ``payload`` from the payload_* parameters (None: no payload)."""
        link = get('payload_link')
        if not link:
            return None
        if not get('payload_mass') > 0.0:
            raise InputError(f'parameter payload_mass: a payload on {link!r} needs a positive '
                             f'mass, got {get("payload_mass")!r}')
        ixx, ixy, ixz, iyy, iyz, izz = get('payload_inertia')
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        return link, get('payload_mass'), np.array(get('payload_com')), inertia

    @staticmethod
    def _friction(get, xml):
        """Return MujocoArm's ``friction`` (the URDF's coefficients by joint name), or None."""
        if not get('friction'):
            return None
        model = load_urdf(xml)
        return (dict(zip(model.joint_names, model.damping)),
                dict(zip(model.joint_names, model.friction)))

    def command_callback(self, msg):
        """Hold a new effort command (in ``joints`` order) until the next one."""
        effort = np.asarray(msg.data, dtype=float)
        if effort.shape != (self.arm.dof,) or not np.all(np.isfinite(effort)):
            self.get_logger().warning(
                f'command ignored: {len(msg.data)} values (expected {self.arm.dof}, finite)',
                throttle_duration_sec=2.0)
            return
        applied = np.empty(self.arm.dof)
        applied[self._command_index] = effort
        self.arm.set_effort(applied)
        self.commands_received += 1

    def wrench_callback(self, msg):
        """Apply (or, when zero, remove) an external wrench on the link ``header.frame_id``."""
        link = msg.header.frame_id
        f, t = msg.wrench.force, msg.wrench.torque
        force, torque = (f.x, f.y, f.z), (t.x, t.y, t.z)
        if not any(force + torque):  # a zero wrench removes the push, whatever the link
            if self.arm.external_wrench is not None:
                self.get_logger().info('external wrench removed')
            self.arm.clear_external_wrench()
            return
        try:
            self.arm.set_external_wrench(link, force, torque)
        except InputError as err:  # an unknown link, a non-finite value
            # Each different error at once, a repeated one at most every 2 s.
            text, now = f'external wrench ignored: {err}', time.monotonic()
            if self._wrench_error is None or self._wrench_error[0] != text \
                    or now - self._wrench_error[1] >= 2.0:
                self._wrench_error = (text, now)
                self.get_logger().error(text)
            return
        self.get_logger().info(
            f'external wrench on {link}: force {np.round(force, 6).tolist()} N, torque '
            f'{np.round(torque, 6).tolist()} N m (link axes, at its origin)',
            throttle_duration_sec=1.0)

    def publish_state(self):
        """Publish /clock and joint_states at the current simulated time; log the state."""
        q, qd = self.arm.state()
        effort = self.arm.applied_effort  # held over the step this stamp closes (docstring)
        reported = effort
        if self.effort_noise.any():
            reported = effort + self.effort_noise * self._rng.standard_normal(self.arm.dof)
        stamp = rclpy.time.Time(nanoseconds=int(round(self.arm.time * 1e9))).to_msg()
        if self._clock_pub is not None:
            self._clock_pub.publish(Clock(clock=stamp))
        msg = JointState(name=list(self.arm.joint_names), position=q.tolist(),
                         velocity=qd.tolist(), effort=reported.tolist())
        msg.header.stamp = stamp
        self._state_pub.publish(msg)
        if self.log_file:
            wrench = self.arm.external_wrench
            link, pushed = ('', np.zeros(6)) if wrench is None else (
                wrench[0], np.concatenate(wrench[1:]))
            for key, value in (('t', self.arm.time), ('q', q), ('qd', qd), ('effort', effort),
                               ('reported_effort', reported),
                               ('friction', self.arm.applied_friction),
                               ('external_wrench', pushed), ('external_link', link),
                               ('external_torques', self.arm.external_joint_forces())):
                self.log[key].append(value)

    def save_log(self):
        """Write the logged trajectory to ``log_file`` (if set)."""
        if self.log_file:
            np.savez(self.log_file, joint_names=np.array(self.arm.joint_names),
                     **{k: np.array(v) for k, v in self.log.items()})

    def wait_for_connections(self, executor):
        """Wait up to ``wait_for_peers`` s for the peers, so no state is lost to discovery."""
        deadline = time.monotonic() + self.wait_for_peers
        while time.monotonic() < deadline and rclpy.ok(context=self.context):
            if self._state_pub.get_subscription_count() >= self.wait_for_subscribers and (
                    not self.lockstep or self._command_sub.get_publisher_count() > 0):
                return
            executor.spin_once(timeout_sec=0.01)
        self.get_logger().warning(
            f'peers missing after {self.wait_for_peers:g} s '
            f'({self._state_pub.get_subscription_count()} of {self.wait_for_subscribers} '
            f'joint_states subscribers); starting anyway')

    def run(self, executor):
        """Step, publish and (in lockstep) wait for commands until the duration or shutdown."""
        if self.wait_for_peers > 0:
            self.wait_for_connections(executor)
        wall0, sim0 = time.monotonic(), self.arm.time
        while rclpy.ok(context=self.context):
            self.publish_state()
            if self.duration > 0 and self.arm.time >= self.duration - 1e-12:
                break
            if self.lockstep:
                target = self.commands_received + 1
                deadline = time.monotonic() + self.lockstep_timeout
                while self.commands_received < target and time.monotonic() < deadline:
                    executor.spin_once(timeout_sec=0.0005)
                if self.commands_received < target:
                    self.get_logger().warning('lockstep: no command in time; effort held',
                                              throttle_duration_sec=2.0)
            else:
                executor.spin_once(timeout_sec=0.0)
            self.arm.step(self.steps_per_state)
            if self.real_time:
                ahead = (self.arm.time - sim0) - (time.monotonic() - wall0)
                while ahead > 0:
                    executor.spin_once(timeout_sec=ahead)
                    ahead = (self.arm.time - sim0) - (time.monotonic() - wall0)


def main(args=None):
    """Run the simulated arm until its duration ends or Ctrl-C."""
    handle_interrupts()
    try:
        init_ros(args)  # rclpy.init; parameters rcl refuses: one line
    except DenocError as err:
        print(f'sim_arm: {err}', file=sys.stderr)
        return 1
    node = executor = None
    try:
        executor = SingleThreadedExecutor()
        node = SimArm()
        executor.add_node(node)
        node.run(executor)
    except DenocError as err:
        if node is None:  # the node's construction failed: a start-up error
            startup_failed('sim_arm', err)
        print(f'sim_arm: {err}', file=sys.stderr)
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:  # noqa: B902 - work cut short by a signal's shutdown is no error
        if rclpy.ok():
            raise
    finally:
        ignore_further_interrupts()
        try:
            # The executor shut down before rclpy (as spin_node does): left to the interpreter's
            # teardown after a start-up error, its wait set was once destroyed after the
            # context's (a segmentation fault in one run of the full suite).
            if executor is not None:
                executor.shutdown()
            if node is not None:
                node.save_log()
                node.destroy_node()
            rclpy.try_shutdown()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
    return 0


if __name__ == '__main__':
    sys.exit(main())
