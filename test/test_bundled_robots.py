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
Check every robot description bundled in ``urdf/`` (see ``urdf/README.md`` for the sources).

Each file must parse with urdf_parser_py and Pinocchio, carry physically valid inertias, give a
positive definite joint-space mass matrix, compile in MuJoCo (and agree with Pinocchio there),
and weigh what its source table says. The Puma 560 must reproduce the Robotics Toolbox model
(``rtb.models.DH.Puma560``, motor inertia set to zero) to 1e-9; the planar arms must move in a
vertical plane with q equal to the source's joint angles.
"""

import math
import xml.etree.ElementTree as ET

from conftest import bundled_urdfs, require_oracle
import numpy as np
import pytest

pin = require_oracle('pinocchio')
from urdf_parser_py import urdf as urdf_module  # noqa: E402, I100 (a dependency)

# file name -> (degrees of freedom, tip link, total mass of the source table in kg)
SOURCES = {
    'craig_rr.urdf': (2, 'tool0', 2.0 + 1.5),
    'panda.urdf': (7, 'panda_link8',
                   4.970684 + 0.646926 + 3.228604 + 3.587895 + 1.225946 + 1.666555 + 0.735522),
    'puma560.urdf': (6, 'tool0', 0.0 + 17.4 + 4.8 + 0.82 + 0.34 + 0.09),
    'saha_planar_3r.urdf': (3, 'tool0', 0.5 + 0.4 + 0.3),
    'stanford_arm.urdf': (6, 'tool0', 9.29 + 5.01 + 4.25 + 1.08 + 0.63 + 0.51),
    'ur5e.urdf': (6, 'tool0', 3.761 + 8.058 + 2.846 + 1.37 + 1.3 + 0.365),
    'space_robot.urdf': (8, 'arm_b_tool', 300.0 + 6 + 10 + 8 + 3 + 6 + 10 + 5 + 3),
}
# Free-flying robots (denoc_ros.floating_base): the root link is the floating base and carries
# the spacecraft bus's inertial (kg); as a fixed-base model that mass sits on the fixed base.
FLOATING_BASE_MASS = {'space_robot.urdf': 300.0}
# Craig's RR arm: exact point masses, rotational inertia exactly zero.
POINT_MASSES = {('craig_rr.urdf', 'link1'), ('craig_rr.urdf', 'link2')}
# Armstrong found no mass for the Puma's link 1 (its mass centre is on the joint-1 axis).
MASSLESS_BODIES = {('puma560.urdf', 'link1')}
# MuJoCo rejects moving bodies without inertia: Craig's point masses cannot be compiled.
MUJOCO_LEFT_OUT = {'craig_rr.urdf': 'MuJoCo requires positive rotational inertia on moving '
                                    "bodies; Craig's point masses have none"}
# MuJoCo rejects moving bodies without mass: for MuJoCo only, a massless body gets this mass,
# which changes neither M(q) nor g(q) when, as for the Puma's link 1, the mass centre lies on
# the axis of the only joint that moves it (the comparison with Pinocchio checks that).
MUJOCO_STAND_IN_MASS = 1e-6
PLANAR = {'craig_rr.urdf': (1.0, 0.8), 'saha_planar_3r.urdf': (0.3, 0.25, 0.22)}
TOL = 1e-9
URDFS = bundled_urdfs()
IDS = [p.name for p in URDFS]


def read_robot(path):
    """Return the urdf_parser_py robot of a bundled file."""
    return urdf_module.URDF.from_xml_string(path.read_text())


def inertia_tensor(inertia):
    """Return the symmetric 3x3 tensor of a urdf_parser_py ``Inertia``."""
    return np.array([[inertia.ixx, inertia.ixy, inertia.ixz],
                     [inertia.ixy, inertia.iyy, inertia.iyz],
                     [inertia.ixz, inertia.iyz, inertia.izz]])


def load_model(path):
    """Return a Pinocchio model and data with gravity along -z."""
    model = pin.buildModelFromUrdf(str(path))
    model.gravity.linear[:] = (0.0, 0.0, -9.81)
    return model, model.createData()


def mass_matrix(model, data, q):
    """Return Pinocchio's CRBA mass matrix, upper triangle symmetrised."""
    M = pin.crba(model, data, q)
    return np.triu(M) + np.triu(M, 1).T


def random_configurations(model, count, seed):
    """Return random configurations within the joint limits."""
    rng = np.random.default_rng(seed)
    lower, upper = model.lowerPositionLimit, model.upperPositionLimit
    return [rng.uniform(lower, upper) for _ in range(count)]


def relative_error(value, reference):
    """Return max|value - reference| / max(1, max|reference|)."""
    return np.abs(value - reference).max() / max(1.0, np.abs(reference).max())


