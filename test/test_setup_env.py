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
scripts/setup_env.sh on a broken environment: it stops with the name of the failing step.

Run against a throw-away venv location, never the suite's own .venv. The unreachable package
index is a closed port on loopback, so nothing leaves the machine.
"""

import os
import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
SCRIPT = REPO / 'scripts' / 'setup_env.sh'
# The Pythons each distribution's wheels are for (the first is the one looked for first)
PYTHONS = {'kilted': ('3.11',), 'jazzy': ('3.12', '3.11')}


def venv_distro():
    """Return the ROS 2 distribution of this run's environment (kilted when not made by us)."""
    stamp = pathlib.Path(sys.prefix) / '.denoc_stamps' / 'distro'
    return stamp.read_text().strip() if stamp.is_file() else 'kilted'


def run_setup(venv, **env_changes):
    """Run the set-up script for ``venv`` with environment changes; return the completed run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith('PIP_')}
    env['DENOC_VENV'] = str(venv)
    env.setdefault('DENOC_ROS_DISTRO', venv_distro())
    env.update(env_changes)
    return subprocess.run(['bash', str(SCRIPT)], env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.mark.parametrize('distro', sorted(PYTHONS))
def test_wrong_python_is_named(tmp_path, distro):
    """A PYTHON that is not one of the distribution's stops the first step saying so."""
    run = run_setup(tmp_path / 'venv', PYTHON='/bin/false', DENOC_ROS_DISTRO=distro)
    wanted = ' or '.join(PYTHONS[distro])
    assert run.returncode != 0
    assert f"FAILED in step 'find Python {wanted}'" in run.stderr, run.stderr
    assert f'is not a working Python {wanted}' in run.stderr
    assert not (tmp_path / 'venv').exists()


def test_unknown_distro_and_other_distros_venv_are_named(tmp_path):
    """An unknown distribution is named; a venv made for another one is not reused."""
    run = run_setup(tmp_path / 'venv', DENOC_ROS_DISTRO='rolling')
    assert run.returncode != 0 and "unknown ROS 2 distribution 'rolling'" in run.stderr
    other = 'jazzy' if venv_distro() == 'kilted' else 'kilted'
    venv = pathlib.Path(sys.prefix)
    if not (venv / '.denoc_stamps').is_dir():
        pytest.skip('not running inside an environment made by setup_env.sh')
    run = run_setup(venv, PYTHON=sys._base_executable, DENOC_ROS_DISTRO=other)
    assert run.returncode != 0
    assert f'was made for ROS 2 {venv_distro()}, not {other}' in run.stderr, run.stderr


def test_unreachable_package_index_is_named(tmp_path):
    """With PyPI unreachable the pip step fails by name and nothing after it runs."""
    if '%d.%d' % sys.version_info[:2] not in PYTHONS[venv_distro()]:
        pytest.skip(f'Python {sys.version_info[0]}.{sys.version_info[1]} is not for '
                    f'ROS 2 {venv_distro()}')
    venv = tmp_path / 'venv'
    run = run_setup(venv, PYTHON=sys._base_executable, PIP_CONFIG_FILE=os.devnull,
                    PIP_INDEX_URL='http://127.0.0.1:9/simple/', PIP_RETRIES='0',
                    PIP_DEFAULT_TIMEOUT='2')
    assert run.returncode != 0
    assert "FAILED in step 'pip install (runtime" in run.stderr, run.stderr
    assert 'pip could not install the packages' in run.stderr
    stamps = venv / '.denoc_stamps'
    assert not (stamps / 'runtime').exists()
    assert not (stamps / 'interfaces').exists()
    assert not (venv / 'bin' / 'denoc_dynamics_node').exists()


def test_rerun_is_idempotent_and_quick():
    """On the environment of this run, a set-up right after a set-up changes nothing."""
    venv = pathlib.Path(sys.prefix)
    if not (venv / '.denoc_stamps').is_dir():
        pytest.skip('not running inside an environment made by setup_env.sh')
    first = run_setup(venv, PYTHON=sys._base_executable)  # brings edits since set-up in
    assert first.returncode == 0, first.stderr
    run = run_setup(venv, PYTHON=sys._base_executable)
    assert run.returncode == 0, run.stderr
    assert 'installing' not in run.stdout and 'building' not in run.stdout, run.stdout
    assert 'environment ready' in run.stdout


def test_console_scripts_in_made_environment():
    """The venv's bin holds the denoc_-prefixed console scripts (make run's), no generic names."""
    bin_dir = pathlib.Path(sys.prefix) / 'bin'
    if not (pathlib.Path(sys.prefix) / '.denoc_stamps' / 'denoc_ros').is_file():
        pytest.skip('not running inside an environment made by setup_env.sh')
    for name in ('dynamics_node', 'joint_state_source', 'torque_monitor', 'demo', 'sim_arm',
                 'ct_controller'):
        assert (bin_dir / f'denoc_{name}').is_file(), f'denoc_{name} missing from {bin_dir}'
        assert not (bin_dir / name).exists(), f'{name} in {bin_dir}: a stale or generic name'


@pytest.mark.parametrize('module', ['pinocchio', 'mujoco', 'roboticstoolbox', 'rclpy',
                                    'denoc_ros_interfaces.srv', 'ament_flake8', 'ament_pep257'])
def test_references_present_in_made_environment(module):
    """In the environment make test builds, no reference library is missing (no silent skips)."""
    if not (pathlib.Path(sys.prefix) / '.denoc_stamps' / 'test').is_file():
        pytest.skip('not running inside the environment made by setup_env.sh --test')
    __import__(module)


def test_example_robot_data_present_in_made_environment():
    """The real URDFs the Pinocchio comparisons use are installed with the test tools."""
    if not (pathlib.Path(sys.prefix) / '.denoc_stamps' / 'test').is_file():
        pytest.skip('not running inside the environment made by setup_env.sh --test')
    from denoc_ros.resources import example_robot_data_dir
    robots = example_robot_data_dir()
    assert robots is not None
    assert (robots / 'panda_description' / 'urdf' / 'panda.urdf').is_file()
    assert (robots / 'ur_description' / 'urdf' / 'ur5_robot.urdf').is_file()
