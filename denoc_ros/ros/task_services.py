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
The dynamics node's long-running services: payload estimation, trajectory check and retime.

:class:`TaskServices` serves them for a :class:`denoc_ros.ros.dynamics_node.DynamicsNode`, from
its processor's :class:`~denoc_ros.identification.payload.PayloadWindow` of the joint states that
carry efforts (``payload_window`` seconds of header-stamp time; a new model empties it): it answers
``~/estimate_payload`` (:mod:`denoc_ros.ros.payload_services`), ``~/check_trajectory`` and
``~/retime_trajectory`` (:mod:`denoc_ros.ros.trajectory_services`).

Threading: these services take 0.1-1 s, so their callbacks are coroutines: in the node's own
thread (the executor's: :func:`task_executor`, one thread) a callback reads the model
(immutable: a payload change builds a new one) and takes a copy of the window, then awaits the
computation, which runs in a worker thread of its own while the node's thread answers joint
states, and applies an estimated payload back in the node's thread. No state of the node is
ever touched by two threads.
"""

import concurrent.futures
import os

from denoc_ros_interfaces.srv import CheckTrajectory, EstimatePayload, RetimeTrajectory
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
from rclpy.task import Future

from .payload_services import applied_payloads, estimate_payload_response
from .trajectory_services import check_trajectory_service, retime_trajectory_service
from ..errors import DenocError, InputError
from ..payload import attached_payloads
from ..spatial import combine_inertials

def task_executor(context=None):
    """
    Return the dynamics node's executor: rclpy's EventsExecutor where it exists, else single.

    The C++ events executor hands each message to its callback without rebuilding a wait set
    over every entity of the node (rclpy's Python executors spend 0.1-0.2 ms per message on
    that). It runs one thread; the long services compute in a worker thread of their own
    (:class:`TaskServices`). ``DENOC_ROS_EXECUTOR=single`` (rclpy's SingleThreadedExecutor) or
    ``multi`` (MultiThreadedExecutor, two threads) choose another, e.g. to compare.
    """
    choice = os.environ.get('DENOC_ROS_EXECUTOR', 'events')
    if choice == 'multi':
        return MultiThreadedExecutor(num_threads=2, context=context)
    if choice == 'events':
        try:
            from rclpy.experimental import EventsExecutor
        except ImportError:  # an rclpy before Jazzy's 7.1.4
            pass
        else:
            return EventsExecutor(context=context)
    return SingleThreadedExecutor(context=context)


class TaskServices:
    """The long-running service callbacks of the dynamics node ``node`` (composed by it)."""

    def __init__(self, node):
        """Create the task services; their computation runs in a worker thread."""
        self.node = node
        self._worker = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix='denoc_tasks')
        for srv_type, name, callback in (
                (EstimatePayload, '~/estimate_payload', self.estimate_payload_callback),
                (CheckTrajectory, '~/check_trajectory', self.check_trajectory_callback),
                (RetimeTrajectory, '~/retime_trajectory', self.retime_trajectory_callback)):
            node.create_service(srv_type, name, callback)

    async def _off_thread(self, function):
        """Return ``function()`` computed in the worker thread, the node's thread serving on."""
        # Completing a future from another thread wakes its executor only through a done
        # callback (which it schedules as a task): one that does nothing.
        future = Future(executor=self.node.executor)
        future.add_done_callback(lambda _: None)

        def run():
            try:
                future.set_result(function())
            except Exception as err:  # noqa: B902 - raised again where it is awaited
                future.set_exception(err)
        self._worker.submit(run)
        return await future

    def shutdown(self):
        """Stop the worker thread (after the task it runs, if any)."""
        self._worker.shutdown(wait=False, cancel_futures=True)

    # -- payload -------------------------------------------------------------------------------
    def _snapshot(self):
        """Return (model, friction on, copy of the window), taken in the node's group."""
        processor = self.node.processor
        if processor is None:
            return None, False, None
        return processor.snapshot()

    async def estimate_payload_callback(self, request, response):
        """Estimate the payload on a link from the window; with ``apply``, set it."""
        model, friction, window = self._snapshot()  # in the node's thread: consistent
        if window is None:
            response.success, response.message = False, 'no robot model loaded yet'
            return response
        estimate = await self._off_thread(lambda: estimate_payload_response(
            request, response, window, model, friction))
        if estimate is None or not request.apply:
            return response
        try:
            total = self._apply_estimate(model, estimate)  # back in the node's thread
        except DenocError as err:
            response.success = False
            response.message = f'estimated, but not applied: {err}'
            return response
        response.message += f'; applied: the payload on {estimate.link} is now {total:.4g} kg'
        return response

    def _apply_estimate(self, model, estimate):
        """Add ``estimate`` to its link's payload (as set_payload would); return its mass."""
        if self.node.model is not model:
            raise InputError('the model changed while estimating')
        held = None
        for p in attached_payloads(model):
            if p.link == estimate.link:
                held = ((p.mass, p.com, p.inertia) if held is None else
                        combine_inertials(*held, p.mass, p.com, p.inertia))
        table = applied_payloads({} if held is None else {estimate.link: held}, estimate)
        mass, com, inertia = table[estimate.link]
        self.node.set_payload(estimate.link, mass, com, inertia)
        return mass

    # -- trajectories --------------------------------------------------------------------------
    async def _trajectory_task(self, service, request, response):
        node = self.node
        model, friction = node.model, node.settings.friction  # immutable: no copy needed
        if model is None:
            response.success, response.message = False, 'no robot model loaded yet'
            return response
        return await self._off_thread(lambda: service(model, request, response,
                                                      friction=friction))

    async def check_trajectory_callback(self, request, response):
        """Check a trajectory against the effort limits with the current model and payloads."""
        return await self._trajectory_task(check_trajectory_service, request, response)

    async def retime_trajectory_callback(self, request, response):
        """Retime a path time-optimally under the limits with the current model and payloads."""
        return await self._trajectory_task(retime_trajectory_service, request, response)
