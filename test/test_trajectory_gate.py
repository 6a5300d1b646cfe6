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
The trajectory gate's per-goal logic (:mod:`denoc_ros.trajectories.gate`), without ROS.

(And, last, the one thing here that needs rclpy: without control_msgs the gate alone refuses to
start, saying how to get it.)

The oracles: Pinocchio's RNEA on the Panda URDF with the payload written in as a fixed link
(not our model, not our payload code) for the efforts, and SciPy's ``BPoly.from_derivatives``
(its own Hermite construction, not our sampler) for the trajectory the controller samples from
the forwarded points.
"""

import pathlib
import subprocess
import sys

from conftest import require_module, require_oracle
import denoc_ros as dr
from denoc_ros.friction import JointFriction
from denoc_ros.identification.urdf_output import payload_urdf
from denoc_ros.resources import bundled_urdf
from denoc_ros.trajectories.gate import gate_trajectory, GateRejection
import numpy as np
import pytest
from scipy.interpolate import BPoly

LINK = 'panda_link8'
MASS, COM, INERTIA = 3.0, np.array([0.0, 0.03, 0.12]), np.diag([0.012, 0.012, 0.006])
WAYPOINTS = np.array([
    [0.16, 0.33, -0.15, -1.27, 0.28, 1.75, 0.53],
    [-0.41, 0.52, 0.2, -0.53, 0.11, 2.57, 0.34],
    [-0.52, 0.2, 0.52, -0.37, 0.11, 2.3, -0.54],
    [-0.42, 0.02, 0.42, -0.37, -0.38, 2.06, -0.26],
])
SHUFFLE = [3, 0, 6, 1, 5, 2, 4]   # the goal's joint order: model joint SHUFFLE[k] in column k


@pytest.fixture(scope='module')
def model():
    """Return the bundled Panda with 3 kg on panda_link8 (attach_payload)."""
    return dr.attach_payload(dr.load_urdf(str(bundled_urdf('panda'))), LINK, MASS, COM, INERTIA)


@pytest.fixture(scope='module')
def pinocchio_model():
    """Return (pin, model, data) of the Panda URDF with the payload as a fixed link."""
    pin = require_oracle('pinocchio')
    text = payload_urdf(bundled_urdf('panda').read_text(), LINK, MASS, COM, INERTIA)
    pm = pin.buildModelFromXML(text)
    return pin, pm, pm.createData()


def rnea(pinocchio_model, q, qd, qdd):
    """Return Pinocchio's inverse dynamics of every row (model joint order)."""
    pin, pm, data = pinocchio_model
    return np.array([pin.rnea(pm, data, *row) for row in zip(q, qd, qdd)])


def plan(model, scale=1.0):
    """Return a quintic goal through WAYPOINTS timed at 15 rad/s^2 (MoveIt-like), model order."""
    timed = dr.retime(model, WAYPOINTS, acceleration_limits=15.0, effort_limits=1e6)
    return timed.t * scale, timed.q, timed.qd / scale, timed.qdd / scale ** 2


def shuffled(model, t, q, qd, qdd):
    """Return the goal in the SHUFFLE joint order: (names, t, q, qd, qdd)."""
    names = [model.joint_names[j] for j in SHUFFLE]
    return names, t, q[:, SHUFFLE], qd[:, SHUFFLE], qdd[:, SHUFFLE]


def controller_samples(gated, period=2e-4):
    """Return (times, q, qd, qdd) sampled from the forwarded points with SciPy's Hermite."""
    t = gated.t
    times = np.arange(t[0], t[-1], period)
    out = []
    for j in range(gated.q.shape[1]):
        poly = BPoly.from_derivatives(t, np.stack(
            [gated.q[:, j], gated.qd[:, j], gated.qdd[:, j]], axis=1))
        out.append([poly(times), poly.derivative(1)(times), poly.derivative(2)(times)])
    q, qd, qdd = (np.array([o[k] for o in out]).T for k in range(3))
    return times, q, qd, qdd


def test_unknown_and_missing_joints_are_named(model):
    """INVALID_JOINTS: the unknown name and the missing joints are both in the message."""
    t, q, qd, qdd = plan(model)
    names = list(model.joint_names)
    names[2] = 'elbow'
    with pytest.raises(GateRejection) as err:
        gate_trajectory(model, names, t, q, qd, qdd)
    assert err.value.code == 'INVALID_JOINTS'
    assert 'unknown joint(s) elbow' in str(err.value)
    assert 'missing joint(s) panda_joint3' in str(err.value)
    with pytest.raises(GateRejection) as err:
        gate_trajectory(model, names[:6], t, q[:, :6], qd[:, :6], qdd[:, :6])
    assert err.value.code == 'INVALID_JOINTS' and 'panda_joint7' in str(err.value)


@pytest.mark.parametrize('timing', ['keep', 'repair'])
def test_a_feasible_goal_keeps_its_timing_and_gets_the_efforts(model, pinocchio_model, timing):
    """Slow enough: forwarded as it came (goal order), each point's effort Pinocchio's RNEA."""
    t, q, qd, qdd = plan(model, scale=3.0)
    names, *goal = shuffled(model, t, q, qd, qdd)
    gated = gate_trajectory(model, names, *goal, timing=timing)
    assert not gated.retimed and gated.ratio <= 1.0
    assert gated.joint_names == tuple(names)
    for mine, theirs in zip((gated.t, gated.q, gated.qd, gated.qdd), goal):
        np.testing.assert_array_equal(mine, theirs)
    expected = rnea(pinocchio_model, q, qd, qdd)[:, SHUFFLE]
    np.testing.assert_allclose(gated.effort, expected, rtol=0, atol=1e-9)


