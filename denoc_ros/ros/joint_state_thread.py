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
A subscription served by a thread of its own, outside the rclpy executor.

rclpy's Python executor costs about 0.2 ms of CPU per message it hands over: it gathers every
entity of its nodes, builds a wait set over them, waits, makes a task of the ready callback and
runs it, and converts the message to a Python object on the way. :class:`SubscriptionThread`
waits on a wait set of its own holding only that subscription and a guard condition (to stop
it), takes the messages the middleware queued -- serialized, if the subscription was created
with ``raw=True`` -- and hands each to a handler, in its own thread; the executor never sees
the subscription (its callback group, :class:`NotInExecutor`, refuses every entity).

Stopping: :meth:`SubscriptionThread.stop` (also on the context's shutdown) wakes the thread
through the guard condition and joins it; the thread also looks at the stop flag every
:data:`POLL` seconds. The handler runs with nothing locked: what it shares with the executor's
callbacks, it guards itself.
"""

import os
import threading

from rclpy.callback_groups import CallbackGroup
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

POLL = 0.5  # [s] the longest wait before the thread looks at its stop flag again


class NotInExecutor(CallbackGroup):
    """A callback group whose entities no executor runs (they are served elsewhere)."""

    def can_execute(self, entity):
        """Return False: the executor leaves the entity out of its wait set."""
        return False


class SubscriptionThread:
    """
    Serve ``subscription`` in a thread of its own: ``handler(message)`` for each one taken.

    ``subscription``: created in a :class:`NotInExecutor` group; ``guard``: a guard condition
    of the same node (also in such a group), triggered to stop; ``name``: the thread's. A
    handler's exception ends the thread (it is printed, as rclpy does with a callback's).
    """

    def __init__(self, node, subscription, guard, handler, name='subscription'):
        self._context = node.context
        self._subscription = subscription
        self._guard = guard
        self._handler = handler
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._context.on_shutdown(self.stop)

    def start(self):
        """Start serving."""
        self._thread.start()

    @property
    def alive(self):
        """Return True while the thread runs."""
        return self._thread.is_alive()

    def stop(self, timeout=5.0):
        """Stop the thread (wake it, wait for it); safe to call more than once, from any thread."""
        self._stopping = True
        try:
            self._guard.trigger()
        except Exception:  # noqa: B902 - its handle is gone: the thread stops on its own poll
            pass
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    def _run(self):
        sub, guard = self._subscription.handle, self._guard.handle
        msg_type, raw = self._subscription.msg_type, self._subscription.raw
        context = self._context
        handler = self._handler
        poll = int(POLL * 1e9)
        wait_set = _rclpy.WaitSet(1, 1, 0, 0, 0, 0, context.handle)
        try:
            while not self._stopping and context.ok():
                with sub, guard, context.handle:
                    wait_set.clear_entities()
                    wait_set.add_subscription(sub)
                    wait_set.add_guard_condition(guard)
                    wait_set.wait(poll)
                while not self._stopping:
                    with sub:
                        taken = sub.take_message(msg_type, raw)
                    if taken is None:
                        break
                    handler(taken[0])
        except Exception:  # noqa: B902 - a handle destroyed under us: shutting down
            if not self._stopping and context.ok():
                raise


def batch_middleware_timers(prefix='dds.ev.'):
    """
    Put this process's Fast DDS timed-events thread under ``SCHED_BATCH``; return how many.

    Every write to a reliable subscriber (re)arms the writer's timers (heartbeat, NACK
    suppression), which wakes Fast DDS's event thread (named ``dds.ev.<participant>``), and a
    thread that wakes preempts the one that woke it: the joint states' thread was preempted 2
    to 15 times per joint state. A ``SCHED_BATCH`` thread (Linux; no privilege needed) runs
    the same, but never preempts on waking. No such thread (another middleware, another
    system): nothing is changed, 0.
    """
    if not hasattr(os, 'sched_setscheduler') or not os.path.isdir('/proc/self/task'):
        return 0
    changed = 0
    for tid in os.listdir('/proc/self/task'):
        try:
            with open(f'/proc/self/task/{tid}/comm') as f:
                if not f.read().startswith(prefix):
                    continue
            os.sched_setscheduler(int(tid), os.SCHED_BATCH, os.sched_param(0))
            changed += 1
        except (OSError, ValueError):  # gone meanwhile, or not allowed: leave it
            continue
    return changed
