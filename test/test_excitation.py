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
Excitation trajectories: the Fourier series, the design, the writers and ``denoc_excitation``.

The design is checked independently of its own code: limits with :func:`denoc_ros.inverse_dynamics`
on a grid ten times finer than the design's, the condition number from :func:`denoc_ros.regressor`
and an SVD, the gradients against finite differences.
"""

import io
import math
import pathlib
import subprocess
import sys

import denoc_ros as dr
from denoc_ros.errors import InputError
from denoc_ros.identification import excitation as ex
from denoc_ros.identification.base import base_parameters
from denoc_ros.identification.parameters import joint_columns, ParameterLayout
from denoc_ros.tools import excitation as cli
import numpy as np
import pytest
import threadpoolctl
import yaml

REPO = pathlib.Path(__file__).resolve().parent.parent

# Two links swinging in a vertical plane; effort limit of joint 1 (15 N m) a little above the
# largest gravity torque (about 9.8 N m), so that the effort constraint matters.
TWO_LINK = """<?xml version="1.0"?>
<robot name="two_link">
  <link name="base"/>
  <link name="upper">
    <inertial><origin xyz="0.25 0 0"/><mass value="1.0"/>
      <inertia ixx="0.001" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <link name="fore">
    <inertial><origin xyz="0.25 0 0"/><mass value="1.0"/>
      <inertia ixx="0.001" iyy="0.02" izz="0.02" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/><axis xyz="0 1 0"/>
    <limit lower="-2.0" upper="1.5" velocity="2.0" effort="15.0"/>
    <dynamics damping="0.1" friction="0.2"/>
  </joint>
  <joint name="elbow" type="revolute">
    <parent link="upper"/><child link="fore"/><origin xyz="0.5 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2.5" upper="2.5" velocity="3.0" effort="10.0"/>
  </joint>
</robot>
"""


@pytest.fixture(scope='module')
def two_link(tmp_path_factory):
    """Return (path of the two-link URDF, its model)."""
    path = tmp_path_factory.mktemp('urdf') / 'two_link.urdf'
    path.write_text(TWO_LINK)
    return path, dr.load_urdf(str(path))


@pytest.fixture(scope='module')
def panda_design():
    """Design for the Panda (zero start: joints 4 and 6 moved into their limits)."""
    model = dr.load_urdf(str(REPO / 'urdf' / 'panda.urdf'))
    limits = ex.excitation_limits(model, 0.8)
    start = np.clip(np.zeros(model.dof), limits.lower, limits.upper)
    result = ex.design_excitation(model, duration=10.0, harmonics=4, max_iterations=60,
                                  start=start, seed=3)
    return model, result, start


def _scaled_and_unscaled(model, result, t):
    """Return the base regressor's condition numbers at times t, from dr.regressor and an SVD."""
    q, qd, qdd = result.trajectory(t)
    layout = result.layout
    W = np.concatenate((dr.regressor(model, q, qd, qdd),
                        joint_columns(model, qd, qdd, layout.joint_terms, layout.smoothing)), -1)
    Wb = W[..., result.base.independent].reshape(t.size * model.dof, -1)
    s = np.linalg.svd(Wb / np.linalg.norm(Wb, axis=0), compute_uv=False)
    eig = np.linalg.eigvalsh(Wb.T @ Wb)
    return s[0] / s[-1], math.sqrt(eig[-1] / eig[0])


# -- the Fourier series ----------------------------------------------------------------------

def test_fourier_derivatives_match_finite_differences():
    """The velocities and accelerations are q's derivatives (central differences, 1e-8)."""
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    w_f = 2 * math.pi / 7.0
    t = np.linspace(0.0, 7.0, 57)
    h = 1e-5
    q, qd, qdd = ex.fourier_trajectory((a, b), w_f, t, q0=[0.1, -0.2, 0.3])
    qp, qdp, _ = ex.fourier_trajectory((a, b), w_f, t + h, q0=[0.1, -0.2, 0.3])
    qm, qdm, _ = ex.fourier_trajectory((a, b), w_f, t - h, q0=[0.1, -0.2, 0.3])
    np.testing.assert_allclose((qp - qm) / (2 * h), qd, atol=1e-8 * np.abs(qd).max())
    np.testing.assert_allclose((qdp - qdm) / (2 * h), qdd, atol=1e-8 * np.abs(qdd).max())
    # Periodic with period 2 pi / w_f; the mean position is q0.
    end = ex.fourier_trajectory((a, b), w_f, [7.0], q0=[0.1, -0.2, 0.3])
    for x, y in zip(end, (q, qd, qdd)):
        np.testing.assert_allclose(x[0], y[0], atol=1e-12)
    tt = np.arange(1000) * 7.0 / 1000
    np.testing.assert_allclose(ex.fourier_trajectory((a, b), w_f, tt, q0=[0.1, -0.2, 0.3])[0]
                               .mean(axis=0), [0.1, -0.2, 0.3], atol=1e-12)


