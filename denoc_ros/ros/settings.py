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
Node parameters: one table per node, declared, coerced and validated in one place.

Every parameter of every executable is a :class:`Spec` row (name, kind, default, range,
example). :func:`declare` declares a table on a node with ``dynamic_typing`` (so rclpy itself
never refuses a value for its type, at start-up or at run time) and returns the values coerced
to their kinds by :func:`coerce`; :func:`changes` does the same for a SetParameters request.
What users type is accepted:

* ``double``: an integer or a double (``observer_gain:=50``);
* ``integer``: an integer, or a double with an integral value (``2.0``);
* ``bool``: true/false, or 0/1 (as C and YAML 1.1 users write them);
* a list of doubles: a list of integers or doubles; a per-joint list also takes one number,
  meaning the same value for every joint (``contact_threshold:=5.0``);
* a list of strings: also one string.

Anything else raises :class:`denoc_ros.errors.InputError`, one line naming the parameter, the
expected type and an example value: the executables turn it into exit status 1 at start-up,
the parameter callbacks into ``successful=false`` with that reason at run time.

Also here: :class:`DynamicsSettings`, the dynamics node's validated settings.
"""

import array
import math
import os
import tempfile
from typing import NamedTuple, Optional, Tuple

from rcl_interfaces.msg import ParameterDescriptor
from rclpy.parameter import Parameter
import yaml

from ..errors import InputError
from ..feedforward import EVALUATE_AT
from ..processor import ProcessorSettings

PER_JOINT = 'per joint'   # the length of a per-joint list: one value or one per joint


class Spec(NamedTuple):
    """One parameter: name, kind, default, description and what values are valid."""

    name: str
    kind: str                      # 'double', 'integer', 'bool', 'string', 'doubles', 'strings'
    default: object                # None: not set (lists: empty)
    description: str
    low: Optional[float] = None    # numbers and list elements: the smallest valid value
    high: Optional[float] = None   # ... the largest
    open_low: bool = False         # low itself is invalid (a positive value, say)
    open_high: bool = False
    length: object = None          # lists: a fixed length, PER_JOINT, or None (any)
    choices: Tuple[str, ...] = ()  # strings: the valid values ('' none)
    example: object = None         # for messages; default: the default
    read_only: bool = False


KIND_TEXT = {'double': 'a double', 'integer': 'an integer',
             'bool': 'a bool (true or false; 1 or 0)', 'string': 'a string',
             'doubles': 'a list of doubles', 'strings': 'a list of strings'}
_NUMBER = (int, float)


def _is_number(value):
    return isinstance(value, _NUMBER) and not isinstance(value, bool)


def _range_text(spec):
    if spec.low is None and spec.high is None:
        return ''
    # an integer's bounds exactly (2147483647, not 2.14748e+09); a double's in short form
    low, high = ((spec.low, spec.high) if spec.kind == 'integer' else
                 tuple(None if b is None else f'{b:g}' for b in (spec.low, spec.high)))
    if spec.high is None:
        return f' {">" if spec.open_low else ">="} {low}'
    if spec.low is None:
        return f' {"<" if spec.open_high else "<="} {high}'
    return (f' in {"(" if spec.open_low else "["}{low}, {high}'
            f'{")" if spec.open_high else "]"}')


def expected_text(spec):
    """Return what ``spec`` expects, e.g. ``a double >= 0 (e.g. 50.0)``: for messages, README."""
    kind = KIND_TEXT[spec.kind]
    if spec.kind == 'doubles':
        if spec.length == PER_JOINT:
            kind = 'one double or one per joint'
        elif spec.length is not None:
            kind = f'a list of {spec.length} doubles'
        kind += ', each' if spec.low is not None or spec.high is not None else ''
    if spec.choices:
        kind = 'one of ' + ', '.join(repr(c) for c in spec.choices)
    example = spec.default if spec.example is None else spec.example
    return f'{kind}{_range_text(spec)} (e.g. {_show(example)})'


def _show(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_show(v) for v in value) + ']'
    if isinstance(value, str):
        return repr(value)
    return repr(value)


def _got(value):
    if isinstance(value, array.array):
        value = value.tolist()
    text = _show(value)
    return text if len(text) <= 60 else text[:57] + '...'


def _fail(spec, value, why=''):
    raise InputError(f'parameter {spec.name}: expected {expected_text(spec)}, got '
                     f'{_got(value)}{why}')


def _check_range(spec, x, value):
    if not math.isfinite(x):
        _fail(spec, value, ' (not finite)')
    if spec.low is not None and (x < spec.low or (spec.open_low and x == spec.low)):
        _fail(spec, value)
    if spec.high is not None and (x > spec.high or (spec.open_high and x == spec.high)):
        _fail(spec, value)


def coerce(spec, value):
    """Return ``value`` as ``spec``'s kind (see the module docstring), or raise InputError."""
    kind = spec.kind
    if value is None:  # declared without a value and never set
        return [] if kind in ('doubles', 'strings') else spec.default
    if kind == 'double':
        if not _is_number(value):
            _fail(spec, value)
        x = float(value)
        _check_range(spec, x, value)
        return x
    if kind == 'integer':
        if _is_number(value) and math.isfinite(value) and float(value).is_integer():
            x = int(value)
            _check_range(spec, x, value)
            return x
        _fail(spec, value)
    if kind == 'bool':
        if isinstance(value, bool):
            return value
        if _is_number(value) and value in (0, 1):
            return bool(value)
        _fail(spec, value)
    if kind == 'string':
        if not isinstance(value, str):
            _fail(spec, value)
        if spec.choices and value not in spec.choices:
            _fail(spec, value)
        return value
    if kind == 'strings':
        if isinstance(value, str):
            return [value]
        if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            return list(value)
        _fail(spec, value)
    if kind == 'doubles':
        if _is_number(value) and spec.length in (PER_JOINT, None):
            values = [value]
        elif isinstance(value, (list, tuple, array.array)) and all(
                _is_number(v) for v in value):
            values = list(value)
        else:
            _fail(spec, value)
        out = [float(v) for v in values]
        for x in out:
            _check_range(spec, x, value)
        if isinstance(spec.length, int) and len(out) != spec.length:
            _fail(spec, value, f' ({len(out)} values)' if len(out) != 1 else ' (1 value)')
        if spec.length == PER_JOINT and not out and spec.default:
            _fail(spec, value, ' (no value)')
        return out
    raise AssertionError(f'unknown parameter kind {kind!r}')


