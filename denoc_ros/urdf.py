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

Pipeline of :func:`load_urdf`:

1. read the source (file path or XML string) and parse it with ``urdf_parser_py``, after the
   checks that parser leaves out (root element, xacro, numbers that are not numbers) and with
   urdfdom's leniency: of repeated elements the first counts, unknown attributes and elements
   inside ``<inertial>`` are ignored (each with a warning);
2. extract every link's inertial and every joint's origin, axis, limits and dynamics, rejecting
   NaN/inf, negative masses and zero axes (naming the link and the joint that moves it);
3. check the topology: one root, no cycle, no joint naming a missing link;
4. walk the tree depth-first from ``base_link`` (children in file order): every movable joint
   (on the ``base_link -> tip_link`` chain, if a tip is given) becomes a body; every other joint
   welds its child link to the body it hangs from;
5. lump the welded links' inertials into their bodies (exact parallel-axis sums) and judge each
   combined body (links welded to the fixed base are not judged, they do not enter the
   dynamics): an inertia that is not positive semi-definite or breaks the triangle inequality
   A + B >= C, a degree of freedom that moves only massless links or a revolute leaf without
   inertia about its axis (the mass matrix is then singular) gives one :class:`URDFWarning` per
   body, recorded in ``model.warnings``.

With ``strict=True`` every condition that warns (but mimic joints and misspelled elements) is a
:class:`URDFError` instead, and each link's inertia is judged alone (the loader's behaviour
before lenient loading). Only what makes computation impossible is an error either way.

