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
Tests of the URDF loader against hand-written robots, explicit formulas and Pinocchio's parser.

References are independent of :mod:`denoc_ros.urdf`: rotations come from SciPy, lumped inertials
from sums of 6x6 spatial inertias transformed as Featherstone's force transforms (not the
loader's pairwise parallel-axis formula), and real robots from Pinocchio's URDF parser.
"""

import re
import warnings

from conftest import example_robot, require_oracle
import denoc_ros as dr
from denoc_ros.errors import InputError, URDFError, URDFWarning
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

ATOL = 1e-12
RTOL = 1e-9
PANDA = 'panda_description/urdf/panda.urdf'
UR5 = 'ur_description/urdf/ur5_robot.urdf'


# ---------------------------------------------------------------------------------------------
# URDF text builders
# ---------------------------------------------------------------------------------------------

def _num(values):
    """Format numbers exactly (repr round-trips a float)."""
    return ' '.join(repr(float(v)) for v in np.ravel(values))


def inertial(mass, com=(0, 0, 0), rpy=(0, 0, 0), inertia=(0.01, 0, 0, 0.01, 0, 0.01)):
    """Return an <inertial> element; ``inertia`` is (ixx, ixy, ixz, iyy, iyz, izz)."""
    keys = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')
    attributes = ' '.join(f'{k}="{_num([v])}"' for k, v in zip(keys, inertia))
    return (f'<inertial><origin xyz="{_num(com)}" rpy="{_num(rpy)}"/>'
            f'<mass value="{_num([mass])}"/><inertia {attributes}/></inertial>')


def link(name, mass=None, **kwargs):
    """Return a <link> element, with an inertial if ``mass`` is given."""
    body = inertial(mass, **kwargs) if mass is not None else ''
    return f'<link name="{name}">{body}</link>'


def joint(name, parent, child, kind='revolute', xyz=(0, 0, 0), rpy=(0, 0, 0), axis=(0, 0, 1),
          extra=None):
    """Return a <joint> element; ``extra`` defaults to a <limit> for revolute/prismatic."""
    if extra is None:
        extra = ('<limit lower="-1.5" upper="1.5" effort="10" velocity="2"/>'
                 if kind in ('revolute', 'prismatic') else '')
    axis_xml = f'<axis xyz="{_num(axis)}"/>' if axis is not None else ''
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{_num(xyz)}" rpy="{_num(rpy)}"/>'
            f'{axis_xml}{extra}</joint>')


def robot(*elements, name='test_robot'):
    """Return a <robot> document."""
    return f'<robot name="{name}">' + ''.join(elements) + '</robot>'


def sym(ixx, ixy, ixz, iyy, iyz, izz):
    """Return the symmetric 3x3 tensor of URDF inertia attributes."""
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]], dtype=float)


def upper_triangle(tensor):
    """Return (ixx, ixy, ixz, iyy, iyz, izz) of a symmetric 3x3 tensor."""
    return (tensor[0, 0], tensor[0, 1], tensor[0, 2], tensor[1, 1], tensor[1, 2], tensor[2, 2])


# ---------------------------------------------------------------------------------------------
# Independent geometry: SciPy rotations, homogeneous transforms, 6x6 spatial inertias
# ---------------------------------------------------------------------------------------------

def rot(rpy):
    """URDF rotation of rpy: SciPy's extrinsic x-y-z Euler angles (= Rz(y) Ry(p) Rx(r))."""
    return Rotation.from_euler('xyz', rpy).as_matrix()


def transform(xyz=(0, 0, 0), rpy=(0, 0, 0)):
    """Return the 4x4 homogeneous transform of a URDF <origin>."""
    out = np.eye(4)
    out[:3, :3] = rot(rpy)
    out[:3, 3] = xyz
    return out


def skew(v):
    """Return the cross-product matrix of v."""
    return np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]], dtype=float)


def spatial_inertia(mass, com, inertia_about_com):
    """Return the 6x6 spatial inertia [angular; linear] about the frame origin (Featherstone)."""
    c = skew(com)
    out = np.zeros((6, 6))
    out[:3, :3] = inertia_about_com + mass * c @ c.T
    out[:3, 3:] = mass * c
    out[3:, :3] = mass * c.T
    out[3:, 3:] = mass * np.eye(3)
    return out


def move_spatial_inertia(spatial, pose):
    """Express a spatial inertia given in frame B in frame A, B placed in A by the 4x4 ``pose``."""
    rotation, p = pose[:3, :3], pose[:3, 3]
    force_transform = np.zeros((6, 6))  # [n; f]_A = F [n; f]_B
    force_transform[:3, :3] = rotation
    force_transform[:3, 3:] = skew(p) @ rotation
    force_transform[3:, 3:] = rotation
    return force_transform @ spatial @ force_transform.T


def split_spatial_inertia(spatial):
    """Return (mass, com, inertia about the com) of a 6x6 spatial inertia about the origin."""
    mass = spatial[3, 3]
    c = spatial[:3, 3:] / mass
    com = np.array([c[2, 1], c[0, 2], c[1, 0]])
    return mass, com, spatial[:3, :3] - mass * skew(com) @ skew(com).T


def link_spatial_inertia(mass, com, rpy, inertia):
    """Return the spatial inertia of a URDF <inertial> in its link frame."""
    inertial_frame = spatial_inertia(mass, np.zeros(3), sym(*inertia))
    return move_spatial_inertia(inertial_frame, transform(com, rpy))


def assert_models_equal(a, b):
    """Assert that two RobotModels hold the same topology and numbers."""
    assert a.joint_names == b.joint_names
    assert a.link_names == b.link_names
    np.testing.assert_array_equal(a.parent, b.parent)
    np.testing.assert_array_equal(a.joint_type, b.joint_type)
    for name in ('axis', 'joint_rotation', 'joint_translation', 'mass', 'com', 'inertia',
                 'gravity', 'damping', 'friction', 'lower', 'upper', 'velocity_limit',
                 'effort_limit'):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=RTOL, atol=ATOL,
                                   err_msg=name)


# ---------------------------------------------------------------------------------------------
# Fixed-joint lumping and rotated inertials against hand-built equivalents
# ---------------------------------------------------------------------------------------------

L1 = {'mass': 2.0, 'com': (0.05, -0.02, 0.1), 'rpy': (0.3, -0.2, 0.5),
      'inertia': (0.02, 0.001, -0.002, 0.03, 0.0015, 0.025)}
L1A = {'mass': 0.7, 'com': (0.01, 0.02, -0.03), 'rpy': (1.0, 0.3, -0.6),
       'inertia': (0.004, 0.0002, 0.0001, 0.005, -0.0003, 0.006)}
