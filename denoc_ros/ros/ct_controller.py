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
``ct_controller``: a computed-torque controller on joint_states, commanding efforts.

The law is the library's, in full (not feed-forward plus a separate PD):

    tau = M(q) (qdd_d + Kd (qd_d - qd) + Kp (q_d - q)) + C(q, qd) qd + g(q)

evaluated as one inverse dynamics at the servoed acceleration
(:func:`denoc_ros.feedforward.computed_torque`). The desired state comes from the trajectory on
``~/reference`` (trajectory_msgs/JointTrajectory, all its points), sampled between points with
Hermite polynomials (:class:`denoc_ros.ros.trajectory.TrajectorySampler`) at the time stamp of each
joint state: a trajectory stamped 0 starts at the first joint state after it arrives, otherwise at
its header stamp. Before any trajectory, and after its end, it holds the last desired (at start:
the first measured) positions. Efforts go out on ``~/commands`` (Float64MultiArray in ``joints``
order, for a JointGroupEffortController); ``~/tracking_error`` (JointState: position = q_d - q,
velocity = qd_d - qd) shows how well it tracks.

``mass_scale`` multiplies every mass and inertia of the controller's model, to study a wrong
model (1.1 = 10 % too heavy).
"""

import sys

import numpy as np
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.time import Time
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory

from ._main import spin_node
from .conversions import JointMap
from .trajectory import TrajectorySampler
from ..description import read_description
from ..errors import DenocError, InputError
from ..feedforward import computed_torque
from ..urdf import load_urdf


def _gains(name, values, n):
    """Return (n,) gains from one value for all joints or one per joint."""
    g = np.asarray(values, dtype=float)
    if g.size == 1:
        g = np.full(n, float(g.ravel()[0]))
    if g.shape != (n,) or not np.all(np.isfinite(g)) or np.any(g < 0):
        raise InputError(f'{name} needs 1 or {n} non-negative values, got {list(values)}')
    return g


class ComputedTorqueController(Node):
    """Track a joint trajectory with the computed-torque law of the library."""

    def __init__(self, **kwargs):
        super().__init__('ct_controller', **kwargs)
        self.declare_parameter('robot_description', '')
        self.declare_parameter('urdf_path', 'panda')
        self.declare_parameter('gravity', [0.0, 0.0, -9.81])
        self.declare_parameter('kp', [400.0])
        self.declare_parameter('kd', [40.0])
        self.declare_parameter('mass_scale', 1.0)
        self.declare_parameter('joints', Parameter.Type.STRING_ARRAY)
        get = self._value
        xml = get('robot_description') or read_description(get('urdf_path'))
        model = load_urdf(xml, gravity=get('gravity'))
        scale = float(get('mass_scale'))
        if not 0.0 < scale < 100.0:
            raise InputError(f'mass_scale is {scale}; it must be in (0, 100)')
        self.model = model.replace(mass=model.mass * scale, inertia=model.inertia * scale)
        n = self.model.dof
        self.kp = _gains('kp', get('kp'), n)
        self.kd = _gains('kd', get('kd'), n)
        order = get('joints') or list(self.model.joint_names)
        unknown = [j for j in order if j not in self.model.joint_names]
        if unknown:
            raise InputError('joints names unknown joint(s): ' + ', '.join(unknown))
        self._command_index = np.array([self.model.joint_names.index(j) for j in order])
        self._joint_map = JointMap(self.model.joint_names)
        zero = np.zeros(n)  # warm up: compilation is not paid by the first joint state
        computed_torque(self.model, zero, zero, (zero, zero, zero), self.kp, self.kd)
        self._sampler = None
        self._start = None          # trajectory start time [s], None: at the next joint state
        self._hold = None           # positions held without a trajectory
        self._command_pub = self.create_publisher(Float64MultiArray, '~/commands', 10)
        self._error_pub = self.create_publisher(JointState, '~/tracking_error', 10)
        self.create_subscription(JointState, 'joint_states', self.joint_state_callback, 100)
        self.create_subscription(JointTrajectory, '~/reference', self.reference_callback, 10)

    def _value(self, name):
        return self.get_parameter_or(name, Parameter(name)).value

    def reference_callback(self, msg):
        """Take a new trajectory (replacing the current one)."""
        try:
            index = self._joint_map.indices(msg.joint_names)
            times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points]

            def table(field):
                rows = [getattr(p, field) for p in msg.points]
                if all(len(r) == 0 for r in rows):
                    return None
                return np.asarray(rows, dtype=float)[:, index]
            self._sampler = TrajectorySampler(times, table('positions'), table('velocities'),
                                              table('accelerations'))
        except (DenocError, ValueError) as err:
            self.get_logger().warning(f'reference ignored: {err}', throttle_duration_sec=2.0)
            return
        stamp = Time.from_msg(msg.header.stamp).nanoseconds * 1e-9
        self._start = stamp if stamp > 0 else None
        self.get_logger().info(f'trajectory of {len(msg.points)} points, '
                               f'{self._sampler.duration:.2f} s')

    def desired(self, t, q):
        """Return the desired positions, velocities and accelerations at time ``t``."""
        zero = np.zeros(self.model.dof)
        if self._sampler is None:
            if self._hold is None:
                self._hold = q.copy()
            return self._hold, zero, zero
        if self._start is None:
            self._start = t
        q_d, qd_d, qdd_d = self._sampler.sample(t - self._start)
        return q_d, qd_d, qdd_d

    def joint_state_callback(self, msg):
        """Compute and publish the computed-torque efforts for one joint state."""
        try:
            q = self._joint_map.gather(msg.name, msg.position, 'positions', required=True)
            qd = self._joint_map.gather(msg.name, msg.velocity, 'velocities')
        except DenocError as err:
            self.get_logger().warning(f'joint state ignored: {err}', throttle_duration_sec=2.0)
            return
        t = Time.from_msg(msg.header.stamp).nanoseconds * 1e-9
        q_d, qd_d, qdd_d = self.desired(t, q)
        tau = computed_torque(self.model, q, qd, (q_d, qd_d, qdd_d), self.kp, self.kd)
        if not np.all(np.isfinite(tau)):
            self.get_logger().error('non-finite effort: command not sent',
                                    throttle_duration_sec=2.0)
            return
        command = Float64MultiArray(data=tau[self._command_index].tolist())
        n = len(self._command_index)
        command.layout.dim = [MultiArrayDimension(label='joints', size=n, stride=n)]
        self._command_pub.publish(command)
        error = JointState(name=list(self.model.joint_names), position=(q_d - q).tolist(),
                           velocity=(qd_d - qd).tolist())
        error.header = msg.header
        self._error_pub.publish(error)


def main(args=None):
    """Run the controller until shutdown."""
    return spin_node(ComputedTorqueController, 'ct_controller', args)


if __name__ == '__main__':
    sys.exit(main())
