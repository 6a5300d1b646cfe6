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
The dynamics node ``denoc_dynamics``: joint_states in; feed-forward torques, predictions out.

Robot description: the ``robot_description`` parameter, else ``urdf_path`` (a URDF or ``.xacro``
file, or the name of a bundled robot such as ``panda``), else the ``/robot_description`` topic
(transient local, as robot_state_publisher publishes it; a new description rebuilds the model).

For every joint state it publishes, stamped like the input: ``~/gravity_torques``,
``~/coriolis_torques``, ``~/inertia_torques``, ``~/feedforward_torques`` (sensor_msgs/JointState,
names + effort) and ``~/effort_command`` (std_msgs/Float64MultiArray in ``command_joints`` order);
with a recent ``~/reference`` the terms are the computed-torque feed-forward at the desired state
(see :mod:`denoc_ros.feedforward`). With measured efforts it also publishes ``~/prediction``.
With the ``friction`` parameter on, the URDF's joint friction (viscous + smoothed Coulomb) is
added to ``~/feedforward_torques`` and ``~/effort_command``, at the velocity of the state the
terms are evaluated at, and subtracted from the measured efforts of the prediction; the
gravity, Coriolis and inertia topics stay rigid-body terms.
With measured efforts and ``observer_gain`` > 0 the momentum observer
(:class:`denoc_ros.observer.ContactMonitor`) estimates the external joint torques:
``~/external_torques`` (JointState, effort = tau_ext with ``M qdd + C qd + g = tau + tau_ext``),
``~/contact`` (denoc_ros_interfaces/ContactState: per-joint thresholds with hysteresis) and
``~/external_wrench`` (WrenchStamped at ``contact_frame``'s origin, in its axes); the service
``~/reset_external_torques`` (std_srvs/Trigger) re-zeroes it, and a new model, a payload change,
a gap or a backward stamp restart it (reported in diagnostics).
An output topic without subscribers is skipped (not serialized; no prediction is integrated).
Services (:mod:`~denoc_ros.ros.dynamics_services`): ``~/get_mass_matrix``, ``~/get_cartesian_
dynamics``, ``~/compute_inverse_dynamics``, ``~/compute_forward_dynamics``, ``~/set_payload``,
``~/reset_external_torques``; in their own thread (:mod:`~denoc_ros.ros.task_services`):
``~/estimate_payload`` (over the last ``payload_window`` s of joint states with efforts),
``~/check_trajectory``, ``~/retime_trajectory``. Diagnostics on ``/diagnostics``
(:mod:`denoc_ros.ros.diagnostics`, with the model's load warnings). Parameters: the table
:data:`denoc_ros.ros.settings.DYNAMICS_PARAMETERS` (an integer where a double is expected and
one number for ``contact_threshold`` are fine).

This module only converts between messages and arrays; every number comes from the library.
"""

import time

from denoc_ros_interfaces.msg import ContactState, Payloads
from denoc_ros_interfaces.srv import (ComputeForwardDynamics, ComputeInverseDynamics,
                                      GetCartesianDynamics, GetMassMatrix, SetPayload)
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Inertia, WrenchStamped
import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.duration import Duration
from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from . import settings as parameters
from ._main import spin_node
from .conversions import all_finite, JointMap, stamp_seconds
from .diagnostics import dynamics_status, model_warnings, Statistics
from .dynamics_services import DynamicsServices
from .settings import (DYNAMICS_PARAMETERS, DynamicsSettings, MODEL_PARAMETERS,
                       OBSERVER_PARAMETERS)
from .task_services import task_executor, TaskServices
from ..description import read_description
from ..errors import DenocError, InputError
from ..feedforward import EVALUATE_AT, feedforward_terms, predict
from ..friction import JointFriction
from ..observer import ContactMonitor
from ..payload import attached_payloads, base_model
from ..urdf import load_urdf

NODE_NAME = 'denoc_dynamics'
TERMS = ('gravity', 'coriolis', 'inertia', 'feedforward')


class DynamicsNode(DynamicsServices, TaskServices, Node):
    """Publish gravity, Coriolis and inertia torques and predictions for every joint state."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        values = parameters.declare(self, DYNAMICS_PARAMETERS)
        self.settings = DynamicsSettings(values)

        self.model = None           # the model in use: as loaded + payloads (denoc_ros.payload)
        self._joint_map = None
        self._command_index = None
        self._latest = None         # (q, qd, effort or None) of the last valid joint state
        self._reference = None      # ((q_d, qd_d, qdd_d), receive time)
        self._friction = None       # JointFriction of the base model when `friction` is on
        self._monitor = None        # ContactMonitor (momentum observer) when observer_gain > 0
        self._observer_note = 'no joint state yet'
        self.stats = Statistics()
        self._last_report = time.monotonic()

        # No QoS event handlers on the outputs: each is one more entity in the executor's wait
        # set, rebuilt for every message (14 cost about 65 us per round trip).
        quiet = PublisherEventCallbacks(use_default_callbacks=False)

        def publisher(message_type, topic):
            return self.create_publisher(message_type, topic, 10, event_callbacks=quiet)
        self._pub = {term: publisher(JointState, f'~/{term}_torques') for term in TERMS}
        self._command_pub = publisher(Float64MultiArray, '~/effort_command')
        self._prediction_pub = publisher(JointTrajectory, '~/prediction')
        self._diagnostics_pub = publisher(DiagnosticArray, '/diagnostics')
        self._external_pub = publisher(JointState, '~/external_torques')
        self._wrench_pub = publisher(WrenchStamped, '~/external_wrench')
        self._contact_pub = publisher(ContactState, '~/contact')
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        # the payloads held now, for the trajectory gate (and anyone): on every change
        self._payloads_pub = self.create_publisher(Payloads, '~/payloads', latched)

        source = self._description_from_parameters(values)
        if source is not None:
            model = self._build_model(source, values)
            self.settings = DynamicsSettings(values, model.joint_names)
            self._install_model(model)
        else:
            latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                                 durability=DurabilityPolicy.TRANSIENT_LOCAL)
            self.create_subscription(String, '/robot_description',
                                     self.robot_description_callback, latched)
            self.get_logger().info('no robot_description or urdf_path parameter: waiting for '
                                   'a URDF on /robot_description')

        # best effort receives from reliable and best-effort publishers alike; the queue holds
        # a burst of messages (qos_profile_sensor_data keeps only 5)
        joint_state_qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT,
                                     durability=DurabilityPolicy.VOLATILE)
        # No QoS event handlers here either: best effort, volatile suits every publisher.
        self._joint_state_sub = self.create_subscription(
            JointState, 'joint_states', self.joint_state_callback, joint_state_qos,
            event_callbacks=SubscriptionEventCallbacks(use_default_callbacks=False))
        self.create_subscription(JointTrajectory, '~/reference', self.reference_callback, 10)
        self.create_service(GetMassMatrix, '~/get_mass_matrix', self.get_mass_matrix_callback)
        self.create_service(GetCartesianDynamics, '~/get_cartesian_dynamics',
                            self.get_cartesian_dynamics_callback)
        self.create_service(ComputeInverseDynamics, '~/compute_inverse_dynamics',
                            self.compute_inverse_dynamics_callback)
        self.create_service(ComputeForwardDynamics, '~/compute_forward_dynamics',
                            self.compute_forward_dynamics_callback)
        self.create_service(SetPayload, '~/set_payload', self.set_payload_callback)
        self.create_service(Trigger, '~/reset_external_torques',
                            self.reset_external_torques_callback)
        self._create_task_services()
        self.add_on_set_parameters_callback(self.parameters_callback)
        self.create_timer(values['diagnostics_period'], self.diagnostics_callback)

    # -- model ---------------------------------------------------------------------------------
    def _parameter_values(self, overrides=()):
        """Return every parameter's coerced value, ``overrides`` (Parameters) taking precedence."""
        return parameters.values(self, DYNAMICS_PARAMETERS, overrides)

    @staticmethod
    def _description_from_parameters(values):
        if values['robot_description']:
            return values['robot_description']
        if values['urdf_path']:
            return read_description(values['urdf_path'])
        return None

    @staticmethod
    def _build_model(source, values):
        return load_urdf(source, base_link=values['base_link'] or None,
                         tip_link=values['tip_link'] or None, gravity=values['gravity'])

    def _install_model(self, model):
        """Use a newly loaded model (payloads are cleared: their links may be gone)."""
        if self.model is not None and attached_payloads(self.model):
            self.get_logger().warning('new robot model: payloads removed')
        self.model = model
        for warning in model_warnings(model):
            self.get_logger().warning(f'robot model: {warning}')
        self._joint_map = JointMap(model.joint_names)
        self._set_command_order(self.settings.command_joints)
        self._set_friction()
        self._set_monitor('new robot model')
        self._reset_payload_window()
        self._latest = None
        self._reference = None
        self._warm_up()
        self.publish_payloads()
        self.get_logger().info(f'model {model.name!r}: {model.dof} joints '
                               f'({", ".join(model.joint_names)})')

    def _warm_up(self):
        """Run the per-message computations once, so compilation is not paid by a message."""
        zero = np.zeros(self.model.dof)
        for mode in EVALUATE_AT:
            feedforward_terms(self.model, zero, zero, (zero, zero, zero), mode)
        feedforward_terms(self.model, zero, zero)
        predict(self.model, zero, zero, zero, self.settings.prediction_horizon,
                self.settings.prediction_substeps)

    def _set_friction(self):
        """Take the friction coefficients of the base model's URDF, or none when off."""
        was_on = self._friction is not None
        self._friction = (JointFriction(base_model(self.model)) if self.settings.friction
                          else None)
        if self._friction is not None and not self._friction.nonzero:
            self.get_logger().warning('friction is on, but the URDF gives no joint <dynamics '
                                      'damping friction>: it adds nothing')
        elif self._friction is not None or was_on:
            self.get_logger().info('friction ' + self._friction_text())

    def _set_monitor(self, reason):
        """(Re)build the momentum observer for the model in use; ``reason`` for diagnostics."""
        settings = self.settings
        if self.model is None or settings.observer_gain <= 0.0:
            self._monitor = None
            self._observer_note = 'off (observer_gain 0)'
            return
        self._monitor = ContactMonitor(
            self.model, settings.observer_gain, settings.contact_threshold,
            settings.contact_hysteresis, settings.contact_frame or None, self._friction,
            settings.observer_max_gap)
        self._monitor.reset(reason)
        self._out_external = JointState(name=list(self.model.joint_names))
        self._contact_msg = ContactState(joint_names=list(self.model.joint_names),
                                         thresholds=self._monitor.thresholds.tolist())
        self._wrench_msg = WrenchStamped()
        self._observer_note = f'waiting for a joint state with efforts ({reason})'

    def publish_payloads(self):
        """Publish the payloads of the model in use on ``~/payloads`` (transient local)."""
        msg = Payloads()
        msg.header.stamp = self.get_clock().now().to_msg()
        for p in attached_payloads(self.model):
            inertia = Inertia(m=float(p.mass))
            inertia.com.x, inertia.com.y, inertia.com.z = (float(c) for c in p.com)
            (inertia.ixx, inertia.ixy, inertia.ixz), (_, inertia.iyy, inertia.iyz) = \
                p.inertia[0].tolist(), p.inertia[1].tolist()
            inertia.izz = float(p.inertia[2, 2])
            msg.links.append(p.link)
            msg.payloads.append(inertia)
        self._payloads_pub.publish(msg)

    def _friction_text(self):
        return 'on (viscous+Coulomb from the URDF)' if self._friction is not None else 'off'

    def _set_command_order(self, command_joints):
        """Set the effort-command joint order and the preallocated output messages."""
        names = command_joints or list(self.model.joint_names)
        self._command_joints = names
        self._command_index = np.array([self.model.joint_names.index(j) for j in names])
        self._out = {term: JointState(name=list(self.model.joint_names)) for term in TERMS}
        n = len(names)
        self._command_msg = Float64MultiArray()
        self._command_msg.layout.dim = [MultiArrayDimension(label='joints', size=n, stride=n)]
        self._prediction_msg = JointTrajectory(joint_names=list(self.model.joint_names),
                                               points=[JointTrajectoryPoint()])

    def robot_description_callback(self, msg):
        """Build (or rebuild) the model from a URDF published on /robot_description."""
        try:
            values = self._parameter_values()
            model = self._build_model(msg.data, values)
            self.settings = DynamicsSettings(values, model.joint_names)
            self._install_model(model)
        except DenocError as err:
            self.stats.bad_input(f'robot_description rejected: {err}')
            self.get_logger().error(f'robot_description rejected: {err}')

    def parameters_callback(self, parameters):
        """Validate runtime parameter changes; a new model is built before it is accepted."""
        try:
            values = self._parameter_values(parameters)
            changed = {p.name for p in parameters}
            joint_names = self.model.joint_names if self.model is not None else None
            new_model = None
            if changed & set(MODEL_PARAMETERS):
                source = self._description_from_parameters(values)
                if source is None:
                    raise InputError('robot_description and urdf_path cannot both be empty')
                new_model = self._build_model(source, values)
                joint_names = new_model.joint_names
            settings = DynamicsSettings(values, joint_names)
            model = new_model or self.model
            if model is not None and settings.contact_frame:
                model.frame(settings.contact_frame)  # InputError naming an unknown link
        except DenocError as err:
            return SetParametersResult(successful=False, reason=str(err))
        self.settings = settings
        if new_model is not None:
            self._install_model(new_model)
        elif self.model is not None:
            self._set_command_order(settings.command_joints)
            if 'friction' in changed:
                self._set_friction()
            if changed & set(OBSERVER_PARAMETERS):
                self._set_monitor('observer parameters changed')
        return SetParametersResult(successful=True)

    # -- topics ----------------------------------------------------------------------------------
    def joint_state_callback(self, msg):
        """
        Answer a joint state, then up to ``drain_limit`` more that queued up meanwhile.

        The rclpy executor rebuilds its wait set over every entity of the node for each message
        it hands over, about 0.2 ms of Python per message. Taking the queued messages here
        instead answers a backlog (after the process was descheduled, say) at the cost of the
        computation alone; the bound keeps services and timers (and other nodes sharing the
        executor) served under a sustained overload.
        """
        self._answer_joint_state(msg)
        subscription = self._joint_state_sub
        handle = subscription.handle
        for _ in range(self.settings.drain_limit):
            with handle:
                taken = handle.take_message(subscription.msg_type, subscription.raw)
            if taken is None:
                return
            self._answer_joint_state(taken[0])

    def _answer_joint_state(self, msg):
        """Compute and publish the feed-forward terms (and a prediction) for one joint state."""
        self.stats.received += 1
        self.stats.period_received += 1
        if self.model is None:
            self.stats.bad_input('joint state before any robot model')
            return
        start = time.perf_counter()
        try:
            q = self._joint_map.gather(msg.name, msg.position, 'positions', required=True)
            qd = self._joint_map.gather(msg.name, msg.velocity, 'velocities')
            effort = (self._joint_map.gather(msg.name, msg.effort, 'efforts')
                      if len(msg.effort) else None)
        except DenocError as err:
            self._reject(f'joint state dropped: {err}')
            return
        if self.stats.check_stamp(msg.header.stamp):
            self.get_logger().warning(self.stats.last_error + ' (computed all the same)',
                                      throttle_duration_sec=2.0)
        desired = self._active_reference()
        try:
            # friction, when on, at the velocity of the state the terms are taken at
            terms = feedforward_terms(self.model, q, qd, desired,
                                      self.settings.feedforward_state, self._friction)
        except DenocError as err:  # e.g. overflow at an absurd velocity
            self._reject(f'joint state dropped: {err}')
            return
        self._latest = (q, qd, effort)  # the services' "latest joint state"
        self._record_payload_sample(msg.header.stamp, q, qd, effort)  # if efforts: a window
        total = terms.total
        # one check covers all terms: a NaN or inf in any term makes their sum non-finite
        if not all_finite(total.tolist()):
            self._reject('non-finite torques at this state: nothing published')
            return
        # A topic nobody subscribes to is not serialized (a publish costs 5-8 us).
        for term, value in (('gravity', terms.gravity), ('coriolis', terms.coriolis),
                            ('inertia', terms.inertia), ('feedforward', total)):
            publisher = self._pub[term]
            if publisher.get_subscription_count():
                out = self._out[term]  # preallocated: only the stamp and the efforts change
                out.header = msg.header
                out.effort = value.tolist()
                publisher.publish(out)
        if self._command_pub.get_subscription_count():
            self._command_msg.data = total[self._command_index].tolist()
            self._command_pub.publish(self._command_msg)
        if effort is not None and self._prediction_pub.get_subscription_count():
            self._publish_prediction(msg.header, q, qd, effort)
        if self._monitor is not None:
            # g(q) of the feed-forward is the observer's when taken at the measured state
            at_measured = desired is None or self.settings.feedforward_state == 'measured'
            self._observe(msg.header, q, qd, effort, terms.gravity if at_measured else None)
        self.stats.published += 1
        self.stats.compute_time(time.perf_counter() - start)

    def _observe(self, header, q, qd, effort, gravity=None):
        """Update the momentum observer and publish tau_ext, the contact and the wrench."""
        monitor = self._monitor
        if effort is None:
            self._observer_note = 'no external torques: the joint states carry no efforts'
            if monitor.observer.initialized:
                monitor.reset('joint states without efforts')
            return
        stamp = stamp_seconds(header.stamp)  # seconds, as observer_max_gap
        resets = monitor.observer.resets
        try:
            r, flags = monitor.update(stamp, q, qd, effort, gravity)
        except DenocError as err:
            monitor.reset(f'observer error: {err}')
            self._reject(f'no external torques: {err}')
            return
        if monitor.observer.resets != resets:
            self._observer_note = f'(re)started: {monitor.observer.reason}'
            if resets:  # a restart after the first one: a gap, a backward stamp
                self.get_logger().warning(f'external torque observer restarted: '
                                          f'{monitor.observer.reason}',
                                          throttle_duration_sec=2.0)
        torques = r.tolist()
        if not all_finite(torques):
            monitor.reset('non-finite estimate')
            self._reject('external torque estimate not finite: observer restarted')
            return
        if self._external_pub.get_subscription_count():
            out = self._out_external
            out.header = header
            out.effort = torques
            self._external_pub.publish(out)
        if self._contact_pub.get_subscription_count():
            contact = self._contact_msg
            contact.header = header
            contact.in_contact = bool(flags.any())
            contact.external_torques = torques
            contact.joint_in_contact = flags.tolist()
            contact.max_ratio = monitor.detector.ratio(r)
            self._contact_pub.publish(contact)
        if self._wrench_pub.get_subscription_count():
            try:
                w = monitor.wrench(q).tolist()
            except DenocError as err:
                self._reject(f'no external wrench: {err}')
                return
            if all_finite(w):
                out = self._wrench_msg
                out.header.stamp = header.stamp
                out.header.frame_id = monitor.frame
                f, m = out.wrench.force, out.wrench.torque
                f.x, f.y, f.z, m.x, m.y, m.z = w
                self._wrench_pub.publish(out)

    def _publish_prediction(self, header, q, qd, effort):
        horizon = self.settings.prediction_horizon
        try:
            # friction (when on) at the measured velocity, held over the horizon like the effort
            q_h, qd_h, qdd_h = predict(self.model, q, qd, effort, horizon,
                                       self.settings.prediction_substeps, self._friction)
        except DenocError as err:
            self._reject(f'no prediction: {err}')
            return
        positions, velocities, accelerations = q_h.tolist(), qd_h.tolist(), qdd_h.tolist()
        if not (all_finite(positions) and all_finite(velocities) and all_finite(accelerations)):
            self._reject('prediction diverged: nothing published')
            return
        out = self._prediction_msg  # preallocated: joint names and one point
        out.header = header
        point = out.points[0]
        point.positions, point.velocities = positions, velocities
        point.accelerations, point.effort = accelerations, effort.tolist()
        point.time_from_start = Duration(seconds=horizon).to_msg()
        self._prediction_pub.publish(out)

    def reference_callback(self, msg):
        """Keep the first point of a reference trajectory as the desired state."""
        if self.model is None:
            return
        try:
            if not msg.points:
                raise InputError('reference has no points')
            point = msg.points[0]
            q_d = self._joint_map.gather(msg.joint_names, point.positions, 'positions',
                                         required=True)
            qd_d = self._joint_map.gather(msg.joint_names, point.velocities, 'velocities')
            qdd_d = self._joint_map.gather(msg.joint_names, point.accelerations,
                                           'accelerations')
        except DenocError as err:
            self._reject(f'reference dropped: {err}')
            return
        self._reference = ((q_d, qd_d, qdd_d), time.monotonic())

    def _active_reference(self):
        if self._reference is None:
            return None
        desired, received = self._reference
        timeout = self.settings.reference_timeout
        if timeout > 0 and time.monotonic() - received > timeout:
            return None
        return desired

    def _reject(self, reason):
        self.stats.bad_input(reason)
        self.get_logger().warning(reason, throttle_duration_sec=2.0)

    # -- diagnostics -----------------------------------------------------------------------------
    def diagnostics_callback(self):
        """Publish one DiagnosticStatus: model, joints, input rate, compute time, bad inputs."""
        now = time.monotonic()
        period = max(now - self._last_report, 1e-9)
        self._last_report = now
        state = {
            'payload_links': ', '.join(sorted({p.link for p in attached_payloads(self.model)}))
            if self.model is not None else '',
            'reference_active': self._active_reference() is not None,
            'friction': self._friction_text(),
            'external_torques': self._observer_note,
            'observer_restarts': self._monitor.observer.resets if self._monitor else 0,
            'in_contact': bool(self._monitor.detector.in_contact) if self._monitor else False,
        }
        status = dynamics_status(f'{self.get_name()}: dynamics', self.model, self.stats, period,
                                 state)
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self._diagnostics_pub.publish(array)
        self.stats.end_period()


def main(args=None):
    """Run the node until shutdown."""
    return spin_node(DynamicsNode, NODE_NAME, args, task_executor)


if __name__ == '__main__':
    import sys
    sys.exit(main())
