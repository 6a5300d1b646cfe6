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
Robots for the dynamics tests: random trees, Craig's RR arm, and independent references.

* :func:`random_model` builds a :class:`denoc_ros.RobotModel` straight from arrays (random
  topology, joint types, axes, origins and physically valid inertias);
* :func:`craig_rr` is the planar RR arm with point masses of Craig ch. 6 (seed 002);
* :func:`to_pinocchio` builds the same robot through Pinocchio's own API (``addJoint`` with
  unaligned revolute/prismatic joints, ``appendBodyToJoint``), an independent construction;
* :func:`to_urdf` writes a model as URDF text (for loader round trips);
* :func:`com_positions` is a plain 4x4 homogeneous-transform forward kinematics, independent of
  ``denoc_ros.dynamics``, for potential energies.
"""

import zlib

import denoc_ros as dr
import numpy as np


def random_rotation(rng):
    """Return a uniformly random rotation matrix."""
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    if np.linalg.det(Q) < 0:
        Q[:, 0] = -Q[:, 0]
    return Q


def random_inertia(rng, mass):
    """Return a random rotational inertia about the COM that a real body can have."""
    half = rng.uniform(0.05, 0.3, size=3)          # box half extents
    a, b, c = half ** 2
    principal = mass / 3.0 * np.array([b + c, a + c, a + b])
    Rot = random_rotation(rng)
    return Rot @ np.diag(principal) @ Rot.T


def random_model(rng, parents, prismatic=None, gravity=(0.0, 0.0, -9.81), name='random'):
    """
    Return a RobotModel with the given parent array and random everything else.

    ``prismatic``: indices of prismatic joints (default: a random ~30 %).
    """
    n = len(parents)
    if prismatic is None:
        prismatic = [i for i in range(n) if rng.random() < 0.3]
    joint_type = [dr.PRISMATIC if i in prismatic else dr.REVOLUTE for i in range(n)]
    axes = rng.normal(size=(n, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    mass = rng.uniform(0.5, 3.0, size=n)
    return dr.RobotModel(
        joint_names=tuple(f'joint{i}' for i in range(n)),
        link_names=tuple(f'link{i}' for i in range(n)),
        parent=np.array(parents),
        joint_type=np.array(joint_type),
        axis=axes,
        joint_rotation=np.array([random_rotation(rng) for _ in range(n)]),
        joint_translation=rng.uniform(-0.4, 0.4, size=(n, 3)),
        mass=mass,
        com=rng.uniform(-0.2, 0.2, size=(n, 3)),
        inertia=np.array([random_inertia(rng, m) for m in mass]),
        gravity=np.array(gravity, dtype=float),
        base_link='base',
        name=name,
    )


# Test robots: name -> (parent array, indices of prismatic joints). Seeded by name.
MODEL_CASES = {
    'single_revolute': ([-1], []),
    'single_prismatic': ([-1], [0]),
    'chain2': ([-1, 0], []),
    'chain7_revolute': ([-1, 0, 1, 2, 3, 4, 5], []),
    'chain7_mixed': ([-1, 0, 1, 2, 3, 4, 5], [1, 4]),
    'branched5': ([-1, 0, 0, 1, 2], [3]),
    'two_roots_tree6': ([-1, 0, -1, 2, 2, 1], [2]),
    'branched8': ([-1, 0, 1, 1, 3, 2, 5, 2], [4, 7]),
}


def make_model(case, seed=0):
    """Return the random test robot called ``case`` (deterministic for a given seed)."""
    parents, prismatic = MODEL_CASES[case]
    rng = np.random.default_rng([zlib.crc32(case.encode()), seed])
    return random_model(rng, parents, prismatic=prismatic, name=case)


def rng_for(*keys):
    """Return a random generator seeded by strings/ints (reproducible per test)."""
    return np.random.default_rng([zlib.crc32(str(k).encode()) for k in keys])


def assert_close(actual, expected, tol, what=''):
    """Assert ``max|actual - expected| <= tol * max(1, max|expected|)``."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    err = float(np.max(np.abs(actual - expected), initial=0.0))
    assert err <= tol * scale, f'{what}: error {err:.3g} > {tol:g} * {scale:.3g}'


def random_state(rng, n, size=(), scale=1.0):
    """Return a random joint vector of shape ``size + (n,)``."""
    return rng.uniform(-scale, scale, size=tuple(size) + (n,))