def descriptor(spec):
    """Return the ParameterDescriptor of ``spec``: dynamically typed, the range in the text."""
    return ParameterDescriptor(
        description=f'{spec.description}; {expected_text(spec)}', read_only=spec.read_only,
        dynamic_typing=True)


def declare(node, specs):
    """Declare every parameter of ``specs`` on ``node``; return {name: coerced value}."""
    for spec in specs:
        default = spec.default
        if default is None or (isinstance(default, list) and not default):
            default = None  # not set: an empty list would be typed as a byte array
        node.declare_parameter(spec.name, default, descriptor(spec))
    return values(node, specs)


def values(node, specs, parameters=()):
    """Return {name: coerced value} of ``specs`` on ``node``, ``parameters`` overriding."""
    given = {p.name: p.value for p in parameters}
    out = {}
    for spec in specs:
        value = (given[spec.name] if spec.name in given else
                 node.get_parameter_or(spec.name, Parameter(spec.name)).value)
        out[spec.name] = coerce(spec, value)
    return out


def changes(specs, parameters):
    """Return {name: coerced value} of a SetParameters request's parameters, or raise."""
    table = {spec.name: spec for spec in specs}
    return {p.name: coerce(table[p.name], p.value) for p in parameters if p.name in table}


def table(*specs):
    """Return a tuple of specs, checking that every default passes its own coercion."""
    for spec in specs:
        coerce(spec, spec.default)
    return specs


def read_only(*specs):
    """Return ``specs`` made read-only: parameters a node reads at start-up only."""
    return tuple(spec._replace(read_only=True) for spec in specs)


def model_specs(urdf_path=''):
    """Return the robot-description parameters every node that loads a model declares."""
    return (
        Spec('robot_description', 'string', '', 'URDF XML of the robot (first choice)',
             example='<robot ...>'),
        Spec('urdf_path', 'string', urdf_path,
             'URDF or .xacro file, or bundled robot name (second choice)', example='panda'),
    )


def gravity_spec():
    """Return the ``gravity`` parameter: 3 doubles in the base frame."""
    return Spec('gravity', 'doubles', [0.0, 0.0, -9.81], 'gravity in the base frame [m/s^2]',
                length=3)


