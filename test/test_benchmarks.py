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
Smoke tests of the benchmarks: they run to the end and print their tables.

Never asserts a time (DESIGN.md: speed is measured by benchmarks, tests never assert wall-clock
times); what is checked is that each command exits 0 and prints every table it promises. Both
run as subprocesses, as a user runs them.
"""

import os
import pathlib
import subprocess
import sys

from conftest import example_robot, require_oracle, venv_executable
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
BENCHMARKS = REPO / 'benchmarks'


def run(args, timeout):
    """Run a benchmark script with this interpreter; return the finished process."""
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    proc = subprocess.run([sys.executable] + args, cwd=str(REPO), env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert proc.returncode == 0, (f'{args[0]} exited with {proc.returncode}\nstdout:\n'
                                  f'{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}')
    return proc.stdout


@pytest.mark.slow
def test_run_quick_prints_every_table(tmp_path):
    """benchmarks/run.py --quick: every section's table, and the markdown copy."""
    require_oracle('pinocchio')
    require_oracle('roboticstoolbox')
    markdown = tmp_path / 'bench.md'
    out = run([str(BENCHMARKS / 'run.py'), '--quick', '--output', str(markdown)], timeout=180)
    titles = ['ur5e (bundled urdf/ur5e.urdf) vs Pinocchio',
              'panda (bundled urdf/panda.urdf) vs Pinocchio',
              'panda (example-robot-data, chain to panda_link8) vs Pinocchio',
              'Puma560 vs Robotics Toolbox', 'Stanford vs Robotics Toolbox',
              'Batch: 200 random states, panda', 'Batch: 200 random states, Puma560',
              'solo12 (example-robot-data, free flyer) vs Pinocchio',
              'Batch: 200 random states, solo12 (example-robot-data, free flyer)',
              'Start-up: fresh subprocess']
    for title in titles:
        assert title in out, f'missing table {title!r} in:\n{out}'
    for function in ('inverse dynamics', 'mass matrix', 'Coriolis matrix', 'gravity',
                     'forward dynamics', 'Jacobian', 'Cartesian dynamics'):
        assert function in out
    assert 'ours/theirs' in out and 'machine:' in out
    text = markdown.read_text()
    assert all(f'### {title}' in text for title in titles[:5] + titles[7:9])
    assert '| function |' in text


@pytest.mark.ros
@pytest.mark.slow
def test_node_latency_short_run_prints_its_report():
    """benchmarks/node_latency.py --duration 2 --rate 200 drives node and relay to the end."""
    venv_executable('denoc_dynamics_node')  # the scripts start it: the tree's copy?
    out = run([str(BENCHMARKS / 'node_latency.py'), '--duration', '2', '--rate', '200'],
              timeout=150)
    assert 'Node latency: 7-joint JointState at 200 Hz for 2 s per target' in out, out
    for row in ('messages sent', 'achieved send rate [Hz]', 'received', 'lost',
                'round trip p50 [ms]', 'round trip p99 [ms]', 'round trip max [ms]',
                'targets (reported, not asserted):'):
        assert row in out, f'missing {row!r} in:\n{out}'
    assert 'relay' in out and 'dynamics node' in out and 'node - relay' in out


def table_row(out, label):
    """Return the cells after ``label`` of the report's row ``label`` (relay, node, difference)."""
    for line in out.splitlines():
        cells = line.rsplit(None, 3)
        if len(cells) == 4 and cells[0] == label:
            return cells[1:]
    raise AssertionError(f'no row {label!r} in:\n{out}')