def craig_rr(l1=0.7, l2=0.45, m1=1.3, m2=0.8, g=9.81):
    """Return Craig's planar RR arm: point masses at the link ends, gravity along -y0."""
    return dr.RobotModel(
        joint_names=('theta1', 'theta2'),
        link_names=('link1', 'link2'),
        parent=np.array([-1, 0]),
        joint_type=np.array([dr.REVOLUTE, dr.REVOLUTE]),
        axis=np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]),
        joint_rotation=np.array([np.eye(3), np.eye(3)]),
        joint_translation=np.array([[0.0, 0.0, 0.0], [l1, 0.0, 0.0]]),
        mass=np.array([m1, m2]),
        com=np.array([[l1, 0.0, 0.0], [l2, 0.0, 0.0]]),
        inertia=np.zeros((2, 3, 3)),
        gravity=np.array([0.0, -g, 0.0]),
        name='craig_rr',
    )


# ------------------------------------------------------------------------------------------------
# Pinocchio


def depth_first_order(parent):
    """Return the body indices in depth-first order (Pinocchio needs contiguous subtrees)."""
    order, stack = [], [i for i in range(len(parent) - 1, -1, -1) if parent[i] < 0]
    while stack:
        i = stack.pop()
        order.append(i)
        stack += [c for c in range(len(parent) - 1, -1, -1) if parent[c] == i]
    return order


def to_pinocchio(model):
    """
    Build the same robot with Pinocchio's own modelling API; map joints by name.

    Joints are added in depth-first order, as Pinocchio's algorithms expect each subtree to
    occupy consecutive velocity indices.
    """
    import pinocchio as pin

    pmodel = pin.Model()
    pmodel.name = model.name
    pin_id = {-1: 0}
    for i in depth_first_order(model.parent):
        axis = np.array(model.axis[i])
        if model.joint_type[i] == dr.PRISMATIC:
            joint = pin.JointModelPrismaticUnaligned(axis)
        else:
            joint = pin.JointModelRevoluteUnaligned(axis)
        placement = pin.SE3(np.array(model.joint_rotation[i]),
                            np.array(model.joint_translation[i]))
        jid = pmodel.addJoint(pin_id[int(model.parent[i])], joint, placement,
                              model.joint_names[i])
        pin_id[i] = jid
        pmodel.appendBodyToJoint(jid, pin.Inertia(float(model.mass[i]), np.array(model.com[i]),
                                                  np.array(model.inertia[i])),
                                 pin.SE3.Identity())
    pmodel.gravity = pin.Motion(np.array(model.gravity), np.zeros(3))
    return pmodel


class PinocchioMap:
    """Map denoc_ros joint vectors to a Pinocchio model's q / v by joint name."""

    def __init__(self, pmodel, joint_names, floating=False):
        self.pmodel = pmodel
        self.base = 6 if floating else 0  # a free flyer first: q[:7] and v[:6] as they are
        self.joint_ids = [pmodel.getJointId(name) for name in joint_names]
        missing = [nm for nm, j in zip(joint_names, self.joint_ids) if j >= pmodel.njoints]
        assert not missing, f'joints not in the Pinocchio model: {missing}'
        joints = [pmodel.joints[j] for j in self.joint_ids]
        assert all(jt.nv == 1 for jt in joints)
        self.idx_q = [jt.idx_q for jt in joints]
        self.nq = [jt.nq for jt in joints]
        self.idx_v = np.r_[np.arange(self.base), [jt.idx_v for jt in joints]].astype(int)
        assert sorted(self.idx_v) == list(range(pmodel.nv)), 'every Pinocchio DoF must be mapped'

    def q(self, q):
        """Return Pinocchio's configuration (cos/sin pairs for unbounded joints)."""
        import pinocchio as pin

        out = np.array(pin.neutral(self.pmodel))
        first = 7 if self.base else 0
        out[:first] = q[:first]
        for k, (iq, nq) in enumerate(zip(self.idx_q, self.nq)):
            x = q[first + k]
            if nq == 2:
                out[iq:iq + 2] = np.cos(x), np.sin(x)
            else:
                out[iq] = x
        return out

    def v(self, x):
        """Return a Pinocchio tangent vector from a denoc_ros joint vector."""
        out = np.zeros(self.pmodel.nv)
        out[self.idx_v] = x
        return out

    def from_v(self, x):
        """Return a denoc_ros joint vector from a Pinocchio tangent vector."""
        return np.asarray(x)[self.idx_v]

    def from_vv(self, A):
        """Return a denoc_ros (n, n) matrix from a Pinocchio (nv, nv) matrix."""
        return np.asarray(A)[np.ix_(self.idx_v, self.idx_v)]

    def forces(self, f_ext):
        """Return Pinocchio's fext list (index 0 = universe) from (n, 6) [force; torque]."""
        import pinocchio as pin

        out = [pin.Force.Zero() for _ in range(self.pmodel.njoints)]
        for k, j in enumerate(self.joint_ids):
            out[j] = pin.Force(np.array(f_ext[k, :3]), np.array(f_ext[k, 3:]))
        return out