Visuals, collisions, materials, transmissions and plugin elements are removed before
urdf_parser_py sees the description: they do not enter the dynamics, and urdf_parser_py rejects
some that real robots ship. Its stderr notes about unknown tags are silenced.
"""

from dataclasses import dataclass
import difflib
import math
import os
import pathlib
import re
import threading
from typing import Dict, List, Optional, Tuple
import warnings

from lxml import etree
import numpy as np
from urdf_parser_py.urdf import URDF
import urdf_parser_py.xml_reflection as xmlr
import urdf_parser_py.xml_reflection.core as xmlr_core

from .errors import InputError, URDFError, URDFWarning
from .model import Frame, FREE_FLYER, PRISMATIC, REVOLUTE, RobotModel
from .spatial import (check_inertial, combine_inertials, parallel_axis, read_only,
                      rotate_inertia, rpy_to_matrix)

__all__ = ['load_urdf', 'rpy_to_matrix']  # rpy_to_matrix: re-exported from denoc_ros.spatial

MOVABLE_TYPES = {'revolute': REVOLUTE, 'continuous': REVOLUTE, 'prismatic': PRISMATIC}
DEFAULT_AXIS = (1.0, 0.0, 0.0)  # the URDF specification's default <axis xyz>
# Slack on the physical checks of principal moments: relative to the trace, plus the mass times
# a length (a deviation the size of the mass spread over a micrometre is CAD-export round-off).
INERTIA_RTOL = 1e-6
INERTIA_LENGTH_TOL = 1e-6  # m
ZERO_AXIS_INERTIA_RTOL = 1e-12  # "zero" rotational inertia about a revolute axis, rel. to trace

# Children of <link>/<joint> that feed the model: of several of a kind urdfdom takes the first.
_SINGLE_CHILDREN = {
    'link': ('inertial',),
    'joint': ('origin', 'axis', 'parent', 'child', 'limit', 'dynamics', 'mimic'),
}
_INERTIAL_CHILDREN = ('origin', 'mass', 'inertia')  # urdfdom ignores anything else
# Numeric attributes (name -> count of numbers) of the elements that feed the model; on the
# elements in _STRICT_TAGS any other attribute is an error (a typo would silently be ignored).
_NUMERIC_ATTRIBUTES = {
    'origin': {'xyz': 3, 'rpy': 3},
    'axis': {'xyz': 3},
    'mass': {'value': 1},
    'inertia': dict.fromkeys(('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'), 1),
    'limit': dict.fromkeys(('lower', 'upper', 'effort', 'velocity'), 1),
    'dynamics': dict.fromkeys(('damping', 'friction'), 1),
}
_STRICT_TAGS = ('origin', 'axis', 'mass', 'inertia')  # unknown attributes: warned, ignored
_KNOWN_CHILDREN = {
    'link': ('inertial', 'visual', 'collision'),
    'joint': ('origin', 'axis', 'parent', 'child', 'limit', 'dynamics', 'mimic',
              'calibration', 'safety_controller'),
}
_XACRO_NAMESPACE = '{http://www.ros.org/wiki/xacro}'
_XML_DECLARATION = re.compile(r'^\s*<\?xml[^>]*\?>')
_PARSER_LOCK = threading.Lock()  # urdf_parser_py reports through a module-global callback


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


@dataclass(frozen=True)
class _Body:
    """A degree of freedom: its joint, parent body and joint placement (lumping composed in)."""

    joint: _Joint
    parent: int
    rotation: np.ndarray
    translation: np.ndarray


class _Notes:
    """
    The doubtful conditions found while loading, gathered per subject (a link or a joint).

    :meth:`add` raises the condition's URDFError at once in strict mode if it is one that
    ``strict=True`` refuses; otherwise it keeps the condition for one warning per subject.
    """

    def __init__(self, strict):
        self.strict = strict
        self.conditions: Dict[str, List[Tuple[str, str]]] = {}

    def add(self, subject, condition, strict_error=None, glue=': '):
        """
        Record ``condition`` of ``subject``; in strict mode raise ``strict_error`` if given.

        ``glue`` joins subject and condition when it is the subject's first one.
        """
        if self.strict and strict_error is not None:
            raise URDFError(strict_error)
        self.conditions.setdefault(subject, []).append((glue, condition))

    def messages(self):
        """Return one message per subject, its conditions joined by semicolons."""
        return tuple(subject + glue + '; '.join(condition for _, condition in conditions)
                     for subject, conditions in self.conditions.items()
                     for glue in (conditions[0][0],))


# ---------------------------------------------------------------------------------------------
# Public entry point
# ---------------------------------------------------------------------------------------------

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
    base_subject, subjects = _body_subjects(base, bodies, placements)
    if not notes.strict:
        if floating:
            _judge_inertia(base_subject, base_inertial, notes)
        for subject, inertial in zip(subjects, body_inertials):
            _judge_inertia(subject, inertial, notes)
    if floating:
        if base_inertial.mass + sum(inertial.mass for inertial in body_inertials) <= 0.0:
            notes.add(base_subject, 'the floating base and everything on it are massless: the '
                      'mass matrix is singular (forward dynamics raises)',
                      f'the floating base {base!r} and everything on it are massless')
    if not floating or not notes.strict:  # strict=True keeps its fixed-base-only check
        _check_moving_mass(bodies, body_inertials, subjects, notes)
    _note_mimic(bodies, notes)
    return _assemble(robot.name, base, tip_link, bodies, body_inertials, placements, gravity,
                     base_inertial, notes.messages())


# ---------------------------------------------------------------------------------------------
# Reading and parsing
# ---------------------------------------------------------------------------------------------

def _read_source(source):
    """Return ``(xml_text, description of the source)`` for a path or an XML string."""
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode('utf-8', errors='replace')
    if isinstance(source, str) and source.lstrip().startswith('<'):
        return _XML_DECLARATION.sub('', source, count=1), 'URDF string'
    if isinstance(source, str) and not source.strip():
        raise URDFError('empty URDF string')
    if not isinstance(source, (str, os.PathLike)):
        raise URDFError('URDF source must be a file path or an XML string, '
                        f'not {type(source).__name__}')
    path = pathlib.Path(source)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise URDFError(f'URDF file not found: {path}') from None
    except OSError as err:
        raise URDFError(f'cannot read URDF file {path}: {err.strerror or err}') from None
    if not data.strip():
        raise URDFError(f'URDF file {path} is empty')
    text = data.decode('utf-8', errors='replace')
    return _XML_DECLARATION.sub('', text, count=1), f'URDF file {path}'


def _parse(text, notes=None):
    """
    Parse the URDF text with urdf_parser_py after checking what that parser accepts silently.

    ``notes``: a :class:`_Notes` gathering urdfdom's leniency (default: lenient, not kept).
    """
    notes = _Notes(False) if notes is None else notes
    try:
        root = etree.fromstring(text, etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError as err:
        hint = ' (a xacro file? run xacro on it first)' if 'xacro' in str(err) else ''
        raise URDFError(f'malformed XML: {err}{hint}') from None
    _check_xml(root, notes)
    _drop_geometry_and_plugins(root)
    with _PARSER_LOCK:
        saved = xmlr_core.on_error, xmlr.on_error
        xmlr_core.on_error = xmlr.on_error = _ignore_parser_note
        try:
            return URDF.from_xml_string(etree.tostring(root, encoding='unicode'))
        except Exception as err:  # noqa: B902 - urdf_parser_py raises assorted types
            message = ' '.join(str(err).split()) or type(err).__name__
            raise URDFError(f'invalid URDF: {message}') from None
        finally:
            xmlr_core.on_error, xmlr.on_error = saved


def _drop_geometry_and_plugins(root):
    """
    Remove what the dynamics ignores (visuals, collisions, materials, transmissions, plugins).

    urdf_parser_py rejects some of it in real descriptions (e.g. a <texture> without filename, an
    old-style <transmission>), which must not stop a dynamics model from loading.
    """
    for element in _children(root):
        if _tag(element) not in ('link', 'joint'):
            root.remove(element)
        elif _tag(element) == 'link':
            for child in _children(element):
                if _tag(child) in ('visual', 'collision'):
                    element.remove(child)


def _ignore_parser_note(message):
    """Drop urdf_parser_py's stderr notes (unknown tags): _check_xml covers those that matter."""


