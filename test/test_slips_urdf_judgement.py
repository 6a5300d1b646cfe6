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
The loader's judgement of bodies where a slip describes another body (issue 33).

* Hand-built links whose inertia is valid about one point only: no rigid body has it about its
  centre of mass, yet about the link origin (parallel axis, ``+ m (|d|^2 1 - d d^T)``) it looks
  fine; a point mass off a revolute leaf's axis has inertia ``m d^2`` about the axis, none
  about its own centre.
* Random trees (hypothesis), written as URDF in a shuffled order with welded (fixed) links and
  massless links: which joint moves no mass, and which revolute leaf has no inertia about its
  axis, from the tree walked here (recursion over the URDF's parent/child pairs, sums of point
  masses and isotropic inertias at their positions), against the loader's warnings.
"""

import warnings

import denoc_ros as dr
from denoc_ros.errors import URDFError
from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

LIMIT = '<limit lower="-3" upper="3" effort="10" velocity="2"/>'


def _v(values):
    return ' '.join(repr(float(x)) for x in values)


def inertial(mass, com, diag=(0.0, 0.0, 0.0)):
    """Return an <inertial> element: mass, COM in the link frame, diagonal inertia about it."""
    return (f'<inertial><origin xyz="{_v(com)}" rpy="0 0 0"/><mass value="{mass!r}"/>'
            f'<inertia ixx="{diag[0]!r}" ixy="0" ixz="0" iyy="{diag[1]!r}" iyz="0" '
            f'izz="{diag[2]!r}"/></inertial>')


def one_link(element, axis=(0.0, 0.0, 1.0), kind='revolute', child=''):
    """Return a robot: base, joint j1 (``kind``, ``axis``) to link l1 carrying ``element``."""
    more = ''
    if child:
        more = (f'<link name="l2">{child}</link><joint name="j2" type="revolute">'
                '<parent link="l1"/><child link="l2"/><axis xyz="1 0 0"/>' + LIMIT + '</joint>')
    return (f'<robot name="r"><link name="base"/><link name="l1">{element}</link>'
            f'<joint name="j1" type="{kind}"><parent link="base"/><child link="l1"/>'
            f'<axis xyz="{_v(axis)}"/>{LIMIT}</joint>{more}</robot>')


def load(text, **options):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return dr.load_urdf(text, **options)


# Diagonal inertias about a centre of mass 0.2 m from the link origin (mass 2 kg): no body has
# them (C > A + B by 0.03 kg m^2; a principal moment of -0.001), yet about the origin they are
# physical, (0.09, 0.09, 0.05) and (0.079, 0.1, 0.025).
INVALID_AT_COM = [((0.01, 0.01, 0.05), 'violate the triangle inequality'),
                  ((-0.001, 0.02, 0.025), 'one is negative')]
OFFSET = np.array([0.0, 0.0, 0.2])


@pytest.mark.parametrize('diag, condition', INVALID_AT_COM)
@pytest.mark.parametrize('leaf', [True, False])
def test_an_inertia_invalid_about_its_centre_of_mass_is_noted(diag, condition, leaf):
    """Judged about the centre of mass (where the URDF gives it), not about the link origin."""
    # The premise, by the parallel-axis theorem here: about the origin the inertia is physical.
    about_origin = np.linalg.eigvalsh(
        np.diag(diag) + 2.0 * (OFFSET @ OFFSET * np.eye(3) - np.outer(OFFSET, OFFSET)))
    assert about_origin[0] > 0.0 and about_origin[2] < about_origin[0] + about_origin[1]
    child = '' if leaf else inertial(1.0, (0.1, 0.0, 0.0), (0.01, 0.01, 0.01))
    text = one_link(inertial(2.0, OFFSET, diag), child=child)
    model = load(text)
    assert len(model.warnings) == 1, model.warnings
    assert model.warnings[0].startswith("link 'l1': principal moments")
    assert condition in model.warnings[0]
    with pytest.raises(URDFError, match=r"link 'l1'"):
        load(text, strict=True)


def test_a_valid_inertia_far_from_the_origin_is_not_noted():
    """The converse: physical about the centre of mass, nothing to say (any offset)."""
    model = load(one_link(inertial(2.0, (0.0, 0.0, 0.2), (0.01, 0.01, 0.019))))
    assert model.warnings == ()


@pytest.mark.parametrize('axis', [(0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (0.6, 0.0, 0.8)])
def test_a_point_mass_off_a_revolute_leafs_axis_turns_with_inertia(axis):
    """
    A point mass 0.3 m off the axis: m d^2 = 0.09 kg m^2 about the axis, nothing to note.

    The same point mass on the axis has none: M(q) is singular and the loader says so.
    """
    axis = np.array(axis)
    off = np.cross(axis, [1.0, 0.0, 0.0] if abs(axis[0]) < 0.9 else [0.0, 1.0, 0.0])
    off *= 0.3 / np.linalg.norm(off)
    model = load(one_link(inertial(1.0, off), axis=axis))
    assert model.warnings == ()
    assert dr.mass_matrix(model, [0.4])[0, 0] == pytest.approx(0.09, rel=1e-12)
    on_axis = load(one_link(inertial(1.0, 0.3 * axis), axis=axis))
    assert len(on_axis.warnings) == 1
    assert "no rotational inertia about the axis of joint 'j1'" in on_axis.warnings[0]
    # A prismatic leaf needs no rotational inertia.
    assert load(one_link(inertial(1.0, 0.3 * axis), axis=axis, kind='prismatic')).warnings \
        == ()


# ------------------------------------------------------------------------------------------------
# Random trees: the judgement's walk against one done here


@st.composite
def trees(draw):
    """
    Return a random tree: links with parents, joint kinds, axes, origins, masses and COMs.

    Masses are zero (often) or positive; inertias isotropic ``k 1`` (zero or positive), so
    that the inertia about any axis is ``k + m d^2``; a COM lies on the joint axis or 0.1 m
    or more off it.
    """
    n = draw(st.integers(1, 9))
    links = []
    for i in range(1, n + 1):
        # 0: the base; often the previous link (deep chains, where a walk's order matters)
        parent = draw(st.one_of(st.integers(0, i - 1), st.just(i - 1)))
        kinds = ['revolute', 'revolute', 'prismatic'] + (['fixed'] if i > 1 else [])
        kind = draw(st.sampled_from(kinds))   # the first one movable: a model to load
        axis = np.array(draw(st.sampled_from([(0, 0, 1), (0, 1, 0), (1, 0, 0), (0, 0.6, 0.8)])),
                        dtype=float)
        origin = np.array(draw(st.lists(st.floats(-0.3, 0.3), min_size=3, max_size=3)))
        massive = draw(st.sampled_from([False, False, True]))
        mass = draw(st.floats(0.2, 3.0)) if massive else 0.0
        k = draw(st.sampled_from([0.0, 0.01])) if massive else 0.0
        along = draw(st.floats(-0.2, 0.2))
        off = draw(st.sampled_from([0.0, 0.0, 0.1, 0.25]))
        side = np.cross(axis, [1.0, 0.0, 0.0] if abs(axis[0]) < 0.9 else [0.0, 1.0, 0.0])
        com = along * axis + off * side / np.linalg.norm(side)
        links.append({'name': f'l{i}', 'parent': parent, 'kind': kind, 'axis': axis,
                      'origin': origin, 'mass': mass, 'k': k, 'com': com})
    order = draw(st.permutations(range(n)))
    return links, order


def tree_urdf(links, order):
    """Write the tree as URDF, its links and joints in ``order``."""
    parts = ['<robot name="tree">', '<link name="l0"/>']
    for idx in order:
        link = links[idx]
        body = (inertial(link['mass'], link['com'], (link['k'],) * 3)
                if link['mass'] > 0.0 else '')
        parts.append(f'<link name="{link["name"]}">{body}</link>')
    for idx in order:
        link = links[idx]
        limit = LIMIT if link['kind'] != 'fixed' else ''
        parts.append(f'<joint name="j{idx + 1}" type="{link["kind"]}">'
                     f'<parent link="l{link["parent"]}"/><child link="{link["name"]}"/>'
                     f'<origin xyz="{_v(link["origin"])}" rpy="0 0 0"/>'
                     f'<axis xyz="{_v(link["axis"])}"/>{limit}</joint>')
    parts.append('</robot>')
    return ''.join(parts)


def expected_conditions(links):
    """Return {link name: condition} the judgement must note, walking the tree here."""
    children = {i: [] for i in range(len(links) + 1)}
    for i, link in enumerate(links, start=1):
        children[link['parent']].append(i)

    def subtree_mass(i):
        return links[i - 1]['mass'] + sum(subtree_mass(c) for c in children[i])

    def welded(i, offset):
        """Yield (link index, its origin in body i's frame) of i and the links welded to it."""
        yield i, offset
        for c in children[i]:
            if links[c - 1]['kind'] == 'fixed':
                yield from welded(c, offset + links[c - 1]['origin'])

    def moves_a_joint(i):
        """Whether a movable joint hangs below the body of link i (through welded links)."""
        return any(links[c - 1]['kind'] != 'fixed' or moves_a_joint(c) for c in children[i])

    out = {}
    for i, link in enumerate(links, start=1):
        if link['kind'] == 'fixed':
            continue
        joint = f'j{i}'
        if subtree_mass(i) <= 0.0:
            out[link['name']] = f'joint {joint!r} moves only massless links'
        elif link['kind'] == 'revolute' and not moves_a_joint(i):
            a = link['axis'] / np.linalg.norm(link['axis'])
            moment = 0.0
            for w, p in welded(i, np.zeros(3)):
                x = p + links[w - 1]['com']
                moment += links[w - 1]['k'] + links[w - 1]['mass'] * (x @ x - (x @ a) ** 2)
            if moment <= 1e-9:
                out[link['name']] = f'no rotational inertia about the axis of joint {joint!r}'
    return out


@settings(max_examples=100, deadline=None)
@given(tree=trees())
def test_random_trees_note_exactly_the_joints_that_move_no_mass_or_no_inertia(tree):
    links, order = tree
    expected = expected_conditions(links)
    model = load(tree_urdf(links, order))
    noted = {}
    for message in model.warnings:
        assert message.startswith("link '"), model.warnings
        noted[message.split("'")[1]] = message
    assert set(noted) == set(expected), (model.warnings, expected)
    for name, condition in expected.items():
        assert condition in noted[name], (noted[name], condition)


@pytest.mark.parametrize('kinds', [('revolute',) * 4, ('prismatic', 'revolute', 'revolute'),
                                   ('revolute', 'fixed', 'revolute', 'fixed')])
@pytest.mark.parametrize('massive', [-1, -2])
def test_a_chain_of_massless_links_over_a_massive_one_moves_mass(kinds, massive):
    """Massless links above a massive one: every joint above it moves that mass."""
    links = []
    for i, kind in enumerate(kinds, start=1):
        heavy = i == len(kinds) + 1 + massive
        links.append({'name': f'l{i}', 'parent': i - 1, 'kind': kind,
                      'axis': np.array([0.0, 0.0, 1.0]), 'origin': np.array([0.2, 0.0, 0.0]),
                      'mass': 1.5 if heavy else 0.0, 'k': 0.01 if heavy else 0.0,
                      'com': np.array([0.0, 0.0, 0.1])})
    expected = expected_conditions(links)
    model = load(tree_urdf(links, range(len(links))[::-1]))
    noted = {message.split("'")[1]: message for message in model.warnings}
    assert set(noted) == set(expected), (model.warnings, expected)
    for name, condition in expected.items():
        assert condition in noted[name]