L1B = {'mass': 0.4, 'com': (-0.02, 0.0, 0.05), 'rpy': (-0.7, 0.2, 2.1),
       'inertia': (0.001, 0.0, 0.0, 0.002, 0.0, 0.0025)}
L2 = {'mass': 1.1, 'com': (0.0, 0.1, 0.2), 'rpy': (0.1, 0.0, -0.4),
      'inertia': (0.012, -0.001, 0.0005, 0.011, 0.0, 0.006)}
J1 = {'xyz': (0.1, 0.2, 0.3), 'rpy': (0.1, 0.2, 0.3)}
JF1 = {'xyz': (0.2, 0.0, 0.1), 'rpy': (0.5, -0.4, 1.2)}
JF2 = {'xyz': (0.0, 0.15, 0.0), 'rpy': (-0.3, 0.8, 0.1)}
J2 = {'xyz': (0.1, 0.0, 0.2), 'rpy': (0.2, 0.1, -0.3)}
J2_AXIS = (0.3, 0.4, 1.2)


def lumped_robot():
    """Return a 2-DoF robot whose first body carries two links welded by rotated fixed joints."""
    return robot(
        link('base'), link('stand', mass=5.0, com=(0.3, 0.0, 0.0)), link('l1', **L1),
        link('l1a', **L1A), link('l1b', **L1B), link('l2', **L2), link('tool'),
        joint('stand_joint', 'base', 'stand', 'fixed', xyz=(1.0, 0.0, 0.0)),
        joint('j1', 'base', 'l1', **J1),
        joint('jf1', 'l1', 'l1a', 'fixed', **JF1),
        joint('jf2', 'l1a', 'l1b', 'fixed', **JF2),
        joint('j2', 'l1b', 'l2', axis=J2_AXIS, **J2),
        joint('tool_joint', 'l2', 'tool', 'fixed', xyz=(0.0, 0.0, 0.1)),
    )


def hand_lumped_robot():
    """Return the robot of lumped_robot() written by hand, without fixed joints."""
    pose_l1a = transform(**JF1)
    pose_l1b = pose_l1a @ transform(**JF2)
    total = (link_spatial_inertia(**L1)
             + move_spatial_inertia(link_spatial_inertia(**L1A), pose_l1a)
             + move_spatial_inertia(link_spatial_inertia(**L1B), pose_l1b))
    mass, com, tensor = split_spatial_inertia(total)
    pose_j2 = pose_l1b @ transform(**J2)
    j2_rpy = Rotation.from_matrix(pose_j2[:3, :3]).as_euler('xyz')
    return robot(
        link('base'), link('l1', mass=mass, com=com, inertia=upper_triangle(tensor)),
        link('l2', **L2),
        joint('j1', 'base', 'l1', **J1),
        joint('j2', 'l1', 'l2', xyz=pose_j2[:3, 3], rpy=j2_rpy, axis=J2_AXIS),
    )


def test_fixed_joints_are_lumped_like_the_hand_combined_robot():
    model = dr.load_urdf(lumped_robot())
    assert_models_equal(model, dr.load_urdf(hand_lumped_robot()))
    assert model.dof == 2
    assert model.mass[0] == pytest.approx(L1['mass'] + L1A['mass'] + L1B['mass'], abs=1e-15)


def test_lumped_links_stay_available_as_frames():
    model = dr.load_urdf(lumped_robot())
    expected = {
        'base': (-1, np.eye(4)),
        'stand': (-1, transform(xyz=(1.0, 0.0, 0.0))),
        'l1': (0, np.eye(4)),
        'l1a': (0, transform(**JF1)),
        'l1b': (0, transform(**JF1) @ transform(**JF2)),
        'l2': (1, np.eye(4)),
        'tool': (1, transform(xyz=(0.0, 0.0, 0.1))),
    }
    assert [f.name for f in model.frames] == ['base', 'stand', 'l1', 'l1a', 'l1b', 'l2', 'tool']
    for name, (body, pose) in expected.items():
        frame = model.frame(name)
        assert frame.body == body, name
        np.testing.assert_allclose(frame.rotation, pose[:3, :3], atol=ATOL, err_msg=name)
        np.testing.assert_allclose(frame.translation, pose[:3, 3], atol=ATOL, err_msg=name)


def test_rpy_rotated_inertial_equals_the_explicitly_rotated_tensor():
    principal = (0.01, 0.0, 0.0, 0.02, 0.0, 0.025)
    rpy = (0.4, -1.1, 2.0)
    rotated = rot(rpy) @ sym(*principal) @ rot(rpy).T
    com = (0.1, -0.05, 0.2)
    with_rpy = dr.load_urdf(robot(
        link('base'), link('l1', mass=3.0, com=com, rpy=rpy, inertia=principal),
        joint('j1', 'base', 'l1', axis=(0, 1, 0))))
    explicit = dr.load_urdf(robot(
        link('base'), link('l1', mass=3.0, com=com, inertia=upper_triangle(rotated)),
        joint('j1', 'base', 'l1', axis=(0, 1, 0))))
    assert_models_equal(with_rpy, explicit)


def test_quarter_turn_yaw_swaps_ixx_and_iyy():
    model = dr.load_urdf(robot(
        link('base'), link('l1', mass=1.0, rpy=(0, 0, np.pi / 2), inertia=(1, 0, 0, 2, 0, 3)),
        joint('j1', 'base', 'l1', axis=(1, 0, 0))))
    np.testing.assert_allclose(model.inertia[0], np.diag([2.0, 1.0, 3.0]), atol=1e-15)


def test_joint_origin_rpy_follows_the_urdf_convention():
    rpy = (0.3, -0.5, 0.9)
    model = dr.load_urdf(robot(link('base'), link('l1', mass=1.0),
                               joint('j1', 'base', 'l1', rpy=rpy, xyz=(1, 2, 3))))
    np.testing.assert_allclose(model.joint_rotation[0], rot(rpy), atol=1e-15)
    np.testing.assert_allclose(model.joint_translation[0], [1, 2, 3], atol=0)


# ---------------------------------------------------------------------------------------------
# Against Pinocchio's URDF parser on real robots
# ---------------------------------------------------------------------------------------------

