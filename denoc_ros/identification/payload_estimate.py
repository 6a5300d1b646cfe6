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
Payload estimation: the estimate of the rigid body on one link beyond the model.

The ten inertial parameters of whatever is welded to a link enter the joint efforts linearly,
through the ten regressor columns of the body that carries the link (Atkeson, An & Hollerbach
1986)::

    tau - ID_model(q, qd, qdd) - F_model(qd) = Y_b(q, qd, qdd) X_bl p_l + noise

``ID_model`` is the model's inverse dynamics (payloads already attached included), ``F_model``
its friction law when asked for, ``Y_b`` the body's ten columns of
:func:`denoc_ros.regressor` and ``p_l = [m, m c, I_o]`` the payload's parameters in the
link's frame (``c`` its centre of mass, ``I_o`` its inertia about the link origin). A link
welded into a body (a flange, a tool frame) is placed in the body by the fixed transform
``X = [[R, t], [0, 1]]``; the pseudo-inertia maps by congruence, ``J_b = X J_l X^T``
(Wensing, Kim & Slotine 2017), which is the linear map ``X_bl`` above and keeps positive
definiteness. The estimate is therefore the **change** relative to the model: a part that
the URDF already describes, or a payload already attached, is not seen again.

What the data can tell (decided on the columns scaled to a reference body of 1 kg and
``length`` = 0.1 m: mass columns times 1 kg, first-moment columns times 1 kg x length,
inertia columns times 1 kg x length^2, so each column is the effort such a body's parameter
produces):

* mass and centre of mass: the four mass and first-moment columns. Their smallest singular
  value over the largest of all ten must reach ``rcond`` (default 1e-3), else
  :class:`~denoc_ros.errors.DataError` names the unexcited direction (one pose leaves the
  centre of mass along gravity unseen; efforts that are all zero leave everything unseen).
* rotational inertia: the six inertia columns with what the mass and first-moment columns
  explain projected out. If their smallest singular value over the largest of all ten reaches
  ``inertia_rcond`` (default 3e-3), all ten parameters are fitted; otherwise (static poses:
  the inertia columns are zero) only mass and centre of mass, and the answer is a point mass
  with ``inertia_identified`` false. Why 3e-3: in the MuJoCo test a slow hand-made wrist
  motion at 1.1e-3 gave the inertia 23 to 31 % off (the residual model mismatch of filtering
  and friction at velocity reversals, amplified), the designed motion at 7.3e-3 6 to 7.5 %.

The fit: least squares, each joint's rows weighted by one over its residual spread under
ordinary least squares (Gautier & Khalil; the weights are floored at 1e-6 of the largest so
exact data stay well posed). If that solution is not a physical rigid body (pseudo-inertia not
positive definite), the physically consistent minimum is found instead
(:func:`~denoc_ros.identification.estimation.consistent_minimum`); the answer is always a real
rigid body. Standard deviations: ``s^2 (Y^T W^2 Y)^-1`` with ``s^2`` the weighted residual
variance, assuming the efforts' errors are independent between samples, zero-mean, of one
spread per joint, and the model otherwise exact; mapped to mass, centre of mass and inertia
about it to first order. Filtered samples are correlated in time, so with densely sampled
filtered data these are lower bounds.

Recordings (:func:`estimate_payload_from_recording`, :class:`PayloadWindow`) are filtered and
differentiated by :func:`~denoc_ros.identification.data.prepare_samples` with a 20 Hz cut-off
(:data:`PAYLOAD_CUTOFF`) rather than identification's 10 Hz: the wrist's Coulomb friction
steps at every velocity reversal, and the filter smears the step in the efforts more than the
filtered sign column can follow. Measured on the MuJoCo test (UR5e, 1.5 kg box, designed
12 s wrist motion, noise-free efforts): inertia error 8.0 % at 10 Hz, 3.6 % at 20 Hz, 3.6 % at
40 Hz; with noise (0.05 N m on the wrist) 6 to 7.5 % at 20 Hz, mass and centre of mass
unchanged (0.05 %, 0.2 mm).