# -- the dynamics node ---------------------------------------------------------------------------
# defaults match config/dynamics.yaml
DYNAMICS_PARAMETERS = table(
    *model_specs(),
    Spec('base_link', 'string', '', 'base of the modelled chain; empty: the URDF root',
         example='panda_link0'),
    Spec('tip_link', 'string', '', 'tip of the modelled chain; empty: the whole tree',
         example='panda_link8'),
    gravity_spec(),
    Spec('command_joints', 'strings', [], 'joint order of ~/effort_command; unset: model order',
         example=['panda_joint1', 'panda_joint2']),
    Spec('feedforward_state', 'string', 'desired',
         'evaluate M, C and g at the "desired" (reference) or "measured" state',
         choices=EVALUATE_AT),
    Spec('reference_timeout', 'double', 0.5,
         'a reference older than this [s] is ignored; 0: never expires', 0.0, 3600.0),
    Spec('prediction_horizon', 'double', 0.01,
         'time_from_start of ~/prediction [s]; 0: the present accelerations', 0.0, 10.0),
    Spec('prediction_substeps', 'integer', 1,
         'Runge-Kutta steps over the prediction horizon', 1, 1000),
    Spec('friction', 'bool', False,
         'add the URDF joint friction (<dynamics damping friction>: viscous + Coulomb) to '
         '~/feedforward_torques and ~/effort_command, subtract it in ~/prediction'),
    Spec('observer_gain', 'double', 50.0,
         'K_O [1/s] of the momentum observer of external torques (time constant 1/K_O); 0: off',
         0.0, 1e4),
    Spec('contact_threshold', 'doubles', [5.0],
         '|tau_ext| above which a joint is in contact [N m or N]: one value or one per joint',
         0.0, open_low=True, length=PER_JOINT, example=5.0),
    Spec('contact_hysteresis', 'double', 0.2,
         'a joint leaves contact below (1 - hysteresis) x its threshold', 0.0, 0.99),
    Spec('contact_frame', 'string', '',
         'link at whose origin ~/external_wrench is estimated; empty: the tip',
         example='panda_link7'),
    Spec('observer_max_gap', 'double', 0.1,
         'a gap between joint-state stamps longer than this [s] restarts the observer',
         1e-4, 3600.0),
    Spec('contact_localization', 'bool', False,
         "while in contact, locate it on the URDF's <collision> surfaces: ~/contact_location, "
         '~/contact_markers (needs the observer)'),
    Spec('contact_friction_coefficient', 'double', 0.6,
         'friction coefficient of the contact cone the located force lies in', 0.0, 10.0),
    Spec('contact_noise', 'doubles', [0.0],
         "standard deviation of each joint's external torque error [N m or N] for contact "
         'localization: one value or one per joint; 0: measured while not in contact',
         0.0, length=PER_JOINT, example=0.0),
    Spec('contact_relative_noise', 'double', 0.02,
         "model error of contact localization, a fraction of each joint's |tau_ext|", 0.0, 1.0),
    Spec('payload_window', 'double', 30.0,
         'seconds of header-stamp time of joint states with efforts kept for '
         '~/estimate_payload (a new model or value empties it)', 0.0, 3600.0, open_low=True,
         example=30.0),
    Spec('drain_limit', 'integer', 10,
         'when an executor serves the joint states (DynamicsNode in-process; the executable '
         'serves them in a thread of its own, which answers every queued one): those that '
         'queued up which a callback answers after its own; 0: one per callback', 0, 1000),
    Spec('diagnostics_period', 'double', 1.0, 'period of /diagnostics [s] (start-up only)',
         0.05, 60.0, read_only=True),
)
MODEL_PARAMETERS = ('robot_description', 'urdf_path', 'base_link', 'tip_link', 'gravity')
OBSERVER_PARAMETERS = ('observer_gain', 'contact_threshold', 'contact_hysteresis',
                       'contact_frame', 'observer_max_gap', 'friction')


