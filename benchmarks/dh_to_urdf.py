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
Rebuild a Robotics Toolbox standard-DH robot (``rtb.DHRobot``) as URDF text, dynamics included.

Frames (the convention of the bundled standard-DH URDFs, see ``urdf/README.md``): DH frame i
is ``T_i = T_{i-1} Rz(theta_i) Tz(d_i) Tx(a_i) Rx(alpha_i)``. URDF link i's frame is DH frame
i-1 moved by the joint, ``T_{i-1} Rz(theta_i) Tz(d_i)``, so joint i turns (or slides) about its
own z, and the origin of joint i+1 is the fixed rest of DH row i, ``Tx(a_i) Rx(alpha_i)``,
followed by the fixed part of row i+1 (``Tz(d)`` and the offset of a revolute joint, or
``Rz(theta)`` and the offset of a prismatic one). The toolbox's ``base`` transform goes in
front of joint 1, its ``tool`` transform after DH frame n (a fixed joint to link ``tool0``).
Joint positions are the toolbox's ``q``.

Dynamics: link i's mass ``m``, mass centre ``r`` and inertia ``I`` (about the mass centre) are
given by the toolbox in DH frame i, i.e. ``Tx(a_i) Rx(alpha_i)`` from URDF link i: the
``<inertial>`` origin is that transform applied to ``r``, with ``rpy = (alpha_i, 0, 0)`` so
that ``I`` is written unchanged. Motor inertia ``Jm``, gear ratio ``G`` and friction ``B``,
``Tc`` have no URDF counterpart: :func:`rigid_body_only` sets them to zero on the toolbox
side, so that both describe the same rigid-body system.

Some toolbox tensors are not physical (``A + B >= C`` fails), which ``denoc_ros.load_urdf``
rejects. :func:`make_physical` repairs them first, preferably without changing the dynamics:
a tensor ``k (1 - a a^T)`` that is symmetric about a revolute joint's axis ``a`` can be moved
from the parent body (or the fixed base) to the child across that joint without changing
M(q), the Coriolis terms or g(q) (the kinetic energy of the pair is unchanged because the
relative rotation is about ``a``). Where no such move helps, the smallest principal moments
are raised in the toolbox model itself, so both sides still describe the same (changed)
robot; every change is returned as a note.
"""

import math

import numpy as np

INERTIA_SLACK = 1e-9   # relative, when deciding that a tensor is physical
INERTIA_KEYS = (('ixx', (0, 0)), ('ixy', (0, 1)), ('ixz', (0, 2)), ('iyy', (1, 1)),
                ('iyz', (1, 2)), ('izz', (2, 2)))


def _rot_x(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _rot_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _homogeneous(rotation=None, translation=(0.0, 0.0, 0.0)):
    T = np.eye(4)
    if rotation is not None:
        T[:3, :3] = rotation
    T[:3, 3] = translation
    return T


def matrix_to_rpy(R):
    """
    Return URDF roll, pitch, yaw with ``R = Rz(yaw) Ry(pitch) Rx(roll)``.

    Near pitch = +-90 deg the roll is set to 0 and the yaw takes the whole turn about z.
    """
    sy = math.hypot(R[0, 0], R[1, 0])
    if sy > 1e-12:
        return (math.atan2(R[2, 1], R[2, 2]), math.atan2(-R[2, 0], sy),
                math.atan2(R[1, 0], R[0, 0]))
    return (0.0, math.atan2(-R[2, 0], sy), math.atan2(-R[0, 1], R[1, 1]))


def _fmt(values):
    return ' '.join(repr(float(v)) for v in values)


def _origin(T):
    return f'<origin xyz="{_fmt(T[:3, 3])}" rpy="{_fmt(matrix_to_rpy(T[:3, :3]))}"/>'


def _to_array(T):
    """Return an SE3-like object (spatialmath SE3 or an array) as a 4x4 array."""
    return np.array(getattr(T, 'A', T), dtype=float).reshape(4, 4)


def _joint_fixed_part(link):
    """Return the fixed transform in front of a DH joint's motion (about/along its z)."""
    if link.isprismatic:
        return _homogeneous(_rot_z(link.theta), (0.0, 0.0, link.offset))
    return _homogeneous(_rot_z(link.offset), (0.0, 0.0, link.d))