def _check_xml(root, notes):
    """Reject what urdf_parser_py would accept silently; apply urdfdom's leniency (noted)."""
    if not isinstance(root.tag, str) or root.tag != 'robot':
        raise URDFError(f'the root element is <{root.tag}>, expected <robot>')
    if any(_tag(el).startswith(_XACRO_NAMESPACE) for el in root.iter()):
        raise URDFError('the description contains xacro macros: run xacro on it first')
    for element in _children(root):
        if _tag(element) in ('link', 'joint'):
            _check_element(element, f"{_tag(element)} {element.get('name')!r}", notes)


def _keep_first(element, tags, what, notes, inside=''):
    """Keep the first child of each tag in ``tags`` (urdfdom reads only that one), noted."""
    for tag in tags:
        repeated = [child for child in _children(element) if _tag(child) == tag]
        if len(repeated) > 1:
            notes.add(what, f'{len(repeated)} <{tag}> elements{inside}: the first is used, as '
                      'urdfdom does', f'{what} has {len(repeated)} <{tag}> elements'
                      + (inside or ', expected at most one'))
            for extra in repeated[1:]:
                element.remove(extra)


def _check_element(element, what, notes):
    """Check a <link> or <joint>: single children, and the contents of dynamics elements."""
    kind = _tag(element)
    _keep_first(element, _SINGLE_CHILDREN[kind], what, notes)
    tags = [_tag(child) for child in _children(element)]
    for tag in set(tags) - set(_KNOWN_CHILDREN[kind]):
        close = difflib.get_close_matches(tag, _KNOWN_CHILDREN[kind], n=1, cutoff=0.75)
        if close:
            notes.add(what, f'unknown element <{tag}> ignored (did you mean <{close[0]}>?)')
    for child in _children(element):
        _check_attributes(child, what, notes)
        if _tag(child) == 'inertial':
            _check_inertial_element(child, what, notes)


def _check_inertial_element(inertial, what, notes):
    """Check an <inertial>: one <mass> and one <inertia>, at most one <origin> (first counts)."""
    for child in _children(inertial):
        tag = _tag(child)
        if tag not in _INERTIAL_CHILDREN:
            notes.add(what, f'unknown element <{tag}> in <inertial> ignored',
                      f'{what}: unknown element <{tag}> in <inertial> '
                      '(expected origin, mass, inertia)')
            inertial.remove(child)
    _keep_first(inertial, _INERTIAL_CHILDREN, what, notes, ' in <inertial>')
    tags = [_tag(child) for child in _children(inertial)]
    for tag in _INERTIAL_CHILDREN[1:]:
        if tag not in tags:
            raise URDFError(f'{what}: <inertial> has no <{tag}> element')
    for child in _children(inertial):
        _check_attributes(child, what, notes)


def _check_attributes(element, what, notes):
    """Check that numeric attributes hold numbers; drop unknown ones of dynamics elements."""
    tag = _tag(element)
    numeric = _NUMERIC_ATTRIBUTES.get(tag, {})
    for name, text in list(element.attrib.items()):
        count = numeric.get(name)
        if count is None and tag in _STRICT_TAGS:
            notes.add(what, f'unknown attribute {name!r} on <{tag}> ignored, as urdfdom does',
                      f'{what}: unknown attribute {name!r} on <{tag}> '
                      f'(expected {", ".join(numeric)})')
            del element.attrib[name]
            continue
        if count is not None and not _holds_numbers(text, count):
            raise URDFError(f'{what}: <{tag} {name}="{text}"> is not '
                            + ('a number' if count == 1 else f'{count} numbers'))


