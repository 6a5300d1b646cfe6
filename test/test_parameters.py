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
Parameters take what users type, and refuse the rest in one line (issue 20, part 2).

Every parameter of every executable, at start-up (``--ros-args -p`` and a params file, real
processes) and at run time (a SetParameters request from this process to the running node):
integers where doubles are expected, one number for a per-joint list, 0/1 for a bool, lists
mixing integers and doubles. A wrong value gives exit status 1 and exactly one line naming the
parameter at start-up, ``successful=false`` with that reason at run time. The values' effect is
checked on nodes built in this process (the same parameter callbacks the service calls).
"""

import concurrent.futures
import subprocess
import time

from conftest import interrupt, require_module, venv_executable
import numpy as np
import pytest

rclpy = require_module('rclpy')
from denoc_ros.ros import settings  # noqa: E402, I100
from denoc_ros.ros.settings import coerce, PER_JOINT, Spec  # noqa: E402
from rcl_interfaces.srv import GetParameters, SetParameters  # noqa: E402
from rclpy.parameter import Parameter, parameter_value_to_python  # noqa: E402

pytestmark = pytest.mark.ros

ROBOT = ['-p', 'urdf_path:=craig_rr']  # 2 joints: joint1, joint2; links link1, link2, tool0

# executable: (console script, node name, arguments it needs)
EXECUTABLES = {
    'dynamics_node': ('denoc_dynamics_node', 'denoc_dynamics', ROBOT),
    'ct_controller': ('denoc_ct_controller', 'ct_controller', ROBOT),
    'sim_arm': ('denoc_sim_arm', 'sim_arm', ['-p', 'urdf_path:=panda']),  # MuJoCo: not Craig's
    'joint_state_source': ('denoc_joint_state_source', 'joint_state_source', ROBOT),
    'torque_monitor': ('denoc_torque_monitor', 'torque_monitor', []),
    'contact_demo': ('denoc_contact_demo', 'contact_demo', []),
    'trajectory_gate': ('denoc_trajectory_gate', 'denoc_trajectory_gate', ROBOT),
}

# Natural values at start-up, all in one process per executable: integers for doubles, one
# number for lists, 0/1 for bools, a list mixing integers and doubles.
NATURAL = {
    'dynamics_node': [
        'observer_gain:=50', 'prediction_horizon:=0', 'friction:=1', 'drain_limit:=5.0',
        'contact_threshold:=5', 'reference_timeout:=1', 'prediction_substeps:=2.0',
        'contact_hysteresis:=0', 'observer_max_gap:=1', 'diagnostics_period:=1',
        'gravity:=[0, 0, -9.81]', 'command_joints:=joint2', 'feedforward_state:=measured',
        'base_link:=base_link', 'tip_link:=tool0', 'contact_frame:=link2',
        "robot_description:=''", 'payload_window:=30', 'contact_localization:=1',
        'contact_friction_coefficient:=1', 'contact_noise:=0', 'contact_relative_noise:=0'],
    'ct_controller': [
        'kp:=100', 'kd:=[20, 30]', 'mass_scale:=1', 'loop:=1', 'gravity:=[0, 0, -10]',
        'joints:=[joint2, joint1]', "trajectory_file:=''", "robot_description:=''",
        'effort_kp:=100', 'effort_kd:=[2, 3.5]', 'goal_tolerance:=1', 'goal_time:=2',
        'feedback_every:=5.0'],
    'sim_arm': [
        'timestep:=0.002', 'publish_rate:=100', 'initial_positions:=0', 'lockstep:=0',
        'lockstep_timeout:=1', 'real_time:=1', 'publish_clock:=false', 'duration:=0',
        'wait_for_peers:=0', 'wait_for_subscribers:=1.0', 'keep_joint_dynamics:=0',
        'gravity:=[0, 0, -9.81]',
        'joints:=[' + ', '.join(f'panda_joint{k}' for k in range(7, 0, -1)) + ']',
        "log_file:=''", "robot_description:=''", 'friction:=1', 'effort_noise:=0',
        'noise_seed:=3.0', "payload_link:=''", 'payload_mass:=0', 'payload_com:=[0, 0, 0.1]',
        'payload_inertia:=[0.002, 0, 0, 0.002, 0, 0.001]'],
    'joint_state_source': ['rate:=20', 'amplitude:=1', 'period:=4', "robot_description:=''"],
    'torque_monitor': ['interval:=1', 'dynamics_node:=/denoc_dynamics'],
    'contact_demo': [
        'force:=[0, 0, 15]', 'torque:=[0, 0.5, 0]', 'period:=4', 'push_duration:=1',
        'link:=link2', 'dynamics_node:=/denoc_dynamics', 'sim_arm:=/sim_arm'],
    'trajectory_gate': [
        'base_link:=base_link', 'tip_link:=tool0', 'gravity:=[0, 0, -10]',
        'controller_action:=/arm/follow_joint_trajectory', 'dynamics_node:=/denoc_dynamics',
        'server_timeout:=1', 'timing:=keep', 'effort_scaling:=1', 'velocity_scaling:=0.9',
        'friction:=1', 'stop_on_contact:=0', "robot_description:=''"],
}

# One wrong value for every parameter of every executable (and the examples).
WRONG = {
    'dynamics_node': [
        'robot_description:=5', 'urdf_path:=[a, b]', 'base_link:=1', 'tip_link:=true',
        'gravity:=[0, -9.81]', 'command_joints:=5', 'feedforward_state:=sideways',
        'reference_timeout:=-1', 'prediction_horizon:=fast', 'prediction_substeps:=1.5',
        'friction:=2', 'observer_gain:=fast', 'contact_threshold:=0', 'contact_hysteresis:=2.0',
        'contact_frame:=3', 'observer_max_gap:=0', 'drain_limit:=-3', 'diagnostics_period:=0',
        'payload_window:=0', 'contact_localization:=2', 'contact_friction_coefficient:=-0.1',
        'contact_noise:=-1', 'contact_relative_noise:=2'],
    'ct_controller': [
        'robot_description:=1', 'urdf_path:=2', 'gravity:=9.81', 'kp:=-1', 'kd:=fast',
        'mass_scale:=0', 'joints:=7', 'trajectory_file:=[1, 2]', 'loop:=maybe',
        'effort_kp:=-1', 'effort_kd:=fast', 'goal_tolerance:=0', 'goal_time:=-1',
        'feedback_every:=0'],
    'sim_arm': [
        'robot_description:=1', 'urdf_path:=true', 'gravity:=[a, b, c]', 'timestep:=0',
        'publish_rate:=-5', 'initial_positions:=zero', 'joints:=1', 'lockstep:=3',
        'lockstep_timeout:=-1', 'real_time:=fast', 'publish_clock:=2', 'duration:=-1',
        'log_file:=5', 'keep_joint_dynamics:=0.5', 'wait_for_peers:=soon',
        'wait_for_subscribers:=0', 'friction:=maybe', 'effort_noise:=-0.1', 'noise_seed:=-1',
        'payload_link:=5', 'payload_mass:=-1', 'payload_com:=[0, 0]',
        'payload_inertia:=heavy'],
    'joint_state_source': [
        'robot_description:=1', 'urdf_path:=3', 'rate:=0', 'amplitude:=-1', 'period:=fast'],
    'torque_monitor': ['dynamics_node:=4', 'interval:=0'],
    'contact_demo': [
        'link:=7', 'force:=15', 'torque:=[0, 0]', 'period:=0', 'push_duration:=-1',
        'dynamics_node:=1', 'sim_arm:=false'],
    'trajectory_gate': [
        'robot_description:=1', 'urdf_path:=2', 'base_link:=1', 'tip_link:=true',
        'gravity:=9.81', 'controller_action:=5', 'dynamics_node:=false', 'server_timeout:=0',
        'timing:=fast', 'effort_scaling:=0', 'velocity_scaling:=-1', 'friction:=2',
        'stop_on_contact:=maybe'],
}

# At run time, on the process started with the natural values: (name, value, accepted).
RUNTIME = {
    'dynamics_node': [
        ('observer_gain', 50, True), ('observer_gain', 20.5, True),
        ('contact_threshold', 5.0, True), ('contact_threshold', [5, 6], True),
        ('friction', 1, True), ('friction', False, True), ('drain_limit', 5.0, True),
        ('prediction_horizon', 0, True), ('gravity', [0, 0, -10], True),
        ('feedforward_state', 'desired', True), ('command_joints', 'joint1', True),
        ('observer_gain', 'fast', False), ('drain_limit', -3, False),
        ('contact_hysteresis', 2.0, False), ('friction', 2, False),
        ('contact_threshold', [1, 2, 3], False), ('prediction_substeps', 0.5, False),
        ('diagnostics_period', 2.0, False), ('contact_localization', 0, True),
        ('contact_friction_coefficient', 0, True), ('contact_localization', 'yes', False),
        ('contact_friction_coefficient', 'high', False), ('contact_noise', [0.1, 0.2], True),
        ('contact_noise', [0.1, 0.2, 0.3], False), ('contact_relative_noise', 0, True)],
    'ct_controller': [
        ('loop', 0, True), ('loop', True, True), ('trajectory_file', '', True),
        ('loop', 2, False), ('trajectory_file', 5, False), ('kp', 100, False)],
    'sim_arm': [('timestep', 0.001, False)],
    'joint_state_source': [('rate', 50, False)],
    'torque_monitor': [('interval', 2, False)],
    'contact_demo': [('period', 3, False)],
    'trajectory_gate': [
        ('timing', 'optimal', True), ('effort_scaling', 1, True), ('friction', False, True),
        ('stop_on_contact', True, True), ('timing', 'fast', False),
        ('velocity_scaling', 0, False), ('server_timeout', 5.0, False)],
}


def _arguments(base, rule):
    """Return ``base`` (``-p`` pairs) without the parameter ``rule`` sets, then ``rule``."""
    name = rule.split(':=')[0]
    pairs = [base[k:k + 2] for k in range(0, len(base), 2)]
    return [a for pair in pairs if not pair[1].startswith(name + ':=') for a in pair] + [
        '-p', rule]


def _run_wrong(script, args):
    exe = venv_executable(script)
    run = subprocess.run([str(exe), '--ros-args', *args], capture_output=True, text=True,
                         timeout=300)
    return run.returncode, run.stdout, run.stderr


@pytest.fixture(scope='module')
def wrong_runs(request):
    """Start each executable with each selected wrong value, a few processes at a time."""
    selected = [item.callspec.params for item in request.session.items
                if getattr(item, 'originalname', '') == 'test_wrong_startup_value_one_line_exit_1']
    cases = {(p['key'], p['rule']): (EXECUTABLES[p['key']][0],
                                     _arguments(EXECUTABLES[p['key']][2], p['rule']))
             for p in selected}
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        futures = {case: pool.submit(_run_wrong, *args) for case, args in cases.items()}
        return {case: future.result() for case, future in futures.items()}


@pytest.mark.parametrize('key, rule', [(k, r) for k, rules in WRONG.items() for r in rules],
                         ids=lambda x: x)
def test_wrong_startup_value_one_line_exit_1(wrong_runs, key, rule):
    """Exit status 1 and one line naming the parameter, no traceback."""
    status, out, err = wrong_runs[(key, rule)]
    text = (out + err).strip()
    name = rule.split(':=')[0]
    assert status == 1, text
    assert 'Traceback' not in text
    assert len(text.splitlines()) == 1, text
    assert name in text, text


def test_every_parameter_has_a_wrong_value():
    """The table above covers every declared parameter of every executable."""
    from denoc_ros.ros import (contact_demo, ct_controller, joint_state_source, sim_arm,
                               torque_monitor, trajectory_gate)
    tables = {'dynamics_node': settings.DYNAMICS_PARAMETERS,
              'ct_controller': ct_controller.PARAMETERS, 'sim_arm': sim_arm.PARAMETERS,
              'joint_state_source': joint_state_source.PARAMETERS,
              'torque_monitor': torque_monitor.PARAMETERS,
              'contact_demo': contact_demo.PARAMETERS,
              'trajectory_gate': trajectory_gate.PARAMETERS}
    for key, table in tables.items():
        names = {spec.name for spec in table}
        assert {r.split(':=')[0] for r in WRONG[key]} == names, key
        assert {r.split(':=')[0] for r in NATURAL[key]} == names - {'urdf_path'}, key


class Client:
    """Parameter services of a running node, called from a node of this process."""

    def __init__(self, context, node_name):
        from rclpy.executors import SingleThreadedExecutor
        self.node = rclpy.create_node('parameter_probe', context=context)
        self.executor = SingleThreadedExecutor(context=context)
        self.executor.add_node(self.node)
        self.set = self.node.create_client(SetParameters, f'/{node_name}/set_parameters')
        self.get = self.node.create_client(GetParameters, f'/{node_name}/get_parameters')

    def call(self, client, request, timeout=30.0):
        """Return the response of one service call."""
        future = client.call_async(request)
        self.executor.spin_until_future_complete(future, timeout_sec=timeout)
        assert future.done(), f'no answer from {client.srv_name}'
        return future.result()

    def wait(self, process, timeout=120.0):
        """Wait until the node's parameter services exist (or the process ended)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end and process.poll() is None:
            if self.set.wait_for_service(timeout_sec=0.2) and self.get.service_is_ready():
                return True
            self.executor.spin_once(timeout_sec=0.05)
        return False

    def close(self):
        """Destroy the probe node."""
        self.executor.shutdown()
        self.node.destroy_node()


