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
The plain-Python user's install: ``pip install .`` of the repository into a fresh venv.

What the README's "install the library alone" gives, nothing more: the dependencies setup.py
declares bring numba, so the first call compiles its kernel and the compiled path is taken (no
``PerformanceWarning``); the console scripts on the venv's PATH are the ``denoc_``-prefixed ones
only. The venv is made by ``python -m venv`` (no system site packages) from this interpreter's
base Python; the repository is copied without venvs, .git and build outputs (pip builds in the
source tree, and the copy is 1 MB); pip resolves the dependencies from its configured index (PyPI).
About 30 s here, with pip's download cache warm.
"""

import json
import os
import pathlib
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
EXECUTABLES = ('dynamics_node', 'joint_state_source', 'torque_monitor', 'demo', 'sim_arm',
               'ct_controller', 'contact_demo')
NOT_COPIED = ('.venv*', '.git', 'build', 'install', 'log', '__pycache__', '*.egg-info',
              '.pytest_cache', '.hypothesis', '.ruff_cache')

pytestmark = pytest.mark.slow

# Run in the fresh venv: load the bundled Panda, one inverse dynamics (which compiles), then say
# what happened. Everything asserted is printed as JSON for the test to check.
PROBE = r"""
import importlib.metadata
import json
import pathlib
import sys
import time
import warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter('always')
    import numpy as np
    import denoc_ros as dr
    from denoc_ros.dynamics import _compile
    package = pathlib.Path(dr.__file__).parent
    cached_before = sorted(str(p) for p in package.rglob('*.nbi'))
    model = dr.load_urdf(sys.argv[1])
    q = np.linspace(-0.5, 0.5, model.dof)
    start = time.perf_counter()
    tau = dr.inverse_dynamics(model, q, q, q)
    first = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(1000):
        dr.inverse_dynamics(model, q, q, q)
    per_call = (time.perf_counter() - start) / 1000
try:
    import numba
    numba_version = numba.__version__
except ImportError as err:
    numba_version = f'not importable: {err}'
print(json.dumps({
    'prefix': sys.prefix,
    'module': dr.__file__,
    'compiled': _compile.COMPILED,
    'numba': numba_version,
    'dof': model.dof,
    'finite': bool(np.isfinite(tau).all()),
    'cached_before': cached_before,
    'cached_after': sorted(str(p) for p in package.rglob('*.nbi')),
    'first_call_s': first,
    'per_call_us': per_call * 1e6,
    'warnings': [[w.category.__name__, str(w.message)] for w in caught],
    'console_scripts': sorted(ep.name for ep in importlib.metadata.distribution(
        'denoc_ros').entry_points if ep.group == 'console_scripts'),
}))
"""


def clean_env():
    """Return this environment without what would leak the suite's venv into the fresh one."""
    env = {k: v for k, v in os.environ.items()
           if k not in ('PYTHONPATH', 'PYTHONHOME', 'VIRTUAL_ENV', 'PYTHONSTARTUP')
           and not k.startswith('NUMBA_')}
    env['PIP_DISABLE_PIP_VERSION_CHECK'] = '1'
    return env


def pypi_unreachable():
    """Return why https://pypi.org cannot be reached, or None if it can."""
    try:
        with urllib.request.urlopen('https://pypi.org/simple/numba/', timeout=15) as reply:
            reply.read(1)
    except OSError as err:
        return str(err)
    return None


@pytest.fixture
def fresh_install(tmp_path):
    """``pip install`` a copy of the repository into a new venv; yield (venv, seconds taken)."""
    start = time.monotonic()
    source = tmp_path / 'denoc_ros'
    by_name = shutil.ignore_patterns(*NOT_COPIED)

    def not_copied(folder, names):  # the patterns, and every venv whatever its name
        return by_name(folder, names) | {
            n for n in names if (pathlib.Path(folder, n, 'pyvenv.cfg')).is_file()}
    shutil.copytree(REPO, source, ignore=not_copied, symlinks=True)
    venv = tmp_path / 'venv'
    env = clean_env()
    made = subprocess.run([getattr(sys, '_base_executable', sys.executable), '-m', 'venv',
                           str(venv)], env=env, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, f'python -m venv failed:\n{made.stdout}\n{made.stderr}'
    try:
        run = subprocess.run([str(venv / 'bin' / 'python'), '-m', 'pip', 'install', str(source)],
                             cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
        if run.returncode != 0:
            why = pypi_unreachable()
            if why is not None:
                lines = run.stderr.strip().splitlines() or ['(nothing)']
                said = next((line.strip() for line in lines if 'ERROR:' in line), lines[-1])
                pytest.skip(f'PyPI cannot be reached ({why}); pip install said: {said}')
        assert run.returncode == 0, f'pip install failed:\n{run.stdout[-3000:]}\n{run.stderr}'
        yield venv, time.monotonic() - start
    finally:
        shutil.rmtree(tmp_path / 'venv', ignore_errors=True)  # some 300 MB


def test_pip_install_compiles_and_names_console_scripts(fresh_install):
    """Fresh venv: numba comes along, the first call compiles, denoc_ names only on PATH."""
    venv, install_seconds = fresh_install
    python = venv / 'bin' / 'python'
    probe = subprocess.run([str(python), '-I', '-c', PROBE, str(REPO / 'urdf' / 'panda.urdf')],
                           cwd=venv, env=clean_env(), capture_output=True, text=True,
                           timeout=600)
    assert probe.returncode == 0, probe.stderr
    got = json.loads(probe.stdout.strip().splitlines()[-1])
    print(f'\npip install into a fresh venv: {install_seconds:.1f} s; first inverse dynamics '
          f'(Panda) {got["first_call_s"]:.2f} s, then {got["per_call_us"]:.1f} us a call; '
          f'numba {got["numba"]}')

    # The library of the venv, not of the repository, and the compiled path
    assert pathlib.Path(got['module']).is_relative_to(venv), got['module']
    assert got['dof'] == 7 and got['finite']
    assert not got['numba'].startswith('not importable'), got['numba']
    assert got['compiled'] is True, got
    assert not [w for w in got['warnings'] if w[0] == 'PerformanceWarning'], got['warnings']
    # numba compiled on the first call (cache=True writes an index per function beside them)
    assert set(got['cached_after']) - set(got['cached_before']), 'the first call compiled nothing'

    # Console scripts: every one of ours denoc_-prefixed, in the venv's bin; no generic name
    bin_dir = venv / 'bin'
    expected = sorted([f'denoc_{name}' for name in EXECUTABLES]
                      + ['denoc_identify', 'denoc_excitation'])
    assert all(name.startswith('denoc_') for name in got['console_scripts']), got
    assert set(expected) <= set(got['console_scripts']), got['console_scripts']
    for name in got['console_scripts']:
        assert os.access(bin_dir / name, os.X_OK), f'{name} missing from {bin_dir}'
    for name in EXECUTABLES:
        assert not (bin_dir / name).exists(), f'generic name {name} in {bin_dir}'

    # One of them runs (denoc_demo needs no ROS for --help)
    demo = subprocess.run([str(bin_dir / 'denoc_demo'), '--help'], cwd=venv, env=clean_env(),
                          capture_output=True, text=True, timeout=120)
    assert demo.returncode == 0, demo.stderr
    assert demo.stdout.startswith('usage: denoc_demo'), demo.stdout
    assert '--robot' in demo.stdout
