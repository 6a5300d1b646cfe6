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
Rigid payloads combined into a link's body.

Oracles: Craig's RR closed form with the payload's mass added at the tip; the URDF loader's own
lumping of a fixed child link (a payload written into the URDF); Pinocchio with the payload
appended by ``appendBodyToJoint`` on the bundled Panda; and replace/detach restoring the numbers.
"""

from conftest import require_oracle, URDF_DIR
import denoc_ros as dr
from denoc_ros.payload import attach_payload, attached_payloads, base_model, detach_payload
import numpy as np
import pytest
from robots_for_tests import assert_close, PinocchioMap, random_inertia, random_state, \
    rng_for

G = 9.81
L1, L2, M1, M2 = 1.0, 0.8, 2.0, 1.5   # urdf/craig_rr.urdf


def craig_gravity(q, m1, m2, l1=L1, l2=L2):
    """Return Craig's G(q) of the RR arm with point masses (seed 002)."""
    c1, c12 = np.cos(q[..., 0]), np.cos(q[..., 0] + q[..., 1])
    return np.stack(((m1 + m2) * l1 * G * c1 + m2 * l2 * G * c12, m2 * l2 * G * c12), axis=-1)


def test_craig_rr_point_payload_at_tip_closed_form_1e_12():
    model = dr.load_urdf(URDF_DIR / 'craig_rr.urdf')
    rng = rng_for('payload craig')
    q = random_state(rng, 2, size=(30,), scale=np.pi)
    m_p = 0.75
    # tool0 is lumped into link2 at the tip (x = l2): the payload adds m_p g l terms,
    # G1 += m_p g (l1 c1 + l2 c12), G2 += m_p g l2 c12, i.e. m2 -> m2 + m_p.
    loaded = attach_payload(model, 'tool0', m_p)
    expected = craig_gravity(q, M1, M2 + m_p)
    assert_close(dr.gravity_torques(loaded, q), expected, 1e-12, 'payload at tool0')
    hand = craig_gravity(q, M1, M2) + m_p * G * np.stack(
        (L1 * np.cos(q[:, 0]) + L2 * np.cos(q.sum(-1)), L2 * np.cos(q.sum(-1))), axis=-1)
    assert_close(dr.gravity_torques(loaded, q), hand, 1e-12, 'm_p g l terms')
    # The same point given in link2's frame, and the full ID against Craig's closed form.
    same = attach_payload(model, 'link2', m_p, com=(L2, 0.0, 0.0))
    assert_close(dr.gravity_torques(same, q), expected, 1e-12, 'payload at link2 tip')
    qd, qdd = random_state(rng, 2, size=(30,), scale=2.0), random_state(rng, 2, size=(30,))
    m2 = M2 + m_p
    s2, c2 = np.sin(q[:, 1]), np.cos(q[:, 1])
    tau1 = (m2 * L2 ** 2 * (qdd[:, 0] + qdd[:, 1])
            + m2 * L1 * L2 * c2 * (2 * qdd[:, 0] + qdd[:, 1]) + (M1 + m2) * L1 ** 2 * qdd[:, 0]
            - m2 * L1 * L2 * s2 * qd[:, 1] ** 2
            - 2 * m2 * L1 * L2 * s2 * qd[:, 0] * qd[:, 1])
    tau2 = (m2 * L1 * L2 * c2 * qdd[:, 0] + m2 * L1 * L2 * s2 * qd[:, 0] ** 2
            + m2 * L2 ** 2 * (qdd[:, 0] + qdd[:, 1]))
    assert_close(dr.inverse_dynamics(loaded, q, qd, qdd),
                 np.stack((tau1, tau2), axis=-1) + expected, 1e-12, 'Craig RR ID with payload')
    # A point payload half-way along link 2: G2 += m_p g (l2 / 2) c12.
    mid = attach_payload(model, 'link2', m_p, com=(L2 / 2, 0.0, 0.0))
    c1, c12 = np.cos(q[:, 0]), np.cos(q.sum(-1))
    extra = m_p * G * np.stack((L1 * c1 + L2 / 2 * c12, L2 / 2 * c12), axis=-1)
    assert_close(dr.gravity_torques(mid, q), craig_gravity(q, M1, M2) + extra, 1e-12,
                 'payload at mid link 2')
    # The input model is unchanged.
    assert_close(dr.gravity_torques(model, q), craig_gravity(q, M1, M2), 1e-12, 'original')


LUMPED = """<?xml version="1.0"?>
<robot name="lumped">
  <link name="base"/>
  <link name="upper">
    <inertial><origin xyz="0.2 0.01 -0.02"/><mass value="3"/>
      <inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.05" iyz="0.002" izz="0.06"/></inertial>
  </link>
  <link name="fore">
    <inertial><origin xyz="0.15 0 0.01"/><mass value="1.2"/>
      <inertia ixx="0.004" ixy="0" ixz="0.0005" iyy="0.01" iyz="0" izz="0.011"/></inertial>
  </link>
  <link name="flange"/>
  {extra}
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><origin xyz="0 0 0.3" rpy="0.3 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="100" velocity="2"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="fore"/><origin xyz="0.4 0 0" rpy="0 0.2 0.1"/>
    <axis xyz="0 0.6 0.8"/><limit lower="-3" upper="3" effort="100" velocity="2"/>
  </joint>
  <joint name="flange_fixed" type="fixed">
    <parent link="fore"/><child link="flange"/>
    <origin xyz="0.3 0.02 -0.01" rpy="0.4 -0.7 1.1"/>
  </joint>
</robot>
"""

