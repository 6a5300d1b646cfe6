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
``ct_controller`` playing a trajectory file: the YAML loader, and the controller in-process.

The file holds a quintic polynomial in time (positions, velocities, accelerations at a few
points), which the controller's quintic Hermite interpolation reproduces exactly; so the
desired state it tracks (``q`` + its ``~/tracking_error``) is checked against the polynomial
itself at the stamps of the joint states the probe sends.
"""

import time

import denoc_ros as dr
from denoc_ros.feedforward import computed_torque
from denoc_ros.resources import bundled_urdf
from denoc_ros.ros.ct_controller import ComputedTorqueController, load_trajectory_yaml
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
import yaml

ROBOT = 'saha_planar_3r'
TIMES = [0.0, 0.4, 1.0, 1.5, 2.0]
COEFFICIENTS = np.array([[0.1, -0.2, 0.3], [0.5, 0.0, -0.4], [-0.3, 0.6, 0.2],
                         [0.2, -0.1, 0.1], [-0.05, 0.02, 0.03], [0.01, 0.0, -0.01]])


def polynomial(t):
    """Return (q, qd, qdd) of the quintic sum_k c_k t^k at time t."""
    k = np.arange(6)[:, None]
    c = COEFFICIENTS
    q = (c * t ** k).sum(axis=0)
    qd = (c[1:] * k[1:] * t ** (k[1:] - 1)).sum(axis=0)
    qdd = (c[2:] * k[2:] * (k[2:] - 1) * t ** (k[2:] - 2)).sum(axis=0)
    return q, qd, qdd


def trajectory_document(joint_names, times=TIMES):
    """Return the trajectory as the mapping ``ros2 topic pub`` takes (joints in file order)."""
    points = []
    for t in times:
        q, qd, qdd = polynomial(t)
        sec = int(t)
        points.append({'positions': q.tolist(), 'velocities': qd.tolist(),
                       'accelerations': qdd.tolist(),
                       'time_from_start': {'sec': sec, 'nanosec': int(round((t - sec) * 1e9))}})
    return {'joint_names': list(joint_names), 'points': points}


def write_trajectory(path, joint_names, order=(2, 0, 1)):
    """Write the trajectory with its joints in another order than the model's; return path."""
    document = trajectory_document([joint_names[i] for i in order])
    for point in document['points']:
        for field in ('positions', 'velocities', 'accelerations'):
            point[field] = [point[field][i] for i in order]
    path.write_text(yaml.safe_dump(document))
    return str(path)


# -- the loader ----------------------------------------------------------------------------------
def test_loader_puts_the_values_into_the_message(tmp_path):
    """Every number of a file written with yaml.safe_dump lands in the JointTrajectory."""
    path = tmp_path / 'traj.yaml'
    document = trajectory_document(['a', 'b', 'c'])
    path.write_text(yaml.safe_dump(document))
    msg = load_trajectory_yaml(str(path))
    assert list(msg.joint_names) == ['a', 'b', 'c']
    assert len(msg.points) == len(TIMES)
    for point, t in zip(msg.points, TIMES):
        q, qd, qdd = polynomial(t)
        assert list(point.positions) == q.tolist()
        assert list(point.velocities) == qd.tolist()
        assert list(point.accelerations) == qdd.tolist()
        assert len(point.effort) == 0
        assert point.time_from_start.sec + 1e-9 * point.time_from_start.nanosec == \
            pytest.approx(t, abs=1e-12)


