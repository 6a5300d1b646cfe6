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
Free-floating-base dynamics (SpaceDyn, seed 003): a free 6-DoF base body carrying a tree of links.

The system equation of seed 003 (Eq. 1)::

    [H_b    H_bm] [a_b]   [c_b]   [F_b  ]
    [H_bm^T H_m ] [qdd] + [c_m] = [tau_m]

with ``H_b`` (6x6), ``H_bm`` (6xn), ``H_m`` (nxn), non-linear terms ``c_b``, ``c_m`` (Coriolis,
centrifugal and gravity), base wrench ``F_b`` and joint forces ``tau_m``.

Conventions (the same as Pinocchio's free-flyer joint, so numbers compare directly)
----------------------------------------------------------------------------------
* Model: :class:`FloatingBaseModel` = the tree of :func:`denoc_ros.load_urdf` (``tree``: bodies
  ``0 .. n-1``, parent ``-1`` = the base, revolute and prismatic joints, any number of branches
  on the base) plus the base body's own mass, centre of mass and inertia (the root link and
  every link welded to it by fixed joints, lumped exactly). The base is not a body index.
* Configuration ``q`` (7 + n): base position in the world (3), base orientation as a unit
  quaternion in the order **x y z w** (4), joint positions (n, ``tree.joint_names`` order).
* Velocity ``v`` (6 + n): base linear velocity (3) and base angular velocity (3), **both in the
  base-local frame** (linear: velocity of the base frame origin), then joint rates (n).
  Accelerations ``a`` are the time derivatives of ``v`` (spatial acceleration of the base in
  its own frame). Generalized forces ``tau`` (6 + n): base wrench ``[force; torque about the
  base origin]`` in the base frame, then joint forces.
* Spatial vectors are ordered ``[linear; angular]``. Gravity (``model.gravity``) is in the
  world frame.
* External wrenches: ``f_ext`` (n, 6) on the bodies and ``f_base`` (6,) on the base, each
  ``[force; torque about the body frame origin]`` in that body's own frame (the fixed-base
  library's ``f_ext`` convention).
