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
Load a URDF robot description into an immutable :class:`~denoc_ros.model.RobotModel`.

This module holds :func:`load_urdf`, which composes the steps kept in the ``urdf_*`` modules, and
the assembly of the result into a RobotModel (a free-flyer body 0 if floating). Pipeline:

1. ``urdf_xml``: read the source (file path or XML string) and parse it with ``urdf_parser_py``,
   after the checks that parser leaves out (root element, xacro, numbers that are not numbers)
   and with urdfdom's leniency: of repeated elements the first counts, unknown attributes and
   elements inside ``<inertial>`` are ignored (each with a warning);
2. ``urdf_elements``: extract every link's inertial and every joint's origin, axis, limits and
   dynamics, rejecting NaN/inf, negative masses and zero axes (naming the link and the joint
   that moves it);
3. ``urdf_tree``: check the topology (one root, no cycle, no joint naming a missing link), walk
   the tree depth-first from ``base_link`` (children in file order): every movable joint (on the
   ``base_link -> tip_link`` chain, if a tip is given) becomes a body; every other joint welds
   its child link to the body it hangs from; lump the welded links' inertials into their bodies
   (exact parallel-axis sums);
4. ``urdf_judgement``: note mimic joints, then judge each combined body of the assembled model
   (links welded to the fixed base are not judged, they do not enter the dynamics): an inertia
   that is not positive semi-definite or breaks the triangle inequality A + B >= C, a degree of
   freedom that moves only massless links or a revolute leaf without inertia about its axis
   (the mass matrix is then singular) gives one :class:`URDFWarning` per body, recorded in
   ``model.warnings`` (gathered by ``urdf_notes``).