class DynamicsSettings:
    """The dynamics node's settings beyond one parameter's own type and range (joint counts)."""

    def __init__(self, values, joint_names=None):
        """Take coerced ``values`` (see :func:`values`); check them against ``joint_names``."""
        self.feedforward_state = values['feedforward_state']
        self.reference_timeout = values['reference_timeout']
        self.prediction_horizon = values['prediction_horizon']
        self.prediction_substeps = values['prediction_substeps']
        self.drain_limit = values['drain_limit']
        self.friction = values['friction']
        self.payload_window = values['payload_window']
        self.observer_gain = values['observer_gain']
        self.contact_threshold = values['contact_threshold']
        if joint_names is not None and len(self.contact_threshold) not in (1, len(joint_names)):
            raise InputError(f'parameter contact_threshold: has {len(self.contact_threshold)} '
                             f'values; give 1 or {len(joint_names)} (one per joint)')
        self.contact_hysteresis = values['contact_hysteresis']
        self.contact_frame = values['contact_frame']
        self.observer_max_gap = values['observer_max_gap']  # seconds, as the observer takes it
        self.contact_localization = values['contact_localization']
        self.contact_friction_coefficient = values['contact_friction_coefficient']
        self.contact_noise = values['contact_noise']
        if joint_names is not None and len(self.contact_noise) not in (1, len(joint_names)):
            raise InputError(f'parameter contact_noise: has {len(self.contact_noise)} values; '
                             f'give 1 or {len(joint_names)} (one per joint)')
        self.contact_relative_noise = values['contact_relative_noise']
        self.command_joints = values['command_joints']
        if joint_names is not None:
            unknown = [j for j in self.command_joints if j not in joint_names]
            if unknown:
                raise InputError('parameter command_joints: names unknown joint(s): '
                                 + ', '.join(unknown))

    def processor_settings(self):
        """Return the :class:`denoc_ros.processor.ProcessorSettings` these settings make."""
        return ProcessorSettings(
            feedforward_state=self.feedforward_state, reference_timeout=self.reference_timeout,
            prediction_horizon=self.prediction_horizon,
            prediction_substeps=self.prediction_substeps, friction=self.friction,
            observer_gain=self.observer_gain,
            contact_threshold=tuple(self.contact_threshold),
            contact_hysteresis=self.contact_hysteresis,
            contact_frame=self.contact_frame or None, observer_max_gap=self.observer_max_gap,
            payload_window=self.payload_window, contact_localization=self.contact_localization,
            contact_friction_coefficient=self.contact_friction_coefficient,
            contact_noise=tuple(self.contact_noise),
            contact_relative_noise=self.contact_relative_noise)


# -- command-line and params-file values rcl would refuse ----------------------------------------
def _uniform(data):
    """Return ``data`` with every list mixing integers and doubles made all doubles."""
    if isinstance(data, dict):
        return {k: _uniform(v) for k, v in data.items()}
    if isinstance(data, list):
        if data and all(_is_number(v) for v in data) and any(isinstance(v, float) for v in data):
            return [float(v) for v in data]
        return [_uniform(v) for v in data]
    return data


def _override(rule):
    """Return a ``-p name:=value`` rule with a mixed int/double list value made all doubles."""
    name, sep, text = rule.partition(':=')
    if not sep or not text.lstrip().startswith('['):
        return rule
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return rule  # rcl reports it
    fixed = _uniform(value)
    if repr(fixed) == repr(value):
        return rule
    return f'{name}:={yaml.safe_dump(fixed, default_flow_style=True).strip()}'


def _params_file(path, written):
    """Return ``path``, or a normalized copy (appended to ``written``) if it mixes int/double."""
    try:
        with open(path, encoding='utf-8') as f:
            data = yaml.safe_load(f)
    except (OSError, yaml.YAMLError):
        return path  # rcl reports it
    fixed = _uniform(data)
    if yaml.safe_dump(fixed) == yaml.safe_dump(data):
        return path
    handle, copy = tempfile.mkstemp(suffix='.yaml', prefix='denoc_params_')
    with os.fdopen(handle, 'w', encoding='utf-8') as f:
        yaml.safe_dump(fixed, f)
    written.append(copy)
    return copy


def normalize_arguments(args):
    """
    Return command-line ``args`` with lists such as ``[0, 0, -9.81]`` made all doubles.

    rcl refuses a sequence mixing integers and doubles (``-p gravity:=[0, 0, -9.81]`` or the
    same in a ``--params-file``) before any node exists; this rewrites such values (``-p``
    rules in place, params files as temporary copies) and returns ``(args, copies)``: remove
    the copies once rclpy is initialised.
    """
    out, written, ros, previous = [], [], False, None
    for arg in args:
        if arg == '--ros-args':
            ros = True
        elif arg == '--':
            ros = False
        elif ros and previous in ('-p', '--param'):
            arg = _override(arg)
        elif ros and previous == '--params-file':
            arg = _params_file(arg, written)
        out.append(arg)
        previous = arg
    return out, written
