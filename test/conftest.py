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

"""Shared pytest fixtures and helpers: where the robot descriptions are, and the ROS sandbox."""

import os
import pathlib
import random
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

    Skips the calling test when the package is absent (it is installed by ``make test``).
    """
    base = example_robot_data_dir()
    if base is None:
        pytest.skip('example-robot-data is not installed')
    path = base / relpath
    if not path.exists():
        pytest.skip(f'{relpath} is not in this example-robot-data release')
    return path


def bundled_urdfs():
    """Return the paths of every URDF bundled in ``urdf/``."""
    return sorted(URDF_DIR.glob('*.urdf'))


def venv_executable(name):
    """Return the path of a console script installed next to the running Python."""
    path = pathlib.Path(sys.executable).parent / name
    if not path.exists():
        pytest.skip(f'{name} is not installed next to {sys.executable} (run make test)')
    return path


@pytest.fixture
def rclpy_context():
    """Initialise rclpy in a context of the test's own and shut it down afterwards."""
    rclpy = pytest.importorskip('rclpy')
    context = rclpy.context.Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)
