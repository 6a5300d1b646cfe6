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
The sampled collision surfaces of :func:`denoc_ros.contact.geometry.load_collision_geometry`.

Oracles, none of them the module's own code:

- primitives: the closed-form surface, normal and area of a box, sphere, cylinder and capsule,
  in the shape frame computed here with SciPy's rotation (URDF rpy = extrinsic x-y-z Euler
  angles): every point on the analytic surface to ``SURFACE_TOL = 1e-12`` m, every normal equal
  to the analytic outward normal to 1e-12, the area exact (one shape) or the closed-form area
  of the union to ``AREA_REL = 2 %`` (several shapes: a Monte-Carlo fraction);
- meshes: the distance of each point to the mesh computed by coal (Pinocchio's collision
  library, which reads the file itself through assimp) below ``MESH_TOL = 1e-9`` m; inside and
  outside by the generalized winding number (Jacobson et al., ACM TOG 32(4), 2013; solid
  angles by Van Oosterom & Strackee, IEEE TBME 30(2), 1983) computed here in NumPy: ``p + 1 mm
  n`` outside and ``p - 1 mm n`` inside for watertight meshes; the area from trimesh's own
  ``Trimesh.area``; area-uniformity against trimesh's ``sample_surface``. (trimesh's
  ``contains`` and ``nearest.on_surface`` need ``rtree``, which is not a dependency.)
- spacing: nearest-neighbour distances measured with SciPy's cKDTree; coverage: the largest
  distance from independent uniform samples of the analytic surface to the nearest point.
"""

import pathlib
import pickle
import shutil
import time
import warnings

from conftest import example_robot, require_module
from denoc_ros.contact.geometry import (_RayGrid, _sample_mesh, _sample_primitive,
                                        CollisionGeometry, DENSITY, load_collision_geometry,
                                        Shape)
from denoc_ros.errors import InputError, URDFError, URDFWarning
from denoc_ros.resources import example_robot_data_dir
import numpy as np
import pytest
from scipy.spatial import cKDTree
from scipy.spatial.transform import Rotation
import trimesh

SURFACE_TOL = 1e-12   # m: points and normals of primitives on the analytic surface
MESH_TOL = 1e-9       # m: points on a mesh (coal's distance)
AREA_REL = 0.02       # relative: the outer area of a union of primitives
SPACING = 0.005
COARSE = 0.03
PANDA = 'panda_description/urdf/panda.urdf'
PANDA_MESHES = 'panda_description/meshes'


def _urdf(links):
    """Return a URDF string of the given ``<link>`` bodies keyed by name (no joints needed)."""
    body = ''.join(f'<link name="{name}">{inner}</link>' for name, inner in links.items())
    return f'<robot name="test">{body}</robot>'


def _collision(geometry, xyz=(0, 0, 0), rpy=(0, 0, 0)):
    """Return a ``<collision>`` element text."""
    return (f'<collision><origin xyz="{" ".join(map(str, xyz))}" '
            f'rpy="{" ".join(map(str, rpy))}"/><geometry>{geometry}</geometry></collision>')


def _load(source, **kwargs):
    """Load with the test's spacing, failing on no warning (callers that expect some catch)."""
    with warnings.catch_warnings():
        warnings.simplefilter('error', URDFWarning)
        return load_collision_geometry(source, **kwargs)


def _shape_frame(points, normals, rpy, xyz):
    """Return points and normals in the shape frame (SciPy's rotation: an independent one)."""
    R = Rotation.from_euler('xyz', rpy).as_matrix()
    return (points - np.asarray(xyz)) @ R, normals @ R


def _analytic(kind, size, q):
    """Return ``(distance to the surface, outward normal)`` of shape-frame points, closed form."""
    if kind == 'sphere':
        r = np.linalg.norm(q, axis=1)
        return np.abs(r - size[0]), q / r[:, None]
    if kind == 'box':
        h = 0.5 * np.asarray(size)
        face = np.argmax(np.abs(q) / h, axis=1)
        rows = np.arange(len(q))
        n = np.zeros_like(q)
        n[rows, face] = np.sign(q[rows, face])
        outside = np.max(np.abs(q) - h, axis=1)
        return np.maximum(np.abs(np.abs(q[rows, face]) - h[face]), np.maximum(outside, 0)), n
    r, length = size
    if kind == 'capsule':
        z = np.clip(q[:, 2], -0.5 * length, 0.5 * length)
        d = q - np.c_[np.zeros_like(z), np.zeros_like(z), z]
        rho = np.linalg.norm(d, axis=1)
        return np.abs(rho - r), d / rho[:, None]
    rho = np.hypot(q[:, 0], q[:, 1])
    on_side = np.abs(rho - r) < np.abs(np.abs(q[:, 2]) - 0.5 * length)
    n = np.where(on_side[:, None], np.c_[q[:, :2] / rho[:, None], np.zeros(len(q))],
                 np.c_[np.zeros((len(q), 2)), np.sign(q[:, 2])])
    distance = np.where(on_side, np.abs(rho - r) + np.maximum(np.abs(q[:, 2]) - 0.5 * length, 0),
                        np.abs(np.abs(q[:, 2]) - 0.5 * length) + np.maximum(rho - r, 0))
    return distance, n


