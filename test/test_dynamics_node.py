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
The dynamics node over real rclpy topics and services (in-process, DDS on loopback).

A probe node publishes joint states, references and descriptions and calls every service; the
node's outputs are compared with the library at the same states (the node only converts
messages), and where possible with something else: a different algorithm (M qdd_d against
inverse dynamics), an integrator that is not ours (SciPy for the prediction), a hand formula
(a payload's gravity torque through the tip Jacobian).
"""

import os
import time

import denoc_ros as dr
from denoc_ros.friction import JointFriction
from denoc_ros.resources import bundled_urdf
from denoc_ros.ros.dynamics_node import DynamicsNode
from denoc_ros.ros.joint_state_thread import batch_middleware_timers
from denoc_ros_interfaces.msg import ContactState, DynamicsState
import denoc_ros_interfaces.srv as srv
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Inertia, Vector3, WrenchStamped
import numpy as np
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from scipy.integrate import solve_ivp
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = pytest.mark.ros
TERMS = ('gravity', 'coriolis', 'inertia', 'feedforward')
TOL = {'rtol': 1e-12, 'atol': 1e-12}


class Harness:
    """The node under test plus a probe node, spun by one executor."""

    def __init__(self, context, node):
        self.node = node
        self.probe = rclpy.create_node('probe', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(node)
        self.executor.add_node(self.probe)
        p = self.probe
        self.joint_pub = p.create_publisher(JointState, 'joint_states', 10)
        self.reference_pub = p.create_publisher(JointTrajectory, '/denoc_dynamics/reference', 10)
        latched = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE,
                             durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.description_pub = p.create_publisher(String, '/robot_description', latched)
        self.received = {}
        subs = [(JointState, f'/denoc_dynamics/{t}_torques', t) for t in TERMS]
        subs += [(Float64MultiArray, '/denoc_dynamics/effort_command', 'command'),
                 (JointTrajectory, '/denoc_dynamics/prediction', 'prediction'),
                 (DiagnosticArray, '/diagnostics', 'diagnostics'),
                 (DynamicsState, '/denoc_dynamics/dynamics_state', 'state')]
        # depth 100: the node may answer a burst of joint states in one callback (drain_limit)
        self.subs = [p.create_subscription(
            kind, topic, lambda m, key=key: self.received.setdefault(key, []).append(m), 100)
            for kind, topic, key in subs]

    def spin_until(self, predicate, timeout=10.0):
        """Spin both nodes until ``predicate()`` holds; return whether it did."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.02)
        return predicate()

    def count(self, key):
        """Return how many messages arrived on an output."""
        return len(self.received.get(key, []))

    def connect(self):
        """Wait until the probe and the node see each other on every topic."""
        assert self.spin_until(lambda: self.joint_pub.get_subscription_count() > 0
                               and self.reference_pub.get_subscription_count() > 0 and all(
            s.get_publisher_count() > 0 for s in self.subs[:6])), 'node never connected'

    def send(self, names, q, qd=(), effort=(), stamp=(7, 42), expect=TERMS):
        """Publish one joint state; wait for one new message on each output in ``expect``."""
        before = {k: self.count(k) for k in expect}
        msg = JointState(name=list(names), position=list(q), velocity=list(qd),
                         effort=list(effort))
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp
        self.joint_pub.publish(msg)
        assert self.spin_until(lambda: all(self.count(k) > before[k] for k in expect)), \
            'outputs after one joint state: ' + str({k: self.count(k) for k in expect})
        return {k: self.received[k][-1] for k in expect}

    def call(self, srv_type, name, request):
        """Call a service of the node and return the response."""
        client = self.probe.create_client(srv_type, f'/denoc_dynamics/{name}')
        try:
            assert client.wait_for_service(timeout_sec=10.0)
            future = client.call_async(request)
            self.executor.spin_until_future_complete(future, timeout_sec=10.0)
            assert future.done(), f'{name} did not answer'
            return future.result()
        finally:
            self.probe.destroy_client(client)

    def close(self):
        """Destroy both nodes."""
        self.executor.shutdown()
        self.probe.destroy_node()
        self.node.destroy_node()


@pytest.fixture
def make_node(rclpy_context):
    """Return a factory: parameters -> a started Harness; everything is destroyed afterwards."""
    made = []

    def factory(joint_state_thread=False, **params):
        overrides = [Parameter(k, value=v) for k, v in params.items()]
        harness = Harness(rclpy_context, DynamicsNode(
            context=rclpy_context, parameter_overrides=overrides,
            joint_state_thread=joint_state_thread))
        made.append(harness)
        return harness
    yield factory
    for harness in made:
        harness.close()


def random_state(model, seed):
    """Return a random (q, qd, qdd) for a model."""
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-1.0, 1.0, model.dof) for _ in range(3))


# -- robot description ---------------------------------------------------------------------------
def test_description_from_parameter_xml(make_node):
    """robot_description (URDF XML) is the first source."""
    xml = bundled_urdf('craig_rr').read_text()
    h = make_node(robot_description=xml, urdf_path='ur5e')
    assert h.node.model.name == dr.load_urdf(xml).name
    assert h.node.model.dof == 2


