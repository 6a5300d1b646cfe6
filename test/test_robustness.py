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
Property-based tests over random robots, and fuzzing of the URDF loader and the node's inputs.

* Random trees of 1 to 30 joints (random parents, axes, origins, inertias, fixed links), written
  as URDF and loaded by both our loader and Pinocchio's: the dynamics identities hold and the
  numbers agree with Pinocchio.
* Mutated URDFs (cut, duplicated, numbers replaced by nan/inf/huge/garbage): the loader either
  builds a model or raises the package's own error, never anything else.
* Random joint states (missing, extra, duplicated names; wrong lengths; NaN, inf, 1e300) into the
  real node: it never raises, and never publishes a non-finite number.
Case counts are fixed by the ``settings`` below (CI-sized).
"""

import math
import subprocess

from conftest import venv_executable
import denoc_ros as dr
from denoc_ros.resources import bundled_urdf
from denoc_ros.ros.dynamics_node import DynamicsNode
from hypothesis import given, HealthCheck, settings, strategies as st
import numpy as np
import pinocchio as pin
import pytest
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

ROBOT_CASES = 40        # random trees
URDF_FUZZ_CASES = 300   # mutated descriptions
STATE_FUZZ_CASES = 300  # random joint states


def _vec(v):
    return ' '.join(repr(float(x)) for x in v)


def random_tree_urdf(n, seed):
    """Return the URDF of a random tree with ``n`` movable joints (and some fixed links)."""
    rng = np.random.default_rng(seed)
    links, joints = ['<link name="l0"/>'], []
    movable = ['l0']
    for i in range(1, n + 1):
        parent = movable[rng.integers(len(movable))]
        kind = rng.choice(['revolute', 'continuous', 'prismatic'], p=[0.5, 0.2, 0.3])
        a, b, c = rng.uniform(0.01, 0.1, 3)
        principal = np.array([a + b, b + c, a + c])  # triangle inequality by construction
        links.append(
            f'<link name="l{i}"><inertial><origin xyz="{_vec(rng.uniform(-0.2, 0.2, 3))}" '
            f'rpy="{_vec(rng.uniform(-3, 3, 3))}"/>'
            f'<mass value="{float(rng.uniform(0.2, 5.0))!r}"/>'
            f'<inertia ixx="{float(principal[0])!r}" ixy="0" ixz="0" '
            f'iyy="{float(principal[1])!r}" iyz="0" izz="{float(principal[2])!r}"/>'
            '</inertial></link>')
        limit = ('' if kind == 'continuous'
                 else '<limit lower="-3" upper="3" effort="100" velocity="10"/>')
        joints.append(
            f'<joint name="j{i}" type="{kind}"><parent link="{parent}"/><child link="l{i}"/>'
            f'<origin xyz="{_vec(rng.uniform(-0.3, 0.3, 3))}" '
            f'rpy="{_vec(rng.uniform(-3, 3, 3))}"/>'
            f'<axis xyz="{_vec(rng.normal(size=3))}"/>{limit}</joint>')
        movable.append(f'l{i}')
        if rng.random() < 0.15:  # a welded link, lumped by both loaders
            links.append(f'<link name="f{i}"><inertial><mass value="0.3"/><inertia ixx="0.01" '
                         'ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>')
            joints.append(f'<joint name="fj{i}" type="fixed"><parent link="l{i}"/>'
                          f'<child link="f{i}"/><origin xyz="0.1 0 0"/></joint>')
    return '<robot name="random">' + ''.join(links + joints) + '</robot>'


@settings(max_examples=ROBOT_CASES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(1, 30), seed=st.integers(0, 2 ** 32 - 1))
def test_random_trees_satisfy_identities_and_match_pinocchio(n, seed):
    """On random trees: M SPD, ID(FD) = tau, C qd + g = ID(q, qd, 0); Pinocchio agrees."""
    xml = random_tree_urdf(n, seed)
    model = dr.load_urdf(xml)
    assert model.dof == n
    pm = pin.buildModelFromXML(xml)
    pdata = pm.createData()
    joints = [pm.joints[pm.getJointId(name)] for name in model.joint_names]
    index = [j.idx_v for j in joints]
    rng = np.random.default_rng(seed + 1)
    q, qd, qdd = rng.uniform(-1, 1, (3, n))
    qp, vp, ap = np.zeros(pm.nq), np.zeros(n), np.zeros(n)
    vp[index], ap[index] = qd, qdd
    for j, angle in zip(joints, q):
        if j.nq == 2:  # Pinocchio's continuous joint: (cos, sin)
            qp[j.idx_q:j.idx_q + 2] = math.cos(angle), math.sin(angle)
        else:
            qp[j.idx_q] = angle

    M = dr.mass_matrix(model, q)
    np.testing.assert_allclose(M, M.T, atol=1e-12 * np.abs(M).max())
    assert np.linalg.eigvalsh(M).min() > 0
    tau = dr.inverse_dynamics(model, q, qd, qdd)
    scale = max(1.0, np.abs(tau).max())
    np.testing.assert_allclose(pin.rnea(pm, pdata, qp, vp, ap)[index], tau, atol=1e-9 * scale)
    pin.crba(pm, pdata, qp)
    Mp = np.triu(pdata.M) + np.triu(pdata.M, 1).T
    np.testing.assert_allclose(Mp[np.ix_(index, index)], M, atol=1e-9 * np.abs(M).max())
    C = dr.coriolis_matrix(model, q, qd)
    Cp = pin.computeCoriolisMatrix(pm, pdata, qp, vp)[np.ix_(index, index)]
    np.testing.assert_allclose(C, Cp, atol=1e-9 * max(1.0, np.abs(Cp).max()))
    g = dr.gravity_torques(model, q)
    np.testing.assert_allclose(C @ qd + g, dr.inverse_dynamics(model, q, qd, 0 * qd),
                               atol=1e-9 * scale)
    # forward dynamics: relative to the conditioning of M (30-joint trees can be stiff)
    back = dr.inverse_dynamics(model, q, qd, dr.forward_dynamics(model, q, qd, tau))
    np.testing.assert_allclose(back, tau, atol=1e-9 * scale * np.linalg.cond(M))


BASE_URDFS = [bundled_urdf(name).read_text() for name in ('craig_rr', 'ur5e', 'stanford_arm')]
REPLACEMENTS = ['nan', 'inf', '-inf', '-1', '0', '1e308', '1e-320', 'abc', '', '1 2',
                '"', '<', '&amp;']


@st.composite
def mutated_urdf(draw):
    """Draw a bundled URDF with one to three random mutations."""
    text = draw(st.sampled_from(BASE_URDFS))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(['cut', 'duplicate', 'number', 'attribute']))
        i = draw(st.integers(0, len(text) - 1))
        j = min(len(text), i + draw(st.integers(1, 200)))
        if kind == 'cut':
            text = text[:i] + text[j:]
        elif kind == 'duplicate':
            text = text[:j] + text[i:j] + text[j:]
        else:
            quote = text.find('"', i)
            end = text.find('"', quote + 1)
            if quote < 0 or end < 0:
                continue
            value = draw(st.sampled_from(REPLACEMENTS))
            if kind == 'attribute':
                value = text[quote + 1:end] + ' ' + value
            text = text[:quote + 1] + value + text[end:]
    return text


@settings(max_examples=URDF_FUZZ_CASES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(text=mutated_urdf())
def test_mutated_urdfs_load_or_raise_the_package_error(text):
    """A damaged URDF gives a model whose numbers are finite, or a DenocError: nothing else."""
    try:
        model = dr.load_urdf(text)
    except dr.DenocError as err:
        assert str(err)
        return
    q = np.full(model.dof, 0.3)
    try:
        values = [dr.gravity_torques(model, q), dr.mass_matrix(model, q)]
    except dr.DenocError:
        return
    assert all(np.all(np.isfinite(v)) for v in values)


# -- the node ------------------------------------------------------------------------------------
PANDA = dr.load_urdf(bundled_urdf('panda'))
NASTY = [0.0, 0.5, -1.0, 1e300, -1e300, math.inf, -math.inf, math.nan, 1e-310]


@st.composite
def joint_states(draw):
    """Draw a JointState that may be valid, partial, duplicated, mis-sized or non-finite."""
    names = list(PANDA.joint_names)
    pool = names + ['panda_finger_joint1', 'gripper', '']
    chosen = draw(st.one_of(
        st.permutations(names),
        st.lists(st.sampled_from(pool), max_size=12)))
    n = len(chosen)

    def array():
        size = draw(st.sampled_from([n, n, n, 0, max(0, n - 1), n + 1]))
        return draw(st.lists(st.one_of(st.floats(-3, 3), st.sampled_from(NASTY)),
                             min_size=size, max_size=size))
    msg = JointState(name=list(chosen), position=array(), velocity=array(), effort=array())
    msg.header.stamp.sec = draw(st.integers(0, 10))
    return msg


@pytest.fixture(scope='module')
def fuzz_node():
    """Return (node, executor, outputs) with a probe recording every output of the node."""
    context = rclpy.context.Context()
    rclpy.init(context=context)
    node = DynamicsNode(context=context, parameter_overrides=[
        Parameter('urdf_path', value='panda'), Parameter('prediction_horizon', value=0.0)])
    probe = rclpy.create_node('fuzz_probe', context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    executor.add_node(probe)
    outputs = []
    for topic in ('gravity_torques', 'coriolis_torques', 'inertia_torques',
                  'feedforward_torques'):
        probe.create_subscription(JointState, f'/denoc_dynamics/{topic}',
                                  lambda m: outputs.append(m.effort), 1000)
    probe.create_subscription(JointTrajectory, '/denoc_dynamics/prediction',
                              lambda m: outputs.append(m.points[0].accelerations), 1000)
    yield node, executor, outputs
    executor.shutdown()
    probe.destroy_node()
    node.destroy_node()
    rclpy.try_shutdown(context=context)


@settings(max_examples=STATE_FUZZ_CASES, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(msg=joint_states())
def test_node_survives_any_joint_state_and_publishes_only_finite_numbers(fuzz_node, msg):
    """Every joint state is either published (all finite) or counted as invalid."""
    node, executor, outputs = fuzz_node
    before = (node.stats.received, node.stats.published, node.stats.invalid)
    node.joint_state_callback(msg)
    for _ in range(3):
        executor.spin_once(timeout_sec=0.001)
    received, published, invalid = (node.stats.received, node.stats.published,
                                    node.stats.invalid)
    assert received == before[0] + 1
    assert (published - before[1]) + (invalid - before[2]) >= 1
    assert all(np.all(np.isfinite(values)) for values in outputs)


def test_bad_reference_is_reported_and_ignored(fuzz_node):
    """A reference with NaN or without points is dropped, counted and leaves no trace."""
    node, _, _ = fuzz_node
    before = node.stats.invalid
    bad = JointTrajectory(joint_names=list(PANDA.joint_names),
                          points=[JointTrajectoryPoint(positions=[math.nan] * 7)])
    node.reference_callback(bad)
    node.reference_callback(JointTrajectory(joint_names=list(PANDA.joint_names)))
    assert node.stats.invalid == before + 2
    assert node._active_reference() is None


def test_stamps_going_backwards_are_reported_but_computed(fuzz_node):
    """An older stamp is counted (diagnostics) and the torques are still published."""
    node, _, _ = fuzz_node
    good = JointState(name=list(PANDA.joint_names), position=[0.1] * 7, velocity=[0.0] * 7)
    good.header.stamp.sec = 100
    node.joint_state_callback(good)
    published, backwards = node.stats.published, node.stats.backwards
    good.header.stamp.sec = 99
    node.joint_state_callback(good)
    assert node.stats.backwards == backwards + 1
    assert node.stats.published == published + 1
    assert 'older than' in node.stats.last_error


@pytest.mark.parametrize('args, words', [
    (['-p', 'urdf_path:=panda', '-p', 'feedforward_state:=sideways'], 'feedforward_state'),
    (['-p', 'urdf_path:=/no/such/robot.urdf'], 'no such file'),
    (['-p', 'urdf_path:=panda', '-p', 'tip_link:=nowhere'], 'nowhere'),
])
def test_invalid_startup_parameters_exit_nonzero_with_one_line(args, words):
    """The executable stops with status 1 and one line naming the problem, no traceback."""
    run = subprocess.run([str(venv_executable('denoc_dynamics_node')), '--ros-args', *args],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert words in run.stderr
    assert 'Traceback' not in run.stderr + run.stdout
    assert len(run.stderr.strip().splitlines()) == 1