def test_every_bundled_urdf_has_a_source_entry():
    assert URDFS, 'no URDF in urdf/'
    unknown = sorted(set(IDS) - set(SOURCES))
    assert not unknown, f'add the source data of {unknown} to SOURCES in this test'
    assert (URDFS[0].parent / 'README.md').is_file()


@pytest.mark.parametrize('path', URDFS, ids=IDS)
def test_parses_with_urdf_parser_py(path):
    robot = read_robot(path)
    dof, tip, _ = SOURCES[path.name]
    children = {j.child for j in robot.joints}
    roots = [ln.name for ln in robot.links if ln.name not in children]
    assert len(roots) == 1, f'one root link expected, got {roots}'
    if path.name in FLOATING_BASE_MASS:
        assert robot.link_map[roots[0]].inertial.mass == FLOATING_BASE_MASS[path.name]
    else:
        assert robot.link_map[roots[0]].inertial is None, 'the fixed base carries no inertial'
    assert tip in robot.link_map, f'tip link {tip} missing'
    movable = [j for j in robot.joints if j.type != 'fixed']
    assert len(movable) == dof
    for joint in movable:
        assert joint.type in ('revolute', 'prismatic'), joint.name
        limit = joint.limit
        assert limit is not None, f'{joint.name} has no <limit>'
        assert limit.lower < limit.upper and limit.effort > 0 and limit.velocity > 0, joint.name
        assert robot.link_map[joint.child].inertial is not None, f'{joint.child} has no inertial'
    for joint in robot.joints:
        if joint.type == 'fixed':
            # massless frames only (tool flanges): no body hides behind a fixed joint
            assert robot.link_map[joint.child].inertial is None, joint.child
            assert joint.child not in {j.parent for j in robot.joints}, joint.child


@pytest.mark.parametrize('path', URDFS, ids=IDS)
def test_builds_with_pinocchio_with_the_source_dof(path):
    model, _ = load_model(path)
    dof, tip, _ = SOURCES[path.name]
    assert model.nq == model.nv == dof
    assert model.existFrame(tip)
    robot = read_robot(path)
    expected = [j.name for j in robot.joints if j.type != 'fixed']
    assert list(model.names)[1:] == expected


@pytest.mark.parametrize('path', URDFS, ids=IDS)
def test_inertias_are_physical(path):
    robot = read_robot(path)
    for link in robot.links:
        if link.inertial is None:
            continue
        key = (path.name, link.name)
        mass = link.inertial.mass
        tensor = inertia_tensor(link.inertial.inertia)
        assert mass > 0 or (key in MASSLESS_BODIES and mass == 0), f'{link.name}: mass {mass}'
        if key in POINT_MASSES:
            assert not tensor.any(), f'{link.name}: a point mass has zero inertia'
            continue
        moments = np.linalg.eigvalsh(tensor)
        scale = moments.max()
        assert moments.min() > 0, f'{link.name}: inertia not positive definite {moments}'
        a, b, c = moments
        assert c <= a + b + 1e-12 * scale, f'{link.name}: triangle inequality fails {moments}'


@pytest.mark.parametrize('path', URDFS, ids=IDS)
def test_total_mass_matches_the_source_table(path):
    robot = read_robot(path)
    total = sum(ln.inertial.mass for ln in robot.links if ln.inertial is not None)
    expected = SOURCES[path.name][2]
    assert total == pytest.approx(expected, rel=1e-12)
    model, _ = load_model(path)
    moving = expected - FLOATING_BASE_MASS.get(path.name, 0.0)  # Pinocchio: the moving links
    assert pin.computeTotalMass(model) == pytest.approx(moving, rel=1e-12)


@pytest.mark.parametrize('path', URDFS, ids=IDS)
def test_mass_matrix_is_positive_definite(path):
    model, data = load_model(path)
    for q in random_configurations(model, 20, seed=1):
        M = mass_matrix(model, data, q)
        assert np.linalg.eigvalsh(M).min() > 0


def mujoco_xml(path):
    """Return the URDF text with MuJoCo's compiler options added inside <robot>."""
    root = ET.fromstring(path.read_text())
    extension = ET.SubElement(root, 'mujoco')
    ET.SubElement(extension, 'compiler', discardvisual='true', fusestatic='false',
                  balanceinertia='false')
    for link in root.findall('link'):
        if (path.name, link.get('name')) in MASSLESS_BODIES:
            link.find('inertial/mass').set('value', repr(MUJOCO_STAND_IN_MASS))
    return ET.tostring(root, encoding='unicode')


@pytest.mark.parametrize('path', [p for p in URDFS if p.name not in MUJOCO_LEFT_OUT],
                         ids=[name for name in IDS if name not in MUJOCO_LEFT_OUT])