* Momentum: world axes, ``[linear; angular]``, angular about the system centre of mass
  (``about='com'``, Pinocchio's centroidal momentum ``hg``) or the world origin.
* End-effector twists (Jacobians, Generalized Jacobian Matrix): ``[linear velocity of the frame
  origin; angular velocity]``, world axes (Pinocchio's ``LOCAL_WORLD_ALIGNED``).

Algorithms: recursive Newton-Euler (inverse dynamics, ``c``), composite-rigid-body (``H``),
articulated-body (forward dynamics), all O(n) or O(n^2) sweeps over the tree in body-local
spatial coordinates; NumPy, one state per call (no batch axes).
"""

from dataclasses import dataclass
import math
import os
import pathlib
from typing import NamedTuple

from lxml import etree
import numpy as np

from .errors import InputError, URDFError
from .model import PRISMATIC, RobotModel
from .urdf import load_urdf, rpy_to_matrix

__all__ = [
    'configuration_rate', 'FloatingBaseModel', 'FloatingInertia', 'FloatingSimulation',
    'floating_forward_dynamics', 'floating_inertia_matrices', 'floating_inverse_dynamics',
    'floating_jacobian', 'floating_mass_matrix', 'floating_nonlinear_terms',
    'frame_placement', 'free_floating_inverse_dynamics', 'generalized_jacobian',
    'integrate_configuration', 'load_floating_base', 'neutral_configuration',
    'quaternion_to_matrix', 'simulate_floating', 'system_center_of_mass', 'system_momentum',
]


# ---------------------------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------------------------

def _readonly(array, shape):
    """Return a read-only float copy of ``array``; InputError if its shape is not ``shape``."""
    out = np.array(array, dtype=float, copy=True)
    if out.shape != shape:
        raise InputError(f'model array has shape {out.shape}, expected {shape}')
    if not np.all(np.isfinite(out)):
        raise InputError('model array holds NaN or inf')
    out.setflags(write=False)
    return out


@dataclass(frozen=True, eq=False)
class FloatingBaseModel:
    """
    Constants of a free-floating base (6-DoF free body) carrying a tree of 1-DoF joints.

    ``tree`` holds the joints and bodies below the base (parent ``-1`` = the base) in the
    fixed-base :class:`~denoc_ros.RobotModel` form; its ``gravity`` is read as the world-frame
    gravity. ``base_mass``, ``base_com`` (base frame) and ``base_inertia`` (about the centre of
    mass, base axes) describe the base body. Build one with :func:`load_floating_base`.
    """

    tree: RobotModel
    base_mass: float
    base_com: np.ndarray      # (3,)
    base_inertia: np.ndarray  # (3, 3)

    def __post_init__(self):
        put = object.__setattr__
        if not isinstance(self.tree, RobotModel):
            raise InputError(f'tree must be a RobotModel, not {type(self.tree).__name__}')
        mass = float(self.base_mass)
        if not math.isfinite(mass) or mass < 0.0:
            raise InputError(f'base mass must be finite and >= 0, got {self.base_mass!r}')
        put(self, 'base_mass', mass)
        put(self, 'base_com', _readonly(self.base_com, (3,)))
        put(self, 'base_inertia', _readonly(self.base_inertia, (3, 3)))
        tree = self.tree
        inertias = np.array([_spatial_inertia(m, c, I) for m, c, I in
                             zip(tree.mass, tree.com, tree.inertia)]).reshape(-1, 6, 6)
        subspaces = np.zeros((tree.dof, 6))
        for i in range(tree.dof):
            k = 0 if tree.joint_type[i] == PRISMATIC else 3
            subspaces[i, k:k + 3] = tree.axis[i]
        base = _spatial_inertia(mass, self.base_com, self.base_inertia)
        for name, value in (('_I_base', base), ('_I', inertias), ('_S', subspaces)):
            value.setflags(write=False)
            put(self, name, value)

    @property
    def dof(self) -> int:
        """Return the number of joint degrees of freedom n (the base's 6 not counted)."""
        return self.tree.dof

    @property
    def nq(self) -> int:
        """Return the configuration size 7 + n."""
        return 7 + self.tree.dof

    @property
    def nv(self) -> int:
        """Return the velocity size 6 + n."""
        return 6 + self.tree.dof

    @property
    def joint_names(self):
        """Return the joint names, in the order of ``q[7:]`` and ``v[6:]``."""
        return self.tree.joint_names

    @property
    def base_link(self) -> str:
        """Return the name of the base (root) link."""
        return self.tree.base_link

    @property
    def gravity(self) -> np.ndarray:
        """Return the gravity vector, world frame."""
        return self.tree.gravity

    @property
    def total_mass(self) -> float:
        """Return the mass of the whole system (base and bodies)."""
        return self.base_mass + float(np.sum(self.tree.mass))

    def replace(self, gravity=None, **changes) -> 'FloatingBaseModel':
        """Return a copy with the given fields (or the world ``gravity``) replaced."""
        fields = {'tree': self.tree, 'base_mass': self.base_mass, 'base_com': self.base_com,
                  'base_inertia': self.base_inertia}
        fields.update(changes)
        if gravity is not None:
            fields['tree'] = fields['tree'].replace(gravity=gravity)
        return FloatingBaseModel(**fields)


def load_floating_base(source, gravity=(0.0, 0.0, -9.81)):
    """
    Build a FloatingBaseModel from a URDF path or XML string: the root link floats freely.

    The equivalent of ``dr.load_urdf(source, floating_base=True)``: the tree below the root link
    is ``dr.load_urdf(source, gravity=gravity)`` (every revolute, continuous and prismatic
    joint a degree of freedom, fixed joints lumped); the base body is the root link plus every
    link welded to it by fixed joints, whose ``<inertial>`` are combined exactly (masses,
    mass-weighted centres, parallel-axis theorem). ``gravity`` is in the world frame.
    """
    tree = load_urdf(source, gravity=gravity)
    text = _source_text(source)
    root = etree.fromstring(text.encode('utf-8'),
                            etree.XMLParser(resolve_entities=False, no_network=True))
    links = {el.get('name'): el for el in root if isinstance(el.tag, str) and el.tag == 'link'}
    mass, com, inertia = 0.0, np.zeros(3), np.zeros((3, 3))
    for frame in tree.frames:
        if frame.body != -1:
            continue
        piece = _link_inertial(links[frame.name])
        if piece is None:
            continue
        m, c, I_c = piece
        c = frame.rotation @ c + frame.translation
        I_c = frame.rotation @ I_c @ frame.rotation.T
        mass, com, inertia = _combine(mass, com, inertia, m, c, I_c)
    principal = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    if mass <= 0.0 or principal[0] < -1e-9 * max(principal[2], 1.0):
        raise URDFError(f'base link {tree.base_link!r}: a floating base needs a positive mass '
                        f'and a positive semi-definite inertia (mass {mass!r}, principal '
                        f'moments {principal})')
    return FloatingBaseModel(tree, mass, com, 0.5 * (inertia + inertia.T))


def _source_text(source):
    """Return the XML text of a URDF path or string (load_urdf has already validated it)."""
    if isinstance(source, (bytes, bytearray)):
        source = bytes(source).decode('utf-8', errors='replace')
    if isinstance(source, str) and source.lstrip().startswith('<'):
        text = source
    else:
        text = pathlib.Path(os.fspath(source)).read_bytes().decode('utf-8', errors='replace')
    return text.lstrip().split('?>', 1)[1] if text.lstrip().startswith('<?xml') else text


def _link_inertial(link):
    """Return ``(mass, com, inertia about com)`` of a <link> element in its frame, or None."""
    inertial = link.find('inertial')
    if inertial is None:
        return None

    def numbers(element, attribute, default):
        if element is None or element.get(attribute) is None:
            return np.array(default, dtype=float)
        return np.array([float(x) for x in element.get(attribute).split()])

    origin = inertial.find('origin')
    xyz = numbers(origin, 'xyz', (0.0, 0.0, 0.0))
    rotation = rpy_to_matrix(numbers(origin, 'rpy', (0.0, 0.0, 0.0)))
    mass = float(inertial.find('mass').get('value'))
    el = inertial.find('inertia')
    ixx, ixy, ixz, iyy, iyz, izz = (float(el.get(k, 0.0)) for k in
                                    ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'))
    tensor = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return mass, xyz, rotation @ tensor @ rotation.T


def _combine(m_a, c_a, I_a, m_b, c_b, I_b):
    """Return the inertial of two rigid pieces (same axes): sum, weighted COM, parallel axes."""
    m = m_a + m_b
    if m_a == 0.0 or m_b == 0.0:
        return m, (c_b if m_a == 0.0 else c_a), I_a + I_b
    d = c_a - c_b
    steiner = (m_a * m_b / m) * (d @ d * np.eye(3) - np.outer(d, d))
    return m, (m_a * c_a + m_b * c_b) / m, I_a + I_b + steiner


# ---------------------------------------------------------------------------------------------
# Spatial algebra ([linear; angular] order)
# ---------------------------------------------------------------------------------------------

def _skew(a):
    """Return the cross-product matrix [a]x."""
    return np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])


def _spatial_inertia(mass, com, inertia):
    """Return the 6x6 spatial inertia about the frame origin (seed 001, spatial inertia)."""
    C = _skew(com)
    out = np.zeros((6, 6))
    out[:3, :3] = mass * np.eye(3)
    out[:3, 3:] = -mass * C
    out[3:, :3] = mass * C
    out[3:, 3:] = inertia - mass * C @ C
    return out


def _motion_transform(R, p):
    """Return X, mapping motion vectors from frame A to frame B (B at ``R``, ``p`` in A)."""
    X = np.zeros((6, 6))
    Rt = R.T
    X[:3, :3] = Rt
    X[:3, 3:] = -Rt @ _skew(p)
    X[3:, 3:] = Rt
    return X


def _crm(m):
    """Return the motion cross-product operator (v x) of seed 001 for ``m = [v; w]``."""
    out = np.zeros((6, 6))
    W = _skew(m[3:])
    out[:3, :3] = W
    out[:3, 3:] = _skew(m[:3])
    out[3:, 3:] = W
    return out


def _crf(m):
    """Return the force cross-product operator (v x*) = -(v x)^T (seed 001)."""
    return -_crm(m).T


def _axis_rotation(axis, angle):
    """Return the rotation by ``angle`` about the unit ``axis`` (Rodrigues' formula)."""
    K = _skew(axis)
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


def quaternion_to_matrix(quaternion):
    """Return the rotation matrix of a quaternion ``(x, y, z, w)`` (normalised first)."""
    x, y, z, w = np.asarray(quaternion, dtype=float) / np.linalg.norm(quaternion)
    return np.array([
        [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w)],
        [2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w)],
        [2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)],
    ])