def _dh_rest(link):
    """Return ``Tx(a) Rx(alpha)``: DH frame i seen from URDF link i."""
    return _homogeneous(_rot_x(link.alpha), (link.a, 0.0, 0.0))


def is_physical(inertia):
    """Return whether a rotational inertia is positive semi-definite with ``A + B >= C``."""
    principal = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    slack = INERTIA_SLACK * max(float(np.sum(np.abs(principal))), 1e-300)
    return bool(principal[0] >= -slack and principal[2] <= principal[0] + principal[1] + slack)


def _symmetric_about(axis, k):
    axis = np.asarray(axis, dtype=float)
    return k * (np.eye(3) - np.outer(axis, axis))


def _smallest_transfer(parent_inertia, child_inertia, axis_parent, axis_child):
    """Return the smallest k (or None) moving ``k (1 - a a^T)`` to the child that fixes both."""
    def works(k):
        child_ok = is_physical(child_inertia + _symmetric_about(axis_child, k))
        parent_ok = (parent_inertia is None
                     or is_physical(parent_inertia - _symmetric_about(axis_parent, k)))
        return child_ok and parent_ok
    scale = float(np.trace(child_inertia)) + (
        float(np.trace(parent_inertia)) if parent_inertia is not None else 0.0)
    k = scale * 1e-6
    while k <= 10.0 * scale and not works(k):
        k *= 1.25
    if not works(k):
        return None
    lo, hi = 0.0, k                      # bisect down to the smallest k, then keep a margin
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if works(mid) else (mid, hi)
    k = hi * 1.01
    return k if works(k) else hi


def _set_inertia(link, inertia):
    setattr(link, 'I', inertia)     # the toolbox's name for it


def make_physical(robot):
    """
    Make every link inertia of ``robot`` physical, in place; return notes on what changed.

    First choice: move ``k (1 - a a^T)`` across revolute joint i (axis ``a`` = z of DH frame
    i-1) from link i-1 (or the fixed base, for i = 1) to link i: the dynamics are unchanged.
    Otherwise the smallest principal moments of the tensor are raised until ``A + B = C`` (a
    changed robot, the same on both sides).
    """
    notes = []
    links = robot.links
    for i, link in enumerate(links):
        inertia = np.array(link.I, dtype=float)
        if is_physical(inertia):
            continue
        if not link.isprismatic:
            # joint i's axis is z of DH frame i-1: (0, sin alpha_i, cos alpha_i) in DH frame i
            axis_child = (0.0, math.sin(link.alpha), math.cos(link.alpha))
            parent_inertia = np.array(links[i - 1].I, dtype=float) if i > 0 else None
            k = _smallest_transfer(parent_inertia, inertia, (0.0, 0.0, 1.0), axis_child)
            if k is not None:
                _set_inertia(link, inertia + _symmetric_about(axis_child, k))
                where = 'the fixed base'
                if i > 0:
                    _set_inertia(links[i - 1],
                                 parent_inertia - _symmetric_about((0.0, 0.0, 1.0), k))
                    where = f'link {i}'
                notes.append(f'link {i + 1}: inertia {np.diag(inertia).round(6).tolist()} '
                             f'violates A + B >= C; moved {k:.6g} kg m^2 symmetric about '
                             f'joint {i + 1} axis from {where} (dynamics unchanged)')
                continue
        values, vectors = np.linalg.eigh(0.5 * (inertia + inertia.T))
        values = np.maximum(values, 0.0)
        deficit = values[2] - values[0] - values[1]
        if deficit > 0.0:
            values[0] += deficit
        _set_inertia(link, vectors @ np.diag(values) @ vectors.T)
        notes.append(f'link {i + 1}: inertia {np.diag(inertia).round(6).tolist()} violates '
                     f'A + B >= C; raised to {np.diag(link.I).round(6).tolist()} in the '
                     'toolbox model too (a changed robot, the same on both sides)')
    if hasattr(robot, 'delete_rne'):
        robot.delete_rne()          # the toolbox's C rne caches link parameters
    return notes


