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
Joint friction (Craig's viscous + Coulomb model, tanh-smoothed) on top of the rigid-body dynamics.

Oracles: the closed forms of a pendulum and a vertical slider, the identity
``ID(FD(tau)) = tau`` with friction, the limit ``tanh(qd / v_s) -> sgn(qd)``, and the
coefficients read from a URDF ``<dynamics>`` element.
"""

import denoc_ros as dr
from denoc_ros.friction import DEFAULT_SMOOTHING, forward_dynamics_with_friction, \
    friction_torques, inverse_dynamics_with_friction
import numpy as np
import pytest
from robots_for_tests import assert_close, make_model, MODEL_CASES, random_state, rng_for

G = 9.81


def pendulum(m=1.7, length=0.6):
    """Return a point-mass pendulum about z, gravity along -y: tau = m l^2 qdd + m g l cos q."""
    return dr.RobotModel(
        joint_names=('hinge',), link_names=('bob',), parent=np.array([-1]),
        joint_type=np.array([dr.REVOLUTE]), axis=np.array([[0.0, 0.0, 1.0]]),
        joint_rotation=np.eye(3)[None], joint_translation=np.zeros((1, 3)),
        mass=np.array([m]), com=np.array([[length, 0.0, 0.0]]), inertia=np.zeros((1, 3, 3)),
        gravity=np.array([0.0, -G, 0.0]), name='pendulum')


def slider(m=2.3):
    """Return a vertical prismatic slider, axis +z and gravity -z, so tau = m qdd + m g."""
    return dr.RobotModel(
        joint_names=('lift',), link_names=('carriage',), parent=np.array([-1]),
        joint_type=np.array([dr.PRISMATIC]), axis=np.array([[0.0, 0.0, 1.0]]),
        joint_rotation=np.eye(3)[None], joint_translation=np.zeros((1, 3)),
        mass=np.array([m]), com=np.array([[0.1, -0.05, 0.2]]),
        inertia=np.diag([0.01, 0.02, 0.03])[None], gravity=np.array([0.0, 0.0, -G]),
        name='slider')


def test_pendulum_closed_form_1e_12():
    m, length, b, c, v_s = 1.7, 0.6, 0.35, 0.8, 0.01
    model = pendulum(m, length)
    rng = rng_for('friction pendulum')
    q, qd, qdd = (random_state(rng, 1, size=(50,), scale=s) for s in (np.pi, 2.0, 5.0))
    expected = (m * length ** 2 * qdd + b * qd + c * np.tanh(qd / v_s)
                + m * G * length * np.cos(q))
    tau = inverse_dynamics_with_friction(model, q, qd, qdd, viscous=b, coulomb=c, smoothing=v_s)
    assert_close(tau, expected, 1e-12, 'pendulum ID with friction')
    qdd_back = forward_dynamics_with_friction(model, q, qd, expected, viscous=b, coulomb=c,
                                              smoothing=v_s)
    assert_close(qdd_back, qdd, 1e-12, 'pendulum FD with friction')


def test_prismatic_slider_closed_form_1e_12():
    m, b, c = 2.3, 1.1, 4.0
    model = slider(m)
    rng = rng_for('friction slider')
    q, qd, qdd = (random_state(rng, 1, size=(50,), scale=s) for s in (0.5, 1.0, 3.0))
    expected = m * qdd + m * G + b * qd + c * np.tanh(qd / DEFAULT_SMOOTHING)
    tau = inverse_dynamics_with_friction(model, q, qd, qdd, viscous=[b], coulomb=[c])
    assert_close(tau, expected, 1e-12, 'slider ID with friction')
    assert_close(forward_dynamics_with_friction(model, q, qd, expected, viscous=b, coulomb=c),
                 qdd, 1e-12, 'slider FD with friction')


@pytest.mark.parametrize('case', list(MODEL_CASES))
def test_id_of_fd_round_trip_with_friction_1e_9(case):
    model = make_model(case)
    n = model.dof
    rng = rng_for('friction round trip', case)
    viscous, coulomb = rng.uniform(0.0, 2.0, n), rng.uniform(0.0, 3.0, n)
    q, qd = random_state(rng, n, size=(6,), scale=np.pi), random_state(rng, n, size=(6,))
    tau, f_ext = random_state(rng, n, size=(6,), scale=10.0), rng.normal(size=(6, n, 6))
    kw = {'viscous': viscous, 'coulomb': coulomb, 'smoothing': 0.05}
    qdd = forward_dynamics_with_friction(model, q, qd, tau, f_ext, **kw)
    assert qdd.shape == (6, n)
    assert_close(inverse_dynamics_with_friction(model, q, qd, qdd, f_ext, **kw), tau, 1e-9,
                 'ID(FD(tau)) with friction')
    # Friction opposes the motion: it takes power out, tau_f . qd >= 0.
    assert np.all(np.einsum('bi,bi->b', friction_torques(model, qd, **kw), qd) >= 0.0)


def test_tanh_tends_to_sign():
    model = pendulum()
    qd = np.array([[-2.0], [-1e-3], [-1e-9], [0.0], [1e-9], [1e-3], [2.0]])
    exact = friction_torques(model, qd, viscous=0.0, coulomb=1.5, smoothing=0.0)
    assert np.array_equal(exact[:, 0], 1.5 * np.sign(qd[:, 0]))
    # With a tiny velocity scale the smooth model equals c sgn(qd) away from qd = 0.
    tiny = friction_torques(model, qd, viscous=0.0, coulomb=1.5, smoothing=1e-12)
    assert_close(tiny, exact, 1e-15, 'tanh with v_s = 1e-12')
    # The error shrinks as v_s -> 0 at a fixed velocity, and is bounded by c everywhere.
    errors = [abs(friction_torques(model, [0.01], viscous=0.0, coulomb=1.5,
                                   smoothing=v_s)[0] - 1.5) for v_s in (0.01, 0.002, 0.001)]
    assert errors[0] > errors[1] > errors[2] and errors[2] < 1e-8
    assert np.all(np.abs(friction_torques(model, random_state(rng_for('b'), 1, size=(20,)),
                                          viscous=0.0, coulomb=1.5)) <= 1.5)
    # Continuous at qd = 0 (so forward dynamics can be integrated): the slope there is c / v_s.
    v_s, h = 1e-3, 1e-9
    up = friction_torques(model, [h], 0.0, 1.5, v_s)
    down = friction_torques(model, [-h], 0.0, 1.5, v_s)
    slope = (up - down) / (2 * h)
    assert_close(slope, np.array([1.5 / v_s]), 1e-6, 'slope at zero velocity')


@pytest.mark.parametrize('case', ['chain7_mixed', 'branched8'])
def test_zero_coefficients_give_plain_dynamics(case):
    model = make_model(case)
    rng = rng_for('zero friction', case)
    q, qd, qdd = (random_state(rng, model.dof, size=(4,)) for _ in range(3))
    tau = inverse_dynamics_with_friction(model, q, qd, qdd)     # model has no <dynamics>
    assert np.array_equal(tau, dr.inverse_dynamics(model, q, qd, qdd))
    tau = inverse_dynamics_with_friction(model, q, qd, qdd, viscous=0.0, coulomb=0.0)
    assert np.array_equal(tau, dr.inverse_dynamics(model, q, qd, qdd))
    assert np.array_equal(forward_dynamics_with_friction(model, q, qd, tau),
                          dr.forward_dynamics(model, q, qd, tau))


URDF = """<?xml version="1.0"?>
<robot name="friction_test">
  <link name="base"/>
  <link name="a">
    <inertial><origin xyz="0.3 0 0"/><mass value="2"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial>
  </link>
  <link name="b">
    <inertial><origin xyz="0 0 0.1"/><mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
  </link>
  <link name="c">
    <inertial><origin xyz="0.1 0 0"/><mass value="0.5"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial>
  </link>
  <joint name="j1" type="continuous">
    <parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <dynamics damping="0.5" friction="1.25"/>
  </joint>
  <joint name="j2" type="prismatic">
    <parent link="a"/><child link="b"/><origin xyz="0.6 0 0"/><axis xyz="1 0 0"/>
    <limit lower="-1" upper="1" effort="100" velocity="1"/>
    <dynamics damping="3.0"/>
  </joint>
  <joint name="j3" type="revolute">
    <parent link="b"/><child link="c"/><origin xyz="0 0 0.2"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="100" velocity="1"/>
  </joint>
</robot>
"""


def test_urdf_dynamics_coefficients_and_overrides():
    model = dr.load_urdf(URDF)
    assert np.array_equal(model.damping, [0.5, 3.0, 0.0])
    assert np.array_equal(model.friction, [1.25, 0.0, 0.0])
    qd = np.array([0.7, -0.2, 1.5])
    expected = np.array([0.5 * 0.7 + 1.25 * np.tanh(0.7 / DEFAULT_SMOOTHING), 3.0 * -0.2, 0.0])
    assert_close(friction_torques(model, qd), expected, 1e-15, 'URDF coefficients')
    # A mapping overrides only the named joints; the others keep the URDF values.
    over = friction_torques(model, qd, viscous={'j3': 2.0}, coulomb={'j1': 0.0, 'j2': 0.5},
                            smoothing=0.0)
    assert_close(over, np.array([0.5 * 0.7, 3.0 * -0.2 - 0.5, 2.0 * 1.5]), 1e-15, 'overrides')
    rng = rng_for('urdf friction')
    q, qdd = random_state(rng, 3), random_state(rng, 3)
    assert_close(inverse_dynamics_with_friction(model, q, qd, qdd),
                 dr.inverse_dynamics(model, q, qd, qdd) + expected, 1e-12, 'ID + URDF friction')


@pytest.mark.parametrize('kw, match', [
    ({'viscous': -0.1}, 'viscous'),
    ({'coulomb': [1.0, -2.0, 0.0]}, 'coulomb'),
    ({'coulomb': [1.0, 2.0]}, 'coulomb'),
    ({'viscous': {'nope': 1.0}}, 'nope'),
    ({'viscous': float('nan')}, 'viscous'),
    ({'smoothing': -1e-3}, 'smoothing'),
    ({'viscous': 'abc'}, 'viscous'),
])
def test_bad_coefficients_raise_input_error(kw, match):
    model = dr.load_urdf(URDF)
    with pytest.raises(dr.InputError, match=match):
        friction_torques(model, np.zeros(3), **kw)
    with pytest.raises(dr.InputError, match=match):
        inverse_dynamics_with_friction(model, np.zeros(3), np.zeros(3), np.zeros(3), **kw)


def test_bad_state_raises_input_error():
    model = dr.load_urdf(URDF)
    with pytest.raises(dr.InputError, match='qd'):
        friction_torques(model, np.zeros(2))
    with pytest.raises(dr.InputError, match='qd'):
        friction_torques(model, [0.0, np.nan, 0.0])
    with pytest.raises(dr.InputError, match='tau'):
        forward_dynamics_with_friction(model, np.zeros(3), np.zeros(3), np.zeros(4))
    with pytest.raises(dr.InputError, match='batch'):
        forward_dynamics_with_friction(model, np.zeros(3), np.zeros((2, 3)), np.zeros((5, 3)))
    with pytest.raises(dr.InputError, match='RobotModel'):
        friction_torques(None, np.zeros(3))


def test_floating_base_friction_acts_on_the_joint_rates_only():
    """Floating base: (6 + n) torques, zero on the base, the fixed-base values on the joints."""
    fixed = dr.load_urdf(URDF)
    # a base with mass (a massless one could spin about j1's axis with no inertia)
    model = dr.load_urdf(URDF.replace('<link name="base"/>', '<link name="base"><inertial><mass '
                                      'value="5"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" '
                                      'iyz="0" izz="0.1"/></inertial></link>'), floating_base=True)
    rng = rng_for('floating friction')
    v = random_state(rng, model.nv, (4,), scale=2.0)
    tau = friction_torques(model, v, smoothing=0.1)
    assert tau.shape == (4, model.nv)
    assert np.all(tau[:, :6] == 0.0)
    assert_close(tau[:, 6:], friction_torques(fixed, v[:, 6:], smoothing=0.1), 0.0, 'joints')
    q = np.r_[0.1, -0.2, 0.3, 0.0, 0.0, np.sin(0.2), np.cos(0.2), 0.4, 0.1, -0.3]
    qdd = forward_dynamics_with_friction(model, q, v[0], np.zeros(model.nv), smoothing=0.1)
    assert_close(inverse_dynamics_with_friction(model, q, v[0], qdd, smoothing=0.1),
                 np.zeros(model.nv), 1e-9, 'ID(FD) with friction')
