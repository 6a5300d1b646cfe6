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
A ROS 2 workspace build: ``colcon build`` of both packages, as the README tells a ROS user.

The interface package is nested in the repository-root package, so colcon is given both paths
(``--base-paths . denoc_ros_interfaces``; colcon stops descending at the first package). The
build runs against the ROS 2 wheels of the venv into a temporary build/install/log tree.
"""

import os
import pathlib
import shutil
import subprocess
import sys

from conftest import skip_or_fail
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
EXECUTABLES = ('dynamics_node', 'joint_state_source', 'torque_monitor', 'demo', 'sim_arm',
               'ct_controller', 'contact_demo', 'trajectory_gate')
TOOLS = ('denoc_identify', 'denoc_excitation', 'denoc_retime')  # prefixed: one name everywhere


@pytest.fixture(scope='module')
def workspace(tmp_path_factory):
    """Build both packages with colcon into a temporary workspace; return its install path."""
    colcon = pathlib.Path(sys.executable).parent / 'colcon'
    if not colcon.exists():
        skip_or_fail('colcon is not installed in this environment')
    if shutil.which('cmake') is None:
        skip_or_fail('cmake is not available')
    tmp = tmp_path_factory.mktemp('colcon_ws')
    prefix = pathlib.Path(sys.prefix)
    env = dict(os.environ)
    env['PATH'] = f'{prefix / "bin"}{os.pathsep}{env.get("PATH", "")}'
    env['AMENT_PREFIX_PATH'] = str(prefix)
    env['CMAKE_PREFIX_PATH'] = str(prefix)
    cmd = [str(colcon), '--log-base', str(tmp / 'log'), 'build',
           '--base-paths', str(REPO), str(REPO / 'denoc_ros_interfaces'),
           '--build-base', str(tmp / 'build'), '--install-base', str(tmp / 'install'),
           '--cmake-args', f'-DPython3_EXECUTABLE={sys.executable}', '-DBUILD_TESTING=OFF']
    run = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, f'colcon build failed:\n{run.stdout}\n{run.stderr}'
    assert 'Summary: 2 packages finished' in run.stdout, run.stdout
    return tmp / 'install'


def workspace_env(workspace):
    """Return the environment of a process run with the workspace sourced (over the venv)."""
    site = 'lib/python{}.{}/site-packages'.format(*sys.version_info[:2])
    env = dict(os.environ)
    env['AMENT_PREFIX_PATH'] = os.pathsep.join(
        [str(workspace / 'denoc_ros'), str(workspace / 'denoc_ros_interfaces'), sys.prefix])
    env['PYTHONPATH'] = os.pathsep.join(
        [str(workspace / 'denoc_ros' / site), str(workspace / 'denoc_ros_interfaces' / site)])
    return env


def test_executables_installed_for_ros2_run(workspace):
    """
    ``ros2 run denoc_ros <exe>`` looks in <prefix>/lib/denoc_ros: every executable is there.

    Under its ROS name (``ros2 run``, the launch files) and its console-script name
    ``denoc_<name>``; nothing goes to a bin/ directory of the workspace.
    """
    libexec = workspace / 'denoc_ros' / 'lib' / 'denoc_ros'
    for name in EXECUTABLES:
        for installed in (name, f'denoc_{name}'):
            assert os.access(libexec / installed, os.X_OK), f'{installed} missing from {libexec}'
    for installed in TOOLS:
        assert os.access(libexec / installed, os.X_OK), f'{installed} missing from {libexec}'
    assert not (workspace / 'denoc_ros' / 'bin').exists()


def test_ros_name_runs(workspace):
    """The executable under its ROS name starts the installed module (``demo --help``)."""
    demo = workspace / 'denoc_ros' / 'lib' / 'denoc_ros' / 'demo'
    run = subprocess.run([str(demo), '--help'], cwd=workspace, env=workspace_env(workspace),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert '--robot' in run.stdout, run.stdout


def test_share_files_installed_for_ros2_launch(workspace):
    """Launch files, configuration and bundled URDFs are installed under share/denoc_ros."""
    share = workspace / 'denoc_ros' / 'share' / 'denoc_ros'
    assert (share / 'package.xml').is_file()
    for folder, pattern in (('launch', '*.launch.py'), ('config', '*.yaml'), ('urdf', '*.urdf')):
        source = sorted(p.name for p in (REPO / folder).glob(pattern))
        installed = sorted(p.name for p in (share / folder).glob(pattern))
        assert source, f'no {pattern} in {folder}/'
        assert installed == source, f'{folder}: installed {installed}, source {source}'
    marker = workspace / 'denoc_ros' / 'share' / 'ament_index' / 'resource_index' / 'packages'
    assert (marker / 'denoc_ros').is_file()


def test_installed_workspace_resolves(workspace):
    """With the workspace on the path, the ament index, interfaces and resources all resolve."""
    env = workspace_env(workspace)
    probe = (
        'import denoc_ros, denoc_ros_interfaces.srv as s\n'
        'from ament_index_python.packages import get_package_share_directory as g\n'
        'from denoc_ros.resources import share_directories\n'
        'print(denoc_ros.__file__); print(s.__file__); print(g("denoc_ros"))\n'
        'print(share_directories()[0])\n')
    out = subprocess.run([sys.executable, '-c', probe], cwd=workspace, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert all(line.startswith(str(workspace)) for line in lines), lines
