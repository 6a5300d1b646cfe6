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
Pushing the simulated arm: an external wrench on a link, applied by MuJoCo's ``xfrc_applied``.

The wrench is given in the link's axes at the link frame's origin; MuJoCo wants it in world
axes at the body's centre of mass. The independent check is our own library: the generalised
force MuJoCo's pipeline derives from ``xfrc_applied`` (its ``qfrc_smooth`` with the wrench minus
without) must equal ``J(q)^T F`` with ``J`` from ``denoc_ros.jacobian`` (base axes, frame
origin), and MuJoCo's accelerations of the gravity-compensated arm our forward dynamics with
``J^T F`` added. Then over ROS: a WrenchStamped on ``/sim_arm/external_wrench``.
"""

import subprocess
import time

from conftest import example_robot, require_oracle, venv_executable
import denoc_ros as dr
from denoc_ros.description import read_description
from denoc_ros.errors import InputError
from denoc_ros.mujoco_arm import MujocoArm
import numpy as np
import pytest

mujoco = require_oracle('mujoco')

Q0 = np.array([0.3, -0.5, 0.2, -2.0, 0.1, 1.5, 0.4])   # a pose far from any singularity


def pushed(arm, q, link, force, torque):
    """Return (generalised force of the wrench, qacc) from MuJoCo's pipeline, g(q) applied."""
    arm.clear_external_wrench()
    arm.set_state(q)
    mujoco.mj_forward(arm.model, arm.data)
    free = arm.data.qfrc_smooth.copy()
    arm.set_external_wrench(link, force, torque)
    mujoco.mj_forward(arm.model, arm.data)
    return arm.data.qfrc_smooth - free, arm.data.qacc.copy()


def joint_torques(model, q, link, force, torque):
    """Return J(q)^T F by our library, F = the link-axes wrench rotated to base axes."""
    rotation = dr.frame_pose(model, q, link)[0]
    wrench = np.concatenate([rotation @ np.asarray(force), rotation @ np.asarray(torque)])
    return dr.jacobian(model, q, frame=link).T @ wrench


def relative(a, b):
    """Return max |a - b| / max |b|."""
    return float(np.abs(a - b).max() / np.abs(b).max())


@pytest.fixture(scope='module')
def panda():
    """Return (our model, MujocoArm) of the bundled Panda (panda_link8 is welded to link7)."""
    xml = read_description('panda')
    return dr.load_urdf(xml), MujocoArm(xml)


@pytest.mark.parametrize('seed, link', [(1, 'panda_link3'), (2, 'panda_link7'),
                                        (3, 'panda_link8')])
def test_wrench_gives_jacobian_transpose_forces(panda, seed, link):
    """A pushed, gravity-held Panda: MuJoCo's generalised force is J^T F, its qacc ours."""
    model, arm = panda
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(5):
        q = Q0 + rng.uniform(-0.5, 0.5, 7)
        force, torque = rng.normal(0.0, 10.0, 3), rng.normal(0.0, 2.0, 3)
        arm.set_effort(dr.gravity_torques(model, q))
        generalised, qacc = pushed(arm, q, link, force, torque)
        expected = joint_torques(model, q, link, force, torque)
        qdd = dr.forward_dynamics(model, q, np.zeros(7), dr.gravity_torques(model, q) + expected)
        errors = (relative(generalised, expected), relative(qacc, qdd),
                  relative(arm.external_joint_forces(), expected))
        worst = max(worst, *errors)
        assert errors[0] < 1e-9, (generalised, expected)
        assert errors[1] < 1e-9, (qacc, qdd)
        assert errors[2] < 1e-9
    print(f'\n{link}: J^T F vs MuJoCo (generalised force, qacc, mj_applyFT) max rel {worst:.1e}')
    arm.clear_external_wrench()


