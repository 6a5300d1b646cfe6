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
Identification from a user's recording (issue 32), with MuJoCo as the robot.

The robot: a 7-joint arm (the bundled Panda's kinematics) whose true links are solid boxes
(mass, centre of mass and box of the link), with viscous and Coulomb joint friction, and a
camera on a pan joint on link 3 that the arm's controller holds still (in MuJoCo the camera is
welded). Its efforts come from MuJoCo's inverse dynamics (``mj_inverse``) along a smooth
motion that ends in a rest, plus the friction law. The recording is what a driver writes: the
first four joints' efforts as motor currents (torque / (gear ratio x torque constant)) with
noise, the last three joints' efforts all zero (no torque sensing).

The user's URDF: the Panda with every body's mass, centre of mass and inertia off by up to
30 % and 2 cm, an XML declaration with an encoding, the camera on its revolute pan joint (off
the chain given by ``--tip-link``: locked onto link 3), a simulation's damping of 40 N m s/rad on
joint 2, and box collision geometry on every link but link 5 (whose bound is the sphere around
its joint origins).

Checked:

* ``denoc_identify --unsensed J5,J6,J7 --effort-scale J1=N*K --gear-ratio J2=N
  --torque-constant J2=K ...`` exits 0, writes an identified URDF that loads, whose bodies lie
  within their bounds (checked by the second-moment formula, independently of the fit's
  LMI row), whose report leaves the unsensed joints out of every metric, names the
  validation window without the rest, and lists every body in index.html;
* its held-out torque NRMSE on the sensed joints (a further recording, efforts with the same
  noise) is within 1.2 times that of an oracle: the same library fit on the exact torques of
  every joint, without noise or filter;
* without the options, a warning per joint names each sensed joint's factor (within 10 % of
  gear ratio x torque constant) and each unsensed joint; a failure after the fit (here
  forced) writes report.json with the reason and ends with one line and status 1.
"""

import json
import re

from conftest import require_oracle
import denoc_ros as dr
from denoc_ros.description import read_description
from denoc_ros.identification.bounds import body_bounds, locked_parameters
from denoc_ros.identification.data import write_csv
from denoc_ros.identification.filtering import Samples
from denoc_ros.identification.pipeline import identify
from denoc_ros.identification.recording import JointStateRecording
from denoc_ros.identification.urdf_output import identified_urdf
from denoc_ros.tools import identify as cli
import numpy as np
import pytest
from test_identification_recovery import mujoco_efforts

require_oracle('mujoco')       # the oracle of mujoco_efforts

RATE = 500.0
SMOOTHING = 1e-3            # the friction law's tanh velocity scale (denoc_ros.friction)
GEAR = (100.0, 100.0, 160.0, 160.0)
KT = (0.09, 0.07, 0.05, 0.06)   # N m / A
SENSED = 4
NOISE = 0.25                # N m, effort noise (before the conversion to current)
TIP = 'panda_link8'
CAMERA = """
  <joint name="camera_pan" type="revolute">
    <parent link="panda_link3"/><child link="camera_link"/>
    <origin xyz="0.1 0.0 0.05" rpy="0 0 0"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="5" velocity="1"/>
  </joint>
  <link name="camera_link">
    <inertial><origin xyz="0.04 0 0.02" rpy="0 0 0"/><mass value="0.4"/>
      <inertia ixx="4e-4" ixy="0" ixz="0" iyy="6e-4" iyz="0" izz="6e-4"/></inertial>
    <collision><origin xyz="0.04 0 0.02" rpy="0 0 0"/>
      <geometry><box size="0.1 0.06 0.06"/></geometry></collision>
  </link>
