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
The identified URDF: the nominal description with identified inertials and joint friction.

Each body's identified parameters go on the link its joint moves, as one ``<inertial>`` (mass,
centre of mass at ``<origin xyz>``, ``rpy = 0``, inertia about the centre of mass in the link's
axes). The links welded to it by fixed joints lose their ``<inertial>``: their share is in the
body's numbers ("folded in"). Links lumped into the body only because their movable joint is
off the identified chain (``--base-link``/``--tip-link``) keep their nominal inertial, and the
body's link gets the identified total less theirs, so that the description still loads as a
whole tree (the physically consistent fit keeps every body heavier than what is locked onto it,
:func:`.bounds.locked_parameters`). An XML declaration (``<?xml ... encoding="utf-8"?>``, as
xacro writes it) is accepted and kept. Friction is written as
``<dynamics damping="F_v" friction="F_c"/>`` on each joint (``tau_f = damping qd + friction
sign(qd)``). Everything else in the file is left as it was.
Loading the result with the same base and tip links gives back the identified parameters.

:func:`payload_urdf` adds an estimated payload instead: a new link ``<link>_payload`` with the
payload's ``<inertial>``, welded to the link by a fixed joint at its origin.
"""

from lxml import etree
import numpy as np

from .bounds import _fixed_path, locked_parameters
from .parameters import body_inertials
from ..errors import InputError
from ..spatial import check_inertial
from ..urdf import _parse
from ..urdf_xml import _XML_DECLARATION, xml_body

__all__ = ['identified_urdf', 'payload_urdf']


def _number(x):
    return repr(float(x))


def _root(text):
    """Return the parsed root element (any ``<?xml ... encoding=...?>`` declaration dropped)."""
    return etree.fromstring(xml_body(text), etree.XMLParser(remove_blank_text=False))


def _text(root, like):
    """Return the rewritten URDF, with an XML declaration (UTF-8) if ``like`` began with one."""
    body = etree.tostring(root, encoding='unicode')
    if isinstance(like, (bytes, bytearray)):
        like = bytes(like[:200]).decode('utf-8', errors='replace')
    if _XML_DECLARATION.match(like):
        return '<?xml version="1.0" encoding="utf-8"?>\n' + body
    return body


def _set_inertial(link_element, mass, com, inertia):
    for old in link_element.findall('inertial'):
        link_element.remove(old)
    inertial = etree.Element('inertial')
    etree.SubElement(inertial, 'origin', xyz=' '.join(_number(v) for v in com), rpy='0 0 0')
    etree.SubElement(inertial, 'mass', value=_number(mass))
    etree.SubElement(inertial, 'inertia', ixx=_number(inertia[0, 0]),
                     ixy=_number(inertia[0, 1]), ixz=_number(inertia[0, 2]),
                     iyy=_number(inertia[1, 1]), iyz=_number(inertia[1, 2]),
                     izz=_number(inertia[2, 2]))
    link_element.insert(0, inertial)


def identified_urdf(text, model, inertial, viscous=None, coulomb=None):
    """
    Return the URDF text ``text`` with the identified parameters of ``model``'s bodies.

    ``inertial``: (10 n,) physically consistent parameters (:func:`inertial_parameters`
    layout); ``viscous``, ``coulomb``: (n,) friction coefficients, or None to leave the
    joints' ``<dynamics>`` as they are. Raises InputError if a body's parameters are not
    physical, or if they cannot hold the nominal inertials of the links locked off the chain.
    """
    robot = _parse(text)
    root = _root(text)
    links = {link.get('name'): link for link in root.findall('link')}
    joints = {joint.get('name'): joint for joint in root.findall('joint')}
    parent_joint = {joint.child: joint for joint in robot.joints}
    inertial = np.asarray(inertial, dtype=float)
    # Locked off the chain: they keep their nominal inertials, the body's link gets the rest.
    per_body = inertial.reshape(model.nbodies, 10) - locked_parameters(text, model)
    welded = {i: [] for i in range(model.nbodies)}
    for frame in model.frames:
        i = frame.body
        if i < 0 or frame.name == model.link_names[i]:
            continue
        if _fixed_path(parent_joint, frame.name, model.link_names[i]):
            welded[i].append(frame.name)
    mass, com, inertia = body_inertials(
        model, per_body.reshape(-1), check=True,
        what='identified body {i} (link {link!r}) less the links locked off the chain')
    for i, name in enumerate(model.link_names):
        check_inertial(f'link {name!r}', mass[i], com[i], inertia[i])
        if name not in links:
            raise InputError(f'link {name!r} of the model is not in the URDF')
        _set_inertial(links[name], mass[i], com[i], inertia[i])
        for other in welded[i]:
            for old in links[other].findall('inertial'):
                links[other].remove(old)
    for values, attribute in ((viscous, 'damping'), (coulomb, 'friction')):
        if values is None:
            continue
        for name, value in zip(model.joint_names, values):
            dynamics = joints[name].find('dynamics')
            if dynamics is None:
                dynamics = etree.SubElement(joints[name], 'dynamics', damping='0.0',
                                            friction='0.0')
            dynamics.set(attribute, _number(max(float(value), 0.0)))
    return _text(root, text)


def payload_urdf(text, link, mass, com, inertia, name=None):
    """
    Return the URDF text with a payload welded to ``link``: a fixed child link of its own.

    ``mass`` [kg], ``com`` (3,) in the link frame, ``inertia`` (3, 3) about the centre of mass
    in the link's axes; ``name``: the new link's (default ``<link>_payload``, its joint
    ``<name>_joint``). Raises InputError for an unknown link, a taken name or a payload that is
    not a rigid body.
    """
    mass, com, inertia = check_inertial(f'payload on {link!r}', mass, com, inertia)
    root = _root(text)
    names = {element.get('name') for element in root.findall('link')}
    if link not in names:
        raise InputError(f'payload: link {link!r} is not in the URDF')
    name = name or f'{link}_payload'
    if name in names or any(j.get('name') == f'{name}_joint' for j in root.findall('joint')):
        raise InputError(f'payload: the URDF already has a link or joint named {name!r}')
    element = etree.SubElement(root, 'link', name=name)
    _set_inertial(element, mass, com, inertia)
    joint = etree.SubElement(root, 'joint', name=f'{name}_joint', type='fixed')
    etree.SubElement(joint, 'parent', link=link)
    etree.SubElement(joint, 'child', link=name)
    etree.SubElement(joint, 'origin', xyz='0 0 0', rpy='0 0 0')
    return _text(root, text)