def _matrix_to_quaternion(R):
    """Return the unit quaternion ``(x, y, z, w)``, ``w >= 0``, of a rotation matrix."""
    t = np.trace(R)
    if t > 0.0:
        s = 2.0 * math.sqrt(1.0 + t)
        quat = np.array([(R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s,
                         (R[1, 0] - R[0, 1]) / s, 0.25 * s])
    else:
        i = int(np.argmax(np.diag(R)))
        j, k = (i + 1) % 3, (i + 2) % 3
        s = 2.0 * math.sqrt(1.0 + R[i, i] - R[j, j] - R[k, k])
        quat = np.zeros(4)
        quat[i] = 0.25 * s
        quat[j] = (R[j, i] + R[i, j]) / s
        quat[k] = (R[k, i] + R[i, k]) / s
        quat[3] = (R[k, j] - R[j, k]) / s
    quat /= np.linalg.norm(quat)
    return -quat if quat[3] < 0.0 else quat


# ---------------------------------------------------------------------------------------------
# Input checks
# ---------------------------------------------------------------------------------------------

def _vector(name, value, size):
    """Return ``value`` as a finite float vector of length ``size``; InputError otherwise."""
    try:
        out = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f'{name} must be an array of numbers') from None
    if out.shape != (size,):
        raise InputError(f'{name} has shape {out.shape}, expected ({size},)')
    if not np.all(np.isfinite(out)):
        raise InputError(f'{name} holds NaN or inf at index {int(np.argmin(np.isfinite(out)))}')
    return out


