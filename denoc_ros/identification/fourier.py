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
The finite Fourier series of excitation trajectories and its exact derivatives.

Each joint follows a finite Fourier series of period ``T`` (Swevers, Ganseman, Tukel,
De Schutter & Van Brussel, "Optimal robot excitation and identification", IEEE Trans. Robotics
and Automation 13(5), 1997), ``w_f = 2 pi / T``, ``k = 1..K`` (``K`` harmonics: the one meaning
of a bare ``K`` in this package, as in ``denoc_excitation --harmonics K``)::

    q_j(t)   = q0_j + sum_k  a_jk / (w_f k) sin(w_f k t) - b_jk / (w_f k) cos(w_f k t)
    qd_j(t)  =        sum_k  a_jk cos(w_f k t) + b_jk sin(w_f k t)
    qdd_j(t) =        sum_k -a_jk w_f k sin(w_f k t) + b_jk w_f k cos(w_f k t)

(:func:`fourier_trajectory`). The trajectory is periodic with period ``T``, and so are its
derivatives: a recording of whole periods can be averaged period by period and differentiated
without end effects, and the bandwidth is ``K w_f``.

This module holds the series (:func:`fourier_basis`, :func:`fourier_trajectory`) and the
sample times over one period (:func:`period_samples`); the design of its coefficients is
:mod:`.excitation`, the optimisation problem :mod:`.excitation_problem`, the trajectory files
:mod:`.trajectory_files`.
"""

import math

import numpy as np

from ..errors import InputError

__all__ = ['fourier_basis', 'fourier_trajectory', 'period_samples']


def fourier_basis(base_frequency, harmonics, t):
    """
    Return ``(P, V, A)``, each ``(len(t), 2 K)``: the series' basis functions at times ``t``.

    ``q_j = q0_j + P @ [a_j, b_j]``, ``qd_j = V @ [a_j, b_j]``, ``qdd_j = A @ [a_j, b_j]``
    (the module docstring's series, Swevers et al. 1997), ``base_frequency`` ``w_f`` in rad/s.
    """
    t = np.asarray(t, dtype=float).reshape(-1)
    w = base_frequency * np.arange(1, harmonics + 1)
    s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    P = np.hstack((s / w, -c / w))
    V = np.hstack((c, s))
    A = np.hstack((-s * w, c * w))
    return P, V, A


def _coefficients(coefficients):
    """Return ``(a, b)`` as (n, K) float arrays, checked; else InputError."""
    try:
        a, b = coefficients
        a = np.atleast_2d(np.asarray(a, dtype=float))
        b = np.atleast_2d(np.asarray(b, dtype=float))
    except (TypeError, ValueError) as exc:
        raise InputError(f'Fourier coefficients must be a pair (a, b) of (n, K) arrays: '
                         f'{exc}') from None
    if a.ndim != 2 or a.shape != b.shape or a.shape[1] < 1:
        raise InputError(f'Fourier coefficients a {a.shape} and b {b.shape} must both have '
                         'shape (n joints, K harmonics)')
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise InputError('Fourier coefficients must be finite (no NaN or inf)')
    return a, b


def fourier_trajectory(coefficients, base_frequency, t, q0=0.0):
    """
    Return ``(q, qd, qdd)``, each ``(len(t), n)``: the finite Fourier series at times ``t``.

    ``coefficients``: ``(a, b)``, each ``(n, K)``; ``base_frequency``: ``w_f = 2 pi / T``
    [rad/s], ``T`` the period; ``q0``: the offsets (n,) or a scalar. Swevers et al. (1997)'s
    series (module docstring); ``qd`` and ``qdd`` are its exact derivatives.
    """
    a, b = _coefficients(coefficients)
    w_f = float(base_frequency)
    if not (math.isfinite(w_f) and w_f > 0.0):
        raise InputError(f'base frequency must be a positive angular frequency [rad/s], got '
                         f'{base_frequency!r}')
    t = np.asarray(t, dtype=float).reshape(-1)
    if not np.all(np.isfinite(t)):
        raise InputError('times must be finite')
    q0 = np.broadcast_to(np.asarray(q0, dtype=float), (a.shape[0],))
    P, V, A = fourier_basis(w_f, a.shape[1], t)
    c = np.hstack((a, b)).T                          # (2K, n)
    return q0 + P @ c, V @ c, A @ c


def period_samples(duration, rate, endpoint=True):
    """
    Return times over one period ``[0, T]``, evenly spaced at ``rate`` [Hz] or slightly faster.

    ``ceil(T rate)`` intervals; ``endpoint``: include ``t = T`` (where a periodic trajectory is
    back at ``t = 0``'s state, so that a controller looping the samples never jumps).
    """
    if not (math.isfinite(rate) and rate > 0.0):
        raise InputError(f'sample rate must be positive, got {rate!r}')
    count = max(1, int(math.ceil(duration * rate - 1e-9)))
    return np.linspace(0.0, duration, count + 1 if endpoint else count, endpoint=endpoint)