def _number(value):
    return [float(v) for v in value] if isinstance(value, list) else value


@pytest.mark.parametrize('key', list(EXECUTABLES))
def test_natural_values_start_and_run_time_changes(key, rclpy_context):
    """Natural values: the node starts and runs until SIGINT (exit 0); run-time sets answered."""
    script, node_name, base = EXECUTABLES[key]
    args = list(base)
    for rule in NATURAL[key]:
        args += ['-p', rule]
    process = subprocess.Popen([str(venv_executable(script)), '--ros-args', *args],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    client = Client(rclpy_context, node_name)
    try:
        assert client.wait(process), f'{script} did not come up:\n{interrupt(process)[1]}'
        if base:  # the value given at start-up is the node's
            request = GetParameters.Request(names=['urdf_path'])
            given = base[1].split(':=')[1]
            assert client.call(client.get, request).values[0].string_value == given
        for name, value, accepted in RUNTIME[key]:
            request = SetParameters.Request(
                parameters=[Parameter(name, value=value).to_parameter_msg()])
            result = client.call(client.set, request).results[0]
            assert result.successful == accepted, (name, value, result.reason)
            if not accepted:
                assert name in result.reason and '\n' not in result.reason, result.reason
            else:
                got = client.call(client.get, GetParameters.Request(names=[name])).values[0]
                stored = parameter_value_to_python(got)
                if not isinstance(stored, (str, int, float, bool)):
                    stored = list(stored)
                assert _number(stored) == _number(value), name
        assert process.poll() is None, 'the node ended on its own'
    finally:
        client.close()
        status, out = interrupt(process)
    assert status == 0, out
    assert 'Traceback' not in out, out


def test_params_file_with_natural_values(tmp_path):
    """A YAML params file with integers, one value for a list and a mixed list starts the node."""
    params = tmp_path / 'params.yaml'
    params.write_text('/**:\n  ros__parameters:\n    urdf_path: craig_rr\n'
                      '    observer_gain: 50\n    contact_threshold: 5\n    friction: 1\n'
                      '    gravity: [0, 0, -9.81]\n    drain_limit: 5.0\n'
                      '    prediction_horizon: 0\n')
    process = subprocess.Popen(
        [str(venv_executable('denoc_dynamics_node')), '--ros-args', '--params-file',
         str(params)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    lines = []
    while time.monotonic() < deadline and process.poll() is None:
        line = process.stdout.readline()
        lines.append(line)
        if "model 'craig_rr'" in line:
            break
    assert process.poll() is None, ''.join(lines)
    status, out = interrupt(process)
    assert status == 0, ''.join(lines) + out
    assert 'Traceback' not in out


def test_unparsable_command_line_one_line():
    """A value rcl itself cannot parse (``-p observer_gain:=``) is one line too."""
    status, out, err = _run_wrong('denoc_dynamics_node', ROBOT + ['-p', 'observer_gain:='])
    text = (out + err).strip()
    assert status == 1 and len(text.splitlines()) == 1 and 'observer_gain' in text, text


# -- the coercion itself, and its effect on nodes built in this process ---------------------------
NUMBER = Spec('x', 'double', 1.0, 'a number', 0.0, 10.0)
COUNT = Spec('n', 'integer', 1, 'a count', 1, 5)
FLAG = Spec('f', 'bool', False, 'a flag')
PER = Spec('t', 'doubles', [5.0], 'thresholds', 0.0, open_low=True, length=PER_JOINT)
THREE = Spec('g', 'doubles', [0.0, 0.0, -9.81], 'gravity', length=3)
NAMES = Spec('j', 'strings', [], 'joints')
CHOICE = Spec('c', 'string', 'a', 'choice', choices=('a', 'b'))


@pytest.mark.parametrize('spec, value, expected', [
    (NUMBER, 5, 5.0), (NUMBER, 2.5, 2.5), (NUMBER, 0, 0.0), (COUNT, 3, 3), (COUNT, 3.0, 3),
    (FLAG, True, True), (FLAG, 0, False), (FLAG, 1, True), (PER, 5, [5.0]),
    (PER, [1, 2], [1.0, 2.0]), (PER, 0.5, [0.5]), (THREE, [0, 0, -10], [0.0, 0.0, -10.0]),
    (NAMES, 'joint1', ['joint1']), (NAMES, ['a', 'b'], ['a', 'b']), (NAMES, None, []),
    (CHOICE, 'b', 'b'), (NUMBER, None, 1.0)])
def test_coerce_natural(spec, value, expected):
    """What users type becomes the parameter's kind."""
    got = coerce(spec, value)
    assert got == expected and type(got) is type(expected)
    if isinstance(got, list):
        assert all(type(a) is type(b) for a, b in zip(got, expected))


@pytest.mark.parametrize('spec, value', [
    (NUMBER, 'fast'), (NUMBER, True), (NUMBER, -1), (NUMBER, 11.0), (NUMBER, float('nan')),
    (COUNT, 1.5), (COUNT, 0), (COUNT, 'two'), (COUNT, True), (FLAG, 2), (FLAG, 'yes'),
    (FLAG, 0.5), (PER, 0), (PER, [1, -1]), (PER, 'x'), (PER, [True]), (THREE, [0, 0]),
    (THREE, 9.81), (NAMES, 5), (NAMES, [1, 2]), (CHOICE, 'c'), (CHOICE, 1)])
def test_coerce_wrong_one_line(spec, value):
    """Anything else: InputError, one line naming the parameter, the type and an example."""
    with pytest.raises(settings.InputError) as err:
        coerce(spec, value)
    text = str(err.value)
    assert text.startswith(f'parameter {spec.name}: expected ') and '(e.g. ' in text
    assert '\n' not in text


def test_normalize_arguments_mixed_lists(tmp_path):
    """``[0, 0, -9.81]`` on the command line and in a params file becomes all doubles."""
    path = tmp_path / 'p.yaml'
    path.write_text('/**:\n  ros__parameters:\n    gravity: [0, 0, -9.81]\n    kp: [1, 2]\n')
    args, copies = settings.normalize_arguments(
        ['exe', '--ros-args', '-p', 'gravity:=[0, 0, -9.81]', '-p', 'kp:=[1, 2]',
         '--params-file', str(path)])
    assert args[3] == 'gravity:=[0.0, 0.0, -9.81]' and args[5] == 'kp:=[1, 2]'
    assert args[7] == copies[0] != str(path)
    import yaml
    data = yaml.safe_load(open(copies[0]))['/**']['ros__parameters']
    assert data == {'gravity': [0.0, 0.0, -9.81], 'kp': [1, 2]}
    assert [type(v) for v in data['gravity']] == [float] * 3
    untouched, none = settings.normalize_arguments(['exe', '-p', 'gravity:=[0, 0.5]'])
    assert untouched == ['exe', '-p', 'gravity:=[0, 0.5]'] and none == []


def test_dynamics_node_takes_natural_values(rclpy_context):
    """Integers, one threshold and friction:=1 reach the node's settings and observer."""
    from denoc_ros.ros.dynamics_node import DynamicsNode
    node = DynamicsNode(context=rclpy_context, parameter_overrides=[
        Parameter('urdf_path', value='craig_rr'), Parameter('observer_gain', value=50),
        Parameter('contact_threshold', value=4), Parameter('friction', value=1),
        Parameter('drain_limit', value=5.0), Parameter('prediction_horizon', value=0)])
    try:
        s = node.settings
        assert (s.observer_gain, s.drain_limit, s.prediction_horizon) == (50.0, 5, 0.0)
        assert type(s.observer_gain) is float and type(s.drain_limit) is int
        assert node.processor.friction is not None and np.all(node.processor.observer.gain == 50.0)
        assert node.processor.detector.thresholds.tolist() == [4.0, 4.0]
        results = node.set_parameters([Parameter('observer_gain', value=20),
                                       Parameter('contact_threshold', value=[3, 6])])
        assert all(r.successful for r in results)
        assert np.all(node.processor.observer.gain == 20.0)
        assert node.processor.detector.thresholds.tolist() == [3.0, 6.0]
        assert node.set_parameters([Parameter('friction', value=0)])[0].successful
        assert node.processor.friction is None
        assert node.set_parameters([Parameter('gravity', value=[0, 0, -1])])[0].successful
        assert node.model.gravity.tolist() == [0.0, 0.0, -1.0]
        result = node.set_parameters([Parameter('observer_gain', value='fast')])[0]
        assert not result.successful and 'observer_gain' in result.reason
        assert np.all(node.processor.observer.gain == 20.0)
    finally:
        node.destroy_node()


def test_ct_controller_takes_natural_values(rclpy_context):
    """One gain for every joint, integer gains and loop:=1 reach the controller."""
    from denoc_ros.ros.ct_controller import ComputedTorqueController
    node = ComputedTorqueController(context=rclpy_context, parameter_overrides=[
        Parameter('urdf_path', value='craig_rr'), Parameter('kp', value=100),
        Parameter('kd', value=[20, 30]), Parameter('mass_scale', value=2),
        Parameter('loop', value=1)])
    try:
        assert node.kp.tolist() == [100.0, 100.0] and node.kd.tolist() == [20.0, 30.0]
        assert node._loop is True
        assert node.set_parameters([Parameter('loop', value=0)])[0].successful
        assert node._loop is False
    finally:
        node.destroy_node()
