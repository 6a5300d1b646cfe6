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
Smoke test of the soak benchmark: a short run at 200 Hz passes its verdict and prints its counts.

Runs ``benchmarks/soak.py --duration 8 --rate 200`` as a subprocess, as a user runs it. No
wall-clock time is asserted; what is checked is exit status 0 (the node stayed alive, no output
had a non-finite value, no bad message was answered, ``invalid_inputs`` matches the bad messages
the node received, the node's memory stayed within the bound) and that the report has every
count it promises.
"""

import os
import pathlib
import re
import subprocess
import sys

from conftest import venv_executable
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
SOAK = REPO / 'benchmarks' / 'soak.py'


@pytest.mark.ros
@pytest.mark.slow
def test_soak_short_run_passes_and_prints_its_counts():
    """benchmarks/soak.py --duration 8 --rate 200 exits 0 with every count in its report."""
    venv_executable('denoc_dynamics_node')  # the scripts start it: the tree's copy?
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    proc = subprocess.run([sys.executable, str(SOAK), '--duration', '8', '--rate', '200'],
                          cwd=str(REPO), env=env, capture_output=True, text=True, timeout=90)
    out = proc.stdout
    assert proc.returncode == 0, (f'soak.py exited with {proc.returncode}\nstdout:\n'
                                  f'{out[-4000:]}\nstderr:\n{proc.stderr[-3000:]}')
    assert 'JointState at 200 Hz for 8 s, bad fraction 0.1' in out, out

    sent = re.search(r'messages sent: (\d+) \(good (\d+), bad (\d+)\); achieved send rate '
                     r'([\d.]+) Hz', out)
    assert sent, out
    total, good, bad = (int(sent.group(i)) for i in (1, 2, 3))
    assert total == good + bad and good > 0 and bad > 0, out
    for kind in ('missing_joint', 'duplicate_name', 'nan_position', 'inf_position',
                 'nan_velocity', 'inf_velocity', 'length_mismatch', 'empty_positions',
                 'huge_velocity', 'backwards_stamp'):
        assert re.search(rf'bad: {kind} +\d+ +outputs seen +\d+', out), f'{kind} missing:\n{out}'
    assert re.search(r'outputs received: feedforward_torques [1-9]\d*', out), out
    assert 'outputs with non-finite values: 0' in out, out
    counters = re.search(r'joint_states_received (\d+), published (\d+), invalid_inputs (\d+)',
                         out)
    assert counters, out
    received, published, invalid = (int(counters.group(i)) for i in (1, 2, 3))
    assert received == published + invalid and invalid > 0, out
    assert 'compute time over the soak: mean' in out, out
    assert 'node process: alive at the end' in out, out
    assert re.search(r'node RSS \[MB\]: start [\d.]+ .*peak [\d.]+, end [\d.]+; growth', out), out
    assert out.rstrip().endswith('verdict: PASS'), out