def assert_matches_pinocchio(model, pin_model, pin):
    """Compare joints, parents, inertias, placements, axes, limits and frames with Pinocchio."""
    names = list(pin_model.names)[1:]
    assert sorted(model.joint_names) == sorted(names)
    data = pin_model.createData()
    pin.computeJointJacobians(pin_model, data, pin.neutral(pin_model))
    for i, name in enumerate(model.joint_names):
        j = pin_model.getJointId(name)
        parent = pin_model.parents[j]
        assert (model.parent[i] == -1) if parent == 0 else (
            model.joint_names[model.parent[i]] == pin_model.names[parent]), name
        inertia = pin_model.inertias[j]
        placement = pin_model.jointPlacements[j]
        close = {'rtol': RTOL, 'atol': ATOL, 'err_msg': name}
        np.testing.assert_allclose(model.mass[i], inertia.mass, **close)
        np.testing.assert_allclose(model.com[i], inertia.lever, **close)
        np.testing.assert_allclose(model.inertia[i], inertia.inertia, **close)
        np.testing.assert_allclose(model.joint_rotation[i], placement.rotation, **close)
        np.testing.assert_allclose(model.joint_translation[i], placement.translation, **close)
        # The joint's column of the local Jacobian at q = 0 is its motion subspace [v; w].
        column = pin.getJointJacobian(pin_model, data, j, pin.LOCAL)[:, pin_model.joints[j].idx_v]
        motion = column[3:] if model.joint_type[i] == dr.REVOLUTE else column[:3]
        np.testing.assert_allclose(model.axis[i], motion, **close)
        iv, iq = pin_model.joints[j].idx_v, pin_model.joints[j].idx_q
        assert model.damping[i] == pin_model.damping[iv]
        assert model.friction[i] == pin_model.friction[iv]
        assert model.effort_limit[i] == pin_model.effortLimit[iv]
        assert model.velocity_limit[i] == pin_model.velocityLimit[iv]
        if pin_model.joints[j].nq == 1:
            assert model.lower[i] == pin_model.lowerPositionLimit[iq]
            assert model.upper[i] == pin_model.upperPositionLimit[iq]
    for frame in model.frames:
        if frame.body < 0 or not pin_model.existFrame(frame.name, pin.BODY):
            continue
        pin_frame = pin_model.frames[pin_model.getFrameId(frame.name, pin.BODY)]
        assert pin_model.names[pin_frame.parentJoint] == model.joint_names[frame.body]
        close = {'rtol': RTOL, 'atol': ATOL, 'err_msg': frame.name}
        np.testing.assert_allclose(frame.rotation, pin_frame.placement.rotation, **close)
        np.testing.assert_allclose(frame.translation, pin_frame.placement.translation, **close)


def test_panda_whole_tree_matches_pinocchio():
    pin = require_oracle('pinocchio')
    path = example_robot(PANDA)
    with pytest.warns(UserWarning, match="'panda_finger_joint2' mimics 'panda_finger_joint1'"):
        model = dr.load_urdf(path)
    pin_model = pin.buildModelFromUrdf(str(path))
    assert model.joint_names == tuple(pin_model.names)[1:]  # same order here (see report)
    assert_matches_pinocchio(model, pin_model, pin)
    assert model.frame('panda_hand').body == 6
    assert model.frame('panda_leftfinger').body == 7


def test_panda_chain_to_link8_matches_pinocchio_reduced_model():
    pin = require_oracle('pinocchio')
    path = example_robot(PANDA)
    full = pin.buildModelFromUrdf(str(path))
    fingers = [full.getJointId('panda_finger_joint1'), full.getJointId('panda_finger_joint2')]
    reduced = pin.buildReducedModel(full, fingers, pin.neutral(full))
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # the locked mimic joint is no DoF: no warning
        model = dr.load_urdf(path, tip_link='panda_link8')
    assert model.joint_names == tuple(f'panda_joint{i}' for i in range(1, 8))
    assert model.tip_link == 'panda_link8'
    assert_matches_pinocchio(model, reduced, pin)
    for name in ('panda_link8', 'panda_hand', 'panda_hand_tcp', 'panda_leftfinger',
                 'panda_rightfinger'):
        assert model.frame(name).body == 6


def test_ur5_matches_pinocchio():
    pin = require_oracle('pinocchio')
    path = example_robot(UR5)
    model = dr.load_urdf(path)
    pin_model = pin.buildModelFromUrdf(str(path))
    assert model.joint_names == tuple(pin_model.names)[1:]
    assert_matches_pinocchio(model, pin_model, pin)
    assert model.base_link == 'world'
    assert model.frame('base_link').body == -1
    assert model.frame('tool0').body == 5
    assert_models_equal(model, dr.load_urdf(str(path), base_link='base_link'))


def test_hand_written_lumped_robot_matches_pinocchio():
    pin = require_oracle('pinocchio')
    text = lumped_robot()
    assert_matches_pinocchio(dr.load_urdf(text), pin.buildModelFromXML(text), pin)


# ---------------------------------------------------------------------------------------------
# Joint types, limits, dynamics
# ---------------------------------------------------------------------------------------------

def test_prismatic_and_continuous_joints():
    text = robot(
        link('base'), link('carriage', mass=2.0), link('arm', mass=1.0, com=(0.2, 0, 0)),
        joint('slide', 'base', 'carriage', 'prismatic', axis=(0, 0, 2),
              extra='<limit lower="-0.5" upper="0.25" effort="100" velocity="0.3"/>'
                    '<dynamics damping="0.7" friction="0.2"/>'),
        joint('spin', 'carriage', 'arm', 'continuous', axis=(0, 3, 4), extra=''))
    model = dr.load_urdf(text)
    assert model.joint_names == ('slide', 'spin')
    np.testing.assert_array_equal(model.joint_type, [dr.PRISMATIC, dr.REVOLUTE])
    np.testing.assert_allclose(model.axis, [[0, 0, 1], [0, 0.6, 0.8]], atol=1e-16)
    np.testing.assert_array_equal(model.lower, [-0.5, -np.inf])
    np.testing.assert_array_equal(model.upper, [0.25, np.inf])
    np.testing.assert_array_equal(model.velocity_limit, [0.3, np.inf])
    np.testing.assert_array_equal(model.effort_limit, [100, np.inf])
    np.testing.assert_array_equal(model.damping, [0.7, 0.0])
    np.testing.assert_array_equal(model.friction, [0.2, 0.0])


def test_continuous_joint_has_no_position_limits_but_keeps_velocity_and_effort():
    model = dr.load_urdf(robot(link('base'), link('l1', mass=1.0, com=(0.1, 0, 0)), joint(
        'j1', 'base', 'l1', 'continuous', extra='<limit effort="5" velocity="6"/>')))
    assert (model.lower[0], model.upper[0]) == (-np.inf, np.inf)
    assert (model.velocity_limit[0], model.effort_limit[0]) == (6.0, 5.0)


def test_absent_axis_defaults_to_x():
    model = dr.load_urdf(robot(link('base'), link('l1', mass=1.0),
                               joint('j1', 'base', 'l1', axis=None)))
    np.testing.assert_array_equal(model.axis[0], [1.0, 0.0, 0.0])


