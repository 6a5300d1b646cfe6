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
The pieces of identification from real recordings (issue 32), each against an independent check.

Unsensed joints through every fit (against least squares on the stacked sensed rows, and the
rank of those rows); the bounding-ellipsoid LMI (against point masses); the locked-link and
ellipsoid constraints of the physically consistent fit (against SciPy's SLSQP); CSV files per
quantity and absent effort columns; XML declarations; the CLI's options, its validation
window and its exit status when the physical fit does not converge.
"""

import json

import denoc_ros as dr
from denoc_ros.description import read_description
from denoc_ros.errors import DataError
from denoc_ros.identification import data as recordings
from denoc_ros.identification import pipeline
from denoc_ros.identification.base import base_parameters
from denoc_ros.identification.bounds import body_bounds, BodyBound
from denoc_ros.identification.estimation import _pseudo_inertia
from denoc_ros.identification.estimation import (bound_row, least_squares, NormalEquations,
                                                 physical_margin, physically_consistent)
from denoc_ros.identification.filtering import Samples
from denoc_ros.identification.parameters import ParameterLayout, parameters_of
from denoc_ros.identification.recording import JointStateRecording, unsensed_joints
from denoc_ros.identification.urdf_output import identified_urdf, payload_urdf
from denoc_ros.tools import identify as cli
import numpy as np
import pytest

DECLARATION = '<?xml version="1.0" encoding="utf-8"?>\n'


def planar_urdf(axis='0 0 1', elbow='0.4 0 0'):
    """Return the URDF of a two-link arm: both joints about ``axis``, the second at ``elbow``."""
    return f"""<robot name="planar">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.2 0 0"/><mass value="2.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0.15 0.01 0"/><mass value="1.0"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.012"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/>
    <axis xyz="{axis}"/></joint>
  <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/>
    <origin xyz="{elbow}"/><axis xyz="{axis}"/></joint>
</robot>"""


def planar_arm():
    """Return a two-link arm (two parallel z axes, gravity in the plane)."""
    return dr.load_urdf(planar_urdf(), gravity=(0.0, -9.81, 0.0))


def test_unsensed_joint_through_least_squares_and_base_parameters():
    """
    A joint without effort: OLS and WLS equal lstsq on the stacked sensed rows (1e-8).

    The base parameters are as many as the rank of the sensed rows (numpy's SVD rank), fewer
    than with every joint; the unsensed joint's friction is not among them; its NaN efforts
    leave every number finite.
    """
    model = dr.load_urdf(read_description('panda'))
    terms = ('viscous', 'coulomb')
    layout = ParameterLayout.of(model, terms)
    sensed = np.array([True] * 5 + [False] * 2)
    rng = np.random.default_rng(5)
    q, qd, qdd = rng.uniform(-1.5, 1.5, (3, 600, model.dof))
    W = layout.regressor(model, q, qd, qdd)
    tau = W @ layout.nominal + rng.normal(scale=[0.1, 0.2, 0.05, 0.3, 0.1, 1, 1], size=(600, 7))
    tau[:, ~sensed] = np.nan
    base = base_parameters(layout, model, sensed=sensed)
    full = base_parameters(layout, model)
    states = rng.uniform(-2, 2, (3, 200, model.dof))
    rows = layout.regressor(model, *states)[:, sensed, :].reshape(-1, layout.size)
    norms = np.linalg.norm(rows, axis=0)
    live = rows[:, norms > 1e-10 * norms.max()]
    assert base.rank == np.linalg.matrix_rank(live / np.linalg.norm(live, axis=0))
    assert base.rank < full.rank
    independent = {base.names[k] for k in base.independent}
    assert not any(name.startswith(('panda_joint6.', 'panda_joint7.')) for name in independent)
    normal = NormalEquations(7, layout.size, sensed)
    normal.add(W[:300], tau[:300])
    normal.add(W[300:], tau[300:])
    fit = least_squares(normal, base, weighted=False)
    Wb = W[:, sensed][..., base.independent].reshape(-1, base.rank)
    reference = np.linalg.lstsq(Wb, tau[:, sensed].reshape(-1), rcond=None)[0]
    assert np.allclose(fit.beta, reference, rtol=1e-8, atol=1e-8 * np.abs(reference).max())
    weighted = least_squares(normal, base)
    sigma = weighted.joint_sigma[sensed]
    assert np.all(weighted.joint_sigma[~sensed] == 0.0) and np.all(sigma > 0)
    scaled = (W[:, sensed][..., base.independent] / sigma[None, :, None]).reshape(-1, base.rank)
    reference = np.linalg.lstsq(scaled, (tau[:, sensed] / sigma).reshape(-1), rcond=None)[0]
    assert np.allclose(weighted.beta, reference, rtol=1e-8,
                       atol=1e-8 * np.abs(reference).max())
    assert np.all(np.isfinite(weighted.sigma_percent))


def test_unsensed_joints_through_the_physical_fit_and_validation():
    """
    Exact efforts of a physical arm, two joints unsensed (NaN): their rows are left out.

    identify() reports only the sensed joints, its least squares find the base parameters of
    the sensed rows (1e-9 of the largest), its physically consistent fit within 1e-3 of the
    largest (measured 1.9e-4, the same with every joint sensed: the weak prior and the
    barrier's last gap).
    """
    model = dr.load_urdf(read_description('panda'))
    rng = np.random.default_rng(8)
    true = model.replace(mass=model.mass * rng.uniform(0.8, 1.2, 7),
                         damping=rng.uniform(0.1, 0.5, 7), friction=rng.uniform(0.2, 1.0, 7))
    terms = ('viscous', 'coulomb')
    sensed = np.array([True] * 5 + [False] * 2)
    t = np.arange(2000) * 0.01
    q, qd, qdd = rng.uniform(-1.5, 1.5, (3, t.size, 7))
    coulomb = np.tanh(qd / 1e-3)
    tau = dr.inverse_dynamics(true, q, qd, qdd) + true.damping * qd + true.friction * coulomb
    tau[:, ~sensed] = np.nan
    samples = Samples(t, q, qd, qdd, tau, model.joint_names, 1, coulomb)
    result = pipeline.identify(model, [samples.part(slice(0, 1600))],
                               [samples.part(slice(1600, None))], terms, sensed=sensed)
    assert result.physical.converged
    truth = result.base(ParameterLayout.of(true, terms).nominal)
    largest = np.abs(truth).max()
    assert np.allclose(result.least_squares.beta, truth, rtol=0, atol=1e-9 * largest)
    found = result.base(result.physical.theta)
    assert np.allclose(found, truth, rtol=0, atol=1e-3 * largest)
    v = result.validation
    assert list(v['joints']) == list(model.joint_names[:5])
    assert v['unsensed_joints'] == ['panda_joint6', 'panda_joint7']
    assert v['nrmse_identified'] < 1e-3 and np.isfinite(v['nrmse_nominal'])


def points_parameters(masses, points):
    """Return the ten parameters of point masses, summed from their definitions."""
    m = masses.sum()
    h = masses @ points
    inertia = sum(mk * (x @ x * np.eye(3) - np.outer(x, x)) for mk, x in zip(masses, points))
    return np.array([m, *h, inertia[0, 0], inertia[0, 1], inertia[1, 1], inertia[0, 2],
                     inertia[1, 2], inertia[2, 2]])


def test_ellipsoid_lmi_against_point_masses():
    """
    The ellipsoid LMI against point masses, and the box bound against its box's corners.

    ``bound_row(Q) . p`` is the mass-weighted ``1 - (x-c)^T S^-1 (x-c)`` of point masses (1e-12),
    so non-negative for points inside the ellipsoid; the box bound contains its box's corners.
    """
    rng = np.random.default_rng(3)
    bound = BodyBound('l', np.array([0.1, -0.05, 0.2]), np.array([0.3, 0.1, 0.2]), 'test')
    for inside in (True, False):
        direction = rng.normal(size=(50, 3))
        direction /= np.linalg.norm(direction, axis=1, keepdims=True)
        radius = rng.uniform(0, 1, (50, 1)) if inside else rng.uniform(1.5, 3, (50, 1))
        points = bound.centre + direction * radius * bound.semi_axes
        masses = rng.uniform(0.1, 1.0, 50)
        value = bound_row(bound.matrix) @ points_parameters(masses, points)
        d = (points - bound.centre) / bound.semi_axes
        expected = float(masses @ (1 - np.sum(d * d, axis=1)))
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-12)
        assert (value >= 0) == inside
    text = """<robot name="boxy"><link name="base"/>
  <link name="l1"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0.1 0 0" rpy="0 0 0.5"/><geometry><box size="0.2 0.1 0.05"/>
    </geometry></collision>
    <visual><geometry><sphere radius="5"/></geometry></visual></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>"""
    model = dr.load_urdf(text)
    (box,) = body_bounds(text, model)
    assert box.source == 'collision'
    c, s = np.cos(0.5), np.sin(0.5)
    R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
    corners = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.05, 0.05)
                        for z in (-0.025, 0.025)]) @ R.T + [0.1, 0, 0]
    d = (corners - box.centre) / box.semi_axes
    assert np.all(np.sum(d * d, axis=1) <= 1 + 1e-12)


def test_mesh_and_cylinder_bounds(tmp_path):
    """
    STL meshes (binary and ASCII, scaled, relative to the URDF's folder) and cylinders bound.

    Every vertex of the scaled mesh and every corner of the cylinder's box lies within the
    body's ellipsoid; a mesh that cannot be read makes the body fall back to a sphere.
    """
    import struct
    vertices = np.array([[0, 0, 0], [0.2, 0, 0], [0, 0.1, 0], [0, 0, 0.3]], dtype=np.float32)
    faces = [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    data = b'\0' * 80 + struct.pack('<I', len(faces))
    for face in faces:
        data += struct.pack('<3f', 0, 0, 0) + vertices[list(face)].tobytes() + b'\0\0'
    (tmp_path / 'meshes').mkdir()
    (tmp_path / 'meshes' / 'part.stl').write_bytes(data)
    ascii_text = 'solid p\n' + ''.join(
        'facet normal 0 0 0\nouter loop\n' + ''.join(
            f'vertex {" ".join(map(str, vertices[k]))}\n' for k in face)
        + 'endloop\nendfacet\n' for face in faces) + 'endsolid p\n'
    (tmp_path / 'meshes' / 'text.stl').write_text(ascii_text)
    text = """<robot name="meshy"><link name="base"/>
  <link name="l1"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <collision><origin xyz="0 0 0.1"/><geometry><mesh filename="meshes/part.stl"
      scale="2 2 2"/></geometry></collision>
    <collision><origin xyz="0 0 -0.2" rpy="1.5707963 0 0"/><geometry>
      <cylinder radius="0.05" length="0.4"/></geometry></collision></link>
  <link name="l2"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><geometry><mesh filename="file://FOLDER/meshes/text.stl"/></geometry></visual></link>
  <link name="l3"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><geometry><mesh filename="package://nowhere_at_all/x.stl"/></geometry></visual>
  </link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><axis xyz="0 0 1"/>
    <origin xyz="0 0 0.5"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/><axis xyz="0 0 1"/>
    <origin xyz="0.3 0 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>""".replace('FOLDER', str(tmp_path))
    model = dr.load_urdf(text)
    first, second, third = body_bounds(text, model, radius=0.05, folder=tmp_path)
    assert (first.source, second.source, third.source) == ('collision', 'visual',
                                                           'joint origins')
    cylinder = np.array([[x, y, z] for x in (-0.05, 0.05) for y in (-0.2, 0.2)
                         for z in (-0.25, -0.15)])      # its box, turned about x
    for bound, points in ((first, np.vstack([2 * vertices + [0, 0, 0.1], cylinder])),
                          (second, vertices)):
        d = (points - bound.centre) / bound.semi_axes
        assert np.all(np.sum(d * d, axis=1) <= 1 + 1e-6), bound
    # the second body's geometry is the tetrahedron: its box is 0.2 x 0.1 x 0.3
    assert np.allclose(second.semi_axes, np.sqrt(3) * np.array([0.1, 0.05, 0.15]), rtol=1e-6)
    assert np.allclose(third.centre, 0) and np.allclose(third.semi_axes, 0.05)


def slsqp_reference(fit, normal, layout, constraints):
    """Return the objective SciPy's SLSQP reaches with the same objective and constraints."""
    from scipy.optimize import minimize
    A, b, c = normal.combined()

    def objective(theta):
        prior = np.sum(((theta - layout.nominal) / fit.scale) ** 2)
        return float(theta @ A @ theta - 2 * b @ theta + c) + fit.prior_weight * prior

    def gradient(theta):
        prior = (theta - layout.nominal) / fit.scale ** 2
        return 2 * (A @ theta - b) + 2 * fit.prior_weight * prior
    reference = minimize(objective, fit.theta * 1.001, jac=gradient, method='SLSQP',
                         constraints=constraints, options={'maxiter': 100, 'ftol': 1e-15})
    print(f'SLSQP: {reference.nit} iterations, {reference.message}')
    return objective(fit.theta), objective(reference.x)


def test_locked_links_and_ellipsoid_in_the_physical_fit():
    """
    Locked links and a bounding sphere in the physical fit: both held, no worse than SLSQP.

    Data of a 1 kg second link, 1.5 kg locked onto it, and a sphere too small for link 1: the
    fit keeps body 2 heavier than the locked part (its remainder's pseudo-inertia positive
    definite) and body 1 inside the sphere, both constraints active, and no worse than SLSQP.
    """
    model = planar_arm()
    layout = ParameterLayout.of(model, ())
    rng = np.random.default_rng(14)
    q, qd, qdd = rng.uniform(-2, 2, (3, 400, 2))
    W = layout.regressor(model, q, qd, qdd)
    normal = NormalEquations(2, layout.size)
    normal.add(W, W @ layout.nominal)
    locked = np.zeros((2, 10))
    locked[1] = parameters_of(1.5, [0.1, 0.0, 0.0], np.diag([1e-3, 2e-3, 2e-3]))
    sphere = BodyBound('l1', np.array([0.2, 0.0, 0.0]), np.full(3, 0.12), 'test')
    wide = BodyBound('l2', np.zeros(3), np.full(3, 10.0), 'test')
    ellipsoids = np.array([sphere.matrix, wide.matrix])
    fit = physically_consistent(normal, layout, model, locked=locked, ellipsoids=ellipsoids)
    assert fit.converged, fit.message
    theta = fit.theta
    rest = np.linalg.eigvalsh(_pseudo_inertia(theta[10:] - locked[1]))
    assert rest[0] > 0 and theta[10] > 1.5
    margin = bound_row(sphere.matrix) @ theta[:10]
    assert 0 <= margin < 1e-4 * theta[0]          # active: on the sphere (barrier's last gap)
    constraints = [
        {'type': 'ineq', 'fun': lambda th: physical_margin(th[:10])},
        {'type': 'ineq', 'fun': lambda th: physical_margin(th[10:] - locked[1])},
        {'type': 'ineq', 'fun': lambda th: bound_row(sphere.matrix) @ th[:10]}]
    ours, theirs = slsqp_reference(fit, normal, layout, constraints)
    print(f'\nobjective: ours {ours:.8g}, SLSQP {theirs:.8g}')
    assert ours <= theirs * (1 + 1e-4) + 1e-12


def test_csv_per_quantity_and_absent_efforts(tmp_path):
    """
    CSV files per quantity, absent effort columns, and the error naming the accepted columns.

    Files per quantity (velocity on other stamps) read as the merged file, interpolated
    (1e-12 on a linear signal); an absent effort column is NaN and named by unsensed_joints;
    an unusable header names the accepted patterns with an example.
    """
    names = ('a', 'b')
    t = np.arange(100) * 0.01
    position = np.column_stack([t, 2 * t])
    effort = np.column_stack([3 * t, -t])
    (tmp_path / 'pos.csv').write_text('time,a,b\n' + '\n'.join(
        f'{x:.17g},{p[0]:.17g},{p[1]:.17g}' for x, p in zip(t, position)))
    tv = t + 0.005
    (tmp_path / 'velocity.csv').write_text('timestamp,b/velocity,a/velocity\n' + '\n'.join(
        f'{x:.17g},{2 * x + 2:.17g},{x + 1:.17g}' for x in tv))  # 1 + t, 2 + 2 t elsewhere
    (tmp_path / 'effort.csv').write_text('time,a\n' + '\n'.join(
        f'{x:.17g},{e:.17g}' for x, e in zip(t, effort[:, 0])))
    recording = recordings.read_recording(
        f'{tmp_path / "pos.csv"},{tmp_path / "velocity.csv"},{tmp_path / "effort.csv"}', names)
    keep = (t >= tv[0]) & (t <= tv[-1])
    assert np.array_equal(recording.time, t[keep])
    assert np.allclose(recording.velocity, np.column_stack([1 + t, 2 + 2 * t])[keep],
                       rtol=0, atol=1e-12)
    assert np.allclose(recording.effort[:, 0], effort[keep, 0], rtol=0, atol=1e-15)
    assert unsensed_joints(recording) == ('b',)
    merged = tmp_path / 'merged.csv'
    merged.write_text('t,a.position,b_position,a/effort\n' + '\n'.join(
        f'{x:.17g},{p[0]:.17g},{p[1]:.17g},{e:.17g}'
        for x, p, e in zip(t, position, effort[:, 0])))
    recording = recordings.read_recording(merged, names)
    assert unsensed_joints(recording) == ('b',) and recording.velocity is None
    bad = tmp_path / 'bad.csv'
    bad.write_text('seconds,a,b\n0,1,2\n')
    with pytest.raises(DataError, match=r'time,a/position,a/velocity,a/effort'):
        recordings.read_recording(bad, names)


def test_xml_declaration_read_and_kept():
    """A URDF with an encoding declaration: identified and payload URDFs keep it and load."""
    text = read_description('panda')
    text = text[text.index('<robot'):]
    model = dr.load_urdf(DECLARATION + text)
    for out in (identified_urdf(DECLARATION + text, model, dr.inertial_parameters(model)),
                payload_urdf(DECLARATION + text, 'panda_link7', 0.5, [0, 0, 0.1],
                             np.eye(3) * 1e-3)):
        assert out.startswith(DECLARATION)
        assert dr.load_urdf(out).dof == 7
    assert not identified_urdf(text, model, dr.inertial_parameters(model)).startswith('<?xml')


def test_moving_split_leaves_the_rest_out():
    """The validation window is the last 20 % of the moving part; rests stay in training."""
    t = np.arange(1000) * 0.01
    qd = np.zeros((1000, 2))
    qd[100:800, 0] = 0.5                    # rest 1 s, move 7 s, rest 2 s
    samples = Samples(t, np.zeros((1000, 2)), qd, np.zeros((1000, 2)), np.zeros((1000, 2)),
                      ('a', 'b'), 1)
    training, validation, note = cli._moving_split(samples, 0.2)
    assert validation.time[0] == pytest.approx(6.6)
    assert validation.time[-1] == pytest.approx(7.99)
    assert [p.time[0] for p in training] == [0.0, 8.0]
    assert 'rest of 2 s' in note


def two_link_run(tmp_path, extra, drop=None):
    """Run the CLI on exact data of a two-link arm; return (status, report dir)."""
    text = planar_urdf('1 0 0', '0 0 0.4')     # gravity (-z) in the arm's plane
    urdf = tmp_path / 'arm.urdf'
    urdf.write_text(text)
    model = dr.load_urdf(text)
    t = np.arange(0, 12, 0.005)
    w = 2 * np.pi * np.array([0.3, 0.7])
    q = np.column_stack([np.sin(w[0] * t) + 0.3 * np.sin(3 * w[0] * t), np.cos(w[1] * t)])
    qd = np.column_stack([w[0] * np.cos(w[0] * t) + 0.9 * w[0] * np.cos(3 * w[0] * t),
                          -w[1] * np.sin(w[1] * t)])
    qdd = np.gradient(qd, t, axis=0)
    tau = dr.inverse_dynamics(model, q, qd, qdd)
    data = tmp_path / 'data.csv'
    recordings.write_csv(data, JointStateRecording(model.joint_names, t, q, qd, tau))
    if drop is not None:        # leave out one column
        rows = [line.split(',') for line in data.read_text().splitlines()]
        k = rows[0].index(drop)
        data.write_text('\n'.join(','.join(r[:k] + r[k + 1:]) for r in rows) + '\n')
    report = tmp_path / 'report'
    status = cli.main(['--urdf', str(urdf), '--data', str(data), '--friction', 'none',
                       '--no-plots', '--output-urdf', str(tmp_path / 'out.urdf'),
                       '--report', str(report)] + extra)
    return status, report


def test_cli_options_name_what_is_wrong(tmp_path, capsys):
    """A joint not in the chain, a bad factor: one line each, the chain options suggested."""
    for extra, pattern in ((['--unsensed', 'wheel'], '--base-link/--tip-link'),
                           (['--effort-scale', 'j1=ten'], 'not a number'),
                           (['--gear-ratio', 'j1'], 'JOINT=VALUE')):
        status, _ = two_link_run(tmp_path, extra)
        err = capsys.readouterr().err.strip().splitlines()
        assert status == 1 and len(err) == 1 and pattern in err[0], err


def test_absent_effort_column_is_unsensed_with_a_line(tmp_path, capsys):
    """A joint without an effort column: one warning line, left out of the metrics, exit 0."""
    status, report_dir = two_link_run(tmp_path, [], drop='j2/effort')
    err = capsys.readouterr().err.strip().splitlines()
    lines = [line for line in err if 'warning' in line]
    assert status == 0
    assert len(lines) == 1 and "joint 'j2' has no effort data" in lines[0], err
    assert lines[0].startswith('denoc_identify: warning:') and 'unsensed' in lines[0]
    report = json.loads((report_dir / 'report.json').read_text())
    assert report['settings']['unsensed'] == ['j2']
    assert list(report['validation']['joints']) == ['j1']
    assert report['validation']['nrmse_identified'] < 1e-3


def test_physical_fit_not_converged_is_said_and_exits_3(tmp_path, capsys, monkeypatch):
    """A physical fit stopped early: everything written, one line, status 3, report says so."""
    original = pipeline.physically_consistent

    def short(*args, **kwargs):
        return original(*args, **kwargs, max_iterations=2)

    monkeypatch.setattr(pipeline, 'physically_consistent', short)
    status, report_dir = two_link_run(tmp_path, [])
    err = capsys.readouterr().err.strip().splitlines()
    assert status == cli.NOT_CONVERGED
    assert err[-1].startswith('denoc_identify: error: the physically consistent fit did not '
                              'converge (stopped after 2 Newton steps)'), err
    report = json.loads((report_dir / 'report.json').read_text())
    assert report['status'] == 'physical fit not converged'
    assert not report['physical_fit']['converged']
    assert 'did not converge' in (report_dir / 'index.html').read_text()
