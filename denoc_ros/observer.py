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
External joint torques from measured efforts: the generalized-momentum observer.

With ``M(q) qdd + C(q, qd) qd + g(q) = tau + tau_ext`` (``tau`` the measured joint efforts,
``tau_ext`` what the environment adds), the momentum ``p = M(q) qd`` obeys
``p_dot = tau + C(q, qd)^T qd - g(q) + tau_ext`` because ``M_dot = C + C^T`` (which holds for
the Christoffel-consistent ``C`` of :func:`denoc_ros.coriolis_matrix`, not for Saha's convective
matrix). The observer (De Luca & Mattone 2003; De Luca et al. 2006; Haddadin et al. 2017)

    r(t) = K_O (p(t) - integral_0^t (tau + C^T qd - g + r) ds - p(0))

needs no acceleration and obeys ``r_dot = K_O (tau_ext - r)``: each joint's ``r`` follows
``tau_ext`` through a first-order lag of time constant ``1 / K_O``. A step of height ``T`` is
seen as ``T (1 - exp(-K_O t))``, so a threshold ``h < T`` is crossed after
``ln(T / (T - h)) / K_O``.

Discrete scheme (at the stamps of the samples, ``dt_k = t_k - t_(k-1)``)::

    e_k = (p_k - p_(k-1)) / dt_k - (w_k + w_(k-1)) / 2,
    w = tau - tau_f(qd) + C(q, qd)^T qd - g(q)
    r_k = exp(-K_O dt_k) r_(k-1) + (1 - exp(-K_O dt_k)) e_k

``e_k`` is the interval's mean external torque (momentum change less the trapezoidal integral
of ``w``: no acceleration needed), and ``r`` the exact solution of ``r_dot = K_O (e - r)`` over
the interval with ``e`` held (zero-order hold). It is stable for any step and exact for a
constant ``tau_ext``, up to the trapezoidal rule, which makes a step that falls inside an
interval look like a ramp over it (the response leads the continuous one by half a period).
``tau_f`` is the joint friction when asked for (:class:`denoc_ros.friction.JointFriction`).
The first sample, and the sample after a gap (``dt > max_gap``), a stamp that goes backwards,
or :meth:`MomentumObserver.reset` (a new model, a payload change) re-initialise the observer:
``r = 0`` from there, ``p(0)`` that sample's momentum. A repeated stamp is skipped.