def _inside(kind, size, q, margin=1e-12):
    """Return which shape-frame points lie strictly inside the primitive (closed form)."""
    distance, normal = _analytic(kind, size, q)
    if kind == 'sphere':
        return np.linalg.norm(q, axis=1) < size[0] - margin
    if kind == 'box':
        return np.all(np.abs(q) < 0.5 * np.asarray(size) - margin, axis=1)
    r, length = size
    if kind == 'capsule':
        z = np.clip(q[:, 2], -0.5 * length, 0.5 * length)
        return np.linalg.norm(q - np.c_[0 * z, 0 * z, z], axis=1) < r - margin
    return (np.hypot(q[:, 0], q[:, 1]) < r - margin) & (np.abs(q[:, 2]) < 0.5 * length - margin)


PRIMITIVES = {   # kind: (geometry element, size tuple, closed-form area, origin xyz, rpy)
    'box': ('<box size="0.1 0.06 0.2"/>', (0.1, 0.06, 0.2),
            2 * (0.1 * 0.06 + 0.06 * 0.2 + 0.2 * 0.1), (0.1, -0.2, 0.3), (0.3, -0.5, 1.1)),
    'sphere': ('<sphere radius="0.07"/>', (0.07,), 4 * np.pi * 0.07 ** 2,
               (-0.05, 0.02, 0.0), (0.0, 0.0, 0.0)),
    'cylinder': ('<cylinder radius="0.04" length="0.15"/>', (0.04, 0.15),
                 2 * np.pi * 0.04 * 0.15 + 2 * np.pi * 0.04 ** 2, (0.0, 0.1, -0.1),
                 (1.2, 0.4, -0.7)),
    'capsule': ('<capsule radius="0.03" length="0.12"/>', (0.03, 0.12),
                2 * np.pi * 0.03 * 0.12 + 4 * np.pi * 0.03 ** 2, (0.02, 0.0, 0.05),
                (-0.4, 0.9, 0.2)),
}


@pytest.fixture(scope='module')
def primitives():
    """Return the geometry of one link per primitive, each with a rotated, offset origin."""
    links = {kind: _collision(element, xyz, rpy)
             for kind, (element, _, _, xyz, rpy) in PRIMITIVES.items()}
    return _load(_urdf(links))


@pytest.mark.parametrize('kind', sorted(PRIMITIVES))
def test_primitive_points_normals_area_closed_form(primitives, kind):
    """Every point on the analytic surface, its normal the outward one, the area exact."""
    _, size, area, xyz, rpy = PRIMITIVES[kind]
    surface = primitives.surfaces[kind]
    q, n = _shape_frame(surface.points, surface.normals, rpy, xyz)
    distance, normal = _analytic(kind, size, q)
    assert np.max(distance) < SURFACE_TOL
    assert np.max(np.abs(n - normal)) < SURFACE_TOL
    assert np.allclose(np.linalg.norm(surface.normals, axis=1), 1.0, atol=1e-14)
    assert surface.area == pytest.approx(area, rel=1e-12)
    assert surface.points.dtype == np.float64 and surface.cluster.dtype == np.int64
    shape, = surface.shapes
    assert (shape.kind, shape.size, shape.filename) == (kind, pytest.approx(size), '')
    assert np.allclose(shape.rotation, Rotation.from_euler('xyz', rpy).as_matrix(), atol=1e-15)
    assert np.allclose(shape.translation, xyz, atol=0)
    # the tessellation: in the link frame, on the surface, wound outward (positive volume)
    qv, _ = _shape_frame(shape.vertices, np.zeros_like(shape.vertices), rpy, xyz)
    assert np.max(_analytic(kind, size, qv)[0]) < SURFACE_TOL
    mesh = trimesh.Trimesh(shape.vertices, shape.faces)
    assert mesh.is_watertight and mesh.volume > 0