def test_mimic_joint_is_an_independent_dof_with_a_warning():
    text = robot(link('base'), link('l1', mass=1.0), link('l2', mass=1.0),
                 joint('j1', 'base', 'l1', xyz=(0, 0, 0.1)),
                 joint('j2', 'base', 'l2', axis=(0, 1, 0),
                       extra='<limit effort="1" velocity="1"/><mimic joint="j1"/>'))
    with pytest.warns(UserWarning, match="joint 'j2' mimics 'j1'"):
        model = dr.load_urdf(text)
    assert model.joint_names == ('j1', 'j2')


def test_gravity_is_stored_and_validated():
    text = robot(link('base'), link('l1', mass=1.0), joint('j1', 'base', 'l1'))
    np.testing.assert_array_equal(dr.load_urdf(text).gravity, [0.0, 0.0, -9.81])
    np.testing.assert_array_equal(dr.load_urdf(text, gravity=[1, 2, 3]).gravity, [1, 2, 3])
    for bad in ((0, 0, np.nan), (0, np.inf, 0), (0, 0), 'down'):
        with pytest.raises(InputError, match='gravity') as info:
            dr.load_urdf(text, gravity=bad)
        assert isinstance(info.value, ValueError)


# ---------------------------------------------------------------------------------------------
# Trees, chains, base and tip
# ---------------------------------------------------------------------------------------------

ARM_LINK = {'mass': 1.0, 'com': (0.0, 0.0, 0.15), 'inertia': (0.01, 0, 0, 0.01, 0, 0.002)}


def two_arm_robot():
    """Return a torso with two 2-link arms; joints listed out of tree order, left arm 'z_'."""
    return robot(
        link('base'), link('torso', mass=10.0, com=(0, 0, 0.3), inertia=(1, 0, 0, 1, 0, 0.5)),
        link('l1', **ARM_LINK), link('l2', **ARM_LINK),
        link('r1', **ARM_LINK), link('r2', **ARM_LINK),
        joint('r2_joint', 'r1', 'r2', axis=(0, 1, 0), xyz=(0, 0, 0.3)),
        joint('z_l1_joint', 'torso', 'l1', axis=(0, 1, 0), xyz=(0, 0.2, 0.5)),
        joint('torso_joint', 'base', 'torso', xyz=(0, 0, 0.1)),
        joint('r1_joint', 'torso', 'r1', axis=(0, 1, 0), xyz=(0, -0.2, 0.5), rpy=(0.3, 0, 0)),
        joint('z_l2_joint', 'l1', 'l2', axis=(0, 1, 0), xyz=(0, 0, 0.3)),
    )


def test_tree_dofs_are_in_depth_first_preorder_with_children_in_file_order():
    model = dr.load_urdf(two_arm_robot())
    assert model.joint_names == ('torso_joint', 'z_l1_joint', 'z_l2_joint', 'r1_joint',
                                 'r2_joint')
    assert model.link_names == ('torso', 'l1', 'l2', 'r1', 'r2')
    np.testing.assert_array_equal(model.parent, [-1, 0, 1, 0, 3])
    assert [(f.name, f.body) for f in model.frames] == [
        ('base', -1), ('torso', 0), ('l1', 1), ('l2', 2), ('r1', 3), ('r2', 4)]
    np.testing.assert_allclose(model.joint_rotation[3], rot((0.3, 0, 0)), atol=1e-15)
    assert model.tip_link == 'r2'


def test_tree_matches_pinocchio_joint_by_joint():
    pin = require_oracle('pinocchio')
    text = two_arm_robot()
    assert_matches_pinocchio(dr.load_urdf(text), pin.buildModelFromXML(text), pin)


def test_base_link_drops_the_bodies_above_it():
    model = dr.load_urdf(two_arm_robot(), base_link='torso')
    assert model.base_link == 'torso'
    assert model.joint_names == ('z_l1_joint', 'z_l2_joint', 'r1_joint', 'r2_joint')
    np.testing.assert_array_equal(model.parent, [-1, 0, -1, 2])
    np.testing.assert_allclose(model.mass, [1.0] * 4)
    assert 'base' not in model.frame_index
    assert model.frame('torso').body == -1


