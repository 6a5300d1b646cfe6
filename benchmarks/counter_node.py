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

The subscriptions are served without an executor: one rclpy wait set over all of them, and every
message queued on a ready one taken (serialized) and counted. rclpy's executor rebuilds its wait
set and makes a task for each message it hands over (about 0.1 ms of CPU per message here): with
ten outputs at 1 kHz, two counters served that way took 0.7 of the machine's two cores, and the
node they listen to was what got preempted.
"""

import contextlib
import json
import os
import signal
import sys
import time

import rclpy
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy

STATUS_PERIOD = 0.1  # [s] between two rewrites of the status file


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
        # served below, never by an executor: the callback is not called
        subscriptions[topic] = node.create_subscription(message_type(kind), topic,
                                                        lambda _: None, qos, raw=True)

    def write_status():
        status = {t: {'count': counts[t], 'matched': s.get_publisher_count() > 0}
                  for t, s in subscriptions.items()}
        with open(status_file + '.tmp', 'w') as f:
            json.dump(status, f)
        os.replace(status_file + '.tmp', status_file)

    def stop(*_):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    context = node.context
    served = [(topic, s.handle, s.msg_type) for topic, s in subscriptions.items()]
    wait_set = _rclpy.WaitSet(len(served), 0, 0, 0, 0, 0, context.handle)
    try:
        next_status = time.monotonic()
        while context.ok():
            now = time.monotonic()
            if now >= next_status:
                write_status()
                next_status = now + STATUS_PERIOD
            with contextlib.ExitStack() as handles:
                for _, handle, _ in served:
                    handles.enter_context(handle)
                handles.enter_context(context.handle)
                wait_set.clear_entities()
                for _, handle, _ in served:
                    wait_set.add_subscription(handle)
                wait_set.wait(max(int((next_status - now) * 1e9), 0))
                ready = wait_set.get_ready_entities('subscription')
                for topic, handle, msg_type in served:
                    if handle.pointer not in ready:
                        continue
                    while handle.take_message(msg_type, True) is not None:
                        counts[topic] += 1
    except KeyboardInterrupt:
        pass
    except Exception:  # noqa: B902 - a handle gone under us: shutting down
        if context.ok():
            raise
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
