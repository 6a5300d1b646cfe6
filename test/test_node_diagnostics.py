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

"""The dynamics node's diagnostics: the model's load warnings are listed (count, each message)."""

from types import SimpleNamespace

from conftest import require_module

require_module('diagnostic_msgs')
from denoc_ros.processor import Statistics  # noqa: E402, I100
from denoc_ros.ros.diagnostics import dynamics_status  # noqa: E402
from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402

STATE = {'payload_links': '', 'reference_active': False, 'friction': 'off'}


def _status(model, received=5):
    stats = Statistics()
    stats.received = stats.period_received = received
    status = dynamics_status('denoc_dynamics: dynamics', model, stats, 1.0, STATE)
    return status, {kv.key: kv.value for kv in status.values}


def test_model_warnings_listed_and_warn():
    """Two load warnings: level WARN, a count of 2 and both messages, in the order given."""
    warnings = ("link 'sensor_mount_link': inertia violates the triangle inequality",
                "link 'antenna': negative principal moment -3.5e-08")
    model = SimpleNamespace(name='arm', joint_names=('j1', 'j2'), warnings=warnings)
    status, values = _status(model)
    assert status.level == DiagnosticStatus.WARN and '2 load warning' in status.message
    assert values['model_warnings'] == '2'
    assert [values['model_warning_1'], values['model_warning_2']] == list(warnings)
    for key in ('model_loaded', 'joints', 'input_rate_hz', 'compute_time_mean_ms',
                'invalid_inputs', 'joint_states_received', 'published', 'last_error',
                'friction', 'payload_links'):
        assert key in values


def test_model_without_warnings_ok():
    """A model without the attribute (or an empty tuple) reports 0 and stays OK."""
    for model in (SimpleNamespace(name='arm', joint_names=('j1',)),
                  SimpleNamespace(name='arm', joint_names=('j1',), warnings=())):
        status, values = _status(model)
        assert status.level == DiagnosticStatus.OK and values['model_warnings'] == '0'
        assert not any(k.startswith('model_warning_') for k in values)


def test_no_model_error_and_no_joint_states_warn():
    """No model: ERROR; a model but no joint states in the period: WARN."""
    status, values = _status(None)
    assert status.level == DiagnosticStatus.ERROR and values['model_warnings'] == '0'
    status, _ = _status(SimpleNamespace(name='arm', joint_names=('j1',)), received=0)
    assert status.level == DiagnosticStatus.WARN and status.message == 'no joint states'
