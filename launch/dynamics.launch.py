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
Launch the denoc_dynamics node.

Arguments: ``urdf`` (a URDF file or bundled robot name; empty: the robot_description parameter
or topic), ``params_file`` (default: the package's config/dynamics.yaml), ``namespace``.

    ros2 launch denoc_ros dynamics.launch.py urdf:=/path/to/arm.urdf namespace:=arm
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    """Declare the arguments and the dynamics node."""
    share = get_package_share_directory('denoc_ros')
    return LaunchDescription([
        DeclareLaunchArgument('urdf', default_value='',
                              description='URDF file or bundled robot name'),
        DeclareLaunchArgument('params_file',
                              default_value=os.path.join(share, 'config', 'dynamics.yaml'),
                              description='parameter file of the node'),
        DeclareLaunchArgument('namespace', default_value='',
                              description='namespace of the node and its topics'),
        Node(package='denoc_ros', executable='dynamics_node', name='denoc_dynamics',
             namespace=LaunchConfiguration('namespace'), output='screen',
             parameters=[LaunchConfiguration('params_file'),
                         {'urdf_path': LaunchConfiguration('urdf')}]),
    ])
