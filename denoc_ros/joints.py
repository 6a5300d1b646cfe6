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
The joint types of a model: their codes, names, and how many positions and velocities each has.

A leaf module (it imports nothing of the package), read by the model (:mod:`denoc_ros.model`,
which checks a model's joint types against it) and by the compiled kernels (the one joint-type
dispatch, :func:`denoc_ros.dynamics.kinematics.forward_kinematics`, and the packing of a model,
:mod:`denoc_ros.dynamics._packed`).

* ``REVOLUTE``: one position (the angle, rad) and one velocity;
* ``PRISMATIC``: one position (the displacement, m) and one velocity;
* ``FREE_FLYER``: the root of a floating-base model only (Pinocchio's ``JointModelFreeFlyer``):
  seven positions (base position, quaternion x y z w) and six velocities (linear, angular, in
  the base frame).
"""

REVOLUTE = 0
PRISMATIC = 1
FREE_FLYER = 2
JOINT_TYPE_NAMES = {REVOLUTE: 'revolute', PRISMATIC: 'prismatic', FREE_FLYER: 'free-flyer'}
JOINT_NQ = {REVOLUTE: 1, PRISMATIC: 1, FREE_FLYER: 7}  # positions of each joint type
JOINT_NV = {REVOLUTE: 1, PRISMATIC: 1, FREE_FLYER: 6}  # velocities (and forces)