PAYLOAD_LINK = """<link name="tool">
    <inertial><origin xyz="{com}"/><mass value="{mass}"/>
      <inertia ixx="{I[0][0]!r}" ixy="{I[0][1]!r}" ixz="{I[0][2]!r}" iyy="{I[1][1]!r}"
               iyz="{I[1][2]!r}" izz="{I[2][2]!r}"/></inertial>
  </link>
  <joint name="tool_fixed" type="fixed">
    <parent link="flange"/><child link="tool"/><origin xyz="0 0 0" rpy="0 0 0"/>
  </joint>"""


def test_payload_on_lumped_frame_equals_urdf_lumping_1e_12():
    rng = rng_for('payload lumped')
    mass, com = 0.9, np.array([0.05, -0.02, 0.12])
    inertia = random_inertia(rng, mass)
    model = dr.load_urdf(LUMPED.format(extra=''))
    assert model.frame('flange').body == 1
    loaded = attach_payload(model, 'flange', mass, com, inertia)
    # The loader lumps a fixed child link with this <inertial> into 'fore' by its own code.
    text = PAYLOAD_LINK.format(com=' '.join(repr(float(x)) for x in com), mass=mass,
                               I=inertia.tolist())
    reference = dr.load_urdf(LUMPED.format(extra=text))
    for name in ('mass', 'com', 'inertia'):
        assert_close(getattr(loaded, name), getattr(reference, name), 1e-12, name)
    q, qd, qdd = (random_state(rng, 2, size=(10,), scale=3.0) for _ in range(3))
    assert_close(dr.inverse_dynamics(loaded, q, qd, qdd),
                 dr.inverse_dynamics(reference, q, qd, qdd), 1e-12, 'ID')
    assert_close(dr.mass_matrix(loaded, q), dr.mass_matrix(reference, q), 1e-12, 'M')


def test_panda_payload_vs_pinocchio_append_body_1e_9():
    pin = require_oracle('pinocchio')
    path = URDF_DIR / 'panda.urdf'
    model = dr.load_urdf(path)
    pmodel = pin.buildModelFromUrdf(str(path))
    rng = rng_for('payload panda')
    payloads = [('panda_link8', 2.5, np.array([0.01, -0.02, 0.08]), random_inertia(rng, 2.5)),
                ('panda_link4', 0.7, np.array([0.05, 0.0, -0.03]), random_inertia(rng, 0.7))]
    loaded = model
    for link, mass, com, inertia in payloads:
        loaded = attach_payload(loaded, link, mass, com, inertia)
        frame = pmodel.frames[pmodel.getFrameId(link)]
        pmodel.appendBodyToJoint(frame.parentJoint, pin.Inertia(mass, com, inertia),
                                 frame.placement)
    data = pmodel.createData()
    mp = PinocchioMap(pmodel, loaded.joint_names)
    for _ in range(5):
        q, qd, qdd = (random_state(rng, 7, scale=s) for s in (2.5, 2.0, 3.0))
        pq, pv, pa = mp.q(q), mp.v(qd), mp.v(qdd)
        assert_close(dr.inverse_dynamics(loaded, q, qd, qdd),
                     mp.from_v(pin.rnea(pmodel, data, pq, pv, pa)), 1e-9, 'rnea')
        assert_close(dr.gravity_torques(loaded, q),
                     mp.from_v(pin.computeGeneralizedGravity(pmodel, data, pq)), 1e-9, 'g')
        M = np.triu(pin.crba(pmodel, data, pq))
        assert_close(dr.mass_matrix(loaded, q), mp.from_vv(M + np.triu(M, 1).T), 1e-9, 'crba')