def test_mujoco_compiles_and_agrees_with_pinocchio(path):
    mujoco = require_oracle('mujoco')
    mj_model = mujoco.MjModel.from_xml_string(mujoco_xml(path))
    model, data = load_model(path)
    assert mj_model.nv == model.nv
    mj_data = mujoco.MjData(mj_model)
    for q in random_configurations(model, 5, seed=2):
        mj_data.qpos[:] = q
        mj_data.qvel[:] = 0.0
        mujoco.mj_forward(mj_model, mj_data)
        M_mj = np.zeros((mj_model.nv, mj_model.nv))
        try:
            mujoco.mj_fullM(mj_model, mj_data, M_mj)  # MuJoCo 4
        except TypeError:
            mujoco.mj_fullM(mj_model, M_mj, mj_data.qM)  # MuJoCo 3
        assert relative_error(M_mj, mass_matrix(model, data, q)) < TOL
        gravity = pin.computeGeneralizedGravity(model, data, q)
        assert relative_error(mj_data.qfrc_bias, gravity) < TOL


def dh_standard(theta, d, a, alpha):
    """Return the standard Denavit-Hartenberg transform Rz(theta) Tz(d) Tx(a) Rx(alpha)."""
    ct, st, ca, sa = math.cos(theta), math.sin(theta), math.cos(alpha), math.sin(alpha)
    return np.array([[ct, -st * ca, st * sa, a * ct],
                     [st, ct * ca, -ct * sa, a * st],
                     [0.0, sa, ca, d],
                     [0.0, 0.0, 0.0, 1.0]])


def test_puma560_reproduces_the_robotics_toolbox_model():
    rtb = require_oracle('roboticstoolbox')
    puma = rtb.models.DH.Puma560()
    for link in puma.links:
        link.Jm = 0.0
    puma.gravity = (0.0, 0.0, -9.81)
    path = next(p for p in URDFS if p.name == 'puma560.urdf')
    model, data = load_model(path)
    tool = model.getFrameId('tool0')
    rng = np.random.default_rng(3)
    qlim = np.array(puma.qlim)
    for _ in range(5):
        q = rng.uniform(qlim[0], qlim[1])
        M_rtb = np.asarray(puma.inertia(q), dtype=float)
        g_rtb = np.asarray(puma.gravload(q), dtype=float)
        assert np.abs(mass_matrix(model, data, q) - M_rtb).max() <= TOL * np.abs(M_rtb).max()
        g = pin.computeGeneralizedGravity(model, data, q)
        assert np.abs(g - g_rtb).max() <= TOL * np.abs(g_rtb).max()
        pin.framesForwardKinematics(model, data, q)
        T = np.eye(4)
        for link, qi in zip(puma.links, q):
            T = T @ dh_standard(qi + link.offset, link.d, link.a, link.alpha)
        assert np.abs(data.oMf[tool].homogeneous - T).max() < 1e-12


def test_craig_rr_matches_the_closed_form():
    l1, l2, m1, m2, g = 1.0, 0.8, 2.0, 1.5, 9.81
    path = next(p for p in URDFS if p.name == 'craig_rr.urdf')
    model, data = load_model(path)
    for q1, q2 in random_configurations(model, 10, seed=4):
        c1, c2, c12 = math.cos(q1), math.cos(q2), math.cos(q1 + q2)
        M = np.array([[l2**2 * m2 + 2 * l1 * l2 * m2 * c2 + l1**2 * (m1 + m2),
                       l2**2 * m2 + l1 * l2 * m2 * c2],
                      [l2**2 * m2 + l1 * l2 * m2 * c2, l2**2 * m2]])
        G = np.array([m2 * l2 * g * c12 + (m1 + m2) * l1 * g * c1, m2 * l2 * g * c12])
        q = np.array([q1, q2])
        assert relative_error(mass_matrix(model, data, q), M) < 1e-12
        assert relative_error(pin.computeGeneralizedGravity(model, data, q), G) < 1e-12


@pytest.mark.parametrize('name', sorted(PLANAR))
def test_planar_arm_moves_in_a_vertical_plane_with_q_equal_to_theta(name):
    lengths = PLANAR[name]
    path = next(p for p in URDFS if p.name == name)
    model, data = load_model(path)
    tool = model.getFrameId('tool0')
    n, reach = len(lengths), sum(lengths)
    for q, expected in ((np.zeros(n), (reach, 0.0, 0.0)),
                        (np.r_[math.pi / 2, np.zeros(n - 1)], (0.0, 0.0, reach))):
        pin.framesForwardKinematics(model, data, q)
        assert np.allclose(data.oMf[tool].translation, expected, atol=1e-12)
    for q in random_configurations(model, 5, seed=5):
        pin.framesForwardKinematics(model, data, q)
        assert abs(data.oMf[tool].translation[1]) < 1e-12
        for joint_id in range(1, model.njoints):
            axis = data.oMi[joint_id].rotation[:, 2]
            assert np.allclose(axis, (0.0, -1.0, 0.0), atol=1e-12)
