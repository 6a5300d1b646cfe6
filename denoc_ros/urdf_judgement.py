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
The physical judgement of the loaded bodies: what no rigid body has, or makes M(q) singular.

Each body is judged with its welded links combined: an inertia that is not positive
semi-definite or breaks the triangle inequality A + B >= C (:func:`_judge_inertia`), a degree of
freedom that moves only massless links or a revolute leaf without inertia about its axis
(:func:`_check_moving_mass`), and mimic joints loaded as independent degrees of freedom
(:func:`_note_mimic`). Each is noted in a :class:`~denoc_ros.urdf_notes._Notes`: a warning, or a
URDFError where ``strict=True`` refuses it. The tolerances are shared with the strict per-link
check in :func:`denoc_ros.urdf_tree._lump_inertials`.
"""

import numpy as np

from .joints import REVOLUTE
from .spatial import parallel_axis
from .urdf_elements import MOVABLE_TYPES
from .urdf_notes import _fmt

# Slack on the physical checks of principal moments: relative to the trace, plus the mass times
# a length (a deviation the size of the mass spread over a micrometre is CAD-export round-off).
INERTIA_RTOL = 1e-6
INERTIA_LENGTH_TOL = 1e-6  # m
ZERO_AXIS_INERTIA_RTOL = 1e-12  # "zero" rotational inertia about a revolute axis, rel. to trace


def _judge_inertia(subject, inertial, notes):
    """Note a body (its welded links combined) whose inertia no rigid body has."""
    moments = np.linalg.eigvalsh(0.5 * (inertial.inertia + inertial.inertia.T))
    slack = (INERTIA_RTOL * abs(float(np.sum(moments)))
             + inertial.mass * INERTIA_LENGTH_TOL ** 2)
    if moments[0] < -slack:
        notes.add(subject, f'principal moments {_fmt(moments)} kg m^2: one is negative (the '
                  'inertia is not positive semi-definite)')
    elif moments[2] > moments[0] + moments[1] + slack:
        notes.add(subject, f'principal moments {_fmt(moments)} kg m^2 violate the triangle '
                  'inequality A + B >= C')


def _check_moving_mass(bodies, body_inertials, subjects, notes):
    """Note a degree of freedom that moves no mass (or no inertia): M(q) is then singular."""
    subtree_mass = [inertial.mass for inertial in body_inertials]
    has_children = [False] * len(bodies)
    for i in reversed(range(len(bodies))):
        parent = bodies[i].parent
        if parent >= 0:
            subtree_mass[parent] += subtree_mass[i]
            has_children[parent] = True
    for i, body in enumerate(bodies):
        joint = body.joint
        if subtree_mass[i] <= 0.0:
            notes.add(subjects[i], f'joint {joint.name!r} moves only massless links (this one and '
                      'everything below it): the mass matrix is singular (forward dynamics '
                      'raises)', f'joint {joint.name!r} moves no mass: link {joint.child!r} and '
                      'everything below it are massless, so the mass matrix is singular')
        elif MOVABLE_TYPES[joint.kind] == REVOLUTE and not has_children[i]:
            _check_axis_inertia(joint, body_inertials[i], subjects[i], notes)


def _check_axis_inertia(joint, inertial, subject, notes):
    """Note a revolute leaf body with no rotational inertia about its axis (a point on it)."""
    about_origin = parallel_axis(inertial.mass, inertial.com, inertial.inertia)
    moment = float(joint.axis @ about_origin @ joint.axis)
    if moment <= ZERO_AXIS_INERTIA_RTOL * float(np.trace(about_origin)):
        notes.add(subject, f'no rotational inertia about the axis of joint '
                  f'{joint.name!r}: the mass matrix is singular (forward dynamics raises)',
                  f'joint {joint.name!r} turns link {joint.child!r}, which has no rotational '
                  'inertia about the joint axis, so the mass matrix is singular')


def _note_mimic(bodies, notes):
    """Note every mimic joint that became an independent degree of freedom (warned always)."""
    for body in bodies:
        if body.joint.mimic is not None:
            notes.add(f'joint {body.joint.name!r}', f'mimics {body.joint.mimic!r}; it is loaded '
                      'as an independent degree of freedom', glue=' ')
