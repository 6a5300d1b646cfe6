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

The node converts messages and publishes; every number, and all that the node keeps between
joint states (model and payloads, friction, observer, reference, payload window, counters),
comes from one :class:`denoc_ros.processor.DynamicsProcessor`, which a joint state passes
through as arrays: one compiled pass per state (:func:`denoc_ros.compute_all_terms`).

For every joint state it publishes, stamped like the input: ``~/gravity_torques``,
``~/coriolis_torques``, ``~/inertia_torques``, ``~/feedforward_torques`` (sensor_msgs/JointState,
names + effort), ``~/effort_command`` (std_msgs/Float64MultiArray in ``command_joints`` order)
and ``~/dynamics_state`` (denoc_ros_interfaces/DynamicsState: all of it in one message); with a
recent ``~/reference`` the terms are the computed-torque feed-forward at the desired state (see
:mod:`denoc_ros.feedforward`). With measured efforts it also publishes ``~/prediction``, and
with ``observer_gain`` > 0 the momentum observer's ``~/external_torques``, ``~/contact`` and
``~/external_wrench``; ``~/reset_external_torques`` (std_srvs/Trigger) re-zeroes it, and a new
model, a payload change, a gap or a backward stamp restart it (reported in diagnostics). An
output topic without subscribers is skipped (:mod:`denoc_ros.ros.dynamics_outputs`). The
payloads held now go out on ``~/payloads`` (transient local) whenever they change. With
``contact_localization`` the collision geometry of the same description is loaded
(:func:`denoc_ros.load_collision_geometry`, ``package://`` through the ament index) and, while in
contact, the touched link, point and force go to ``~/contact_location`` and RViz markers to
``~/contact_markers`` (:mod:`~denoc_ros.ros.dynamics_outputs`).
Services (:mod:`~denoc_ros.ros.dynamics_services`): ``~/get_mass_matrix``, ``~/get_cartesian_
dynamics``, ``~/compute_inverse_dynamics``, ``~/compute_forward_dynamics``, ``~/set_payload``,
``~/reset_external_torques``; in their own thread (:mod:`~denoc_ros.ros.task_services`):
``~/estimate_payload``, ``~/check_trajectory``, ``~/retime_trajectory``. Diagnostics on
``/diagnostics`` (:mod:`denoc_ros.ros.diagnostics`). Parameters: the table
:data:`denoc_ros.ros.settings.DYNAMICS_PARAMETERS`.
"""

import threading
import time
import warnings

from denoc_ros_interfaces.msg import Payloads
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Inertia
from rcl_interfaces.msg import SetParametersResult
from rclpy.event_handler import PublisherEventCallbacks, SubscriptionEventCallbacks
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from trajectory_msgs.msg import JointTrajectory

from . import settings as parameters
from ._main import spin_node
from .conversions import JointMap
from .diagnostics import dynamics_status, model_warnings
from .dynamics_outputs import DynamicsOutputs
from .dynamics_services import DynamicsServices
from .joint_state_thread import batch_middleware_timers, NotInExecutor, SubscriptionThread
from .serialized import JointStateBytes
from .settings import DYNAMICS_PARAMETERS, DynamicsSettings, MODEL_PARAMETERS
from .task_services import task_executor, TaskServices
from ..contact.geometry import load_collision_geometry
from ..description import read_description
from ..errors import DenocError, InputError
from ..processor import DynamicsProcessor, Statistics
from ..resources import resolve_urdf
from ..urdf import load_urdf
from ..warmup import warm_up_processor

NODE_NAME = 'denoc_dynamics'


class DynamicsNode(Node):
    """
    Publish gravity, Coriolis and inertia torques and predictions for every joint state.

    ``joint_state_thread``: serve ``joint_states`` in a thread of its own
    (:class:`~denoc_ros.ros.joint_state_thread.SubscriptionThread`) instead of the executor,
    as the executable does; the executor keeps the services, parameters, the reference and the
    timers. Either way the messages are taken serialized and read in place
    (:class:`~denoc_ros.ros.serialized.JointStateBytes`), and whatever the joint states and the
    executor's callbacks share (the processor, the settings, the outputs) is touched under
    :attr:`state_lock` only.
    """

    def __init__(self, joint_state_thread=False, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self.state_lock = threading.RLock()
        self._reader = JointStateBytes()
        values = parameters.declare(self, DYNAMICS_PARAMETERS)
        self.settings = DynamicsSettings(values)
        self.processor = None        # the DynamicsProcessor of the model in use
        self._joint_map = None
        self._empty_stats = Statistics()  # counters before any model
        self._geometry_source = None      # what the collision geometry is read from
        self._geometry = None             # (source, CollisionGeometry or None, error text)
        self._last_report = time.monotonic()
        self.outputs = DynamicsOutputs(self)
        self._diagnostics_pub = self.create_publisher(
            DiagnosticArray, '/diagnostics', 10,
            event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        # the payloads held now, for the trajectory gate (and anyone): on every change
        self._payloads_pub = self.create_publisher(Payloads, '~/payloads', latched)

        source = self._description_from_parameters(values)
        if source is not None:
            model = self._build_model(source, values)
            self.settings = DynamicsSettings(values, model.joint_names)
            self._geometry_source = self._collision_source(values, source)
            self._install_model(model)
        else:
            self.create_subscription(String, '/robot_description',
                                     self.locked(self.robot_description_callback), latched)
            self.get_logger().info('no robot_description or urdf_path parameter: waiting for '
                                   'a URDF on /robot_description')

        # best effort receives from reliable and best-effort publishers alike; the queue holds
        # a burst of messages (qos_profile_sensor_data keeps only 5)
        joint_state_qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.BEST_EFFORT,
                                     durability=DurabilityPolicy.VOLATILE)
        # No QoS event handlers here either: best effort, volatile suits every publisher.
        # Taken serialized (raw): read in place, never converted to a message object.
        group = NotInExecutor() if joint_state_thread else None
        self._joint_state_sub = self.create_subscription(
            JointState, 'joint_states', self.joint_state_callback, joint_state_qos,
            event_callbacks=SubscriptionEventCallbacks(use_default_callbacks=False), raw=True,
            callback_group=group)
        self.create_subscription(JointTrajectory, '~/reference',
                                 self.locked(self.reference_callback), 10)
        self.service_callbacks = DynamicsServices(self)
        self.task_callbacks = TaskServices(self)
        self.add_on_set_parameters_callback(self.locked(self.parameters_callback))
        self.create_timer(values['diagnostics_period'], self.locked(self.diagnostics_callback))
        self.joint_state_thread = None
        if joint_state_thread:
            self.joint_state_thread = SubscriptionThread(
                self, self._joint_state_sub,
                self.create_guard_condition(lambda: None, callback_group=group),
                self._answer_guarded, name='joint_states')
            self.joint_state_thread.start()

    def locked(self, callback):
        """Return ``callback`` run under :attr:`state_lock` (for the executor's callbacks)."""
        lock = self.state_lock

        def run(*args):
            with lock:
                return callback(*args)
        run.__name__ = getattr(callback, '__name__', 'callback')
        run.__doc__ = callback.__doc__
        return run

    def destroy_node(self):
        """Stop the joint-state thread, then destroy the node."""
        if self.joint_state_thread is not None:
            self.joint_state_thread.stop()
        return super().destroy_node()

    # -- what the services and tests read --------------------------------------------------------
    @property
    def model(self):
        """Return the model in use (with its payloads), None before any."""
        return self.processor.model if self.processor is not None else None

    @property
    def stats(self):
        """Return the counters of /diagnostics."""
        return self.processor.stats if self.processor is not None else self._empty_stats

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
    def _collision_source(values, text):
        """Return what the collision geometry is read from: the URDF file if named, or text."""
        if values['robot_description'] or not values['urdf_path']:
            return text
        try:  # the file itself, so that relative mesh paths resolve beside it
            return str(resolve_urdf(values['urdf_path']))
        except ValueError:
            return text

    def _collision_geometry(self):
        """Return the collision geometry for contact_localization (loaded once per source)."""
        if not self.settings.contact_localization or self._geometry_source is None:
            return None
        source = self._geometry_source
        if self._geometry is not None and self._geometry[0] == source:
            return self._geometry[1]
        logger = self.get_logger()
        start = time.perf_counter()
        geometry, error = None, ''
        try:
            with warnings.catch_warnings():   # said once below, in the node's log
                warnings.simplefilter('ignore')
                geometry = load_collision_geometry(source)
        except Exception as err:  # noqa: B902 - a mesh reader may raise anything: run without
            error = f'collision geometry not loaded: {err}'
            logger.error(f'contact localization: {error}')
        self._geometry = (source, geometry, error)
        if geometry is not None:
            if geometry.warnings:
                logger.warning(f'contact localization: {len(geometry.warnings)} collision '
                               'geometry warning(s) (a shape left out is not located on): '
                               + '; '.join(geometry.warnings))
            points = sum(len(s.points) for s in geometry.surfaces.values())
            logger.info(f'collision geometry: {len(geometry.surfaces)} link(s), {points} surface '
                        f'points, loaded in {time.perf_counter() - start:.2f} s')
        return geometry

    def _localization_note(self):
        """Say once (per configuration) why contact_localization cannot run."""
        p = self.processor
        if self.settings.contact_localization and not p.localizing:
            error = self._geometry[2] if self._geometry else ''
            self.get_logger().warning(f'contact_localization is on, but {p.localization_note}'
                                      + (f' ({error})' if error else ''))

    @staticmethod
    def _build_model(source, values):
        return load_urdf(source, base_link=values['base_link'] or None,
                         tip_link=values['tip_link'] or None, gravity=values['gravity'])

    def _install_model(self, model):
        """Use a newly loaded model (payloads are cleared: their links may be gone)."""
        if self.processor is not None and self.processor.payloads:
            self.get_logger().warning('new robot model: payloads removed')
        stats = self.stats
        self.processor = DynamicsProcessor(model, self.settings.processor_settings(),
                                           self._collision_geometry())
        self.processor.stats = stats  # the counters go on across models
        for warning in model_warnings(model):
            self.get_logger().warning(f'robot model: {warning}')
        self._joint_map = JointMap(model.joint_names)
        self._model_changed()
        warm_up_processor(model, self.processor.settings, self.processor.geometry)
        self._friction_note()
        self._localization_note()
        self.get_logger().info(f'model {model.name!r}: {model.dof} joints '
                               f'({", ".join(model.joint_names)})')

    def _model_changed(self):
        """Rebuild the output messages for the model in use; publish its payloads."""
        processor, settings = self.processor, self.settings
        names = processor.model.joint_names
        command = settings.command_joints or list(names)
        self.outputs.prepare(names, [names.index(j) for j in command],
                             settings.prediction_horizon, processor.contact_frame,
                             processor.model.base_link)
        if processor.observer is not None:
            self.outputs.set_thresholds(processor.detector.thresholds)
        self.publish_payloads()

    def _friction_note(self):
        friction = self.processor.friction
        if friction is not None and not friction.nonzero:
            self.get_logger().warning('friction is on, but the URDF gives no joint <dynamics '
                                      'damping friction>: it adds nothing')
        elif friction is not None:
            self.get_logger().info('friction ' + self._friction_text())

    def _friction_text(self):
        on = self.processor is not None and self.processor.friction is not None
        return 'on (viscous+Coulomb from the URDF)' if on else 'off'

    def set_payload(self, link, mass, com, inertia):
        """Replace (mass > 0) or remove (all zero) a link's payload; restart the observer."""
        model = self.processor.set_payload(link, mass, com, inertia)
        self._model_changed()
        return model

    def publish_payloads(self):
        """Publish the payloads of the model in use on ``~/payloads`` (transient local)."""
        msg = Payloads()
        msg.header.stamp = self.get_clock().now().to_msg()
        for p in self.processor.payloads:
            inertia = Inertia(m=float(p.mass))
            inertia.com.x, inertia.com.y, inertia.com.z = (float(c) for c in p.com)
            (inertia.ixx, inertia.ixy, inertia.ixz), (_, inertia.iyy, inertia.iyz) = \
                p.inertia[0].tolist(), p.inertia[1].tolist()
            inertia.izz = float(p.inertia[2, 2])
            msg.links.append(p.link)
            msg.payloads.append(inertia)
        self._payloads_pub.publish(msg)

    def robot_description_callback(self, msg):
        """Build (or rebuild) the model from a URDF published on /robot_description."""
        try:
            values = self._parameter_values()
            model = self._build_model(msg.data, values)
            self.settings = DynamicsSettings(values, model.joint_names)
            self._geometry_source = msg.data
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
                geometry_source = self._collision_source(values, source)
            settings = DynamicsSettings(values, joint_names)
            model = new_model or self.model
            if model is not None and settings.contact_frame:
                model.frame(settings.contact_frame)  # InputError naming an unknown link
        except DenocError as err:
            return SetParametersResult(successful=False, reason=str(err))
        friction_was = self.settings.friction
        localization_was = (self.settings.contact_localization,
                            self.processor.localization_note if self.processor else None)
        self.settings = settings
        if new_model is not None:
            self._geometry_source = geometry_source
            self._install_model(new_model)
        elif self.processor is not None:
            self.processor.configure(settings.processor_settings())
            self.processor.set_geometry(self._collision_geometry())
            self._model_changed()
            if settings.friction != friction_was:
                self._friction_note() if settings.friction else self.get_logger().info(
                    'friction off')
            if (settings.contact_localization, self.processor.localization_note) != \
                    localization_was:
                self._localization_note()
        return SetParametersResult(successful=True)

    # -- topics ----------------------------------------------------------------------------------
    def joint_state_callback(self, msg):
        """
        Answer a joint state, then up to ``drain_limit`` more that queued up meanwhile.

        ``msg``: serialized bytes (the subscription is raw) or a JointState message. Under the
        executor (``joint_state_thread`` off), which rebuilds its wait set over every entity of
        the node for each message it hands over (about 0.2 ms of Python per message), taking
        the queued messages here answers a backlog at the cost of the computation alone; the
        bound keeps services and timers (and other nodes sharing the executor) served under a
        sustained overload.
        """
        if not isinstance(msg, (bytes, bytearray)):
            msg = serialize_message(msg)
        self._answer_guarded(msg)
        subscription = self._joint_state_sub
        handle = subscription.handle
        for _ in range(self.settings.drain_limit):
            with handle:
                taken = handle.take_message(subscription.msg_type, subscription.raw)
            if taken is None:
                return
            self._answer_guarded(taken[0])

    def _answer_guarded(self, raw):
        """Answer one serialized joint state under the state lock; never raise."""
        with self.state_lock:
            try:
                self._answer_joint_state(raw)
            except Exception as err:  # noqa: B902 - a bug must not stop the joint states
                if self.context.ok():  # (else shutting down: a publish after rclpy's end)
                    self._reject(f'joint state dropped: {type(err).__name__}: {err}')

    def _answer_joint_state(self, raw):
        """Read one serialized joint state, run it through the processor, publish the outputs."""
        processor = self.processor
        if processor is None:
            self.stats.received += 1
            self.stats.period_received += 1
            self.stats.bad_input('joint state before any robot model')
            return
        try:
            try:
                selected = self._reader.select(raw, self._joint_map.joint_names)
                if selected is None:  # something is wrong: say what
                    sec, nanosec, frame_id, names, position, velocity, effort = \
                        self._reader.read(raw)
            except ValueError as err:
                raise InputError(f'unreadable message ({err})') from None
            if selected is not None:
                sec, nanosec, frame_id, q, qd, effort = selected
            else:
                q = self._joint_map.gather(names, position, 'positions', required=True)
                qd = self._joint_map.gather(names, velocity, 'velocities')
                effort = (self._joint_map.gather(names, effort, 'efforts') if len(effort)
                          else None)
        except DenocError as err:
            processor.stats.received += 1
            processor.stats.period_received += 1
            self._reject(f'joint state dropped: {err}')
            return
        t = sec + 1e-9 * nanosec  # the one stamp conversion (seconds)
        if processor.stats.check_stamp(t):
            self.get_logger().warning(processor.stats.last_error + ' (computed all the same)',
                                      throttle_duration_sec=2.0)
        listening = self.outputs.refresh()
        try:
            out = processor.process(
                t, q, qd, effort, sec * 1_000_000_000 + nanosec,
                prediction=listening['prediction'],
                wrench=listening['wrench'], accelerations=listening['state'],
                locate=self.outputs.locating)
        except DenocError as err:
            self._reject(str(err))
            return
        for problem in out.problems:
            self._reject(problem)
        if out.restarted:
            self.get_logger().warning(f'external torque observer restarted: '
                                      f'{processor.observer.reason}', throttle_duration_sec=2.0)
        self.outputs.publish(sec, nanosec, frame_id, effort, out)

    def reference_callback(self, msg):
        """Keep the first point of a reference trajectory as the desired state."""
        if self.processor is None:
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
        self.processor.set_reference(q_d, qd_d, qdd_d)

    def _active_reference(self):
        return self.processor.active_reference() if self.processor is not None else None

    def _reject(self, reason):
        self.stats.bad_input(reason)
        self.get_logger().warning(reason, throttle_duration_sec=2.0)

    # -- diagnostics -----------------------------------------------------------------------------
    def diagnostics_callback(self):
        """Publish one DiagnosticStatus: model, joints, input rate, compute time, bad inputs."""
        now = time.monotonic()
        period = max(now - self._last_report, 1e-9)
        self._last_report = now
        p = self.processor
        state = {
            'payload_links': ', '.join(sorted({x.link for x in p.payloads})) if p else '',
            'reference_active': self._active_reference() is not None,
            'friction': self._friction_text(),
            'external_torques': p.observer_note if p else 'no robot model',
            'observer_restarts': p.observer.resets if p and p.observer else 0,
            'in_contact': bool(p.detector.in_contact) if p and p.detector else False,
        }
        state.update(self._localization_state())
        status = dynamics_status(f'{self.get_name()}: dynamics', self.model, self.stats, period,
                                 state)
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self._diagnostics_pub.publish(array)
        self.stats.end_period()

    def _localization_state(self):
        """Return the diagnostics of contact localization (after the observer's)."""
        p, stats = self.processor, self.stats
        last = p.last_location if p else None
        mean = stats.locate_sum / stats.located if stats.located else 0.0
        geometry = self._geometry[1] if self._geometry and self.settings.contact_localization \
            else None
        problems = geometry.warnings if geometry is not None else ()
        state = {
            'contact_localization': p.localization_note if p else 'no robot model',
            'contact_location': last.message if last is not None else '',
            'contact_localizations': stats.located,
            'contact_full_searches': stats.full_searches,
            'contact_localization_time_mean_ms': f'{1e3 * mean:.3f}',
            'contact_localization_time_max_ms': f'{1e3 * stats.locate_max:.3f}',
            'contact_geometry_warnings': len(problems),
        }
        state.update({f'contact_geometry_warning_{k + 1}': text
                      for k, text in enumerate(problems)})
        return state


def main(args=None):
    """
    Run the node until shutdown (joint states in a thread of their own).

    Fast DDS's timed-events thread of the process runs ``SCHED_BATCH``
    (:func:`~denoc_ros.ros.joint_state_thread.batch_middleware_timers`): the writes' timer
    wake-ups no longer preempt the joint states' thread.
    """
    def node():
        built = DynamicsNode(joint_state_thread=True)
        batch_middleware_timers()  # its timers' wake-ups no longer preempt the joint states
        return built
    return spin_node(node, NODE_NAME, args, task_executor)


if __name__ == '__main__':
    import sys
    sys.exit(main())
