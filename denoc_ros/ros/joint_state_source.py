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
A built-in joint-state source: a smooth trajectory published as sensor_msgs/JointState.

Each joint follows q_i(t) = c_i + a_i sin(2 pi t / T + phi_i), centred in its limits, with the
exact velocities, and as efforts the inverse dynamics tau = ID(q, qd, qdd) of the library (what an
ideal arm following the trajectory would measure). It lets the dynamics node run with nothing else.
"""

import sys

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState

from . import settings as parameters
from ._main import spin_node
from .settings import Spec
from .. import dynamics
from ..resources import resolve_urdf
from ..urdf import load_urdf


def sinusoid_trajectory(model, t, amplitude=0.5, period=4.0):
    """Return (q, qd, qdd) of the demo trajectory at time(s) ``t`` (leading axes of t kept)."""
    n = model.dof
    lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
    centre = 0.5 * (lower + upper)
    amp = np.minimum(amplitude, 0.4 * (upper - lower))
    w = 2.0 * np.pi / period
    phase = np.linspace(0.0, np.pi, n, endpoint=False)
    arg = w * np.asarray(t, dtype=float)[..., None] + phase
    q = centre + amp * np.sin(arg)
    qd = amp * w * np.cos(arg)
    qdd = -amp * w * w * np.sin(arg)
    return q, qd, qdd


# all read at start-up
PARAMETERS = parameters.table(*parameters.read_only(
    *parameters.model_specs(urdf_path='panda'),
    Spec('rate', 'double', 100.0, 'joint states per second [Hz]', 0.0, 1e5, open_low=True),
    Spec('amplitude', 'double', 0.5, 'amplitude of each joint [rad or m]', 0.0, 100.0),
    Spec('period', 'double', 4.0, 'period of the motion [s]', 0.0, 1e6, open_low=True)))


class JointStateSource(Node):
    """Publish a smooth trajectory on ``joint_states`` at a fixed rate."""

    def __init__(self, **kwargs):
        super().__init__('joint_state_source', **kwargs)
        values = parameters.declare(self, PARAMETERS)
        xml = values['robot_description']
        source = xml or str(resolve_urdf(values['urdf_path']))
        self.model = load_urdf(source)
        self._amplitude = values['amplitude']
        self._period = values['period']
        self._pub = self.create_publisher(JointState, 'joint_states', 10)
        self._t0 = self.get_clock().now()
        rate = values['rate']
        self.create_timer(1.0 / rate, self.timer_callback)
        self.get_logger().info(f'publishing joint_states of {self.model.name!r} '
                               f'({self.model.dof} joints) at {rate:g} Hz')

    def timer_callback(self):
        """Publish the trajectory's state at the current time."""
        now = self.get_clock().now()
        t = (now - self._t0).nanoseconds * 1e-9
        q, qd, qdd = sinusoid_trajectory(self.model, t, self._amplitude, self._period)
        msg = JointState()
        msg.header.stamp = now.to_msg()
        msg.name = list(self.model.joint_names)
        msg.position = q.tolist()
        msg.velocity = qd.tolist()
        msg.effort = dynamics.inverse_dynamics(self.model, q, qd, qdd).tolist()
        self._pub.publish(msg)


def main(args=None):
    """Run the node until shutdown."""
    return spin_node(JointStateSource, 'joint_state_source', args)


if __name__ == '__main__':
    sys.exit(main())
