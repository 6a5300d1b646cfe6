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
Every numeric parameter at each of its documented bounds, and just past them (issue 33).

The bounds are read from the documentation, not from the tables: the README's parameter table
for the dynamics node (``double [0, 1e4]``, ``double (0, 3600]``, ``int [1, 1000]``,
``each > 0``), and for every executable the range its parameter descriptor shows users
(``ros2 param describe``). A closed bound is accepted, an open one refused; a double one
step past (``nextafter``) and an integer one past are refused, by :func:`coerce` (start-up and
run time share it).
"""

import math
from pathlib import Path
import re

from conftest import require_module
import pytest

require_module('rclpy')
from denoc_ros.errors import InputError  # noqa: E402, I100
from denoc_ros.ros import (contact_demo, ct_controller, joint_state_source,  # noqa: E402
                           settings, sim_arm, torque_monitor)
from denoc_ros.ros.settings import coerce, descriptor  # noqa: E402

README = Path(__file__).resolve().parents[1] / 'README.md'
TABLES = {'dynamics_node': settings.DYNAMICS_PARAMETERS,
          'ct_controller': ct_controller.PARAMETERS, 'sim_arm': sim_arm.PARAMETERS,
          'joint_state_source': joint_state_source.PARAMETERS,
          'torque_monitor': torque_monitor.PARAMETERS, 'contact_demo': contact_demo.PARAMETERS}
NUMERIC = ('double', 'integer', 'doubles')
_NUMBER = r'(-?[0-9.]+(?:e[-+]?[0-9]+)?)'
_RANGE = re.compile(rf'([\[(]){_NUMBER}, {_NUMBER}([\])])|([<>]=?) {_NUMBER}')


def documented_range(text):
    """Return (low, high, open_low, open_high) of a range in ``text``; None where unbounded."""
    m = _RANGE.search(text.split('(e.g.')[0])
    if m is None:
        return None
    if m.group(1):
        return (float(m.group(2)), float(m.group(3)), m.group(1) == '(', m.group(4) == ')')
    op, x = m.group(5), float(m.group(6))
    if op.startswith('>'):
        return (x, None, op == '>', False)
    return (None, x, False, op == '<')


def readme_ranges():
    """Return {parameter: range} from the README's dynamics-node parameter table."""
    out = {}
    for line in README.read_text().splitlines():
        m = re.match(r'\| `(\w+)` \| (double|int|double\[\])([^|]*)\|', line)
        if m:
            text = m.group(3).replace('each > 0', '> 0')
            out[m.group(1)] = documented_range(text)
    return out


def value(spec, x):
    """Return ``x`` as the kind ``spec`` takes (a one-element list for per-joint lists)."""
    if spec.kind == 'integer':
        return int(x)
    if spec.kind == 'doubles':
        return [float(x)] * (spec.length if isinstance(spec.length, int) else 1)
    return float(x)


def cases():
    """Yield (executable, spec, documented range) of every numeric parameter with a range."""
    readme = readme_ranges()
    for key, table in TABLES.items():
        for spec in table:
            if spec.kind not in NUMERIC:
                continue
            shown = documented_range(descriptor(spec).description)
            if key == 'dynamics_node':
                assert readme.get(spec.name) == shown, (spec.name, readme.get(spec.name), shown)
            if shown is not None:
                yield key, spec, shown


CASES = list(cases())


def test_the_readme_documents_every_dynamics_node_range():
    """The README's table covers the numeric parameters (the check runs in cases())."""
    names = {spec.name for key, spec, _ in CASES if key == 'dynamics_node'}
    assert {'observer_gain', 'contact_hysteresis', 'prediction_horizon', 'payload_window',
            'contact_threshold', 'drain_limit', 'diagnostics_period'} <= names
    assert len(CASES) >= 20


@pytest.mark.parametrize('key, spec, bounds', CASES,
                         ids=[f'{key}.{spec.name}' for key, spec, _ in CASES])
def test_each_bound_is_accepted_or_refused_as_documented(key, spec, bounds):
    low, high, open_low, open_high = bounds
    for bound, is_open, outward in ((low, open_low, -math.inf), (high, open_high, math.inf)):
        if bound is None:
            continue
        at = value(spec, bound)
        if spec.kind == 'integer':
            past = value(spec, bound + (1 if outward > 0 else -1))
        else:
            past = value(spec, math.nextafter(bound, outward))
        if is_open:
            with pytest.raises(InputError, match=spec.name):
                coerce(spec, at)
        else:
            assert coerce(spec, at) == at, (spec.name, at)
        with pytest.raises(InputError, match=spec.name):
            coerce(spec, past)
        # One step inside an open bound is accepted.
        if is_open and spec.kind != 'integer':
            inside = value(spec, math.nextafter(bound, -outward))
            assert coerce(spec, inside) == inside
