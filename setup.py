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

"""Install denoc_ros as an ament_python package (colcon) or a plain Python package (pip)."""

from glob import glob
import os
import sys

from setuptools import find_packages, setup
from setuptools.command.install_scripts import install_scripts
try:
    from setuptools.command.develop import develop
except ImportError:  # pragma: no cover - a setuptools without `setup.py develop`
    develop = None

package_name = 'denoc_ros'

# The executables, by their ROS names (`ros2 run denoc_ros dynamics_node`, the launch files).
# A plain `pip install` puts console scripts on the venv's PATH, where names this generic collide
# (`demo`), so the console scripts, the only scripts a wheel carries, are named `denoc_<name>`
# (a name that has the prefix already keeps it). `setup.py install` and `setup.py develop`, which
# colcon runs, write each executable under both names into lib/denoc_ros (setup.cfg), the only
# place `ros2 run` looks.
EXECUTABLES = {
    'dynamics_node': 'denoc_ros.ros.dynamics_node:main',
    'joint_state_source': 'denoc_ros.ros.joint_state_source:main',
    'torque_monitor': 'denoc_ros.ros.torque_monitor:main',
    'demo': 'denoc_ros.ros.demo:main',
    'sim_arm': 'denoc_ros.ros.sim_arm:main',
    'ct_controller': 'denoc_ros.ros.ct_controller:main',
    'contact_demo': 'denoc_ros.ros.contact_demo:main',
    'trajectory_gate': 'denoc_ros.ros.trajectory_gate:main',
    # Tools without ROS (identification), already prefixed: one name everywhere
    'denoc_identify': 'denoc_ros.tools.identify:main',
    'denoc_excitation': 'denoc_ros.tools.excitation:main',
    'denoc_retime': 'denoc_ros.tools.retime:main',
}
CONSOLE_PREFIX = 'denoc_'


def console_name(name):
    """Return the console-script name of executable ``name``: ``denoc_<name>``."""
    return name if name.startswith(CONSOLE_PREFIX) else CONSOLE_PREFIX + name


ROS_NAME_SCRIPT = """{header}
# `ros2 run denoc_ros {name}`: {console} under its ROS name (see setup.py)
import sys

from {module} import {function}

if __name__ == '__main__':
    sys.exit({function}())
"""


def write_ros_names(command, directory):
    """Write every executable under its ROS name, with its console script's interpreter line."""
    for name, target in EXECUTABLES.items():
        if console_name(name) == name:
            continue  # written already, as the console script
        module, function = target.split(':')
        try:
            with open(os.path.join(directory, console_name(name)), encoding='utf-8') as f:
                header = f.readline().rstrip('\n')
        except OSError:
            header = ''
        if not header.startswith('#!'):
            header = '#!' + sys.executable
        command.write_script(name, ROS_NAME_SCRIPT.format(
            header=header, name=name, console=console_name(name), module=module,
            function=function))


class InstallScripts(install_scripts):
    """``setup.py install`` (colcon): the console scripts, then the ROS names beside them."""

    def run(self):
        """Write the console scripts, then (unless building a wheel) the ROS names."""
        super().run()
        if not self.no_ep:  # a wheel's build (pip): console scripts only, made by the installer
            write_ros_names(self, self.install_dir)


COMMANDS = {'install_scripts': InstallScripts}
if develop is not None:
    class Develop(develop):
        """``setup.py develop`` (colcon --symlink-install, setuptools < 80): the same."""

        def install_wrapper_scripts(self, dist):
            """Write the console scripts (easy_install's way), then the ROS names beside them."""
            result = super().install_wrapper_scripts(dist)
            if not self.exclude_scripts:
                write_ros_names(self, self.script_dir)
            return result

    COMMANDS['develop'] = Develop


setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*', 'benchmarks', 'denoc_ros_interfaces']),
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
        ('share/' + package_name + '/config', glob('config/*.yaml')),
        ('share/' + package_name + '/urdf', glob('urdf/*.urdf') + glob('urdf/*.md')),
    ],
    # numba compiles the kernels (without it they run as Python, some 300 times slower); lxml
    # is imported directly (urdfdom-py brings it, and PyYAML, which is all xacro needs)
    install_requires=['setuptools', 'numpy', 'scipy', 'numba', 'lxml', 'urdfdom-py', 'xacro',
                      'PyYAML', 'threadpoolctl', 'rosbags', 'matplotlib'],
    zip_safe=True,
    maintainer='denoc_ros maintainers',
    maintainer_email='maintainers@denoc-ros.org',
    description='Rigid-body dynamics of robot arms (Saha DeNOC) as a library and a ROS 2 node: '
                'gravity/Coriolis/inertia feed-forward, forward-dynamics predictions, M(q) and '
                'Cartesian dynamics services.',
    license='Apache-2.0',
    extras_require={'test': ['pytest']},
    cmdclass=COMMANDS,
    entry_points={
        'console_scripts': [f'{console_name(name)} = {target}'
                            for name, target in EXECUTABLES.items()],
    },
)
