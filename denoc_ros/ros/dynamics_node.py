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
Services: ``~/get_mass_matrix``, ``~/get_cartesian_dynamics``, ``~/compute_inverse_dynamics``,
``~/compute_forward_dynamics``, ``~/set_payload``, ``~/reset_external_torques``. Diagnostics on
``/diagnostics``.

This module only converts between messages and arrays; every number comes from the library.
"""

import time

from denoc_ros_interfaces.msg import ContactState
from denoc_ros_interfaces.srv import (ComputeForwardDynamics, ComputeInverseDynamics,
                                      GetCartesianDynamics, GetMassMatrix, SetPayload)
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from geometry_msgs.msg import WrenchStamped
import numpy as np
from rcl_interfaces.msg import (FloatingPointRange, IntegerRange, ParameterDescriptor,
                                SetParametersResult)
from rclpy.duration import Duration
from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ._main import spin_node
from .conversions import all_finite, JointMap
from .. import dynamics
from ..description import read_description
from ..dynamics import cartesian_dynamics
from ..errors import DenocError, InputError
from ..feedforward import EVALUATE_AT, feedforward_terms, predict
from ..friction import JointFriction
from ..observer import ContactMonitor
from ..payload import attach_payload
from ..urdf import load_urdf

NODE_NAME = 'denoc_dynamics'
TERMS = ('gravity', 'coriolis', 'inertia', 'feedforward')
MODEL_PARAMETERS = ('robot_description', 'urdf_path', 'base_link', 'tip_link', 'gravity')
OBSERVER_PARAMETERS = ('observer_gain', 'contact_threshold', 'contact_hysteresis',
                       'contact_frame', 'observer_max_gap', 'friction')


def _descriptor(description, float_range=None, int_range=None, read_only=False):
    """Return a ParameterDescriptor with an optional range."""
    d = ParameterDescriptor(description=description, read_only=read_only)
    if float_range is not None:
        d.floating_point_range = [FloatingPointRange(from_value=float(float_range[0]),
                                                     to_value=float(float_range[1]))]
    if int_range is not None:
        d.integer_range = [IntegerRange(from_value=int_range[0], to_value=int_range[1], step=1)]
    return d


# name: (default, descriptor); defaults match config/dynamics.yaml
PARAMETERS = {
    'robot_description': ('', _descriptor('URDF XML of the robot (first choice)')),
    'urdf_path': ('', _descriptor('URDF or .xacro file, or bundled robot name (second choice)')),
    'base_link': ('', _descriptor('base of the modelled chain; empty: the URDF root')),
    'tip_link': ('', _descriptor('tip of the modelled chain; empty: the whole tree')),
    'gravity': ([0.0, 0.0, -9.81], _descriptor('gravity in the base frame [m/s^2], 3 values')),
    # declared by type: an empty list has none of its own (rclpy would make it a byte array)
    'command_joints': (Parameter.Type.STRING_ARRAY,
                       _descriptor('joint order of ~/effort_command; unset: model order')),
    'feedforward_state': ('desired', _descriptor(
        'evaluate M, C and g at the "desired" (reference) or "measured" state')),
    'reference_timeout': (0.5, _descriptor(
        'a reference older than this [s] is ignored; 0: never expires', (0.0, 3600.0))),
    'prediction_horizon': (0.01, _descriptor(
        'time_from_start of ~/prediction [s]; 0: the present accelerations', (0.0, 10.0))),
    'prediction_substeps': (1, _descriptor(
        'Runge-Kutta steps over the prediction horizon', int_range=(1, 1000))),
    'friction': (False, _descriptor(
        'add the URDF joint friction (<dynamics damping friction>: viscous + Coulomb) to '
        '~/feedforward_torques and ~/effort_command, subtract it in ~/prediction')),
    'observer_gain': (50.0, _descriptor(
        'K_O [1/s] of the momentum observer of external torques (time constant 1/K_O); 0: off',
        (0.0, 1e4))),
    'contact_threshold': ([5.0], _descriptor(
        '|tau_ext| above which a joint is in contact [N m or N]: one value or one per joint')),
    'contact_hysteresis': (0.2, _descriptor(
        'a joint leaves contact below (1 - hysteresis) x its threshold', (0.0, 0.99))),
    'contact_frame': ('', _descriptor(
        'link at whose origin ~/external_wrench is estimated; empty: the tip')),
    'observer_max_gap': (0.1, _descriptor(
        'a gap between joint-state stamps longer than this [s] restarts the observer',
        (1e-4, 3600.0))),
    'drain_limit': (10, _descriptor(
        'joint states that queued up which a callback answers after its own, without a trip '
        'through the executor; 0: one per callback', int_range=(0, 1000))),
    'diagnostics_period': (1.0, _descriptor(
        'period of /diagnostics [s]', (0.05, 60.0), read_only=True)),
}


class Settings:
    """The node's validated parameter values (everything but the model)."""

    def __init__(self, values, joint_names=None):
        self.feedforward_state = values['feedforward_state']
        if self.feedforward_state not in EVALUATE_AT:
            raise InputError(f'feedforward_state is {self.feedforward_state!r}; '
                             f'choose one of {", ".join(EVALUATE_AT)}')
        self.reference_timeout = float(values['reference_timeout'])
        self.prediction_horizon = float(values['prediction_horizon'])
        self.prediction_substeps = int(values['prediction_substeps'])
        self.drain_limit = int(values['drain_limit'])
        self.friction = bool(values['friction'])
        self.observer_gain = float(values['observer_gain'])
        self.contact_threshold = [float(v) for v in values['contact_threshold']]
        if not self.contact_threshold or not all(np.isfinite(self.contact_threshold)) \
                or min(self.contact_threshold) <= 0.0:
            raise InputError('contact_threshold must be one positive value or one per joint, '
                             f'got {list(values["contact_threshold"])}')
        if joint_names is not None and len(self.contact_threshold) not in (1, len(joint_names)):
            raise InputError(f'contact_threshold has {len(self.contact_threshold)} values; give '
                             f'1 or {len(joint_names)} (one per joint)')
        self.contact_hysteresis = float(values['contact_hysteresis'])
        self.contact_frame = values['contact_frame']
        self.observer_max_gap = float(values['observer_max_gap'])
        gravity = [float(g) for g in values['gravity']]
        if len(gravity) != 3 or not np.all(np.isfinite(gravity)):
            raise InputError(f'gravity must be 3 finite numbers, got {values["gravity"]}')
        self.command_joints = list(values['command_joints'] or [])
        if joint_names is not None:
            unknown = [j for j in self.command_joints if j not in joint_names]
            if unknown:
                raise InputError('command_joints names unknown joint(s): ' + ', '.join(unknown))


