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
Payload estimation (denoc_ros.identification.payload) against independent references.

Exact data: efforts from Pinocchio's RNEA on the same URDF with the payload appended to the
joint that carries the tool frame (Pinocchio's own URDF parser and inertia algebra); the ten
parameters must come back to ~1e-8. The tool frame is given a rotation and an offset, so the
link-to-body transform is exercised. Missing information (one pose, zero efforts, an axis never
turned) must raise the package's DataError naming it.
"""

from pathlib import Path

from conftest import require_oracle
import denoc_ros as dr
from denoc_ros.errors import DataError, InputError
from denoc_ros.identification.estimation import _pseudo_inertia
from denoc_ros.identification.payload import (estimate_payload, estimate_payload_from_recording,
                                              PayloadWindow)
import numpy as np
import pytest

URDF = Path(__file__).resolve().parents[1] / 'urdf' / 'ur5e.urdf'
TOOL_ORIGIN = '<origin xyz="0 0 0.0996" rpy="0 0 0"/>'
ROTATED_TOOL = '<origin xyz="0.01 -0.02 0.0996" rpy="0.3 -0.5 1.2"/>'

MASS = 1.7
COM = np.array([0.03, -0.02, 0.06])
INERTIA = np.array([[0.012, 0.001, -0.002], [0.001, 0.009, 0.0015], [-0.002, 0.0015, 0.007]])


def urdf_text(damping=None):
    text = URDF.read_text()
    assert TOOL_ORIGIN in text
    text = text.replace(TOOL_ORIGIN, ROTATED_TOOL)
    if damping is not None:
        text = text.replace('<limit ', f'<dynamics damping="{damping[0]}" '
                            f'friction="{damping[1]}"/><limit ')
    return text


def params(mass, com, inertia):
    I_o = inertia + mass * (com @ com * np.eye(3) - np.outer(com, com))
    return np.array([mass, *(mass * com), I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2],
                     I_o[1, 2], I_o[2, 2]])


def motion_states(n, count, seed):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-np.pi, np.pi, (count, n)), rng.uniform(-1.5, 1.5, (count, n)),
            rng.uniform(-3.0, 3.0, (count, n)))


def pinocchio_efforts(text, link, q, qd, qdd):
    """Return efforts of the URDF with the payload on ``link``, by Pinocchio's RNEA."""
    pin = require_oracle('pinocchio')
    pmodel = pin.buildModelFromXML(text)
    frame = pmodel.frames[pmodel.getFrameId(link)]
    joint = frame.parentJoint
    payload = pin.Inertia(MASS, COM, INERTIA)
    pmodel.inertias[joint] = pmodel.inertias[joint] + frame.placement.act(payload)
    data = pmodel.createData()
    names = [pmodel.names[j] for j in range(1, pmodel.njoints)]
    model = dr.load_urdf(text)
    assert tuple(names) == model.joint_names   # UR5e: six revolute joints, q = angle
    return np.array([pin.rnea(pmodel, data, a, b, c) for a, b, c in zip(q, qd, qdd)])


def test_ten_parameters_from_pinocchio_rnea_1e_8():
    text = urdf_text()
    model = dr.load_urdf(text)
    q, qd, qdd = motion_states(model.dof, 60, 1)
    tau = pinocchio_efforts(text, 'tool0', q, qd, qdd)
    est = estimate_payload(model, 'tool0', q, qd, qdd, tau)
    truth = params(MASS, COM, INERTIA)
    assert est.inertia_identified and not est.constrained
    np.testing.assert_allclose(est.parameters, truth, rtol=0, atol=1e-8 * np.abs(truth).max())
    assert abs(est.mass - MASS) < 1e-8
    np.testing.assert_allclose(est.com, COM, atol=1e-9)
    np.testing.assert_allclose(est.inertia, INERTIA, atol=1e-9)
    assert est.residual_rms < 1e-9
    # The same payload seen from the body (wrist_3_link) frame differs: the transform matters.
    other = estimate_payload(model, 'wrist_3_link', q, qd, qdd, tau)
    assert abs(other.mass - MASS) < 1e-8
    assert np.linalg.norm(other.com - COM) > 0.05


def test_static_poses_give_mass_and_com_and_a_point_mass():
    text = urdf_text()
    model = dr.load_urdf(text)
    rng = np.random.default_rng(4)
    q = rng.uniform(-2.0, 2.0, (4, model.dof))
    zero = np.zeros_like(q)
    tau = pinocchio_efforts(text, 'tool0', q, zero, zero)
    est = estimate_payload(model, 'tool0', q, zero, zero, tau)
    assert not est.inertia_identified
    assert abs(est.mass - MASS) < 1e-8
    np.testing.assert_allclose(est.com, COM, atol=1e-9)
    assert not np.any(est.inertia)
    assert not np.any(est.standard_deviation[4:])
    assert 'point mass' in est.summary()


def test_one_pose_names_the_unseen_com_axis():
    text = urdf_text()
    model = dr.load_urdf(text)
    q = np.full((1, model.dof), 0.4)
    zero = np.zeros_like(q)
    tau = pinocchio_efforts(text, 'tool0', q, zero, zero)
    with pytest.raises(DataError, match='COM'):
        estimate_payload(model, 'tool0', np.repeat(q, 50, 0), np.repeat(zero, 50, 0),
                         np.repeat(zero, 50, 0), np.repeat(tau, 50, 0))


def test_no_efforts_and_bad_input_raise():
    model = dr.load_urdf(urdf_text())
    q, qd, qdd = motion_states(model.dof, 20, 2)
    with pytest.raises(DataError, match='all zero'):
        estimate_payload(model, 'tool0', q, qd, qdd, np.zeros_like(q))
    with pytest.raises(DataError, match='no efforts'):
        estimate_payload(model, 'tool0', q, qd, qdd, None)
    with pytest.raises(InputError, match='unknown frame'):
        estimate_payload(model, 'nowhere', q, qd, qdd, q)
    with pytest.raises(InputError, match='tau has shape'):
        estimate_payload(model, 'tool0', q, qd, qdd, q[:, :3])
    bad = q.copy()
    bad[3, 2] = np.nan
    with pytest.raises(InputError, match='finite'):
        estimate_payload(model, 'tool0', q, qd, qdd, bad)
    with pytest.raises(InputError, match='fixed base'):
        estimate_payload(model, 'base_link', q, qd, qdd, q)


def test_a_still_arm_with_encoder_jitter_is_still_one_pose():
    text = urdf_text()
    model = dr.load_urdf(text)
    rng = np.random.default_rng(7)
    q = np.array([0.3, -1.2, 1.0, -0.4, 0.7, 0.2]) + rng.normal(0.0, 1e-5, (300, 6))
    zero = np.zeros_like(q)
    tau = pinocchio_efforts(text, 'tool0', q, zero, zero)
    with pytest.raises(DataError, match='COM') as info:
        estimate_payload(model, 'tool0', q, zero, zero, tau)
    assert 'poses' in str(info.value)


def test_the_estimate_is_the_change_beyond_attached_payloads_and_friction():
    text = urdf_text(damping=(0.4, 1.1))
    plain = dr.load_urdf(text)
    old = dr.attach_payload(plain, 'tool0', 0.5, [0.0, 0.01, 0.02], np.diag([1e-3, 2e-3, 1e-3]))
    both = dr.attach_payload(old, 'tool0', MASS, COM, INERTIA)
    q, qd, qdd = motion_states(plain.dof, 80, 3)
    tau = dr.inverse_dynamics_with_friction(both, q, qd, qdd)
    est = estimate_payload(old, 'tool0', q, qd, qdd, tau, friction=True)
    np.testing.assert_allclose(est.parameters, params(MASS, COM, INERTIA), atol=1e-8)
    without = estimate_payload(old, 'tool0', q, qd, qdd, tau, friction=False)
    assert without.residual_rms > 0.1


def test_noisy_point_mass_is_fitted_as_a_real_rigid_body():
    model = dr.load_urdf(urdf_text())
    q, qd, qdd = motion_states(model.dof, 150, 5)
    truth = dr.attach_payload(model, 'tool0', 0.8, [0.0, 0.0, 0.05])   # a point mass
    rng = np.random.default_rng(0)
    tau = dr.inverse_dynamics(truth, q, qd, qdd) + rng.normal(0.0, 0.05, q.shape)
    est = estimate_payload(model, 'tool0', q, qd, qdd, tau)
    # The least-squares solution leaves the physical set; the answer stays inside it.
    assert est.constrained
    assert np.linalg.eigvalsh(_pseudo_inertia(est.parameters))[0] > 0.0
    assert np.linalg.eigvalsh(est.inertia)[0] > 0.0
    assert abs(est.mass - 0.8) < 4.0 * est.standard_deviation[0] + 0.01


def test_standard_deviations_match_the_spread_of_repeated_estimates():
    model = dr.load_urdf(urdf_text())
    q, qd, qdd = motion_states(model.dof, 200, 6)
    truth = dr.attach_payload(model, 'tool0', MASS, COM, INERTIA)
    clean = dr.inverse_dynamics(truth, q, qd, qdd)
    rng = np.random.default_rng(1)
    runs = [estimate_payload(model, 'tool0', q, qd, qdd, clean + rng.normal(0.0, 0.02, q.shape))
            for _ in range(40)]
    spread = np.std([r.mass for r in runs])
    stated = np.mean([r.standard_deviation[0] for r in runs])
    assert 0.6 < stated / spread < 1.6
    com_spread = np.std([r.com for r in runs], axis=0)
    com_stated = np.mean([r.standard_deviation[1:4] for r in runs], axis=0)
    assert np.all((0.6 < com_stated / com_spread) & (com_stated / com_spread < 1.6))


# ------------------------------------------------------------------------------------------------
# The stamp-keyed window


def test_window_keeps_the_latest_seconds_of_stamps_and_restarts_on_a_reset():
    window = PayloadWindow(2, window=1.0)
    for k in range(3000):                      # 3 s at 1 kHz
        assert window.append(k * 1_000_000, [k, 0.0], [0.0, 0.0], [1.0, 1.0])
    assert len(window) == 1001 and abs(window.span() - 1.0) < 1e-12
    assert not window.append(2999 * 1_000_000, [0.0, 0.0], None, [1.0, 1.0])   # duplicate
    rec = window.recording(0.25)
    assert rec.time.size == 251 and rec.position[0, 0] == 2749
    window.append(5, [0.0, 0.0], None, [0.0, 0.0])        # clock went back: start anew
    assert len(window) == 1
    with pytest.raises(InputError):
        PayloadWindow(2, window=0.0)
    with pytest.raises(InputError, match='2 numbers'):
        window.append(10, [0.0, 0.0, 0.0], None, [0.0, 0.0])
    assert len(window) == 1
    with pytest.raises(DataError, match='no joint states'):
        PayloadWindow(2).recording()


def test_window_estimate_static_poses_with_gaps_matches_the_truth():
    """Four still poses published 1.5 s each, nothing published while the arm moved."""
    model = dr.load_urdf(urdf_text())
    truth = dr.attach_payload(model, 'tool0', MASS, COM, INERTIA)
    poses = [[0.0, -1.0, 1.2, -0.5, 1.0, 0.0], [0.5, -1.4, 1.0, 0.8, -0.7, 1.0],
             [-0.4, -0.8, 1.6, -1.8, 0.4, -0.6], [0.2, -1.2, 0.9, 0.3, 1.6, 2.0]]
    window = PayloadWindow(model.dof, window=30.0)
    stamp = 10 ** 9
    rng = np.random.default_rng(2)
    for pose in poses:
        tau = dr.gravity_torques(truth, pose)
        for _ in range(1500):
            window.append(stamp, pose, np.zeros(6), tau + rng.normal(0.0, 0.01, 6))
            stamp += 1_000_000
        stamp += 3 * 10 ** 9          # the move: nothing published
    est, notes = window.estimate_with_notes(model, 'tool0')
    assert not notes
    assert not est.inertia_identified
    assert abs(est.mass - MASS) < 0.01 * MASS
    assert np.linalg.norm(est.com - COM) < 1e-3
    # One pose only (the last 1.2 s): the centre of mass along gravity is not seen.
    with pytest.raises(DataError, match='COM'):
        window.estimate(model, 'tool0', duration=1.2)


def test_window_estimate_equals_the_recording_estimate():
    model = dr.load_urdf(urdf_text())
    truth = dr.attach_payload(model, 'tool0', MASS, COM, INERTIA)
    t = np.arange(0.0, 8.0, 1e-3)
    w = 2.0 * np.pi * np.array([0.2, 0.3, 0.25, 0.4, 0.45, 0.5])
    q = 0.6 * np.sin(np.outer(t, w)) + [0.0, -1.2, 1.2, -0.8, 0.5, 0.0]
    qd = 0.6 * w * np.cos(np.outer(t, w))
    qdd = -0.6 * w ** 2 * np.sin(np.outer(t, w))
    tau = dr.inverse_dynamics(truth, q, qd, qdd)
    window = PayloadWindow(model.dof, window=30.0)
    for k in range(t.size):
        window.append(int(round(t[k] * 1e9)) + 5 * 10 ** 9, q[k], qd[k], tau[k])
    est = window.estimate(model, 'tool0')
    direct = estimate_payload_from_recording(model, window.recording(0.0, model.joint_names),
                                             'tool0')
    np.testing.assert_array_equal(est.parameters, direct.parameters)
    assert est.inertia_identified
    assert abs(est.mass - MASS) < 1e-3 * MASS
    np.testing.assert_allclose(est.com, COM, atol=2e-4)
    assert np.linalg.norm(est.inertia - INERTIA) < 0.02 * np.linalg.norm(INERTIA)


# ------------------------------------------------------------------------------------------------
# Command lines


def test_identify_payload_writes_report_and_urdf_and_excitation_moves_the_wrist(tmp_path,
                                                                                capsys):
    from denoc_ros.identification.data import JointStateRecording, write_npz
    from denoc_ros.tools import excitation, identify
    import json
    text = urdf_text()
    (tmp_path / 'arm.urdf').write_text(text)
    model = dr.load_urdf(text)
    truth = dr.attach_payload(model, 'tool0', MASS, COM, INERTIA)
    t = np.arange(0.0, 8.0, 2e-3)
    w = 2.0 * np.pi * np.array([0.0, 0.0, 0.0, 0.4, 0.45, 0.5])
    q = 0.8 * np.sin(np.outer(t, w)) + [0.3, -1.3, 1.4, -1.2, -1.4, 0.3]
    qd = 0.8 * w * np.cos(np.outer(t, w))
    qdd = -0.8 * w ** 2 * np.sin(np.outer(t, w))
    tau = dr.inverse_dynamics(truth, q, qd, qdd)
    write_npz(tmp_path / 'rec.npz', JointStateRecording(model.joint_names, t, q, qd, tau))
    status = identify.main(['--urdf', str(tmp_path / 'arm.urdf'), '--payload', 'tool0',
                            '--data', str(tmp_path / 'rec.npz'), '--friction', 'none',
                            '--output-urdf', str(tmp_path / 'out.urdf'),
                            '--report', str(tmp_path / 'report')])
    out = capsys.readouterr().out
    assert status == 0 and 'payload on tool0' in out
    report = json.loads((tmp_path / 'report' / 'report.json').read_text())['payload']
    assert report['inertia_identified'] and abs(report['mass'] - MASS) < 1e-3 * MASS
    # The written URDF, loaded anew, has the arm plus the estimate on the tool's body.
    written = dr.load_urdf((tmp_path / 'out.urdf').read_text())
    expected = dr.attach_payload(model, 'tool0', report['mass'], report['com'],
                                 report['inertia'])
    np.testing.assert_allclose(written.mass, expected.mass, rtol=1e-12)
    np.testing.assert_allclose(written.com, expected.com, atol=1e-12)
    np.testing.assert_allclose(written.inertia, expected.inertia, atol=1e-12)
    # Too little motion: one line, status 1.
    still = JointStateRecording(model.joint_names, t, np.repeat(q[:1], t.size, 0),
                                np.zeros_like(q), np.repeat(tau[:1], t.size, 0))
    write_npz(tmp_path / 'still.npz', still)
    status = identify.main(['--urdf', str(tmp_path / 'arm.urdf'), '--payload', 'tool0',
                            '--data', str(tmp_path / 'still.npz'), '--friction', 'none',
                            '--output-urdf', str(tmp_path / 'o2.urdf'),
                            '--report', str(tmp_path / 'r2')])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith('denoc_identify: error')]
    assert status == 1 and len(errors) == 1 and 'COM' in errors[0]
    # The payload excitation: short, the wrist joints only, within the limits.
    status = excitation.main(['--urdf', str(tmp_path / 'arm.urdf'), '--payload-link', 'tool0',
                              '--duration', '10', '--max-iterations', '15',
                              '--start', '0.3,-1.3,1.4,-1.2,-1.4,0.3',
                              '--output', str(tmp_path / 'traj.yaml')])
    out = capsys.readouterr().out
    assert status == 0
    assert 'moving wrist_1_joint, wrist_2_joint, wrist_3_joint' in out