def _holds_numbers(text, count):
    """Return whether ``text`` is ``count`` whitespace-separated numbers."""
    words = text.split()
    if len(words) != count:
        return False
    try:
        for word in words:
            float(word)
    except ValueError:
        return False
    return True


def _children(element):
    """Return the child elements (no comments or processing instructions)."""
    return [child for child in element if isinstance(child.tag, str)]


def _tag(element):
    """Return the tag of an element ('' for comments and processing instructions)."""
    return element.tag if isinstance(element.tag, str) else ''


# ---------------------------------------------------------------------------------------------
# Numbers of links and joints
# ---------------------------------------------------------------------------------------------

# Largest magnitude accepted for lengths [m], masses [kg] and inertias [kg m^2]: beyond it the
# products in the dynamics overflow or lose every significant digit (a robot is not 1000 km long).
MAGNITUDE_BOUND = 1e6


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


# ---------------------------------------------------------------------------------------------
# Topology
# ---------------------------------------------------------------------------------------------

class _Tree:
    """Topology of a URDF: the parent joint of every link and the child joints in file order."""

    def __init__(self, link_names, joints):
        self.links = link_names
        self.parent_joint: Dict[str, _Joint] = {}
        self.child_joints: Dict[str, List[_Joint]] = {name: [] for name in link_names}
        if len(self.child_joints) != len(link_names):
            raise URDFError(f'link {_first_duplicate(link_names)!r} is defined twice')
        if len({joint.name for joint in joints}) != len(joints):
            raise URDFError(f'joint {_first_duplicate([j.name for j in joints])!r} '
                            'is defined twice')
        for joint in joints:
            self._add(joint)
        self.root = self._find_root()
        self._check_connected()

    def _add(self, joint):
        """Insert a joint after checking that its links exist and the child has no other parent."""
        for role, link in (('parent', joint.parent), ('child', joint.child)):
            if link not in self.child_joints:
                raise URDFError(f'joint {joint.name!r} names {role} link {link!r}, '
                                'which is not defined')
        other = self.parent_joint.get(joint.child)
        if other is not None:
            raise URDFError(f'link {joint.child!r} is the child of two joints, '
                            f'{other.name!r} and {joint.name!r}')
        self.parent_joint[joint.child] = joint
        self.child_joints[joint.parent].append(joint)

    def _find_root(self):
        """Return the only link that no joint has as child."""
        roots = [name for name in self.links if name not in self.parent_joint]
        if len(roots) > 1:
            raise URDFError(f'{len(roots)} root links (links that no joint has as child): '
                            f'{_names(roots)}; a URDF must form a single tree')
        if not roots:
            if not self.links:
                raise URDFError('no <link> element')
            raise URDFError(f'no root link: {self._cycle_from(self.links[0])}')
        return roots[0]

    def _check_connected(self):
        """Check that every link hangs from the root (a link that does not is on a cycle)."""
        reached = {self.root} | {joint.child for joint in self.preorder(self.root)}
        for name in self.links:
            if name not in reached:
                raise URDFError(self._cycle_from(name))

    def _cycle_from(self, link):
        """Describe the cycle met when walking up the parent joints from ``link``."""
        seen: List[str] = []
        while link not in seen:
            seen.append(link)
            link = self.parent_joint[link].parent
        cycle = [self.parent_joint[name].name for name in seen[seen.index(link):]]
        return f'joints {_names(reversed(cycle))} form a cycle'

    def preorder(self, start):
        """Yield the joints below link ``start``, depth-first pre-order, children in file order."""
        stack = list(reversed(self.child_joints[start]))
        while stack:
            joint = stack.pop()
            yield joint
            stack.extend(reversed(self.child_joints[joint.child]))

    def check_link(self, argument, name):
        """Return ``name`` if it is a link, else raise URDFError listing a few valid names."""
        if name in self.child_joints:
            return name
        close = difflib.get_close_matches(name, self.links, n=3)
        hint = f'; did you mean {_names(close)}?' if close else ''
        shown = _names(self.links[:8]) + (', ...' if len(self.links) > 8 else '')
        raise URDFError(f'{argument} {name!r} is not a link of the robot{hint} '
                        f'(links: {shown})')

    def chain(self, base, tip):
        """Return the set of joint names on the path from ``base`` down to ``tip``."""
        if tip == base:
            raise URDFError(f'tip_link {tip!r} is the base_link: the chain has no joint')
        names = set()
        link = tip
        while link != base:
            joint = self.parent_joint.get(link)
            if joint is None:
                raise URDFError(f'tip_link {tip!r} is not below base_link {base!r}')
            names.add(joint.name)
            link = joint.parent
        return names