def test_loader_reads_the_form_ros2_topic_echo_prints(tmp_path):
    """A header, integer numbers, empty arrays and flow style, as typed or echoed, are read."""
    path = tmp_path / 'echoed.yaml'
    path.write_text('header:\n  stamp:\n    sec: 12\n    nanosec: 5\n  frame_id: base\n'
                    'joint_names:\n- j1\n- j2\npoints:\n'
                    '- positions:\n  - 0\n  - 1.5\n  velocities: []\n  accelerations: []\n'
                    '  effort: [2, -3.25]\n'
                    '  time_from_start:\n    sec: 0\n    nanosec: 250000000\n'
                    '- {positions: [1, 2], time_from_start: {sec: 3}}\n')
    msg = load_trajectory_yaml(path)
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id) == \
        (12, 5, 'base')
    first, second = msg.points
    assert list(first.positions) == [0.0, 1.5] and list(first.effort) == [2.0, -3.25]
    assert len(first.velocities) == 0 and len(first.accelerations) == 0
    assert (first.time_from_start.sec, first.time_from_start.nanosec) == (0, 250000000)
    assert list(second.positions) == [1.0, 2.0]
    assert (second.time_from_start.sec, second.time_from_start.nanosec) == (3, 0)


@pytest.mark.parametrize('text, words', [
    ('points: [{positions: [1.0]}]', 'joint_names'),
    ('joint_names: [a]', 'points must be a non-empty list'),
    ('joint_names: [a, b]\npoints: [{positions: [1.0]}]', 'points[0].positions has 1 values'),
    ('joint_names: [a]\npoints: [{positions: [.nan]}]', 'NaN'),
    ('joint_names: [a]\npoints: [{positions: [x]}]', 'list of numbers'),
    ('joint_names: [a]\npoints: [{positoins: [1.0]}]', "no field 'positoins'"),
    ('joint_names: [a]\npoints: [{positions: [1.0], time_from_start: {sec: 0.5}}]',
     'time_from_start.sec must be an integer'),
    ('joint_names: [a]\npoints: [{positions: [1.0], velocities: [0.0]},\n'
     '  {positions: [2.0], time_from_start: {sec: 1}}]', 'points[1] has no velocities'),
    ('joint_names: [a, a]\npoints: [{positions: [1.0, 2.0]}]', 'twice'),
    ('joint_names: [a\npoints: []', 'not YAML at line'),
    ('- 1\n- 2', 'must be a mapping'),
])
def test_loader_rejects_bad_files_in_one_line(tmp_path, text, words):
    """A malformed file raises InputError: one line naming the file and what is wrong."""
    path = tmp_path / 'bad.yaml'
    path.write_text(text)
    with pytest.raises(dr.InputError) as info:
        load_trajectory_yaml(str(path))
    message = str(info.value)
    assert words in message and str(path) in message and '\n' not in message, message
    with pytest.raises(dr.InputError, match='No such file'):
        load_trajectory_yaml(str(tmp_path / 'missing.yaml'))