def test_keep_refuses_an_infeasible_goal_naming_joint_time_and_ratio(model):
    """INVALID_GOAL with the worst joint, its ratio and the time."""
    t, q, qd, qdd = plan(model)
    with pytest.raises(GateRejection) as err:
        gate_trajectory(model, model.joint_names, t, q, qd, qdd, timing='keep')
    check = dr.check_trajectory(model, t, q, qd, qdd)
    text = str(err.value)
    assert err.value.code == 'INVALID_GOAL'
    assert check.worst_joint in text and f'{check.max_effort_ratio.max():.3g} x' in text
    assert f't = {check.worst_time:.4g} s' in text
    print(f'\n{text}')


@pytest.mark.parametrize('timing', ['repair', 'optimal'])
def test_retimed_goal_is_feasible_passes_the_waypoints_and_rests(model, pinocchio_model,
                                                                 timing):
    """An infeasible plan (repair) or any plan (optimal) is retimed; checked with oracles."""
    scale = 1.0 if timing == 'repair' else 3.0
    t, q, qd, qdd = plan(model, scale)
    names, *goal = shuffled(model, t, q, qd, qdd)
    scaling = 0.9
    gated = gate_trajectory(model, names, *goal, timing=timing, effort_scaling=scaling)
    assert gated.retimed
    if timing == 'repair':
        assert gated.goal_ratio > 1.0
    # the path through every point of the plan: what dr.retime gives for those points
    reference = dr.retime(model, q, effort_limits=scaling * model.effort_limit)
    assert gated.duration == reference.duration
    sparse = dr.retime(model, WAYPOINTS, effort_limits=scaling * model.effort_limit).duration
    np.testing.assert_array_equal(gated.qd[[0, -1]], 0.0)
    # in the goal's order; back to the model's for the oracles
    back = np.argsort(SHUFFLE)
    times, sq, sqd, sqdd = controller_samples(gated)
    tau = rnea(pinocchio_model, sq[:, back], sqd[:, back], sqdd[:, back])
    worst = (np.abs(tau) / (scaling * model.effort_limit)).max()
    np.testing.assert_allclose(gated.effort[:, back],
                               rnea(pinocchio_model, *(x[:, back] for x in
                                                       (gated.q, gated.qd, gated.qdd))),
                               rtol=0, atol=1e-9)
    # every waypoint is passed: the samples come within the step's travel of it
    step = np.abs(np.diff(sq, axis=0)).max()
    miss = max(np.abs(sq - w[SHUFFLE]).max(axis=1).min() for w in WAYPOINTS)
    print(f'\n{timing}: {gated.summary}; SciPy-sampled at 0.2 ms, Pinocchio: worst effort '
          f'ratio {worst:.5f}; farthest waypoint {miss:.2e} rad from the samples '
          f'(step {step:.1e}); '
          f'duration {gated.duration:.4f} s, through the 4 waypoints alone {sparse:.4f} s')
    assert worst <= 1.0 + 1e-6
    assert miss <= step


def test_repeated_waypoints_are_merged_before_a_retime(model):
    """A plan that repeats its first point (as planners do) is retimed like one without."""
    t, q, qd, qdd = plan(model)
    t2 = np.concatenate(([0.0], t + 0.1))
    q2, qd2, qdd2 = (np.concatenate((x[:1], x)) for x in (q, qd, qdd))
    a = gate_trajectory(model, model.joint_names, t2, q2, qd2, qdd2, timing='optimal')
    b = gate_trajectory(model, model.joint_names, t, q, qd, qdd, timing='optimal')
    assert a.duration == b.duration


def test_friction_is_in_the_efforts_when_on(model):
    """With a friction law the efforts rise by v qd + c tanh(qd / v_s) (the law's formula)."""
    t, q, qd, qdd = plan(model, scale=3.0)
    law = JointFriction(model, viscous=0.5, coulomb=1.0, smoothing=0.01)
    plain = gate_trajectory(model, model.joint_names, t, q, qd, qdd)
    with_friction = gate_trajectory(model, model.joint_names, t, q, qd, qdd, friction=law)
    np.testing.assert_allclose(with_friction.effort - plain.effort,
                               0.5 * qd + 1.0 * np.tanh(qd / 0.01), rtol=0, atol=1e-9)


def test_bad_settings_are_named(model):
    """An unknown timing or a non-positive scaling: InputError naming it."""
    t, q, qd, qdd = plan(model, 3.0)
    with pytest.raises(dr.InputError, match='timing'):
        gate_trajectory(model, model.joint_names, t, q, timing='fast')
    with pytest.raises(dr.InputError, match='effort_scaling'):
        gate_trajectory(model, model.joint_names, t, q, effort_scaling=0.0)
    with pytest.raises(GateRejection, match='strictly increasing') as err:
        gate_trajectory(model, model.joint_names, t[::-1], q)
    assert err.value.code == 'INVALID_GOAL'


def test_without_control_msgs_only_the_gate_says_what_is_missing():
    """No control_msgs: ct_controller and the library import, the gate exits 1 with one line."""
    require_module('rclpy')
    code = '\n'.join((
        'import sys',
        'sys.modules["control_msgs"] = sys.modules["control_msgs.action"] = None',
        'import denoc_ros',
        'from denoc_ros.ros import ct_controller, trajectory_gate',
        'assert ct_controller.FollowJointTrajectory is None',
        'sys.exit(trajectory_gate.main(["trajectory_gate"]))'))
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                         timeout=120, cwd=pathlib.Path(__file__).resolve().parent.parent)
    text = (run.stdout + run.stderr).strip()
    assert run.returncode == 1, text
    assert len(text.splitlines()) == 1, text
    assert text.startswith('trajectory_gate: control_msgs') and 'apt-get install' in text