@pytest.mark.parametrize('kind', sorted(PRIMITIVES))
def test_primitive_sampling_uniform_spaced_covering(primitives, kind):
    """Density ~DENSITY/spacing^2, area-uniform, >= 0.9 spacing apart, no hole > 2 spacing."""
    _, size, area, xyz, rpy = PRIMITIVES[kind]
    surface = primitives.surfaces[kind]
    P = len(surface.points)
    assert P == pytest.approx(DENSITY * area / SPACING ** 2, rel=0.1)
    d, _ = cKDTree(surface.points).query(surface.points, 2)
    assert d[:, 1].min() > 0.9 * SPACING
    assert 0.9 * SPACING < d[:, 1].mean() < 1.15 * SPACING
    q, _ = _shape_frame(surface.points, surface.normals, rpy, xyz)
    # area-uniform: the share of points on a part equals its share of the area (binomial: 4
    # standard deviations)
    if kind == 'box':
        h = 0.5 * np.asarray(size)
        on = np.argmax(np.abs(q) / h, axis=1)
        part, share = on == 2, 2 * size[0] * size[1] / area
    elif kind == 'sphere':   # Archimedes: the band |z| < r/2 holds half the area
        part, share = np.abs(q[:, 2]) < 0.5 * size[0], 0.5
    elif kind == 'cylinder':
        part = np.abs(np.abs(q[:, 2]) - 0.5 * size[1]) < 1e-12
        share = 2 * np.pi * size[0] ** 2 / area
    else:
        part, share = np.abs(q[:, 2]) > 0.5 * size[1], 4 * np.pi * size[0] ** 2 / area
    assert abs(part.mean() - share) < 4 * np.sqrt(share * (1 - share) / P) + 0.01
    # coverage: independent uniform samples of the analytic surface are near a point
    probe = _probe(kind, size, 4000, np.random.default_rng(7))
    R = Rotation.from_euler('xyz', rpy).as_matrix()
    hole, _ = cKDTree(surface.points).query(probe @ R.T + xyz)
    assert hole.max() < 2.0 * SPACING


def _share(hits, share):
    """Check a sampled fraction against its closed-form value (binomial, 5 sigma)."""
    n = len(hits)
    assert abs(hits.mean() - share) < 5 * np.sqrt(share * (1 - share) / n), (hits.mean(), share)


def test_candidates_are_area_uniform():
    """Before thinning (which hides a biased sampler): shares of area = shares of candidates."""
    rng = np.random.default_rng(11)
    n = 100000
    # a triangle: the half-size copy at vertex a holds 1/4 of its area, the one at c too
    vertices = np.array([[0.0, 0, 0], [0.3, 0, 0], [0.1, 0.2, 0.05]])
    p, normals = _sample_mesh(vertices, np.array([[0, 1, 2]]), n, rng)
    coordinates = np.linalg.lstsq((vertices[1:] - vertices[0]).T, (p - vertices[0]).T,
                                  rcond=None)[0].T    # p = a + s (b - a) + t (c - a)
    _share(coordinates.sum(axis=1) < 0.5, 0.25)
    _share(coordinates[:, 1] > 0.5, 0.25)
    assert np.all(coordinates >= -1e-12) and np.all(coordinates.sum(axis=1) <= 1 + 1e-12)
    # two triangles of areas 1 : 3 (a square's diagonal split off-centre)
    square = np.array([[0.0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0.5, 0, 0]])
    p, _ = _sample_mesh(square, np.array([[0, 4, 3], [4, 1, 2], [4, 2, 3]]), n, rng)
    _share(p[:, 1] < 1 - 2 * p[:, 0], 0.25)
    # sphere: uniform z (Archimedes); disk caps: radius below r/2 holds 1/4; capsule ends
    p, _ = _sample_primitive('sphere', (1.0,), n, rng)
    _share(p[:, 2] > 0.6, 0.2)
    p, normals = _sample_primitive('cylinder', (1.0, 0.5), n, rng)
    cap = np.abs(normals[:, 2]) > 0.5
    _share(cap, 2 * np.pi / (2 * np.pi + np.pi))
    _share(np.hypot(p[cap, 0], p[cap, 1]) < 0.5, 0.25)
    _share(p[~cap, 2] > 0.15, 0.2)
    p, normals = _sample_primitive('capsule', (1.0, 0.5), n, rng)
    _share(np.abs(p[:, 2]) > 0.25, 4 * np.pi / (4 * np.pi + np.pi))
    _share(p[:, 2] > 0.25 + 0.6, 0.2 * 4 * np.pi / (4 * np.pi + np.pi))
    p, normals = _sample_primitive('box', (1.0, 2.0, 3.0), n, rng)
    _share(np.abs(normals[:, 2]) > 0.5, 2 * 2.0 / 22.0)
    _share((np.abs(normals[:, 2]) > 0.5) & (p[:, 0] > 0.3), 2 * 2.0 / 22.0 * 0.2)


def _probe(kind, size, n, rng):
    """Return points uniform on a primitive, by rejection from its bounding box's surface."""
    if kind == 'sphere':
        v = rng.standard_normal((n, 3))
        return size[0] * v / np.linalg.norm(v, axis=1, keepdims=True)
    if kind == 'box':
        mesh = trimesh.creation.box(extents=size)
    elif kind == 'cylinder':
        mesh = trimesh.creation.cylinder(radius=size[0], height=size[1], sections=256)
    else:
        mesh = trimesh.creation.capsule(height=size[1], radius=size[0], count=[128, 128])
    points, _ = trimesh.sample.sample_surface(mesh, n, seed=3)
    return np.asarray(points)