def _assign_bodies(tree, base, chain):
    """
    Place every link below ``base`` on a body: movable joints start bodies, others weld.

    Returns the bodies (in pre-order, parents first) and, for every kept link, ``(body,
    rotation, translation)``: its placement in the frame of the body it is attached to (body
    -1 is the base link's frame).
    """
    placements = {base: (-1, np.eye(3), np.zeros(3))}
    bodies: List[_Body] = []
    for joint in tree.preorder(base):
        body, rotation, translation = placements[joint.parent]
        joint_rotation = rotation @ joint.rotation
        joint_translation = rotation @ joint.translation + translation
        if _is_degree_of_freedom(joint, chain):
            placements[joint.child] = (len(bodies), np.eye(3), np.zeros(3))
            bodies.append(_Body(joint, body, joint_rotation, joint_translation))
        else:
            placements[joint.child] = (body, joint_rotation, joint_translation)
    return bodies, placements


def _is_degree_of_freedom(joint, chain):
    """Return whether the joint moves (fixed joints and joints off the chain are locked at 0)."""
    if chain is not None and joint.name not in chain:
        return False
    if joint.kind == 'fixed':
        return False
    if joint.kind not in MOVABLE_TYPES:
        raise URDFError(f'joint {joint.name!r} is of type {joint.kind!r}, which is not supported '
                        '(only revolute, continuous, prismatic and fixed); pass a base_link '
                        'below it to load the robot from there')
    return True


# ---------------------------------------------------------------------------------------------
# Inertial lumping
# ---------------------------------------------------------------------------------------------

def _lump_inertials(bodies, placements, inertials, strict=False):
    """
    Return each body's inertial with every link welded to it combined in (body axes).

    ``strict``: raise URDFError unless each link alone is physical (positive semi-definite,
    A + B >= C; massless links may carry inertia), the refusal of ``strict=True``.
    """
    lumped = [_NO_INERTIAL] * len(bodies)
    for link, (body, rotation, translation) in placements.items():
        if body < 0:
            continue  # welded to the fixed base: has no effect on the dynamics
        piece = inertials[link]
        if strict:
            check_inertial(f'link {link!r}', piece.mass, piece.com, piece.inertia,
                           error=URDFError, rtol=INERTIA_RTOL, length_tol=INERTIA_LENGTH_TOL,
                           massless_inertia=True)
        moved = _Inertial(piece.mass, rotation @ piece.com + translation,
                          rotate_inertia(rotation, piece.inertia))
        a = lumped[body]
        lumped[body] = _Inertial(*combine_inertials(a.mass, a.com, a.inertia,
                                                    moved.mass, moved.com, moved.inertia))
    return lumped


def _body_subjects(base, bodies, placements):
    """Return how warnings name the base and each body: its link and the links welded to it."""
    welded: Dict[int, List[str]] = {}
    for link, (body, _, _) in placements.items():
        welded.setdefault(body, []).append(link)

    def subject(link, links):
        others = [name for name in links if name != link]
        if not others:
            return f'link {link!r}'
        more = f' and {len(others) - 3} more' if len(others) > 3 else ''
        return f'link {link!r} (with the welded {_names(others[:3])}{more})'

    return (subject(base, welded.get(-1, [])),
            [subject(body.joint.child, welded[i]) for i, body in enumerate(bodies)])


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


# ---------------------------------------------------------------------------------------------
# Assembly
# ---------------------------------------------------------------------------------------------

def _assemble(robot_name, base, tip, bodies, body_inertials, placements, gravity,
              base_inertial=None, notes=()):
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
        warnings=notes,
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


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------

def _first_duplicate(names):
    """Return the first name that occurs twice."""
    seen = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def _names(names):
    """Format names as a comma-separated list of quoted names."""
    return ', '.join(repr(name) for name in names)


def _fmt(array):
    """Format an array compactly for an error message."""
    return np.array2string(np.asarray(array), precision=6, separator=', ')