def _configuration(model, q):
    """Return the checked configuration, quaternion normalised."""
    q = _vector('q', q, model.nq)
    norm = np.linalg.norm(q[3:7])
    if norm < 1e-9:
        raise InputError('q[3:7], the base orientation quaternion (x y z w), is zero')
    q[3:7] /= norm
    return q


def _wrenches(model, f_ext, f_base):
    """Return checked body wrenches (n, 6) and base wrench (6,) (zeros where None)."""
    n = model.dof
    if f_ext is None:
        bodies = np.zeros((n, 6))
    else:
        bodies = np.array(f_ext, dtype=float)
        if bodies.shape != (n, 6):
            raise InputError(f'f_ext has shape {bodies.shape}, expected ({n}, 6)')
        if not np.all(np.isfinite(bodies)):
            raise InputError('f_ext holds NaN or inf')
    base = np.zeros(6) if f_base is None else _vector('f_base', f_base, 6)
    return bodies, base


# ---------------------------------------------------------------------------------------------
# Kinematics
# ---------------------------------------------------------------------------------------------

class _Kinematics(NamedTuple):
    """Base and body poses (world) and parent-to-body motion transforms at one configuration."""

    R_base: np.ndarray  # (3, 3) base orientation in the world
    p_base: np.ndarray  # (3,) base origin in the world
    X: np.ndarray       # (n, 6, 6) motion transform parent -> body i (parent -1: the base)
    R: np.ndarray       # (n, 3, 3) body orientations in the world
    p: np.ndarray       # (n, 3) body origins in the world


def _kinematics(model, q):
    """Return the placements of base and bodies (seed 003, section 2.1-2.2, any joint type)."""
    tree = model.tree
    n = tree.dof
    R_base = quaternion_to_matrix(q[3:7])
    p_base = q[:3].copy()
    X = np.empty((n, 6, 6))
    R = np.empty((n, 3, 3))
    p = np.empty((n, 3))
    for i in range(n):
        rot, trans = tree.joint_rotation[i], tree.joint_translation[i]
        qi = q[7 + i]
        if tree.joint_type[i] == PRISMATIC:
            local_R, local_p = rot, trans + rot @ tree.axis[i] * qi
        else:
            local_R, local_p = rot @ _axis_rotation(tree.axis[i], qi), trans
        X[i] = _motion_transform(local_R, local_p)
        j = tree.parent[i]
        R_parent, p_parent = (R_base, p_base) if j < 0 else (R[j], p[j])
        R[i] = R_parent @ local_R
        p[i] = p_parent + R_parent @ local_p
    return _Kinematics(R_base, p_base, X, R, p)


def neutral_configuration(model):
    """Return q with the base at the origin, identity orientation, and every joint at 0."""
    q = np.zeros(model.nq)
    q[6] = 1.0
    return q


def frame_placement(model, q, frame=None):
    """Return ``(R, p)``: orientation and origin in the world of a link frame (default: tip)."""
    q = _configuration(model, q)
    kin = _kinematics(model, q)
    return _frame_world(model, kin, frame)


def _frame_world(model, kin, frame):
    """Return the world placement of a named frame and the body it is attached to."""
    f = model.tree.frame(frame)
    R_body, p_body = (kin.R_base, kin.p_base) if f.body < 0 else (kin.R[f.body], kin.p[f.body])
    return R_body @ f.rotation, p_body + R_body @ f.translation


