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
The spatial-algebra helpers (``denoc_ros.spatial``) and the RK4 integrator, against references.

* Rotations and quaternions against SciPy's ``Rotation`` (same x y z w order): rotation vectors,
  extrinsic x-y-z Euler angles (URDF rpy), quaternion products; the cross-product matrix
  against ``np.cross``.
* Inertials against point clouds: the mass, centre and inertia of a union of point masses,
  summed point by point, is what combining the two clouds' inertials must give (exact).
* ``rk4``: in a vector space, passing ``integrate = q + v dt`` reproduces the default classical
  scheme; on SO(3) (a torque-free tumbling body, unit quaternion and body angular velocity)
  the error against SciPy DOP853 at rtol 1e-12 falls 16-fold per halved step (order 4).
"""

from denoc_ros import spatial
from denoc_ros.errors import InputError, URDFError
from denoc_ros.simulation import rk4
import numpy as np
import pytest
from robots_for_tests import assert_close, rng_for
from scipy.integrate import solve_ivp
from scipy.spatial.transform import Rotation


def unit(rng, size=()):
    v = rng.normal(size=size + (3,))
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


def test_skew_is_the_cross_product_and_batches():
    rng = rng_for('spatial skew')
    a, b = rng.normal(size=(5, 2, 3)), rng.normal(size=(5, 2, 3))
    S = spatial.skew(a)
    assert S.shape == (5, 2, 3, 3)
    assert_close(np.einsum('...ij,...j->...i', S, b), np.cross(a, b), 1e-15, 'a x b')
    assert_close(S, -np.swapaxes(S, -1, -2), 0.0, 'antisymmetric')
    with pytest.raises(InputError, match='3-vectors'):
        spatial.skew(np.zeros(4))


def test_axis_rotation_matches_rotation_vectors():
    rng = rng_for('spatial axis rotation')
    axis, angles = unit(rng), rng.uniform(-7.0, 7.0, 11)
    expected = Rotation.from_rotvec(angles[:, None] * axis).as_matrix()
    assert_close(spatial.axis_rotation(axis, angles), expected, 1e-14, 'one axis, (B,) angles')
    axes = unit(rng, (11,))
    expected = Rotation.from_rotvec(angles[:, None] * axes).as_matrix()
    assert_close(spatial.axis_rotation(axes, angles), expected, 1e-14, '(B, 3) axes')
    assert spatial.axis_rotation(axis, 0.3).shape == (3, 3)


def test_rpy_is_extrinsic_xyz():
    rng = rng_for('spatial rpy')
    for rpy in rng.uniform(-3.2, 3.2, (20, 3)):
        expected = Rotation.from_euler('xyz', rpy).as_matrix()   # Rz(yaw) Ry(pitch) Rx(roll)
        assert_close(spatial.rpy_to_matrix(rpy), expected, 1e-15, f'rpy {rpy}')


def test_quaternions_x_y_z_w_against_scipy():
    rng = rng_for('spatial quaternions')
    quats = rng.normal(size=(50, 4))
    # half-turns about each axis exercise every branch of the matrix-to-quaternion pivot
    quats[:3] = np.eye(4)[:3] + 1e-3 * rng.normal(size=(3, 4))
    R = spatial.quaternion_to_matrix(quats)
    assert_close(R, Rotation.from_quat(quats).as_matrix(), 1e-14, 'to matrix')
    back = spatial.matrix_to_quaternion(R)
    assert back.shape == (50, 4) and np.all(back[:, 3] >= 0.0)
    unit_quats = quats / np.linalg.norm(quats, axis=1, keepdims=True)
    assert_close(back, unit_quats * np.sign(unit_quats[:, 3:]), 1e-14, 'round trip, w >= 0')
    assert_close(spatial.matrix_to_quaternion(R[7]), back[7], 0.0, 'one matrix')
    a, b = unit_quats[:25], unit_quats[25:]
    ab = spatial.quaternion_product(a, b)
    expected = (Rotation.from_quat(a) * Rotation.from_quat(b)).as_quat()
    assert_close(ab * np.sign(ab[:, 3:]), expected * np.sign(expected[:, 3:]), 1e-15, 'a b')
    assert_close(spatial.quaternion_to_matrix(ab), R[:25] @ R[25:], 1e-14, 'R(a b) = R(a) R(b)')


def cloud_inertial(masses, points):
    """Return mass, centre and inertia about the centre of point masses, point by point."""
    m = masses.sum()
    c = masses @ points / m
    inertia = np.zeros((3, 3))
    for mi, p in zip(masses, points):
        d = p - c
        inertia += mi * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, inertia


@pytest.mark.parametrize('seed', range(5))
def test_combined_inertials_equal_the_union_of_point_clouds(seed):
    rng = rng_for('spatial combine', seed)
    ma, pa = rng.uniform(0.1, 2.0, 7), rng.normal(size=(7, 3))
    mb, pb = rng.uniform(0.1, 2.0, 5), rng.normal(size=(5, 3)) + 3.0
    m, c, inertia = spatial.combine_inertials(*cloud_inertial(ma, pa), *cloud_inertial(mb, pb))
    m_ref, c_ref, i_ref = cloud_inertial(np.r_[ma, mb], np.r_[pa, pb])
    assert m == pytest.approx(m_ref, rel=1e-15)
    assert_close(c, c_ref, 1e-14, 'centre of mass')
    assert_close(inertia, i_ref, 1e-13, 'inertia')
    assert_close(inertia, inertia.T, 0.0, 'symmetric')
    # about a point: the parallel-axis theorem against the cloud summed about that point
    point = rng.normal(size=3)
    about = sum(mi * ((p - point) @ (p - point) * np.eye(3) - np.outer(p - point, p - point))
                for mi, p in zip(ma, pa))
    m_a, c_a, i_a = cloud_inertial(ma, pa)
    assert_close(spatial.parallel_axis(m_a, c_a - point, i_a), about, 1e-13, 'parallel axis')


def test_combining_with_a_massless_part_adds_only_its_inertia():
    I_a, I_b = np.diag([1.0, 2.0, 2.5]), np.diag([0.1, 0.1, 0.1])
    m, c, inertia = spatial.combine_inertials(2.0, (1.0, 0, 0), I_a, 0.0, (9.0, 9, 9), I_b)
    assert m == 2.0 and np.array_equal(c, (1.0, 0, 0)) and np.array_equal(inertia, I_a + I_b)
    m, c, inertia = spatial.combine_inertials(0.0, (9.0, 9, 9), I_b, 2.0, (1.0, 0, 0), I_a)
    assert m == 2.0 and np.array_equal(c, (1.0, 0, 0))


@pytest.mark.parametrize('error', [InputError, URDFError])
@pytest.mark.parametrize('mass, com, inertia, match', [
    (-1.0, (0, 0, 0), np.eye(3), 'mass is -1.0'),
    (float('nan'), (0, 0, 0), np.eye(3), 'mass is nan'),
    (1.0, (0, 1), np.eye(3), 'com must be 3 finite numbers'),
    (1.0, (0, 0, 0), np.eye(2), '3x3'),
    (1.0, (0, 0, 0), np.diag([1.0, np.inf, 1.0]), 'finite'),
    (1.0, (0, 0, 0), [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]], 'not symmetric'),
    (1.0, (0, 0, 0), np.diag([1.0, -0.1, 1.0]), 'not positive semi-definite'),
    (1.0, (0, 0, 0), np.diag([0.1, 0.1, 0.3]), r'triangle inequality A \+ B >= C'),
    (0.0, (0, 0, 0), np.eye(3), 'massless body cannot have rotational inertia'),
    ('heavy', (0, 0, 0), np.eye(3), 'must be numbers'),
])
def test_check_inertial_names_the_fault_with_the_callers_error(error, mass, com, inertia, match):
    with pytest.raises(error, match=f"^link 'l2': .*{match}"):
        spatial.check_inertial("link 'l2'", mass, com, inertia, error=error)


def test_check_inertial_accepts_real_bodies_and_returns_floats():
    mass, com, inertia = spatial.check_inertial('x', 2, [0, 1, 2], np.diag([1, 2, 3]))
    assert isinstance(mass, float) and com.dtype == float and inertia.dtype == float
    spatial.check_inertial('point mass', 1.0, (0, 0, 0), np.zeros((3, 3)))
    spatial.check_inertial('rod', 1.0, (0, 0, 0), np.diag([1.0, 1.0, 0.0]))
    spatial.check_inertial('flange', 0.0, (0, 0, 0), 1e-6 * np.eye(3), massless_inertia=True)
    # slack: round-off of a CAD export below rtol |trace| + m length_tol^2 passes
    almost = np.diag([0.1, 0.1, 0.2 + 1e-8])
    with pytest.raises(InputError, match='triangle'):
        spatial.check_inertial('strict', 1.0, (0, 0, 0), almost)
    spatial.check_inertial('lenient', 1.0, (0, 0, 0), almost, rtol=1e-6)


def test_read_only_copies_and_freezes():
    source = np.arange(3.0)
    out = spatial.read_only(source)
    assert not out.flags.writeable and out is not source and np.shares_memory(out, source) is False
    source[0] = 9.0
    assert out[0] == 0.0
    assert spatial.read_only([1, 2], dtype=np.int64).dtype == np.int64
    with pytest.raises(InputError, match=r'model array has shape \(3,\), expected \(4,\)'):
        spatial.read_only(source, shape=(4,), what='model array')


def pendulum_like(t, q, v):
    """Return the accelerations of two pendulums coupled by a spring (a vector space)."""
    return np.array([-9.81 * np.sin(q[0]) + 0.5 * (q[1] - q[0]), -4.0 * np.sin(q[1]) - q[0]])


def test_rk4_with_the_vector_space_integrate_is_the_classical_scheme():
    q0, v0 = np.array([1.0, -0.5]), np.array([0.3, 2.0])
    t, q, v = rk4(pendulum_like, q0, v0, 1.0, 200)
    assert t.shape == (201,) and q.shape == v.shape == (201, 2) and t[-1] == 1.0
    _, q2, v2 = rk4(pendulum_like, q0, v0, 1.0, 200, integrate=lambda x, u, dt: x + u * dt)
    assert_close(q2, q, 1e-13, 'q')   # CF4 with commuting velocities = classical RK4
    assert_close(v2, v, 1e-13, 'v')
    ref = solve_ivp(lambda s, x: np.r_[x[2:], pendulum_like(s, x[:2], x[2:])], (0.0, 1.0),
                    np.r_[q0, v0], method='DOP853', rtol=1e-12, atol=1e-12).y[:, -1]
    assert_close(np.r_[q[-1], v[-1]], ref, 1e-8, 'against DOP853')


INERTIA = np.array([1.0, 2.0, 3.5])   # principal moments of a tumbling body [kg m^2]


def euler_equations(t, quat, w):
    """Torque-free rigid body: I w' = -w x I w (body axes)."""
    return -np.cross(w, INERTIA * w) / INERTIA