def _check_clusters(surface, coarse):
    """Each point within 0.9 coarse of its cluster's representative, normals within 60 deg."""
    C = len(surface.coarse_points)
    assert set(np.unique(surface.cluster)) == set(range(C))
    rep = surface.coarse_points[surface.cluster]
    assert np.max(np.linalg.norm(surface.points - rep, axis=1)) <= 0.9 * coarse + 1e-12
    cosine = np.sum(surface.normals * surface.coarse_normals[surface.cluster], axis=1)
    assert cosine.min() >= 0.5 - 1e-9
    # representatives are fine points with their normals
    d, index = cKDTree(surface.points).query(surface.coarse_points)
    assert d.max() == 0.0
    assert np.array_equal(surface.normals[index], surface.coarse_normals)


def test_clusters_cover_and_are_coarse(primitives):
    """Each fine point in one cluster; representatives about coarse_spacing apart."""
    for kind, surface in primitives.surfaces.items():
        _check_clusters(surface, COARSE)
        # in the space (p, 0.9 coarse n) the representatives are > 0.9 coarse apart, ~coarse
        # on average; in space alone ~coarse (less where the normal turns: a box's edges)
        features = np.hstack([surface.coarse_points, 0.9 * COARSE * surface.coarse_normals])
        d, _ = cKDTree(features).query(features, 2)
        assert np.min(d[:, 1]) > 0.9 * COARSE
        assert np.mean(d[:, 1]) < 1.3 * COARSE, kind
        d, _ = cKDTree(surface.coarse_points).query(surface.coarse_points, 2)
        assert 0.6 * COARSE < np.mean(d[:, 1]) < 1.2 * COARSE, kind


def test_union_of_primitives_keeps_the_outer_surface():
    """Two overlapping boxes are one 0.15 x 0.1 x 0.1 box; a cylinder with balls a capsule."""
    links = {
        'boxes': _collision('<box size="0.1 0.1 0.1"/>')
        + _collision('<box size="0.1 0.1 0.1"/>', xyz=(0.05, 0, 0)),
        'capsule': _collision('<cylinder radius="0.03" length="0.1"/>', rpy=(0.5, 0, 0))
        + _collision('<sphere radius="0.03"/>', xyz=(0, -0.05 * np.sin(0.5), 0.05 * np.cos(0.5)))
        + _collision('<sphere radius="0.03"/>', xyz=(0, 0.05 * np.sin(0.5), -0.05 * np.cos(0.5))),
    }
    geometry = _load(_urdf(links))
    boxes = geometry.surfaces['boxes']
    q = boxes.points - (0.025, 0, 0)
    distance, normal = _analytic('box', (0.15, 0.1, 0.1), q)
    assert np.max(distance) < SURFACE_TOL
    assert np.max(np.abs(boxes.normals - normal)) < SURFACE_TOL
    assert boxes.area == pytest.approx(2 * (0.15 * 0.1 * 2 + 0.1 * 0.1), rel=AREA_REL)
    capsule = geometry.surfaces['capsule']
    q, n = _shape_frame(capsule.points, capsule.normals, (0.5, 0, 0), (0, 0, 0))
    distance, normal = _analytic('capsule', (0.03, 0.1), q)
    assert np.max(distance) < SURFACE_TOL
    assert np.max(np.abs(n - normal)) < SURFACE_TOL
    assert capsule.area == pytest.approx(2 * np.pi * 0.03 * 0.1 + 4 * np.pi * 0.03 ** 2,
                                         rel=AREA_REL)
    assert len(capsule.shapes) == 3
    _check_clusters(capsule, COARSE)


def test_panda_fingers_four_boxes_no_inner_point():
    """e-r-d Panda's finger (four boxes, one tilted): no point strictly inside another box."""
    geometry = _load(example_robot(PANDA))
    surface = geometry.surfaces['panda_leftfinger']
    assert [s.kind for s in surface.shapes] == ['box'] * 4
    on_some = np.zeros(len(surface.points), dtype=bool)
    total = 0.0
    for shape in surface.shapes:
        q = (surface.points - shape.translation) @ shape.rotation
        assert not np.any(_inside('box', shape.size, q))
        on_some |= _analytic('box', shape.size, q)[0] < SURFACE_TOL
        total += 2 * (shape.size[0] * shape.size[1] + shape.size[1] * shape.size[2]
                      + shape.size[2] * shape.size[0])
    assert on_some.all()
    assert surface.area < total   # the boxes overlap