def configuration_rate(model, q, v):
    """Return dq/dt (7 + n): p' = R v_lin, quaternion' = quaternion (x) [w/2; 0], joints' = qd."""
    q = _configuration(model, q)
    v = _vector('v', v, model.nv)
    return _configuration_rate(q, v)


def _configuration_rate(q, v):
    """Return dq/dt for checked ``q`` and ``v`` (quaternion kinematics, Hamilton product)."""
    x, y, z, w = q[3:7]
    wx, wy, wz = v[3:6]
    out = np.empty(q.shape[0])
    out[:3] = quaternion_to_matrix(q[3:7]) @ v[:3]
    out[3] = 0.5 * (w * wx + y * wz - z * wy)
    out[4] = 0.5 * (w * wy + z * wx - x * wz)
    out[5] = 0.5 * (w * wz + x * wy - y * wx)
    out[6] = -0.5 * (x * wx + y * wy + z * wz)
    out[7:] = v[6:]
    return out


def integrate_configuration(model, q, v, dt=1.0):
    """
    Return the configuration reached from ``q`` moving at constant ``v`` for ``dt``.

    The base moves along the SE(3) exponential of its body twist ``v[:6] dt`` (Pinocchio's
    ``integrate`` on the free-flyer); the joints by ``v[6:] dt``. The quaternion is normalised.
    """
    q = _configuration(model, q)
    v = _vector('v', v, model.nv)
    phi, rho = v[3:6] * dt, v[:3] * dt
    theta = float(np.linalg.norm(phi))
    K = _skew(phi)
    if theta < 1e-6:  # series of the coefficients, exact to rounding below this angle
        a, b, c = 1.0 - theta ** 2 / 6.0, 0.5 - theta ** 2 / 24.0, 1.0 / 6.0 - theta ** 2 / 120.0
    else:
        a = math.sin(theta) / theta
        b = (1.0 - math.cos(theta)) / theta ** 2
        c = (theta - math.sin(theta)) / theta ** 3
    dR = np.eye(3) + a * K + b * (K @ K)
    V = np.eye(3) + b * K + c * (K @ K)
    R = quaternion_to_matrix(q[3:7])
    out = q.copy()
    out[:3] = q[:3] + R @ (V @ rho)
    out[3:7] = _quaternion_product(q[3:7], _matrix_to_quaternion(dR))
    out[3:7] /= np.linalg.norm(out[3:7])
    out[7:] = q[7:] + v[6:] * dt
    return out


def _quaternion_product(a, b):
    """Return the Hamilton product ``a b`` of quaternions in (x, y, z, w) order."""
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return np.array([aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz])


# ---------------------------------------------------------------------------------------------
# Dynamics
# ---------------------------------------------------------------------------------------------

class FloatingInertia(NamedTuple):
    """The blocks of the system inertia matrix (seed 003, Eq. 1 and section 3.3)."""

    H_b: np.ndarray   # (6, 6) base
    H_bm: np.ndarray  # (6, n) base-joint coupling
    H_m: np.ndarray   # (n, n) joints

    @property
    def H(self) -> np.ndarray:
        """Return the full (6 + n) x (6 + n) matrix [[H_b, H_bm], [H_bm^T, H_m]]."""
        return np.block([[self.H_b, self.H_bm], [self.H_bm.T, self.H_m]])


def floating_inertia_matrices(model, q):
    """Return H_b, H_bm, H_m (seed 003, Eq. 1) by the composite-rigid-body algorithm."""
    q = _configuration(model, q)
    return _inertia_blocks(model, _kinematics(model, q))


def _inertia_blocks(model, kin):
    """Return the inertia blocks for given kinematics (composite inertias, Saha's M~_i)."""
    tree, n = model.tree, model.dof
    Ic = np.array(model._I, copy=True)
    I_base = np.array(model._I_base, copy=True)
    for i in reversed(range(n)):
        j = tree.parent[i]
        moved = kin.X[i].T @ Ic[i] @ kin.X[i]
        if j < 0:
            I_base += moved
        else:
            Ic[j] += moved
    H_m = np.zeros((n, n))
    H_bm = np.zeros((6, n))
    for i in range(n):
        F = Ic[i] @ model._S[i]
        H_m[i, i] = model._S[i] @ F
        j = i
        while tree.parent[j] >= 0:
            F = kin.X[j].T @ F
            j = tree.parent[j]
            H_m[i, j] = H_m[j, i] = model._S[j] @ F
        H_bm[:, i] = kin.X[j].T @ F
    return FloatingInertia(0.5 * (I_base + I_base.T), H_bm, H_m)


