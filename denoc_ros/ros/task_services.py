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

Threading: these services take 0.1-1 s, so they live in their own callback group and the node
is spun by a multi-threaded executor; joint states keep being answered meanwhile (in a thread
of their own in the executable). Every other executor callback (set_payload, parameters, the
reference) is in the node's default, mutually exclusive group and, like the joint states, runs
under the node's ``state_lock``: only they touch the node's state. A task reads the model
(immutable: a payload change builds a new one) and takes a copy of the window inside that
group, computes on them, and hands an applied payload back to that group (a guard condition),
so no state is changed concurrently. Under a single-threaded executor (the tests' harness) the
executor's callbacks run in one thread and the hand-over is a plain call (under the lock).
"""

import threading

from denoc_ros_interfaces.srv import CheckTrajectory, EstimatePayload, RetimeTrajectory
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor

from .payload_services import applied_payloads, estimate_payload_response
from .trajectory_services import check_trajectory_service, retime_trajectory_service
from ..errors import DenocError, InputError
from ..payload import attached_payloads
from ..spatial import combine_inertials

HAND_OVER_TIMEOUT = 30.0  # [s] a task waits this long for the node's own thread


def task_executor(context=None):
    """Return the node's executor: two threads, the task group's and the default group's."""
    return MultiThreadedExecutor(num_threads=2, context=context)


class TaskServices:
    """The long-running service callbacks of the dynamics node ``node`` (composed by it)."""

    def __init__(self, node):
        """Create the task services in their own callback group and the hand-over guard."""
        self.node = node
        self._task_group = MutuallyExclusiveCallbackGroup()
        self._hand_over = []  # (function, result box, threading.Event) to run in the node group
        self._hand_over_lock = threading.Lock()
        self._hand_over_guard = node.create_guard_condition(
            node.locked(self._run_handed_over))
        for srv_type, name, callback in (
                (EstimatePayload, '~/estimate_payload', self.estimate_payload_callback),
                (CheckTrajectory, '~/check_trajectory', self.check_trajectory_callback),
                (RetimeTrajectory, '~/retime_trajectory', self.retime_trajectory_callback)):
            node.create_service(srv_type, name, callback, callback_group=self._task_group)

    # -- running in the node's own group -------------------------------------------------------
    def _in_node_group(self, function):
        """Return ``function()`` run in the node's default group (its exception raised here)."""
        executor = self.node.executor
        if executor is None or isinstance(executor, SingleThreadedExecutor):
            with self.node.state_lock:  # (the joint states may have a thread of their own)
                return function()  # one executor thread: no other callback runs meanwhile
        box, done = {}, threading.Event()
        with self._hand_over_lock:
            self._hand_over.append((function, box, done))
        self._hand_over_guard.trigger()
        if not done.wait(HAND_OVER_TIMEOUT):
            raise InputError('the node did not get to the request (overloaded?)')
        if 'error' in box:
            raise box['error']
        return box['value']

    def _run_handed_over(self):
        with self._hand_over_lock:
            tasks, self._hand_over = self._hand_over, []
        for function, box, done in tasks:
            try:
                box['value'] = function()
            except Exception as err:  # noqa: B902 - re-raised in the task's thread
                box['error'] = err
            done.set()

    # -- payload -------------------------------------------------------------------------------
    def _snapshot(self):
        """Return (model, friction on, copy of the window), taken in the node's group."""
        processor = self.node.processor
        if processor is None:
            return None, False, None
        return processor.snapshot()

    def estimate_payload_callback(self, request, response):
        """Estimate the payload on a link from the window; with ``apply``, set it."""
        try:
            model, friction, window = self._in_node_group(self._snapshot)
        except DenocError as err:
            response.success, response.message = False, str(err)
            return response
        if window is None:
            response.success, response.message = False, 'no robot model loaded yet'
            return response
        estimate = estimate_payload_response(request, response, window, model, friction)
        if estimate is None or not request.apply:
            return response
        try:
            total = self._in_node_group(lambda: self._apply_estimate(model, estimate))
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
    def _trajectory_task(self, service, request, response):
        node = self.node
        model, friction = node.model, node.settings.friction  # immutable: no copy needed
        if model is None:
            response.success, response.message = False, 'no robot model loaded yet'
            return response
        return service(model, request, response, friction=friction)

    def check_trajectory_callback(self, request, response):
        """Check a trajectory against the effort limits with the current model and payloads."""
        return self._trajectory_task(check_trajectory_service, request, response)

    def retime_trajectory_callback(self, request, response):
        """Retime a path time-optimally under the limits with the current model and payloads."""
        return self._trajectory_task(retime_trajectory_service, request, response)
