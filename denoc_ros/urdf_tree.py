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
The URDF's tree: topology checks, the bodies of the degrees of freedom, and lumping.

:class:`_Tree` checks the topology (one root, no cycle, no joint naming a missing link) and
selects the ``base_link -> tip_link`` chain; :func:`_assign_bodies` walks it depth-first from
``base_link`` (children in file order): every movable joint (on the chain, if a tip is given)
becomes a body, every other joint welds its child link to the body it hangs from;
:func:`_lump_inertials` combines the welded links' inertials into their bodies (exact
parallel-axis sums; with ``strict`` each link is first judged alone).
"""

from dataclasses import dataclass
import difflib
from typing import Dict, List

import numpy as np

from .errors import URDFError
from .spatial import check_inertial, combine_inertials, rotate_inertia
from .urdf_elements import _Inertial, _Joint, _NO_INERTIAL, MOVABLE_TYPES
from .urdf_judgement import INERTIA_LENGTH_TOL, INERTIA_RTOL
from .urdf_notes import _names


@dataclass(frozen=True)
class _Body:
    """A degree of freedom: its joint, parent body and joint placement (lumping composed in)."""

    joint: _Joint
    parent: int
    rotation: np.ndarray
    translation: np.ndarray


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


def _first_duplicate(names):
    """Return the first name that occurs twice."""
    seen = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None
