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
Filtering and differentiating a recording for identification (:func:`prepare_samples`).

The recording is split into continuous segments at gaps, each segment resampled onto a uniform
grid where its stamps are not uniform, then positions, velocities and efforts are low-pass
filtered with the same zero-phase Butterworth filter (``scipy.signal.sosfiltfilt``; the same
filter on motion and torque keeps them consistent, "parallel filtering"), accelerations come
from central differences of the filtered velocities, the filter's edge transients are trimmed
off and the result decimated. See :class:`FilterSettings` for the defaults and why; the result
is :class:`Samples`.
"""

from dataclasses import dataclass
import math
import warnings

import numpy as np

from .recording import _checked, DataWarning, MIN_SAMPLES
from ..errors import DataError
from ..friction import coulomb_sign

__all__ = ['FilterSettings', 'prepare_samples', 'Samples']


@dataclass(frozen=True)
class FilterSettings:
    """
    How :func:`prepare_samples` filters, differentiates, trims and decimates.

    ``cutoff`` (Hz), default 10: excitation trajectories for identification are band-limited
    to a few Hz (finite Fourier series, fundamental about 0.1 Hz, a handful of harmonics), so
    10 Hz keeps the motion and the torque it causes essentially unattenuated (the 4th-order
    zero-phase filter passes 1.5 Hz with a gain of 1 - 3e-7) while removing the sensor and
    quantisation noise that differentiation amplifies. ``order``, default 4: Butterworth order;
    applied forwards and backwards, so the magnitude response is that of order 8 and the
    phase is zero.

    ``decimate``: keep every k-th sample after filtering; ``None`` picks the largest k that
    keeps the sample rate at or above 10 times the cut-off (1 kHz, 10 Hz: k = 10, 100 Hz kept).
    The filtered signals hold nothing above the cut-off, so more samples add no information,
    only regressor rows.

    ``trim`` (s): dropped at both ends of every segment, where the filter's edge transient
    corrupts the (differentiated) signals. ``None``: ``3 / cutoff`` (0.3 s at 10 Hz). Measured on
    a 1 kHz sum of 0.2 to 1.5 Hz sinusoids, the acceleration error of the filtered derivative
    decays to 2e-4 of the acceleration amplitude 3 / cutoff away from an edge at cut-offs of 5,
    10 and 20 Hz, and is 1000 times larger 0.5 / cutoff away.

    ``max_gap``: a gap between stamps longer than this many median sample periods
    splits the recording into segments, filtered separately; shorter gaps (a few dropped
    messages) are bridged by the linear resampling. Default 10 (10 ms at 1 kHz, a tenth of a
    period of the cut-off frequency).
    """

    cutoff: float = 10.0
    order: int = 4
    decimate: int = None
    trim: float = None
    max_gap: float = 10.0


@dataclass(frozen=True)
class Samples:
    """
    Filtered samples for identification: ``time`` (M,) s; ``q``, ``qd``, ``qdd``, ``tau`` (M, n).

    Columns in the order of ``joint_names``; ``segments`` continuous pieces of recording
    contributed (their samples are concatenated in time order).

    ``coulomb`` (M, n): the Coulomb friction column ``tanh(qd / v_s)`` (the friction model's
    :func:`~denoc_ros.friction.coulomb_sign` at its default ``v_s``, as the identification's
    layout uses it) computed at the full rate and then low-pass filtered like the efforts. The
    efforts' Coulomb step at a velocity reversal is smeared by the filter; the sign of the
    filtered velocity is not. Regressing
    the filtered efforts on the filtered sign (Gautier's parallel filtering) removes the bias
    the mismatch causes (Coulomb levels found too low, viscous ones too high). None when the
    samples were made otherwise.
    """

    time: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    joint_names: tuple
    segments: int
    coulomb: np.ndarray = None

    def part(self, index):
        """Return the samples ``index`` (a slice) selects, every array alike."""
        return Samples(self.time[index], self.q[index], self.qd[index], self.qdd[index],
                       self.tau[index], self.joint_names, self.segments,
                       None if self.coulomb is None else self.coulomb[index])


def _check_settings(settings):
    """Raise DataError on settings that cannot be used."""
    def bad(name, must, value):
        raise DataError(f'FilterSettings.{name} must be {must}, got {value!r}')

    if not isinstance(settings, FilterSettings):
        raise DataError(f'settings must be a FilterSettings, got {type(settings).__name__}')
    try:
        if not (math.isfinite(settings.cutoff) and settings.cutoff > 0):
            bad('cutoff', 'a positive number of Hz', settings.cutoff)
    except TypeError:
        bad('cutoff', 'a positive number of Hz', settings.cutoff)
    if not isinstance(settings.order, (int, np.integer)) or not 1 <= settings.order <= 12:
        bad('order', 'an integer from 1 to 12', settings.order)
    if settings.decimate is not None and (
            not isinstance(settings.decimate, (int, np.integer)) or settings.decimate < 1):
        bad('decimate', 'None or a positive integer', settings.decimate)
    if settings.trim is not None and not (isinstance(settings.trim, (int, float))
                                          and math.isfinite(settings.trim)
                                          and settings.trim >= 0):
        bad('trim', 'None or a non-negative number of seconds', settings.trim)
    if not (isinstance(settings.max_gap, (int, float)) and settings.max_gap > 1):
        bad('max_gap', 'a number of sample periods greater than 1', settings.max_gap)


def prepare_samples(recording, settings=FilterSettings()):
    """
    Return filtered :class:`Samples` ``(q, qd, qdd, tau)`` of ``recording``.

    Per continuous segment (split at gaps longer than ``settings.max_gap`` median periods):
    resampled by linear interpolation onto a uniform grid at the nominal sample period (the
    mean of the steps within 50 % of the median step), unless already uniform; ``q``, ``qd``
    and ``tau`` low-pass filtered with a zero-phase Butterworth filter
    (``scipy.signal.sosfiltfilt``); ``qdd`` the central difference of the
    filtered ``qd`` (without velocities in the recording, ``qd`` is the central difference of
    the filtered ``q``); an effort column that is all NaN (a joint without effort sensing)
    stays NaN; ``settings.trim`` seconds dropped at each end; every
    ``settings.decimate``-th sample kept. Segments too short for that are dropped with a
    :class:`DataWarning`. Raises :class:`~denoc_ros.errors.DataError` if the sample rate is
    too low for the cut-off or fewer than :data:`MIN_SAMPLES` samples are left.
    """
    from scipy.signal import butter, sosfiltfilt

    _check_settings(settings)
    names, t, position, velocity, effort = _checked(recording)
    where = recording.source
    for field, values in (('time', t), ('position', position), ('velocity', velocity),
                          ('effort', effort)):
        if values is None:
            continue
        finite = np.isfinite(values)
        if field == 'effort':
            finite |= np.isnan(values).all(axis=0)    # a joint without effort sensing
        if not finite.all():
            raise DataError(f'{where}: {field} has non-finite values')
    if t.size < MIN_SAMPLES:
        raise DataError(f'{where}: only {t.size} samples (at least {MIN_SAMPLES} needed)')
    steps = np.diff(t)
    if not (steps > 0).all():
        raise DataError(f'{where}: time is not strictly increasing (at sample '
                        f'{int(np.argmin(steps > 0)) + 1})')
    # The nominal period: the mean of the steps within 50 % of the median step, i.e. without
    # gaps and dropped messages. Not the median itself: float stamps quantise the steps (at
    # epoch times a float resolves 0.24 us), and for evenly spaced stamps the mean is their
    # exact spacing, so no resampling is needed. With jittered stamps any nearby period serves:
    # the samples are interpolated onto the grid whose spacing is used to differentiate.
    median = float(np.median(steps))
    dt = float(steps[np.abs(steps - median) < 0.5 * median].mean())
    gap = steps > settings.max_gap * median
    rate = 1.0 / dt
    cutoff = float(settings.cutoff)
    if cutoff >= 0.5 * rate:
        raise DataError(f'{where}: the cut-off {cutoff:g} Hz is not below half the sample rate '
                        f'({0.5 * rate:.6g} Hz; sample period {dt * 1e3:.6g} ms): lower '
                        'FilterSettings.cutoff')
    sos = butter(settings.order, cutoff, fs=rate, output='sos')
    padlen = 3 * (2 * sos.shape[0] + 1)
    k = settings.decimate or max(1, int(math.floor(rate / (10.0 * cutoff) * (1 + 1e-6))))
    trim = 3.0 / cutoff if settings.trim is None else float(settings.trim)
    n_trim = int(math.ceil(trim / dt - 1e-6))
    breaks = np.flatnonzero(gap) + 1
    bounds = list(zip(np.r_[0, breaks], np.r_[breaks, t.size]))

    def smooth(column, uniform, tr, grid):
        x = column if uniform else np.interp(grid, tr, column)
        return sosfiltfilt(sos, x)

    pieces, dropped = [], []
    n = len(names)
    for number, (i0, i1) in enumerate(bounds):
        tr = t[i0:i1] - t[i0]
        m = int(math.floor(tr[-1] / dt + 1e-6)) + 1
        if m - 2 * n_trim < MIN_SAMPLES or m <= padlen:
            dropped.append(f'{t[i0]:.6g} s to {t[i1 - 1]:.6g} s ({m} samples)')
            continue
        grid = dt * np.arange(m)
        uniform = m == tr.size and np.abs(tr - grid).max() <= 1e-3 * dt
        keep = slice(n_trim, m - n_trim, k)
        kept = grid[keep]
        out = [t[i0] + kept] + [np.empty((kept.size, n)) for _ in range(5)]
        for j in range(n):
            q = smooth(position[i0:i1, j], uniform, tr, grid)
            qd = (smooth(velocity[i0:i1, j], uniform, tr, grid) if velocity is not None
                  else np.gradient(q, dt))
            out[1][:, j] = q[keep]
            out[2][:, j] = qd[keep]
            out[3][:, j] = np.gradient(qd, dt)[keep]
            out[5][:, j] = sosfiltfilt(sos, coulomb_sign(qd))[keep]
            del q, qd
            out[4][:, j] = smooth(effort[i0:i1, j], uniform, tr, grid)[keep]
        pieces.append(out)
    if dropped:
        warnings.warn(f'{where}: {len(dropped)} of {len(bounds)} segments too short to filter '
                      f'and trim ({trim:.3g} s at each end) dropped: {"; ".join(dropped[:5])}'
                      f'{"; ..." if len(dropped) > 5 else ""}', DataWarning, stacklevel=2)
    total = sum(p[0].size for p in pieces)
    if total < MIN_SAMPLES:
        raise DataError(f'{where}: only {total} samples left after filtering, trimming '
                        f'{trim:.3g} s at the ends of {len(bounds)} segment(s) and decimating by '
                        f'{k} (at least {MIN_SAMPLES} needed)')
    time, q, qd, qdd, tau, coulomb = (np.concatenate([p[i] for p in pieces]) for i in range(6))
    return Samples(time, q, qd, qdd, tau, names, len(pieces), coulomb)
