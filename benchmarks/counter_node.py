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
Count the messages of some topics in a process of its own (``benchmarks/node_latency.py``).

Usage: ``python benchmarks/counter_node.py STATUS_FILE TOPIC=TYPE [TOPIC=TYPE ...]`` with TYPE
one of the message types below. Subscribes raw (nothing is deserialized), reliable, depth 1000,
and every 0.1 s rewrites STATUS_FILE (JSON, atomically) with, per topic, the messages counted
and whether a publisher is matched. Runs until SIGINT or SIGTERM.
"""

import json
import os
import signal
import sys

import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.qos import QoSProfile, ReliabilityPolicy


def message_type(name):
    """Return the message class of a 'package/msg/Type' name."""
    package, _, kind = name.split('/')
    module = __import__(f'{package}.msg', fromlist=[kind])
    return getattr(module, kind)


def main(argv):
    """Count until stopped; return the exit status."""
    status_file, specs = argv[1], argv[2:]
    rclpy.init()
    node = rclpy.create_node(f'output_counter_{os.getpid()}')
    counts = {}
    subscriptions = {}
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    for spec in specs:
        topic, _, kind = spec.partition('=')
        counts[topic] = 0

        def on_message(_, topic=topic):
            counts[topic] += 1
        subscriptions[topic] = node.create_subscription(message_type(kind), topic, on_message,
                                                        qos, raw=True)

    def write_status():
        status = {t: {'count': counts[t], 'matched': s.get_publisher_count() > 0}
                  for t, s in subscriptions.items()}
        with open(status_file + '.tmp', 'w') as f:
            json.dump(status, f)
        os.replace(status_file + '.tmp', status_file)
    node.create_timer(0.1, write_status)
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt))
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        try:
            write_status()
        except Exception:  # noqa: B902 - shutting down
            pass
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
