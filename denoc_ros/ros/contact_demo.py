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
``contact_demo``: push the simulated arm now and then, and print what the dynamics node sees.

Publishes a geometry_msgs/WrenchStamped on ``/sim_arm/external_wrench`` (the simulated arm
applies it to the link named in ``frame_id``): ``force`` [N] and ``torque`` [N m] (parameters,
in that link's axes, at its origin) for ``push_duration`` seconds every ``period`` seconds, a
zero wrench in between. Prints, twice a second, the node's ``~/contact`` (in contact or not, the
external torques against their thresholds) and its ``~/external_wrench`` next to the wrench
being applied. Parameters: ``link`` (default ``panda_link7``), ``force``, ``torque``,
``period`` (4 s), ``push_duration`` (2 s), ``dynamics_node`` (``/denoc_dynamics``),
``sim_arm`` (``/sim_arm``). ``launch/contact_demo.launch.py`` starts it with ``sim_arm`` held
by the dynamics node's gravity compensation.
"""

import sys

from denoc_ros_interfaces.msg import ContactState
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node

from . import settings as parameters
from ._main import spin_node
from .settings import Spec
from .torque_monitor import format_torques


# all read at start-up
PARAMETERS = parameters.table(*parameters.read_only(
    Spec('link', 'string', 'panda_link7', 'link the push acts on'),
    Spec('force', 'doubles', [0.0, 0.0, 15.0], 'force of the push in link axes [N]', length=3),
    Spec('torque', 'doubles', [0.0, 0.0, 0.0], 'torque of the push in link axes [N m]',
         length=3),
    Spec('period', 'double', 4.0, 'period of push and release [s]', 0.0, 3600.0,
         open_low=True),
    Spec('push_duration', 'double', 2.0, 'duration of each push [s]', 0.0, 3600.0),
    Spec('dynamics_node', 'string', '/denoc_dynamics', 'name of the dynamics node'),
    Spec('sim_arm', 'string', '/sim_arm', 'name of the simulated arm node')))


class ContactDemo(Node):
    """Push the arm periodically and print the contact state the dynamics node reports."""

    def __init__(self, **kwargs):
        super().__init__('contact_demo', **kwargs)
        values = parameters.declare(self, PARAMETERS)
        value = values.get
        self._link = value('link')
        self._force = value('force')
        self._torque = value('torque')
        self._period = value('period')
        self._push = value('push_duration')
        node, arm = value('dynamics_node').rstrip('/'), value('sim_arm').rstrip('/')
        self._pub = self.create_publisher(WrenchStamped, f'{arm}/external_wrench', 10)
        self._contact = self._wrench = None
        self.create_subscription(ContactState, f'{node}/contact', self._on_contact, 10)
        self.create_subscription(WrenchStamped, f'{node}/external_wrench', self._on_wrench, 10)
        self._t0 = self.get_clock().now()
        self._pushing = None
        self.create_timer(0.05, self._drive)
        self.create_timer(0.5, self._print)

    def _elapsed(self):
        return (self.get_clock().now() - self._t0).nanoseconds * 1e-9

    def _on_contact(self, msg):
        self._contact = msg

    def _on_wrench(self, msg):
        self._wrench = msg

    def _drive(self):
        """Publish the push or the zero wrench whenever the phase changes (and keep it up)."""
        pushing = (self._elapsed() % self._period) >= self._period - self._push
        msg = WrenchStamped()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = self._link
        if pushing:
            f, m = msg.wrench.force, msg.wrench.torque
            f.x, f.y, f.z = self._force
            m.x, m.y, m.z = self._torque
        if pushing != self._pushing:
            state = (f'pushing {self._link}: force {self._force} N, torque {self._torque} N m'
                     if pushing else 'released')
            print(f'[t={self._elapsed():6.1f} s] {state}', flush=True)
        self._pushing = pushing
        self._pub.publish(msg)

    def _print(self):
        c = self._contact
        if c is None:
            print(f"[t={self._elapsed():6.1f} s] waiting for the dynamics node's ~/contact "
                  '(joint states with efforts)', flush=True)
            return
        flag = 'CONTACT' if c.in_contact else 'free   '
        joints = ' '.join('*' if j else '.' for j in c.joint_in_contact)
        line = (f'[t={self._elapsed():6.1f} s] {flag} [{joints}]  tau_ext '
                f'{format_torques(c.external_torques, 6)} N m')
        if self._wrench is not None:
            w = self._wrench.wrench
            line += (f'\n{"":13}estimated wrench at {self._wrench.header.frame_id}: force '
                     f'{w.force.x:+6.1f} {w.force.y:+6.1f} {w.force.z:+6.1f} N')
        print(line, flush=True)


def main(args=None):
    """Run the node until shutdown."""
    return spin_node(ContactDemo, 'contact_demo', args)


if __name__ == '__main__':
    sys.exit(main())
