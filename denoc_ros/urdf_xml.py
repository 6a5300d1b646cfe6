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
Read a URDF source and parse it with urdf_parser_py, with urdfdom's leniency.

:func:`_read_source` turns a file path or an XML string into text; :func:`_parse` checks with lxml
what urdf_parser_py accepts silently (the root element, xacro, numbers that are not numbers) and
applies urdfdom's leniency, each case noted in a :class:`~denoc_ros.urdf_notes._Notes`: of
repeated elements the first counts, unknown attributes of the dynamics elements and unknown
elements inside ``<inertial>`` are dropped. Visuals, collisions, materials, transmissions and
plugin elements are removed before urdf_parser_py sees the description (they do not enter the
dynamics, and urdf_parser_py rejects some that real robots ship); its stderr notes about unknown
tags are silenced.
"""

import difflib
import os
import pathlib
import re
import threading

from lxml import etree
from urdf_parser_py.urdf import URDF
import urdf_parser_py.xml_reflection as xmlr
import urdf_parser_py.xml_reflection.core as xmlr_core

from .errors import URDFError
from .urdf_notes import _Notes

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


def xml_body(text):
    """
    Return XML text without its ``<?xml ...?>`` declaration (bytes decoded as UTF-8).

    lxml refuses a ``str`` that declares an encoding (``<?xml version="1.0"
    encoding="utf-8"?>``, as xacro writes it); once the text is a ``str`` the declaration says
    nothing more, so every reader and rewriter of a URDF drops it first.
    """
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode('utf-8', errors='replace')
    return _XML_DECLARATION.sub('', text, count=1)


def _parse(text, notes=None):
    """
    Parse the URDF text with urdf_parser_py after checking what that parser accepts silently.

    ``notes``: a :class:`_Notes` gathering urdfdom's leniency (default: lenient, not kept).
    """
    notes = _Notes(False) if notes is None else notes
    text = xml_body(text)
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
