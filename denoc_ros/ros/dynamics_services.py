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
The dynamics node's services: M, Cartesian and inverse/forward dynamics, payloads, reset.

:class:`DynamicsServices` serves them for a :class:`denoc_ros.ros.dynamics_node.DynamicsNode`
(which composes it; the state they read is the node's processor's); each callback converts the
request to arrays, calls the library and
answers ``success=false`` with the library's message for a bad request. An empty state vector
in a request means the latest joint state's.
"""

from denoc_ros_interfaces.srv import (ComputeForwardDynamics, ComputeInverseDynamics,
                                      GetCartesianDynamics, GetMassMatrix, SetPayload)
import numpy as np
from std_srvs.srv import Trigger

from ..dynamics import cartesian_dynamics, forward_dynamics, mass_matrix
from ..dynamics._state import joint_vector
from ..errors import DenocError, InputError
from ..feedforward import inverse_dynamics_terms


class DynamicsServices:
    """The service callbacks of the dynamics node ``node`` (composed by it)."""

    def __init__(self, node):
        self.node = node
        for srv_type, name, callback in (
                (GetMassMatrix, '~/get_mass_matrix', self.get_mass_matrix_callback),
                (GetCartesianDynamics, '~/get_cartesian_dynamics',
                 self.get_cartesian_dynamics_callback),
                (ComputeInverseDynamics, '~/compute_inverse_dynamics',
                 self.compute_inverse_dynamics_callback),
                (ComputeForwardDynamics, '~/compute_forward_dynamics',
                 self.compute_forward_dynamics_callback),
                (SetPayload, '~/set_payload', self.set_payload_callback),
                (Trigger, '~/reset_external_torques', self.reset_external_torques_callback)):
            node.create_service(srv_type, name, node.locked(callback))

    @property
    def model(self):
        """Return the node's model in use (None before any)."""
        return self.node.model

    def reset_external_torques_callback(self, request, response):
        """Re-zero the momentum observer (std_srvs/Trigger)."""
        processor = self.node.processor
        if processor is None or processor.observer is None:
            response.success = False
            response.message = ('the observer is off (observer_gain 0)' if processor else
                                'no robot model loaded yet')
            return response
        processor.reset_observer('reset_external_torques service')
        processor.observer_note = 'reset by the service; restarts at the next joint state'
        response.success, response.message = True, 'external torque observer re-zeroed'
        return response

    def _request_state(self, positions, velocities=None):
        """Return (q, qd) from a request: empty arrays mean the latest joint state."""
        if self.model is None:
            raise InputError('no robot model loaded yet')
        q = self._state_vector(positions, 'positions', 0)
        qd = self._state_vector(velocities, 'velocities', 1) if velocities is not None else None
        return q, qd

    def _state_vector(self, values, what, index):
        """Return a request's vector (checked by the library); empty: the latest joint state's."""
        if len(values) == 0:
            latest = self.node.processor.latest
            if latest is None:
                raise InputError(f'{what} empty and no joint state received yet')
            if latest[index] is None:
                raise InputError(f'{what} empty and the latest joint state has no {what}')
            return latest[index]
        return joint_vector(self.model, what, values, configuration=what == 'positions')

    def _answer(self, response, fill):
        """Run ``fill(response)``; on a library error return success=false and the message."""
        try:
            fill(response)
            response.success = True
            response.message = ''
        except DenocError as err:
            response.success = False
            response.message = str(err)
        return response

    def get_mass_matrix_callback(self, request, response):
        """Answer M(q), row-major."""
        def fill(r):
            q, _ = self._request_state(request.positions)
            r.mass_matrix = mass_matrix(self.model, q).ravel().tolist()
            r.joint_names = list(self.model.joint_names)
        return self._answer(response, fill)

    def get_cartesian_dynamics_callback(self, request, response):
        """Answer J, Lambda, mu and p of a frame."""
        def fill(r):
            q, qd = self._request_state(request.positions, request.velocities)
            result = cartesian_dynamics(self.model, q, qd, request.frame or None)
            r.joint_names = list(self.model.joint_names)
            r.frame = result.frame
            r.jacobian = result.jacobian.ravel().tolist()
            r.inertia = result.inertia.ravel().tolist()
            r.coriolis = result.coriolis.tolist()
            r.gravity = result.gravity.tolist()
            r.condition_number = float(result.condition_number)
        return self._answer(response, fill)

    def compute_inverse_dynamics_callback(self, request, response):
        """Answer tau = M qdd + C qd + g and its terms."""
        def fill(r):
            q, qd = self._request_state(request.positions, request.velocities)
            qdd = (self._state_vector(request.accelerations, 'accelerations', None)
                   if len(request.accelerations) else np.zeros(self.model.dof))
            terms = inverse_dynamics_terms(self.model, q, qd, qdd)
            r.joint_names = list(self.model.joint_names)
            r.effort, r.gravity = terms.total.tolist(), terms.gravity.tolist()
            r.coriolis, r.inertia = terms.coriolis.tolist(), terms.inertia.tolist()
        return self._answer(response, fill)

    def compute_forward_dynamics_callback(self, request, response):
        """Answer qdd = FD(q, qd, effort)."""
        def fill(r):
            q, qd = self._request_state(request.positions, request.velocities)
            effort = self._state_vector(request.efforts, 'efforts', 2)
            r.accelerations = forward_dynamics(self.model, q, qd, effort).tolist()
            r.joint_names = list(self.model.joint_names)
        return self._answer(response, fill)

    def set_payload_callback(self, request, response):
        """Attach (mass > 0) or remove (mass 0) the payload of a link and rebuild the model."""
        def fill(r):
            if self.model is None:
                raise InputError('no robot model loaded yet')
            link = request.link or self.model.tip_link  # unknown: InputError naming it
            p = request.payload
            inertia = np.array([[p.ixx, p.ixy, p.ixz], [p.ixy, p.iyy, p.iyz],
                                [p.ixz, p.iyz, p.izz]])
            # the code path ~/estimate_payload's apply takes too (TaskServices)
            model = self.node.set_payload(link, p.m, [p.com.x, p.com.y, p.com.z], inertia)
            r.link = link
            r.total_mass = float(np.sum(model.mass))
            self.node.get_logger().info(f'payload on {link}: {p.m} kg; moving mass now '
                                        f'{r.total_mass:.3f} kg')
        return self._answer(response, fill)