def test_wrench_on_rotated_welded_links():
    """Example-robot-data's Panda: panda_hand (welded, rotated -45 deg) and the massless tcp."""
    xml = example_robot('panda_description/urdf/panda.urdf').read_text()
    with pytest.warns(UserWarning, match='mimic'):
        model = dr.load_urdf(xml)
    arm = MujocoArm(xml)
    assert arm.joint_names == model.joint_names
    q = np.concatenate([Q0, [0.02, 0.02]])
    for link in ('panda_hand', 'panda_hand_tcp', 'panda_leftfinger'):
        force, torque = np.array([3.0, -4.0, 5.0]), np.array([0.3, 0.2, -0.1])
        generalised, _ = pushed(arm, q, link, force, torque)
        expected = joint_torques(model, q, link, force, torque)
        error = relative(generalised, expected)
        print(f'\n{link}: J^T F vs MuJoCo generalised force, max rel {error:.1e}')
        assert error < 1e-9


def test_wrench_follows_the_link_and_clears(panda):
    """Each step recomputes xfrc_applied at the current pose; a zero wrench removes it."""
    model, arm = panda
    force, torque = np.array([0.0, 0.0, 20.0]), np.array([1.0, 0.0, 0.0])
    arm.set_state(Q0)
    arm.set_external_wrench('panda_link8', force, torque)
    q1 = Q0 + np.array([0.4, -0.3, 0.5, 0.6, -0.7, 0.2, 0.9])
    arm.set_state(q1)
    arm.step()                              # xfrc_applied computed at q1 before the step
    data = mujoco.MjData(arm.model)
    data.qpos[:] = q1
    mujoco.mj_forward(arm.model, data)
    free = data.qfrc_smooth.copy()
    data.xfrc_applied[:] = arm.data.xfrc_applied
    mujoco.mj_forward(arm.model, data)
    expected = joint_torques(model, q1, 'panda_link8', force, torque)
    assert relative(data.qfrc_smooth - free, expected) < 1e-9
    link, f, t = arm.external_wrench
    assert link == 'panda_link8' and np.array_equal(f, force) and np.array_equal(t, torque)
    arm.set_external_wrench('panda_link8', np.zeros(3), np.zeros(3))
    assert arm.external_wrench is None
    assert not np.any(arm.data.xfrc_applied)
    assert not np.any(arm.external_joint_forces())


