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

"""The external-torque estimate's noise per joint, measured while nothing touches the arm."""

import math

import numpy as np

from ..errors import InputError

__all__ = ['TorqueNoise']


class TorqueNoise:
    """
    Running RMS of the estimated external torques per joint while out of contact.

    With nothing touching the arm, the observer's estimate is its error alone (sensor noise,
    friction and model error, observer lag): its RMS per joint, an exponential average over
    ``time_constant`` seconds of header-stamp time, is the ``noise`` that
    :func:`denoc_ros.locate_contact` weighs the joints by. Samples in contact are left out;
    ``floor`` [N m] keeps a joint that happens to be quiet from being trusted beyond reason, and
    ``initial`` is the value until ``time_constant`` seconds have been seen.
    """

    def __init__(self, n, time_constant=2.0, floor=0.05, initial=0.3):
        for name, value in (('time_constant', time_constant), ('floor', floor),
                            ('initial', initial)):
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise InputError(f'{name} must be a finite number > 0, got {value!r}')
        self.n = int(n)
        self.time_constant = float(time_constant)
        self.floor = float(floor)
        self.initial = float(initial)
        self.reset()

    def reset(self):
        """Forget what was measured (a new robot model, a restarted observer)."""
        self._mean_square = np.full(self.n, self.initial ** 2)
        self._seen = 0.0
        self._last = None

    def update(self, t, tau_ext, in_contact):
        """Take the estimate at stamp ``t`` [s] unless ``in_contact``; return :attr:`sigma`."""
        last, self._last = self._last, t
        if in_contact or last is None or not t > last:
            return self.sigma
        tau = np.asarray(tau_ext, dtype=float)
        if tau.shape != (self.n,) or not np.all(np.isfinite(tau)):
            return self.sigma
        dt = min(t - last, self.time_constant)
        self._seen += dt
        # The first time constant's samples are averaged as they come (weight dt / seen), then
        # exponentially (weight dt / time_constant).
        weight = dt / max(min(self._seen, self.time_constant), dt)
        self._mean_square += weight * (tau * tau - self._mean_square)
        return self.sigma

    @property
    def sigma(self):
        """Return the standard deviation (n,) [N m] per joint, at least ``floor``."""
        if self._seen <= 0.0:
            return np.full(self.n, self.initial)
        return np.maximum(np.sqrt(self._mean_square), self.floor)