def test_fourier_closed_form_one_harmonic():
    """One harmonic: q = q0 + a/w sin(w t) - b/w cos(w t) (Swevers et al. 1997), by hand."""
    w, t = 0.5, np.array([0.0, 1.0, 2.5])
    q, qd, qdd = ex.fourier_trajectory(([[2.0]], [[3.0]]), w, t, q0=0.4)
    np.testing.assert_allclose(q[:, 0], 0.4 + 4.0 * np.sin(w * t) - 6.0 * np.cos(w * t))
    np.testing.assert_allclose(qd[:, 0], 2.0 * np.cos(w * t) + 3.0 * np.sin(w * t))
    np.testing.assert_allclose(qdd[:, 0], -1.0 * np.sin(w * t) + 1.5 * np.cos(w * t))


def test_fourier_bad_input():
    """Mismatched shapes, NaN and a non-positive frequency raise InputError."""
    with pytest.raises(InputError, match='shape'):
        ex.fourier_trajectory((np.zeros((2, 3)), np.zeros((2, 4))), 1.0, [0.0])
    with pytest.raises(InputError, match='finite'):
        ex.fourier_trajectory(([[np.nan]], [[0.0]]), 1.0, [0.0])
    with pytest.raises(InputError, match='frequency'):
        ex.fourier_trajectory(([[1.0]], [[0.0]]), 0.0, [0.0])


# -- the design ------------------------------------------------------------------------------

def test_design_gradients_match_finite_differences(two_link):
    """The objective's and the constraints' exact derivatives against central differences."""
    _, model = two_link
    layout = ParameterLayout.of(model, ('viscous', 'coulomb', 'armature'))
    base = base_parameters(layout, model)
    limits = ex.excitation_limits(model, 0.8)
    for start in (None, np.array([0.3, -0.2])):
        design = ex._Design(model, layout, base, 8.0, 4, 120, limits, start)
        z = design.random_start(np.random.default_rng(1),
                                limits.middle if start is None else start)
        out = design.evaluate(z, True)
        h = 1e-5
        grad, jac = np.zeros_like(z), np.zeros_like(out['jacobian'])
        for i in range(z.size):
            e = np.zeros_like(z)
            e[i] = h
            up, down = design.evaluate(z + e), design.evaluate(z - e)
            grad[i] = (up['value'] - down['value']) / (2 * h)
            jac[:, i] = (up['constraints'] - down['constraints']) / (2 * h)
        np.testing.assert_allclose(out['gradient'], grad, atol=1e-6 * np.abs(grad).max())
        np.testing.assert_allclose(out['jacobian'], jac, atol=1e-7 * np.abs(jac).max())


def test_panda_design_within_limits_on_a_finer_grid(panda_design):
    """Positions, velocities and inverse-dynamics efforts 10x between the design's samples."""
    model, result, _ = panda_design
    t = np.linspace(0.0, result.duration, 10 * result.t.size, endpoint=False)
    q, qd, qdd = result.trajectory(t)
    tau = dr.inverse_dynamics(model, q, qd, qdd)
    middle, half = 0.5 * (model.lower + model.upper), 0.5 * (model.upper - model.lower)
    # The design enforces 0.8 of each limit on its own grid; between grid points a little more.
    assert np.all(np.abs(q - middle) <= 0.81 * half)
    assert np.all(np.abs(qd) <= 0.81 * model.velocity_limit)
    assert np.all(np.abs(tau) <= 0.81 * model.effort_limit)
    # It uses the room it has: some joint reaches 0.8 of its position and velocity limits.
    assert np.max(np.abs(q - middle) / half) > 0.75
    assert np.max(np.abs(qd) / model.velocity_limit) > 0.6
    usage = result.usage
    np.testing.assert_allclose(usage['effort'], np.max(np.abs(tau), axis=0) / model.effort_limit,
                               rtol=1e-9)
    assert all(np.all(result.margins[k] >= 0.19) for k in usage)