def test_description_from_urdf_path_and_xacro(make_node, tmp_path):
    """urdf_path takes a bundled name, a file, or a .xacro file expanded with xacro."""
    assert make_node(urdf_path='ur5e').node.model.dof == 6
    text = bundled_urdf('craig_rr').read_text()
    assert 'mass value="1.5"' in text
    start = text.index('>', text.index('<robot ')) + 1
    xmlns = 'xmlns:xacro="http://www.ros.org/wiki/xacro" '
    xacro_text = (text[:start].replace('<robot ', '<robot ' + xmlns)
                  + '<xacro:property name="m2" value="2.25"/>'
                  + text[start:].replace('mass value="1.5"', 'mass value="${m2}"'))
    path = tmp_path / 'arm.urdf.xacro'
    path.write_text(xacro_text)
    model = make_node(urdf_path=str(path)).node.model
    assert model.dof == 2
    assert model.mass[1] == pytest.approx(2.25)


def test_description_from_topic_rebuilds(make_node):
    """Without parameters the node takes /robot_description, and rebuilds on a new one."""
    h = make_node()
    assert h.node.model is None
    h.description_pub.publish(String(data=bundled_urdf('craig_rr').read_text()))
    assert h.spin_until(lambda: h.node.model is not None)
    assert h.node.model.dof == 2
    h.description_pub.publish(String(data=bundled_urdf('saha_planar_3r').read_text()))
    assert h.spin_until(lambda: h.node.model.dof == 3)
    model = h.node.model
    h.connect()
    q, qd, _ = random_state(model, 1)
    out = h.send(model.joint_names, q, qd)
    np.testing.assert_allclose(out['gravity'].effort, dr.gravity_torques(model, q), **TOL)


# -- topics --------------------------------------------------------------------------------------
@pytest.mark.parametrize('thread', [False, True], ids=['executor', 'thread'])
def test_outputs_any_order_extra_joints(make_node, thread):
    """Reordered names with extra joints map by name; every output equals the library."""
    model = dr.load_urdf(bundled_urdf('ur5e'))
    command_order = list(reversed(model.joint_names))
    h = make_node(joint_state_thread=thread, urdf_path='ur5e', command_joints=command_order)
    h.connect()
    q, qd, _ = random_state(model, 2)
    order = [3, 0, 5, 1, 4, 2]
    names = ['gripper_finger'] + [model.joint_names[i] for i in order] + ['camera_pan']
    out = h.send(names, [0.5] + list(q[order]) + [1.0], [0.0] + list(qd[order]) + [0.0],
                 expect=TERMS + ('command',))
    g = dr.gravity_torques(model, q)
    c = dr.coriolis_matrix(model, q, qd) @ qd
    expected = {'gravity': g, 'coriolis': c, 'inertia': np.zeros(6), 'feedforward': g + c}
    for term, value in expected.items():
        assert list(out[term].name) == list(model.joint_names)
        assert (out[term].header.stamp.sec, out[term].header.stamp.nanosec) == (7, 42)
        np.testing.assert_allclose(out[term].effort, value, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out['command'].data, (g + c)[::-1], rtol=1e-10, atol=1e-10)
    assert 'prediction' not in h.received  # no efforts in the joint state: no prediction
    if thread:  # served outside the executor, stopped at once when asked
        thread = h.node.joint_state_thread
        assert thread.alive
        start = time.monotonic()
        thread.stop()
        assert not thread.alive and time.monotonic() - start < 1.0


@pytest.mark.skipif(not hasattr(os, 'sched_getscheduler'), reason='Linux scheduling only')
def test_middleware_timers_thread_made_batch(rclpy_context):
    """Fast DDS's timed-events threads of the process (dds.ev.N) become SCHED_BATCH."""
    def named():
        found = []
        for tid in os.listdir('/proc/self/task'):
            try:
                with open(f'/proc/self/task/{tid}/comm') as f:
                    if f.read().startswith('dds.ev.'):
                        found.append(int(tid))
            except OSError:
                continue
        return found
    node = rclpy.create_node('timers_probe', context=rclpy_context)  # the participant
    try:
        threads = named()
        if rclpy.get_rmw_implementation_identifier() == 'rmw_fastrtps_cpp':
            assert threads, 'a Fast DDS participant without its dds.ev thread'
        assert batch_middleware_timers() == len(threads)
        assert all(os.sched_getscheduler(tid) == os.SCHED_BATCH for tid in named())
        assert batch_middleware_timers(prefix='no such thread') == 0
    finally:
        node.destroy_node()


@pytest.mark.parametrize('thread', [False, True], ids=['executor', 'thread'])
def test_reference_gives_computed_torque_feedforward(make_node, thread):
    """With a reference the feed-forward is ID at the desired state; 'measured' mode too."""
    model = dr.load_urdf(bundled_urdf('stanford_arm'))
    h = make_node(joint_state_thread=thread, urdf_path='stanford_arm', reference_timeout=0.0)
    h.connect()
    q, qd, _ = random_state(model, 3)
    q_d, qd_d, qdd_d = random_state(model, 4)
    order = np.random.default_rng(5).permutation(model.dof)
    ref = JointTrajectory(joint_names=[model.joint_names[i] for i in order])
    ref.points = [JointTrajectoryPoint(positions=list(q_d[order]), velocities=list(qd_d[order]),
                                       accelerations=list(qdd_d[order])),
                  JointTrajectoryPoint(positions=list(q[order]))]
    h.reference_pub.publish(ref)
    assert h.spin_until(lambda: h.node._active_reference() is not None)
    out = h.send(model.joint_names, q, qd)
    tol = {'rtol': 1e-9, 'atol': 1e-9}
    np.testing.assert_allclose(out['feedforward'].effort,
                               dr.inverse_dynamics(model, q_d, qd_d, qdd_d), **tol)
    np.testing.assert_allclose(out['inertia'].effort, dr.mass_matrix(model, q_d) @ qdd_d, **tol)
    np.testing.assert_allclose(out['coriolis'].effort,
                               dr.coriolis_matrix(model, q_d, qd_d) @ qd_d, **tol)
    np.testing.assert_allclose(out['gravity'].effort, dr.gravity_torques(model, q_d), **tol)

    result = h.node.set_parameters([Parameter('feedforward_state', value='measured')])
    assert result[0].successful
    out = h.send(model.joint_names, q, qd)
    np.testing.assert_allclose(out['inertia'].effort, dr.mass_matrix(model, q) @ qdd_d, **tol)
    np.testing.assert_allclose(out['coriolis'].effort,
                               dr.coriolis_matrix(model, q, qd) @ qd_d, **tol)
    np.testing.assert_allclose(out['gravity'].effort, dr.gravity_torques(model, q), **tol)