def test_a_barely_moving_wrist_reports_the_inertia_as_not_identified():
    text = urdf_text()
    model = dr.load_urdf(text)
    t = np.linspace(0.0, 10.0, 400)
    w = 2.0 * np.pi * np.array([0.0, 0.0, 0.0, 0.1, 0.13, 0.17])
    q = 0.6 * np.sin(np.outer(t, w)) + [0.3, -1.3, 1.4, -1.2, -1.4, 0.3]
    qd = 0.6 * w * np.cos(np.outer(t, w))
    qdd = -0.6 * w ** 2 * np.sin(np.outer(t, w))
    tau = pinocchio_efforts(text, 'tool0', q, qd, qdd)
    est = estimate_payload(model, 'tool0', q, qd, qdd, tau)
    assert 0.0 < est.excitation['inertia'] < 3e-3
    assert not est.inertia_identified and not np.any(est.inertia)
    assert abs(est.mass - MASS) < 1e-3 * MASS      # inertia terms left out: a small bias
    assert np.linalg.norm(est.com - COM) < 1e-3
    lenient = estimate_payload(model, 'tool0', q, qd, qdd, tau, inertia_rcond=1e-5)
    assert lenient.inertia_identified
    np.testing.assert_allclose(lenient.inertia, INERTIA, atol=1e-8)
