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
Rigid-body dynamics of robot arms (Saha's DeNOC and friends), as a library and a ROS 2 node.

The library half (this package minus :mod:`denoc_ros.ros`) needs only NumPy/SciPy and
``urdf_parser_py``; it never imports rclpy.

>>> import denoc_ros as dr
>>> model = dr.load_urdf('arm.urdf')                    # doctest: +SKIP
>>> tau = dr.inverse_dynamics(model, q, qd, qdd)        # doctest: +SKIP
"""

from .cartesian import (cartesian_dynamics, CartesianDynamics, frame_pose, jacobian,
                        jacobian_dot_times_qd)
from .dynamics import (convective_inertia_matrix, coriolis_matrix, coriolis_torques,
                       forward_dynamics, forward_dynamics_cholesky, gravity_torques,
                       inverse_dynamics, mass_matrix)
from .errors import DenocError, InputError, URDFError
from .model import Frame, PRISMATIC, REVOLUTE, RobotModel
from .urdf import load_urdf

__all__ = [
    'CartesianDynamics', 'cartesian_dynamics', 'frame_pose', 'jacobian', 'jacobian_dot_times_qd',
    'DenocError', 'Frame', 'InputError', 'PRISMATIC', 'REVOLUTE', 'RobotModel', 'URDFError',
    'convective_inertia_matrix', 'coriolis_matrix', 'coriolis_torques', 'forward_dynamics',
    'forward_dynamics_cholesky', 'gravity_torques', 'inverse_dynamics', 'load_urdf',
    'mass_matrix',
]

__version__ = '0.1.0'
