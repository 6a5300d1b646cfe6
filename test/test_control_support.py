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

"""Trajectory sampling, the computed-torque law, and the MuJoCo arm, each against an oracle."""

from conftest import bundled_urdfs
import denoc_ros as dr
from denoc_ros.feedforward import computed_torque
from denoc_ros.mujoco_arm import mujoco_urdf, MujocoArm
from denoc_ros.trajectories.sampling import TrajectorySampler
import numpy as np
import pytest

RNG = np.random.default_rng(2026)


def polynomial(coefficients):
    """Return f, f', f'' of a vector polynomial sum_k c_k t^k (c: (degree + 1, n))."""
    c = np.asarray(coefficients)
    k = np.arange(len(c))

    def f(t, d=0):
        out = np.zeros(c.shape[1])
        for j in range(d, len(c)):
            factor = np.prod(np.arange(j - d + 1, j + 1)) if d else 1.0
            out += factor * c[j] * t ** (j - d)
        return out
    assert len(k)
    return (lambda t: f(t)), (lambda t: f(t, 1)), (lambda t: f(t, 2))


@pytest.mark.parametrize('degree, given', [(5, 3), (3, 2), (1, 1)])
def test_sampler_reproduces_polynomials_of_its_degree(degree, given):
    """Quintic/cubic/linear segments reproduce polynomials of that degree exactly (1e-12)."""
    f, df, ddf = polynomial(RNG.normal(size=(degree + 1, 4)))
    times = np.array([0.0, 0.25, 0.7, 1.0, 1.6])
    args = [[f(t) for t in times], [df(t) for t in times], [ddf(t) for t in times]][:given]
    sampler = TrajectorySampler(times, *args)
    for t in np.linspace(0.0, 1.59, 37):
        q, qd, qdd = sampler.sample(t)
        np.testing.assert_allclose(q, f(t), atol=1e-12)
        np.testing.assert_allclose(qd, df(t), atol=1e-11)
        if degree > 1:
            np.testing.assert_allclose(qdd, ddf(t), atol=1e-9)


def test_sampler_holds_at_rest_outside_the_trajectory():
    """Before the first and after the last point the positions hold with zero rates."""
    sampler = TrajectorySampler([0.5, 1.0], [[1.0, 2.0], [3.0, 4.0]], [[1, 1], [1, 1]])
    for t, expected in ((0.0, [1.0, 2.0]), (1.0, [3.0, 4.0]), (9.0, [3.0, 4.0])):
        q, qd, qdd = sampler.sample(t)
        np.testing.assert_array_equal(q, expected)
        assert not qd.any() and not qdd.any()


@pytest.mark.parametrize('args, words', [
    (([0.0, 0.0], [[1.0], [2.0]]), 'increasing'),
    (([0.0, 1.0], [[1.0], [2.0]], None, [[0.0], [0.0]]), 'without velocities'),
    (([0.0, 1.0], [[1.0], [np.nan]]), 'NaN'),
    (([0.0, 1.0], [[1.0, 2.0], [2.0, 3.0]], [[1.0], [2.0]]), 'shape'),
    (([], []), 'at least one'),
])
def test_sampler_rejects_bad_trajectories(args, words):
    """Malformed trajectories raise InputError saying what is wrong."""
    with pytest.raises(dr.InputError, match=words):
        TrajectorySampler(*args)


@pytest.mark.parametrize('path', bundled_urdfs(), ids=lambda p: p.stem)
def test_computed_torque_law(path):
    """The law equals M (qdd_d + Kd e_dot + Kp e) + C qd + g built from M and C (1e-9)."""
    model = dr.load_urdf(path)
    q, qd, q_d, qd_d, qdd_d = RNG.uniform(-1, 1, (5, model.dof))
    kp, kd = RNG.uniform(10, 100, model.dof), 7.0
    tau = computed_torque(model, q, qd, (q_d, qd_d, qdd_d), kp, kd)
    servo = qdd_d + kd * (qd_d - qd) + kp * (q_d - q)
    expected = (dr.mass_matrix(model, q) @ servo + dr.coriolis_matrix(model, q, qd) @ qd
                + dr.gravity_torques(model, q))
    np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


# MuJoCo needs positive inertia on every moving body: Craig's point masses and the Puma's
# massless first link (in its source table) cannot be compiled.
MUJOCO_ROBOTS = [p for p in bundled_urdfs() if p.stem not in ('craig_rr', 'puma560')]


@pytest.mark.parametrize('path', MUJOCO_ROBOTS, ids=lambda p: p.stem)
def test_mujoco_forward_dynamics_matches_ours(path):
    """MuJoCo, compiling the same URDF, gives our forward dynamics (1e-9 relative)."""
    arm = MujocoArm(path.read_text())
    model = dr.load_urdf(path)
    assert arm.joint_names == model.joint_names
    for _ in range(5):
        q, qd, tau = RNG.uniform(-1, 1, (3, model.dof))
        ours = dr.forward_dynamics(model, q, qd, tau)
        np.testing.assert_allclose(arm.forward_dynamics(q, qd, tau), ours, rtol=1e-9,
                                   atol=1e-9 * max(1.0, np.abs(ours).max()))


def test_mujoco_steps_like_our_simulation():
    """A 0.5 s swing under constant effort: MuJoCo RK4 and our RK4 agree to 1e-7 rad."""
    path = [p for p in MUJOCO_ROBOTS if p.stem == 'panda'][0]
    arm, model = MujocoArm(path.read_text(), timestep=1e-3), dr.load_urdf(path)
    q0 = np.array([0.3, -0.5, 0.2, -2.0, 0.1, 1.5, 0.4])
    effort = 0.5 * dr.gravity_torques(model, q0)
    arm.set_state(q0)
    arm.set_effort(effort)
    arm.step(500)
    run = dr.simulate(model, q0, np.zeros(7), 0.5, dt=1e-3, tau=effort)
    q, qd = arm.state()
    assert arm.time == pytest.approx(0.5)
    assert np.abs(q - q0).max() > 0.05
    np.testing.assert_allclose(q, run.q[-1], atol=1e-7)
    np.testing.assert_allclose(qd, run.qd[-1], atol=1e-6)
    np.testing.assert_array_equal(arm.effort, effort)


def test_mujoco_urdf_strips_geometry_and_rejects_bad_input():
    """Geometry and ros2_control tags go; bad XML and bad efforts raise the package's errors."""
    xml = ('<robot name="r"><link name="a"><visual><geometry><box size="1 1 1"/></geometry>'
           '</visual><collision/></link><ros2_control name="x"/></robot>')
    out = mujoco_urdf(xml)
    assert '<visual' not in out and '<collision' not in out and 'ros2_control' not in out
    assert 'fusestatic="false"' in out and 'inertiafromgeom="false"' in out
    with pytest.raises(dr.URDFError, match='malformed'):
        mujoco_urdf('<robot')
    arm = MujocoArm(MUJOCO_ROBOTS[0].read_text())
    with pytest.raises(dr.InputError, match='effort'):
        arm.set_effort([1.0])