def test_union_with_meshes_drops_inner_points():
    """Two overlapping copies of a watertight STL and a box: no point inside another solid."""
    stl = example_robot_data_dir() / PANDA_MESHES / 'collision' / 'link3.stl'
    text = _urdf({'two': _collision(f'<mesh filename="{stl}"/>')
                  + _collision(f'<mesh filename="{stl}"/>', xyz=(0.03, 0.0, 0.02), rpy=(0, 0, 0.7))
                  + _collision('<box size="0.05 0.05 0.3"/>', xyz=(0.0, 0.0, -0.1))})
    surface = _load(text).surfaces['two']
    meshes = [s for s in surface.shapes if s.kind == 'mesh']
    box = surface.shapes[2]
    inside_box = _inside('box', box.size, (surface.points - box.translation) @ box.rotation)
    assert not inside_box.any()
    pick = np.random.default_rng(9).choice(len(surface.points), 1200, replace=False)
    points, normals = surface.points[pick], surface.normals[pick]
    for mesh in meshes:
        # strictly inside: both sides of the point inside (its own mesh has it outside on one)
        ahead, behind = (_winding(mesh.vertices, mesh.faces, points + e * normals)
                         for e in (1e-6, -1e-6))
        assert not np.any((ahead > 0.5) & (behind > 0.5))
    assert surface.area < sum(s.area for s in surface.shapes) - 0.01
    # the watertight flag agrees with trimesh's on the same positions
    for mesh in meshes:
        assert mesh.watertight == trimesh.Trimesh(mesh.vertices, mesh.faces).is_watertight


def test_ray_parity_inside_test_matches_the_winding_number():
    """The inside test of watertight meshes (ray parity on a grid) = the winding number's."""
    mesh = trimesh.load(example_robot_data_dir() / PANDA_MESHES / 'collision' / 'link5.stl',
                        force='mesh')
    vertices, faces = np.asarray(mesh.vertices), np.asarray(mesh.faces)
    points = np.random.default_rng(8).uniform(vertices.min(0) - 0.01, vertices.max(0) + 0.01,
                                              (3000, 3))
    inside = _RayGrid(vertices, faces).contains(points, pairs=700)   # several chunks
    winding = _winding(vertices, faces, points)
    assert np.all(np.abs(winding - np.round(winding)) < 1e-9)
    assert np.array_equal(inside, winding > 0.5)
    assert 0.1 < inside.mean() < 0.9


def test_xacro_source(tmp_path):
    """A .xacro file is expanded through denoc_ros.description (as load_urdf's callers do)."""
    require_module('xacro')
    path = tmp_path / 'r.urdf.xacro'
    path.write_text('<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                    '<xacro:property name="r" value="0.05"/>'
                    '<link name="ball"><collision><geometry><sphere radius="${r}"/></geometry>'
                    '</collision></link></robot>')
    surface = _load(path).surfaces['ball']
    assert surface.area == pytest.approx(4 * np.pi * 0.05 ** 2, rel=1e-12)


def _winding(vertices, faces, points):
    """Return the generalized winding number of each point (1 inside, 0 outside a closed mesh)."""
    out = np.zeros(len(points))
    for k in range(0, len(points), 100):
        p = points[k:k + 100, None, :]
        a, b, c = (vertices[faces[:, i]][None] - p for i in range(3))
        la, lb, lc = (np.linalg.norm(x, axis=2) for x in (a, b, c))
        det = np.einsum('pfi,pfi->pf', a, np.cross(b, c))
        den = (la * lb * lc + np.einsum('pfi,pfi->pf', a, b) * lc
               + np.einsum('pfi,pfi->pf', b, c) * la + np.einsum('pfi,pfi->pf', c, a) * lb)
        out[k:k + 100] = np.arctan2(det, den).sum(axis=1) / (2 * np.pi)
    return out


def _coal_distance(coal, path, scale, rotation, translation, points):
    """Return coal's distance of each point to the mesh file placed in the link frame."""
    bvh = coal.MeshLoader().load(str(path), np.asarray(scale, dtype=float))
    mesh = coal.CollisionObject(bvh, coal.Transform3s(np.asarray(rotation), np.asarray(
        translation, dtype=float)))
    ball = coal.Sphere(1e-15)
    out = []
    for p in points:
        result = coal.DistanceResult()
        out.append(coal.distance(mesh, coal.CollisionObject(ball, coal.Transform3s(
            np.eye(3), p)), coal.DistanceRequest(), result) + 1e-15)
    return np.abs(np.array(out))


def _check_mesh_surface(surface, coal, rng, count=150, watertight=True):
    """Check sampled points of a one-mesh link against coal and the winding number."""
    shape, = surface.shapes
    pick = rng.choice(len(surface.points), size=min(count, len(surface.points)), replace=False)
    p, n = surface.points[pick], surface.normals[pick]
    d = _coal_distance(coal, shape.filename, shape.size, shape.rotation, shape.translation, p)
    assert d.max() < MESH_TOL, shape.filename
    if watertight:
        outside = _winding(shape.vertices, shape.faces, p + 1e-3 * n)
        inside = _winding(shape.vertices, shape.faces, p - 1e-3 * n)
        return np.mean((outside < 0.5) & (inside > 0.5))
    return None