def rigid_body_only(robot):
    """Set motor inertia, gear ratio and friction of every link to zero, in place."""
    for link in robot.links:
        link.Jm = 0.0
        link.G = 0.0
        link.B = 0.0
        link.Tc = np.zeros(2)
    if hasattr(robot, 'delete_rne'):
        robot.delete_rne()
    return robot


def dh_to_urdf(robot, name=None):
    """
    Return URDF text for a standard-DH ``rtb.DHRobot``: links ``link1..n``, joints ``joint1..n``.

    Root link ``base_link``, tip link ``tool0`` (DH frame n times the toolbox's tool
    transform). Joint limits come from ``qlim`` (continuous joints where there is none).
    """
    if getattr(robot, 'mdh', False):
        raise ValueError(f'{robot.name}: modified DH is not supported, only standard DH')
    name = name or robot.name.replace(' ', '_')
    links = robot.links
    lines = ['<?xml version="1.0"?>',
             f'<!-- generated by benchmarks/dh_to_urdf.py from the Robotics Toolbox model '
             f'{robot.name} (standard DH) -->',
             f'<robot name="{name}">', '  <link name="base_link"/>']
    previous_rest = _to_array(robot.base)
    qlim = getattr(robot, 'qlim', None)
    for i, link in enumerate(links):
        j = i + 1
        origin = previous_rest @ _joint_fixed_part(link)
        kind = 'prismatic' if link.isprismatic else 'revolute'
        limits = None
        if qlim is not None and np.all(np.isfinite(qlim[:, i])) and qlim[0, i] < qlim[1, i]:
            limits = (float(qlim[0, i]), float(qlim[1, i]))
        if limits is None:
            if link.isprismatic:
                limits = (-10.0, 10.0)
            else:
                kind = 'continuous'
        lines += [f'  <joint name="joint{j}" type="{kind}">',
                  f'    <parent link="{"base_link" if i == 0 else f"link{i}"}"/>',
                  f'    <child link="link{j}"/>',
                  f'    {_origin(origin)}',
                  '    <axis xyz="0 0 1"/>']
        if limits is not None:
            lines.append(f'    <limit lower="{limits[0]!r}" upper="{limits[1]!r}" '
                         'effort="1000" velocity="10"/>')
        lines.append('  </joint>')
        rest = _dh_rest(link)
        com = rest[:3, :3] @ np.asarray(link.r, dtype=float).reshape(3) + rest[:3, 3]
        inertia = np.asarray(link.I, dtype=float).reshape(3, 3)
        inertial_origin = (f'<origin xyz="{_fmt(com)}" rpy="{_fmt((link.alpha, 0.0, 0.0))}"/>')
        lines += [f'  <link name="link{j}">', '    <inertial>', f'      {inertial_origin}',
                  f'      <mass value="{float(link.m)!r}"/>',
                  '      <inertia ' + ' '.join(
                      f'{key}="{float(inertia[r, c])!r}"' for key, (r, c) in INERTIA_KEYS) + '/>',
                  '    </inertial>', '  </link>']
        previous_rest = rest
    tool = previous_rest @ _to_array(robot.tool)
    lines += ['  <joint name="tool0_fixed_joint" type="fixed">',
              f'    <parent link="link{len(links)}"/>', '    <child link="tool0"/>',
              f'    {_origin(tool)}', '  </joint>', '  <link name="tool0"/>', '</robot>', '']
    return '\n'.join(lines)
