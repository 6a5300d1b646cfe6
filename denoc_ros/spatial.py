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
Spatial algebra: the elementary rotation, quaternion and rigid-body inertia helpers, once.

Every module of the library takes these from here (NumPy; the compiled kernels inline their
own scalar arithmetic, except the quaternion's rotation, :func:`quaternion_rotation`, which
they compile from here). Conventions, stated once for the whole library:

* **Spatial 6-vectors at the public API are [linear; angular]**, as in Pinocchio: twists
  ``[v; w]`` (linear velocity of a named point, angular velocity), wrenches ``[force; torque]``
  (torque about a named point), Jacobian rows ``[linear; angular]``. A seed's own order (Saha's
  twist ``t = [w; v]``) may live inside an algorithm, never at its inputs or outputs.
* A rotation matrix ``R`` of frame B in frame A has B's axes as columns: ``x_A = R x_B``.
* Quaternions are unit quaternions in the order **x y z w** (Pinocchio's, Eigen's ``coeffs()``,
  SciPy's), Hamilton product; :func:`matrix_to_quaternion` returns the one with ``w >= 0``.
* URDF ``rpy = (roll, pitch, yaw)`` means ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (fixed axes).
* A rigid body's inertial is its mass ``m``, centre of mass ``c`` (3,) and rotational inertia
  ``I`` (3, 3) about the centre of mass, all in the axes of one frame (Craig ch. 6, seed 002).
* A free-flyer configuration (Pinocchio's ``JointModelFreeFlyer``, then 1-DoF joints) is
  ``q = [position (3), quaternion x y z w (4), joints]``, its velocity ``v = [linear (3),
  angular (3), joint rates]`` with both base parts in the base frame.
* ``skew``, ``axis_rotation``, the quaternion and free-flyer functions take leading batch axes
  ``(...)``.
"""

import math

import numpy as np

from .errors import InputError

__all__ = [
    'axis_rotation', 'check_inertial', 'combine_inertials', 'free_flyer_rate',
    'integrate_free_flyer', 'matrix_to_quaternion', 'parallel_axis', 'quaternion_product',
    'quaternion_rotation', 'quaternion_to_matrix', 'read_only', 'rotate_inertia',
    'rpy_to_matrix', 'skew',
]


# ---------------------------------------------------------------------------------------------
# Rotations
# ---------------------------------------------------------------------------------------------

def skew(a):
    """Return the cross-product matrices ``[a]x`` (..., 3, 3) of ``a`` (..., 3): a x b = [a]x b."""
    a = np.asarray(a, dtype=float)
    if a.shape[-1:] != (3,):
        raise InputError(f'skew takes 3-vectors (..., 3), got shape {a.shape}')
    out = np.zeros(a.shape + (3,))
    out[..., 0, 1] = -a[..., 2]
    out[..., 0, 2] = a[..., 1]
    out[..., 1, 0] = a[..., 2]
    out[..., 1, 2] = -a[..., 0]
    out[..., 2, 0] = -a[..., 1]
    out[..., 2, 1] = a[..., 0]
    return out


def axis_rotation(axis, angle):
    """
    Return the rotation by ``angle`` about the unit ``axis`` (Rodrigues' formula).

    ``R = 1 + sin(angle) A + (1 - cos(angle)) A^2``, ``A = [a]x``. ``axis`` (..., 3) must be a
    unit vector (it is not normalised); ``angle`` (...) broadcasts against it: one axis (3,) and
    angles (B,) give (B, 3, 3).
    """
    A = skew(axis)
    angle = np.asarray(angle, dtype=float)
    s = np.sin(angle)[..., None, None]
    c = np.cos(angle)[..., None, None]
    return np.eye(3) + s * A + (1.0 - c) * (A @ A)


def rpy_to_matrix(rpy):
    """Return the URDF rotation ``R = Rz(yaw) Ry(pitch) Rx(roll)``, rpy = (roll, pitch, yaw)."""
    roll, pitch, yaw = rpy
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


# ---------------------------------------------------------------------------------------------
# Quaternions (x y z w)
# ---------------------------------------------------------------------------------------------

def quaternion_rotation(x, y, z, w):
    """
    Return the rotation of the quaternion x y z w as its 9 entries (row-major), normalised.

    ``s = 2 / |q|^2``, ``R = 1 - s [[y^2 + z^2, ...]] ...`` (the Euler-Rodrigues form). Plain
    arithmetic on numbers or arrays alike: the compiled free-flyer kinematics
    (:mod:`denoc_ros.dynamics.kinematics`) compiles this same function.
    """
    s = 2.0 / (x * x + y * y + z * z + w * w)
    return (1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w),
            s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w),
            s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y))


def quaternion_to_matrix(quat):
    """Return the rotation matrices (..., 3, 3) of quaternions (x, y, z, w), normalised first."""
    q = np.asarray(quat, dtype=float)
    if q.shape[-1:] != (4,):
        raise InputError(f'a quaternion has 4 entries (x, y, z, w), got shape {q.shape}')
    entries = quaternion_rotation(q[..., 0], q[..., 1], q[..., 2], q[..., 3])
    return np.stack(entries, axis=-1).reshape(q.shape[:-1] + (3, 3))


def matrix_to_quaternion(R):
    """Return the unit quaternions (x, y, z, w), ``w >= 0``, of rotation matrices (..., 3, 3)."""
    R = np.asarray(R, dtype=float)
    if R.shape[-2:] != (3, 3):
        raise InputError(f'a rotation matrix is 3x3, got shape {R.shape}')
    if R.ndim > 2:
        flat = R.reshape(-1, 3, 3)
        return np.array([_matrix_to_quaternion(r) for r in flat]).reshape(R.shape[:-2] + (4,))
    return _matrix_to_quaternion(R)


def _matrix_to_quaternion(R):
    """Return the quaternion of one rotation matrix (Shepperd's method: the largest pivot)."""
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


def quaternion_product(a, b):
    """Return the Hamilton product ``a b`` of quaternions in (x, y, z, w) order, (..., 4)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ax, ay, az, aw = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bx, by, bz, bw = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack((aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw,
                     aw * bw - ax * bx - ay * by - az * bz), axis=-1)


# ---------------------------------------------------------------------------------------------
# Free-flyer configurations (q = [p, quaternion x y z w, joints], v = [v, w (base frame), qd])
# ---------------------------------------------------------------------------------------------

def integrate_free_flyer(q, v, dt=1.0):
    """
    Return ``q exp(v dt)``: the configuration reached moving at constant ``v`` for ``dt``.

    Pinocchio's ``integrate`` on a free flyer followed by 1-DoF joints: the base moves along
    the SE(3) exponential of its body twist ``(rho, phi) = v[:6] dt``, ``R' = R exp([phi]x)``,
    ``p' = p + R V rho`` with ``V = 1 + b [phi]x + c [phi]x^2``, ``b = (1 - cos t) / t^2``,
    ``c = (t - sin t) / t^3``, ``t = |phi|``; the joints move by ``v[6:] dt``. ``q`` (..., 7 + n),
    ``v`` (..., 6 + n) and ``dt`` (scalar or (...)) broadcast; the quaternion comes out
    normalised. No checks: callers check sizes (see :mod:`denoc_ros.floating_base`).
    """
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    dt = np.asarray(dt, dtype=float)[..., None]
    phi, rho = v[..., 3:6] * dt, v[..., :3] * dt
    theta = np.linalg.norm(phi, axis=-1, keepdims=True)
    half_sinc = np.sinc(theta / (2.0 * np.pi))  # sin(t/2) / (t/2), exact at t = 0
    b = 0.5 * half_sinc * half_sinc
    t2 = theta * theta
    # (t - sin t) / t^3: its series below t = 0.1 (next term t^10 / 13! < 2e-20), where the
    # difference would cancel.
    small = theta < 0.1
    safe = np.where(small, 1.0, theta)
    c = np.where(small, 1.0 / 6.0 - t2 / 120.0 * (1.0 - t2 / 42.0 * (1.0 - t2 / 72.0 * (
        1.0 - t2 / 110.0))), (safe - np.sin(safe)) / safe ** 3)
    phi_rho = np.cross(phi, rho)
    step = rho + b * phi_rho + c * np.cross(phi, phi_rho)  # V rho
    rotation = quaternion_to_matrix(q[..., 3:7])
    position = q[..., :3] + np.einsum('...ij,...j->...i', rotation, step)
    turn = np.concatenate((0.5 * half_sinc * phi, np.cos(0.5 * theta)), axis=-1)
    quaternion = quaternion_product(q[..., 3:7], turn)
    quaternion /= np.linalg.norm(quaternion, axis=-1, keepdims=True)
    joints = q[..., 7:] + v[..., 6:] * dt
    batch = np.broadcast_shapes(position.shape[:-1], joints.shape[:-1])
    return np.concatenate([np.broadcast_to(part, batch + part.shape[-1:])
                           for part in (position, quaternion, joints)], axis=-1)


def free_flyer_rate(q, v):
    """
    Return ``dq/dt`` (..., 7 + n) of a free-flyer configuration moving with velocity ``v``.

    ``p' = R v_lin``, ``quaternion' = 1/2 quaternion (x) [w; 0]`` (Hamilton product, ``w`` the
    base-frame angular velocity), ``joints' = qd``; the quaternion is normalised first.
    """
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    quaternion = q[..., 3:7] / np.linalg.norm(q[..., 3:7], axis=-1, keepdims=True)
    position = np.einsum('...ij,...j->...i', quaternion_to_matrix(quaternion), v[..., :3])
    spin = np.concatenate((v[..., 3:6], np.zeros(v.shape[:-1] + (1,))), axis=-1)
    turning = 0.5 * quaternion_product(quaternion, spin)
    joints = v[..., 6:]
    batch = np.broadcast_shapes(position.shape[:-1], joints.shape[:-1])
    return np.concatenate([np.broadcast_to(part, batch + part.shape[-1:])
                           for part in (position, turning, joints)], axis=-1)


# ---------------------------------------------------------------------------------------------
# Rigid-body inertials (mass, centre of mass, inertia about the centre of mass)
# ---------------------------------------------------------------------------------------------

def parallel_axis(mass, offset, inertia):
    """
    Return ``I + m (|d|^2 1 - d d^T)``: the inertia about a point ``d`` away from the COM.

    Parallel-axis (Steiner) theorem (Craig ch. 6): ``inertia`` is about the centre of mass,
    ``offset`` ``d`` (3,) the vector between the centre of mass and the new point (its sign
    does not matter), in the same axes.
    """
    d = np.asarray(offset, dtype=float)
    return inertia + mass * (np.dot(d, d) * np.eye(3) - np.outer(d, d))


def rotate_inertia(rotation, inertia):
    """Return ``R I R^T`` (an inertia given in frame B's axes, in frame A's), symmetrised."""
    out = rotation @ inertia @ rotation.T
    return 0.5 * (out + out.T)


def combine_inertials(m_a, c_a, I_a, m_b, c_b, I_b):
    """
    Return ``(m, c, I)`` of two rigid bodies welded together, all in one frame (exact).

    ``m = m_a + m_b``, ``c = (m_a c_a + m_b c_b) / m`` and, by the parallel-axis theorem about
    the joint centre of mass, ``I = I_a + I_b + m_a m_b / m (|d|^2 1 - d d^T)`` with
    ``d = c_a - c_b`` (Craig ch. 6). A massless part adds only its inertia and leaves the
    centre of mass where the other one has it (``c_a`` if both are massless).
    """
    m_a, m_b = float(m_a), float(m_b)
    c_a, c_b = np.asarray(c_a, dtype=float), np.asarray(c_b, dtype=float)
    I_a, I_b = np.asarray(I_a, dtype=float), np.asarray(I_b, dtype=float)
    m = m_a + m_b
    if m_b == 0.0:
        return m, c_a, _symmetric(I_a + I_b)
    if m_a == 0.0:
        return m, c_b, _symmetric(I_a + I_b)
    c = (m_a * c_a + m_b * c_b) / m
    return m, c, _symmetric(parallel_axis(m_a * m_b / m, c_a - c_b, I_a + I_b))


def check_inertial(what, mass, com, inertia, error=InputError, rtol=1e-9, length_tol=0.0,
                   massless_inertia=False):
    """
    Return ``(mass, com (3,), inertia (3, 3) symmetrised)`` as floats, or raise ``error``.

    Checks that every real rigid body passes: the mass finite and >= 0, the centre of mass 3
    finite numbers, the inertia a finite symmetric 3x3 matrix, positive semi-definite, whose
    principal moments obey the triangle inequality ``A + B >= C`` (a point mass, all zero,
    passes). The tolerance of the inertia checks is ``rtol |trace I| + mass length_tol^2`` (a
    deviation the size of the mass spread over ``length_tol`` metres is round-off). A massless
    body with rotational inertia is rejected unless ``massless_inertia`` is true (URDFs carry
    such links). Messages start with ``what`` (e.g. ``"link 'l2'"``); ``error`` is the
    exception class the caller raises (InputError, URDFError).
    """
    try:
        mass = float(mass)
        com = np.array(com, dtype=float).reshape(-1)
        inertia = np.array(inertia, dtype=float)
    except (TypeError, ValueError) as exc:
        raise error(f'{what}: mass, com and inertia must be numbers: {exc}') from None
    if not math.isfinite(mass) or mass < 0.0:
        raise error(f'{what}: mass is {mass}; it must be finite and non-negative')
    if com.shape != (3,) or not np.all(np.isfinite(com)):
        raise error(f'{what}: com must be 3 finite numbers (x, y, z), got {com.tolist()}')
    if inertia.shape != (3, 3):
        raise error(f'{what}: inertia must be a 3x3 matrix, got shape {inertia.shape}')
    if not np.all(np.isfinite(inertia)):
        raise error(f'{what}: inertia must be a finite 3x3 matrix, got {_fmt(inertia)}')
    symmetric = _symmetric(inertia)
    slack = rtol * abs(float(np.trace(symmetric))) + mass * length_tol ** 2
    if np.max(np.abs(inertia - inertia.T)) > slack:
        raise error(f'{what}: the inertia is not symmetric: {_fmt(inertia)}')
    moments = np.linalg.eigvalsh(symmetric)
    if moments[0] < -slack:
        raise error(f'{what}: the inertia is not positive semi-definite '
                    f'(principal moments {_fmt(moments)})')
    if moments[2] > moments[0] + moments[1] + slack:
        raise error(f'{what}: the inertia violates the triangle inequality A + B >= C '
                    f'(principal moments {_fmt(moments)}); no rigid body has this inertia')
    if mass == 0.0 and not massless_inertia and np.any(symmetric != 0.0):
        raise error(f'{what}: a massless body cannot have rotational inertia')
    return mass, com, symmetric


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------

def read_only(array, dtype=float, shape=None, what='array'):
    """
    Return a read-only copy of ``array`` (as ``dtype``): the arrays of an immutable model.

    With ``shape``, raise InputError naming ``what`` if the copy has another shape.
    """
    out = np.array(array, dtype=dtype, copy=True)
    if shape is not None and out.shape != tuple(shape):
        raise InputError(f'{what} has shape {out.shape}, expected {tuple(shape)}')
    out.setflags(write=False)
    return out


def _symmetric(matrix):
    """Return the symmetric part of a square matrix (removes rounding asymmetry)."""
    return 0.5 * (matrix + matrix.T)


def _fmt(array):
    """Format an array compactly for an error message."""
    return np.array2string(np.asarray(array), precision=6, separator=', ')