def floating_mass_matrix(model, q):
    """Return the full (6 + n) x (6 + n) system inertia matrix H (seed 003, Eq. 1)."""
    return floating_inertia_matrices(model, q).H


def _gravity_acceleration(model, R_base):
    """Return the spatial gravity acceleration [R_b^T g; 0] in the base frame."""
    a_g = np.zeros(6)
    a_g[:3] = R_base.T @ model.gravity
    return a_g


def floating_inverse_dynamics(model, q, v, a, f_ext=None, f_base=None):
    """
    Return ``tau = H a + c - J^T f`` (6 + n): base wrench then joint forces (RNEA, seed 003 s. 4).

    ``tau[:6]`` is the wrench ``[force; torque about the base origin]`` in the base frame that
    the base needs to move with acceleration ``a[:6]``; zero for a truly free-floating system.
    """
    q = _configuration(model, q)
    v = _vector('v', v, model.nv)
    a = _vector('a', a, model.nv)
    f_ext, f_base = _wrenches(model, f_ext, f_base)
    return _rnea(model, _kinematics(model, q), v, a, f_ext, f_base)


def _rnea(model, kin, v, a, f_ext, f_base):
    """Return the generalized forces by the recursive Newton-Euler algorithm (seed 003 s. 4)."""
    tree, n = model.tree, model.dof
    S, inertia = model._S, model._I
    v_base = v[:6]
    a_base = a[:6] - _gravity_acceleration(model, kin.R_base)  # gravity as a base acceleration
    vel = np.empty((n, 6))
    acc = np.empty((n, 6))
    force = np.empty((n, 6))
    for i in range(n):
        j = tree.parent[i]
        v_p, a_p = (v_base, a_base) if j < 0 else (vel[j], acc[j])
        vJ = S[i] * v[6 + i]
        vel[i] = kin.X[i] @ v_p + vJ
        acc[i] = kin.X[i] @ a_p + S[i] * a[6 + i] + _crm(vel[i]) @ vJ
        force[i] = (inertia[i] @ acc[i] + _crf(vel[i]) @ (inertia[i] @ vel[i])
                    - f_ext[i])
    f_b = (model._I_base @ a_base + _crf(v_base) @ (model._I_base @ v_base) - f_base)
    tau = np.empty(model.nv)
    for i in reversed(range(n)):
        tau[6 + i] = S[i] @ force[i]
        j = tree.parent[i]
        moved = kin.X[i].T @ force[i]
        if j < 0:
            f_b += moved
        else:
            force[j] += moved
    tau[:6] = f_b
    return tau


def floating_nonlinear_terms(model, q, v):
    """Return ``c = [c_b; c_m]`` (6 + n): Coriolis, centrifugal and gravity (seed 003, Eq. 1)."""
    q = _configuration(model, q)
    v = _vector('v', v, model.nv)
    bodies, base = _wrenches(model, None, None)
    return _rnea(model, _kinematics(model, q), v, np.zeros(model.nv), bodies, base)


def floating_forward_dynamics(model, q, v, tau, f_ext=None, f_base=None):
    """
    Return ``a`` (6 + n) solving ``H a + c = tau + J^T f`` by the articulated-body algorithm.

    ``tau``: ``(6 + n,)`` (base wrench in the base frame, then joint forces, as Pinocchio's
    ``aba``) or ``(n,)`` joint forces only (free floating: no base wrench).
    """
    q = _configuration(model, q)
    v = _vector('v', v, model.nv)
    tau = _forces(model, tau)
    f_ext, f_base = _wrenches(model, f_ext, f_base)
    return _aba(model, _kinematics(model, q), v, tau, f_ext, f_base)


def _forces(model, tau):
    """Return ``tau`` as a checked (6 + n) vector (an (n,) argument means no base wrench)."""
    if np.shape(tau) == (model.dof,):
        return np.concatenate((np.zeros(6), _vector('tau', tau, model.dof)))
    return _vector('tau', tau, model.nv)


