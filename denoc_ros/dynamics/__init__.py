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
The dynamics algorithms, one compiled implementation each, in a module named after it.

==========================  =======================  ===========================================
function                    module                   method (seed equations)
==========================  =======================  ===========================================
inverse_dynamics            rnea.py                  Newton-Euler in DeNOC form, Saha Eq. 7-8, 30
gravity_torques             rnea.py                  Eq. 30 at qd = qdd = 0
coriolis_torques            rnea.py                  Eq. 30 at qdd = 0 without gravity
mass_matrix                 crba.py                  composite bodies, Eq. 21-24
forward_dynamics            aba.py                   articulated body / UDU^T, O(n)
forward_dynamics_cholesky   aba.py                   Eq. 20 solved by Cholesky
coriolis_matrix             coriolis.py              Christoffel (Echeandia & Wensing 2021)
compute_all_terms           all_terms.py             one pass: g, M, C, C u, C^T qd, M qd, J, FD
convective_inertia_matrix   convective.py            Eq. 20, 25-29 (corrected)
frame_pose, jacobian, ...   jacobian.py              frame kinematics, J-dot qd (seed 001)
cartesian_dynamics          operational_space.py     Craig's Cartesian form (seed 002)
joint_reaction_wrenches     reactions.py             Eq. 30's resultant wrenches
configuration_space_...     configuration_space.py   Craig's B(q), C(q) from Eq. 30
regressor                   regressor.py             Eq. 7-8, 30 linear in the inertial parameters
==========================  =======================  ===========================================

Shared by all: :mod:`.kinematics` (the forward recursion, the one joint-type dispatch --
revolute, prismatic, free-flyer -- and the spatial steps the recursions share), :mod:`._packed`
(a model's kernel form and scratch space, kept apart from the model), :mod:`._state` (argument
checks, batch axes, the single-state fast path) and :mod:`._compile` (numba, the compiled entry
points). Every
function accepts leading batch axes and either kind of model (fixed or floating base):
``q`` of shape ``(..., nq)`` gives results of shape ``(..., nv)`` or ``(..., nv, nv)``.
"""

from .aba import forward_dynamics, forward_dynamics_cholesky
from .all_terms import compute_all_terms
from .configuration_space import configuration_space_matrices
from .convective import convective_inertia_matrix
from .coriolis import coriolis_matrix
from .crba import mass_matrix
from .jacobian import (frame_pose, jacobian, jacobian_dot_times_qd, point_acceleration,
                       point_velocity)
from .operational_space import cartesian_dynamics, CartesianDynamics
from .reactions import joint_reaction_wrenches
from .regressor import regressor
from .rnea import coriolis_torques, gravity_torques, inverse_dynamics
from .workspace import Workspace

__all__ = [
    'cartesian_dynamics', 'CartesianDynamics', 'compute_all_terms',
    'configuration_space_matrices',
    'convective_inertia_matrix', 'coriolis_matrix', 'coriolis_torques', 'forward_dynamics',
    'forward_dynamics_cholesky', 'frame_pose', 'gravity_torques', 'inverse_dynamics', 'jacobian',
    'jacobian_dot_times_qd', 'joint_reaction_wrenches', 'mass_matrix', 'point_acceleration',
    'point_velocity', 'regressor', 'Workspace',
]