def test_reference_expires(make_node):
    """A reference older than reference_timeout is ignored: terms at the measured state."""
    model = dr.load_urdf(bundled_urdf('craig_rr'))
    h = make_node(urdf_path='craig_rr', reference_timeout=0.2)
    h.connect()
    ref = JointTrajectory(joint_names=list(model.joint_names),
                          points=[JointTrajectoryPoint(positions=[0.3, 0.2],
                                                       accelerations=[1.0, 1.0])])
    h.reference_pub.publish(ref)
    assert h.spin_until(lambda: h.node._active_reference() is not None)
    h.spin_until(lambda: h.node._active_reference() is None, timeout=2.0)
    q = np.array([1.0, -0.5])
    out = h.send(model.joint_names, q, [0.0, 0.0])
    np.testing.assert_allclose(out['gravity'].effort, dr.gravity_torques(model, q), **TOL)
    np.testing.assert_allclose(out['inertia'].effort, [0.0, 0.0], atol=0)


def test_prediction_matches_an_independent_integrator(make_node):
    """~/prediction: the state after the horizon under the measured efforts (vs SciPy DOP853)."""
    model = dr.load_urdf(bundled_urdf('puma560'))
    horizon = 0.05
    h = make_node(urdf_path='puma560', prediction_horizon=horizon, prediction_substeps=10)
    h.connect()
    q, qd, _ = random_state(model, 6)
    # efforts that give accelerations of order 1 rad/s^2 on every joint, light wrist included
    push = dr.mass_matrix(model, q) @ np.random.default_rng(7).uniform(-2, 2, model.dof)
    effort = dr.gravity_torques(model, q) + push
    out = h.send(model.joint_names, q, qd, effort, expect=('prediction',))['prediction']
    assert list(out.joint_names) == list(model.joint_names)
    (point,) = out.points
    assert point.time_from_start.sec == 0
    assert point.time_from_start.nanosec == int(horizon * 1e9)

    def rate(t, x):
        return np.concatenate((x[6:], dr.forward_dynamics(model, x[:6], x[6:], effort)))
    ref = solve_ivp(rate, (0, horizon), np.concatenate((q, qd)), method='DOP853',
                    rtol=1e-12, atol=1e-12).y[:, -1]
    np.testing.assert_allclose(point.positions, ref[:6], atol=1e-8)
    np.testing.assert_allclose(point.velocities, ref[6:], atol=1e-7)
    np.testing.assert_allclose(point.accelerations, rate(0, ref)[6:], atol=1e-6)
    np.testing.assert_allclose(point.effort, effort, **TOL)