def _aba(model, kin, v, tau, f_ext, f_base):
    """Return the accelerations by the floating-base articulated-body algorithm."""
    tree, n = model.tree, model.dof
    S = model._S
    v_base = v[:6]
    vel = np.empty((n, 6))
    bias = np.empty((n, 6))
    IA = np.array(model._I, copy=True)
    pA = np.empty((n, 6))
    for i in range(n):
        j = tree.parent[i]
        vJ = S[i] * v[6 + i]
        vel[i] = kin.X[i] @ (v_base if j < 0 else vel[j]) + vJ
        bias[i] = _crm(vel[i]) @ vJ
        pA[i] = _crf(vel[i]) @ (IA[i] @ vel[i]) - f_ext[i]
    IA_base = np.array(model._I_base, copy=True)
    pA_base = _crf(v_base) @ (model._I_base @ v_base) - f_base
    U = np.empty((n, 6))
    D = np.empty(n)
    u = np.empty(n)
    for i in reversed(range(n)):
        U[i] = IA[i] @ S[i]
        D[i] = S[i] @ U[i]
        u[i] = tau[6 + i] - S[i] @ pA[i]
        Ia = IA[i] - np.outer(U[i], U[i]) / D[i]
        pa = pA[i] + Ia @ bias[i] + U[i] * (u[i] / D[i])
        X = kin.X[i]
        j = tree.parent[i]
        if j < 0:
            IA_base += X.T @ Ia @ X
            pA_base += X.T @ pa
        else:
            IA[j] += X.T @ Ia @ X
            pA[j] += X.T @ pa
    out = np.empty(model.nv)
    a_base = np.linalg.solve(IA_base, tau[:6] - pA_base)  # free-fall frame: gravity added below
    acc = np.empty((n, 6))
    for i in range(n):
        j = tree.parent[i]
        acc[i] = kin.X[i] @ (a_base if j < 0 else acc[j]) + bias[i]
        out[6 + i] = (u[i] - U[i] @ acc[i]) / D[i]
        acc[i] += S[i] * out[6 + i]
    out[:6] = a_base + _gravity_acceleration(model, kin.R_base)
    return out


def free_floating_inverse_dynamics(model, q, v, qdd, f_ext=None, f_base=None):
    """
    Return ``(tau_m, a_b)``: joint forces giving joint accelerations ``qdd`` with no base wrench.

    From seed 003 Eq. 1 with ``F_b = 0``: ``a_b = -H_b^-1 (H_bm qdd + c_b)`` and
    ``tau_m = H_bm^T a_b + H_m qdd + c_m`` (computed-torque control of a free-floating robot).
    """
    q = _configuration(model, q)
    v = _vector('v', v, model.nv)
    qdd = _vector('qdd', qdd, model.dof)
    f_ext, f_base = _wrenches(model, f_ext, f_base)
    kin = _kinematics(model, q)
    blocks = _inertia_blocks(model, kin)
    c = _rnea(model, kin, v, np.zeros(model.nv), f_ext, f_base)
    a_b = -np.linalg.solve(blocks.H_b, blocks.H_bm @ qdd + c[:6])
    return blocks.H_bm.T @ a_b + blocks.H_m @ qdd + c[6:], a_b


# ---------------------------------------------------------------------------------------------
# Centre of mass, momentum, Jacobians
# ---------------------------------------------------------------------------------------------

def system_center_of_mass(model, q):
    """Return the centre of mass of the whole system (world frame), seed 003's r_g."""
    q = _configuration(model, q)
    return _center_of_mass(model, _kinematics(model, q))


def _center_of_mass(model, kin):
    """Return the system centre of mass for given kinematics."""
    tree = model.tree
    weighted = model.base_mass * (kin.p_base + kin.R_base @ model.base_com)
    weighted = weighted + np.einsum('i,ij->j', tree.mass,
                                    kin.p + np.einsum('ijk,ik->ij', kin.R, tree.com))
    return weighted / model.total_mass


def system_momentum(model, q, v, about='com'):
    """
    Return the total momentum ``[linear; angular]`` (6,), world axes (seed 003, H v rows 0-5).

    ``about='com'``: angular momentum about the system centre of mass (Pinocchio's centroidal
    momentum ``hg``); ``about='origin'``: about the world origin. Both are conserved when no
    external force acts (zero gravity); with zero momentum the centre of mass stays put.
    """
    if about not in ('com', 'origin'):
        raise InputError(f"about must be 'com' or 'origin', not {about!r}")
    q = _configuration(model, q)
    v = _vector('v', v, model.nv)
    kin = _kinematics(model, q)
    blocks = _inertia_blocks(model, kin)
    h = blocks.H_b @ v[:6] + blocks.H_bm @ v[6:]  # spatial momentum, base frame at base origin
    linear = kin.R_base @ h[:3]
    angular = kin.R_base @ h[3:]  # about the base origin, world axes
    point = _center_of_mass(model, kin) if about == 'com' else np.zeros(3)
    return np.concatenate((linear, angular + np.cross(kin.p_base - point, linear)))


