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
A bare rclpy relay: republish every sensor_msgs/JointState of ``joint_states`` unchanged.

The baseline of ``benchmarks/node_latency.py``: the same input QoS as the dynamics node
(best effort, depth 100) and the same output QoS (reliable, depth 10), but no work between
receiving and publishing, so its round trip is the cost of rclpy + DDS alone. The message is
published as received (header included) on ``joint_states_echo``. Run it in a namespace of its
own, e.g. ``python benchmarks/relay_node.py --ros-args -r __ns:=/relay``.

``--thread`` (before ``--ros-args``): serve ``joint_states`` as the dynamics node does, in a
thread of its own outside the executor, taken serialized and republished as the same bytes
(:class:`denoc_ros.ros.joint_state_thread.SubscriptionThread`), Fast DDS's timed-events thread
made ``SCHED_BATCH`` as in the node's executable: the floor of what rclpy and DDS cost per message
that way. ``--fanout N`` (with ``--thread``): also publish the same bytes on
``joint_states_echo_1`` ... ``joint_states_echo_N`` (reliable, depth 10), one DDS write each: with
subscribers on them, the floor of a node that answers each joint state with N + 1 messages.
"""

import sys

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState


class JointStateRelay(Node):
    """Subscribe ``joint_states``, publish each message on ``joint_states_echo``."""

    def __init__(self, thread=False, fanout=0, **kwargs):
        super().__init__('joint_state_relay', **kwargs)
        self._publisher = self.create_publisher(JointState, 'joint_states_echo', 10)
        self._fanout = [self.create_publisher(JointState, f'joint_states_echo_{k + 1}', 10)
                        for k in range(fanout)]
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT,
                         durability=DurabilityPolicy.VOLATILE)
        self.thread = None
        if not thread:
            self.create_subscription(JointState, 'joint_states', self.callback, qos)
            return
        from denoc_ros.ros.joint_state_thread import (batch_middleware_timers, NotInExecutor,
                                                      SubscriptionThread)
        batch_middleware_timers()  # as the dynamics node's executable does
        group = NotInExecutor()
        subscription = self.create_subscription(JointState, 'joint_states', self.callback, qos,
                                                raw=True, callback_group=group)
        self.thread = SubscriptionThread(
            self, subscription, self.create_guard_condition(lambda: None, group),
            self.callback, name='joint_states')
        self.thread.start()

    def callback(self, msg):
        """Republish the message as it came (and on the fan-out topics)."""
        self._publisher.publish(msg)
        for publisher in self._fanout:
            publisher.publish(msg)


def main(args=None):
    """Spin the relay until Ctrl-C, SIGTERM or shutdown; return the exit status."""
    args = list(sys.argv if args is None else args)
    thread = '--thread' in args
    if thread:
        args.remove('--thread')
    fanout = 0
    if '--fanout' in args:
        at = args.index('--fanout')
        fanout = int(args[at + 1])
        del args[at:at + 2]
    rclpy.init(args=args)
    node = None
    try:
        node = JointStateRelay(thread=thread, fanout=fanout)
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if node is not None:
            if node.thread is not None:
                node.thread.stop()
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
