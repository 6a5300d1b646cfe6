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
denoc_ros.predict (the node's ~/prediction): one compiled Runge-Kutta integration.

Checked against the same RK4 steps taken by :func:`denoc_ros.simulate` (the other driver of
the one scheme, :func:`denoc_ros.dynamics.prediction.rk4_stage`: Python around single
forward-dynamics calls), against SciPy's DOP853 at tight tolerances
(an independent integrator: the RK4 error at these steps is far below the tolerance), and on a
closed form: a free fall of a prismatic joint along gravity.
"""

from conftest import bundled_urdfs
import denoc_ros as dr
from denoc_ros import feedforward
from denoc_ros.resources import bundled_urdf
import numpy as np
import pytest


def state(model, seed):
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-1.0, 1.0, model.dof) for _ in range(3))


@pytest.mark.parametrize('path', bundled_urdfs(), ids=lambda p: p.stem)
@pytest.mark.parametrize('horizon, substeps', [(0.0, 1), (0.01, 1), (0.02, 4), (0.05, 7)])
def test_prediction_equals_simulate_rk4(path, horizon, substeps, monkeypatch):
    """The compiled integration takes the same RK4 steps as simulate(method='rk4')."""
    model = dr.load_urdf(path)
    q, qd, tau = state(model, 3)
    with monkeypatch.context() as patch:  # the compiled path, not simulate(), answers
        patch.setattr(feedforward, 'simulate', None)
        q_h, qd_h, qdd_h = dr.predict(model, q, qd, tau, horizon, substeps)
    if horizon > 0:
        run = dr.simulate(model, q, qd, horizon, dt=horizon / substeps, tau=tau, method='rk4')
        q_ref, qd_ref = run.q[-1], run.qd[-1]
    else:
        q_ref, qd_ref = q, qd
    np.testing.assert_allclose(q_h, q_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(qd_h, qd_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(qdd_h, dr.forward_dynamics(model, q_h, qd_h, tau),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize('name', ['panda', 'ur5e', 'puma560'])
def test_prediction_against_dop853(name):
    """20 ms in 100 RK4 steps: within 1e-10 (q) and 1e-9 (qd) of DOP853 at rtol 1e-12."""
    model = dr.load_urdf(bundled_urdf(name))
    q, qd, tau = state(model, 4)
    q_h, qd_h, _ = dr.predict(model, q, qd, tau, 0.02, 100)
    run = dr.simulate(model, q, qd, 0.02, tau=tau, method='solve_ivp', rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(q_h, run.q[-1], rtol=0, atol=1e-10)
    np.testing.assert_allclose(qd_h, run.qd[-1], rtol=0, atol=1e-9)


def test_prediction_of_a_free_fall():
    """A prismatic body along gravity with no effort: q = q0 + v0 t - g t^2 / 2 (RK4 is exact)."""
    urdf = """<robot name="drop"><link name="base"/>
      <link name="slider"><inertial><mass value="2.0"/><origin xyz="0 0 0"/>
        <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
      <joint name="z" type="prismatic"><parent link="base"/><child link="slider"/>
        <axis xyz="0 0 1"/><limit lower="-10" upper="10" effort="1" velocity="1"/></joint>
    </robot>"""
    model = dr.load_urdf(urdf)
    q_h, qd_h, qdd_h = dr.predict(model, np.array([0.3]), np.array([0.5]), np.zeros(1), 0.2, 3)
    np.testing.assert_allclose(q_h, [0.3 + 0.5 * 0.2 - 0.5 * 9.81 * 0.2 ** 2], atol=1e-14)
    np.testing.assert_allclose(qd_h, [0.5 - 9.81 * 0.2], atol=1e-14)
    np.testing.assert_allclose(qdd_h, [-9.81], atol=1e-14)


def test_prediction_refuses_bad_input_like_the_library():
    """Bad states, a negative horizon and a massless joint raise the package's errors."""
    model = dr.load_urdf(bundled_urdf('panda'))
    q, qd, tau = state(model, 5)
    with pytest.raises(dr.InputError, match='horizon'):
        dr.predict(model, q, qd, tau, -0.1)
    bad = q.copy()
    bad[2] = np.nan
    with pytest.raises(dr.InputError, match=r'q0?\[2\]'):
        dr.predict(model, bad, qd, tau, 0.01)
    with pytest.raises(dr.InputError):
        dr.predict(model, q[:3], qd, tau, 0.01)
    # lists take the checked path (simulate): the same steps, rounded differently (FMA)
    as_lists = dr.predict(model, q.tolist(), qd.tolist(), tau.tolist(), 0.01, 2)
    for a, b in zip(as_lists, dr.predict(model, q, qd, tau, 0.01, 2)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_prediction_of_a_floating_base_and_computed_torque_refusing_it():
    """A floating base is integrated by simulate (RK4 on the Lie group); no computed torque."""
    model = dr.load_urdf(bundled_urdf('space_robot'), floating_base=True)
    rng = np.random.default_rng(6)
    q = np.r_[rng.normal(size=7), rng.uniform(-1.0, 1.0, model.dof)]
    q[3:7] /= np.linalg.norm(q[3:7])
    qd, tau = rng.normal(size=model.nv), rng.normal(size=model.nv)
    q_h, qd_h, qdd_h = dr.predict(model, q, qd, tau, 0.02, 4)
    run = dr.simulate(model, q, qd, 0.02, dt=0.005, tau=tau)
    np.testing.assert_allclose(q_h, run.q[-1], rtol=0, atol=1e-14)
    np.testing.assert_allclose(qd_h, run.qd[-1], rtol=0, atol=1e-14)
    np.testing.assert_allclose(qdd_h, dr.forward_dynamics(model, q_h, qd_h, tau), atol=1e-12)
    # Independently: SciPy's DOP853 on the quaternion's rate equation (7e-10 reached; RK4 with
    # h = 5 ms errs by O(h^4) per unit time).
    ref = dr.simulate(model, q, qd, 0.02, dt=0.02, tau=tau, method='solve_ivp', rtol=1e-12,
                      atol=1e-12)
    np.testing.assert_allclose(q_h, ref.q[-1], rtol=0, atol=1e-8)
    np.testing.assert_allclose(qd_h, ref.qd[-1], rtol=0, atol=1e-8)
    with pytest.raises(dr.InputError, match='floating base'):
        feedforward.computed_torque(model, q, qd, (q, qd, qd), 1.0, 1.0)
