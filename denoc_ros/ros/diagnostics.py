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
The dynamics node's statistics and its ``/diagnostics`` status.

:class:`denoc_ros.processor.Statistics` counts inputs, outputs, rejected inputs, backward stamps
and compute times (the per-period counters are reset at each report); :func:`dynamics_status`
turns them, the model (its load warnings included) and the node's state into one
DiagnosticStatus.
"""

from diagnostic_msgs.msg import DiagnosticStatus, KeyValue


def model_warnings(model):
    """Return the load warnings of ``model`` (a tuple of str; none for a model without them)."""
    if model is None:
        return ()
    return tuple(str(w) for w in getattr(model, 'warnings', ()) or ())


def dynamics_status(name, model, stats, period, state):
    """
    Return the node's DiagnosticStatus.

    ``stats``: :class:`Statistics` of the period of ``period`` seconds; ``state``: the node's
    further values in report order (payload links, reference, friction, observer, contact
    localization), each ``key: value``. Level ERROR without a model; WARN for invalid inputs,
    backward stamps, no joint states, model load warnings or collision geometry warnings
    (unreadable meshes); else OK.
    """
    s = stats
    warnings = model_warnings(model)
    status = DiagnosticStatus(name=name, hardware_id=model.name if model else '')
    if model is None:
        status.level, status.message = DiagnosticStatus.ERROR, 'no robot model'
    elif s.period_invalid:
        status.level = DiagnosticStatus.WARN
        status.message = f'{s.period_invalid} invalid input(s): {s.last_error}'
    elif s.period_backwards:
        status.level = DiagnosticStatus.WARN
        status.message = f'{s.period_backwards} joint state stamp(s) went backwards'
    elif s.period_received == 0:
        status.level, status.message = DiagnosticStatus.WARN, 'no joint states'
    elif warnings:
        status.level = DiagnosticStatus.WARN
        status.message = f'publishing; the model has {len(warnings)} load warning(s)'
    elif state.get('contact_geometry_warnings'):
        status.level = DiagnosticStatus.WARN
        status.message = (f"publishing; {state['contact_geometry_warnings']} collision "
                          'geometry warning(s)')
    else:
        status.level, status.message = DiagnosticStatus.OK, 'publishing'
    mean = s.compute_sum / s.computed if s.computed else 0.0
    values = {
        'model_loaded': model is not None,
        'robot': model.name if model else '',
        'joints': ', '.join(model.joint_names) if model else '',
        'model_warnings': len(warnings),
    }
    values.update({f'model_warning_{k + 1}': text for k, text in enumerate(warnings)})
    values.update({
        'payload_links': state['payload_links'],
        'joint_states_received': s.received,
        'input_rate_hz': f'{s.period_received / period:.1f}',
        'published': s.published,
        'invalid_inputs': s.invalid,
        'stamps_backwards': s.backwards,
        'compute_time_mean_ms': f'{1e3 * mean:.3f}',
        'compute_time_max_ms': f'{1e3 * s.compute_max:.3f}',
    })
    values.update({k: v for k, v in state.items() if k != 'payload_links'})
    values['last_error'] = s.last_error
    status.values = [KeyValue(key=k, value=str(v)) for k, v in values.items()]
    return status
