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
Joint trajectories: sampling as a trajectory controller does, torque checks, time-optimal retiming.

:mod:`.sampling` (the joint_trajectory_controller's Hermite interpolation), :mod:`.path` (the C2
path through waypoints), :mod:`.check` (:func:`check_trajectory`) and :mod:`.retime`
(:func:`retime`, TOPP-RA reachability analysis under torque limits; its parts:
:mod:`.reachability` the passes, :mod:`.path_dynamics` the coefficients and constraints,
:mod:`.dense_check` the output's dense check).
"""

from .check import check_trajectory, TrajectoryCheck
from .retime import retime, RetimedTrajectory

__all__ = ['check_trajectory', 'retime', 'RetimedTrajectory', 'TrajectoryCheck']
