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
What keeps an identified body plausible beyond its pseudo-inertia: locked links and geometry.

* :func:`locked_parameters`: the nominal parameters of the links locked onto each body because
  their movable joint is off the identified chain (``--base-link``/``--tip-link``, a head on a
  torso). The identified URDF keeps their nominal inertials and gives the body's link the rest,
  so the physically consistent fit keeps each body's pseudo-inertia less theirs positive
  definite (:func:`.estimation.physically_consistent` ``locked=``).
* :func:`body_bounds`: a bounding ellipsoid per body, in which its mass must lie. From the
  ``<collision>`` geometry of the body's links (``<visual>`` where a link has no collision),
  boxes, cylinders, spheres and STL meshes that can be found: the axis-aligned box around all of
  it in the body frame, and the ellipsoid through that box's corners (semi-axes ``sqrt(3)``
  times the half-sizes). A body without readable geometry gets a sphere around its joint
  origins (its own, the joints of its child bodies, its welded and locked links' origins):
  centred at their mean, its radius their largest distance from it plus ``radius``. The
  constraint is the LMI ``tr(J Q) >= 0`` of Wensing, Kim & Slotine 2017 (IEEE RA-L 3(1),
  Eq. 20): a body whose density lies within the ellipsoid satisfies it.
"""

from dataclasses import dataclass
import os
import pathlib
import struct
from typing import Tuple

from lxml import etree
import numpy as np

from .estimation import bound_row
from .parameters import parameters_of
from ..errors import InputError, URDFError
from ..spatial import rotate_inertia, rpy_to_matrix
from ..urdf import _link_inertial, _parse
from ..urdf_xml import xml_body

__all__ = ['BodyBound', 'body_bounds', 'bound_margins', 'locked_parameters', 'DEFAULT_RADIUS']

DEFAULT_RADIUS = 0.1
"""Margin [m] of the sphere around a body's joint origins when it has no geometry."""


def _fixed_path(tree_parent, link, body_link):
    """Return True if ``link`` hangs from ``body_link`` through fixed joints only."""
    while link != body_link:
        joint = tree_parent.get(link)
        if joint is None or joint.type != 'fixed':
            return False
        link = joint.parent
    return True


def _links(text):
    """Return ``{name: <link> element}`` of the URDF text."""
    root = etree.fromstring(xml_body(text), etree.XMLParser(resolve_entities=False,
                                                            no_network=True))
    return {link.get('name'): link for link in root.findall('link')}


def _numbers(element, name, default):
    if element is None or element.get(name) is None:
        return np.array(default, dtype=float)
    text = element.get(name)
    try:
        values = np.array([float(x) for x in text.split()])
    except ValueError:
        values = None
    if values is None or values.size != len(default):
        raise URDFError(f'<{element.tag} {name}="{text}">: {len(default)} numbers expected')
    return values


def locked_parameters(text, model):
    """
    Return ``(nbodies, 10)``: per body, the summed nominal parameters of the links locked onto it.

    Locked links are those lumped into a body through a movable joint off the identified chain
    (not through fixed joints only); their parameters are in the body's frame
    (:func:`.parameters.inertial_parameters` layout). Zero rows for bodies without any.
    """
    robot = _parse(text)
    urdf_links = {link.name: link for link in robot.links}
    parent_joint = {joint.child: joint for joint in robot.joints}
    out = np.zeros((model.nbodies, 10))
    for frame in model.frames:
        i = frame.body
        if i < 0 or frame.name == model.link_names[i]:
            continue
        if _fixed_path(parent_joint, frame.name, model.link_names[i]):
            continue
        piece = _link_inertial(urdf_links[frame.name])
        if piece.mass == 0.0 and not np.any(piece.inertia):
            continue
        R, p = frame.rotation, frame.translation
        out[i] += parameters_of(piece.mass, R @ piece.com + p, rotate_inertia(R, piece.inertia))
    return out


def _read_stl(path):
    """Return the (k, 3) vertices of an STL file (binary or ASCII), or None if unreadable."""
    try:
        data = pathlib.Path(path).read_bytes()
    except OSError:
        return None
    if data[:5].lower() == b'solid' and b'vertex' in data[:2000]:
        words = data.decode('ascii', errors='replace').split()
        values = [words[k + 1:k + 4] for k, w in enumerate(words) if w == 'vertex']
        try:
            return np.array(values, dtype=float).reshape(-1, 3)
        except ValueError:
            return None
    if len(data) < 84:
        return None
    count = struct.unpack('<I', data[80:84])[0]
    if len(data) < 84 + 50 * count or count == 0:
        return None
    records = np.frombuffer(data, dtype=np.dtype([('n', '<f4', 3), ('v', '<f4', (3, 3)),
                                                  ('a', '<u2')]), count=count, offset=84)
    return records['v'].reshape(-1, 3).astype(float)


def _mesh_points(element, folder):
    filename = element.get('filename', '')
    if filename.startswith('file://'):
        filename = filename[len('file://'):]
    if filename.startswith('package://'):
        try:
            from ament_index_python.packages import get_package_share_directory
            package, _, rest = filename[len('package://'):].partition('/')
            filename = os.path.join(get_package_share_directory(package), rest)
        except Exception:  # noqa: B902 - no ament index, unknown package: no geometry
            return None
    path = pathlib.Path(filename)
    if not path.is_absolute() and folder is not None:
        path = pathlib.Path(folder) / path
    if path.suffix.lower() != '.stl':
        return None
    points = _read_stl(path)
    if points is None:
        return None
    return points * _numbers(element, 'scale', (1.0, 1.0, 1.0))


def _geometry_points(geometry, folder):
    """Return points whose box bounds one ``<geometry>`` in its own frame, or None."""
    for shape in geometry:
        if not isinstance(shape.tag, str):
            continue
        half = None
        if shape.tag == 'box':
            half = 0.5 * _numbers(shape, 'size', (0.0, 0.0, 0.0))
        elif shape.tag == 'cylinder':
            r = float(_numbers(shape, 'radius', (0.0,))[0])
            length = float(_numbers(shape, 'length', (0.0,))[0])
            half = np.array([r, r, 0.5 * length])
        elif shape.tag == 'sphere':
            half = np.full(3, float(_numbers(shape, 'radius', (0.0,))[0]))
        elif shape.tag == 'mesh':
            return _mesh_points(shape, folder)
        if half is not None:
            signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1)
                              for sz in (-1, 1)], dtype=float)
            return signs * half
    return None


