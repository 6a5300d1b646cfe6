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
The dynamics node's output topics: who listens, and each message built once, refilled per state.

:class:`DynamicsOutputs` owns the node's output publishers. A topic is published only while it
has a subscriber; the counts are read from the middleware at most every
:data:`LISTENER_REFRESH` seconds of joint-state arrivals (a call per topic per message cost
more than the computation), so a subscriber that joins gets the messages from at most that much
after its discovery. Every output but the located contact is
:class:`~denoc_ros.ros.serialized.Template` bytes (the joint names, layout, frame and constant
fields fixed, the stamp, the arrays and the flags written in place): no message object is built,
converted or serialized per joint state. The located contact, serialized directly
(:class:`~denoc_ros.ros.contact_outputs.LocationBytes`), goes to ``~/contact_location`` for
every joint state in contact (and once when it ends) and, as a message object, to
``~/contact_markers`` (:mod:`denoc_ros.ros.contact_outputs`) at most every :data:`MARKER_PERIOD`
of stamp time, besides whenever the link or the status changes, and when the contact ends.

The messages of one joint state are all filled before the first is written, and then
written back to back. Each DDS write to a subscriber in another process wakes that process's
receive thread (a futex wake, on a VM an inter-processor interrupt) and Fast DDS's event thread
(the reliable writer's timers); writes in a burst find those threads still awake and skip most
of the wake-ups, where writes spread between the fills woke them once each.
"""

import time

from denoc_ros_interfaces.msg import ContactLocation, ContactState, DynamicsState
from geometry_msgs.msg import WrenchStamped
import numpy as np
from rclpy.duration import Duration
from rclpy.event_handler import PublisherEventCallbacks
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, Header, MultiArrayDimension
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
from visualization_msgs.msg import MarkerArray

from .contact_outputs import ContactMarkers, LocationBytes
from .serialized import Template

TERMS = ('gravity', 'coriolis', 'inertia', 'feedforward')
TOPICS = TERMS + ('command', 'prediction', 'external', 'contact', 'wrench', 'state', 'location',
                  'markers')
LISTENER_REFRESH = 0.05  # [s] between two reads of the subscription counts
MARKER_PERIOD = 0.02     # [s] of stamp time between two ~/contact_markers of one contact


def _set(field):
    def setter(message, values):
        setattr(message, field, values)
    return setter


def _set_scalar(field):
    def setter(message, values):
        setattr(message, field, values[0])
    return setter


def _set_point(field):
    def setter(message, values):
        setattr(message.points[0], field, values)
    return setter


class DynamicsOutputs:
    """The publishers of the dynamics node and their prebuilt messages (module docstring)."""

    def __init__(self, node):
        # No QoS event handlers on the outputs: each is one more entity in the executor's wait
        # set, rebuilt for every message (14 cost about 65 us per round trip).
        quiet = PublisherEventCallbacks(use_default_callbacks=False)

        def publisher(message_type, topic):
            return node.create_publisher(message_type, topic, 10, event_callbacks=quiet)
        self.publishers = {term: publisher(JointState, f'~/{term}_torques') for term in TERMS}
        self.publishers.update(
            command=publisher(Float64MultiArray, '~/effort_command'),
            prediction=publisher(JointTrajectory, '~/prediction'),
            external=publisher(JointState, '~/external_torques'),
            contact=publisher(ContactState, '~/contact'),
            wrench=publisher(WrenchStamped, '~/external_wrench'),
            state=publisher(DynamicsState, '~/dynamics_state'),
            location=publisher(ContactLocation, '~/contact_location'),
            markers=publisher(MarkerArray, '~/contact_markers'))
        # The serialized outputs go straight to the rcl publisher (rclpy's Publisher.publish
        # adds a type check and a context manager: 0.7 us a write, 10 writes a state). The
        # publishers live as long as the node, which stops its joint-state thread first.
        self._write = {topic: pub.handle.publish_raw for topic, pub in self.publishers.items()}
        self.listening = dict.fromkeys(TOPICS, False)
        self._refreshed = -1.0
        self._names = None
        self._location = LocationBytes()  # the located contact, serialized directly
        self._markers = ContactMarkers()
        self._marked = None      # (stamp [s], link, status) of the last markers published
        self._header = Header()  # the markers' stamp (their messages are not Templates)

    def refresh(self, now=None):
        """Read the subscription counts if the last read is older than LISTENER_REFRESH."""
        now = time.monotonic() if now is None else now
        if now - self._refreshed >= LISTENER_REFRESH:
            self._refreshed = now
            for topic, pub in self.publishers.items():
                self.listening[topic] = pub.get_subscription_count() > 0
        return self.listening

    @property
    def locating(self):
        """Return True if someone listens to the located contact."""
        return self.listening['location'] or self.listening['markers']

    def prepare(self, joint_names, command_index, horizon, frame, base_frame=''):
        """Build the messages of a model (its joint names), a command order and a horizon."""
        self._base_frame = base_frame
        self._names = list(joint_names)
        self._command_index = np.asarray(command_index)
        self._horizon = horizon
        self._frame_id = None
        self._thresholds = np.zeros(len(self._names))
        wrench = WrenchStamped()
        wrench.header.frame_id = frame  # the contact frame's, not the input's

        def set_wrench(message, values):
            w = message.wrench
            w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z = values
        self._wrench = Template(wrench, {'wrench': set_wrench}, 6)
        self._by_frame = {}
        self._build('')

    def _build(self, frame_id):
        """Use the templates of a header frame_id (the input's, copied): kept for up to 8."""
        cached = self._by_frame.get(frame_id)
        if cached is not None:
            self._frame_id = frame_id
            (self._joint_state, self._command, self._prediction, self._states,
             self._contact) = cached
            return
        n, names = len(self._names), self._names
        self._frame_id = frame_id

        def joint_state():
            msg = JointState(name=list(names))
            msg.header.frame_id = frame_id
            return msg
        self._joint_state = Template(joint_state(), {'effort': _set('effort')}, n)
        command = Float64MultiArray()
        m = len(self._command_index)
        command.layout.dim = [MultiArrayDimension(label='joints', size=m, stride=m)]
        self._command = Template(command, {'data': _set('data')}, m, stamp=False)
        prediction = JointTrajectory(joint_names=list(names), points=[JointTrajectoryPoint()])
        prediction.header.frame_id = frame_id
        prediction.points[0].time_from_start = Duration(seconds=self._horizon).to_msg()
        self._prediction = Template(
            prediction, {f: _set_point(f) for f in ('positions', 'velocities', 'accelerations',
                                                    'effort')}, n, after=('sec', 'nanosec'))
        contact = ContactState(joint_names=list(names))
        contact.header.frame_id = frame_id
        self._contact = Template(
            contact, {'external_torques': _set('external_torques'),
                      'thresholds': _set('thresholds'),
                      'max_ratio': (_set_scalar('max_ratio'), 1)}, n,
            bools={'in_contact': _set('in_contact'),
                   'joint_in_contact': (_set('joint_in_contact'), n)})
        self._contact.keep(thresholds=self._thresholds)
        self._states = {}
        if len(self._by_frame) >= 8:
            self._by_frame.clear()
        self._by_frame[frame_id] = (self._joint_state, self._command, self._prediction,
                                    self._states, self._contact)

    def _state_template(self, accelerations, observed):
        """Return the DynamicsState template with or without accelerations and observer outputs."""
        key = (accelerations, observed)
        template = self._states.get(key)
        if template is None:
            n = len(self._names)
            msg = DynamicsState(joint_names=list(self._names))
            msg.header.frame_id = self._frame_id
            arrays = {f: _set(f) for f in ('gravity', 'coriolis', 'inertia', 'friction',
                                           'feedforward')}
            if accelerations:
                arrays['predicted_accelerations'] = _set('predicted_accelerations')
            bools, after = None, ()
            if observed:
                arrays['external_torques'] = _set('external_torques')
                bools = {'joint_in_contact': (_set('joint_in_contact'), n)}
            else:  # empty external_torques, joint_in_contact: their lengths
                after = ('length',) * (3 if not accelerations else 2)
            template = Template(msg, arrays, n, after=after, bools=bools)
            self._states[key] = template
        return template

    def publish(self, sec, nanosec, frame_id, effort, out):
        """
        Publish what the listeners want of :class:`denoc_ros.processor.Outputs` ``out``.

        ``sec``, ``nanosec``, ``frame_id``: the input's header, copied into the outputs';
        ``effort``: the measured efforts (the prediction's), None if none. Every message is
        filled first, and the writes follow back to back (see the module docstring).
        """
        listening, pubs = self.listening, self._write
        if frame_id != self._frame_id:
            self._build(frame_id)
        burst = []
        fill = self._joint_state.fill
        for term, values in (('gravity', out.gravity), ('coriolis', out.coriolis),
                             ('inertia', out.inertia), ('feedforward', out.feedforward)):
            if listening[term]:
                burst.append((pubs[term], fill(sec, nanosec, effort=values)))
        if listening['command']:
            burst.append((pubs['command'], self._command.fill(
                0, 0, data=out.feedforward[self._command_index])))
        if listening['prediction'] and out.prediction is not None:
            q, qd, qdd = out.prediction
            burst.append((pubs['prediction'], self._prediction.fill(
                sec, nanosec, positions=q, velocities=qd, accelerations=qdd, effort=effort)))
        observed = out.external_torques is not None
        if listening['state']:
            accelerations = out.accelerations is not None
            arrays = {'gravity': out.gravity, 'coriolis': out.coriolis, 'inertia': out.inertia,
                      'friction': out.friction, 'feedforward': out.feedforward}
            if accelerations:
                arrays['predicted_accelerations'] = out.accelerations
            if observed:
                arrays['external_torques'] = out.external_torques
                arrays['joint_in_contact'] = out.joint_in_contact
            burst.append((pubs['state'], self._state_template(accelerations, observed).fill(
                sec, nanosec, **arrays)))
        if observed:
            if listening['external']:
                burst.append((pubs['external'], fill(sec, nanosec,
                                                     effort=out.external_torques)))
            if listening['contact']:
                burst.append((pubs['contact'], self._contact.fill(
                    sec, nanosec, in_contact=out.in_contact,
                    external_torques=out.external_torques,
                    joint_in_contact=out.joint_in_contact, max_ratio=out.max_ratio)))
            if listening['wrench'] and out.wrench is not None:
                burst.append((pubs['wrench'], self._wrench.fill(sec, nanosec,
                                                                wrench=out.wrench)))
        for write, data in burst:
            write(data)
        if out.contact_location is not None or out.contact_ended:
            self._publish_location(sec, nanosec, out)

    def _publish_location(self, sec, nanosec, out):
        """Publish the located contact (or its end) to whoever listens."""
        location, pubs = out.contact_location, self.publishers
        header = self._header
        header.stamp.sec, header.stamp.nanosec = sec, nanosec
        if self.listening['location']:
            self._write['location'](self._location(sec, nanosec, self._base_frame, location))
        if not self.listening['markers']:
            return
        if location is None or not location.in_contact:
            if self._marked is not None:
                pubs['markers'].publish(self._markers.cleared)
            self._marked = None
            return
        t = sec + 1e-9 * nanosec
        last = self._marked
        if (last is None or (location.link, location.status) != last[1:]
                or not 0.0 <= t - last[0] < MARKER_PERIOD):
            pubs['markers'].publish(self._markers.build(header, location, out.contact_rotation,
                                                        self._base_frame))
            self._marked = (t, location.link, location.status)

    def set_thresholds(self, thresholds):
        """Set the ContactState's per-joint thresholds (constant per observer)."""
        self._thresholds = np.array(thresholds, dtype=float)
        for cached in self._by_frame.values():
            cached[4].keep(thresholds=self._thresholds)
