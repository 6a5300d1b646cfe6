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
The trajectory services' logic with real messages, and the ``denoc_retime`` command line.

:func:`check_trajectory_service` and :func:`retime_trajectory_service` are called directly with
``denoc_ros_interfaces`` request/response objects (the node's callbacks are a line each); the
numbers are compared with the library calls, checked independently in test_trajectories.py,
and the retimed message's efforts with Pinocchio's RNEA.
"""

from conftest import require_module, require_oracle, URDF_DIR
import denoc_ros as dr
import numpy as np
import pytest
import yaml

srv = require_module('denoc_ros_interfaces.srv')
trajectory_msgs = require_module('trajectory_msgs.msg')
from denoc_ros.ros import trajectory_services as services  # noqa: E402, I100
check_trajectory_service = services.check_trajectory_service
retime_trajectory_service = services.retime_trajectory_service

UR5E = URDF_DIR / 'ur5e.urdf'
# The message's joint order differs from the model's.
ORDER = [2, 0, 1, 5, 3, 4]


@pytest.fixture(scope='module')
def model():
    return dr.load_urdf(str(UR5E))


def waypoints(seed=4, count=6):
    rng = np.random.default_rng(seed)
    return np.cumsum(rng.normal(scale=0.4, size=(count, 6)), axis=0)


def message(model, t, q, qd=None, names=None):
    """Return a JointTrajectory of model-ordered arrays, its columns in ORDER."""
    msg = trajectory_msgs.JointTrajectory()
    msg.joint_names = names or [model.joint_names[j] for j in ORDER]
    for k in range(len(q)):
        p = trajectory_msgs.JointTrajectoryPoint()
        p.positions = [float(v) for v in q[k][ORDER]]
        if qd is not None:
            p.velocities = [float(v) for v in qd[k][ORDER]]
        sec, nanosec = divmod(int(round(t[k] * 1e9)), 1_000_000_000)
        p.time_from_start.sec, p.time_from_start.nanosec = sec, nanosec
        msg.points.append(p)
    return msg


def test_retime_service_matches_the_library_in_message_order(model):
    pin = require_oracle('pinocchio')
    wp = waypoints()
    request = srv.RetimeTrajectory.Request()
    request.trajectory = message(model, np.arange(len(wp)), wp)
    request.effort_scaling = 0.8
    request.acceleration_limits = [float(v) for v in np.full(6, 12.0)]
    response = retime_trajectory_service(model, request, srv.RetimeTrajectory.Response())
    assert response.success, response.message
    ours = dr.retime(model, wp, effort_limits=0.8 * model.effort_limit,
                     acceleration_limits=12.0)
    assert response.duration == pytest.approx(ours.duration, rel=1e-12)
    assert response.max_effort_ratio == pytest.approx(ours.max_effort_ratio, rel=1e-12)
    out = response.trajectory
    assert list(out.joint_names) == list(request.trajectory.joint_names)
    assert len(out.points) == ours.t.size
    inverse = np.argsort(ORDER)
    q = np.array([p.positions for p in out.points])[:, inverse]
    qd = np.array([p.velocities for p in out.points])[:, inverse]
    qdd = np.array([p.accelerations for p in out.points])[:, inverse]
    effort = np.array([p.effort for p in out.points])[:, inverse]
    assert np.allclose(q, ours.q) and np.allclose(qdd, ours.qdd)
    pm = pin.buildModelFromUrdf(str(UR5E))
    pd = pm.createData()
    ref = np.array([pin.rnea(pm, pd, q[k], qd[k], qdd[k]) for k in range(len(q))])
    assert np.allclose(effort, ref, rtol=1e-9, atol=1e-9)
    times = [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in out.points]
    assert times[-1] == pytest.approx(ours.duration, abs=1e-9)
    assert np.abs(qdd).max() <= 12.0 * 1.0001


def test_check_service_reports_the_retimed_trajectory_feasible_and_a_faster_one_not(model):
    wp = waypoints()
    ours = dr.retime(model, wp)
    for factor, feasible in ((1.0, True), (0.7, False)):
        request = srv.CheckTrajectory.Request()
        t = ours.t * factor
        request.trajectory = message(model, t, ours.q, ours.qd / factor)
        for k, p in enumerate(request.trajectory.points):
            p.accelerations = [float(v) for v in (ours.qdd[k] / factor ** 2)[ORDER]]
        response = check_trajectory_service(model, request, srv.CheckTrajectory.Response())
        assert response.success, response.message
        lib = dr.check_trajectory(model, t, ours.q, ours.qd / factor, ours.qdd / factor ** 2)
        assert response.feasible == lib.feasible == feasible
        assert list(response.joint_names) == list(request.trajectory.joint_names)
        assert np.allclose(np.array(response.max_effort_ratio)[np.argsort(ORDER)],
                           lib.max_effort_ratio, rtol=1e-5)  # times in nanoseconds
        assert response.worst_joint == lib.worst_joint
        efforts = np.array([p.effort for p in response.efforts.points])[:, np.argsort(ORDER)]
        assert np.allclose(efforts, lib.efforts, rtol=1e-12, atol=1e-12)


def test_services_refuse_bad_requests_with_one_line(model):
    wp = waypoints()
    request = srv.RetimeTrajectory.Request()
    names = [model.joint_names[j] for j in ORDER]
    request.trajectory = message(model, np.arange(len(wp)), wp,
                                 names=names[:-1] + ['gripper_joint'])
    response = retime_trajectory_service(model, request, srv.RetimeTrajectory.Response())
    assert not response.success and "'gripper_joint'" in response.message
    request.trajectory = message(model, np.arange(len(wp)), wp)
    request.acceleration_limits = [1.0, 2.0]
    response = retime_trajectory_service(model, request, srv.RetimeTrajectory.Response())
    assert not response.success and 'acceleration_limits' in response.message
    weak = model.replace(effort_limit=np.full(6, 20.0))   # gravity needs more at the shoulder
    request.acceleration_limits = []
    request.trajectory = message(model, np.arange(3), np.array([[0, -1.0, 0, 0, 0, 0]] * 1
                                                               + [[0.5, -1.2, 0.3, 0, 0, 0],
                                                                  [1.0, -1.5, 0.5, 0, 0, 0]]))
    response = retime_trajectory_service(weak, request, srv.RetimeTrajectory.Response())
    assert not response.success
    assert 'waypoint 0: gravity alone need' in response.message
    assert "'shoulder_lift_joint'" in response.message
    check = srv.CheckTrajectory.Request()
    check.trajectory = message(model, [0.0, 0.0], wp[:2])
    response = check_trajectory_service(model, check, srv.CheckTrajectory.Response())
    assert not response.success and 'increasing' in response.message
    check.trajectory = message(model, [0.0, 1.0], wp[:2])
    check.trajectory.points[1].velocities = [0.0] * 6
    response = check_trajectory_service(model, check, srv.CheckTrajectory.Response())
    assert not response.success and 'point 0: 0 velocities' in response.message


def test_retime_command_line(tmp_path, capsys):
    from denoc_ros.identification.excitation import write_trajectory_yaml
    from denoc_ros.tools.retime import main
    model = dr.load_urdf(str(UR5E))
    wp = waypoints()
    src = tmp_path / 'traj.yaml'
    write_trajectory_yaml(src, model.joint_names, np.arange(len(wp), dtype=float), wp,
                          np.zeros_like(wp), np.zeros_like(wp))
    out = tmp_path / 'retimed.yaml'
    status = main(['--urdf', str(UR5E), '--input', str(src), '--output', str(out),
                   '--payload', 'wrist_3_link,2.0,0,0,0.05', '--effort-scaling', '0.9',
                   '--plot'])
    printed = capsys.readouterr().out
    assert status == 0
    heavy = dr.attach_payload(model, 'wrist_3_link', 2.0, (0.0, 0.0, 0.05))
    ours = dr.retime(heavy, wp, effort_limits=0.9 * model.effort_limit)
    assert f'duration {ours.duration:.4f} s' in printed
    assert f'worst effort ratio {ours.max_effort_ratio:.4f}' in printed
    data = yaml.safe_load(out.read_text())
    assert data['joint_names'] == list(model.joint_names)
    assert out.read_text().startswith(f'# denoc_retime: duration {ours.duration:.4f} s')
    np.testing.assert_array_equal([p['positions'] for p in data['points']], ours.q)
    np.testing.assert_array_equal([p['accelerations'] for p in data['points']], ours.qdd)
    np.testing.assert_array_equal([p['effort'] for p in data['points']], ours.effort)
    np.testing.assert_allclose([p['time_from_start']['sec'] + 1e-9 * p['time_from_start'][
        'nanosec'] for p in data['points']], ours.t, rtol=0, atol=1e-9)
    assert (tmp_path / 'retimed.png').stat().st_size > 10_000
    status = main(['--urdf', str(UR5E), '--input', str(src), '--output', str(out),
                   '--payload', 'wrist_3_link,2.0'])
    assert status == 1
    assert capsys.readouterr().err.count('\n') == 1


def test_retime_reads_waypoints_in_model_order_with_the_package_errors(tmp_path, model):
    """Columns in any order land in model order; a joint unknown, missing or twice: one line."""
    from denoc_ros.tools.retime import read_waypoints
    wp = waypoints()
    path = tmp_path / 'traj.yaml'

    def write(names, rows):
        path.write_text(yaml.safe_dump({'joint_names': names, 'points': [
            {'positions': [float(v) for v in row]} for row in rows]}))

    names = [model.joint_names[j] for j in ORDER]
    write(names, wp[:, ORDER])
    np.testing.assert_array_equal(read_waypoints(path, model), wp)
    for names, words in (
            (names + ['finger'], "joint 'finger' of the trajectory is not a joint of the model"),
            (names[1:], f'the trajectory lacks joint.*{names[0]}'),
            (names + names[:1], 'appears twice')):
        write(names, np.zeros((2, len(names))))
        with pytest.raises(dr.InputError, match=words) as err:
            read_waypoints(path, model)
        assert str(err.value).startswith(f'{path}: ') and '\n' not in str(err.value)