class Statistics:
    """Counters for /diagnostics; the per-period ones are reset at each report."""

    def __init__(self):
        self.received = self.published = self.invalid = self.backwards = 0
        self.period_received = self.period_invalid = self.period_backwards = 0
        self.last_stamp = None
        self.compute_sum = self.compute_max = 0.0
        self.computed = 0
        self.last_error = ''

    def bad_input(self, reason):
        """Count an input that was dropped, keeping its reason."""
        self.invalid += 1
        self.period_invalid += 1
        self.last_error = reason

    def check_stamp(self, stamp):
        """Count a stamp older than the previous one (a clock reset or a bag loop)."""
        t = stamp.sec + 1e-9 * stamp.nanosec
        older = self.last_stamp is not None and t < self.last_stamp
        if older:
            self.backwards += 1
            self.period_backwards += 1
            self.last_error = f'joint state stamp {t:.9f} s is older than {self.last_stamp:.9f} s'
        self.last_stamp = t
        return older

    def compute_time(self, seconds):
        """Record the time one message took."""
        self.computed += 1
        self.compute_sum += seconds
        self.compute_max = max(self.compute_max, seconds)

    def end_period(self):
        """Reset the per-period counters."""
        self.period_received = self.period_invalid = self.period_backwards = 0
        self.compute_sum = self.compute_max = 0.0
        self.computed = 0