# ------------------------------------------------------------------------------------------------
# URDF writer


def _rpy(R):
    """Return URDF roll-pitch-yaw (R = Rz(yaw) Ry(pitch) Rx(roll)) of a rotation matrix."""
    pitch = np.arcsin(-np.clip(R[2, 0], -1.0, 1.0))
    if abs(np.cos(pitch)) > 1e-9:
        roll = np.arctan2(R[2, 1], R[2, 2])
        yaw = np.arctan2(R[1, 0], R[0, 0])
    else:
        roll = 0.0
        yaw = np.arctan2(-R[0, 1], R[1, 1])
    return roll, pitch, yaw


def _num(x):
    return repr(float(x))


def _vec(v):
    return ' '.join(_num(x) for x in v)


def to_urdf(model):
    """Return URDF text describing ``model`` (continuous/prismatic joints, no limits needed)."""
    lines = ['<?xml version="1.0"?>', f'<robot name="{model.name}">',
             f'  <link name="{model.base_link}"/>']
    for i in range(model.dof):
        inertia = model.inertia[i]
        lines += [
            f'  <link name="{model.link_names[i]}">',
            '    <inertial>',
            f'      <origin xyz="{_vec(model.com[i])}" rpy="0 0 0"/>',
            f'      <mass value="{_num(model.mass[i])}"/>',
            f'      <inertia ixx="{_num(inertia[0, 0])}" ixy="{_num(inertia[0, 1])}" '
            f'ixz="{_num(inertia[0, 2])}" iyy="{_num(inertia[1, 1])}" '
            f'iyz="{_num(inertia[1, 2])}" izz="{_num(inertia[2, 2])}"/>',
            '    </inertial>',
            '  </link>',
        ]
    for i in range(model.dof):
        kind = 'prismatic' if model.joint_type[i] == dr.PRISMATIC else 'continuous'
        k = model.parent[i]
        parent = model.base_link if k < 0 else model.link_names[k]
        lines += [
            f'  <joint name="{model.joint_names[i]}" type="{kind}">',
            f'    <parent link="{parent}"/>',
            f'    <child link="{model.link_names[i]}"/>',
            f'    <origin xyz="{_vec(model.joint_translation[i])}" '
            f'rpy="{_vec(_rpy(model.joint_rotation[i]))}"/>',
            f'    <axis xyz="{_vec(model.axis[i])}"/>',
        ]
        if kind == 'prismatic':
            lines.append('    <limit lower="-10" upper="10" effort="100" velocity="10"/>')
        lines.append('  </joint>')
    lines.append('</robot>')
    return '\n'.join(lines) + '\n'


# ------------------------------------------------------------------------------------------------
# Independent forward kinematics


def _homogeneous(R, p):
    T = np.eye(4)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def _rotation(axis, angle):
    x, y, z = axis
    c, s, v = np.cos(angle), np.sin(angle), 1.0 - np.cos(angle)
    return np.array([[x * x * v + c, x * y * v - z * s, x * z * v + y * s],
                     [y * x * v + z * s, y * y * v + c, y * z * v - x * s],
                     [z * x * v - y * s, z * y * v + x * s, z * z * v + c]])


def body_transforms(model, q):
    """Return the 4x4 poses of the body frames in the base frame, (n, 4, 4)."""
    T = []
    for i in range(model.dof):
        origin = _homogeneous(model.joint_rotation[i], model.joint_translation[i])
        if model.joint_type[i] == dr.PRISMATIC:
            motion = _homogeneous(np.eye(3), q[i] * model.axis[i])
        else:
            motion = _homogeneous(_rotation(model.axis[i], q[i]), np.zeros(3))
        local = origin @ motion
        k = model.parent[i]
        T.append(local if k < 0 else T[k] @ local)
    return np.array(T)


def com_positions(model, q):
    """Return the mass centres (n, 3) in the base frame by chained 4x4 transforms."""
    T = body_transforms(model, q)
    return np.einsum('nij,nj->ni', T[:, :3, :3], model.com) + T[:, :3, 3]


def potential_energy(model, q):
    """Return the gravitational potential energy ``-sum_i m_i g . C_i``."""
    return -float(np.sum(model.mass * (com_positions(model, q) @ model.gravity)))
