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

from .contact import (CollisionGeometry, ContactLocation, ContactTracker,
                      load_collision_geometry, locate_contact)
from .dynamics import (cartesian_dynamics, CartesianDynamics, compute_all_terms,
                       configuration_space_matrices, convective_inertia_matrix, coriolis_matrix,
                       coriolis_torques,
                       forward_dynamics, forward_dynamics_cholesky, frame_pose, gravity_torques,
                       inverse_dynamics, jacobian, jacobian_dot_times_qd,
                       joint_reaction_wrenches, mass_matrix, point_acceleration, point_velocity,
                       regressor, Workspace)
from .energy import center_of_mass, kinetic_energy, momentum, potential_energy, total_energy
from .errors import DenocError, InputError, PerformanceWarning, URDFError, URDFWarning
from .feedforward import feedforward_terms, FeedforwardTerms, predict
from .floating_base import FloatingBaseModel, load_floating_base
from .friction import (forward_dynamics_with_friction, friction_torques,
                       inverse_dynamics_with_friction)
from .identification import inertial_parameters, with_inertial_parameters
from .identification.payload import estimate_payload, PayloadEstimate
from .model import Frame, PRISMATIC, REVOLUTE, RobotModel
from .observer import ContactDetector, external_wrench, MomentumObserver, observe
from .payload import attach_payload, detach_payload
from .simulation import simulate, SimulationResult
from .trajectories import check_trajectory, retime, RetimedTrajectory, TrajectoryCheck
from .urdf import load_urdf

__all__ = [
    'attach_payload', 'cartesian_dynamics', 'CartesianDynamics', 'center_of_mass',
    'check_trajectory', 'CollisionGeometry', 'compute_all_terms', 'configuration_space_matrices',
    'ContactDetector', 'ContactLocation', 'ContactTracker', 'convective_inertia_matrix',
    'coriolis_matrix', 'coriolis_torques', 'DenocError', 'detach_payload', 'estimate_payload',
    'external_wrench',
    'feedforward_terms', 'FeedforwardTerms', 'FloatingBaseModel', 'forward_dynamics',
    'forward_dynamics_cholesky', 'forward_dynamics_with_friction', 'Frame', 'frame_pose',
    'friction_torques', 'gravity_torques', 'inertial_parameters', 'InputError', 'inverse_dynamics',
    'inverse_dynamics_with_friction', 'jacobian', 'jacobian_dot_times_qd',
    'joint_reaction_wrenches', 'kinetic_energy', 'load_collision_geometry', 'load_floating_base',
    'load_urdf', 'locate_contact', 'mass_matrix', 'momentum', 'MomentumObserver', 'observe',
    'PayloadEstimate', 'PerformanceWarning', 'point_acceleration', 'point_velocity',
    'potential_energy', 'predict', 'PRISMATIC', 'regressor', 'retime', 'RetimedTrajectory',
    'REVOLUTE', 'RobotModel', 'simulate', 'SimulationResult', 'total_energy', 'TrajectoryCheck',
    'URDFError', 'URDFWarning', 'with_inertial_parameters', 'Workspace',
]

__version__ = '0.1.0'
