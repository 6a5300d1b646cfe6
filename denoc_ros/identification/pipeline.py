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
Identification from filtered samples to an identified model, as one function.

:func:`identify` accumulates the normal equations of the full regressor chunk by chunk, reduces
to the base parameters, fits them by (weighted) least squares, then fits the physically
consistent standard parameters with the WLS weights, and validates both the nominal and the
identified model on held-out samples. The torque error is reported per joint as RMS [N m or N]
and as NRMSE, the RMS error over the range (max - min) of the measured effort of that joint;
the overall NRMSE is the mean over the joints.

Joints whose efforts are not measured (``sensed``: a per-joint mask, False for such a joint) take
part through their motion only: their rows are left out of the normal equations (so of the
ordinary, weighted and physically consistent fits), of the base-parameter reduction, and of
every validation number. The nominal model is validated twice: with the URDF's
``<dynamics>`` friction (``damping``, ``friction``) and without it (rigid bodies only), since a
URDF's friction is often a simulation's value.
"""

from dataclasses import dataclass, field
import time
from typing import Dict, Optional, Tuple

import numpy as np

from .base import base_parameters, BaseParameters
from .estimation import (least_squares, LeastSquaresFit, NormalEquations, PhysicalFit,
                         physically_consistent, sensed_mask, unexcited_joints)
from .parameters import ParameterLayout, with_inertial_parameters
from ..errors import DataError
from ..friction import coulomb_sign

__all__ = ['identify', 'Identification', 'torque_errors', 'CHUNK']

CHUNK = 20000
"""States per regressor chunk: 20,000 x 7 x 84 doubles are 94 MB."""


@dataclass
class Identification:
    """What :func:`identify` found, with the numbers a report shows."""

    layout: ParameterLayout
    base: BaseParameters
    least_squares: LeastSquaresFit
    physical: PhysicalFit
    model: object                       # the identified RobotModel (friction included)
    joint_terms: Dict[str, np.ndarray]  # identified joint coefficients by term
    validation: dict
    samples: int
    timings: Dict[str, float] = field(default_factory=dict)
    predictions: Optional[Tuple[np.ndarray, ...]] = None   # (time, measured, nominal, identified)
    sensed: Optional[np.ndarray] = None                    # (n,) bool: efforts measured
    bounds: Optional[tuple] = None                         # bounds.BodyBound per body, or None


def _regressor_chunks(layout, model, samples, size):
    """Yield ``(W, tau)`` chunk by chunk (the filtered Coulomb column where there is one)."""
    for start in range(0, samples.q.shape[0], size):
        part = samples.part(slice(start, start + size))
        yield layout.regressor(model, part.q, part.qd, part.qdd, part.coulomb), part.tau


def predict_torques(layout, model, theta, samples, chunk=CHUNK):
    """Return ``W theta`` over the samples (N, n), computed chunk by chunk."""
    chunks = _regressor_chunks(layout, model, samples, chunk)
    return np.concatenate([W @ theta for W, _ in chunks])


def torque_errors(measured, predicted, joint_names, sensed=None):
    """
    Return per-joint RMS and NRMSE of ``predicted - measured`` and the overall NRMSE.

    Only the ``sensed`` joints (default: all) are in the result and the mean.
    """
    mask = sensed_mask(sensed, len(joint_names))
    error = predicted[:, mask] - measured[:, mask]
    rms = np.sqrt(np.mean(error ** 2, axis=0))
    span = np.ptp(measured[:, mask], axis=0)
    nrmse = np.where(span > 0.0, rms / np.where(span > 0.0, span, 1.0), np.inf)
    names = [name for name, m in zip(joint_names, mask) if m]
    return {'nrmse': float(np.mean(nrmse)),
            'joints': {name: {'rms': float(r), 'nrmse': float(e)}
                       for name, r, e in zip(names, rms, nrmse)}}


def nominal_torques(model, samples, dynamics=True, chunk=CHUNK):
    """
    Return the nominal model's torques over ``samples`` (N, n).

    ``dynamics``: with the URDF's joint friction ``damping qd + friction c``, ``c`` the
    samples' filtered Coulomb column (``tanh(qd / v_s)`` where they have none).
    """
    layout = ParameterLayout.of(model)
    out = predict_torques(layout, model, layout.nominal, samples, chunk)
    if dynamics:
        sign = samples.coulomb if samples.coulomb is not None else coulomb_sign(samples.qd)
        out = out + model.damping * samples.qd + model.friction * sign
    return out


def identify(model, training, validation, joint_terms=(), progress=None, chunk=CHUNK,
             keep_predictions=True, sensed=None, locked=None, bounds=None):
    """
    Return the :class:`Identification` of ``model``'s parameters from filtered samples.

    ``training`` and ``validation``: sequences of ``filtering.Samples`` (``q, qd, qdd, tau``, in
    the model's joint order). ``joint_terms``: the joint columns to identify (friction,
    offset, armature). ``progress(fraction, what)`` is called as the chunks go.
    ``sensed`` (n,) bool: the joints whose efforts are measured (default all; the others'
    efforts may be NaN). ``locked`` (n, 10): parameters of the links locked onto each body
    (:func:`.bounds.locked_parameters`); ``bounds``: a :class:`.bounds.BodyBound` per body,
    or None (see :func:`.estimation.physically_consistent`).
    Raises DataError naming the joints the data leave unexcited.
    """
    timings = {}
    layout = ParameterLayout.of(model, joint_terms)
    mask = sensed_mask(sensed, layout.n)
    t0 = time.perf_counter()
    base = base_parameters(layout, model, sensed=mask)
    normal = NormalEquations(layout.n, layout.size, mask)
    total = sum(s.q.shape[0] for s in training)
    if total == 0:
        raise DataError('no training samples')
    done = 0
    regressor_time = 0.0
    for samples in training:
        chunks = _regressor_chunks(layout, model, samples, chunk)
        while True:
            t = time.perf_counter()
            W, tau = next(chunks, (None, None))
            regressor_time += time.perf_counter() - t
            if W is None:
                break
            normal.add(W, tau)
            done += W.shape[0]
            if progress is not None:
                progress(done / total, 'regressor')
    timings['regressor'] = regressor_time
    timings['normal equations'] = time.perf_counter() - t0 - regressor_time
    t0 = time.perf_counter()
    try:
        fit = least_squares(normal, base)
    except DataError:
        joints, weak = unexcited_joints(normal, base, model.joint_names)
        names = ', '.join(joints) if joints else ', '.join(weak[:6])
        raise DataError(f'the data do not excite every base parameter (rank-deficient); '
                        f'joints left unexcited: {names}') from None
    if not np.isfinite(fit.condition) or fit.condition > 1e10:
        joints, weak = unexcited_joints(normal, base, model.joint_names)
        names = ', '.join(joints) if joints else ', '.join(weak[:6])
        raise DataError(f'the data barely excite some base parameters (condition number '
                        f'{fit.condition:.3g}); joints left unexcited: {names}')
    sigma = fit.joint_sigma
    weights = None
    if np.all(sigma[mask] > 0.0):
        weights = np.where(mask, 1.0 / np.where(mask, sigma, 1.0), 0.0)
    ellipsoids = None if bounds is None else np.array([b.matrix for b in bounds])
    physical = physically_consistent(normal, layout, model, weights=weights, locked=locked,
                                     ellipsoids=ellipsoids)
    inertial, terms = layout.split(physical.theta)
    changes = {}
    if 'viscous' in terms:
        changes['damping'] = terms['viscous']
    if 'coulomb' in terms:
        changes['friction'] = terms['coulomb']
    identified = with_inertial_parameters(model, inertial).replace(**changes)
    timings['solve'] = time.perf_counter() - t0
    t0 = time.perf_counter()
    result = Identification(layout, base, fit, physical, identified, terms, {}, total, timings,
                            sensed=mask, bounds=bounds)
    result.validation = validate(result, model, validation, keep_predictions)
    timings['validation'] = time.perf_counter() - t0
    return result


def validate(result, model, validation, keep_predictions=True):
    """Return the validation numbers of the nominal and the identified parameters."""
    layout = result.layout
    mask = sensed_mask(result.sensed, layout.n)
    if not validation:
        raise DataError('no validation samples')
    measured = np.concatenate([s.tau for s in validation])
    times = np.concatenate([s.time for s in validation])
    nominal = np.concatenate([predict_torques(layout, model, layout.nominal, s)
                              for s in validation])
    identified = np.concatenate([predict_torques(layout, model, result.physical.theta, s)
                                 for s in validation])
    ols = np.zeros(layout.size)
    ols[result.base.independent] = result.least_squares.beta
    base_fit = np.concatenate([predict_torques(layout, model, ols, s) for s in validation])
    rigid = np.concatenate([nominal_torques(model, s, False) for s in validation])
    with_dynamics = np.concatenate([nominal_torques(model, s, True) for s in validation])
    names = model.joint_names
    nominal_errors = torque_errors(measured, nominal, names, mask)
    identified_errors = torque_errors(measured, identified, names, mask)
    rigid_errors = torque_errors(measured, rigid, names, mask)
    dynamics_errors = torque_errors(measured, with_dynamics, names, mask)
    if keep_predictions:
        result.predictions = (times, measured, nominal, identified)
    return {
        'samples': int(measured.shape[0]),
        'nrmse_nominal': nominal_errors['nrmse'],
        'nrmse_nominal_rigid': rigid_errors['nrmse'],
        'nrmse_nominal_with_dynamics': dynamics_errors['nrmse'],
        'nrmse_identified': identified_errors['nrmse'],
        'nrmse_base_least_squares': torque_errors(measured, base_fit, names, mask)['nrmse'],
        'sensed_joints': [name for name, m in zip(names, mask) if m],
        'unsensed_joints': [name for name, m in zip(names, mask) if not m],
        'joints': {name: {'rms_nominal': nominal_errors['joints'][name]['rms'],
                          'nrmse_nominal': nominal_errors['joints'][name]['nrmse'],
                          'nrmse_nominal_rigid': rigid_errors['joints'][name]['nrmse'],
                          'nrmse_nominal_with_dynamics': dynamics_errors['joints'][name]['nrmse'],
                          'rms_identified': identified_errors['joints'][name]['rms'],
                          'nrmse_identified': identified_errors['joints'][name]['nrmse']}
                   for name in nominal_errors['joints']},
    }
