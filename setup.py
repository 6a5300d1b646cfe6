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

from setuptools import find_packages, setup

package_name = 'denoc_ros'

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
    install_requires=['setuptools', 'numpy', 'scipy', 'urdfdom-py'],
    zip_safe=True,
    maintainer='denoc_ros maintainers',
    maintainer_email='maintainers@denoc-ros.org',
    description='Rigid-body dynamics of robot arms (Saha DeNOC) as a library and a ROS 2 node: '
                'gravity/Coriolis/inertia feed-forward, forward-dynamics predictions, M(q) and '
                'Cartesian dynamics services.',
    license='Apache-2.0',
    extras_require={'test': ['pytest']},
    entry_points={
        'console_scripts': [
            'dynamics_node = denoc_ros.ros.dynamics_node:main',
            'joint_state_source = denoc_ros.ros.joint_state_source:main',
            'torque_monitor = denoc_ros.ros.torque_monitor:main',
            'demo = denoc_ros.ros.demo:main',
            'sim_arm = denoc_ros.ros.sim_arm:main',
            'ct_controller = denoc_ros.ros.ct_controller:main',
        ],
    },
)
