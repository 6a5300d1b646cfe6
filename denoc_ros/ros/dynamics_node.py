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
The dynamics node ``denoc_dynamics``: joint_states in, feed-forward torques out.

Robot description: the ``robot_description`` parameter, else ``urdf_path`` (a file, or the name of
a bundled robot such as ``panda``), else the ``/robot_description`` topic (transient local, as
robot_state_publisher publishes it). For every joint state it publishes, stamped like the input:

* ``~/gravity_torques``, ``~/coriolis_torques``, ``~/inertia_torques``,
  ``~/feedforward_torques`` (sensor_msgs/JointState: names + effort), and
* ``~/effort_command`` (std_msgs/Float64MultiArray, joint order from ``command_joints``),

computed by the library at the measured state with zero desired acceleration.
"""

import sys

import numpy as np
from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, qos_profile_sensor_data, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String

from ._main import spin_node
from .conversions import JointMap
from .. import dynamics
from ..errors import DenocError
from ..resources import resolve_urdf
from ..urdf import load_urdf

NODE_NAME = 'denoc_dynamics'


class DynamicsNode(Node):
    """Publish gravity, Coriolis and inertia torques for every received joint state."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self.declare_parameter('robot_description', '')
        self.declare_parameter('urdf_path', '')
        self.declare_parameter('base_link', '')
        self.declare_parameter('tip_link', '')
        self.declare_parameter('gravity', [0.0, 0.0, -9.81])
        self.declare_parameter(
            'command_joints', [],
            ParameterDescriptor(type=ParameterType.PARAMETER_STRING_ARRAY,
                                description='joint order of ~/effort_command; empty: model'))

        self.model = None
        self._joint_map = None
        self._command_index = None

        self._pub = {
            term: self.create_publisher(JointState, f'~/{term}_torques', 10)
            for term in ('gravity', 'coriolis', 'inertia', 'feedforward')
        }
        self._command_pub = self.create_publisher(Float64MultiArray, '~/effort_command', 10)

        description = self._description_from_parameters()
        if description is not None:
            self._set_model(description)
        else:
            latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                 durability=DurabilityPolicy.TRANSIENT_LOCAL)
            self.create_subscription(String, '/robot_description',
                                     self.robot_description_callback, latched)
            self.get_logger().info('waiting for a URDF on /robot_description')

        # best effort receives from reliable and best-effort publishers alike
        self.create_subscription(JointState, 'joint_states', self.joint_state_callback,
                                 qos_profile_sensor_data)

    def _description_from_parameters(self):
        xml = self.get_parameter('robot_description').value
        if xml:
            return xml
        path = self.get_parameter('urdf_path').value
        if path:
            return str(resolve_urdf(path))
        return None

    def _set_model(self, source):
        base = self.get_parameter('base_link').value or None
        tip = self.get_parameter('tip_link').value or None
        gravity = self.get_parameter('gravity').value
        self.model = load_urdf(source, base_link=base, tip_link=tip, gravity=gravity)
        self._joint_map = JointMap(self.model.joint_names)
        command = self.get_parameter('command_joints').value or self.model.joint_names
        unknown = [j for j in command if j not in self.model.joint_names]
        if unknown:
            raise DenocError('command_joints names unknown joint(s): ' + ', '.join(unknown))
        self._command_joints = list(command)
        self._command_index = np.array([self.model.joint_names.index(j) for j in command])
        self.get_logger().info(
            f'model {self.model.name!r}: {self.model.dof} joints '
            f'({", ".join(self.model.joint_names)})')

    def robot_description_callback(self, msg):
        """Build (or rebuild) the model from a URDF published on /robot_description."""
        try:
            self._set_model(msg.data)
        except DenocError as err:
            self.get_logger().error(f'robot_description rejected: {err}')

    def joint_state_callback(self, msg):
        """Compute and publish the feed-forward terms at the measured state."""
        if self.model is None:
            return
        try:
            q = self._joint_map.gather(msg.name, msg.position, 'positions')
            qd = self._joint_map.gather(msg.name, msg.velocity, 'velocities')
        except DenocError as err:
            self.get_logger().warn(f'joint state ignored: {err}', throttle_duration_sec=2.0)
            return
        g = dynamics.gravity_torques(self.model, q)
        c = dynamics.coriolis_torques(self.model, q, qd)
        inertia = np.zeros(self.model.dof)
        total = g + c + inertia
        for term, value in (('gravity', g), ('coriolis', c), ('inertia', inertia),
                            ('feedforward', total)):
            self._pub[term].publish(self._joint_state(msg.header, value))
        command = Float64MultiArray()
        command.layout.dim = [MultiArrayDimension(label='joints', size=len(self._command_index),
                                                  stride=len(self._command_index))]
        command.data = total[self._command_index].tolist()
        self._command_pub.publish(command)

    def _joint_state(self, header, effort):
        out = JointState()
        out.header = header
        out.name = list(self.model.joint_names)
        out.effort = effort.tolist()
        return out


def main(args=None):
    """Run the node until shutdown."""
    return spin_node(DynamicsNode, NODE_NAME, args)


if __name__ == '__main__':
    sys.exit(main())