def floating_jacobian(model, q, frame=None):
    """
    Return J (6, 6 + n) with ``[v_frame; w] = J v`` (world axes; seed 003, J_t and J_r).

    ``J[:, :6]`` is the base part J_b, ``J[:, 6:]`` the joint part J_m. ``frame``: a link name,
    default the tree's tip link.
    """
    q = _configuration(model, q)
    kin = _kinematics(model, q)
    return _jacobian(model, kin, frame)


def _jacobian(model, kin, frame):
    """Return the world-aligned frame Jacobian for given kinematics."""
    tree = model.tree
    f = tree.frame(frame)
    _, point = _frame_world(model, kin, frame)
    J = np.zeros((6, model.nv))
    J[:3, :3] = kin.R_base
    J[:3, 3:6] = -_skew(point - kin.p_base) @ kin.R_base
    J[3:, 3:6] = kin.R_base
    i = f.body
    while i >= 0:
        axis = kin.R[i] @ tree.axis[i]
        if tree.joint_type[i] == PRISMATIC:
            J[:3, 6 + i] = axis
        else:
            J[:3, 6 + i] = np.cross(axis, point - kin.p[i])
            J[3:, 6 + i] = axis
        i = tree.parent[i]
    return J


def generalized_jacobian(model, q, frame=None):
    """
    Return the Generalized Jacobian Matrix J* = J_m - J_b H_b^-1 H_bm (6, n).

    For a free-floating system with zero momentum, the frame's twist (world axes) is
    ``J* qd``: the base reaction is built in.
    """
    q = _configuration(model, q)
    kin = _kinematics(model, q)
    J = _jacobian(model, kin, frame)
    blocks = _inertia_blocks(model, kin)
    return J[:, 6:] - J[:, :6] @ np.linalg.solve(blocks.H_b, blocks.H_bm)


# ---------------------------------------------------------------------------------------------
# Simulation
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FloatingSimulation:
    """A simulated trajectory: times ``t`` (K,), configurations ``q`` (K, 7+n), ``v`` (K, 6+n)."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray


def simulate_floating(model, q0, v0, duration, dt, tau=None, f_ext=None, f_base=None):
    """
    Integrate the motion by classical RK4 with step ``dt``, normalising the quaternion each step.

    ``tau``: None (no actuation), a constant array or a callable ``tau(t, q, v)``, returning
    ``(n,)`` joint forces (free floating) or ``(6 + n,)`` with a base wrench first. ``f_ext``
    (n, 6) and ``f_base`` (6,) are constant external wrenches (body frames).
    """
    q = _configuration(model, q0)
    v = _vector('v0', v0, model.nv)
    if not (math.isfinite(duration) and math.isfinite(dt)) or duration < 0.0 or dt <= 0.0:
        raise InputError(f'need duration >= 0 and dt > 0, got {duration!r} and {dt!r}')
    f_ext, f_base = _wrenches(model, f_ext, f_base)
    steps = int(math.ceil(duration / dt - 1e-9))
    times = np.linspace(0.0, steps * dt, steps + 1)

    def forces(t, q_t, v_t):
        if callable(tau):
            value = tau(t, q_t, v_t)
        else:
            value = np.zeros(model.dof) if tau is None else tau
        return _forces(model, value)

    def derivative(t, q_t, v_t):
        kin = _kinematics(model, q_t)
        return (_configuration_rate(q_t, v_t),
                _aba(model, kin, v_t, forces(t, q_t, v_t), f_ext, f_base))

    qs, vs = [q], [v]
    for k in range(steps):
        t = times[k]
        k1q, k1v = derivative(t, q, v)
        k2q, k2v = derivative(t + dt / 2, q + dt / 2 * k1q, v + dt / 2 * k1v)
        k3q, k3v = derivative(t + dt / 2, q + dt / 2 * k2q, v + dt / 2 * k2v)
        k4q, k4v = derivative(t + dt, q + dt * k3q, v + dt * k3v)
        q = q + dt / 6.0 * (k1q + 2.0 * k2q + 2.0 * k3q + k4q)
        v = v + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
        q[3:7] /= np.linalg.norm(q[3:7])
        qs.append(q)
        vs.append(v)
    return FloatingSimulation(times, np.array(qs), np.array(vs))