# -- the controller ------------------------------------------------------------------------------
class Harness:
    """The controller and a probe node sending joint states, spun by one executor."""

    def __init__(self, context, controller):
        self.node = controller
        self.probe = rclpy.create_node('ct_probe', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(controller)
        self.executor.add_node(self.probe)
        self.joint_pub = self.probe.create_publisher(JointState, 'joint_states', 10)
        self.errors, self.commands = [], []
        self.probe.create_subscription(JointState, '/ct_controller/tracking_error',
                                       self.errors.append, 100)
        self.probe.create_subscription(Float64MultiArray, '/ct_controller/commands',
                                       self.commands.append, 100)
        end = time.monotonic() + 10.0
        while time.monotonic() < end and not (
                self.joint_pub.get_subscription_count()
                and self.probe.count_publishers('/ct_controller/tracking_error')
                and self.probe.count_publishers('/ct_controller/commands')):
            self.executor.spin_once(timeout_sec=0.02)
        assert self.joint_pub.get_subscription_count(), 'controller never connected'

    def desired(self, names, q, qd, t):
        """Send a joint state stamped ``t``; return (q_d, qd_d, command) the controller used."""
        before = len(self.errors), len(self.commands)
        msg = JointState(name=list(names), position=list(q), velocity=list(qd))
        msg.header.stamp.sec = int(t)
        msg.header.stamp.nanosec = int(round((t - int(t)) * 1e9))
        self.joint_pub.publish(msg)
        end = time.monotonic() + 10.0
        while time.monotonic() < end and (len(self.errors) == before[0]
                                          or len(self.commands) == before[1]):
            self.executor.spin_once(timeout_sec=0.02)
        assert len(self.errors) > before[0] and len(self.commands) > before[1]
        error = self.errors[-1]
        return (np.asarray(error.position) + q, np.asarray(error.velocity) + qd,
                np.asarray(self.commands[-1].data))

    def close(self):
        """Destroy both nodes."""
        self.executor.shutdown()
        self.probe.destroy_node()
        self.node.destroy_node()


@pytest.fixture
def make_controller(rclpy_context):
    """Return a factory: parameters -> a started Harness; everything is destroyed afterwards."""
    made = []

    def factory(**params):
        overrides = [Parameter(k, value=v) for k, v in params.items()]
        harness = Harness(rclpy_context, ComputedTorqueController(
            context=rclpy_context, parameter_overrides=overrides))
        made.append(harness)
        return harness
    yield factory
    for harness in made:
        harness.close()


@pytest.mark.ros
def test_controller_plays_the_file_from_the_next_joint_state(make_controller, tmp_path):
    """The file plays as a reference stamped 0: time 0 at the first joint state, then exact."""
    model = dr.load_urdf(bundled_urdf(ROBOT))
    names = model.joint_names
    path = write_trajectory(tmp_path / 'excitation.yaml', names)
    h = make_controller(urdf_path=ROBOT, trajectory_file=path)
    rng = np.random.default_rng(11)
    t0 = 5.25                                   # the first joint state's stamp [s]
    for s in (0.0, 0.2, 0.4, 0.77, 1.3, 1.99, 2.0, 3.0):
        q, qd = rng.uniform(-0.5, 0.5, (2, model.dof))
        q_d, qd_d, command = h.desired(names, q, qd, t0 + s)
        expected = polynomial(min(s, TIMES[-1]))
        if s >= TIMES[-1]:                      # after its end: the last point, at rest
            expected = (expected[0], np.zeros(3), np.zeros(3))
        np.testing.assert_allclose(q_d, expected[0], atol=1e-10, err_msg=f't = {s}')
        np.testing.assert_allclose(qd_d, expected[1], atol=1e-9, err_msg=f't = {s}')
        np.testing.assert_allclose(command, computed_torque(model, q, qd, expected, 400.0, 40.0),
                                   rtol=1e-7, atol=1e-7)

    # set at run time: the file restarts at the next joint state; loop wraps after its end
    assert h.node.set_parameters([Parameter('trajectory_file', value=path),
                                  Parameter('loop', value=True)])[0].successful
    t1 = 20.0
    for s in (0.0, 0.6, 2.0 + 0.6, 3 * 2.0 + 1.1):
        q, qd = rng.uniform(-0.5, 0.5, (2, model.dof))
        q_d, qd_d, _ = h.desired(names, q, qd, t1 + s)
        expected = polynomial(s % TIMES[-1])
        np.testing.assert_allclose(q_d, expected[0], atol=1e-9, err_msg=f't = {s}')
        np.testing.assert_allclose(qd_d, expected[1], atol=1e-8, err_msg=f't = {s}')


@pytest.mark.ros
def test_controller_rejects_bad_files(make_controller, rclpy_context, tmp_path):
    """A bad file ends the start-up with one clear error, and is refused at run time."""
    bad = tmp_path / 'bad.yaml'
    bad.write_text(yaml.safe_dump(trajectory_document(['joint1', 'joint2', 'gripper'])))
    with pytest.raises(dr.InputError, match='lacks joint.*joint3'):
        ComputedTorqueController(context=rclpy_context, parameter_overrides=[
            Parameter('urdf_path', value=ROBOT), Parameter('trajectory_file', value=str(bad))])
    h = make_controller(urdf_path=ROBOT)
    result = h.node.set_parameters([Parameter('trajectory_file', value=str(bad))])[0]
    assert not result.successful and str(bad) in result.reason and 'joint3' in result.reason
    result = h.node.set_parameters([Parameter('trajectory_file', value='/no/such.yaml')])[0]
    assert not result.successful and 'No such file' in result.reason
    assert h.node._sampler is None              # nothing is played


def two_link_arm(scale=1.0):
    """Return a two-link arm whose l2 breaks the triangle inequality; inertials times ``scale``."""
    limit = '<limit lower="-1" upper="1" effort="10" velocity="1"/>'

    def link(name, mass, moments):
        ixx, iyy, izz = (scale * m for m in moments)
        return (f'<link name="{name}"><inertial><mass value="{scale * mass}"/>'
                '<origin xyz="0.1 0 0"/>'
                f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/>'
                '</inertial></link>')
    return ('<robot name="arm"><link name="base"/>' + link('l1', 2.0, (0.02, 0.02, 0.02))
            + link('l2', 1.0, (0.001, 0.001, 0.01))
            + '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>'
            f'<axis xyz="0 0 1"/>{limit}</joint>'
            '<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>'
            f'<origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>{limit}</joint></robot>')


@pytest.mark.ros
def test_mass_scale_gives_the_scaled_model_its_own_warnings(rclpy_context):
    """
    The scaled model's warnings are the loader's for a description carrying scaled inertials.

    l2's warning quotes its principal moments: copied from the unscaled model (the old
    behaviour) they would name moments the controller's model does not have.
    """
    with pytest.warns(dr.URDFWarning):
        plain, scaled = dr.load_urdf(two_link_arm()), dr.load_urdf(two_link_arm(2.5))
    assert len(scaled.warnings) == 1 and 'principal moments' in scaled.warnings[0]
    assert scaled.warnings != plain.warnings
    with pytest.warns(dr.URDFWarning):
        node = ComputedTorqueController(context=rclpy_context, parameter_overrides=[
            Parameter('robot_description', value=two_link_arm()),
            Parameter('mass_scale', value=2.5)])
    try:
        assert node.model.warnings == scaled.warnings
        np.testing.assert_allclose(node.model.mass, scaled.mass, rtol=1e-15)
        np.testing.assert_allclose(node.model.com, scaled.com, rtol=1e-15)
        np.testing.assert_allclose(node.model.inertia, scaled.inertia, rtol=1e-12, atol=1e-17)
    finally:
        node.destroy_node()


@pytest.mark.ros
def test_command_order_follows_the_joints_parameter(make_controller, rclpy_context):
    """``joints`` orders ~/commands; an unknown, missing or repeated joint stops the start-up."""
    model = dr.load_urdf(bundled_urdf(ROBOT))
    names = model.joint_names
    h = make_controller(urdf_path=ROBOT, joints=[names[2], names[0], names[1]])
    q, qd = np.array([0.1, -0.2, 0.3]), np.array([0.4, 0.0, -0.1])
    _, _, command = h.desired(names, q, qd, 1.0)
    expected = computed_torque(model, q, qd, (q, np.zeros(3), np.zeros(3)), 400.0, 40.0)
    np.testing.assert_allclose(command, expected[[2, 0, 1]], rtol=1e-9, atol=1e-9)
    for joints, words in ((list(names) + ['gripper'], "joint 'gripper' of the parameter "
                           "'joints' is not a joint of the model"),
                          (list(names[:2]), f"the parameter 'joints' lacks joint.*{names[2]}"),
                          (list(names) + [names[0]], 'appears twice')):
        with pytest.raises(dr.InputError, match=words):
            ComputedTorqueController(context=rclpy_context, parameter_overrides=[
                Parameter('urdf_path', value=ROBOT), Parameter('joints', value=joints)])