def test_panda_design_starts_and_ends_at_rest_at_the_start(panda_design):
    """q(0) = q(T) = the start, qd and qdd zero there (joints 4 and 6 moved into their limits)."""
    model, result, start = panda_design
    assert start[3] == pytest.approx(-0.37) and start[5] == pytest.approx(0.3595)
    for time in (0.0, result.duration):
        q, qd, qdd = result.trajectory([time])
        np.testing.assert_allclose(q[0], start, atol=1e-12)
        np.testing.assert_allclose(qd[0], 0.0, atol=1e-12)
        np.testing.assert_allclose(qdd[0], 0.0, atol=1e-12)
    np.testing.assert_allclose(result.start, start, atol=1e-12)


def test_panda_condition_number_far_below_the_random_start(panda_design):
    """
    The conditioning improves several-fold over the random start; both numbers recomputed.

    Measured (4 harmonics, 10 s, 60 iterations, seed 3): column-scaled 38 at the random start,
    about 6 designed; unscaled sqrt(cond(W_b^T W_b)) about 1500 and 200.
    """
    model, result, _ = panda_design
    scaled, unscaled = _scaled_and_unscaled(model, result, result.t)
    assert scaled == pytest.approx(result.condition, rel=1e-6)
    assert unscaled == pytest.approx(result.condition_unscaled, rel=1e-4)
    assert result.condition < result.initial_condition / 4
    assert result.condition_unscaled < result.initial_condition_unscaled / 4
    assert result.condition < 10.0
    # On a grid ten times finer (what a recording samples), nearly the same.
    fine = np.linspace(0.0, result.duration, 10 * result.t.size, endpoint=False)
    assert _scaled_and_unscaled(model, result, fine)[0] == pytest.approx(result.condition,
                                                                         rel=0.05)
    assert result.base.rank == 57


def test_design_free_start_and_effort_limit(two_link):
    """No start given: q(0) is the optimiser's; the effort limit binds and holds."""
    _, model = two_link
    result = ex.design_excitation(model, duration=6.0, harmonics=3, max_iterations=80)
    assert result.condition < result.initial_condition / 2
    t = np.linspace(0.0, 6.0, 2000, endpoint=False)
    q, qd, qdd = result.trajectory(t)
    tau = dr.inverse_dynamics(model, q, qd, qdd)
    assert np.all(np.abs(tau) <= 0.81 * model.effort_limit)
    assert np.all(np.abs(qd) <= 0.81 * model.velocity_limit)
    assert np.all((q >= model.lower) & (q <= model.upper))
    np.testing.assert_allclose(result.trajectory([0.0])[1], 0.0, atol=1e-12)


def test_limits_defaults_and_bad_input(two_link):
    """No URDF limits: +-pi; a zero velocity limit counts as none; bad arguments raise."""
    _, model = two_link
    free = model.replace(lower=np.full(2, -np.inf), upper=np.full(2, np.inf),
                         velocity_limit=np.array([0.0, 3.0]))
    limits = ex.excitation_limits(free, 0.5)
    np.testing.assert_allclose(limits.upper, [0.5 * math.pi] * 2)
    np.testing.assert_allclose(limits.velocity, [np.inf, 1.5])
    with pytest.raises(InputError, match='safety'):
        ex.excitation_limits(model, 1.5)
    with pytest.raises(InputError, match='outside'):
        ex.design_excitation(model, start=[1.45, 0.0])
    with pytest.raises(InputError, match='harmonics'):
        ex.design_excitation(model, harmonics=1)
    with pytest.raises(InputError, match='duration'):
        ex.design_excitation(model, duration=-1.0)


