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
Shared pytest fixtures and helpers: robot descriptions, oracles, installed executables, ROS.

- :func:`require_oracle`: Pinocchio, MuJoCo, toppra or the Robotics Toolbox, and
  :func:`require_module`: whatever else ``scripts/setup_env.sh --test`` installs (ROS, our
  interfaces, the linters), skipped without them, or a failure when ``DENOC_REQUIRE_ORACLES=1``
  (CI: a run without what the tests check against must not pass green, :func:`skip_or_fail`);
  example-robot-data and the installed executables likewise.
- :func:`venv_executable`: a console script of the venv the tests run from, after checking that
  the installed denoc_ros is the working tree's (the source hash ``scripts/setup_env.sh``
  stamps into ``<venv>/.denoc_stamps/denoc_ros``).
"""

import functools
import importlib
import os
import pathlib
import random
import signal
import subprocess
import sys
import tempfile

from denoc_ros.resources import example_robot_data_dir
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
URDF_DIR = REPO / 'urdf'

# Every ROS process of the suite stays on loopback, on a domain of its own (so that concurrent
# runs do not cross-talk), logs into a temporary ROS_HOME, and discovers peers quickly. Set before
# any test imports rclpy; child processes inherit it.
os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
os.environ.setdefault('ROS_DOMAIN_ID', str(random.Random().randint(1, 100)))
os.environ.setdefault('ROS_HOME', tempfile.mkdtemp(prefix='denoc_ros_home_'))
os.environ.setdefault('FASTDDS_DEFAULT_PROFILES_FILE',
                      str(pathlib.Path(__file__).resolve().parent / 'fastdds_test_profile.xml'))


def example_robot(relpath):
    """
    Return the path of a URDF inside example-robot-data (e.g. 'panda_description/urdf/panda.urdf').

    Skips the calling test when the package is absent (it is installed by ``make test``), or
    fails it under ``DENOC_REQUIRE_ORACLES=1`` (:func:`skip_or_fail`).
    """
    base = example_robot_data_dir()
    if base is None:
        skip_or_fail('example-robot-data is not installed')
    path = base / relpath
    if not path.exists():
        skip_or_fail(f'{relpath} is not in this example-robot-data release')
    return path


def bundled_urdfs():
    """Return the paths of every URDF bundled in ``urdf/``."""
    return sorted(URDF_DIR.glob('*.urdf'))


ORACLES = ('pinocchio', 'mujoco', 'toppra', 'roboticstoolbox')
"""The independent libraries the results are checked against (test requirements)."""


def skip_or_fail(reason):
    """
    Skip the calling test or module for a missing requirement; fail it if it must be there.

    It must be there under ``DENOC_REQUIRE_ORACLES=1``, as CI sets it: there everything
    ``make test`` installs is installed.
    """
    if os.environ.get('DENOC_REQUIRE_ORACLES') == '1':
        pytest.fail(f'{reason}, and DENOC_REQUIRE_ORACLES=1: the tests that need it cannot run '
                    '(run scripts/setup_env.sh --test)', pytrace=False)
    pytest.skip(f'{reason} (make test installs it)', allow_module_level=True)


def require_module(name):
    """
    Return the module ``name``, a test requirement (ROS, our interfaces, a linter).

    Without it :func:`skip_or_fail`: a skip, a failure under ``DENOC_REQUIRE_ORACLES=1``. Not for
    the package's own modules: a test imports those plainly, so that a broken one fails.
    """
    if name.split('.')[0] == 'denoc_ros':
        raise ValueError(f'{name!r} is our own module: import it, do not skip without it')
    try:
        return importlib.import_module(name)
    except ImportError as err:
        skip_or_fail(f'{name} does not import ({err})')


def require_oracle(name):
    """
    Return the oracle module ``name``; skip without it, fail if ``DENOC_REQUIRE_ORACLES=1``.

    At module level or in a test: ``pin = require_oracle('pinocchio')``.
    """
    if name not in ORACLES:
        raise ValueError(f'{name!r} is not an oracle; the oracles are {", ".join(ORACLES)}')
    try:
        return importlib.import_module(name)
    except ImportError as err:
        skip_or_fail(f'{name} does not import ({err}); it is an oracle')


@functools.lru_cache(maxsize=None)
def stale_install(prefix):
    """
    Return why the denoc_ros installed in the venv ``prefix`` is not the working tree's, or ''.

    Compares the source hash of ``scripts/source_hash.sh`` with the one
    ``scripts/setup_env.sh`` stamped when it installed the package into that venv.
    """
    prefix = pathlib.Path(prefix)
    setup = 'scripts/setup_env.sh --test'
    if prefix.resolve() != (REPO / '.venv').resolve():
        setup = f'DENOC_VENV={prefix} {setup}'
    stamp = prefix / '.denoc_stamps' / 'denoc_ros'
    if not stamp.exists():
        return (f'no install stamp {stamp}: cannot tell whether the denoc_ros installed in '
                f"{prefix} is the working tree's: run {setup}")
    run = subprocess.run(['bash', str(REPO / 'scripts' / 'source_hash.sh')],
                         capture_output=True, text=True, timeout=60)
    if run.returncode != 0 or len(run.stdout.strip()) != 32:
        return f'scripts/source_hash.sh failed: {run.stderr.strip()}'
    if stamp.read_text().strip() != run.stdout.strip():
        return (f'the installed denoc_ros in {prefix} is stale (the working tree changed '
                f'since it was installed): run {setup}')
    return ''


def venv_executable(name):
    """
    Return the path of a console script installed next to the running Python.

    Fails if the venv's denoc_ros is not the working tree's (:func:`stale_install`): the
    executables run the installed copy.
    """
    path = pathlib.Path(sys.executable).parent / name
    if not path.exists():
        skip_or_fail(f'{name} is not installed next to {sys.executable}')
    why = stale_install(sys.prefix)
    if why:
        pytest.fail(why, pytrace=False)
    return path


def interrupt(process):
    """SIGINT a started executable (Ctrl-C); return (status, output), killing it after 60 s."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        out, _ = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return process.returncode, out


@pytest.fixture
def rclpy_context():
    """Initialise rclpy in a context of the test's own and shut it down afterwards."""
    rclpy = require_module('rclpy')
    context = rclpy.context.Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)
