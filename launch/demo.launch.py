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
Launch the demo: the dynamics node on a bundled arm fed by the built-in joint-state source.

The same three executables as the ``denoc_demo`` console script (``make run``). Arguments:
``robot`` (bundled robot name or URDF path, default panda), ``rate`` (joint states per second).

    ros2 launch denoc_ros demo.launch.py robot:=ur5e
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    """Declare the arguments and the three demo nodes."""
    robot = LaunchConfiguration('robot')
    return LaunchDescription([
        DeclareLaunchArgument('robot', default_value='panda',
                              description='bundled robot name or URDF path'),
        DeclareLaunchArgument('rate', default_value='100.0',
                              description='joint-state rate [Hz]'),
        Node(package='denoc_ros', executable='dynamics_node', name='denoc_dynamics',
             output='screen', parameters=[{'urdf_path': robot}]),
        Node(package='denoc_ros', executable='joint_state_source', name='joint_state_source',
             output='screen',
             parameters=[{'urdf_path': robot, 'rate': LaunchConfiguration('rate')}]),
        Node(package='denoc_ros', executable='torque_monitor', name='torque_monitor',
             output='screen'),
    ])