def rotate_quaternion(quat, w, dt):
    """Return ``quat exp(w dt)``: the SO(3) exponential on the right, by the spatial helpers."""
    angle = np.linalg.norm(w) * dt
    axis = w / np.linalg.norm(w) if angle > 0.0 else np.array([1.0, 0.0, 0.0])
    step = spatial.matrix_to_quaternion(spatial.axis_rotation(axis, angle))
    out = spatial.quaternion_product(quat, step)
    return out / np.linalg.norm(out)


def test_rk4_on_a_lie_group_keeps_fourth_order():
    q0 = spatial.matrix_to_quaternion(spatial.rpy_to_matrix((0.3, -0.2, 1.0)))
    w0 = np.array([0.2, 3.0, 0.4])   # near the unstable intermediate axis: a strong tumble

    def rate(t, x):
        quat, w = x[:4], x[4:]
        return np.r_[0.5 * spatial.quaternion_product(quat, np.r_[w, 0.0]),
                     euler_equations(t, quat, w)]

    ref = solve_ivp(rate, (0.0, 2.0), np.r_[q0, w0], method='DOP853', rtol=1e-12,
                    atol=1e-13).y[:, -1]
    R_ref = spatial.quaternion_to_matrix(ref[:4])
    errors = []
    for steps in (40, 80, 160):
        _, q, v = rk4(euler_equations, q0, w0, 2.0, steps, integrate=rotate_quaternion)
        assert abs(np.linalg.norm(q[-1]) - 1.0) < 1e-14
        errors.append(max(np.abs(spatial.quaternion_to_matrix(q[-1]) - R_ref).max(),
                          np.abs(v[-1] - ref[4:]).max()))
    ratios = [errors[i] / errors[i + 1] for i in range(2)]
    assert min(ratios) > 12.0, (errors, ratios)   # 16 for order 4; 4 for order 2
    assert errors[-1] < 1e-6, errors