def test_design_runs_blas_on_one_thread(two_link):
    """During the design every BLAS threadpoolctl finds runs one thread; afterwards as before."""
    _, model = two_link

    def blas_threads():
        return {i['filepath']: i['num_threads'] for i in threadpoolctl.threadpool_info()
                if i['user_api'] == 'blas'}

    seen = []
    with threadpoolctl.threadpool_limits(limits=2, user_api='blas'):
        before = blas_threads()
        assert before and all(k == 2 for k in before.values())   # NumPy's OpenBLAS, threaded
        ex.design_excitation(model, duration=4.0, harmonics=3, max_iterations=3,
                             progress=lambda iteration, condition: seen.append(blas_threads()))
        assert blas_threads() == before
    assert seen and all(set(before) <= set(threads) and set(threads.values()) == {1}
                        for threads in seen)


# -- the writers -----------------------------------------------------------------------------

def test_yaml_is_one_joint_trajectory(tmp_path, panda_design):
    """The YAML loads with yaml.safe_load into JointTrajectory fields, times increasing."""
    model, result, _ = panda_design
    t, q, qd, qdd = result.sampled(50.0)
    path = tmp_path / 'traj.yaml'
    ex.write_trajectory_yaml(path, model.joint_names, t, q, qd, qdd, comment='a\nb')
    data = yaml.safe_load(path.read_text())
    assert set(data) == {'header', 'joint_names', 'points'}
    assert data['header'] == {'stamp': {'sec': 0, 'nanosec': 0}, 'frame_id': ''}
    assert data['joint_names'] == list(model.joint_names)
    points = data['points']
    assert len(points) == 501                       # 10 s at 50 Hz, both ends
    assert set(points[0]) == {'positions', 'velocities', 'accelerations', 'effort',
                              'time_from_start'}
    times = [p['time_from_start']['sec'] + 1e-9 * p['time_from_start']['nanosec']
             for p in points]
    assert all(isinstance(p['time_from_start']['nanosec'], int) for p in points)
    assert np.all(np.diff(times) > 0.0) and times[-1] == 10.0
    np.testing.assert_allclose(times, t, atol=1e-9)
    np.testing.assert_array_equal([p['positions'] for p in points], q)    # full precision
    np.testing.assert_array_equal([p['velocities'] for p in points], qd)
    np.testing.assert_array_equal([p['accelerations'] for p in points], qdd)
    np.testing.assert_allclose(points[-1]['positions'], points[0]['positions'], atol=1e-12)
    assert points[0]['effort'] == []
    # the layout readers and people see: comments first, one block per point, a list a line
    lines = path.read_text().splitlines()
    assert lines[:5] == ['# a', '# b', 'header:', '  stamp: {sec: 0, nanosec: 0}',
                         "  frame_id: ''"]
    assert lines[5].startswith('joint_names: [') and lines[6] == 'points:'
    assert lines[7].startswith('- positions: [') and lines[8].startswith('  velocities: [')
    assert len(lines) == 7 + 5 * len(points)


def test_yaml_loads_in_ct_controller(tmp_path, panda_design):
    """ct_controller's trajectory_file loader takes the file."""
    from denoc_ros.ros import ct_controller as controller
    model, result, _ = panda_design
    t, q, qd, qdd = result.sampled(20.0)
    path = tmp_path / 'traj.yaml'
    ex.write_trajectory_yaml(path, model.joint_names, t, q, qd, qdd)
    msg = controller.load_trajectory_yaml(str(path))
    assert list(msg.joint_names) == list(model.joint_names) and len(msg.points) == t.size
    assert msg.points[-1].time_from_start.sec == 10
    for k in (0, 77, t.size - 1):                   # bit for bit through the node's loader
        point = msg.points[k]
        np.testing.assert_array_equal(point.positions, q[k])
        np.testing.assert_array_equal(point.velocities, qd[k])
        np.testing.assert_array_equal(point.accelerations, qdd[k])
        assert point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec == \
            pytest.approx(t[k], abs=1e-9)