def test_panda_meshes_on_surface_outward_uniform():
    """e-r-d Panda: points on each STL (coal), outward (winding number), area, uniform, fast."""
    coal = require_module('coal')
    path = example_robot(PANDA)
    start = time.perf_counter()
    geometry = _load(path)
    elapsed = time.perf_counter() - start
    assert elapsed < 5.0   # ~0.3 s measured on the 2-core machine (the spec asks <~1-2 s)
    assert geometry.links_without_geometry == ('panda_link8', 'panda_hand_tcp')
    assert geometry.unreadable == () and geometry.warnings == ()
    rng = np.random.default_rng(5)
    meshes = 0
    for link, surface in geometry.surfaces.items():
        _check_clusters(surface, COARSE)
        if surface.shapes[0].kind != 'mesh':
            continue
        meshes += 1
        shape, = surface.shapes
        assert shape.filename == str(example_robot_data_dir() / PANDA_MESHES / 'collision'
                                     / f"{link.replace('panda_', '')}.stl")
        assert shape.watertight
        reference = trimesh.load(shape.filename, force='mesh')
        assert surface.area == pytest.approx(reference.area, rel=1e-9)
        assert len(surface.points) == pytest.approx(DENSITY * reference.area / SPACING ** 2,
                                                    rel=0.1)
        assert _check_mesh_surface(surface, coal, rng) >= 0.98, link
        # area-uniform: the share of points per octant about the centroid = trimesh's sample's
        reference_points, _ = trimesh.sample.sample_surface(reference, 50000, seed=1)
        centre = reference.centroid
        octant = np.array([4, 2, 1])
        ours = np.bincount(((surface.points - centre) > 0) @ octant, minlength=8)
        theirs = np.bincount(((reference_points - centre) > 0) @ octant, minlength=8)
        assert np.max(np.abs(ours / ours.sum() - theirs / theirs.sum())) < 0.03, link
    assert meshes == 9


def test_mesh_origin_scale_and_mirror():
    """A mesh with an <origin> and a (mirroring) scale: on the placed mesh, still outward."""
    coal = require_module('coal')
    stl = example_robot_data_dir() / PANDA_MESHES / 'collision' / 'link3.stl'
    links = {
        'scaled': _collision(f'<mesh filename="file://{stl}" scale="1.5 0.5 2"/>',
                             xyz=(0.1, -0.2, 0.3), rpy=(0.4, -0.3, 1.0)),
        'mirrored': _collision(f'<mesh filename="{stl}" scale="-1 1 1"/>'),
    }
    geometry = _load(_urdf(links))
    rng = np.random.default_rng(2)
    for surface in geometry.surfaces.values():
        assert _check_mesh_surface(surface, coal, rng) >= 0.98
    scaled = geometry.surfaces['scaled'].shapes[0]
    R = Rotation.from_euler('xyz', (0.4, -0.3, 1.0)).as_matrix()
    vertices = np.asarray(trimesh.load(stl, force='mesh', process=False).vertices)
    placed = (vertices * (1.5, 0.5, 2)) @ R.T + (0.1, -0.2, 0.3)
    assert cKDTree(scaled.vertices).query(placed)[0].max() < 1e-12


CUBE_OBJ = """# a unit cube, wound outward but for its top, written by hand
v 0 0 0
v 1 0 0
v 1 1 0
v 0 1 0
v 0 0 1
v 1 0 1
v 1 1 1
v 0 1 1
f 1 3 2
f 1 4 3
f 1 2 6
f 1 6 5
f 2 3 7
f 2 7 6
f 3 4 8
f 3 8 7
f 4 1 5
f 4 5 8
f 5 7 8
f 5 7 6
"""


def test_obj_meshes_watertight_and_open(tmp_path):
    """An OBJ cube with a face wound wrongly is made outward; an open one keeps its winding."""
    (tmp_path / 'cube.obj').write_text(CUBE_OBJ)
    open_lines = [line for line in CUBE_OBJ.splitlines() if not line.startswith('f 5 7')]
    (tmp_path / 'open.obj').write_text('\n'.join(open_lines) + '\n')
    urdf = tmp_path / 'robot.urdf'
    urdf.write_text(_urdf({'cube': _collision('<mesh filename="cube.obj" scale="0.1 0.1 0.1"/>'),
                           'open': _collision('<mesh filename="open.obj" scale="0.1 0.1 0.1"/>')}))
    geometry = _load(urdf)
    cube = geometry.surfaces['cube']
    distance, normal = _analytic('box', (0.1, 0.1, 0.1), cube.points - 0.05)
    assert np.max(distance) < SURFACE_TOL
    assert np.max(np.abs(cube.normals - normal)) < SURFACE_TOL
    assert cube.area == pytest.approx(0.06, rel=1e-12)
    assert cube.shapes[0].watertight
    box = geometry.surfaces['open']
    assert not box.shapes[0].watertight
    assert np.all(box.points[:, 2] < 0.1 - 1e-12)        # no top
    distance, normal = _analytic('box', (0.1, 0.1, 0.1), box.points - 0.05)
    # the file's faces: the bottom wound outward (-z) and the sides outward; kept as written
    assert np.max(np.abs(box.normals - normal)) < SURFACE_TOL
    assert box.area == pytest.approx(0.05, rel=1e-12)