This module holds the estimate (:func:`estimate_payload`, from a recording
:func:`estimate_payload_from_recording`, the result :class:`PayloadEstimate`); the window of
recent joint states it is run on in the node is :mod:`.payload_window`.
"""

from dataclasses import dataclass, field
import math

import numpy as np

from .estimation import (_parameters_of_pseudo_inertia, _pseudo_inertia, consistent_minimum,
                         NormalEquations)
from ..dynamics._state import check_model
from ..dynamics.regressor import regressor
from ..dynamics.rnea import inverse_dynamics
from ..errors import DataError, InputError
from ..friction import friction_torques

__all__ = ['estimate_payload', 'estimate_payload_from_recording', 'PayloadEstimate',
           'link_transform', 'DEFAULT_LENGTH', 'DEFAULT_RCOND', 'INERTIA_RCOND',
           'PAYLOAD_CUTOFF', 'STANDARD_DEVIATION_NAMES']

DEFAULT_LENGTH = 0.1
"""The reference length [m] of the scaled columns (a payload of 1 kg spread over 10 cm)."""

PAYLOAD_CUTOFF = 20.0
"""Low-pass cut-off [Hz] of the recordings' filter for payload estimation (module docstring)."""

DEFAULT_RCOND = 1e-3
"""Smallest scaled singular value, relative to the largest, of a direction counted as seen."""

INERTIA_RCOND = 3e-3
"""The same for the rotational inertia's six directions (module docstring)."""

STANDARD_DEVIATION_NAMES = ('m', 'com_x', 'com_y', 'com_z', 'ixx', 'ixy', 'ixz', 'iyy', 'iyz',
                            'izz')
"""The order of :attr:`PayloadEstimate.standard_deviation` (EstimatePayload's)."""

_GROUP_NAMES = ('mass', 'COM x', 'COM y', 'COM z')


@dataclass(frozen=True)
class PayloadEstimate:
    """
    The payload on ``link``: mass [kg], ``com`` (3,) in the link frame [m], ``inertia`` (3, 3).

    ``inertia`` is about the centre of mass with the link frame's axes (zero when
    ``inertia_identified`` is false: a point mass). ``standard_deviation`` (10,): one standard
    deviation of m, com x y z, ixx ixy ixz iyy iyz izz (the inertia's are zero when not
    identified). ``parameters`` (10,): ``[m, m c_x, m c_y, m c_z, Ixx, Ixy, Iyy, Ixz, Iyz,
    Izz]`` about the link origin (the regressor's order); ``covariance`` (10, 10) theirs.
    ``residual_rms``: root mean square of the efforts left unexplained (all joints and
    samples). ``singular_values`` (10,): of the scaled columns (see the module docstring),
    relative to the largest; ``excitation`` the smallest for mass and centre of mass and for the
    inertia; ``constrained``: the least-squares solution was not physical and the physically
    consistent one was used. ``samples``: states used.
    """

    link: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    standard_deviation: np.ndarray
    inertia_identified: bool
    residual_rms: float
    parameters: np.ndarray
    covariance: np.ndarray
    singular_values: np.ndarray
    excitation: dict = field(default_factory=dict)
    constrained: bool = False
    samples: int = 0
    friction: bool = False

    def summary(self):
        """Return a few lines for a person: the estimate with its standard deviations."""
        s = self.standard_deviation
        c = self.com
        lines = [f'payload on {self.link}: {self.mass:.4f} +- {s[0]:.2g} kg, centre of mass '
                 f'({c[0]:.4f}, {c[1]:.4f}, {c[2]:.4f}) +- ({s[1]:.2g}, {s[2]:.2g}, {s[3]:.2g}) m',
                 f'residual {self.residual_rms:.3g} (rms) over {self.samples} states']
        if self.inertia_identified:
            i = self.inertia
            lines.insert(1, f'inertia about the centre of mass (ixx ixy ixz iyy iyz izz): '
                         f'{i[0, 0]:.4g} {i[0, 1]:.4g} {i[0, 2]:.4g} {i[1, 1]:.4g} '
                         f'{i[1, 2]:.4g} {i[2, 2]:.4g} kg m^2')
        else:
            lines.insert(1, 'inertia not identified (no motion excited it): a point mass')
        return '\n'.join(lines)