def test_bad_wrench_is_refused(panda):
    """An unknown link names the known ones; NaN or a wrong length is refused."""
    _, arm = panda
    with pytest.raises(InputError, match='unknown link .*panda_link8'):
        arm.set_external_wrench('tool0', [1.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    with pytest.raises(InputError, match='finite'):
        arm.set_external_wrench('panda_link7', [np.nan, 0.0, 0.0], [0.0, 0.0, 0.0])
    with pytest.raises(InputError, match='finite'):
        arm.set_external_wrench('panda_link7', [1.0, 0.0], [0.0, 0.0, 0.0])
    assert arm.external_wrench is None


@pytest.mark.ros
@pytest.mark.slow
def test_sim_arm_is_pushed_over_ros(tmp_path, rclpy_context):
    """
    A WrenchStamped on /sim_arm/external_wrench moves the arm as M^-1 J^T F predicts.

    Zero gravity, no effort: the arm is still until the wrench arrives; its first step's
    velocity change divided by the time step is compared with our forward dynamics. A bad
    link and a NaN wrench sent first are refused; a zero wrench afterwards removes the push
    (kinetic energy constant from then on).
    """
    from geometry_msgs.msg import WrenchStamped
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    model = dr.load_urdf(read_description('panda'), gravity=(0.0, 0.0, 0.0))
    log_file = tmp_path / 'sim.npz'
    output = tmp_path / 'sim_arm.log'
    args = [str(venv_executable('denoc_sim_arm')), '--ros-args', '-p', 'urdf_path:=panda',
            '-p', 'initial_positions:=[' + ','.join(repr(float(v)) for v in Q0) + ']',
            '-p', 'gravity:=[0.0,0.0,0.0]', '-p', 'real_time:=true', '-p', 'duration:=1.5',
            '-p', f'log_file:={log_file}', '-p', 'wait_for_peers:=30.0']
    node = rclpy.create_node('pusher', context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    executor.add_node(node)
    stamps = []
    node.create_subscription(
        JointState, '/joint_states',
        lambda m: stamps.append(m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec), 100)
    pub = node.create_publisher(WrenchStamped, '/sim_arm/external_wrench', 10)

    def wrench(link, force, torque=(0.0, 0.0, 0.0)):
        msg = WrenchStamped()
        msg.header.frame_id = link
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = force
        msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = torque
        pub.publish(msg)

    force, torque = (0.0, 8.0, -5.0), (0.0, 0.0, 0.5)
    with open(output, 'w') as out:
        sim = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path)
        try:
            end = time.monotonic() + 30
            while (pub.get_subscription_count() == 0 or not stamps) and time.monotonic() < end:
                executor.spin_once(timeout_sec=0.01)
            assert stamps, output.read_text()
            while stamps[-1] < 0.2 and time.monotonic() < end:      # still, at rest until then
                executor.spin_once(timeout_sec=0.01)
            wrench('no_such_link', force)
            wrench('panda_link8', (np.nan, 0.0, 0.0))
            wrench('panda_link8', force, torque)
            t_push = stamps[-1]
            while stamps[-1] < t_push + 0.3 and time.monotonic() < end:
                executor.spin_once(timeout_sec=0.01)
            wrench('', (0.0, 0.0, 0.0))
            t_zero = stamps[-1]
            assert sim.wait(timeout=30) == 0, output.read_text()
        finally:
            if sim.poll() is None:
                sim.kill()
                sim.wait()
            executor.shutdown()
            node.destroy_node()
    text = output.read_text()
    assert "unknown link 'no_such_link'" in text and 'panda_link8' in text, text
    assert 'non-finite' in text, text

    log = dict(np.load(log_file))
    t, q, qd = log['t'], log['q'], log['qd']
    moving = np.flatnonzero(np.abs(qd).max(axis=1) > 0)
    assert moving.size, 'the arm never moved'
    k = moving[0]                 # first state after the first pushed step (k - 1 -> k)
    assert np.abs(q[:k] - Q0).max() == 0.0 and log['external_link'][k] == 'panda_link8'
    dt = t[k] - t[k - 1]
    measured = (qd[k] - qd[k - 1]) / dt
    tau_ext = joint_torques(model, q[k - 1], 'panda_link8', force, torque)
    predicted = dr.forward_dynamics(model, q[k - 1], qd[k - 1], tau_ext)
    first_step = relative(measured, predicted)
    cosine = measured @ predicted / np.linalg.norm(measured) / np.linalg.norm(predicted)
    logged = relative(log['external_torques'][k],
                      joint_torques(model, q[k], 'panda_link8', force, torque))
    pushing = np.flatnonzero(log['external_link'] == 'panda_link8')
    after = np.arange(len(t)) > pushing[-1]            # the zero wrench has arrived
    energy = dr.kinetic_energy(model, q, qd)
    drift = float(np.ptp(energy[after]) / energy[after].max())
    print(f'\npushed at t = {t[k - 1]:.3f} s, for {t[pushing[-1] + 1] - t[k - 1]:.3f} s: '
          f'first-step acceleration vs M^-1 J^T F rel {first_step:.1e} (cosine {cosine:.9f}); '
          f'logged J^T F rel {logged:.1e}; kinetic energy {energy[after].max():.3f} J after '
          f'the zero wrench, variation {drift:.1e} over {after.sum()} states')
    assert t[k - 1] > 0.15
    assert np.array_equal(log['external_wrench'][k], np.concatenate([force, torque]))
    assert logged < 1e-9
    assert first_step < 1e-3
    assert np.all(log['external_link'][k:pushing[-1] + 1] == 'panda_link8')
    assert energy[k + 100] > energy[k + 10] > 0.0
    assert t[pushing[-1]] >= t_zero - 0.05 and after.sum() > 100
    assert drift < 1e-6
    assert not np.any(log['external_torques'][after])