def test_dae_visual_mesh_of_example_robot_data():
    """A DAE (pycollada): e-r-d Panda's visual link1.dae as collision, points on it (coal)."""
    coal = require_module('coal')
    dae = example_robot_data_dir() / PANDA_MESHES / 'visual' / 'link1.dae'
    geometry = _load(_urdf({'link1': _collision(f'<mesh filename="{dae}"/>')}))
    surface = geometry.surfaces['link1']
    assert surface.shapes[0].filename == str(dae)
    _check_mesh_surface(surface, coal, np.random.default_rng(3), watertight=False)
    assert surface.area == pytest.approx(trimesh.load(dae, force='mesh').area, rel=1e-9)


def test_dae_unit_is_applied(tmp_path):
    """A DAE in centimetres (<unit meter="0.01">) is scaled to metres, as RViz shows it."""
    coal = require_module('coal')
    dae = example_robot_data_dir() / PANDA_MESHES / 'visual' / 'link1.dae'
    text = dae.read_text()
    assert text.count('meter="1"') == 1
    (tmp_path / 'mm.dae').write_text(text.replace('meter="1"', 'meter="0.01"'))
    geometry = _load(_urdf({'mm': _collision(f'<mesh filename="{tmp_path / "mm.dae"}"/>')}),
                     spacing=2e-4, coarse_spacing=1e-3)
    surface = geometry.surfaces['mm']
    rng = np.random.default_rng(4)
    pick = rng.choice(len(surface.points), 100, replace=False)
    # coal (assimp) ignores <unit>: the file at scale 0.01 is the reference
    d = _coal_distance(coal, dae, (1e-2,) * 3, np.eye(3), np.zeros(3), surface.points[pick])
    assert d.max() < MESH_TOL
    assert surface.area == pytest.approx(1e-4 * trimesh.load(dae, force='mesh').area,
                                         rel=1e-9)


def test_unreadable_meshes_warn_and_never_raise(tmp_path):
    """Missing file, corrupt STL, unknown package, empty: a warning naming link and file each."""
    (tmp_path / 'corrupt.stl').write_bytes(b'\x00garbage' * 7)
    (tmp_path / 'empty.stl').write_bytes(b'')
    (tmp_path / 'ogre.mesh').write_bytes(b'[MeshSerializer_v1.41]' + bytes(range(200)))
    links = {
        'missing': _collision('<mesh filename="missing.stl"/>'),
        'corrupt': _collision('<mesh filename="corrupt.stl"/>'),
        'nowhere': _collision('<mesh filename="package://no_such_pkg_31/m.stl"/>'),
        'empty': _collision('<mesh filename="empty.stl"/>'),
        'ogre': _collision('<mesh filename="ogre.mesh"/>'),
        'partly': _collision('<box size="0.1 0.1 0.1"/>')
        + _collision('<mesh filename="missing.stl"/>'),
        'bare': '',
        'plane': _collision('<plane normal="0 0 1"/>'),
        'nolength': _collision('<cylinder radius="0.1"/>'),
        'nan': _collision('<sphere radius="0.1"/>', xyz=('nan', 0, 0)),
    }
    urdf = tmp_path / 'robot.urdf'
    urdf.write_text(_urdf(links))
    with pytest.warns(URDFWarning) as record:
        geometry = load_collision_geometry(urdf)
    assert set(geometry.surfaces) == {'partly'}
    assert len(geometry.surfaces['partly'].shapes) == 1
    unusable = {'missing', 'corrupt', 'nowhere', 'empty', 'ogre', 'plane', 'nolength', 'nan'}
    assert set(geometry.unreadable) == unusable
    assert set(geometry.links_without_geometry) == unusable | {'bare'}
    for link, name in [('missing', 'missing.stl'), ('corrupt', 'corrupt.stl'),
                       ('nowhere', 'no_such_pkg_31'), ('empty', 'empty.stl'),
                       ('ogre', 'ogre.mesh'), ('partly', 'missing.stl'), ('plane', '<plane>'),
                       ('nolength', 'length'), ('nan', 'nan')]:
        lines = [w for w in geometry.warnings if f"'{link}'" in w]
        assert len(lines) == 1 and name in lines[0], (link, geometry.warnings)
    assert [str(w.message) for w in record] == list(geometry.warnings)


def test_not_a_urdf_raises(tmp_path):
    """A source that is not a URDF is a URDFError; a bad spacing or package_paths InputError."""
    for source in ('<sdf version="1.6"/>', '<robot><link', tmp_path / 'none.urdf', 42):
        with pytest.raises(URDFError):
            load_collision_geometry(source)
    for kwargs in ({'spacing': 0}, {'spacing': float('nan')}, {'coarse_spacing': 0.001},
                   {'package_paths': 3}, {'package_paths': {'p': 3}}, {'max_points': 0}):
        with pytest.raises(InputError):
            load_collision_geometry('<robot name="r"/>', **kwargs)