def link_transform(model, link):
    """Return ``(body, link name, X (10, 10))``: the body carrying ``link``, ``p_b = X p_l``."""
    frame = model.frame(link)
    if frame.body < 0:
        raise InputError(f'link {frame.name!r} is welded to the fixed base: a payload there '
                         'causes no joint effort and cannot be estimated')
    H = np.eye(4)
    H[:3, :3] = frame.rotation
    H[:3, 3] = frame.translation
    X = np.empty((10, 10))
    for k in range(10):
        X[:, k] = _parameters_of_pseudo_inertia(H @ _pseudo_inertia(np.eye(10)[k]) @ H.T)
    X[np.abs(X) < 1e-15] = 0.0
    return frame.body, frame.name, X


def _states(model, name, value):
    """Return ``value`` as a finite (N, n) float array, InputError naming it otherwise."""
    try:
        a = np.array(value, dtype=float, ndmin=2)
    except (TypeError, ValueError) as exc:
        raise InputError(f'{name} must be numbers: {exc}') from None
    n = model.dof
    if a.ndim != 2 or a.shape[1] != n:
        raise InputError(f'{name} has shape {np.shape(value)}, expected (samples, {n}) or ({n},) '
                         f'(joints: {", ".join(model.joint_names)})')
    if not np.all(np.isfinite(a)):
        raise InputError(f'{name} must be finite (no NaN or inf)')
    return a


def _point_values(p):
    """Return ``(m, c, I_c)`` of ten link-frame parameters."""
    m = p[0]
    c = p[1:4] / m
    I_o = np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
    I_c = I_o - m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
    return m, c, I_c


def _reported(p):
    """Return the ten reported values m, c, ixx ixy ixz iyy iyz izz of ten parameters."""
    m, c, I_c = _point_values(p)
    return np.array([m, *c, I_c[0, 0], I_c[0, 1], I_c[0, 2], I_c[1, 1], I_c[1, 2], I_c[2, 2]])


def _reported_covariance(p, cov, free):
    """Return the reported values' standard deviations by first-order propagation of ``cov``."""
    G = np.zeros((10, 10))
    scale = np.maximum(np.abs(p), 1e-9 * max(abs(p[0]), 1e-12))
    for k in np.flatnonzero(free):
        h = 1e-6 * scale[k]
        step = np.zeros(10)
        step[k] = h
        G[:, k] = (_reported(p + step) - _reported(p - step)) / (2.0 * h)
    out = G @ cov @ G.T
    return np.sqrt(np.maximum(np.diag(out), 0.0))


def _weak_names(vectors):
    """Return the names of the mass/first-moment parameters carrying the given directions."""
    names = []
    for v in vectors.T:
        for k in np.flatnonzero(np.abs(v) > 0.3):
            if _GROUP_NAMES[k] not in names:
                names.append(_GROUP_NAMES[k])
    return names


def _weighted_fit(normal, Ys, r, free):
    """
    Return ``(theta, covariance, weights)`` of the ``free`` scaled parameters.

    Ordinary least squares from the normal equations, then each joint's rows weighted by one
    over its residual spread (floored at 1e-6 of the largest) and solved again; the residuals
    are computed from the rows, not from the normal equations, so exact data stay exact.
    """
    N, n = r.shape
    Yf = Ys[..., free]
    A, b, _ = normal.combined()
    theta = np.linalg.solve(A[np.ix_(free, free)], b[free])
    sigma = np.sqrt(np.mean((r - Yf @ theta) ** 2, axis=0))
    floor = 1e-6 * max(float(sigma.max()), 1e-300)
    weights = 1.0 / np.maximum(sigma, floor)
    A, b, _ = normal.combined(weights)
    Af = A[np.ix_(free, free)]
    theta = np.linalg.solve(Af, b[free])
    e = (r - Yf @ theta) * weights
    dof = max(N * n - int(np.count_nonzero(free)), 1)
    s2 = float(np.sum(e * e)) / dof
    return theta, s2 * np.linalg.inv(Af), weights


