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
A terminal view of the dynamics node's output: one compact line per interval.

Subscribes ``/denoc_dynamics/{gravity,coriolis,inertia,feedforward}_torques`` (remappable) and
prints the message rate and the latest torques, so a person sees the node working.
"""

import sys

from rclpy.node import Node
from sensor_msgs.msg import JointState

from . import settings as parameters
from ._main import spin_node
from .settings import Spec


TERMS = ('gravity', 'coriolis', 'inertia', 'feedforward')


def format_torques(values, width=7):
    """Format a torque vector compactly: fixed-width signed numbers with two decimals."""
    return ' '.join(f'{v:+{width}.2f}' for v in values)


# all read at start-up
PARAMETERS = parameters.table(*parameters.read_only(
    Spec('dynamics_node', 'string', '/denoc_dynamics', 'name of the dynamics node'),
    Spec('interval', 'double', 0.5, 'seconds between two printouts', 0.001, 3600.0)))


class TorqueMonitor(Node):
    """Print the latest feed-forward torques and the rate they arrive at."""

    def __init__(self, **kwargs):
        super().__init__('torque_monitor', **kwargs)
        values = parameters.declare(self, PARAMETERS)
        prefix = values['dynamics_node'].rstrip('/')
        self._latest = {}
        self._count = 0
        self._t0 = self.get_clock().now()
        for term in TERMS:
            self.create_subscription(JointState, f'{prefix}/{term}_torques',
                                     lambda msg, term=term: self.torque_callback(term, msg), 10)
        self._interval = values['interval']
        self.create_timer(self._interval, self.timer_callback)

    def torque_callback(self, term, msg):
        """Keep the newest message of each term."""
        self._latest[term] = msg
        if term == 'feedforward':
            self._count += 1

    def timer_callback(self):
        """Print one line per term with the arrival rate."""
        t = (self.get_clock().now() - self._t0).nanoseconds * 1e-9
        rate = self._count / self._interval
        self._count = 0
        if not self._latest:
            print(f'[t={t:6.1f} s] waiting for /denoc_dynamics torques ...', flush=True)
            return
        lines = [f'[t={t:6.1f} s] {rate:6.1f} msg/s  torques [N m | N] per joint:']
        for term in TERMS:
            if term in self._latest:
                lines.append(f'  {term:>11}: {format_torques(self._latest[term].effort)}')
        print('\n'.join(lines), flush=True)


def main(args=None):
    """Run the node until shutdown."""
    return spin_node(TorqueMonitor, 'torque_monitor', args)


if __name__ == '__main__':
    sys.exit(main())
