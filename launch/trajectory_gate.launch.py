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
Launch the trajectory gate in front of a controller, with the dynamics node it follows.

Arguments: ``urdf`` (a URDF file or bundled robot name; empty: the robot_description parameter
or topic), ``controller_action`` (the controller's FollowJointTrajectory action), ``timing``
(keep, repair or optimal), ``params_file`` (default: the package's config/trajectory_gate.yaml),
``with_dynamics`` (start the dynamics node too; false when one runs already).

    ros2 launch denoc_ros trajectory_gate.launch.py urdf:=panda timing:=optimal

Then point MoveIt's controller at ``/denoc_trajectory_gate`` (README, "The trajectory gate").
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    """Declare the arguments, the gate and (unless with_dynamics is false) the dynamics node."""
    share = get_package_share_directory('denoc_ros')
    urdf = LaunchConfiguration('urdf')
    return LaunchDescription([
        DeclareLaunchArgument('urdf', default_value='',
                              description='URDF file or bundled robot name'),
        DeclareLaunchArgument(
            'controller_action',
            default_value='/joint_trajectory_controller/follow_joint_trajectory',
            description="the controller's FollowJointTrajectory action"),
        DeclareLaunchArgument('timing', default_value='repair',
                              description='keep, repair or optimal'),
        DeclareLaunchArgument(
            'params_file', default_value=os.path.join(share, 'config', 'trajectory_gate.yaml'),
            description='parameter file of the gate'),
        DeclareLaunchArgument('with_dynamics', default_value='true',
                              description='start the dynamics node (payloads, contacts)'),
        Node(package='denoc_ros', executable='dynamics_node', name='denoc_dynamics',
             output='screen', condition=IfCondition(LaunchConfiguration('with_dynamics')),
             parameters=[{'urdf_path': urdf}]),
        Node(package='denoc_ros', executable='trajectory_gate', name='denoc_trajectory_gate',
             output='screen',
             parameters=[LaunchConfiguration('params_file'),
                         {'urdf_path': urdf,
                          'controller_action': LaunchConfiguration('controller_action'),
                          'timing': LaunchConfiguration('timing')}]),
    ])
