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
The surfaces a robot can be touched on: its URDF's ``<collision>`` geometry, sampled.

:func:`load_collision_geometry` reads every ``<collision>`` of every link (box, cylinder, sphere,
capsule, mesh with ``scale``; the element's ``<origin>``) and returns a frozen
:class:`CollisionGeometry`: per link a :class:`LinkSurface` of points on the outer surface, in
the URDF link's own frame, each with its outward unit normal, and a coarse level of clusters.

Sampling (per link, deterministic: the generator is seeded with :data:`SEED` and the link name):

1. candidates: ``OVERSAMPLE / spacing**2`` points per m^2, area-uniform on every shape (a
   primitive's analytic surface, Pharr & Humphreys, *Physically Based Rendering*, 3rd ed.,
   sec. 13.6 for the disk, sphere and cylinder; a mesh's triangles chosen in proportion to their
   area, then uniform barycentric coordinates ``(1 - sqrt(u), sqrt(u) (1 - v), sqrt(u) v)``,
   Osada et al., ACM TOG 21(4), 2002, Eq. 1), each with its shape's outward normal;
2. a candidate strictly inside another solid of the same link is dropped (primitives always,
   by their closed-form signed distance; meshes when watertight, by ray parity, the Jordan
   curve theorem, on a grid of the triangles), and so is one on another primitive's surface
   where the two surfaces face each other (a wall inside the union) or where that primitive
   comes first in the file (coincident faces count once): the link's surface is the outer
   surface of the union, and its ``area`` is the shapes' area times the fraction of candidates
   kept;
3. Poisson-disk thinning: the candidates in random order, each kept unless a kept one lies
   within ``THIN * spacing`` (the lexicographically first maximal independent set of the
   candidates' neighbour graph, computed in rounds of local minima, Luby, SIAM J. Comput. 15(4),
   1986). The points are then at least ``0.9 spacing`` apart, their mean nearest-neighbour
   distance is about ``spacing`` (about ``0.65 / spacing**2`` points per m^2), and the density
   stays area-uniform (the thinning is isotropic);
4. coarse clusters: the same thinning of the fine points with radius ``r = THIN *
   coarse_spacing`` in the space ``(p, r n)`` picks the cluster representatives (their mean
   nearest-neighbour distance is about ``coarse_spacing``); every point joins the nearest
   representative in that space, hence lies within ``r`` of it and never joins a cluster whose
   normal differs by more than 60 degrees from its own (the two sides of a thin plate are
   separate clusters).

Meshes: binary STL is read directly, ASCII STL, OBJ and DAE (through ``pycollada``) with
``trimesh``; a COLLADA file's ``<unit meter>`` is applied, as RViz's mesh loader does
(``getMeshUnitRescale``), its ``<up_axis>`` is not (trimesh and coal's assimp reader ignore it
as well). Vertices within 1e-8 m are merged (trimesh's tolerance)
and degenerate triangles dropped. A mesh is watertight when every edge is shared by exactly
two triangles; a watertight mesh has its winding made consistent (faces flipped across the
edges they share) and outward (a positive volume, divergence theorem). A mesh that is not
watertight keeps the winding of its file: its normals point where the file's counter-clockwise
faces say, as RViz and the physics engines read it (mirrored back when the ``scale`` has an
odd number of negative factors); where the file is wound inconsistently, so are its normals.
A mesh that cannot be read (missing, corrupt, empty, unknown format, an unresolvable
``package://``) is named in ``warnings`` and its link goes without it.
"""

from dataclasses import dataclass, fields
import os
import pathlib
import sys
from typing import Dict, Tuple
import warnings
import zlib

from lxml import etree
import numpy as np

from ..description import read_description
from ..errors import InputError, URDFError, URDFWarning
from ..resources import example_robot_data_dir
from ..spatial import read_only, rpy_to_matrix
from ..urdf_xml import xml_body

__all__ = ['load_collision_geometry', 'CollisionGeometry', 'LinkSurface', 'Shape',
           'MAX_POINTS', 'SEED']

SEED = 31
"""Seed of the sampling (combined with the link name's CRC-32: a link's samples do not depend
on the other links)."""
MAX_POINTS = 20000
"""Default cap of the points of one link (its spacing is raised to keep under it, and warned)."""
OVERSAMPLE = 4.0
"""Candidates per ``spacing**2`` of area before the thinning."""
THIN = 0.9
"""Thinning radius in units of ``spacing``: the mean nearest-neighbour distance is then ~1."""
DENSITY = 0.65
"""Points per ``spacing**2`` of area that the thinning leaves (measured on a plane)."""
KINDS = ('box', 'cylinder', 'sphere', 'capsule', 'mesh')
_INSIDE_TOLERANCE = 1e-9  # m: a candidate this close to another solid's surface is on it


def _frozen_arrays(obj, names):
    """Make the named array fields of a frozen dataclass read-only copies (float64 / int64)."""
    for name in names:
        value = getattr(obj, name)
        dtype = np.int64 if np.asarray(value).dtype.kind in 'iu' else float
        object.__setattr__(obj, name, read_only(value, dtype=dtype))


@dataclass(frozen=True)
class Shape:
    """
    One ``<collision>`` element of a link: its kind, placement, size and triangles.

    ``rotation``/``translation``: the shape frame in the link frame (the element's
    ``<origin>``); ``size``: box ``(x, y, z)``, cylinder and capsule ``(radius, length)``,
    sphere ``(radius,)``, mesh ``scale (sx, sy, sz)``; ``filename``: the resolved mesh path
    (``''`` for primitives); ``vertices`` (V, 3) in the LINK frame and ``faces`` (F, 3):
    the mesh, or the primitive tessellated (for display and intersection, not for sampling);
    ``watertight``: whether the triangles close a volume (primitives: always).
    """

    kind: str
    rotation: np.ndarray
    translation: np.ndarray
    size: Tuple[float, ...]
    filename: str
    vertices: np.ndarray
    faces: np.ndarray
    watertight: bool = True
    area: float = 0.0

    def __post_init__(self):
        """Freeze the arrays (read-only copies)."""
        _frozen_arrays(self, ('rotation', 'translation', 'vertices', 'faces'))
        object.__setattr__(self, 'size', tuple(float(x) for x in self.size))

    def __reduce__(self):
        """Pickle through the constructor (the arrays stay read-only)."""
        return (type(self), tuple(getattr(self, f.name) for f in fields(self)))


@dataclass(frozen=True)
class LinkSurface:
    """
    The sampled outer surface of one link, in the URDF link's own frame.

    ``points`` (P, 3) and ``normals`` (P, 3, unit, outward); ``cluster`` (P,) int64, the
    coarse cluster 0..C-1 of each point; ``coarse_points``/``coarse_normals`` (C, 3): each
    cluster's representative (one of the fine points); ``area``: m^2 of the outer surface;
    ``shapes``: the link's readable collision shapes; ``spacing``: the spacing used for this
    link (the requested one, or larger where the point cap applied).
    """

    link: str
    points: np.ndarray
    normals: np.ndarray
    cluster: np.ndarray
    coarse_points: np.ndarray
    coarse_normals: np.ndarray
    area: float
    shapes: Tuple[Shape, ...]
    spacing: float = 0.0

    def __post_init__(self):
        """Freeze the arrays (read-only copies)."""
        _frozen_arrays(self, ('points', 'normals', 'cluster', 'coarse_points',
                              'coarse_normals'))
        object.__setattr__(self, 'shapes', tuple(self.shapes))

    def __reduce__(self):
        """Pickle through the constructor (the arrays stay read-only)."""
        return (type(self), tuple(getattr(self, f.name) for f in fields(self)))


@dataclass(frozen=True)
class CollisionGeometry:
    """
    The sampled collision surfaces of a robot description (:func:`load_collision_geometry`).

    ``surfaces``: link name -> :class:`LinkSurface`, for the links with readable geometry;
    ``warnings``: one line per shape or link that could not be read or was capped;
    ``unreadable``: links whose ``<collision>`` elements all failed; ``links_without_geometry``:
    every URDF link without readable collision geometry; ``spacing``/``coarse_spacing``: the
    requested ones [m]; ``source``: the URDF file, or ``'URDF string'``.
    """

    surfaces: Dict[str, LinkSurface]
    warnings: Tuple[str, ...]
    unreadable: Tuple[str, ...]
    links_without_geometry: Tuple[str, ...]
    spacing: float
    coarse_spacing: float
    source: str = ''

    def __post_init__(self):
        """Store the containers as tuples and a plain dict."""
        object.__setattr__(self, 'surfaces', dict(self.surfaces))
        for name in ('warnings', 'unreadable', 'links_without_geometry'):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def __reduce__(self):
        """Pickle through the constructor."""
        return (type(self), tuple(getattr(self, f.name) for f in fields(self)))


def load_collision_geometry(source, package_paths=None, spacing=0.005, coarse_spacing=0.03,
                            max_points=MAX_POINTS):
    """
    Return the :class:`CollisionGeometry` of a URDF's ``<collision>`` elements (module doc).

    ``source``: a URDF (or ``.xacro``) file path, a bundled robot name, or the URDF XML text
    (a str starting with ``<``). ``package_paths``: ``{package: directory}`` or a list of
    directories that contain package folders; ``package://pkg/rel`` is looked up there first,
    then in the ament index, then in the share directories of example-robot-data and of this
    Python, then in the URDF file's ancestors. ``file://`` and relative paths (relative to the
    URDF file's folder, the working directory for XML text) work too. ``spacing`` and
    ``coarse_spacing`` [m]: the points' and the clusters' spacing; ``max_points``: the cap of
    one link's points (its spacing is raised to keep under it, with a warning).

    A mesh that cannot be read (missing, unresolvable package, corrupt, empty, unknown format)
    is left out with a :class:`URDFWarning` naming the link and the file, as is any other
    collision element that cannot be used. Raises :class:`URDFError` for a source that is not
    a URDF, :class:`InputError` for a bad spacing or package_paths.
    """
    spacing = _positive('spacing', spacing)
    coarse_spacing = _positive('coarse_spacing', coarse_spacing)
    if not coarse_spacing >= spacing:
        raise InputError(f'coarse_spacing ({coarse_spacing} m) must not be below spacing '
                         f'({spacing} m)')
    if isinstance(max_points, bool) or not isinstance(max_points, (int, np.integer)) \
            or max_points < 10:
        raise InputError(f'max_points must be an integer >= 10, got {max_points!r}')
    text, folder, where = _description(source)
    root = _robot_element(text, where)
    resolver = _Resolver(package_paths, folder)
    reader = _MeshReader()
    notes, surfaces, unreadable, without = [], {}, [], []
    for link in root.findall('link'):
        name = link.get('name')
        if not name:
            continue
        elements = link.findall('collision')
        shapes = []
        for element in elements:
            shape = _shape(element, name, resolver, reader, notes)
            if shape is not None:
                shapes.append(shape)
        surface = None
        if shapes:
            surface = _link_surface(name, shapes, spacing, coarse_spacing, int(max_points),
                                    notes)
        if surface is None:
            without.append(name)
            if elements:
                unreadable.append(name)
        else:
            surfaces[name] = surface
    for message in notes:
        warnings.warn(message, URDFWarning, stacklevel=2)
    return CollisionGeometry(surfaces, notes, unreadable, without, spacing, coarse_spacing,
                             where)


def _positive(name, value):
    """Return ``value`` as a positive finite float; raise InputError otherwise."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InputError(f'{name} must be a number of metres, got {value!r}') from None
    if not (np.isfinite(out) and out > 0.0):
        raise InputError(f'{name} must be positive and finite, got {value!r}')
    return out


def _description(source):
    """Return ``(URDF text, folder for relative paths or None, description of the source)``."""
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode('utf-8', errors='replace')
    if isinstance(source, str) and source.lstrip().startswith('<'):
        return source, None, 'URDF string'
    if not isinstance(source, (str, os.PathLike)) or not str(source).strip():
        raise URDFError('URDF source must be a file path or an XML string, '
                        f'not {source!r}'[:200])
    text = read_description(source)
    path = pathlib.Path(source)
    if not path.is_file():  # a bundled robot's name
        from ..resources import resolve_urdf
        path = pathlib.Path(resolve_urdf(str(source)))
    return text, path.resolve().parent, f'URDF file {path}'


def _robot_element(text, where):
    """Return the parsed ``<robot>`` element; raise URDFError if the text is not a URDF."""
    try:
        root = etree.fromstring(xml_body(text), etree.XMLParser(resolve_entities=False,
                                                                no_network=True))
    except etree.XMLSyntaxError as err:
        raise URDFError(f'{where}: malformed XML: {err}') from None
    if not isinstance(root.tag, str) or root.tag != 'robot':
        raise URDFError(f'{where}: the root element is <{root.tag}>, expected <robot>')
    return root


class _Resolver:
    """Turn a mesh ``filename`` into a path: package://, file://, absolute or relative."""

    def __init__(self, package_paths, folder):
        self.named, self.roots = {}, []
        try:
            if isinstance(package_paths, dict):
                self.named = {str(k): pathlib.Path(v) for k, v in package_paths.items()}
            elif isinstance(package_paths, (str, os.PathLike)):
                self.roots = [pathlib.Path(package_paths)]
            elif package_paths is not None:
                self.roots = [pathlib.Path(p) for p in package_paths]
        except TypeError:
            raise InputError('package_paths must be a dict {package: directory} or a list of '
                             f'directories, not {package_paths!r}'[:200]) from None
        self.folder = folder
        self.cache = {}

    def share_roots(self):
        """Return the example-robot-data style directories that hold package folders."""
        roots = []
        robots = example_robot_data_dir()
        if robots is not None:
            roots += [robots, robots.parent.parent]   # robots/<pkg>, share/<pkg>
        roots.append(pathlib.Path(sys.prefix) / 'share')
        return roots

    def package(self, name):
        """Return the directory of package ``name`` or None."""
        if name in self.cache:
            return self.cache[name]
        found = self.named.get(name)
        if found is None:
            found = next((r / name for r in self.roots if (r / name).is_dir()), None)
        if found is None:
            found = _ament_share(name)
        if found is None:
            found = next((r / name for r in self.share_roots() if (r / name).is_dir()), None)
        if found is None and self.folder is not None:
            for ancestor in [self.folder, *self.folder.parents]:
                if ancestor.name == name:
                    found = ancestor
                    break
                if (ancestor / name).is_dir():
                    found = ancestor / name
                    break
        self.cache[name] = found
        return found

    def resolve(self, filename):
        """Return ``(path, None)`` or ``(None, reason)`` for a mesh filename."""
        if filename.startswith('package://'):
            package, _, rest = filename[len('package://'):].lstrip('/').partition('/')
            directory = self.package(package)
            if directory is None:
                return None, (f'package {package!r} not found (package_paths, ament index, '
                              "example-robot-data, the URDF folder's ancestors)")
            path = directory / rest
        elif filename.startswith('file://'):
            path = pathlib.Path(filename[len('file://'):])
        else:
            path = pathlib.Path(filename)
        if not path.is_absolute():
            path = (self.folder or pathlib.Path.cwd()) / path
        path = pathlib.Path(os.path.normpath(path))
        if not path.is_file():
            return None, f'no such file: {path}'
        return path, None


def _ament_share(name):
    """Return a package's share directory from the ament index, or None."""
    try:
        from ament_index_python.packages import get_package_share_directory
        return pathlib.Path(get_package_share_directory(name))
    except Exception:  # noqa: B902 - no ament index, or not on it
        return None


class _MeshReader:
    """
    Read mesh files, each file once per call: binary STL directly, the rest through trimesh.

    Vertices on the same point of a :data:`_MERGE` grid are merged (trimesh's tolerance),
    degenerate triangles dropped; a COLLADA file's ``<unit meter>`` is applied (module doc).
    """

    def __init__(self):
        self.cache = {}

    def read(self, path):
        """Return ``(vertices, faces, watertight, consistent)`` of a file; ValueError if bad."""
        key = str(path)
        if key not in self.cache:
            try:
                self.cache[key] = _closed(*_merged(*self._load(path)))
            except ValueError as err:
                self.cache[key] = err
        out = self.cache[key]
        if isinstance(out, ValueError):
            raise out
        return out

    @staticmethod
    def _load(path):
        """Return the file's ``(vertices, faces)`` as read, or raise ValueError."""
        try:
            data = pathlib.Path(path).read_bytes()
        except OSError as err:
            raise ValueError(f'cannot be read ({err.strerror or err})') from None
        if not data.strip():
            raise ValueError('is empty')
        if path.suffix.lower() == '.stl' and len(data) >= 84 and \
                len(data) == 84 + 50 * int(np.frombuffer(data, '<u4', 1, 80)[0]):
            records = np.frombuffer(data, np.dtype([('normal', '<f4', 3), ('v', '<f4', (3, 3)),
                                                    ('attribute', '<u2')]), offset=84)
            vertices = records['v'].reshape(-1, 3).astype(float)
            return vertices, np.arange(len(vertices), dtype=np.int64).reshape(-1, 3)
        import trimesh
        try:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                mesh = trimesh.load(str(path), force='mesh', process=False)
        except Exception as err:  # noqa: B902 - trimesh and its readers raise many types
            detail = ' '.join(str(err).split())[:160] or type(err).__name__
            raise ValueError(f'cannot be read ({detail})') from None
        if isinstance(mesh, trimesh.Scene) or not hasattr(mesh, 'faces'):
            raise ValueError('holds no triangles')
        vertices = np.asarray(mesh.vertices, dtype=float).reshape(-1, 3)
        units = str(mesh.metadata.get('units', '')) if path.suffix.lower() == '.dae' else ''
        if units.endswith('* meters'):
            vertices = vertices * float(units.split('*')[0])
        return vertices, np.asarray(mesh.faces, dtype=np.int64).reshape(-1, 3)


_MERGE = 1e-8   # m: vertices this close are one (trimesh.tol.merge)


def _merged(vertices, faces):
    """Return vertices merged on a grid of :data:`_MERGE` and the faces without degenerate ones."""
    if len(faces) == 0:
        raise ValueError('holds no triangles')
    if not np.all(np.isfinite(vertices)):
        raise ValueError('has vertices that are not finite')
    if faces.min() < 0 or faces.max() >= len(vertices):
        raise ValueError('has faces that name missing vertices')
    first, inverse = _unique_rows(np.round(vertices / _MERGE).astype(np.int64))
    faces = inverse[faces]
    faces = faces[(faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2])
                  & (faces[:, 2] != faces[:, 0])]
    if len(faces) == 0:
        raise ValueError('holds no triangles of any area')
    return vertices[first], faces


def _closed(vertices, faces):
    """
    Return ``(vertices, faces, watertight, consistent)``.

    Watertight: every edge is shared by exactly two triangles; consistent: besides, the two
    run it in opposite directions (the faces are wound alike).
    """
    directed = np.stack([faces, np.roll(faces, -1, axis=1)], axis=2).reshape(-1, 2)
    key = directed[:, 0] * len(vertices) + directed[:, 1]
    low, high = np.min(directed, axis=1), np.max(directed, axis=1)
    _, counts = np.unique(low * len(vertices) + high, return_counts=True)
    watertight = bool(np.all(counts == 2))
    consistent = watertight and len(np.unique(key)) == len(key)
    return vertices, faces, watertight, consistent


def _unique_rows(keys):
    """Return ``(first, inverse)``: the first row of each distinct row, and each row's group."""
    order = np.lexsort(keys.T[::-1])
    ranked = keys[order]
    new = np.r_[True, np.any(ranked[1:] != ranked[:-1], axis=1)]
    inverse = np.empty(len(keys), dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


def _numbers(element, attribute, count, default=None):
    """Return ``count`` floats of an attribute (default if absent); raise ValueError if bad."""
    text = None if element is None else element.get(attribute)
    if text is None:
        if default is None:
            raise ValueError(f'<{element.tag}> has no {attribute}')
        return np.array(default, dtype=float)
    try:
        values = np.array([float(x) for x in text.split()])
    except ValueError:
        values = np.zeros(0)
    if values.size != count or not np.all(np.isfinite(values)):
        raise ValueError(f'<{element.tag} {attribute}="{text}">: {count} finite numbers expected')
    return values


def _shape(element, link, resolver, reader, notes):
    """Return the :class:`Shape` of one ``<collision>``, or None (noted) if unusable."""
    geometry = element.find('geometry')
    kinds = [child for child in (geometry if geometry is not None else [])
             if isinstance(child.tag, str)]
    label = element.get('name')
    what = f"link {link!r}: <collision{' name=' + repr(label) if label else ''}>"
    if not kinds:
        notes.append(f'{what} has no geometry: left out')
        return None
    shape = kinds[0]
    try:
        origin = element.find('origin')
        rotation = rpy_to_matrix(_numbers(origin, 'rpy', 3, (0.0, 0.0, 0.0)))
        translation = _numbers(origin, 'xyz', 3, (0.0, 0.0, 0.0))
        if shape.tag == 'box':
            size = _numbers(shape, 'size', 3)
        elif shape.tag in ('cylinder', 'capsule'):
            size = np.r_[_numbers(shape, 'radius', 1), _numbers(shape, 'length', 1)]
        elif shape.tag == 'sphere':
            size = _numbers(shape, 'radius', 1)
        elif shape.tag == 'mesh':
            size = _numbers(shape, 'scale', 3, (1.0, 1.0, 1.0))
        else:
            raise ValueError(f'unknown geometry <{shape.tag}>')
    except ValueError as err:
        notes.append(f'{what}: {err}: left out')
        return None
    if shape.tag != 'mesh':
        ball = shape.tag == 'capsule' and size[0] > 0.0 and size[1] == 0.0   # length 0
        usable = bool(np.all(size > 0.0)) or ball
        if not usable:
            notes.append(f'{what}: <{shape.tag}> of size {tuple(size.tolist())} has no surface: '
                         'left out')
            return None
        vertices, faces = _tessellate(shape.tag, size)
        return Shape(shape.tag, rotation, translation, tuple(size), '',
                     vertices @ rotation.T + translation, faces, True, _area(shape.tag, size))
    filename = shape.get('filename', '')
    path, reason = resolver.resolve(filename)
    if path is None:
        notes.append(f'{what}: mesh {filename!r}: {reason}: left out')
        return None
    if not np.all(size != 0.0):
        notes.append(f'{what}: mesh {str(path)!r} has a zero scale {tuple(size.tolist())}: '
                     'left out')
        return None
    try:
        vertices, faces, watertight, consistent = reader.read(path)
    except ValueError as err:
        notes.append(f'{what}: mesh {str(path)!r} {err}: left out')
        return None
    vertices = (vertices * size) @ rotation.T + translation
    faces = _outward(vertices, faces, watertight, consistent, np.prod(size) < 0.0)
    area = float(np.sum(_triangle_areas(vertices, faces)))
    if not area > 0.0:
        notes.append(f'{what}: mesh {str(path)!r} has no area: left out')
        return None
    return Shape('mesh', rotation, translation, tuple(size), str(path), vertices, faces,
                 watertight, area)


def _triangle_areas(vertices, faces):
    """Return the area of each triangle."""
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    return 0.5 * np.linalg.norm(np.cross(b - a, c - a), axis=1)


def _outward(vertices, faces, watertight, consistent, mirrored):
    """Return the faces wound counter-clockwise seen from outside (module doc)."""
    if not watertight:
        return faces[:, ::-1].copy() if mirrored else faces
    if not consistent:
        faces = _consistent_winding(faces)
    a, b, c = (vertices[faces[:, k]] for k in range(3))
    volume = np.sum(a * np.cross(b, c)) / 6.0   # divergence theorem: > 0 if outward
    return faces[:, ::-1].copy() if volume < 0.0 else faces


def _consistent_winding(faces):
    """
    Return the faces flipped where needed so that every shared edge runs both ways.

    Depth-first over the faces joined by their shared edges: a neighbour that runs the
    shared edge the same way as the face it is reached from is flipped relative to it.
    """
    F = len(faces)
    directed = np.stack([faces, np.roll(faces, -1, axis=1)], axis=2).reshape(-1, 2)
    owner = np.repeat(np.arange(F), 3)
    undirected = np.sort(directed, axis=1)
    order = np.lexsort((undirected[:, 1], undirected[:, 0]))
    u, o, d = undirected[order], owner[order], directed[order]
    pair = np.flatnonzero(np.all(u[1:] == u[:-1], axis=1))   # consecutive equal edges
    same = np.all(d[pair] == d[pair + 1], axis=1)             # same direction: flip one
    source = np.r_[o[pair], o[pair + 1]]
    target = np.r_[o[pair + 1], o[pair]]
    same = np.r_[same, same]
    order = np.argsort(source, kind='stable')
    target, same = target[order].tolist(), same[order].tolist()
    begin = np.searchsorted(source[order], np.arange(F + 1)).tolist()
    flip, seen = [False] * F, [False] * F
    for root in range(F):
        if seen[root]:
            continue
        seen[root], stack = True, [root]
        while stack:
            f = stack.pop()
            for k in range(begin[f], begin[f + 1]):
                g = target[k]
                if not seen[g]:
                    seen[g] = True
                    flip[g] = flip[f] ^ same[k]
                    stack.append(g)
    flip = np.array(flip, dtype=bool)
    out = faces.copy()
    out[flip] = out[flip][:, ::-1]
    return out


def _area(kind, size):
    """Return the closed-form area of a primitive."""
    if kind == 'box':
        x, y, z = size
        return 2.0 * (x * y + y * z + z * x)
    if kind == 'sphere':
        return 4.0 * np.pi * size[0] ** 2
    r, length = size
    if kind == 'cylinder':
        return 2.0 * np.pi * r * length + 2.0 * np.pi * r ** 2
    return 2.0 * np.pi * r * length + 4.0 * np.pi * r ** 2   # capsule


def _tessellate(kind, size, sections=32):
    """Return (vertices, faces) of a primitive in its own frame, wound outward (for display)."""
    if kind == 'box':
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)],
                           dtype=float) * 0.5 * np.asarray(size)
        faces = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                          [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
        return corners, faces
    half = sections // 4
    arc = np.linspace(-0.5 * np.pi, 0.0, half + 1)
    r = size[0]
    if kind == 'sphere' or size[1] == 0.0:   # a capsule of length 0 is a ball
        arc = np.linspace(-0.5 * np.pi, 0.5 * np.pi, 2 * half + 1)
        radius, height = r * np.cos(arc), r * np.sin(arc)
    elif kind == 'cylinder':
        radius, height = np.array([0.0, r, r, 0.0]), 0.5 * size[1] * np.array([-1, -1, 1, 1.0])
    else:   # capsule: two hemispheres joined by the cylinder's side
        radius = np.r_[r * np.cos(arc), r * np.cos(arc[::-1])]
        height = np.r_[r * np.sin(arc) - 0.5 * size[1], -r * np.sin(arc[::-1]) + 0.5 * size[1]]
    return _lathe(radius, height, sections)


def _lathe(radius, height, sections):
    """Return the surface of revolution about z of a profile from its bottom pole to its top."""
    phi = np.linspace(0.0, 2.0 * np.pi, sections, endpoint=False)
    rings = np.arange(1, len(radius) - 1)
    ring = np.c_[np.outer(radius[rings], np.cos(phi)).ravel(),
                 np.outer(radius[rings], np.sin(phi)).ravel(), np.repeat(height[rings], sections)]
    vertices = np.vstack([[0.0, 0.0, height[0]], ring, [0.0, 0.0, height[-1]]])
    top = len(vertices) - 1
    j = np.arange(sections)
    k = (j + 1) % sections
    faces = [np.c_[np.zeros(sections, dtype=np.int64), 1 + k, 1 + j]]       # bottom fan
    for i in range(len(rings) - 1):
        lower, upper = 1 + i * sections, 1 + (i + 1) * sections
        faces.append(np.c_[lower + j, lower + k, upper + k])
        faces.append(np.c_[lower + j, upper + k, upper + j])
    last = 1 + (len(rings) - 1) * sections
    faces.append(np.c_[np.full(sections, top), last + j, last + k])         # top fan
    return vertices, np.vstack(faces).astype(np.int64)


def _unit_vectors(rng, n):
    """Return ``n`` directions uniform on the unit sphere (normalised Gaussian triples)."""
    v = rng.standard_normal((n, 3))
    norm = np.linalg.norm(v, axis=1, keepdims=True)
    v[norm[:, 0] < 1e-12] = (0.0, 0.0, 1.0)
    return v / np.maximum(norm, 1e-12)


def _sample_primitive(kind, size, n, rng):
    """Return ``(points, normals)``: ``n`` area-uniform samples of a primitive, its frame."""
    if kind == 'sphere':
        normals = _unit_vectors(rng, n)
        return size[0] * normals, normals
    if kind == 'box':
        half = 0.5 * np.asarray(size)
        face_area = np.array([half[1] * half[2], half[2] * half[0], half[0] * half[1]])
        axis = rng.choice(3, size=n, p=face_area / face_area.sum())
        sign = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        points = rng.uniform(-1.0, 1.0, (n, 3)) * half
        normals = np.zeros((n, 3))
        rows = np.arange(n)
        points[rows, axis] = sign * half[axis]
        normals[rows, axis] = sign
        return points, normals
    r, length = size
    side = 2.0 * np.pi * r * length
    ends = 2.0 * np.pi * r * r if kind == 'cylinder' else 4.0 * np.pi * r * r
    on_side = rng.random(n) < side / (side + ends)
    points, normals = np.empty((n, 3)), np.empty((n, 3))
    k = int(on_side.sum())
    theta = rng.uniform(0.0, 2.0 * np.pi, k)
    normals[on_side] = np.c_[np.cos(theta), np.sin(theta), np.zeros(k)]
    points[on_side] = r * normals[on_side]
    points[on_side, 2] = rng.uniform(-0.5 * length, 0.5 * length, k)
    m = n - k
    if kind == 'cylinder':   # the two disks: radius r sqrt(u) is area-uniform
        top = rng.random(m) < 0.5
        rho, theta = r * np.sqrt(rng.random(m)), rng.uniform(0.0, 2.0 * np.pi, m)
        z = np.where(top, 0.5 * length, -0.5 * length)
        points[~on_side] = np.c_[rho * np.cos(theta), rho * np.sin(theta), z]
        normals[~on_side] = np.c_[np.zeros(m), np.zeros(m), np.where(top, 1.0, -1.0)]
    else:                    # the two hemispheres: a sphere split at its equator
        d = _unit_vectors(rng, m)
        centre = np.where(d[:, 2] >= 0.0, 0.5 * length, -0.5 * length)
        points[~on_side] = r * d + np.c_[np.zeros(m), np.zeros(m), centre]
        normals[~on_side] = d
    return points, normals


def _sample_mesh(vertices, faces, n, rng):
    """Return ``(points, normals)``: ``n`` area-uniform samples on the triangles (Osada Eq. 1)."""
    areas = _triangle_areas(vertices, faces)
    cumulative = np.cumsum(areas)
    chosen = np.searchsorted(cumulative, rng.random(n) * cumulative[-1], side='right')
    chosen = np.minimum(chosen, len(faces) - 1)
    a, b, c = (vertices[faces[chosen, k]] for k in range(3))
    su, v = np.sqrt(rng.random((n, 1))), rng.random((n, 1))
    points = (1.0 - su) * a + su * (1.0 - v) * b + su * v * c
    normals = np.cross(b - a, c - a)
    normals /= np.linalg.norm(normals, axis=1, keepdims=True)
    return points, normals


def _covered(shape, points, normals, first, mesh_cache):
    """
    Return which candidates of another shape lie in the solid of ``shape`` (link frame).

    Strictly inside always; on its surface (within :data:`_INSIDE_TOLERANCE`) where the two
    surfaces face each other (a wall between two solids, inside the union) or where ``shape``
    comes ``first`` in the file (coincident faces are counted once). Meshes: strictly inside,
    when watertight.
    """
    if shape.kind != 'mesh':
        local = (points - shape.translation) @ shape.rotation
        distance, outward = _primitive_distance(shape.kind, shape.size, local)
        on = np.abs(distance) <= _INSIDE_TOLERANCE
        if not first:
            on &= np.sum(outward * (normals @ shape.rotation), axis=1) < 0.0
        return (distance < -_INSIDE_TOLERANCE) | on
    return _inside_mesh(shape, points, mesh_cache)


def _primitive_distance(kind, size, q):
    """Return the signed distance (< 0 inside) and the outward normal of the nearest face."""
    if kind == 'box':
        excess = np.abs(q) - 0.5 * np.asarray(size)
        face = np.argmax(excess, axis=1)
        rows = np.arange(len(q))
        distance = np.linalg.norm(np.maximum(excess, 0.0), axis=1) + \
            np.minimum(excess[rows, face], 0.0)
        outward = np.zeros_like(q)
        outward[rows, face] = np.where(q[rows, face] < 0.0, -1.0, 1.0)
        return distance, outward
    if kind in ('sphere', 'capsule'):
        half = 0.0 if kind == 'sphere' else 0.5 * size[1]
        axis = np.zeros_like(q)
        axis[:, 2] = np.clip(q[:, 2], -half, half)
        radial = q - axis
        rho = np.linalg.norm(radial, axis=1)
        return rho - size[0], radial / np.maximum(rho, 1e-300)[:, None]
    r, length = size
    rho = np.hypot(q[:, 0], q[:, 1])
    excess = np.c_[rho - r, np.abs(q[:, 2]) - 0.5 * length]
    distance = np.linalg.norm(np.maximum(excess, 0.0), axis=1) + \
        np.minimum(excess.max(axis=1), 0.0)
    side = excess[:, 0] >= excess[:, 1]
    outward = np.where(side[:, None], np.c_[q[:, :2] / np.maximum(rho, 1e-300)[:, None],
                                            np.zeros(len(q))],
                       np.c_[np.zeros((len(q), 2)), np.where(q[:, 2] < 0.0, -1.0, 1.0)])
    return distance, outward


def _inside_mesh(shape, points, mesh_cache):
    """Return which points lie strictly inside a watertight mesh (none for an open one)."""
    if not shape.watertight:
        return np.zeros(len(points), dtype=bool)
    lo, hi = shape.vertices.min(axis=0), shape.vertices.max(axis=0)
    candidates = np.all((points > lo) & (points < hi), axis=1)
    out = np.zeros(len(points), dtype=bool)
    if np.any(candidates):
        key = id(shape)
        if key not in mesh_cache:
            mesh_cache[key] = _RayGrid(shape.vertices, shape.faces)
        out[candidates] = mesh_cache[key].contains(points[candidates])
    return out


class _RayGrid:
    """
    Inside test of a closed mesh by ray parity: a point is inside if a ray crosses it oddly.

    The rays run along the z axis of a fixed oblique frame (:data:`_RAY_FRAME`: no ray of a
    sampled point meets an edge or a vertex but with probability zero); the triangles are
    binned on a grid of that frame's x-y plane, so each point meets only the triangles of
    its cell (Jordan curve theorem; the crossings counted with the triangle's barycentric
    coordinates of the point's projection).
    """

    def __init__(self, vertices, faces):
        tri = (vertices @ _RAY_FRAME.T)[faces]                     # (F, 3, 3)
        lo, hi = tri[:, :, :2].min(axis=1), tri[:, :, :2].max(axis=1)
        self.origin = lo.min(axis=0)
        extent = np.maximum(hi.max(axis=0) - self.origin, 1e-12)
        cell = max(float(np.median(np.max(hi - lo, axis=1))), float(extent.max()) / 512.0,
                   1e-12)
        while True:                       # coarser cells until each triangle has few cells
            first = np.floor((lo - self.origin) / cell).astype(np.int64)
            last = np.floor((hi - self.origin) / cell).astype(np.int64)
            counts = np.prod(last - first + 1, axis=1)
            if counts.sum() <= 16 * len(faces) + 1024:
                break
            cell *= 1.5
        self.cell, self.shape = cell, np.floor(extent / cell).astype(np.int64) + 1
        triangle = np.repeat(np.arange(len(faces)), counts)
        offset = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
        width = (last - first + 1)[triangle, 1]
        ix = first[triangle, 0] + offset // width
        iy = first[triangle, 1] + offset % width
        keys = ix * self.shape[1] + iy
        order = np.argsort(keys, kind='stable')
        self.keys, self.triangle = keys[order], triangle[order]
        self.tri = tri

    def contains(self, points, pairs=400000):
        """Return which points lie inside the closed mesh (odd number of crossings above)."""
        p = points @ _RAY_FRAME.T
        cell = np.floor((p[:, :2] - self.origin) / self.cell).astype(np.int64)
        valid = np.all((cell >= 0) & (cell < self.shape), axis=1)
        keys = cell[:, 0] * self.shape[1] + cell[:, 1]
        begin = np.searchsorted(self.keys, keys, side='left')
        counts = np.where(valid, np.searchsorted(self.keys, keys, side='right') - begin, 0)
        out = np.zeros(len(points), dtype=bool)
        total = np.cumsum(counts)
        start = 0
        while start < len(points):     # chunks of about ``pairs`` point-triangle pairs
            done = total[start - 1] if start else 0
            stop = max(int(np.searchsorted(total, done + pairs, side='right')), start + 1)
            out[start:stop] = self._crossed(p[start:stop], begin[start:stop],
                                            counts[start:stop])
            start = stop
        return out

    def _crossed(self, p, begin, counts):
        """Return the parity of the crossings above each point (rotated points, their cells)."""
        point = np.repeat(np.arange(len(p)), counts)
        if len(point) == 0:
            return np.zeros(len(p), dtype=bool)
        index = np.arange(len(point)) - np.repeat(np.cumsum(counts) - counts, counts)
        t = self.tri[self.triangle[np.repeat(begin, counts) + index]]   # (pairs, 3, 3)
        q = p[point]
        a, b, c = t[:, 0], t[:, 1], t[:, 2]
        w0 = _edge(b, c, q)
        w1 = _edge(c, a, q)
        w2 = _edge(a, b, q)
        total = w0 + w1 + w2
        hit = (((w0 > 0) & (w1 > 0) & (w2 > 0)) | ((w0 < 0) & (w1 < 0) & (w2 < 0))) \
            & (total != 0.0)
        with np.errstate(invalid='ignore', divide='ignore'):
            z = (w0 * a[:, 2] + w1 * b[:, 2] + w2 * c[:, 2]) / total
        hit &= z > q[:, 2]
        return np.bincount(point[hit], minlength=len(p)) % 2 == 1


def _edge(a, b, q):
    """Return the 2-D edge function (twice the signed area of a, b, q in the x-y plane)."""
    return (b[:, 0] - a[:, 0]) * (q[:, 1] - a[:, 1]) - (b[:, 1] - a[:, 1]) * (q[:, 0] - a[:, 0])


_RAY_FRAME = rpy_to_matrix((0.3127, 0.4731, 0.1789))
"""An oblique frame: rays along its z axis meet axis-aligned edges only by chance."""


def _thin(features, radius):
    """
    Return the indices kept by Poisson-disk thinning of ``features`` in their given order.

    A point is kept unless an earlier kept point lies within ``radius``: the lexicographically
    first maximal independent set of the graph joining points closer than ``radius``, found in
    rounds (every point without a smaller living neighbour is kept, its neighbours die).
    """
    from scipy.spatial import cKDTree
    n = len(features)
    pairs = cKDTree(features).query_pairs(radius, output_type='ndarray')
    alive, kept = np.ones(n, dtype=bool), np.zeros(n, dtype=bool)
    while len(pairs):
        has_smaller = np.zeros(n, dtype=bool)
        has_smaller[pairs[:, 1]] = True          # pairs are (i, j) with i < j
        new = alive & ~has_smaller
        kept |= new
        dead = np.zeros(n, dtype=bool)
        dead[pairs[new[pairs[:, 0]], 1]] = True
        dead[pairs[new[pairs[:, 1]], 0]] = True
        alive &= ~(new | dead)
        pairs = pairs[alive[pairs[:, 0]] & alive[pairs[:, 1]]]
    kept |= alive
    return np.flatnonzero(kept)


def _link_surface(link, shapes, spacing, coarse_spacing, max_points, notes):
    """Sample one link's shapes into a :class:`LinkSurface` (module doc, steps 1-4)."""
    from scipy.spatial import cKDTree
    rng = np.random.default_rng([SEED, zlib.crc32(link.encode('utf-8'))])
    total = sum(shape.area for shape in shapes)
    used = spacing
    if DENSITY * total / spacing ** 2 > max_points:
        used = float(np.sqrt(DENSITY * total / max_points))
        notes.append(f'link {link!r}: {total:.4g} m^2 of surface would take about '
                     f'{DENSITY * total / spacing ** 2:.0f} points at {spacing * 1e3:g} mm: '
                     f'sampled at {used * 1e3:.3g} mm instead (max_points {max_points})')
    pieces, outer_area, mesh_cache = [], 0.0, {}
    for index, shape in enumerate(shapes):
        n = max(int(np.ceil(OVERSAMPLE * shape.area / used ** 2)), 1)
        if shape.kind == 'mesh':
            points, normals = _sample_mesh(shape.vertices, shape.faces, n, rng)
        else:
            local, local_normals = _sample_primitive(shape.kind, shape.size, n, rng)
            points = local @ shape.rotation.T + shape.translation
            normals = local_normals @ shape.rotation.T
        keep = np.ones(n, dtype=bool)
        for other_index, other in enumerate(shapes):
            if other_index != index:
                keep &= ~_covered(other, points, normals, other_index < index, mesh_cache)
        outer_area += shape.area * keep.mean()
        pieces.append((points[keep], normals[keep]))
    points = np.concatenate([p for p, _ in pieces])
    normals = np.concatenate([n for _, n in pieces])
    if len(points) == 0:
        notes.append(f'link {link!r}: every collision shape lies inside another: no surface')
        return None
    order = rng.permutation(len(points))
    points, normals = points[order], normals[order]
    kept = _thin(points, THIN * used)
    points, normals = points[kept], normals[kept]
    radius = THIN * coarse_spacing
    features = np.hstack([points, radius * normals])
    centres = _thin(features, radius)
    _, cluster = cKDTree(features[centres]).query(features)
    return LinkSurface(link, points, normals, cluster, points[centres], normals[centres],
                       float(outer_area), tuple(shapes), used)