What it cannot do: it estimates the sum of everything the model does not explain -- contact
forces, but also model errors (wrong inertials, unmodelled friction, cable forces, a payload not
declared) and effort-sensor bias. It sees only the joint torques a contact causes, so a force
along a direction the arm's joints cannot feel (through a singular configuration) is invisible.
It is a monitor built on the model and the measured efforts, not a certified safety function.
"""

import numpy as np

from .dynamics import coriolis_matrix, frame_pose, gravity_torques, jacobian, mass_matrix
from .dynamics._compile import jit
from .dynamics._state import check_model, joint_vector
from .dynamics.momentum_observer import (BACKWARDS, contact_wrench, GAP, observer_state,
                                         observer_step, REPEATED, STARTED_FLAG, T_PREV)
from .errors import InputError

__all__ = ['MomentumObserver', 'ContactDetector', 'ContactMonitor', 'observe',
           'external_wrench', 'momentum_terms']

DEFAULT_GAIN = 50.0
"""K_O [1/s]: a 20 ms time constant, fast enough to see a collision, slow enough to damp noise."""

DEFAULT_MAX_GAP = 0.1
"""Seconds between samples beyond which the observer starts again."""


def momentum_terms(model, q, qd, tau, friction=None, gravity=None):
    """
    Return ``(p, w)``: ``M(q) qd`` and ``tau - tau_f(qd) + C(q, qd)^T qd - g(q)``.

    One state (``nv``,) or a batch (N, nv): the inputs of the observer's recursion.
    ``gravity``: ``g(q)`` when the caller has it already (the dynamics node's feed-forward).
    """
    if gravity is None:
        gravity = gravity_torques(model, q)
    p = np.matmul(mass_matrix(model, q), qd[..., None])[..., 0]
    w = tau + np.matmul(qd[..., None, :], coriolis_matrix(model, q, qd))[..., 0, :] - gravity
    if friction is not None:
        w = w - friction(qd)
    return p, w


class MomentumObserver:
    """
    The generalized-momentum observer of one arm, fed one measured sample at a time.

    ``gain`` K_O [1/s] (a scalar or one per velocity); ``friction``: a
    :class:`denoc_ros.friction.JointFriction` to subtract from the efforts, or None.
    :meth:`update` returns the estimate ``r`` of ``tau_ext`` (``nv``); ``reason`` says why the
    last (re-)initialisation happened.
    """

    def __init__(self, model, gain=DEFAULT_GAIN, friction=None, max_gap=DEFAULT_MAX_GAP):
        check_model(model)
        gain = np.broadcast_to(np.asarray(gain, dtype=float), (model.nv,)).copy()
        if not np.all(np.isfinite(gain)) or np.any(gain <= 0.0):
            raise InputError(f'observer gain must be positive and finite, got {gain.tolist()}')
        if not max_gap > 0.0:
            raise InputError(f'max_gap must be positive, got {max_gap}')
        self.model, self.gain, self.friction = model, gain, friction
        self.max_gap = float(max_gap)
        self.resets = 0           # (re-)initialisations so far
        self.reason = 'first sample'
        self.state = observer_state(model.nv)  # last sample: t, p, w (momentum_observer)
        self.estimate = np.zeros(model.nv)    # r, updated in place

    @property
    def initialized(self):
        """Return True once a sample has been taken since the last (re-)initialisation."""
        return self.state[STARTED_FLAG] != 0.0

    def reset(self, reason='reset'):
        """Start again at the next sample (``r = 0``); ``reason`` is kept for diagnostics."""
        self.state[:] = 0.0
        self.estimate[:] = 0.0
        self.reason = reason

    def update(self, t, q, qd, tau, gravity=None):
        """
        Take one sample at time ``t`` [s]; return the estimate ``r`` of ``tau_ext`` (nv,).

        ``gravity``: ``g(q)`` if already computed. The returned array is the observer's own
        (``self.estimate``, updated in place by every sample); copy it to keep it.
        """
        p, w = momentum_terms(self.model, q, qd, tau, self.friction, gravity)
        return self.step(float(t), p, w)

    def step(self, t, p, w):
        """Advance the recursion (module docstring) with the sample's momentum ``p`` and ``w``."""
        previous = self.state[T_PREV]
        event = observer_step(self.state, self.gain, self.max_gap, float(t),
                              np.ascontiguousarray(p, dtype=float),
                              np.ascontiguousarray(w, dtype=float), self.estimate)
        self.note(event, previous, t)
        return self.estimate

    def note(self, event, previous, t):
        """Count a (re-)initialisation ``event`` of :func:`observer_step` and say why."""
        if event == REPEATED or event == 0:
            return
        self.resets += 1
        if event == BACKWARDS:
            self.reason = f'stamp went backwards by {previous - t:.6g} s'
        elif event == GAP:
            self.reason = f'gap of {t - previous:.6g} s between samples'


def observe(model, t, q, qd, tau, gain=DEFAULT_GAIN, friction=None, max_gap=DEFAULT_MAX_GAP):
    """
    Run the momentum observer over a recorded trajectory; return ``r`` of shape (N, nv).

    ``t`` (N,) seconds; ``q`` (N, nq), ``qd`` and ``tau`` (N, nv), e.g. from
    :func:`denoc_ros.identification.data.read_recording`. ``M``, ``C`` and ``g`` are computed for
    all samples in one call each; the recursion is that of :class:`MomentumObserver`.
    """
    check_model(model)
    t = np.asarray(t, dtype=float).reshape(-1)
    q = joint_vector(model, 'q', q)
    qd = joint_vector(model, 'qd', qd)
    tau = joint_vector(model, 'tau', tau)
    if not (q.ndim == qd.ndim == tau.ndim == 2 and q.shape[0] == qd.shape[0] == tau.shape[0]
            == t.size):
        raise InputError(f'observe takes t (N,) and q, qd, tau (N, ...) of one length N, got '
                         f'{t.shape}, {q.shape}, {qd.shape}, {tau.shape}')
    observer = MomentumObserver(model, gain, friction, max_gap)
    p, w = momentum_terms(model, q, qd, tau, friction)
    out = np.empty_like(tau)
    for k in range(t.size):
        out[k] = observer.step(t[k], p[k], w[k])
    return out


class ContactDetector:
    """
    Contact flags from external torque estimates: per-joint thresholds with hysteresis.

    Joint ``i`` enters contact when ``|r_i| > threshold_i`` and leaves it when ``|r_i|`` falls
    below ``(1 - hysteresis) threshold_i`` (``hysteresis`` a fraction in [0, 1)).
    """

    def __init__(self, thresholds, hysteresis=0.2):
        thresholds = np.asarray(thresholds, dtype=float).reshape(-1)
        if not np.all(np.isfinite(thresholds)) or np.any(thresholds <= 0.0):
            raise InputError(f'contact thresholds must be positive, got {thresholds.tolist()}')
        if not 0.0 <= float(hysteresis) < 1.0:
            raise InputError(f'contact hysteresis is a fraction in [0, 1), got {hysteresis}')
        self.thresholds = thresholds
        self.hysteresis = float(hysteresis)
        self.joint_in_contact = np.zeros(thresholds.size, dtype=bool)

    def update(self, r):
        """Return the per-joint contact flags (bool array) after estimate ``r``."""
        return self.observe(r)[0]

    def observe(self, r):
        """
        Return ``(flags, ratio)``: :meth:`update` and :meth:`ratio` of estimate ``r`` at once.

        The per-joint-state path: one compiled pass over the joints (seven NumPy operations
        cost 3.6 us, the pass 0.3 us). ``flags`` is a new array each time.
        """
        if not (type(r) is np.ndarray and r.dtype == np.float64 and r.ndim == 1):
            r = np.asarray(r, dtype=float).reshape(-1)
        thresholds = self.thresholds
        if r.shape != thresholds.shape:
            raise InputError(f'contact detector: {r.size} estimates for {thresholds.size} '
                             'thresholds')
        flags = np.empty(thresholds.size, dtype=np.bool_)
        ratio = _contact_flags(r, thresholds, 1.0 - self.hysteresis, self.joint_in_contact,
                               flags)
        self.joint_in_contact = flags
        return flags, ratio

    def reset(self):
        """Forget every contact."""
        self.joint_in_contact[:] = False

    def ratio(self, r):
        """Return ``max_i |r_i| / threshold_i`` (>= 1: some joint over its threshold)."""
        return float(np.max(np.abs(r) / self.thresholds))

    @property
    def in_contact(self):
        """Return True if any joint is in contact."""
        return bool(self.joint_in_contact.any())


@jit
def _contact_flags(r, thresholds, keep, previous, flags):
    """Write the flags after ``r`` into ``flags``; return max |r_i| / threshold_i (NaN: NaN)."""
    ratio = -1.0
    for i in range(r.shape[0]):
        magnitude = abs(r[i])  # a joint in contact stays so down to keep = 1 - hysteresis
        flags[i] = (magnitude >= keep * thresholds[i] if previous[i]
                    else magnitude > thresholds[i])
        x = magnitude / thresholds[i]
        if not x <= ratio:  # (a NaN stays)
            ratio = x if ratio == ratio else ratio
    return ratio


def external_wrench(model, q, tau_ext, frame=None, damping=0.05, threshold=0.05):
    """
    Return the wrench at ``frame``'s origin that explains ``tau_ext``: ``[force; torque]``.

    Components in the frame's own axes, torque about its origin (what RViz draws at the
    frame). Solved as ``tau_ext = J^T F`` (``J`` the frame's Jacobian, :func:`denoc_ros.jacobian`)
    by least squares, damped only near a singularity: with ``s`` the smallest singular value
    of ``J``, ``F = (J J^T + l^2 1)^-1 J tau_ext`` with ``l^2 = damping^2 (1 - (s /
    threshold)^2)`` when ``s < threshold``, else ``l = 0`` (Maciejewski & Klein's damping).
    Fixed-base models; ``frame`` a link name, default the tip.
    """
    check_model(model)
    if model.floating:
        raise InputError('external_wrench serves fixed-base arms')
    J = jacobian(model, q, frame)                       # (6, n), base axes
    tau_ext = joint_vector(model, 'tau_ext', tau_ext)
    if J.ndim != 2 or tau_ext.ndim != 1:
        raise InputError('external_wrench takes one state')
    R, _ = frame_pose(model, q, frame)
    out = np.empty(6)
    contact_wrench(J, np.ascontiguousarray(R), tau_ext, float(damping), float(threshold), out)
    return out


class ContactMonitor:
    """
    What the dynamics node runs per joint state: observer, contact flags and contact wrench.

    ``thresholds``: one value for every joint or one per joint [N m or N]; ``frame``: the
    link at whose origin :meth:`wrench` is expressed (default the tip).
    """

    def __init__(self, model, gain=DEFAULT_GAIN, thresholds=5.0, hysteresis=0.2, frame=None,
                 friction=None, max_gap=DEFAULT_MAX_GAP):
        check_model(model)
        values = np.asarray(thresholds, dtype=float).reshape(-1)
        if values.size == 1:
            values = np.full(model.nv, float(values[0]))
        if values.size != model.nv:
            raise InputError(f'contact_threshold needs 1 or {model.nv} values, got '
                             f'{values.size}')
        self.model = model
        self.frame = model.frame(frame or None).name
        self.observer = MomentumObserver(model, gain, friction, max_gap)
        self.detector = ContactDetector(values, hysteresis)

    @property
    def thresholds(self):
        """Return the per-joint thresholds."""
        return self.detector.thresholds

    def update(self, t, q, qd, tau, gravity=None):
        """Take a sample; return ``(tau_ext estimate, per-joint contact flags)``."""
        r = self.observer.update(t, q, qd, tau, gravity)
        return r, self.detector.update(r)

    def wrench(self, q):
        """Return the contact wrench at the frame (see :func:`external_wrench`)."""
        return external_wrench(self.model, q, self.observer.estimate, self.frame)

    def reset(self, reason='reset'):
        """Re-zero the observer and forget the contacts."""
        self.observer.reset(reason)
        self.detector.reset()
