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
The scalar helpers the compiled kernels share, against NumPy and the C library.

* ``sincos``: the kernels' own sine and cosine (a polynomial after reduction by pi/2) agree with
  ``math.sin`` and ``math.cos`` to within one unit in the last place over |x| <= 1e5, at the
  quadrant boundaries, near multiples of pi (where sin is small), and beyond the reduction's
  range (where it falls back to the library).
* ``all_finite``: every non-finite value, wherever it sits in a vector or a matrix.
* the stale-cache guard: a changed kernel source drops numba's cache files.
"""

import math

from denoc_ros.dynamics import _compile
import numpy as np
import pytest


def _ulps(a, b):
    """Return |a - b| in units of the last place of b (at least the spacing of 1e-300)."""
    return abs(a - b) / max(np.spacing(abs(b)), np.spacing(1e-300))


@pytest.mark.parametrize('scale', [1e-8, 1.0, 4.0, 100.0, 1e5])
def test_sincos_within_an_ulp_of_the_library(scale):
    rng = np.random.default_rng(int(scale * 1000) % 2 ** 32)
    for x in rng.uniform(-scale, scale, 20000):
        s, c = _compile.sincos(x)
        # One ulp of the larger of |sin|, |cos| at worst (sin near its zeros is then absolute).
        tolerance = 2.0 * np.spacing(max(abs(math.sin(x)), abs(math.cos(x))))
        assert abs(s - math.sin(x)) <= tolerance, x
        assert abs(c - math.cos(x)) <= tolerance, x


def test_sincos_at_quadrant_boundaries_and_beyond_the_reduction():
    points = [k * math.pi / 4 for k in range(-40, 41)]
    points += [np.nextafter(p, np.inf) for p in points]
    points += [np.nextafter(p, -np.inf) for p in points[:81]]
    points += [0.0, -0.0, 5e-324, 1e6, -1e6, 3.7e8, 1e300]
    for x in points:
        s, c = _compile.sincos(x)
        tolerance = 2.0 * np.spacing(max(abs(math.sin(x)), abs(math.cos(x))))
        assert abs(s - math.sin(x)) <= tolerance, x
        assert abs(c - math.cos(x)) <= tolerance, x
    assert _ulps(_compile.sincos(1e-8)[0], math.sin(1e-8)) <= 1.0


@pytest.mark.parametrize('shape', [(7,), (1,), (0,), (7, 7), (3, 5)])
@pytest.mark.parametrize('bad', [np.nan, np.inf, -np.inf])
def test_all_finite_finds_every_non_finite_value(shape, bad):
    x = np.ones(shape)
    assert _compile.all_finite(x)
    for index in np.ndindex(shape):
        y = x.copy()
        y[index] = bad
        assert not _compile.all_finite(y), (index, bad)


def test_a_changed_kernel_source_drops_the_numba_cache(tmp_path):
    (tmp_path / 'kernel.py').write_text('x = 1\n')
    cache = tmp_path / '__pycache__'
    cache.mkdir()
    stale = cache / 'kernel.f-1.py311.nbi'
    stale.write_text('index')
    _compile.drop_stale_caches(tmp_path)
    assert not stale.exists()  # no stamp yet: dropped, stamp written
    fresh = cache / 'kernel.f-1.py311.nbi'
    fresh.write_text('index')
    _compile.drop_stale_caches(tmp_path)
    assert fresh.exists()  # same sources: kept
    (tmp_path / 'kernel.py').write_text('x = 2\n')
    _compile.drop_stale_caches(tmp_path)
    assert not fresh.exists()  # edited: dropped
