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
The numbers of URDF links and joints, validated: inertials, placements, axes, limits, dynamics.

:func:`_link_inertial` and :func:`_joint_from_urdf` turn urdf_parser_py's link and joint into
:class:`_Inertial` and :class:`_Joint`, rejecting NaN/inf, magnitudes beyond
:data:`MAGNITUDE_BOUND`, negative masses and zero axes (naming the link and the joint that moves
it); a lower limit above the upper one and negative damping or friction are noted.
"""

from dataclasses import dataclass
import math
from typing import Optional

import numpy as np

from .errors import URDFError
from .joints import PRISMATIC, REVOLUTE
from .spatial import rotate_inertia, rpy_to_matrix
from .urdf_notes import _fmt

MOVABLE_TYPES = {'revolute': REVOLUTE, 'continuous': REVOLUTE, 'prismatic': PRISMATIC}
DEFAULT_AXIS = (1.0, 0.0, 0.0)  # the URDF specification's default <axis xyz>

# Largest magnitude accepted for lengths [m], masses [kg] and inertias [kg m^2]: beyond it the
# products in the dynamics overflow or lose every significant digit (a robot is not 1000 km long).
MAGNITUDE_BOUND = 1e6


@dataclass(frozen=True)
class _Inertial:
    """Mass, centre of mass and rotational inertia (about the centre of mass) of a rigid piece."""

    mass: float
    com: np.ndarray      # (3,)
    inertia: np.ndarray  # (3, 3)


_NO_INERTIAL = _Inertial(0.0, np.zeros(3), np.zeros((3, 3)))


@dataclass(frozen=True)
class _Joint:
    """The numbers of one URDF joint, validated (origin as rotation + translation, unit axis)."""

    name: str
    kind: str  # URDF type attribute
    parent: str
    child: str
    rotation: np.ndarray
    translation: np.ndarray
    axis: np.ndarray
    lower: float
    upper: float
    velocity: float
    effort: float
    damping: float
    friction: float
    mimic: Optional[str]


def _finite(values, what, bound=None):
    """Return ``values`` as a float array; URDFError if NaN, infinite or beyond ``bound``."""
    array = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(array)):
        raise URDFError(f'{what} is not finite: {_fmt(array)}')
    if bound is not None and np.any(np.abs(array) > bound):
        worst = float(array.flat[np.argmax(np.abs(array))])
        raise URDFError(f'{what} holds {worst:g}, beyond the accepted magnitude {bound:g} '
                        '(SI units: m, kg, kg m^2)')
    return array


def _origin(pose, what):
    """Return ``(rotation, translation)`` of a urdf_parser_py Pose (None: identity)."""
    if pose is None:
        return np.eye(3), np.zeros(3)
    xyz = _finite(pose.xyz if pose.xyz is not None else (0.0, 0.0, 0.0), f'{what} xyz',
                  MAGNITUDE_BOUND)
    rpy = _finite(pose.rpy if pose.rpy is not None else (0.0, 0.0, 0.0), f'{what} rpy')
    return rpy_to_matrix(rpy), xyz


def _link_inertial(link, joint=None):
    """
    Return the link's inertial in the link frame (a link without <inertial> is massless).

    ``joint``: the link's parent joint, named in the errors (the joint that moves the link).
    """
    inertial = link.inertial
    if inertial is None:
        return _NO_INERTIAL
    what = f'link {link.name!r}'
    if joint is not None:
        what = f'{what} (child of joint {joint.name!r})'
    mass = float(_finite(inertial.mass, f'{what} mass', MAGNITUDE_BOUND))
    if mass < 0.0:
        raise URDFError(f'{what} has a negative mass ({mass!r})')
    rotation, com = _origin(inertial.origin, f'{what} inertial origin')
    if inertial.inertia is None:
        raise URDFError(f'{what}: <inertial> has no <inertia> element')
    tensor = _finite(inertial.inertia.to_matrix(), f'{what} inertia', MAGNITUDE_BOUND)
    return _Inertial(mass, com, rotate_inertia(rotation, tensor))


def _joint_from_urdf(joint, notes):
    """Return the validated numbers of a urdf_parser_py Joint (doubtful ones noted)."""
    what = f'joint {joint.name!r}'
    rotation, translation = _origin(joint.origin, f'{what} origin')
    axis = _finite(joint.axis if joint.axis is not None else DEFAULT_AXIS, f'{what} axis')
    norm = float(np.linalg.norm(axis))
    if joint.type in MOVABLE_TYPES and norm == 0.0:
        raise URDFError(f'{what} has a zero axis')
    lower, upper, velocity, effort = _limits(joint, what, notes)
    damping, friction = _joint_dynamics(joint, what, notes)
    return _Joint(
        name=joint.name, kind=joint.type, parent=joint.parent, child=joint.child,
        rotation=rotation, translation=translation, axis=axis / norm if norm else axis,
        lower=lower, upper=upper, velocity=velocity, effort=effort,
        damping=damping, friction=friction,
        mimic=joint.mimic.joint if joint.mimic is not None else None)


def _limits(joint, what, notes):
    """Return ``(lower, upper, velocity, effort)``: inf where absent or for a continuous joint."""
    limit = joint.limit
    if limit is None:
        return -math.inf, math.inf, math.inf, math.inf
    velocity = float(_finite(limit.velocity, f'{what} velocity limit'))
    effort = float(_finite(limit.effort, f'{what} effort limit'))
    if joint.type == 'continuous':
        return -math.inf, math.inf, velocity, effort
    lower = float(_finite(limit.lower if limit.lower is not None else 0.0, f'{what} lower limit'))
    upper = float(_finite(limit.upper if limit.upper is not None else 0.0, f'{what} upper limit'))
    if lower > upper:
        notes.add(what, f'lower limit {lower!r} above upper limit {upper!r}, kept as given (as '
                  'urdfdom and Pinocchio do)',
                  f'{what} has lower limit {lower!r} above upper limit {upper!r}')
    return lower, upper, velocity, effort


def _joint_dynamics(joint, what, notes):
    """Return ``(damping, friction)`` from <dynamics>, 0 where absent."""
    dynamics = joint.dynamics
    values = []
    for name in ('damping', 'friction'):
        value = getattr(dynamics, name, None) if dynamics is not None else None
        value = 0.0 if value is None else float(_finite(value, f'{what} {name}'))
        if value < 0.0:
            notes.add(what, f'negative {name} {value!r} (adds energy), kept as given',
                      f'{what} has a negative {name} ({value!r})')
        values.append(value)
    return tuple(values)