def estimate_payload(model, link=None, q=None, qd=None, qdd=None, tau=None, friction=False,
                     coulomb=None, length=DEFAULT_LENGTH, rcond=DEFAULT_RCOND,
                     inertia_rcond=INERTIA_RCOND):
    """
    Return the :class:`PayloadEstimate` on ``link`` explaining the efforts beyond the model.

    ``q``, ``qd``, ``qdd``, ``tau``: states and measured efforts, shape ``(N, n)`` (or ``(n,)``
    for one state); ``link``: any link of the model (default, None: the tip link).
    ``friction``: subtract the model's friction law first (its URDF damping and friction);
    ``coulomb`` (N, n), optional: the Coulomb column's values to use for it (the filtered sign
    of :class:`~denoc_ros.identification.data.Samples`). ``length``, ``rcond`` and
    ``inertia_rcond``: how the excitation is judged (module docstring).

    Raises :class:`~denoc_ros.errors.DataError` naming what the data leave unseen (no efforts,
    one pose, a centre-of-mass axis never turned against gravity) and
    :class:`~denoc_ros.errors.InputError` for malformed arrays or an unknown link.
    """
    check_model(model)
    if model.floating:
        raise InputError('estimate_payload takes a fixed-base model')
    if tau is None:
        raise DataError('payload estimate: no efforts given (the joint states carry no effort)')
    q = _states(model, 'q', q)
    N, n = q.shape
    qd = np.zeros_like(q) if qd is None else _states(model, 'qd', qd)
    qdd = np.zeros_like(q) if qdd is None else _states(model, 'qdd', qdd)
    tau = _states(model, 'tau', tau)
    for name, a in (('qd', qd), ('qdd', qdd), ('tau', tau)):
        if a.shape != q.shape:
            raise InputError(f'{name} has {a.shape[0]} states, q has {N}')
    valid = 0.0 < rcond < 1.0 and 0.0 < inertia_rcond < 1.0
    if not (length > 0.0 and math.isfinite(length)) or not valid:
        raise InputError(f'length must be positive ({length}), rcond ({rcond}) and '
                         f'inertia_rcond ({inertia_rcond}) in (0, 1)')
    body, link, X = link_transform(model, link)
    if not np.any(tau):
        raise DataError(f'payload on {link!r}: the efforts are all zero (the joint states carry '
                        'no effort measurement)')
    expected = inverse_dynamics(model, q, qd, qdd)
    if friction:
        if coulomb is None:
            expected = expected + friction_torques(model, qd)
        else:
            coulomb = _states(model, 'coulomb', coulomb)
            expected = expected + model.damping * qd + model.friction * coulomb
    r = tau - expected                                                    # (N, n)
    Y = regressor(model, q, qd, qdd)[..., 10 * body:10 * body + 10] @ X   # (N, n, 10)
    # Scaled columns (module docstring): parameters in units of 1 kg and `length`.
    unit = np.array([1.0] + [length] * 3 + [length ** 2] * 6)
    Ys = Y * unit
    normal = NormalEquations(n, 10)
    normal.add(Ys, r)
    A, _, _ = normal.combined()
    s_all = np.sqrt(np.maximum(np.linalg.eigvalsh(A), 0.0))[::-1]
    top = float(s_all[0])
    if not top > 0.0:
        raise DataError(f'payload on {link!r}: no joint effort depends on a payload there in '
                        'these states')
    relative = s_all / top
    lam_g, vec_g = np.linalg.eigh(A[:4, :4])
    s_g = np.sqrt(np.maximum(lam_g, 0.0))
    weak = s_g / top < rcond
    if np.any(weak):
        names = _weak_names(vec_g[:, weak])
        raise DataError(
            f'payload on {link!r}: the data do not show the {", ".join(names)} (scaled singular '
            f'value {s_g[0] / top:.1e} < {rcond:g}, {N} states): hold the arm still in at least '
            'three or four poses that turn the link differently against gravity, or move it')
    schur = A[4:, 4:] - A[4:, :4] @ np.linalg.solve(A[:4, :4], A[:4, 4:])
    s_i = np.sqrt(np.maximum(np.linalg.eigvalsh(0.5 * (schur + schur.T)), 0.0))
    identified = bool(s_i[0] / top >= inertia_rcond)
    excitation = {'mass_com': float(s_g[0] / top), 'inertia': float(s_i[0] / top)}
    free = np.ones(10, dtype=bool) if identified else np.arange(10) < 4
    theta, cov_free, weights = _weighted_fit(normal, Ys, r, free)
    p = np.zeros(10)
    p[free] = theta * unit[free]
    covariance = np.zeros((10, 10))
    covariance[np.ix_(free, free)] = cov_free * np.outer(unit[free], unit[free])
    constrained = False
    if not p[0] > 0.0:
        raise DataError(f'payload on {link!r}: the efforts show no added mass ({p[0]:.3g} kg '
                        f'+- {math.sqrt(covariance[0, 0]):.2g} beyond the model): nothing to '
                        'estimate, or the model already holds more than is there')
    if identified:
        J = _pseudo_inertia(p)
        if np.linalg.eigvalsh(J)[0] <= 1e-12 * max(float(np.abs(J).max()), 1e-300):
            Aw, bw, cw = normal.combined(weights)          # scaled coordinates
            nominal = p.copy()   # prior centre: the point mass of the same m and m c
            h = p[1:4]
            I_o = (np.dot(h, h) * np.eye(3) - np.outer(h, h)) / p[0]
            nominal[4:] = [I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2], I_o[2, 2]]
            fit = consistent_minimum(Aw / np.outer(unit, unit), bw / unit, cw, nominal,
                                     unit * max(p[0], 1e-3), 1, np.zeros(0, dtype=bool))
            p = fit.theta
            constrained = True
    m, c, I_c = _point_values(p)
    if not identified:
        I_c = np.zeros((3, 3))
    std = _reported_covariance(p, covariance, free)
    if not identified:
        std[4:] = 0.0      # not estimated: the point mass's inertia is zero by choice
    residual = r - Y @ p
    return PayloadEstimate(
        link=link, mass=float(m), com=c, inertia=0.5 * (I_c + I_c.T), standard_deviation=std,
        inertia_identified=identified, residual_rms=float(np.sqrt(np.mean(residual ** 2))),
        parameters=p, covariance=covariance, singular_values=relative, excitation=excitation,
        constrained=constrained, samples=N, friction=bool(friction))


def estimate_payload_from_recording(model, recording, link=None, friction=False,
                                    settings=None, **options):
    """
    Return the :class:`PayloadEstimate` from a recording (filtered as for identification).

    ``recording``: a :class:`~denoc_ros.identification.data.JointStateRecording` (e.g. from
    :func:`~denoc_ros.identification.data.read_recording`), filtered and differentiated per
    continuous segment by :func:`~denoc_ros.identification.data.prepare_samples` with
    ``settings`` (default: :data:`PAYLOAD_CUTOFF`, never across a gap); ``options`` go to
    :func:`estimate_payload`.
    """
    from .data import FilterSettings, prepare_samples
    if settings is None:
        settings = FilterSettings(cutoff=PAYLOAD_CUTOFF)
    samples = prepare_samples(recording, settings)
    return estimate_payload(model, link, samples.q, samples.qd, samples.qdd, samples.tau,
                            friction=friction, coulomb=samples.coulomb if friction else None,
                            **options)
