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
Launch the contact demo: a simulated Panda held in place, pushed now and then, contact detected.

``sim_arm`` (MuJoCo) simulates the bundled Panda in real time and in lockstep with the
controller (each step waits for the command its joint state causes: a 1 kHz control loop
however busy the machine; without it, on two cores shared by four processes, commands came
late enough for the held arm to go unstable under a push); ``ct_controller`` holds it at its
start pose (computed torque, no trajectory); ``dynamics_node`` watches the joint states (whose
efforts are the applied commands) with its momentum observer; ``contact_demo`` pushes
``link`` with ``force`` for 2 s every 4 s through ``/sim_arm/external_wrench`` and prints the
contact flags, the external torques and the estimated wrench (threshold 3 N m). Argument:
``link`` (default ``panda_link7``).

    ros2 launch denoc_ros contact_demo.launch.py link:=panda_link5
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

START = [0.3, -0.5, 0.2, -2.0, 0.1, 1.5, 0.4]


def generate_launch_description():
    """Declare the arguments and the four nodes."""
    link = LaunchConfiguration('link')
    return LaunchDescription([
        DeclareLaunchArgument('link', default_value='panda_link7',
                              description='link pushed, and where the wrench is estimated'),
        Node(package='denoc_ros', executable='sim_arm', name='sim_arm', output='screen',
             parameters=[{'urdf_path': 'panda', 'real_time': True, 'lockstep': True,
                          'initial_positions': START}]),
        Node(package='denoc_ros', executable='ct_controller', name='ct_controller',
             output='screen', parameters=[{'urdf_path': 'panda'}],
             remappings=[('/ct_controller/commands', '/sim_arm/commands')]),
        Node(package='denoc_ros', executable='dynamics_node', name='denoc_dynamics',
             output='screen',
             parameters=[{'urdf_path': 'panda', 'contact_frame': link,
                          'contact_threshold': [3.0]}]),
        Node(package='denoc_ros', executable='contact_demo', name='contact_demo',
             output='screen', parameters=[{'link': link}]),
    ])