def test_tip_link_keeps_the_chain_and_lumps_the_other_branch_locked_at_zero():
    model = dr.load_urdf(two_arm_robot(), tip_link='l2')
    assert model.joint_names == ('torso_joint', 'z_l1_joint', 'z_l2_joint')
    np.testing.assert_array_equal(model.parent, [-1, 0, 1])
    assert model.tip_link == 'l2'
    # Torso body = torso + right arm at q = 0 (r1 at (0, -0.2, 0.5) rolled 0.3 rad, r2 0.3 above).
    pose_r1 = transform(xyz=(0, -0.2, 0.5), rpy=(0.3, 0, 0))
    pose_r2 = pose_r1 @ transform(xyz=(0, 0, 0.3))
    arm = link_spatial_inertia(**ARM_LINK, rpy=(0, 0, 0))
    total = (link_spatial_inertia(10.0, (0, 0, 0.3), (0, 0, 0), (1, 0, 0, 1, 0, 0.5))
             + move_spatial_inertia(arm, pose_r1) + move_spatial_inertia(arm, pose_r2))
    mass, com, tensor = split_spatial_inertia(total)
    np.testing.assert_allclose(model.mass[0], mass, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(model.com[0], com, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(model.inertia[0], tensor, rtol=RTOL, atol=ATOL)
    assert model.frame('r2').body == 0
    np.testing.assert_allclose(model.frame('r2').translation, pose_r2[:3, 3], atol=ATOL)


def test_links_below_the_tip_are_lumped_into_the_tip_body():
    model = dr.load_urdf(two_arm_robot(), base_link='torso', tip_link='l1')
    assert model.joint_names == ('z_l1_joint',)
    arm = link_spatial_inertia(**ARM_LINK, rpy=(0, 0, 0))
    mass, com, tensor = split_spatial_inertia(
        arm + move_spatial_inertia(arm, transform(xyz=(0, 0, 0.3))))
    np.testing.assert_allclose(model.mass[0], mass, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(model.com[0], com, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(model.inertia[0], tensor, rtol=RTOL, atol=ATOL)
    assert model.frame('l2').body == 0


def test_base_and_tip_on_a_side_branch():
    model = dr.load_urdf(two_arm_robot(), base_link='torso', tip_link='r2')
    assert model.joint_names == ('r1_joint', 'r2_joint')
    assert model.frame('l2').body == -1  # the other arm is welded to the base


# ---------------------------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------------------------

def test_sources_path_string_pathlib_xml_string_bytes(tmp_path):
    text = lumped_robot()
    path = tmp_path / 'arm.urdf'
    path.write_text('<?xml version="1.0" encoding="utf-8"?>\n' + text)
    reference = dr.load_urdf(text)
    declared = '  \n<?xml version="1.0" encoding="utf-8"?>\n' + text
    for source in (path, str(path), declared, text.encode()):
        model = dr.load_urdf(source)
        assert_models_equal(model, reference)
        assert model.name == 'test_robot'


def test_parser_notes_do_not_reach_stderr(capsys):
    text = robot(link('base'), link('l1', mass=1.0), joint('j1', 'base', 'l1'),
                 '<ros2_control name="x" type="system"/><gazebo/>')
    dr.load_urdf(text)
    assert capsys.readouterr().err == ''


def test_visual_content_urdf_parser_py_rejects_does_not_stop_loading():
    # iCub ships <texture> without filename; urdf_parser_py alone raises on it.
    visual = ('<visual><geometry><box size="1 1 1"/></geometry><material name="m">'
              '<texture/></material></visual>')
    text = robot(link('base'), link('l1', mass=1.0).replace('</link>', visual + '</link>'),
                 joint('j1', 'base', 'l1'), '<material name="grey"><texture/></material>')
    assert dr.load_urdf(text).joint_names == ('j1',)


def test_misspelled_inertial_is_warned_about():
    text = robot(link('base'), '<link name="l1"><inertail/></link>',
                 link('l2', mass=1.0, com=(0.1, 0, 0)),
                 joint('j1', 'base', 'l1'), joint('j2', 'l1', 'l2'))
    with pytest.warns(UserWarning, match=r"link 'l1'.*<inertail>.*<inertial>"):
        dr.load_urdf(text)


def test_zero_inertia_point_mass_is_accepted():
    model = dr.load_urdf(robot(link('base'), link('l1', mass=1.0, com=(0.5, 0, 0),
                                                  inertia=(0, 0, 0, 0, 0, 0)),
                               joint('j1', 'base', 'l1')))
    np.testing.assert_array_equal(model.inertia[0], np.zeros((3, 3)))


def test_round_off_sized_inertia_deviations_are_accepted():
    # iCub's l_ankle_2: 0.2675 kg, all moments 0 but ixz = 1.35525e-20 (slightly indefinite).
    model = dr.load_urdf(robot(link('base'), link('l1', mass=0.2675, com=(0.5, 0, 0),
                                                  inertia=(0, 0, 1.35525e-20, 0, 0, 0)),
                               joint('j1', 'base', 'l1')))
    assert model.inertia[0, 0, 2] == 1.35525e-20


# ---------------------------------------------------------------------------------------------
# Errors: each names what is wrong
# ---------------------------------------------------------------------------------------------

BASE = link('base')
GOOD_L1 = link('l1', mass=1.0, com=(0.1, 0, 0))
J1_XML = joint('j1', 'base', 'l1')


def two_links(l2=None, j2=None, extra=''):
    """Return a base + 2-link arm with the second link or joint replaced."""
    l2 = link('l2', mass=1.0, com=(0.1, 0, 0)) if l2 is None else l2
    j2 = joint('j2', 'l1', 'l2', xyz=(0.3, 0, 0)) if j2 is None else j2
    return robot(BASE, GOOD_L1, l2, J1_XML, j2, extra)


ERROR_CASES = {
    'malformed XML': ('<robot name="r"><link name="a"></robot>', {}, 'malformed XML'),
    'empty string': ('', {}, 'empty URDF string'),
    'blank string': ('  \n\t', {}, 'empty URDF string'),
    'root is not robot': ('<model name="m"><link name="a"/></model>', {},
                          'root element is <model>'),
    'xacro': ('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
              '<xacro:property name="a" value="1"/><link name="a"/></robot>', {}, 'xacro'),
    'no link': ('<robot name="r"/>', {}, 'no <link>'),
    'negative mass': (two_links(l2=link('l2', mass=-1.0)), {},
                      r"link 'l2' \(child of joint 'j2'\) has a negative mass"),
    'negative mass of the root': (two_links().replace('<link name="base"></link>', link(
        'base', mass=-1.0)), {}, "link 'base' has a negative mass"),
    'nan mass': (two_links(l2=link('l2', mass=np.nan)), {},
                 r"link 'l2' \(child of joint 'j2'\) mass is not finite"),
    'inf inertia': (two_links(l2=link('l2', mass=1.0, inertia=(np.inf, 0, 0, 1, 0, 1))), {},
                    r"link 'l2' \(child of joint 'j2'\) inertia is not finite"),
    'nan inertial origin': (two_links(l2=link('l2', mass=1.0, com=(0, np.nan, 0))), {},
                            r"link 'l2' \(child of joint 'j2'\) inertial origin xyz is not"),
    'inf inertial rpy': (two_links(l2=link('l2', mass=1.0, rpy=(0, 0, -np.inf))), {},
                         r"link 'l2' \(child of joint 'j2'\) inertial origin rpy is not"),
    'inf joint origin': (two_links(j2=joint('j2', 'l1', 'l2', xyz=(np.inf, 0, 0))), {},
                         "joint 'j2' origin xyz is not finite"),
    'nan joint rpy': (two_links(j2=joint('j2', 'l1', 'l2', rpy=(np.nan, 0, 0))), {},
                      "joint 'j2' origin rpy is not finite"),
    'nan axis': (two_links(j2=joint('j2', 'l1', 'l2', axis=(0, np.nan, 1))), {},
                 "joint 'j2' axis is not finite"),
    'nan limit': (two_links(j2=joint('j2', 'l1', 'l2', extra='<limit lower="nan" '
                                     'upper="1" effort="1" velocity="1"/>')), {},
                  "joint 'j2' lower limit is not finite"),
    'not a number': (two_links(l2='<link name="l2"><inertial><mass value="heavy"/><inertia '
                               'ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
                               '</link>'), {}, r"link 'l2': <mass value=\"heavy\"> is not"),
    'wrong vector length': (two_links(j2=joint('j2', 'l1', 'l2').replace(
        'xyz="0.0 0.0 0.0"', 'xyz="0 0"')), {}, "joint 'j2': <origin xyz=\"0 0\"> is not 3"),
    'zero axis': (two_links(j2=joint('j2', 'l1', 'l2', axis=(0, 0, 0))), {},
                  "joint 'j2' has a zero axis"),
    'floating joint': (two_links(j2=joint('j2', 'l1', 'l2', 'floating')), {},
                       "joint 'j2' is of type 'floating', which is not supported"),
    'planar joint': (two_links(j2=joint('j2', 'l1', 'l2', 'planar')), {},
                     "joint 'j2' is of type 'planar', which is not supported"),
    'invalid joint type': (two_links(j2=joint('j2', 'l1', 'l2', 'hinge')), {},
                           r"joint\[@name='j2'\].*hinge"),
    'two roots': (two_links(extra=link('orphan', mass=1.0)), {},
                  r"2 root links.*'base', 'orphan'"),
    'cycle below the root': (two_links(extra=link('a') + link('b') + joint('ja', 'a', 'b')
                                       + joint('jb', 'b', 'a')), {},
                             "joints 'j[ab]', 'j[ab]' form a cycle"),
    'cycle without root': (robot(link('a'), link('b'), joint('ja', 'a', 'b'),
                                 joint('jb', 'b', 'a')), {},
                           "no root link: joints 'j[ab]', 'j[ab]' form a cycle"),
    'missing child link': (two_links(j2=joint('j2', 'l1', 'nowhere')), {},
                           "joint 'j2' names child link 'nowhere', which is not defined"),
    'missing parent link': (two_links(j2=joint('j2', 'nowhere', 'l2')), {},
                            "joint 'j2' names parent link 'nowhere', which is not defined"),
    'duplicate link': (two_links(extra=link('l1')), {}, "link 'l1' is defined twice"),
    'duplicate joint': (two_links(extra=link('l3') + joint('j1', 'l2', 'l3')), {},
                        "joint 'j1' is defined twice"),
    'link with two parents': (two_links(extra=joint('j3', 'base', 'l2')), {},
                              "link 'l2' is the child of two joints, 'j2' and 'j3'"),
    'no <inertia>': (two_links(l2='<link name="l2"><inertial><mass value="1"/></inertial>'
                               '</link>'), {}, "link 'l2': <inertial> has no <inertia>"),
    'no movable joint': (robot(BASE, link('l1', mass=1.0), joint('j1', 'base', 'l1', 'fixed')),
                         {}, "no revolute, continuous or prismatic joint below 'base'"),
    'unknown base_link': (two_links(), {'base_link': 'base_lnk'},
                          r"base_link 'base_lnk' is not a link.*did you mean 'base'"),
    'unknown tip_link': (two_links(), {'tip_link': 'tool'},
                         r"tip_link 'tool' is not a link.*\(links: 'base', 'l1', 'l2'\)"),
    'tip not below base': (two_links(), {'base_link': 'l2', 'tip_link': 'l1'},
                           "tip_link 'l1' is not below base_link 'l2'"),
    'tip is base': (two_links(), {'base_link': 'l1', 'tip_link': 'l1'},
                    "tip_link 'l1' is the base_link"),
    'not a source': (42, {}, 'file path or an XML string, not int'),
    'huge mass': (two_links(l2=link('l2', mass=1e300)), {},
                  r"link 'l2' \(child of joint 'j2'\) mass holds 1e\+300, beyond the accepted "
                  r'magnitude 1e\+06'),
    'huge inertia': (two_links(l2=link('l2', mass=1.0, inertia=(1e9, 0, 0, 1e9, 0, 1e9))), {},
                     r"link 'l2' \(child of joint 'j2'\) inertia holds 1e\+09, beyond the "
                     'accepted'),
    'huge joint origin': (two_links(j2=joint('j2', 'l1', 'l2', xyz=(1e200, 0, 0))), {},
                          "joint 'j2' origin xyz holds 1e\\+200, beyond the accepted"),
}


@pytest.mark.parametrize('case', sorted(ERROR_CASES))
def test_bad_descriptions_raise_urdf_error_naming_the_element(case):
    source, kwargs, match = ERROR_CASES[case]
    with pytest.raises(URDFError, match=match) as info:
        dr.load_urdf(source, **kwargs)
    assert isinstance(info.value, ValueError)


def test_missing_file_is_named(tmp_path):
    path = tmp_path / 'nothing.urdf'
    with pytest.raises(URDFError, match='URDF file not found: .*nothing.urdf') as info:
        dr.load_urdf(path)
    assert isinstance(info.value, ValueError)


def test_empty_file_is_named(tmp_path):
    path = tmp_path / 'blank.urdf'
    path.write_text('\n  \n')
    with pytest.raises(URDFError, match=r'URDF file .*blank.urdf is empty'):
        dr.load_urdf(str(path))


def test_errors_in_a_file_name_the_file(tmp_path):
    path = tmp_path / 'broken.urdf'
    path.write_text(two_links(l2=link('l2', mass=-2.0)))
    with pytest.raises(URDFError, match=r"broken.urdf: link 'l2' \(child of joint 'j2'\) has a "
                                        'negative mass'):
        dr.load_urdf(path)


def test_unsupported_joint_above_base_link_is_dropped():
    text = robot(link('world'), BASE, GOOD_L1, J1_XML,
                 joint('world_joint', 'world', 'base', 'floating'))
    with pytest.raises(URDFError, match="joint 'world_joint' is of type 'floating'"):
        dr.load_urdf(text)
    assert dr.load_urdf(text, base_link='base').joint_names == ('j1',)


# ---------------------------------------------------------------------------------------------
# Doubtful descriptions: one URDFWarning per link or joint (model.warnings); strict=True refuses
# ---------------------------------------------------------------------------------------------

# name: (source, strict=True's error, the lenient warning)
STRICT_CASES = {
    'lower above upper': (
        two_links(j2=joint('j2', 'l1', 'l2', extra='<limit lower="1" upper="-1" effort="1" '
                                                   'velocity="1"/>')),
        "joint 'j2' has lower limit 1.0 above upper limit -1.0",
        r"^joint 'j2': lower limit 1.0 above upper limit -1.0, kept as given"),
    'negative damping': (
        two_links(j2=joint('j2', 'l1', 'l2', extra='<dynamics damping="-0.1"/>')),
        "joint 'j2' has a negative damping", r"^joint 'j2': negative damping -0.1"),
    'not positive semi-definite': (
        two_links(l2=link('l2', mass=1.0, inertia=(1, 0, 0, 1, 0, -0.1))),
        "link 'l2': the inertia is not positive semi-definite",
        r"^link 'l2': principal moments \[-0.1, +1\. +, +1\. +\] kg m\^2: one is negative"),
    'rounding-level negative moment': (   # TIAGo's antennas: -3.5e-8 (above the 1e-6 slack)
        two_links(l2=link('l2', mass=0.1, inertia=(1e-5, 0, 0, 1e-5, 0, -3.5e-8))),
        "link 'l2': the inertia is not positive semi-definite",
        r"^link 'l2': principal moments \[-3\.5e-08.*one is negative"),
    'triangle inequality': (   # PR2's sensor_mount_link: 0.001, 0.001, 0.01
        two_links(l2=link('l2', mass=1.0, inertia=(0.001, 0, 0, 0.001, 0, 0.01))),
        "link 'l2': the inertia violates the triangle inequality",
        r"^link 'l2': principal moments \[0\.001, 0\.001, 0\.01 *\] kg m\^2 violate the "
        r'triangle inequality A \+ B >= C$'),
    'rotated triangle inequality': (
        two_links(l2=link('l2', mass=1.0, rpy=(0.3, 0.2, 0.1),
                          inertia=(0.1, 0.02, 0, 0.1, 0, 0.21))),
        "link 'l2': the inertia violates the triangle inequality",
        "^link 'l2': principal moments .* violate the triangle inequality"),
    'degenerate dummy link': (   # ANYmal B's, Go1's and B1's root: 1e-6 kg
        two_links(l2=link('l2', mass=1e-6, inertia=(-2e-22, 0, 0, 8.5e-23, 0, 3e-6))),
        "link 'l2': the inertia violates the triangle inequality",
        "^link 'l2': principal moments .* violate the triangle inequality"),
    'massless subtree': (
        two_links(l2=link('l2')), "joint 'j2' moves no mass",
        r"^link 'l2': joint 'j2' moves only massless links .*: the mass matrix is singular"),
    'massless subtree with lumped child': (
        two_links(l2=link('l2'), extra=link('l3') + joint('j3', 'l2', 'l3', 'fixed')),
        "joint 'j2' moves no mass",
        r"^link 'l2' \(with the welded 'l3'\): joint 'j2' moves only massless links"),
    'point mass on the axis': (
        two_links(l2=link('l2', mass=1.0, com=(0, 0, 0.3), inertia=(0, 0, 0, 0, 0, 0))),
        "joint 'j2' turns link 'l2', which has no rotational inertia about the joint axis",
        "^link 'l2': no rotational inertia about the axis of joint 'j2': the mass matrix is "
        'singular'),
    'two <inertial>': (
        two_links(l2=link('l2', mass=1.0).replace('</link>', inertial(2.0) + '</link>')),
        "link 'l2' has 2 <inertial> elements",
        "^link 'l2': 2 <inertial> elements: the first is used, as urdfdom does$"),
    'two <mass>': (
        two_links(l2=link('l2', mass=1.0).replace('<inertia ', '<mass value="2"/><inertia ')),
        "link 'l2' has 2 <mass> elements in <inertial>",
        "^link 'l2': 2 <mass> elements in <inertial>: the first is used"),
    'two joint <origin>': (
        two_links(j2=joint('j2', 'l1', 'l2').replace('<axis', '<origin xyz="1 0 0"/><axis')),
        "joint 'j2' has 2 <origin> elements", "^joint 'j2': 2 <origin> elements: the first"),
    'two <axis>': (
        two_links(j2=joint('j2', 'l1', 'l2', axis=(0, 1, 0)).replace(
            '</joint>', '<axis xyz="1 0 0"/></joint>')),
        "joint 'j2' has 2 <axis> elements", "^joint 'j2': 2 <axis> elements: the first"),
    'rpy on <axis>': (
        two_links(j2=joint('j2', 'l1', 'l2').replace('<axis ', '<axis rpy="0 0 1" ')),
        "joint 'j2': unknown attribute 'rpy' on <axis>",
        "^joint 'j2': unknown attribute 'rpy' on <axis> ignored, as urdfdom does$"),
    'misspelled origin attribute': (
        two_links(j2=joint('j2', 'l1', 'l2').replace('rpy=', 'ryp=')),
        "joint 'j2': unknown attribute 'ryp' on <origin>",
        "^joint 'j2': unknown attribute 'ryp' on <origin> ignored"),
    'unknown element in inertial': (
        two_links(l2=link('l2', mass=1.0).replace('<mass', '<centre/><mass')),
        "link 'l2': unknown element <centre> in <inertial>",
        "^link 'l2': unknown element <centre> in <inertial> ignored$"),
}


@pytest.mark.parametrize('case', sorted(STRICT_CASES))
def test_doubtful_descriptions_load_with_one_warning_and_strict_refuses(case):
    source, error, warning = STRICT_CASES[case]
    with pytest.warns(URDFWarning) as caught:
        model = dr.load_urdf(source)
    messages = [str(w.message) for w in caught if issubclass(w.category, URDFWarning)]
    assert len(messages) == 1 and messages == list(model.warnings), messages
    assert re.search(warning, messages[0]), messages[0]
    with pytest.raises(URDFError, match=re.escape(error)) as info:
        dr.load_urdf(source, strict=True)
    assert isinstance(info.value, ValueError)


def test_a_clean_description_has_no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        for strict in (False, True):
            model = dr.load_urdf(two_links(), strict=strict)
            assert model.warnings == ()


def test_welded_links_are_judged_as_one_body():
    # l2 alone breaks the triangle inequality (PR2's sensor mount); welded to l3 0.3 m away the
    # combined body is a physical one: no warning, but strict=True judges l2 alone.
    text = two_links(l2=link('l2', mass=1.0, inertia=(0.001, 0, 0, 0.001, 0, 0.01)),
                     extra=link('l3', mass=1.0) + joint('j3', 'l2', 'l3', 'fixed',
                                                        xyz=(0.3, 0, 0)))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        model = dr.load_urdf(text)
    assert model.warnings == ()
    assert model.mass[1] == 2.0
    with pytest.raises(URDFError, match="link 'l2': the inertia violates the triangle"):
        dr.load_urdf(text, strict=True)


def test_a_dummy_root_welded_to_the_trunk_loads_floating_without_warning():
    # ANYmal B, Go1, B1: a 1e-6 kg root with a degenerate inertia welded to the trunk.
    text = robot(link('base', mass=1e-6, inertia=(-2e-22, 0, 0, 8.5e-23, 0, 3e-6)),
                 link('trunk', mass=5.0, inertia=(0.1, 0, 0, 0.2, 0, 0.25)),
                 joint('floating_base', 'base', 'trunk', 'fixed'), GOOD_L1,
                 joint('j1', 'trunk', 'l1'))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        model = dr.load_urdf(text, floating_base=True)
    assert model.warnings == () and model.nv == 7
    with pytest.raises(URDFError, match="link 'base': the inertia violates the triangle"):
        dr.load_urdf(text, floating_base=True, strict=True)


def test_several_conditions_of_one_link_make_one_warning():
    # Massless but with a non-positive inertia, and moving nothing with mass.
    text = two_links(l2=link('l2', mass=0.0, inertia=(1, 0, 0, 1, 0, -0.1)))
    with pytest.warns(URDFWarning) as caught:
        model = dr.load_urdf(text)
    assert len(caught) == 1 and len(model.warnings) == 1
    assert re.search(r"^link 'l2': principal moments .* one is negative .*; joint 'j2' moves "
                     'only massless links', model.warnings[0]), model.warnings[0]


def test_mimic_joints_warn_also_in_strict_mode():
    text = robot(link('base'), link('l1', mass=1.0), link('l2', mass=1.0),
                 joint('j1', 'base', 'l1', xyz=(0, 0, 0.1)),
                 joint('j2', 'base', 'l2', axis=(0, 1, 0),
                       extra='<limit effort="1" velocity="1"/><mimic joint="j1"/>'))
    with pytest.warns(URDFWarning, match="^joint 'j2' mimics 'j1'; it is loaded as an "
                                         'independent degree of freedom$'):
        model = dr.load_urdf(text, strict=True)
    assert model.warnings == ("joint 'j2' mimics 'j1'; it is loaded as an independent degree "
                              'of freedom',)


def test_floating_base_that_is_massless_warns_and_strict_refuses():
    text = robot(BASE, link('l1'), J1_XML)
    with pytest.warns(URDFWarning) as caught:
        model = dr.load_urdf(text, floating_base=True)
    assert model.total_mass == 0.0
    assert [str(w.message) for w in caught] == list(model.warnings)
    assert model.warnings[0].startswith("link 'base': the floating base and everything on it "
                                        'are massless: the mass matrix is singular')
    assert model.warnings[1].startswith("link 'l1': joint 'j1' moves only massless links")
    from denoc_ros.floating_base import free_floating_inverse_dynamics, generalized_jacobian
    q, v = np.r_[0, 0, 0, 0, 0, 0, 1, 0.3], np.zeros(7)
    np.testing.assert_array_equal(dr.mass_matrix(model, q), np.zeros((7, 7)))
    for call, named in ((lambda: dr.forward_dynamics(model, q, v, v), "joint 'j1'"),
                        (lambda: dr.forward_dynamics_cholesky(model, q, v, v), 'floating base'),
                        (lambda: generalized_jacobian(model, q, 'l1'), 'floating base'),
                        (lambda: free_floating_inverse_dynamics(model, q, v, v[6:]),
                         'floating base')):
        with pytest.raises(InputError, match=f'mass matrix is singular: .*{named}'):
            call()
    with pytest.raises(URDFError, match="the floating base 'base' and everything on it are "
                                        'massless'):
        dr.load_urdf(text, floating_base=True, strict=True)


# ---------------------------------------------------------------------------------------------
# Parser leniency as urdfdom's: the values that are used
# ---------------------------------------------------------------------------------------------

def quiet_load(text, **kwargs):
    """Load ``text``, the loader's URDFWarnings silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', URDFWarning)
        return dr.load_urdf(text, **kwargs)


def test_the_first_of_two_axes_is_used():
    text = two_links(j2=joint('j2', 'l1', 'l2', axis=(0, 1, 0)).replace(
        '</joint>', '<axis xyz="1 0 0"/></joint>'))
    np.testing.assert_array_equal(quiet_load(text).axis[1], [0.0, 1.0, 0.0])


def test_the_first_inertial_and_mass_are_used():
    text = two_links(l2=link('l2', mass=1.5).replace('</link>', inertial(2.0) + '</link>'))
    assert quiet_load(text).mass[1] == 1.5
    text = two_links(l2=link('l2', mass=1.5).replace('<inertia ', '<mass value="2"/><inertia '))
    assert quiet_load(text).mass[1] == 1.5


def test_rpy_on_axis_is_ignored():
    plain = two_links(j2=joint('j2', 'l1', 'l2', axis=(0, 1, 0)))
    with_rpy = plain.replace('<axis ', '<axis rpy="0 0 1.5" ')
    np.testing.assert_array_equal(quiet_load(with_rpy).axis, quiet_load(plain).axis)
    np.testing.assert_array_equal(quiet_load(with_rpy).joint_rotation,
                                  quiet_load(plain).joint_rotation)


def test_lower_limit_above_upper_is_kept_as_pinocchio_keeps_it():
    pin = require_oracle('pinocchio')
    text = two_links(j2=joint('j2', 'l1', 'l2', extra='<limit lower="1" upper="-1" effort="1" '
                                                      'velocity="1"/>'))
    model = quiet_load(text)
    pin_model = pin.buildModelFromXML(text)
    assert (model.lower[1], model.upper[1]) == (1.0, -1.0)
    index = pin_model.joints[pin_model.getJointId('j2')].idx_q
    assert pin_model.lowerPositionLimit[index] == 1.0
    assert pin_model.upperPositionLimit[index] == -1.0


# ---------------------------------------------------------------------------------------------
# A singular mass matrix: everything computes but forward dynamics, which names the joint
# ---------------------------------------------------------------------------------------------

HEAVY_BASE = link('base', mass=10.0)
SINGULAR_CASES = {
    'massless subtree': (two_links(l2=link('l2')).replace(BASE, HEAVY_BASE), 'j2'),
    'point mass on the axis': (two_links(l2=link(
        'l2', mass=1.0, com=(0, 0, 0.3), inertia=(0, 0, 0, 0, 0, 0))).replace(BASE, HEAVY_BASE),
        'j2'),
}


@pytest.mark.parametrize('floating', [False, True], ids=['fixed', 'floating'])
@pytest.mark.parametrize('case', sorted(SINGULAR_CASES))
def test_singular_mass_matrix_forward_dynamics_names_the_joint(case, floating):
    pin = require_oracle('pinocchio')
    text, joint_name = SINGULAR_CASES[case]
    model = quiet_load(text, floating_base=floating)
    pin_model = (pin.buildModelFromXML(text, pin.JointModelFreeFlyer()) if floating
                 else pin.buildModelFromXML(text))
    data = pin_model.createData()
    rng = np.random.default_rng(3)
    q = pin.randomConfiguration(pin_model, -np.ones(pin_model.nq), np.ones(pin_model.nq))
    v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
    # Joints are in the same order here (no reordering in these small trees).
    M = pin.crba(pin_model, data, q)
    M = np.triu(M) + np.triu(M, 1).T
    np.testing.assert_allclose(dr.mass_matrix(model, q), M, rtol=0, atol=1e-12)
    np.testing.assert_allclose(dr.inverse_dynamics(model, q, v, a),
                               pin.rnea(pin_model, data, q, v, a), rtol=0, atol=1e-12)
    np.testing.assert_allclose(dr.gravity_torques(model, q),
                               pin.computeGeneralizedGravity(pin_model, data, q), rtol=0,
                               atol=1e-12)
    expected = f"joint '{joint_name}'"
    for forward in (dr.forward_dynamics, dr.forward_dynamics_cholesky):
        with pytest.raises(InputError, match=f'mass matrix is singular: .*{expected}'):
            forward(model, q, v, a)
        with pytest.raises(InputError, match=f'mass matrix is singular: .*{expected}'):
            forward(model, np.tile(q, (2, 1)), np.tile(v, (2, 1)), np.tile(a, (2, 1)))