class DynamicsNode(Node):
    """Publish gravity, Coriolis and inertia torques and predictions for every joint state."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        for name, (default, descriptor) in PARAMETERS.items():
            self.declare_parameter(name, default, descriptor)
        self.settings = Settings(self._parameter_values())

        self.model = None           # the model in use: base model + payloads
        self._base_model = None     # as loaded from the description
        self._payloads = {}         # link -> (mass, com, inertia)
        self._joint_map = None
        self._command_index = None
        self._latest = None         # (q, qd, effort or None) of the last valid joint state
        self._reference = None      # ((q_d, qd_d, qdd_d), receive time)
        self._friction = None       # JointFriction of the base model when `friction` is on
        self._monitor = None        # ContactMonitor (momentum observer) when observer_gain > 0
        self._observer_note = 'no joint state yet'
        self.stats = Statistics()
        self._last_report = time.monotonic()

        # The outputs carry no QoS event handlers: each would be one more entity in the
        # executor's wait set, which it rebuilds for every message (14 of them cost about 65 us
        # per round trip). A subscriber asking for an incompatible QoS still warns on its side.
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

        values = self._parameter_values()
        source = self._description_from_parameters(values)
        if source is not None:
            model = self._build_model(source, values)
            self.settings = Settings(values, model.joint_names)
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
        # No QoS event handlers here either (see the publishers): a best-effort, volatile
        # subscription with default deadline and liveliness is compatible with every publisher.
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
        self.add_on_set_parameters_callback(self.parameters_callback)
        self.create_timer(float(self.get_parameter('diagnostics_period').value),
                          self.diagnostics_callback)

    # -- model ---------------------------------------------------------------------------------
    def _parameter_values(self, overrides=()):
        values = {name: self.get_parameter_or(name, Parameter(name)).value
                  for name in PARAMETERS}
        values.update({p.name: p.value for p in overrides})
        return values

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

    def _install_model(self, base_model):
        """Use a new base model (payloads are cleared: their links may be gone)."""
        self._base_model = self.model = base_model
        if self._payloads:
            self.get_logger().warning('new robot model: payloads removed')
        self._payloads = {}
        self._joint_map = JointMap(base_model.joint_names)
        self._set_command_order(self.settings.command_joints)
        self._set_friction()
        self._set_monitor('new robot model')
        self._latest = None
        self._reference = None
        self._warm_up()
        self.get_logger().info(f'model {base_model.name!r}: {base_model.dof} joints '
                               f'({", ".join(base_model.joint_names)})')

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
        self._friction = JointFriction(self._base_model) if self.settings.friction else None
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
            self.settings = Settings(values, model.joint_names)
            self._install_model(model)
        except DenocError as err:
            self.stats.bad_input(f'robot_description rejected: {err}')
            self.get_logger().error(f'robot_description rejected: {err}')

    def parameters_callback(self, parameters):
        """Validate runtime parameter changes; a new model is built before it is accepted."""
        values = self._parameter_values(parameters)
        try:
            changed = {p.name for p in parameters}
            joint_names = self.model.joint_names if self.model is not None else None
            new_model = None
            if changed & set(MODEL_PARAMETERS):
                source = self._description_from_parameters(values)
                if source is None:
                    raise InputError('robot_description and urdf_path cannot both be empty')
                new_model = self._build_model(source, values)
                joint_names = new_model.joint_names
            settings = Settings(values, joint_names)
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

        The rclpy executor rebuilds its wait set over every entity of the node (its 12 services
        with the parameter services, subscriptions, timer and event handlers) for each message
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
            terms = feedforward_terms(self.model, q, qd, desired,
                                      self.settings.feedforward_state)
        except DenocError as err:  # e.g. overflow at an absurd velocity
            self._reject(f'joint state dropped: {err}')
            return
        self._latest = (q, qd, effort)  # the services' "latest joint state"
        # the state the terms are taken at (see feedforward_terms): measured, or desired
        at_measured = desired is None or self.settings.feedforward_state == 'measured'
        total = terms.total
        friction = self._friction
        if friction is not None:
            total += friction(qd if at_measured else desired[1])
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
        stamp = header.stamp.sec + 1e-9 * header.stamp.nanosec
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

    def reset_external_torques_callback(self, request, response):
        """Re-zero the momentum observer (std_srvs/Trigger)."""
        if self._monitor is None:
            response.success = False
            response.message = ('the observer is off (observer_gain 0)' if self.model else
                                'no robot model loaded yet')
            return response
        self._monitor.reset('reset_external_torques service')
        self._observer_note = 'reset by the service; restarts at the next joint state'
        response.success, response.message = True, 'external torque observer re-zeroed'
        return response

    def _publish_prediction(self, header, q, qd, effort):
        horizon = self.settings.prediction_horizon
        applied = effort
        if self._friction is not None:
            # friction at the measured velocity, held over the horizon like the effort
            applied = effort - self._friction(qd)
        try:
            q_h, qd_h, qdd_h = predict(self.model, q, qd, applied, horizon,
                                       self.settings.prediction_substeps)
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

    # -- services --------------------------------------------------------------------------------
    def _request_state(self, positions, velocities=None):
        """Return (q, qd) from a request: empty arrays mean the latest joint state."""
        if self.model is None:
            raise InputError('no robot model loaded yet')
        q = self._state_vector(positions, 'positions', 0)
        qd = self._state_vector(velocities, 'velocities', 1) if velocities is not None else None
        return q, qd

    def _state_vector(self, values, what, index):
        if len(values) == 0:
            if self._latest is None:
                raise InputError(f'{what} empty and no joint state received yet')
            if self._latest[index] is None:
                raise InputError(f'{what} empty and the latest joint state has no {what}')
            return self._latest[index]
        v = np.asarray(values, dtype=float)
        if v.shape != (self.model.dof,):
            raise InputError(f'{what} has {v.size} values; the model has {self.model.dof} '
                             f'joints ({", ".join(self.model.joint_names)})')
        if not np.all(np.isfinite(v)):
            raise InputError(f'{what}[{int(np.flatnonzero(~np.isfinite(v))[0])}] is not finite')
        return v

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
            r.mass_matrix = dynamics.mass_matrix(self.model, q).ravel().tolist()
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
            g = dynamics.gravity_torques(self.model, q)
            c = dynamics.coriolis_torques(self.model, q, qd)
            tau = dynamics.inverse_dynamics(self.model, q, qd, qdd)
            r.joint_names = list(self.model.joint_names)
            r.effort, r.gravity, r.coriolis = tau.tolist(), g.tolist(), c.tolist()
            r.inertia = (tau - c - g).tolist()
        return self._answer(response, fill)

    def compute_forward_dynamics_callback(self, request, response):
        """Answer qdd = FD(q, qd, effort)."""
        def fill(r):
            q, qd = self._request_state(request.positions, request.velocities)
            effort = self._state_vector(request.efforts, 'efforts', 2)
            r.accelerations = dynamics.forward_dynamics(self.model, q, qd, effort).tolist()
            r.joint_names = list(self.model.joint_names)
        return self._answer(response, fill)

    def set_payload_callback(self, request, response):
        """Attach (mass > 0) or remove (mass 0) the payload of a link and rebuild the model."""
        def fill(r):
            if self.model is None:
                raise InputError('no robot model loaded yet')
            link = request.link or self.model.tip_link
            self.model.frame(link)  # InputError naming an unknown link
            p = request.payload
            inertia = np.array([[p.ixx, p.ixy, p.ixz], [p.ixy, p.iyy, p.iyz],
                                [p.ixz, p.iyz, p.izz]])
            payloads = dict(self._payloads)
            if p.m == 0.0 and not np.any(inertia):
                payloads.pop(link, None)
            else:
                payloads[link] = (p.m, [p.com.x, p.com.y, p.com.z], inertia)
            model = self._base_model
            for name, (mass, com, tensor) in payloads.items():
                model = attach_payload(model, name, mass, com, tensor)
            self._payloads, self.model = payloads, model
            self._set_monitor(f'payload changed on {link}')
            r.link = link
            r.total_mass = float(np.sum(model.mass))
            self.get_logger().info(f'payload on {link}: {p.m} kg; moving mass now '
                                   f'{r.total_mass:.3f} kg')
        return self._answer(response, fill)

    # -- diagnostics -----------------------------------------------------------------------------
    def diagnostics_callback(self):
        """Publish one DiagnosticStatus: model, joints, input rate, compute time, bad inputs."""
        now = time.monotonic()
        period = max(now - self._last_report, 1e-9)
        self._last_report = now
        s = self.stats
        status = DiagnosticStatus(name=f'{self.get_name()}: dynamics',
                                  hardware_id=self.model.name if self.model else '')
        if self.model is None:
            status.level, status.message = DiagnosticStatus.ERROR, 'no robot model'
        elif s.period_invalid:
            status.level = DiagnosticStatus.WARN
            status.message = f'{s.period_invalid} invalid input(s): {s.last_error}'
        elif s.period_backwards:
            status.level = DiagnosticStatus.WARN
            status.message = f'{s.period_backwards} joint state stamp(s) went backwards'
        elif s.period_received == 0:
            status.level, status.message = DiagnosticStatus.WARN, 'no joint states'
        else:
            status.level, status.message = DiagnosticStatus.OK, 'publishing'
        mean = s.compute_sum / s.computed if s.computed else 0.0
        values = {
            'model_loaded': self.model is not None,
            'robot': self.model.name if self.model else '',
            'joints': ', '.join(self.model.joint_names) if self.model else '',
            'payload_links': ', '.join(sorted(self._payloads)),
            'joint_states_received': s.received,
            'input_rate_hz': f'{s.period_received / period:.1f}',
            'published': s.published,
            'invalid_inputs': s.invalid,
            'stamps_backwards': s.backwards,
            'compute_time_mean_ms': f'{1e3 * mean:.3f}',
            'compute_time_max_ms': f'{1e3 * s.compute_max:.3f}',
            'reference_active': self._active_reference() is not None,
            'friction': self._friction_text(),
            'external_torques': self._observer_note,
            'observer_restarts': self._monitor.observer.resets if self._monitor else 0,
            'in_contact': bool(self._monitor.detector.in_contact) if self._monitor else False,
            'last_error': s.last_error,
        }
        status.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self._diagnostics_pub.publish(array)
        s.end_period()


def main(args=None):
    """Run the node until shutdown."""
    return spin_node(DynamicsNode, NODE_NAME, args)


if __name__ == '__main__':
    import sys
    sys.exit(main())
