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
The dynamics node's per-joint-state logic, as a library class: arrays in, every output out.

:class:`DynamicsProcessor` holds what the dynamics node keeps between joint states -- the model
with its payloads (stacked by :func:`denoc_ros.payload.attach_payload`, once), the friction, the
momentum observer and contact flags, the desired state of a reference, the window of samples for
payload estimation, the counters of ``/diagnostics`` -- and turns one joint state (positions,
velocities, efforts in model order and a stamp in seconds) into a :class:`Outputs`: the
feed-forward terms and their sum, the contact-free accelerations and prediction, the external
torques, contact flags and wrench. It imports no rclpy: the node converts messages and publishes.

One joint state is one compiled pass (:func:`denoc_ros.compute_all_terms`) at the measured
state: g, C qd (or C qd_d), M qdd_d, the observer's M qd and C^T qd, the contact frame's
Jacobian and pose, the wrench, FD and the prediction. With a reference in ``desired`` mode the
feed-forward is taken at the desired state, a second pass; the observer stays at the measured one.

With ``contact_localization`` on and collision geometry given
(:func:`denoc_ros.load_collision_geometry` of the same robot), a joint state in contact is also
located, by a :class:`denoc_ros.ContactTracker` (the full search of
:func:`denoc_ros.locate_contact` on the first joint state of a contact and every
:data:`denoc_ros.contact.track.FULL_PERIOD` after, the points near the last answer on the
others; reset when the contact ends) with the observer's estimate and the contact
thresholds (the release thresholds for joints already in contact, so that the locator and the
flags agree), and each joint's noise: ``contact_noise`` where given, else what the observer
shows while nothing touches the arm (:class:`denoc_ros.contact.TorqueNoise`, fed each estimate
:data:`HOLD` observer time constants late and leaving out as long after a contact, so that
neither the rise of a push before it is flagged nor its decay is taken for noise): the touched
link, point and force in
:attr:`Outputs.contact_location`. A safety valve for slower machines: localization takes at
most ``contact_time_share`` of the stamp time, averaged over :data:`SHARE_WINDOW` (a joint
state is located while the time it took stays within that share of the stamp time since, plus
the share of one window; the states beyond keep no location). Off, it costs the joint-state
path one attribute test.
"""

import collections
import copy
from dataclasses import dataclass, field
import math
import time
from typing import List, Optional

import numpy as np

from .contact.noise import TorqueNoise
from .contact.track import ContactTracker
from .dynamics import compute_all_terms, Workspace
from .dynamics.all_terms import problems as pass_problems
from .dynamics.momentum_observer import REPEATED, STEP
from .errors import DenocError, InputError
from .feedforward import EVALUATE_AT, predict
from .friction import JointFriction
from .identification.payload_window import PayloadWindow
from .observer import ContactMonitor
from .payload import attach_payload, attached_payloads, base_model, detach_payload

__all__ = ['DynamicsProcessor', 'HOLD', 'Outputs', 'ProcessorSettings', 'Statistics',
           'SHARE_WINDOW']

HOLD = 5.0
"""Observer time constants (1/K_O) before and after a contact the noise at rest leaves out."""
SHARE_WINDOW = 0.02
"""Stamp time [s] over which localization may take ``contact_time_share`` of it."""


@dataclass
class ProcessorSettings:
    """What the dynamics node's parameters set (names and meanings of the node's parameters)."""

    feedforward_state: str = 'desired'
    reference_timeout: float = 0.5
    prediction_horizon: float = 0.01
    prediction_substeps: int = 1
    friction: bool = False
    observer_gain: float = 50.0
    contact_threshold: object = 5.0      # one value or one per joint
    contact_hysteresis: float = 0.2
    contact_frame: Optional[str] = None  # None or '': the tip
    observer_max_gap: float = 0.1
    payload_window: float = 30.0
    contact_localization: bool = False
    contact_friction_coefficient: float = 0.6
    contact_noise: object = 0.0          # N m, one or per joint; 0: measured at rest
    contact_relative_noise: float = 0.02  # fraction of each joint's |tau_ext| (model error)
    contact_time_share: float = 0.5      # of stamp time localization may take; 0: every state


class Statistics:
    """Counters for ``/diagnostics``; the per-period ones are reset at each report."""

    def __init__(self):
        self.received = self.published = self.invalid = self.backwards = 0
        self.period_received = self.period_invalid = self.period_backwards = 0
        self.last_stamp = None
        self.compute_sum = self.compute_max = 0.0
        self.computed = 0
        self.locate_sum = self.locate_max = 0.0   # contact localization, per period
        self.located = self.full_searches = 0
        self.last_error = ''

    def bad_input(self, reason):
        """Count an input that was dropped, keeping its reason."""
        self.invalid += 1
        self.period_invalid += 1
        self.last_error = reason

    def check_stamp(self, t):
        """Count a stamp (s) older than the previous one (a clock reset or a bag loop)."""
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

    def locate_time(self, seconds, full=False):
        """Record the time one contact localization (``full``: a full search) took."""
        self.located += 1
        self.full_searches += bool(full)
        self.locate_sum += seconds
        self.locate_max = max(self.locate_max, seconds)

    def end_period(self):
        """Reset the per-period counters."""
        self.period_received = self.period_invalid = self.period_backwards = 0
        self.compute_sum = self.compute_max = 0.0
        self.computed = 0
        self.locate_sum = self.locate_max = 0.0
        self.located = self.full_searches = 0


@dataclass
class Outputs:
    """
    What one joint state gives; arrays are the processor's own until its next joint state.

    ``feedforward`` = gravity + coriolis + inertia + friction (``friction`` zeros when off).
    ``accelerations``: FD under the efforts less friction (None without efforts);
    ``prediction``: (q, qd, qdd) after the horizon (None unless asked, or without efforts);
    ``external_torques``, ``joint_in_contact``, ``max_ratio``: the observer's (None when it is
    off or the joint state has no efforts); ``wrench``: [force; torque] at the contact frame in
    its axes (None unless asked). ``contact_location``: a
    :class:`denoc_ros.ContactLocation` while in contact with ``contact_localization`` on (None
    otherwise, and on the joint states ``contact_time_share`` skips), ``contact_rotation`` its
    link's axes in the base frame (None without a link);
    ``contact_ended``: the first joint state out of contact after a located one.
    ``problems``: what could not be computed, one line each (the rest is valid);
    ``restarted``: the observer (re)started at this joint state.
    """

    stamp: float
    gravity: np.ndarray
    coriolis: np.ndarray
    inertia: np.ndarray
    friction: np.ndarray
    feedforward: np.ndarray
    accelerations: Optional[np.ndarray] = None
    prediction: Optional[tuple] = None
    external_torques: Optional[np.ndarray] = None
    joint_in_contact: Optional[np.ndarray] = None
    max_ratio: float = 0.0
    wrench: Optional[np.ndarray] = None
    contact_location: Optional[object] = None
    contact_rotation: Optional[np.ndarray] = None
    contact_ended: bool = False
    restarted: bool = False
    problems: List[str] = field(default_factory=list)

    @property
    def in_contact(self):
        """Return True if any joint is in contact."""
        return self.joint_in_contact is not None and bool(self.joint_in_contact.any())


class DynamicsProcessor:
    """
    The dynamics node's state and per-joint-state computation, without ROS (module docstring).

    ``model``: the loaded model (without payloads); ``settings``: a :class:`ProcessorSettings`
    (or its fields as keywords); ``geometry``: the robot's
    :class:`denoc_ros.CollisionGeometry`, for ``contact_localization`` (None: none). Not
    thread-safe: one thread feeds it; :meth:`snapshot` hands a consistent copy of what a long
    task needs to another thread.
    """

    def __init__(self, model, settings=None, geometry=None, **values):
        self.settings = settings if settings is not None else ProcessorSettings(**values)
        self.stats = Statistics()
        self.model = None
        self.geometry = geometry
        self.observer_note = 'no joint state yet'
        self.localization_note = 'off'
        self.last_location = None  # the last ContactLocation computed
        self._localizing = False   # contact_localization on and possible
        self._located = False      # the last location said in contact (its end is reported)
        self._tracker = None       # the ContactTracker while localizing
        self._budget = 0.0         # locator time [s] available (contact_time_share)
        self._budget_t = None      # stamp [s] the budget was last refilled at
        self.torque_noise = None   # TorqueNoise of the model in use
        self._rise = collections.deque()   # (t, tau_ext) not yet given to torque_noise
        self._contact_t = -math.inf        # stamp [s] of the last joint state in contact
        self.latest = None       # (q, qd, effort or None) of the last joint state answered
        self._reference = None   # ((q_d, qd_d, qdd_d), monotonic receive time)
        self.install_model(model)

    # -- model, payloads, settings ---------------------------------------------------------------
    def install_model(self, model):
        """Use a newly loaded model: payloads, reference, window and observer start afresh."""
        self.model = model
        self._base = base_model(model)
        self.latest = None
        self._reference = None
        self._configure()
        self.window = PayloadWindow(model.dof, self.settings.payload_window)

    def configure(self, settings):
        """Apply new settings (a new observer, friction, window length as they changed)."""
        old, self.settings = self.settings, settings
        if settings.payload_window != old.payload_window:
            self.window = PayloadWindow(self.model.dof, settings.payload_window)
        if (settings.friction != old.friction or any(
                getattr(settings, k) != getattr(old, k) for k in (
                    'observer_gain', 'contact_threshold', 'contact_hysteresis',
                    'contact_frame', 'observer_max_gap'))):
            self._configure('observer parameters changed')
        else:
            self._localization_setup()

    def _configure(self, reason='new robot model'):
        """(Re)build the workspaces, friction and observer for the model in use."""
        model, s = self.model, self.settings
        if s.feedforward_state not in EVALUATE_AT:
            raise InputError(f'feedforward_state is {s.feedforward_state!r}; choose one of '
                             f'{EVALUATE_AT}')
        self.workspace = Workspace(model)           # the measured state's pass
        self.desired_workspace = Workspace(model)   # the desired state's (desired mode)
        self.friction = JointFriction(self._base) if s.friction else None
        self._zeros = np.zeros(model.nv)
        self.contact_frame = model.frame(s.contact_frame or None).name
        if s.observer_gain > 0.0:
            # the observer, its contact flags and the wrench's frame (friction is taken off
            # the efforts before the pass, so the observer gets none of its own)
            monitor = ContactMonitor(model, s.observer_gain, s.contact_threshold,
                                     s.contact_hysteresis, s.contact_frame or None, None,
                                     s.observer_max_gap)
            self.observer, self.detector = monitor.observer, monitor.detector
            self.reset_observer(reason)
            self.observer_note = f'waiting for a joint state with efforts ({reason})'
        else:
            self.observer = self.detector = None
            self.observer_note = 'off (observer_gain 0)'
        self.torque_noise = TorqueNoise(model.nv)   # the model, payload or friction changed
        self._rise.clear()
        self._hold = HOLD / s.observer_gain if s.observer_gain > 0.0 else 0.0
        self._localization_setup()

    @property
    def localizing(self):
        """Return True if contacts are located (on, with geometry, fixed base, observer on)."""
        return self._localizing

    def set_geometry(self, geometry):
        """Use ``geometry`` (a :class:`denoc_ros.CollisionGeometry` or None) for localization."""
        self.geometry = geometry
        self._localization_setup()

    def _localization_setup(self):
        """Decide whether contact localization runs, and say why not in ``localization_note``."""
        s, model, geometry = self.settings, self.model, self.geometry
        self._localizing = False
        self._tracker = None
        if not s.contact_localization:
            self.localization_note = 'off'
        elif model.floating:
            self.localization_note = ('unsupported: the model has a floating base (contact '
                                      'localization serves fixed-base arms)')
        elif self.observer is None:
            self.localization_note = 'off: it needs the observer (observer_gain is 0)'
        elif geometry is None:
            self.localization_note = 'off: no collision geometry given'
        else:
            # the moving bodies with a surface (on any URDF link merged into them)
            frames = model.frame_index
            covered = {frames[f].body for f in geometry.surfaces if f in frames}
            covered.discard(-1)
            if not covered:
                unreadable = (f' ({len(geometry.unreadable)} link(s) with unreadable meshes)'
                              if geometry.unreadable else '')
                self.localization_note = ('off: no moving link of the model has <collision> '
                                          'geometry' + unreadable)
            else:
                self._localizing = True
                self._tracker = ContactTracker(
                    model, geometry, friction_coefficient=s.contact_friction_coefficient,
                    relative_noise=s.contact_relative_noise)
                self._budget, self._budget_t = s.contact_time_share * SHARE_WINDOW, None
                without = [name for b, name in enumerate(model.link_names) if b not in covered]
                self.localization_note = (
                    f'on: {len(covered)} of {model.nbodies} moving links with collision geometry'
                    + (f'; without: {", ".join(without)} (a contact there is not located)'
                       if without else ''))

    def reset_observer(self, reason='reset'):
        """Re-zero the observer and forget the contacts (False if the observer is off)."""
        if self.observer is None:
            return False
        self.observer.reset(reason)
        self.detector.reset()
        return True

    @property
    def payloads(self):
        """Return the payloads on the model in use, in the order they were attached."""
        return attached_payloads(self.model)

    def set_payload(self, link, mass, com=(0.0, 0.0, 0.0), inertia=None):
        """
        Replace (mass > 0) or remove (mass and inertia zero) the payload of ``link``.

        The model in use becomes :func:`denoc_ros.attach_payload` (``replace=True``) or
        :func:`denoc_ros.detach_payload` of it; the observer restarts. Returns the new model.
        """
        inertia = np.zeros((3, 3)) if inertia is None else np.asarray(inertia, dtype=float)
        if mass == 0.0 and not np.any(inertia):
            model = detach_payload(self.model, link)
        else:
            model = attach_payload(self.model, link, mass, com, inertia, replace=True)
        self.model = model
        self._configure(f'payload changed on {model.frame(link).name}')
        return model

    # -- reference -------------------------------------------------------------------------------
    def set_reference(self, q_d, qd_d, qdd_d, now=None):
        """Keep ``(q_d, qd_d, qdd_d)`` (model order) as the desired state, received ``now``."""
        self._reference = ((q_d, qd_d, qdd_d), time.monotonic() if now is None else now)

    def active_reference(self, now=None):
        """Return the desired state if a reference arrived within ``reference_timeout``."""
        if self._reference is None:
            return None
        desired, received = self._reference
        timeout = self.settings.reference_timeout
        if timeout > 0 and (time.monotonic() if now is None else now) - received > timeout:
            return None
        return desired

    # -- one joint state -------------------------------------------------------------------------
    def process(self, t, q, qd, effort=None, stamp_ns=None, now=None, prediction=False,
                wrench=False, accelerations=False, locate=True):
        """
        Answer one joint state: ``q``, ``qd``, ``effort`` (None: none) in model order, ``t`` s.

        ``prediction``, ``wrench``, ``accelerations``: compute those too (someone listens);
        ``locate``: locate a contact when ``contact_localization`` is on (someone listens).
        Returns :class:`Outputs`; raises InputError (the joint state is dropped) when the
        feed-forward itself cannot be computed or is not finite.
        """
        stats = self.stats
        stats.received += 1
        stats.period_received += 1
        start = time.perf_counter()
        model, s = self.model, self.settings
        desired = self.active_reference(now)
        friction = self.friction
        tau = None
        if effort is not None:
            tau = effort if friction is None else effort - friction(qd)
        observer = self.observer if effort is not None else None
        horizon = s.prediction_horizon if prediction and not model.floating else None
        if horizon == 0.0:
            horizon, accelerations = None, True
        want_frame = wrench and observer is not None and not model.floating
        measured_pass = desired is None or s.feedforward_state == 'measured'
        ws = self.workspace
        problems = []
        extras = {'tau': tau, 'observer': observer, 't': t, 'acceleration': accelerations,
                  'horizon': horizon, 'substeps': s.prediction_substeps,
                  'frame': self.contact_frame if want_frame else None, 'wrench': want_frame,
                  'strict': False}
        try:
            if measured_pass:
                if desired is None:
                    compute_all_terms(model, q, qd, ws, **extras)
                else:
                    compute_all_terms(model, q, qd, ws, u=desired[1], a=desired[2], **extras)
                terms = ws
            else:
                terms = self.desired_workspace
                compute_all_terms(model, desired[0], desired[1], terms, a=desired[2])
                if tau is not None:
                    compute_all_terms(model, q, qd, ws, **extras)
        except DenocError as err:
            raise InputError(f'joint state dropped: {err}') from None
        inertia = terms.inertia if desired is not None else self._zeros
        friction_torques = (self._zeros if friction is None else
                            friction(qd if measured_pass else desired[1]))
        total = terms.g + terms.coriolis  # zero terms (no reference, no friction) not added
        if desired is not None:
            total += inertia
        if friction is not None:
            total += friction_torques
        if not math.isfinite(total.sum()):
            raise InputError('non-finite torques at this state: nothing published')
        self.latest = (q, qd, effort)  # the services' "latest joint state"
        if effort is not None:
            self.window.append(int(round(t * 1e9)) if stamp_ns is None else stamp_ns,
                               q, qd, effort)
        out = Outputs(t, terms.g, terms.coriolis, inertia, friction_torques, total,
                      problems=problems)
        if tau is not None:
            if (accelerations or horizon is not None) and ws.forward_dynamics_status:
                problems.append(f'no prediction: {pass_problems(ws)[0]}')
            elif accelerations or horizon is not None:
                out.accelerations = ws.ddq
                if horizon is not None:
                    out.prediction = tuple(ws.prediction)
                elif prediction:
                    out.prediction = (q, qd, ws.ddq)
            if prediction and model.floating:
                out.prediction = self._floating_prediction(q, qd, tau, problems)
            if observer is not None:
                self._observed(out, ws, want_frame)
        elif self.observer is not None:
            self.observer_note = 'no external torques: the joint states carry no efforts'
            if self.observer.initialized:
                self.reset_observer('joint states without efforts')
        if self._localizing:
            if out.external_torques is not None:
                self._measure_noise(t, out)
            if out.in_contact:
                if locate and self._may_locate(t):
                    self._locate(out, q, t)
            else:
                if self._located:
                    out.contact_ended, self._located = True, False
                if self._tracker.tracking:
                    self._tracker.reset()
        stats.published += 1
        stats.compute_time(time.perf_counter() - start)
        return out

    def _observed(self, out, ws, want_frame):
        """Fill the observer's outputs of ``out`` from the pass in ``ws``."""
        observer = self.observer
        if not ws.estimate_finite:
            self.reset_observer('non-finite estimate')
            out.problems.append('external torque estimate not finite: observer restarted')
            return
        if ws.observer_event not in (STEP, REPEATED):
            self.observer_note = f'(re)started: {observer.reason}'
            out.restarted = observer.resets > 1
        r = observer.estimate
        out.external_torques = r
        out.joint_in_contact, out.max_ratio = self.detector.observe(r)
        if want_frame:
            if not ws.wrench_finite:
                out.problems.append('no external wrench: not finite (a singular Jacobian?)')
            else:
                out.wrench = ws.wrench

    def _may_locate(self, t):
        """
        Return True if the joint state at stamp ``t`` may be located (``contact_time_share``).

        The budget of locator time grows by the share of the stamp time that passed, up to the
        share of :data:`SHARE_WINDOW`; each location spends its cost; a joint state is located
        while some is left. A stamp going back refills it.
        """
        share = self.settings.contact_time_share
        if share <= 0.0:
            return True
        full = share * SHARE_WINDOW
        last, self._budget_t = self._budget_t, t
        if last is None or t < last:
            self._budget = full
        else:
            self._budget = min(full, self._budget + share * (t - last))
        return self._budget > 0.0

    def _locate(self, out, q, t):
        """Locate the contact of ``out``'s external torques on the collision surfaces."""
        start = time.perf_counter()
        detector = self.detector
        # a joint already in contact stays so down to its release threshold: the locator's
        # "no contact" then agrees with the flags
        thresholds = np.where(out.joint_in_contact,
                              (1.0 - detector.hysteresis) * detector.thresholds,
                              detector.thresholds)
        try:
            location = self._tracker.update(q, out.external_torques, threshold=thresholds,
                                            noise=self.noise())
            # the link's pose as the locator placed it (no second forward kinematics)
            rotation = self._tracker.link_rotation(location.link) if location.link else None
        except DenocError as err:
            out.problems.append(f'contact not located: {err}')
            return
        except Exception as err:  # noqa: B902 - a locator failure must not cost the dynamics
            out.problems.append(f'contact not located: {type(err).__name__}: {err}')
            return
        finally:
            cost = time.perf_counter() - start
            self.stats.locate_time(cost, self._tracker.last_full)
            self._budget -= cost
        if not _finite_location(location):
            out.problems.append(f'contact not located: the locator gave non-finite values '
                                f'({location.message})')
            return
        self.last_location = out.contact_location = location
        out.contact_rotation = rotation
        self._located = location.in_contact

    def _measure_noise(self, t, out):
        """Give torque_noise the estimates older than HOLD time constants (module docstring)."""
        rise, noise, hold = self._rise, self.torque_noise, self._hold
        if out.in_contact or 0.0 <= t - self._contact_t < hold:
            while rise:   # a push's rise, then the contact and its decay: no noise
                noise.update(*rise.popleft(), True)
            noise.update(t, out.external_torques, True)
            if out.in_contact:
                self._contact_t = t
            return
        rise.append((t, out.external_torques.copy()))
        while rise and t - rise[0][0] >= hold:
            noise.update(*rise.popleft(), False)

    def noise(self):
        """Return the per-joint noise [N m] for the locator: ``contact_noise``, else measured."""
        given = np.broadcast_to(np.asarray(self.settings.contact_noise, dtype=float),
                                (self.model.nv,))
        return np.where(given > 0.0, given, self.torque_noise.sigma)

    def _floating_prediction(self, q, qd, tau, problems):
        """Return the prediction of a floating-base model (Lie-group RK4, not compiled)."""
        try:
            return predict(self.model, q, qd, tau, self.settings.prediction_horizon,
                           self.settings.prediction_substeps)
        except DenocError as err:
            problems.append(f'no prediction: {err}')
            return None

    def snapshot(self):
        """Return (model, friction on, a copy of the payload window) for a task elsewhere."""
        return self.model, self.settings.friction, copy.deepcopy(self.window)


def _finite_location(location):
    """Return True if every number of a ContactLocation is finite."""
    arrays = (location.point, location.point_base, location.normal, location.force,
              location.covariance, location.candidates)
    return (math.isfinite(location.residual) and all(np.isfinite(a).all() for a in arrays))
