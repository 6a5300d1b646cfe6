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
The compiled kernels still run as plain Python: dynamics tests under ``NUMBA_DISABLE_JIT=1``.

DESIGN.md asks that the numba kernels stay valid Python (for debugging, coverage, and machines
without numba). The dynamics tests -- Pinocchio comparisons, closed forms, identities, the two
Coriolis matrices, input errors, batching, the Cartesian quantities -- run in a subprocess with
the JIT disabled and must pass (about 10 s: they evaluate few states).
"""

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

TESTS = [
    'test/test_dynamics_pinocchio.py',
    'test/test_kernel_helpers.py',
    'test/test_floating_model.py',
    'test/test_dynamics_closed_form.py',
    'test/test_dynamics_identities.py',
    'test/test_dynamics_coriolis.py',
    'test/test_dynamics_errors.py',
    'test/test_dynamics_batch.py',
    'test/test_cartesian.py',
]


@pytest.mark.slow
def test_dynamics_tests_pass_without_jit():
    env = dict(os.environ, NUMBA_DISABLE_JIT='1')
    env['PYTHONPATH'] = os.pathsep.join(
        [str(ROOT), str(ROOT / 'test')] + [p for p in [env.get('PYTHONPATH')] if p])
    result = subprocess.run(
        [sys.executable, '-m', 'pytest', '-q', '-x', '-p', 'no:cacheprovider'] + TESTS,
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    tail = '\n'.join((result.stdout + result.stderr).splitlines()[-30:])
    assert result.returncode == 0, tail
    assert ' passed' in tail and 'failed' not in tail, tail


def test_kernels_are_compiled_unless_disabled():
    """In this process (JIT on, unless the caller disabled it) the kernels are numba functions."""
    import numba  # a dependency of the package
    from denoc_ros.dynamics import rnea
    if numba.config.DISABLE_JIT:
        pytest.skip('NUMBA_DISABLE_JIT is set for this run')
    assert hasattr(rnea.newton_euler_one, 'py_func')