# -- services ------------------------------------------------------------------------------------
def test_services_answer_and_reject(make_node):
    """Every service answers good requests with the library's numbers and rejects bad ones."""
    model = dr.load_urdf(bundled_urdf('panda'))
    h = make_node(urdf_path='panda')
    q, qd, qdd = random_state(model, 8)

    r = h.call(srv.GetMassMatrix, 'get_mass_matrix', srv.GetMassMatrix.Request())
    assert not r.success and 'no joint state' in r.message
    r = h.call(srv.GetMassMatrix, 'get_mass_matrix', srv.GetMassMatrix.Request(positions=q))
    assert r.success and list(r.joint_names) == list(model.joint_names)
    np.testing.assert_allclose(np.reshape(r.mass_matrix, (7, 7)), dr.mass_matrix(model, q),
                               **TOL)
    r = h.call(srv.GetMassMatrix, 'get_mass_matrix',
               srv.GetMassMatrix.Request(positions=[0.0, 1.0]))
    assert not r.success and 'length 2' in r.message and 'panda_joint1' in r.message
    bad = q.copy()
    bad[3] = np.nan
    r = h.call(srv.GetMassMatrix, 'get_mass_matrix', srv.GetMassMatrix.Request(positions=bad))
    assert not r.success and 'positions[3]' in r.message

    # empty positions: the latest joint state
    h.connect()
    h.send(model.joint_names, q, qd, dr.inverse_dynamics(model, q, qd, qdd),
           expect=TERMS + ('prediction',))
    r = h.call(srv.GetMassMatrix, 'get_mass_matrix', srv.GetMassMatrix.Request())
    assert r.success
    np.testing.assert_allclose(np.reshape(r.mass_matrix, (7, 7)), dr.mass_matrix(model, q),
                               **TOL)

    req = srv.GetCartesianDynamics.Request(positions=q, velocities=qd, frame='panda_link8')
    r = h.call(srv.GetCartesianDynamics, 'get_cartesian_dynamics', req)
    assert r.success and r.frame == 'panda_link8'
    ref = dr.cartesian_dynamics(model, q, qd, 'panda_link8')
    np.testing.assert_allclose(np.reshape(r.jacobian, (6, 7)), ref.jacobian, **TOL)
    np.testing.assert_allclose(np.reshape(r.inertia, (6, 6)), ref.inertia, rtol=1e-12,
                               atol=1e-9)
    np.testing.assert_allclose(r.coriolis, ref.coriolis, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(r.gravity, ref.gravity, rtol=1e-12, atol=1e-9)
    assert r.condition_number == pytest.approx(float(ref.condition_number))
    req.frame = 'no_such_link'
    r = h.call(srv.GetCartesianDynamics, 'get_cartesian_dynamics', req)
    assert not r.success and 'no_such_link' in r.message
    r = h.call(srv.GetCartesianDynamics, 'get_cartesian_dynamics',
               srv.GetCartesianDynamics.Request())
    assert r.success and r.frame == model.tip_link  # empty: latest state, tip link

    r = h.call(srv.ComputeInverseDynamics, 'compute_inverse_dynamics',
               srv.ComputeInverseDynamics.Request(positions=q, velocities=qd, accelerations=qdd))
    assert r.success
    np.testing.assert_allclose(r.effort, dr.inverse_dynamics(model, q, qd, qdd), **TOL)
    np.testing.assert_allclose(r.inertia, dr.mass_matrix(model, q) @ qdd, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(r.gravity, dr.gravity_torques(model, q), **TOL)
    r = h.call(srv.ComputeInverseDynamics, 'compute_inverse_dynamics',
               srv.ComputeInverseDynamics.Request(accelerations=[1.0]))
    assert not r.success and 'accelerations' in r.message

    tau = dr.inverse_dynamics(model, q, qd, qdd)
    r = h.call(srv.ComputeForwardDynamics, 'compute_forward_dynamics',
               srv.ComputeForwardDynamics.Request(positions=q, velocities=qd, efforts=tau))
    assert r.success
    np.testing.assert_allclose(r.accelerations, qdd, rtol=1e-9, atol=1e-9)
    r = h.call(srv.ComputeForwardDynamics, 'compute_forward_dynamics',
               srv.ComputeForwardDynamics.Request())  # latest state incl. its efforts
    assert r.success
    np.testing.assert_allclose(r.accelerations, qdd, rtol=1e-9, atol=1e-9)
    r = h.call(srv.ComputeForwardDynamics, 'compute_forward_dynamics',
               srv.ComputeForwardDynamics.Request(positions=q, velocities=qd,
                                                  efforts=[np.inf] * 7))
    assert not r.success and 'efforts[0]' in r.message


@pytest.mark.parametrize('thread', [False, True], ids=['executor', 'thread'])
def test_set_payload_changes_gravity_torques(make_node, thread):
    """A payload at the tip adds J_v^T m_p g to the gravity torques; mass 0 removes it."""
    model = dr.load_urdf(bundled_urdf('ur5e'))
    h = make_node(joint_state_thread=thread, urdf_path='ur5e')
    h.connect()
    q, _, _ = random_state(model, 9)
    m_p = 2.5
    req = srv.SetPayload.Request(link='', payload=Inertia(m=m_p, com=Vector3(), ixx=0.01,
                                                          iyy=0.01, izz=0.01))
    r = h.call(srv.SetPayload, 'set_payload', req)
    assert r.success and r.link == model.tip_link
    assert r.total_mass == pytest.approx(float(np.sum(model.mass)) + m_p)
    out = h.send(model.joint_names, q, np.zeros(6))
    weight = -m_p * model.gravity  # force needed to hold the payload, base frame
    expected = dr.gravity_torques(model, q) + dr.jacobian(model, q)[:3].T @ weight
    np.testing.assert_allclose(out['gravity'].effort, expected, rtol=1e-10, atol=1e-10)

    r = h.call(srv.SetPayload, 'set_payload',
               srv.SetPayload.Request(link=model.tip_link, payload=Inertia(m=0.0)))
    assert r.success
    out = h.send(model.joint_names, q, np.zeros(6))
    np.testing.assert_allclose(out['gravity'].effort, dr.gravity_torques(model, q), **TOL)

    for link, payload, words in (('nowhere', Inertia(m=1.0), 'nowhere'),
                                 ('', Inertia(m=-1.0), 'mass'),
                                 ('', Inertia(m=1.0, ixx=-1.0, iyy=1.0, izz=1.0), 'inertia')):
        r = h.call(srv.SetPayload, 'set_payload', srv.SetPayload.Request(link=link,
                                                                         payload=payload))
        assert not r.success and words in r.message.lower(), r.message


# -- bad input, diagnostics, parameters ---------------------------------------------------------
@pytest.mark.parametrize('thread', [False, True], ids=['executor', 'thread'])
def test_bad_joint_states_are_reported_and_survived(make_node, thread):
    """Missing, duplicate, NaN or mismatched joint states publish nothing; a good one does."""
    model = dr.load_urdf(bundled_urdf('craig_rr'))
    h = make_node(joint_state_thread=thread, urdf_path='craig_rr', diagnostics_period=0.1)
    h.connect()
    j1, j2 = model.joint_names
    bad = [JointState(name=[j1], position=[0.1]),
           JointState(name=[j1, j1], position=[0.1, 0.2]),
           JointState(name=[j1, j2], position=[0.1, float('nan')]),
           JointState(name=[j1, j2], position=[0.1]),
           JointState(name=[j1, j2], position=[0.1, 0.2], velocity=[0.0]),
           JointState(name=[j1, j2])]
    before = h.count('feedforward')
    for msg in bad:
        h.joint_pub.publish(msg)
    assert h.spin_until(lambda: h.node.stats.invalid == len(bad))
    assert h.count('feedforward') == before
    assert h.spin_until(lambda: any(
        s.level == s.WARN and 'invalid' in s.message
        for a in h.received.get('diagnostics', []) for s in a.status))
    out = h.send(model.joint_names, [0.2, 0.4], [0.0, 0.0])
    np.testing.assert_allclose(out['gravity'].effort, dr.gravity_torques(model, [0.2, 0.4]),
                               **TOL)
    status = h.received['diagnostics'][-1].status[0]
    keys = {kv.key: kv.value for kv in status.values}
    for key in ('model_loaded', 'joints', 'input_rate_hz', 'compute_time_mean_ms',
                'compute_time_max_ms', 'invalid_inputs', 'joint_states_received', 'published'):
        assert key in keys
    assert int(keys['invalid_inputs']) == len(bad)


def test_runtime_parameters_validated(make_node):
    """Bad runtime values are rejected with a reason; a valid tip_link rebuilds the model."""
    h = make_node(urdf_path='panda')
    node = h.node
    r = node.set_parameters([Parameter('feedforward_state', value='sideways')])[0]
    assert not r.successful and 'feedforward_state' in r.reason
    r = node.set_parameters([Parameter('tip_link', value='no_link')])[0]
    assert not r.successful and 'no_link' in r.reason
    r = node.set_parameters([Parameter('command_joints', value=['panda_joint9'])])[0]
    assert not r.successful and 'panda_joint9' in r.reason
    assert node.model.dof == 7
    r = node.set_parameters([Parameter('tip_link', value='panda_link4')])[0]
    assert r.successful
    assert node.model.dof == 4
    r = node.set_parameters([Parameter('prediction_horizon', value=-1.0)])[0]
    assert not r.successful


def test_invalid_startup_parameters_raise(rclpy_context):
    """Invalid parameters at start-up give one clear DenocError (main() turns it into exit 1)."""
    for params, words in (({'urdf_path': 'panda', 'feedforward_state': 'x'}, 'feedforward_state'),
                          ({'urdf_path': 'panda', 'tip_link': 'nope'}, 'nope'),
                          ({'urdf_path': '/no/such/file.urdf'}, 'no such file')):
        overrides = [Parameter(k, value=v) for k, v in params.items()]
        with pytest.raises(dr.DenocError, match=words):
            DynamicsNode(context=rclpy_context, parameter_overrides=overrides)


def test_burst_of_joint_states_is_processed_in_full(make_node):
    """100 joint states published at once (10x a 1 kHz stream's 10 ms) are all answered."""
    model = dr.load_urdf(bundled_urdf('craig_rr'))
    h = make_node(urdf_path='craig_rr')
    h.connect()
    before_in, before_out = h.node.stats.received, h.count('feedforward')
    for k in range(100):
        msg = JointState(name=list(model.joint_names), position=[0.01 * k, 0.2],
                         velocity=[0.0, 0.0])
        msg.header.stamp.sec = 10 + k
        h.joint_pub.publish(msg)
    assert h.spin_until(lambda: h.count('feedforward') - before_out >= 100, timeout=20.0), \
        f'{h.count("feedforward") - before_out} of 100 answered'
    assert h.node.stats.received - before_in == 100
    stamps = [m.header.stamp.sec for m in h.received['feedforward'][-100:]]
    assert stamps == list(range(10, 110))  # in order


@pytest.mark.parametrize('limit', [0, 5, 100])
def test_drain_limit_answers_a_backlog_in_one_callback(make_node, limit):
    """One callback answers its joint state and up to drain_limit queued ones, in order."""
    model = dr.load_urdf(bundled_urdf('craig_rr'))
    h = make_node(urdf_path='craig_rr', drain_limit=limit)
    h.connect()
    queued = 20
    before_in, before_out = h.node.stats.received, h.count('feedforward')
    for k in range(queued):
        msg = JointState(name=list(model.joint_names), position=[0.01 * k, 0.2])
        msg.header.stamp.sec = 100 + k
        h.joint_pub.publish(msg)
    time.sleep(0.5)  # delivered into the node's queue meanwhile (nothing spins)
    end = time.monotonic() + 10.0
    while h.node.stats.received == before_in and time.monotonic() < end:
        h.executor.spin_once(timeout_sec=0.1)
    assert h.node.stats.received - before_in == min(queued, 1 + limit)
    assert h.spin_until(lambda: h.count('feedforward') - before_out >= queued)
    stamps = [m.header.stamp.sec for m in h.received['feedforward'][-queued:]]
    assert stamps == list(range(100, 100 + queued))
    assert h.node.stats.received - before_in == queued


# -- joint friction ------------------------------------------------------------------------------
DAMPING = {'shoulder': 0.3, 'elbow': 0.05}     # viscous [N m s/rad], written into the URDF below
COULOMB = {'shoulder': 0.7, 'elbow': 1.25}     # Coulomb level [N m]
SMOOTHING = 1e-3                               # the library's tanh velocity scale [rad/s]


def rubbing_arm(scale=1.0):
    """Return the URDF of a two-link arm with joint <dynamics>, coefficients times ``scale``."""
    def joint(name, parent, child, xyz, axis):
        return (f'<joint name="{name}" type="continuous"><parent link="{parent}"/>'
                f'<child link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>'
                f'<dynamics damping="{scale * DAMPING[name]}" '
                f'friction="{scale * COULOMB[name]}"/></joint>')

    def link(name, mass, com):
        return (f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass}"/>'
                '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.15" iyz="0" izz="0.15"/>'
                '</inertial></link>')
    return ('<robot name="rubbing_arm"><link name="base"/>' + link('upper', 2.0, '0.4 0 0')
            + link('fore', 1.2, '0.3 0 0')
            + joint('shoulder', 'base', 'upper', '0 0 0.5', '0 1 0')
            + joint('elbow', 'upper', 'fore', '0.8 0 0', '0 1 0') + '</robot>')


def expected_friction(qd, scale=1.0):
    """Return v qd + c tanh(qd / v_s) from the coefficients this file wrote into the URDF."""
    v = scale * np.array([DAMPING['shoulder'], DAMPING['elbow']])
    c = scale * np.array([COULOMB['shoulder'], COULOMB['elbow']])
    return v * np.asarray(qd) + c * np.tanh(np.asarray(qd) / SMOOTHING)


def diagnostics_value(h, key):
    """Return the value of ``key`` in the latest /diagnostics message that arrives from now."""
    before = h.count('diagnostics')
    assert h.spin_until(lambda: h.count('diagnostics') > before)
    return {kv.key: kv.value for kv in h.received['diagnostics'][-1].status[0].values}[key]


def test_friction_adds_urdf_friction_to_the_feedforward(make_node):
    """With friction on, feedforward and effort_command gain v qd + c tanh(qd/v_s); terms not."""
    h = make_node(robot_description=rubbing_arm(), friction=True, diagnostics_period=0.1,
                  command_joints=['elbow', 'shoulder'])
    h.connect()
    assert diagnostics_value(h, 'friction') == 'on (viscous+Coulomb from the URDF)'
    names = ['elbow', 'shoulder']       # joint states in another order than the model's
    q, qd = np.array([0.4, -0.9]), np.array([-0.0007, 0.0021])  # tanh far from saturation
    expect = TERMS + ('command',)
    on = h.send(names, q[::-1], qd[::-1], expect=expect)
    assert h.node.set_parameters([Parameter('friction', value=False)])[0].successful
    off = h.send(names, q[::-1], qd[::-1], expect=expect)
    tau_f = expected_friction(qd)
    assert np.all(np.abs(tau_f) > 0.1)
    np.testing.assert_allclose(np.subtract(on['feedforward'].effort, off['feedforward'].effort),
                               tau_f, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(np.subtract(on['command'].data, off['command'].data),
                               tau_f[::-1], rtol=1e-12, atol=1e-12)
    for term in ('gravity', 'coriolis', 'inertia'):   # pure rigid-body terms either way
        np.testing.assert_array_equal(on[term].effort, off[term].effort)
    model = dr.load_urdf(rubbing_arm())
    np.testing.assert_allclose(off['feedforward'].effort,
                               dr.inverse_dynamics(model, q, qd, np.zeros(2)), **TOL)
    assert diagnostics_value(h, 'friction') == 'off'

    # the library's friction model, and back on at run time
    np.testing.assert_allclose(dr.friction_torques(model, qd), tau_f, rtol=1e-12, atol=1e-15)
    assert h.node.set_parameters([Parameter('friction', value=True)])[0].successful
    again = h.send(names, q[::-1], qd[::-1])
    np.testing.assert_array_equal(again['feedforward'].effort, on['feedforward'].effort)
    assert diagnostics_value(h, 'friction').startswith('on')


def test_friction_follows_the_feedforward_state(make_node):
    """With a reference: friction at qd_d in 'desired' mode, at the measured qd in 'measured'."""
    h = make_node(robot_description=rubbing_arm(), friction=True, reference_timeout=0.0)
    h.connect()
    model = dr.load_urdf(rubbing_arm())
    q, qd = np.array([0.2, 0.5]), np.array([0.0012, -0.3])
    q_d, qd_d, qdd_d = np.array([0.25, 0.45]), np.array([-0.0004, 0.8]), np.array([1.5, -2.0])
    ref = JointTrajectory(joint_names=list(model.joint_names), points=[JointTrajectoryPoint(
        positions=list(q_d), velocities=list(qd_d), accelerations=list(qdd_d))])
    h.reference_pub.publish(ref)
    assert h.spin_until(lambda: h.node._active_reference() is not None)
    tol = {'rtol': 1e-10, 'atol': 1e-10}
    out = h.send(model.joint_names, q, qd)
    np.testing.assert_allclose(out['feedforward'].effort,
                               dr.inverse_dynamics(model, q_d, qd_d, qdd_d)
                               + expected_friction(qd_d), **tol)
    assert h.node.set_parameters([Parameter('feedforward_state', value='measured')])[0].successful
    out = h.send(model.joint_names, q, qd)
    rigid = sum(np.asarray(out[t].effort) for t in ('gravity', 'coriolis', 'inertia'))
    np.testing.assert_allclose(np.asarray(out['feedforward'].effort) - rigid,
                               expected_friction(qd), **tol)


def test_friction_in_the_prediction_and_after_a_model_swap(make_node):
    """The prediction subtracts friction from the measured efforts; a new URDF brings its own."""
    h = make_node(friction=True, prediction_horizon=0.0)
    h.description_pub.publish(String(data=rubbing_arm()))
    assert h.spin_until(lambda: h.node.model is not None)
    h.connect()
    model = dr.load_urdf(rubbing_arm())
    q, qd, effort = np.array([0.3, -0.2]), np.array([0.0009, -0.0015]), np.array([5.0, -1.0])
    out = h.send(model.joint_names, q, qd, effort, expect=('prediction', 'feedforward'))
    (point,) = out['prediction'].points
    np.testing.assert_allclose(point.accelerations, dr.forward_dynamics(
        model, q, qd, effort - expected_friction(qd)), rtol=1e-10, atol=1e-10)
    np.testing.assert_array_equal(point.effort, effort)  # the input, as measured

    h.description_pub.publish(String(data=rubbing_arm(scale=3.0)))
    assert h.spin_until(lambda: h.node.processor.friction is not None
                        and h.node.processor.friction.viscous[0] == pytest.approx(0.9))
    out = h.send(model.joint_names, q, qd)
    rigid = sum(np.asarray(out[t].effort) for t in ('gravity', 'coriolis', 'inertia'))
    np.testing.assert_allclose(np.asarray(out['feedforward'].effort) - rigid,
                               expected_friction(qd, scale=3.0), rtol=1e-10, atol=1e-10)


def test_dynamics_state_carries_every_output_in_one_message(make_node):
    """~/dynamics_state: the individual topics' numbers, FD, tau_ext and the flags, one stamp."""
    h = make_node(urdf_path='panda', observer_gain=50.0, prediction_horizon=0.0,
                  friction=True, contact_threshold=0.5)
    # (subclasses of Harness subscribe to ~/external_torques under 'external' themselves)
    h.subs.append(h.probe.create_subscription(
        JointState, '/denoc_dynamics/external_torques',
        lambda m: h.received.setdefault('external', []).append(m), 100))
    h.connect()
    assert h.spin_until(lambda: all(s.get_publisher_count() > 0 for s in h.subs[7:]))
    model = h.node.model
    names = list(model.joint_names)
    rng = np.random.default_rng(11)
    expect = TERMS + ('prediction', 'state', 'external')
    for k in range(4):
        q, qd = rng.uniform(-1.0, 1.0, model.dof), rng.uniform(-1.0, 1.0, model.dof)
        effort = dr.gravity_torques(model, q) + rng.uniform(-2.0, 2.0, model.dof)
        got = h.send(names, q, qd, effort, stamp=(9, 1000 * k), expect=expect)
        state = got['state']
        assert (state.header.stamp.sec, state.header.stamp.nanosec) == (9, 1000 * k)
        assert list(state.joint_names) == names
        for term in TERMS:
            np.testing.assert_array_equal(getattr(state, term), got[term].effort)
        friction = JointFriction(model)(qd)
        np.testing.assert_allclose(state.friction, friction, **TOL)
        np.testing.assert_allclose(np.sum([state.gravity, state.coriolis, state.inertia,
                                           state.friction], axis=0), state.feedforward, **TOL)
        np.testing.assert_array_equal(state.predicted_accelerations,
                                      got['prediction'].points[0].accelerations)
        np.testing.assert_allclose(state.predicted_accelerations, dr.forward_dynamics(
            model, q, qd, effort - friction), **TOL)
        np.testing.assert_array_equal(state.external_torques, got['external'].effort)
        r = np.asarray(state.external_torques)
        assert len(state.joint_in_contact) == model.dof
        if k == 0:
            assert not np.any(r) and not any(state.joint_in_contact)  # the observer's start
        else:
            assert list(state.joint_in_contact) == (np.abs(r) > 0.5).tolist() or any(
                state.joint_in_contact)


def test_serialized_templates_deserialize_to_the_messages_they_stand_for():
    """The bytes the node publishes are the messages rclpy would send, for every variant."""
    from denoc_ros.ros.dynamics_outputs import DynamicsOutputs
    from denoc_ros.processor import Outputs
    from rclpy.serialization import deserialize_message
    names = ['a', 'b', 'c']

    class Publisher:

        def __init__(self):
            self.sent = []

        def publish(self, data):
            self.sent.append(data)

    outputs = DynamicsOutputs.__new__(DynamicsOutputs)
    topics = ('gravity', 'coriolis', 'inertia', 'feedforward', 'command', 'prediction',
              'external', 'contact', 'wrench', 'state')
    outputs.publishers = {k: Publisher() for k in topics}
    outputs._write = {k: p.publish for k, p in outputs.publishers.items()}  # (the raw writes)
    outputs.listening = dict.fromkeys(outputs.publishers, True)
    outputs.prepare(names, [2, 0, 1], 0.01, 'c')
    outputs.set_thresholds([1.0, 1.5, 2.0])
    rng = np.random.default_rng(2)
    for frame in ('', 'base', ''):
        for observed in (False, True):
            for accelerations in (False, True):
                v = [rng.normal(size=3) for _ in range(9)]
                out = Outputs(1.5, v[0], v[1], v[2], v[3], v[4],
                              accelerations=v[5] if accelerations else None,
                              prediction=(v[6], v[7], v[8]) if accelerations else None,
                              external_torques=v[5] if observed else None,
                              joint_in_contact=(v[6] > 0) if observed else None,
                              wrench=rng.normal(size=6) if observed else None,
                              max_ratio=rng.uniform(0, 2) if observed else 0.0)
                effort = rng.normal(size=3)
                outputs.publish(3, 77, frame, effort, out)
                sent = {k: p.sent.pop() for k, p in outputs.publishers.items() if p.sent}
                state = deserialize_message(sent['state'], DynamicsState)
                assert state.header.frame_id == frame and state.header.stamp.nanosec == 77
                assert list(state.joint_names) == names
                for k, field in enumerate(('gravity', 'coriolis', 'inertia', 'friction',
                                           'feedforward')):
                    np.testing.assert_array_equal(getattr(state, field), v[k])
                    if k < 4 and field != 'friction':
                        term = deserialize_message(sent[field], JointState)
                        np.testing.assert_array_equal(term.effort, v[k])
                        assert list(term.name) == names and term.header.frame_id == frame
                np.testing.assert_array_equal(state.predicted_accelerations,
                                              v[5] if accelerations else [])
                command = deserialize_message(sent['command'], Float64MultiArray)
                np.testing.assert_array_equal(command.data, v[4][[2, 0, 1]])
                if accelerations:
                    point = deserialize_message(sent['prediction'], JointTrajectory).points[0]
                    for field, k in (('positions', 6), ('velocities', 7),
                                     ('accelerations', 8)):
                        np.testing.assert_array_equal(getattr(point, field), v[k])
                    np.testing.assert_array_equal(point.effort, effort)
                    assert point.time_from_start.nanosec == 10_000_000
                if observed:
                    np.testing.assert_array_equal(state.external_torques, v[5])
                    assert list(state.joint_in_contact) == (v[6] > 0).tolist()
                    contact = deserialize_message(sent['contact'], ContactState)
                    assert (contact.header.stamp.sec, contact.header.stamp.nanosec,
                            contact.header.frame_id) == (3, 77, frame)
                    assert contact.in_contact is out.in_contact
                    assert list(contact.joint_names) == names
                    np.testing.assert_array_equal(contact.external_torques, v[5])
                    np.testing.assert_array_equal(contact.thresholds, [1.0, 1.5, 2.0])
                    assert list(contact.joint_in_contact) == (v[6] > 0).tolist()
                    assert contact.max_ratio == out.max_ratio
                    wrench = deserialize_message(sent['wrench'], WrenchStamped)
                    assert wrench.header.frame_id == 'c'  # the contact frame's
                    assert (wrench.header.stamp.sec, wrench.header.stamp.nanosec) == (3, 77)
                    w = wrench.wrench
                    np.testing.assert_array_equal(
                        [w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z],
                        out.wrench)
                else:
                    assert len(state.external_torques) == 0 and 'external' not in sent


def test_joint_state_bytes_read_as_rclpy_deserializes():
    """A JointStateBytes reads what deserialize_message reads, for every layout a driver sends."""
    from denoc_ros.ros.serialized import JointStateBytes
    from rclpy.serialization import deserialize_message, serialize_message
    rng = np.random.default_rng(7)
    model_joints = ('j1', 'j2', 'j3')
    reader = JointStateBytes()
    cases = []
    for names in (['j1', 'j2', 'j3'], ['x', 'j3', 'j1', 'j2'], ['j2', 'j1', 'longer_name', 'j3']):
        for has_v in (True, False):
            for has_e in (True, False):
                for frame in ('', 'base_link'):
                    cases.append((names, has_v, has_e, frame))
    cases += cases[::-1]  # back to a layout seen before
    for k, (names, has_v, has_e, frame) in enumerate(cases):
        n = len(names)
        msg = JointState(name=names, position=rng.normal(size=n).tolist(),
                         velocity=rng.normal(size=n).tolist() if has_v else [],
                         effort=rng.normal(size=n).tolist() if has_e else [])
        msg.header.stamp.sec, msg.header.stamp.nanosec, msg.header.frame_id = k, 1000 + k, frame
        raw = bytes(serialize_message(msg))
        ref = deserialize_message(raw, JointState)
        sec, nanosec, frame_id, got_names, p, v, e = reader.read(raw)
        assert (sec, nanosec, frame_id, got_names) == (k, 1000 + k, frame, tuple(names))
        for got, want in ((p, ref.position), (v, ref.velocity), (e, ref.effort)):
            np.testing.assert_array_equal(got, np.asarray(want))
        index = [names.index(j) for j in model_joints]
        sec, nanosec, frame_id, q, qd, effort = reader.select(raw, model_joints)
        assert (sec, nanosec, frame_id) == (k, 1000 + k, frame)
        np.testing.assert_array_equal(q, np.asarray(ref.position)[index])
        np.testing.assert_array_equal(qd, np.asarray(ref.velocity)[index] if has_v
                                      else np.zeros(3))
        if has_e:
            np.testing.assert_array_equal(effort, np.asarray(ref.effort)[index])
        else:
            assert effort is None
    # what select leaves to the checked path (None): a joint missing or twice, a length that is
    # not the names', a non-finite value; read still reads them
    bad = [JointState(name=['j1', 'j2'], position=[0.0, 1.0]),
           JointState(name=['j1', 'j2', 'j3', 'j1'], position=[0.0, 1.0, 2.0, 3.0]),
           JointState(name=['j1', 'j2', 'j3'], position=[0.0, 1.0, 2.0], velocity=[1.0]),
           JointState(name=['j1', 'j2', 'j3'], position=[0.0, float('inf'), 2.0]),
           JointState(name=['j1', 'j2', 'j3'], position=[0.0, 1.0, 2.0],
                      effort=[float('nan'), 0.0, 0.0]),
           JointState(name=['j1', 'j2', 'j3'])]
    for msg in bad:
        raw = bytes(serialize_message(msg))
        assert reader.select(raw, model_joints) is None
        assert reader.read(raw)[3] == tuple(msg.name)
    with pytest.raises(ValueError):
        reader.read(b'\x00\x01\x00\x00' + b'\xff' * 8)