"""


def box_inertia(mass, size):
    """Return the inertia of a solid box about its centre."""
    a, b, c = size
    return mass / 12.0 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


def robots(rng):
    """Return (user URDF text, true URDF text for MuJoCo, true link boxes)."""
    text = read_description('panda')
    text = text[text.index('<robot'):]
    panda = dr.load_urdf(text)
    boxes = {}
    mass, com, inertia = [], [], []
    for i, link in enumerate(panda.link_names):
        size = rng.uniform(0.08, 0.2, 3)
        boxes[link] = (panda.com[i], size)
        mass.append(panda.mass[i])
        com.append(panda.com[i])
        inertia.append(box_inertia(panda.mass[i], size))
    true = panda.replace(mass=np.array(mass), com=np.array(com), inertia=np.array(inertia))
    n = true.dof
    viscous, coulomb = rng.uniform(0.2, 1.0, n), rng.uniform(0.3, 1.5, n)
    true_text = identified_urdf(text, panda, dr.inertial_parameters(true), viscous, coulomb)
    nominal = true.replace(mass=true.mass * rng.uniform(0.75, 1.3, n),
                           com=true.com + rng.normal(scale=0.02, size=(n, 3)),
                           inertia=true.inertia * rng.uniform(0.7, 1.4, (n, 1, 1)))
    user = identified_urdf(text, panda, dr.inertial_parameters(nominal))
    # A simulation's damping on joint 2, as vendor URDFs carry: the nominal is validated with
    # and without it.
    user = re.sub(r'(<joint name="panda_joint2" type="revolute">)',
                  r'\1<dynamics damping="40.0" friction="0.0"/>', user)
    # Collision boxes (1.05 times the true box) on every link but link 5.
    for link, (centre, size) in boxes.items():
        if link == 'panda_link5':
            continue
        xyz, box = (' '.join(repr(float(x)) for x in v) for v in (centre, 1.05 * size))
        geometry = (f'<collision><origin xyz="{xyz}" rpy="0 0 0"/>'
                    f'<geometry><box size="{box}"/></geometry>'
                    '</collision>')
        user = re.sub(f'(<link name="{link}">)', r'\1' + geometry, user)
    user = user.replace('</robot>', CAMERA + '</robot>')
    user = '<?xml version="1.0" encoding="utf-8"?>\n' + user
    true_text = true_text.replace('</robot>', CAMERA.replace('revolute', 'fixed') + '</robot>')
    return user, true_text


def motion(rng, n, moving, rest, phase):
    """Return t, q, qd, qdd: a Fourier motion faded out over its last 1.5 s, then a rest."""
    t = np.arange(0.0, moving + rest, 1.0 / RATE)
    w = 2 * np.pi * 0.1 * np.arange(1, 6)
    a, b = rng.uniform(-0.3, 0.3, (2, n, 5))
    s, c = np.sin(w * (t[:, None, None] + phase)), np.cos(w * (t[:, None, None] + phase))
    f = (a / w * s - b / w * c).sum(-1)
    fd = (a * c + b * s).sum(-1)
    fdd = (w * (-a * s + b * c)).sum(-1)
    # Window 1 -> 0 on [moving - 1.5, moving] (a raised cosine), 0 after.
    x = np.clip((t - (moving - 1.5)) / 1.5, 0.0, 1.0)[:, None]
    k = np.pi / 1.5
    win = 0.5 * (1 + np.cos(np.pi * x))
    inside = (x > 0) & (x < 1)
    wd = np.where(inside, -0.5 * k * np.sin(np.pi * x), 0.0)
    wdd = np.where(inside, -0.5 * k * k * np.cos(np.pi * x), 0.0)
    centre = rng.uniform(-0.3, 0.3, n)
    q = centre + win * f
    qd = wd * f + win * fd
    qdd = wdd * f + 2 * wd * fd + win * fdd
    return t, q, qd, qdd


def predicted(model, q, qd, qdd):
    """Return a model's torques with its joint friction (the identification's law)."""
    return (dr.inverse_dynamics(model, q, qd, qdd) + model.damping * qd
            + model.friction * np.tanh(qd / SMOOTHING))


def nrmse(measured, prediction):
    """Return the mean NRMSE over the sensed joints (RMS error over the measured range)."""
    m, p = measured[:, :SENSED], prediction[:, :SENSED]
    return float(np.mean(np.sqrt(np.mean((p - m) ** 2, axis=0)) / np.ptp(m, axis=0)))


def bound_ratio(model, bounds):
    """
    Return per body the mean over its mass of ``(x - c)^T S^-1 (x - c)`` (at most 1: inside).

    From mass, centre of mass and inertia: ``tr(S^-1 Sigma_com) / m + (com - c)^T S^-1 (com
    - c)``, ``Sigma_com = tr(I_com) / 2 - I_com`` the second moment of the mass about its
    centre (independent of the fit's LMI row).
    """
    out = []
    for i, b in enumerate(bounds):
        inverse = np.diag(1.0 / b.semi_axes ** 2)
        second = 0.5 * np.trace(model.inertia[i]) * np.eye(3) - model.inertia[i]
        d = model.com[i] - b.centre
        out.append(np.trace(inverse @ second) / model.mass[i] + d @ inverse @ d)
    return np.array(out)


@pytest.fixture(scope='module')
def case(tmp_path_factory):
    """Record the true arm, run the CLI as a user would; return what the tests need."""
    rng = np.random.default_rng(32)
    user, true_text = robots(rng)
    folder = tmp_path_factory.mktemp('real')
    urdf = folder / 'robot.urdf'
    urdf.write_text(user, encoding='utf-8')
    model = dr.load_urdf(user, tip_link=TIP)
    names = model.joint_names
    true = dr.load_urdf(true_text)
    t, q, qd, qdd = motion(rng, model.dof, 16.0, 3.0, 0.0)
    tau = mujoco_efforts(true_text, true, q, qd, qdd)
    scale = np.array(GEAR) * np.array(KT)
    effort = np.zeros_like(tau)
    effort[:, :SENSED] = (tau[:, :SENSED] + rng.normal(scale=NOISE, size=(t.size, SENSED))) \
        / scale
    data = folder / 'recording.csv'
    write_csv(data, JointStateRecording(
        names, t, q + rng.normal(scale=1e-5, size=q.shape),
        qd + rng.normal(scale=1e-3, size=q.shape), effort))
    options = ['--unsensed', 'panda_joint5,panda_joint6', '--unsensed', 'panda_joint7',
               '--effort-scale', f'panda_joint1={GEAR[0]}*{KT[0]}',
               '--gear-ratio', f'panda_joint2={GEAR[1]}',
               '--torque-constant', f'panda_joint2={KT[1]}']
    options += [f'--effort-scale=panda_joint{j + 1}={GEAR[j] * KT[j]!r}' for j in (2, 3)]
    out, report_dir = folder / 'identified.urdf', folder / 'report'
    common = ['--urdf', str(urdf), '--tip-link', TIP, '--data', str(data)]
    status = cli.main(common + options + ['--output-urdf', str(out), '--report',
                                          str(report_dir)])
    # Held out: another motion of the true arm, efforts with the same noise (in N m).
    t2, q2, qd2, qdd2 = motion(rng, model.dof, 8.0, 0.0, 3.7)
    tau2 = mujoco_efforts(true_text, true, q2, qd2, qdd2)
    held_out = (q2, qd2, qdd2, tau2 + rng.normal(scale=NOISE, size=tau2.shape))
    # The oracle: the same fit on the exact torques of every joint, no noise, no filter.
    exact = Samples(t, q, qd, qdd, tau, names, 1, np.tanh(qd / SMOOTHING))
    oracle = identify(model, [exact], [exact], ('viscous', 'coulomb'), keep_predictions=False)
    return {'status': status, 'folder': folder, 'common': common, 'model': model, 'user': user,
            'out': out, 'report_dir': report_dir, 'held_out': held_out,
            'oracle': oracle.model, 'scale': scale, 'true_text': true_text}


def test_cli_runs_and_reports_sensed_joints_only(case):
    """Exit 0; report.json and index.html leave the unsensed joints out; window without rest."""
    assert case['status'] == 0
    report = json.loads((case['report_dir'] / 'report.json').read_text())
    v = report['validation']
    sensed = [f'panda_joint{j}' for j in range(1, SENSED + 1)]
    assert v['sensed_joints'] == sensed
    assert list(v['joints']) == sensed
    assert report['settings']['unsensed'] == ['panda_joint5', 'panda_joint6', 'panda_joint7']
    assert report['physical_fit']['converged']
    for j in range(SENSED):
        name = f'panda_joint{j + 1}'
        assert report['settings']['effort_scales'][name] == pytest.approx(case['scale'][j])
        assert 0.8 < report['settings']['effort_slopes'][name] < 1.25
    window = report['data']['validation_window']
    assert 'rest of' in window and 'excluded' in window, window
    html = (case['report_dir'] / 'index.html').read_text()
    assert all(link in html for link in case['model'].link_names)
    pngs = sorted(p.name for p in case['report_dir'].glob('torque_*.png'))
    assert len(pngs) == SENSED, pngs
    assert v['nrmse_nominal_with_dynamics'] > 1.5 * v['nrmse_nominal_rigid']
    assert len(report['body_table']) == case['model'].dof


def test_identified_bodies_within_their_bounds(case):
    """OUT.urdf keeps its encoding declaration, loads, and every body lies within its bound."""
    text = case['out'].read_text(encoding='utf-8')
    assert text.startswith('<?xml version="1.0" encoding="utf-8"?>')
    model = dr.load_urdf(text, tip_link=TIP)
    bounds = body_bounds(case['user'], case['model'], radius=0.384)
    sources = [b.source for b in bounds]
    assert sources.count('joint origins') == 1 and sources[4] == 'joint origins', sources
    ratios = bound_ratio(model, bounds)
    print('\nbound ratios (<= 1 inside):', np.round(ratios, 3))
    assert np.all(ratios <= 1.0 + 1e-9), ratios
    # The camera kept its nominal inertial; link 3 holds the rest, at least the camera's mass.
    full = dr.load_urdf(text)
    assert 'camera_pan' in full.joint_names
    locked = locked_parameters(case['user'], case['model'])
    assert locked[2, 0] == pytest.approx(0.4)
    assert model.mass[2] > 0.4


def test_held_out_error_within_the_oracle(case):
    """Held-out NRMSE of the sensed joints within 1.2 times the oracle's (exact torques)."""
    q, qd, qdd, measured = case['held_out']
    model = dr.load_urdf(case['out'].read_text(encoding='utf-8'), tip_link=TIP)
    ours = nrmse(measured, predicted(model, q, qd, qdd))
    oracle = nrmse(measured, predicted(case['oracle'], q, qd, qdd))
    nominal = nrmse(measured, predicted(case['model'], q, qd, qdd))
    print(f'\nheld-out NRMSE (sensed joints): nominal {100 * nominal:.2f} %, identified '
          f'{100 * ours:.2f} %, oracle {100 * oracle:.2f} %, ratio {ours / oracle:.3f}')
    assert ours <= 1.2 * oracle
    assert nominal > 1.5 * ours


def test_without_the_options_warnings_name_joints_and_factors(case, capsys, monkeypatch):
    """Warnings name each joint's factor or suggest --unsensed; a failure still writes a report."""
    def broken(*args, **kwargs):
        raise RuntimeError('disk full (forced by the test)')

    monkeypatch.setattr(cli, 'identified_urdf', broken)
    report_dir = case['folder'] / 'plain'
    status = cli.main(case['common'] + ['--no-plots', '--output-urdf',
                                        str(case['folder'] / 'plain.urdf'),
                                        '--report', str(report_dir)])
    err = capsys.readouterr().err.strip().splitlines()
    warnings = [line for line in err if line.startswith('denoc_identify: warning:')]
    print('\n' + '\n'.join(warnings))
    for j in range(SENSED):
        line = [w for w in warnings if f"'panda_joint{j + 1}'" in w]
        assert len(line) == 1, warnings
        factor = float(re.search(rf'--effort-scale panda_joint{j + 1}=([0-9.eE+-]+)',
                                 line[0]).group(1))
        assert factor == pytest.approx(case['scale'][j], rel=0.35)
    for j in range(SENSED, 7):
        line = [w for w in warnings if f"'panda_joint{j + 1}'" in w]
        assert len(line) == 1 and f'--unsensed panda_joint{j + 1}' in line[0], warnings
    assert not any('.py' in line or line.startswith(' ') for line in err), err
    assert status == 1
    errors = [line for line in err if 'error' in line]
    assert len(errors) == 1 and 'disk full' in errors[0], err
    report = json.loads((report_dir / 'report.json').read_text())
    assert 'disk full' in report['error']
    assert len(report['settings']['effort_warnings']) == 7
    assert 'nrmse_identified' in report['validation']