With ``strict=True`` every condition that warns (but mimic joints and misspelled elements) is a
:class:`URDFError` instead, and each link's inertia is judged alone (the loader's behaviour
before lenient loading). Only what makes computation impossible is an error either way.
"""

import warnings

import numpy as np

from .errors import InputError, URDFError, URDFWarning
from .joints import FREE_FLYER
from .model import Frame, RobotModel
from .spatial import read_only, rpy_to_matrix
from .urdf_elements import _joint_from_urdf, _link_inertial, MOVABLE_TYPES
from .urdf_judgement import _note_mimic, judge_bodies
from .urdf_notes import _Notes
from .urdf_tree import _assign_bodies, _lump_inertials, _Tree
from .urdf_xml import _parse, _read_source

__all__ = ['load_urdf', 'rpy_to_matrix']  # rpy_to_matrix: re-exported from denoc_ros.spatial


def load_urdf(source, base_link=None, tip_link=None, gravity=(0.0, 0.0, -9.81),
              floating_base=False, strict=False):
    """
    Build a RobotModel from a URDF file path or XML string.

    ``floating_base=True``: the root link (``base_link``, default the URDF's root), with every
    link welded to it, becomes body 0 on a free-flyer joint (Pinocchio's
    ``buildModel(urdf, JointModelFreeFlyer())``): ``nq = 7 + n``, ``nv = 6 + n`` (see
    :class:`RobotModel` for the conventions), and every algorithm takes the model as it is.

    No ``tip_link``: every revolute, continuous or prismatic joint below ``base_link`` (default:
    the root link) is a degree of freedom, in depth-first pre-order with children in file order.
    With ``tip_link``: only the movable joints of the chain ``base_link -> tip_link``; every other
    joint is locked at 0 and its subtree lumped into the chain body it hangs from. Fixed joints
    are always lumped.

    Loads what urdfdom (robot_state_publisher, RViz, MoveIt, Pinocchio) loads. What is
    physically doubtful (an inertia that no rigid body has, judged on each body with its welded
    links combined; a degree of freedom that moves no mass, so that the mass matrix is
    singular) and where urdfdom's leniency was applied (a repeated element, an unknown
    attribute, a lower limit above the upper one) gives one :class:`URDFWarning` per link or
    joint, naming it and the condition; the messages are kept in ``model.warnings``.
    ``strict=True`` refuses all of these with a :class:`URDFError` instead (each link's inertia
    judged alone). Raises :class:`URDFError` naming the element at fault for what makes
    computation impossible (a number that is not finite, a negative mass, a zero axis, a
    broken tree), :class:`InputError` for a bad ``gravity``. Forward dynamics on a singular
    mass matrix raises when it is called, naming the joint.
    """
    gravity = _checked_gravity(gravity)
    for argument, value in (('base_link', base_link), ('tip_link', tip_link)):
        if value is not None and not isinstance(value, str):
            raise URDFError(f'{argument} must be a link name, not {type(value).__name__}')
    text, where = _read_source(source)
    notes = _Notes(bool(strict))
    try:
        model = _build_model(text, base_link or None, tip_link or None, gravity,
                             bool(floating_base), notes)
    except URDFError as err:
        raise URDFError(f'{where}: {err}') from None
    for message in model.warnings:
        warnings.warn(message, URDFWarning, stacklevel=2)
    return model


def _build_model(text, base_link, tip_link, gravity, floating, notes):
    """Run the loading pipeline on the XML text (errors carry no source name yet)."""
    robot = _parse(text, notes)
    tree = _Tree([link.name for link in robot.links],
                 [_joint_from_urdf(joint, notes) for joint in robot.joints])
    inertials = {link.name: _link_inertial(link, tree.parent_joint.get(link.name))
                 for link in robot.links}
    base = tree.root if base_link is None else tree.check_link('base_link', base_link)
    chain = None
    if tip_link is not None:
        chain = tree.chain(base, tree.check_link('tip_link', tip_link))
    bodies, placements = _assign_bodies(tree, base, chain)
    if not bodies and not floating:
        below = f'between {base!r} and {tip_link!r}' if chain is not None else f'below {base!r}'
        raise URDFError(f'no revolute, continuous or prismatic joint {below}')
    body_inertials = _lump_inertials(bodies, placements, inertials, notes.strict)
    base_inertial = None
    if floating:
        base_inertial = _lump_inertials([None], {link: (0, rotation, translation) for link, (
            body, rotation, translation) in placements.items() if body < 0}, inertials,
            notes.strict)[0]
    model = _assemble(robot.name, base, tip_link, bodies, body_inertials, placements, gravity,
                      base_inertial)
    _note_mimic(bodies, notes)  # about the description: before the bodies' judgement
    judge_bodies(model, notes)
    return model.replace(warnings=notes.messages())


def _assemble(robot_name, base, tip, bodies, body_inertials, placements, gravity,
              base_inertial=None):
    """Pack bodies, inertials and frames into a RobotModel (a free-flyer body 0 if floating)."""
    joints = [body.joint for body in bodies]
    shift = 0 if base_inertial is None else 1  # a floating base is body 0, the rest follow
    frames = tuple(Frame(name, body + shift, read_only(rotation), read_only(translation))
                   for name, (body, rotation, translation) in placements.items())
    parent = [body.parent + shift for body in bodies]
    joint_type = [MOVABLE_TYPES[j.kind] for j in joints]
    axis = [j.axis for j in joints]
    rotations = [body.rotation for body in bodies]
    translations = [body.translation for body in bodies]
    inertials = list(body_inertials)
    links = [j.child for j in joints]
    if shift:
        parent, joint_type, axis = [-1] + parent, [FREE_FLYER] + joint_type, [np.zeros(3)] + axis
        rotations, translations = [np.eye(3)] + rotations, [np.zeros(3)] + translations
        inertials, links = [base_inertial] + inertials, [base] + links
    return RobotModel(
        joint_names=tuple(j.name for j in joints),
        link_names=tuple(links),
        parent=np.array(parent, dtype=np.int64),
        joint_type=np.array(joint_type, dtype=np.int64),
        axis=np.array(axis).reshape(-1, 3),
        joint_rotation=np.array(rotations).reshape(-1, 3, 3),
        joint_translation=np.array(translations).reshape(-1, 3),
        mass=np.array([inertial.mass for inertial in inertials]),
        com=np.array([inertial.com for inertial in inertials]).reshape(-1, 3),
        inertia=np.array([inertial.inertia for inertial in inertials]).reshape(-1, 3, 3),
        gravity=gravity,
        damping=np.array([j.damping for j in joints]),
        friction=np.array([j.friction for j in joints]),
        lower=np.array([j.lower for j in joints]),
        upper=np.array([j.upper for j in joints]),
        velocity_limit=np.array([j.velocity for j in joints]),
        effort_limit=np.array([j.effort for j in joints]),
        frames=frames,
        base_link=base,
        name=robot_name,
        tip=tip or '',
    )


def _checked_gravity(gravity):
    """Return gravity as a finite 3-vector; raise InputError otherwise."""
    try:
        vector = np.array(gravity, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f'gravity must be a 3-vector of numbers, got {gravity!r}') from None
    if vector.shape != (3,) or not np.all(np.isfinite(vector)):
        raise InputError(f'gravity must be a finite 3-vector, got {gravity!r}')
    return vector