def test_floating_base_payload_vs_pinocchio_append_body_1e_9():
    """On a floating base, a payload on the base link (body 0) changes the dynamics too."""
    pin = require_oracle('pinocchio')
    path = URDF_DIR / 'space_robot.urdf'
    model = dr.load_urdf(path, floating_base=True)
    pmodel = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    rng = rng_for('payload floating')
    loaded = model
    for link, mass in (('base_link', 20.0), ('arm_a_tool', 1.5)):
        com, inertia = rng.normal(scale=0.1, size=3), random_inertia(rng, mass)
        loaded = attach_payload(loaded, link, mass, com, inertia)
        frame = pmodel.frames[pmodel.getFrameId(link)]
        pmodel.appendBodyToJoint(frame.parentJoint, pin.Inertia(mass, com, inertia),
                                 frame.placement)
    assert loaded.mass[0] == pytest.approx(model.mass[0] + 20.0)
    data = pmodel.createData()
    joints = [pmodel.joints[pmodel.getJointId(name)] for name in model.joint_names]
    iq = np.r_[0:7, [j.idx_q for j in joints]].astype(int)
    iv = np.r_[0:6, [j.idx_v for j in joints]].astype(int)
    for _ in range(3):
        q = np.r_[rng.normal(size=7), random_state(rng, model.dof, scale=1.0)]
        q[3:7] /= np.linalg.norm(q[3:7])
        v, a = (random_state(rng, model.nv, scale=s) for s in (1.0, 2.0))
        pq, pv, pa = np.zeros(pmodel.nq), np.zeros(pmodel.nv), np.zeros(pmodel.nv)
        pq[iq], pv[iv], pa[iv] = q, v, a
        assert_close(dr.inverse_dynamics(loaded, q, v, a),
                     pin.rnea(pmodel, data, pq, pv, pa)[iv], 1e-9, 'rnea')
        M = np.triu(pin.crba(pmodel, data, pq))
        assert_close(dr.mass_matrix(loaded, q), (M + np.triu(M, 1).T)[np.ix_(iv, iv)], 1e-9,
                     'crba')
    assert detach_payload(loaded) is model


def test_replace_detach_and_stacking():
    model = dr.load_urdf(URDF_DIR / 'panda.urdf')
    rng = rng_for('payload replace')
    first = attach_payload(model, 'panda_link8', 3.0, (0.0, 0.0, 0.1), random_inertia(rng, 3.0))
    second = attach_payload(first, 'panda_link8', 1.0, (0.02, 0.0, 0.05), replace=True)
    direct = attach_payload(model, 'panda_link8', 1.0, (0.02, 0.0, 0.05))
    for name in ('mass', 'com', 'inertia'):
        assert np.array_equal(getattr(second, name), getattr(direct, name)), name
    assert [p.mass for p in attached_payloads(second)] == [1.0]
    assert base_model(second) is model
    # Without replace the payloads add up: two point masses = one at their common centre.
    both = attach_payload(attach_payload(model, 'panda_link8', 1.0, (0.1, 0.0, 0.0)),
                          'panda_link8', 3.0, (-0.1, 0.0, 0.0))
    spread = np.diag([0.0, 1.0, 1.0]) * (1.0 * 0.15 ** 2 + 3.0 * 0.05 ** 2)
    one = attach_payload(model, 'panda_link8', 4.0, (-0.05, 0.0, 0.0), spread)
    for name in ('mass', 'com', 'inertia'):
        assert_close(getattr(both, name), getattr(one, name), 1e-12, name)
    # Detaching restores the original numbers exactly; other links keep their payloads.
    assert detach_payload(both) is model
    mixed = attach_payload(both, 'panda_link3', 0.5)
    only3 = detach_payload(mixed, 'panda_link8')
    assert np.array_equal(only3.mass, attach_payload(model, 'panda_link3', 0.5).mass)
    assert detach_payload(model) is model
    q = random_state(rng, 7)
    assert np.array_equal(dr.gravity_torques(detach_payload(second), q),
                          dr.gravity_torques(model, q))
    # A payload on the fixed base changes nothing.
    on_base = attach_payload(model, 'panda_link0', 5.0)
    assert np.array_equal(on_base.mass, model.mass)


@pytest.mark.parametrize('kwargs, match', [
    ({'link': 'nope', 'mass': 1.0}, 'unknown frame'),
    ({'link': 'tool0', 'mass': -1.0}, 'mass'),
    ({'link': 'tool0', 'mass': float('nan')}, 'mass'),
    ({'link': 'tool0', 'mass': 1.0, 'com': (0.0, 1.0)}, 'com'),
    ({'link': 'tool0', 'mass': 1.0, 'inertia': np.diag([1.0, -0.1, 1.0])}, 'semi-definite'),
    ({'link': 'tool0', 'mass': 1.0, 'inertia': np.diag([0.1, 0.1, 1.0])}, 'triangle'),
    ({'link': 'tool0', 'mass': 1.0, 'inertia': np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]])},
     'symmetric'),
    ({'link': 'tool0', 'mass': 1.0, 'inertia': np.eye(2)}, '3x3'),
    ({'link': 'tool0', 'mass': 0.0, 'inertia': np.eye(3)}, 'massless'),
])
def test_bad_payload_raises_input_error(kwargs, match):
    model = dr.load_urdf(URDF_DIR / 'craig_rr.urdf')
    with pytest.raises(dr.InputError, match=match):
        attach_payload(model, **kwargs)


def test_random_rotation_payload_is_rotation_invariant():
    # A payload given in a rotated frame equals the rotated payload given in the body frame.
    rng = rng_for('payload rotation')
    model = dr.load_urdf(LUMPED.format(extra=''))
    frame = model.frame('flange')
    inertia, com = random_inertia(rng, 1.3), rng.normal(size=3) * 0.1
    a = attach_payload(model, 'flange', 1.3, com, inertia)
    R = frame.rotation
    b = attach_payload(model, 'fore', 1.3, frame.translation + R @ com, R @ inertia @ R.T)
    assert_close(a.inertia, b.inertia, 1e-12, 'inertia')
    assert_close(a.com, b.com, 1e-12, 'com')