def test_package_paths_dict_list_and_relative(tmp_path):
    """package:// through a dict, a list, e-r-d's share; file:// and relative paths."""
    stl = example_robot_data_dir() / PANDA_MESHES / 'collision' / 'link7.stl'
    folder = tmp_path / 'share' / 'my_pkg_31' / 'meshes'
    folder.mkdir(parents=True)
    shutil.copy(stl, folder / 'part.stl')
    text = _urdf({'a': _collision('<mesh filename="package://my_pkg_31/meshes/part.stl"/>')})
    expected = str(folder / 'part.stl')
    for paths in ({'my_pkg_31': tmp_path / 'share' / 'my_pkg_31'}, [tmp_path / 'share'],
                  [str(tmp_path / 'share')]):
        geometry = _load(text, package_paths=paths)
        assert geometry.surfaces['a'].shapes[0].filename == expected
    with pytest.warns(URDFWarning, match='my_pkg_31'):
        assert 'a' not in load_collision_geometry(text).surfaces
    # the URDF file's ancestors hold the package; a relative path from its folder
    urdf = tmp_path / 'share' / 'my_pkg_31' / 'urdf' / 'r.urdf'
    urdf.parent.mkdir()
    urdf.write_text(_urdf({
        'a': _collision('<mesh filename="package://my_pkg_31/meshes/part.stl"/>'),
        'b': _collision('<mesh filename="../meshes/part.stl"/>')}))
    geometry = _load(urdf)
    assert [s.shapes[0].filename for s in geometry.surfaces.values()] == [expected] * 2
    # an e-r-d URDF found through its share directory without package_paths
    text = (example_robot(PANDA)).read_text()
    assert 'package://example-robot-data/' in text
    assert len(_load(text).surfaces) == 11


def test_point_cap_raises_the_spacing():
    """Above max_points a link is sampled coarser, with a warning naming it."""
    text = _urdf({'big': _collision('<sphere radius="0.2"/>')})
    with pytest.warns(URDFWarning, match="'big'.*max_points 500"):
        geometry = load_collision_geometry(text, max_points=500)
    surface = geometry.surfaces['big']
    assert 400 < len(surface.points) <= 550
    assert surface.spacing > SPACING
    assert surface.area == pytest.approx(4 * np.pi * 0.04, rel=1e-12)


def test_deterministic_and_pickles():
    """Two loads give the same samples; a pickle round trip gives equal, read-only arrays."""
    text = _urdf({kind: _collision(element, xyz, rpy)
                  for kind, (element, _, _, xyz, rpy) in PRIMITIVES.items()})
    first, second = _load(text), _load(text)
    copy = pickle.loads(pickle.dumps(first))
    assert isinstance(copy, CollisionGeometry)
    for name, surface in first.surfaces.items():
        for other in (second.surfaces[name], copy.surfaces[name]):
            for field in ('points', 'normals', 'cluster', 'coarse_points', 'coarse_normals'):
                assert np.array_equal(getattr(surface, field), getattr(other, field))
                assert not getattr(other, field).flags.writeable
            assert other.area == surface.area
            assert isinstance(other.shapes[0], Shape)
            assert np.array_equal(other.shapes[0].vertices, surface.shapes[0].vertices)
    assert (copy.warnings, copy.spacing, copy.coarse_spacing) == (first.warnings, SPACING, COARSE)
    with pytest.raises(AttributeError):
        first.spacing = 1.0


def _collision_meshes(path):
    """Return the collision mesh filenames of a URDF file (lxml, read here)."""
    from lxml import etree
    root = etree.parse(str(path)).getroot()
    return [(link.get('name'), mesh.get('filename'))
            for link in root.findall('link') for element in link.findall('collision')
            for mesh in element.iter('mesh')]


def test_every_example_robot_data_urdf_loads():
    """Every URDF of e-r-d loads (coarse spacing: 60 files); only unreadable meshes are named."""
    base = example_robot_data_dir()
    if base is None:
        example_robot(PANDA)   # skips, or fails under DENOC_REQUIRE_ORACLES=1
    share = base.parent.parent
    files = sorted(base.rglob('*.urdf'))
    assert len(files) >= 60
    loaded = 0
    for path in files:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            geometry = load_collision_geometry(path, spacing=0.05, coarse_spacing=0.1)
        assert [str(w.message) for w in caught if w.category is URDFWarning] \
            == list(geometry.warnings)
        # independent resolution: e-r-d's package:// names lie in the share folder
        bad = set()
        for link, filename in _collision_meshes(path):
            name = filename.split('://', 1)[-1].lstrip('/')
            file = share / name if filename.startswith('package://') else pathlib.Path(name)
            if not file.is_file() or file.suffix.lower() not in ('.stl', '.dae', '.obj'):
                bad.add(link)
        named = {w.split("'")[1] for w in geometry.warnings if 'mesh' in w}
        assert named == bad, path
        for surface in geometry.surfaces.values():
            assert np.all(np.isfinite(surface.points)) and np.all(np.isfinite(surface.normals))
            assert np.allclose(np.linalg.norm(surface.normals, axis=1), 1.0)
        loaded += bool(geometry.surfaces)
    assert loaded >= 60