def _link_points(link, folder):
    """Return the link-frame points bounding its collision (else visual) geometry, or None."""
    for kind in ('collision', 'visual'):
        pieces = []
        for element in link.findall(kind):
            geometry = element.find('geometry')
            if geometry is None:
                continue
            points = _geometry_points(geometry, folder)
            if points is None:
                return None      # a piece we cannot bound: the link's geometry is unknown
            origin = element.find('origin')
            R = rpy_to_matrix(_numbers(origin, 'rpy', (0.0, 0.0, 0.0)))
            p = _numbers(origin, 'xyz', (0.0, 0.0, 0.0))
            pieces.append(points @ R.T + p)
        if pieces:
            return np.concatenate(pieces)
    return None


@dataclass(frozen=True)
class BodyBound:
    """A body's bounding ellipsoid ``(x - centre)^T S^-1 (x - centre) <= 1`` in its frame."""

    link: str
    centre: np.ndarray          # (3,) body frame
    semi_axes: np.ndarray       # (3,) along the body frame's axes
    source: str                 # 'collision', 'visual' or 'joint origins'

    @property
    def matrix(self):
        """Return the 4x4 ``Q`` with ``tr(J Q) >= 0`` for a density inside the ellipsoid."""
        inverse = np.diag(1.0 / self.semi_axes ** 2)
        c = self.centre
        Q = np.empty((4, 4))
        Q[:3, :3] = -inverse
        Q[:3, 3] = Q[3, :3] = inverse @ c
        Q[3, 3] = 1.0 - c @ inverse @ c
        return Q


def body_bounds(text, model, radius=DEFAULT_RADIUS, folder=None) -> Tuple[BodyBound, ...]:
    """
    Return one :class:`BodyBound` per body of ``model`` (module docstring).

    ``text``: the URDF ``model`` was loaded from; ``radius`` [m]: the margin of the sphere
    around the joint origins of a body without geometry; ``folder``: where relative mesh file
    names are looked up (the URDF's folder).
    """
    radius = float(radius)
    if not radius > 0.0:
        raise InputError(f'body bound radius must be positive, got {radius} m')
    links = _links(text)
    members = {i: [] for i in range(model.nbodies)}
    for frame in model.frames:
        if frame.body >= 0:
            members[frame.body].append(frame)
    out = []
    for i, name in enumerate(model.link_names):
        points, sources, complete = [], set(), True
        for frame in members[i]:
            link = links.get(frame.name)
            found = None if link is None else _link_points(link, folder)
            if found is None:
                if link is not None and (link.find('inertial') is not None
                                         or frame.name == name):
                    complete = False
                continue
            sources.add('collision' if link.find('collision') is not None else 'visual')
            points.append(found @ frame.rotation.T + frame.translation)
        if points and complete:
            allpoints = np.concatenate(points)
            lo, hi = allpoints.min(axis=0), allpoints.max(axis=0)
            half = np.maximum(0.5 * (hi - lo), 1e-3)
            out.append(BodyBound(name, 0.5 * (lo + hi), np.sqrt(3.0) * half,
                                 '+'.join(sorted(sources))))
            continue
        origins = [np.zeros(3)] + [model.joint_translation[j] for j in model.children(i)]
        origins += [f.translation for f in members[i]]
        origins = np.array(origins)
        centre = origins.mean(axis=0)
        r = float(np.max(np.linalg.norm(origins - centre, axis=1))) + radius
        out.append(BodyBound(name, centre, np.full(3, r), 'joint origins'))
    return tuple(out)


def bound_margins(inertial, bounds):
    """
    Return per body ``tr(J Q) / m``: the mean over its mass of ``1 - (x-c)^T S^-1 (x-c)``.

    Non-negative when the body satisfies its bound; ``inertial`` (10 n,) parameters.
    """
    per_body = np.asarray(inertial, dtype=float).reshape(len(bounds), 10)
    return np.array([float(bound_row(b.matrix) @ p) / max(float(p[0]), 1e-300)
                     for p, b in zip(per_body, bounds)])