def test_csv_columns(tmp_path):
    """time, then per joint position, velocity, acceleration."""
    t = np.array([0.0, 0.5, 1.0])
    q, qd, qdd = (np.arange(6.0).reshape(3, 2) + k for k in range(3))
    path = tmp_path / 'traj.csv'
    ex.write_trajectory_csv(path, ['a', 'b'], t, q, qd, qdd)
    lines = path.read_text().splitlines()
    assert lines[0] == ('time,a/position,a/velocity,a/acceleration,b/position,b/velocity,'
                        'b/acceleration')
    table = np.loadtxt(path, delimiter=',', skiprows=1)
    np.testing.assert_array_equal(table, np.column_stack((t, q[:, 0], qd[:, 0], qdd[:, 0],
                                                          q[:, 1], qd[:, 1], qdd[:, 1])))
    with pytest.raises(InputError, match='increasing'):
        ex.write_trajectory_csv(path, ['a', 'b'], t[::-1], q, qd, qdd)
    with pytest.raises(InputError, match='shape'):
        ex.write_trajectory_yaml(path, ['a'], t, q, qd, qdd)
    with pytest.raises(InputError, match='efforts have shape'):
        ex.write_trajectory_yaml(path, ['a', 'b'], t, q, qd, qdd, effort=q[:2])
    ex.write_trajectory_yaml(path, ['a', 'b'], t, q, qd, qdd, effort=-q)
    assert [p['effort'] for p in yaml.safe_load(path.read_text())['points']] == (-q).tolist()


# -- the command line ------------------------------------------------------------------------

def test_cli_writes_both_files(tmp_path, two_link, capsys):
    """denoc_excitation on the two-link arm: status 0, the YAML and the CSV, a summary."""
    urdf, model = two_link
    out = tmp_path / 'out' / 'traj.yaml'
    status = cli.main(['--urdf', str(urdf), '--duration', '4', '--harmonics', '3',
                       '--rate', '50', '--output', str(out)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    data = yaml.safe_load(out.read_text())
    assert data['joint_names'] == ['shoulder', 'elbow'] and len(data['points']) == 201
    np.testing.assert_allclose(data['points'][0]['positions'], [0.0, 0.0], atol=1e-9)
    csv = out.with_suffix('.csv')
    assert np.loadtxt(csv, delimiter=',', skiprows=1).shape == (201, 7)
    assert 'condition number' in captured.out and 'elbow' in captured.out
    assert 'iteration' in captured.err                  # progress, one line per 10 iterations


def test_cli_bad_urdf_one_line(tmp_path):
    """A missing URDF: one line on stderr, no traceback, status 1; a usage error: status 2."""
    env_path = str(REPO)
    run = subprocess.run([sys.executable, '-m', 'denoc_ros.tools.excitation', '--urdf',
                          str(tmp_path / 'missing.urdf'), '--output', str(tmp_path / 't.yaml')],
                         capture_output=True, text=True, timeout=120, cwd=env_path,
                         env={'PYTHONPATH': env_path, 'PATH': '/usr/bin:/bin'})
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith('denoc_excitation: error: '), run.stderr
    assert 'missing.urdf' in lines[0]
    assert not (tmp_path / 't.yaml').exists()


def test_cli_usage_and_input_errors(tmp_path, two_link, capsys):
    """Usage errors exit 2, bad values 1, each with one line on stderr."""
    urdf, _ = two_link
    with pytest.raises(SystemExit) as stop:
        cli.main(['--urdf', str(urdf)])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith('denoc_excitation: error: ')
    for extra, word in ((['--start', '1,2,3'], 'joints'), (['--harmonics', '1'], 'harmonics'),
                        (['--safety', '2'], 'safety'), (['--duration', '0'], 'duration')):
        status = cli.main(['--urdf', str(urdf), '--output', str(tmp_path / 't.yaml')] + extra)
        err = capsys.readouterr().err.strip().splitlines()
        assert status == 1 and len(err) == 1 and word in err[0], (extra, err)
        assert err[0].startswith('denoc_excitation: error: ')


class _Terminal(io.StringIO):
    """A text stream that says it is a terminal."""

    def isatty(self):
        """Return True."""
        return True


def test_progress_redraws_one_line_on_a_terminal():
    """On a terminal each iteration redraws the line (carriage return); else every tenth."""
    tty, pipe = _Terminal(), io.StringIO()
    for stream in (tty, pipe):
        progress = cli.Progress(stream)
        for k in range(1, 21):
            progress(k, 10.0 / k)
        progress.done()
    assert tty.getvalue().count('\r') == 20 and tty.getvalue().endswith('\n')
    assert pipe.getvalue().count('\n') == 2 and '\r' not in pipe.getvalue()
    assert 'iteration   20, condition number        0.5' in pipe.getvalue()