@pytest.mark.ros
@pytest.mark.slow
def test_node_latency_rounds_with_every_output_subscribed():
    """
    --rounds 2 --outputs all --with-effort: nothing lost, every output used, CPU measured.

    The relay in its thread, republishing on two more topics (--relay-fanout 2), counted too.
    """
    venv_executable('denoc_dynamics_node')  # the scripts start it: the tree's copy?
    out = run([str(BENCHMARKS / 'node_latency.py'), '--duration', '2', '--rate', '200',
               '--rounds', '2', '--outputs', 'all', '--with-effort', '--drain-limit', '0',
               '--relay-thread', '--relay-fanout', '2'],
              timeout=150)
    assert ('Node latency: 7-joint JointState at 200 Hz for 2 s per target in 2 rounds '
            '(urdf_path:=panda, drain_limit:=0, every output subscribed, with efforts)'
            ) in out, out
    for target in ('relay', 'dynamics node'):
        for k in (1, 2):
            assert f'{target}, round {k}/2: sent 200, received ' in out, out
    relay_sent, node_sent, _ = table_row(out, 'messages sent')
    assert relay_sent == node_sent == '400', out
    relay_lost, node_lost, _ = table_row(out, 'lost')
    assert relay_lost == node_lost == '0', out
    assert 'extra outputs of the dynamics node, messages delivered' in out, out
    delivered = dict(line.split() for line in out.splitlines()
                     if line.startswith('  /denoc_dynamics/'))
    assert sorted(delivered) == ['/denoc_dynamics/' + t for t in (
        'contact', 'coriolis_torques', 'dynamics_state', 'effort_command', 'external_torques',
        'external_wrench', 'gravity_torques', 'inertia_torques', 'prediction')], out
    assert all(int(count) > 0 for count in delivered.values()), out
    assert 'extra outputs of the relay, messages delivered during its rounds (of 400 sent)' \
        in out, out
    fanned = dict(line.split() for line in out.splitlines() if line.startswith('  /relay/'))
    assert sorted(fanned) == ['/relay/joint_states_echo_1', '/relay/joint_states_echo_2'], out
    assert all(int(count) > 0 for count in fanned.values()), out
    relay_cpu, node_cpu, _ = table_row(out, 'CPU time per message [ms]')
    assert 0.0 < float(relay_cpu) and 0.0 < float(node_cpu), out


def test_dh_to_urdf_puma_matches_the_toolbox():
    """The converter's Puma560 has the toolbox's M, gravity load and rne (1e-9)."""
    rtb = require_oracle('roboticstoolbox')
    import denoc_ros as dr
    import numpy as np
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from dh_to_urdf import dh_to_urdf, make_physical, rigid_body_only
    finally:
        sys.path.remove(str(BENCHMARKS))
    for name in ('Puma560', 'Stanford'):
        robot = rigid_body_only(getattr(rtb.models.DH, name)())
        make_physical(robot)
        model = dr.load_urdf(dh_to_urdf(robot))
        rng = np.random.default_rng(5)
        q = rng.uniform(robot.qlim[0], robot.qlim[1])
        qd, qdd = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6)
        for ours, theirs in ((dr.mass_matrix(model, q), robot.inertia(q)),
                             (dr.gravity_torques(model, q), robot.gravload(q)),
                             (dr.inverse_dynamics(model, q, qd, qdd), robot.rne(q, qd, qdd))):
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9 * np.max(np.abs(theirs)))


@pytest.mark.slow
def test_contact_cost_short_run_prints_every_case():
    """benchmarks/contact_cost.py --messages 20: every case's row, every contact state located."""
    example_robot('panda_description/urdf/panda.urdf')   # skips without example-robot-data
    out = run([str(BENCHMARKS / 'contact_cost.py'), '--messages', '20'], timeout=300)
    assert 'collision geometry: ' in out and 'CPU: ' in out, out
    for case in ('off', 'off, pushed', 'on, no contact', 'on, in contact', 'on, share 0.5',
                 'on, full search'):
        assert any(line.startswith(f'{case}  ') or line.startswith(f'{case} ')
                   for line in out.splitlines()), f'missing {case!r} in:\n{out}'
    located = [line for line in out.splitlines() if line.startswith('on, in contact')][0]
    counts = located.split('  ')[-1].split(', ')[0]   # 'located (full searches)'
    calls, full = (int(x.strip('()')) for x in counts.split())
    # every timed state located; a full search every 25th (0 or 1 of these 20)
    assert ('located panda_link' in located or 'ambiguous panda_link' in located) and \
        calls == 20 and full <= 2, out
