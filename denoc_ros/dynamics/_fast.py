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
The single-state fast path of the public dynamics functions: one mechanism, :func:`fast_path`.

A public function's body is its checked path: any input, every error message of
:mod:`._state`. ``@fast_path`` puts in front of it a path for the common call -- one state, each
state argument a NumPy vector of native float64 -- that goes straight to the compiled entry
point of a ``*_one`` kernel (:func:`._compile.single_state`), passing the model's packed form
(:func:`._packed.packed`) as its ``handle``; the kernel checks lengths and finiteness itself and
returns a status. Anything else -- lists, other dtypes, batches, bad input, a non-OK kernel
status -- takes the checked path::

    @fast_path(mass_matrix_one, 'vm', 'M', states='q', result='pk.square')
    def mass_matrix(model, q):
        return checked_batch(...)  # the checked path (its docstring is the function's)

The decorator writes the fast path as Python source (as :mod:`dataclasses` writes
``__init__``), the text :data:`FAST_PATH` with the function's names filled in, so that the
checks run inline: a helper call per state costs 0.1-0.3 us of a 1-3 us call. Tracebacks show
the generated lines (they are in :mod:`linecache` under ``<fast path of module.function>``).

What it catches, and nothing else:

* AttributeError from the checks ``x.ndim == 1 and x.dtype is float64``: a state argument
  that is no array (a list, a number). The checks run before any kernel.
* TypeError from the compiled entry point, which raises it while converting its arguments,
  before the kernel runs, for an object that has ``ndim`` and ``dtype`` but is no NumPy array
  (a pandas Series). The compiled kernels themselves raise nothing: they return a status. With
  the kernels interpreted (no numba) nothing is caught.

A failure inside a kernel is therefore raised, never retried on the checked path.

The model's packed form is the one it carries (``model._kernel_form``, see
:func:`._packed.packed`): an attribute read, whose AttributeError (a model not packed yet, or no
model) sends the call to its checked path, which packs the model or names the error.

With ``workspace=`` (a :class:`~denoc_ros.dynamics.workspace.Workspace` of the same model) the
fast path allocates nothing: the kernel runs on the workspace's scratch space and writes into
its buffer for the result (``workspace.tau``, ``workspace.M``, ...), which is returned and
overwritten by the next call of the same function with that workspace. Without one, the result
is a new array and the scratch space is the packed form's.
"""

import functools
import linecache
import re
import sys

import numpy as np

from ._compile import BAD_INPUT, COMPILED, FLOAT64, single_state
from ._packed import packed
from ._state import NO_ACCEL, NO_WRENCH
from .workspace import Workspace
from ..errors import InputError
from ..model import RobotModel

#: The source of a fast path (see :func:`fast_path`). ``{checks}``: the checks of the state
#: arguments; ``{guard}``: further conditions on ``pk``; ``{result}``: the shape of the output.
FAST_PATH = """\
def {name}({params}, workspace=None):
    try:
        pk = model._kernel_form if {checks} else None{lookup}
    except {caught}:  # a state argument without ndim or dtype, or a model not packed yet
        pk = None
    if pk is not None{guard}:
        if workspace is None:
            out = _fp_empty({result})
            handle = pk.handle
        elif type(workspace) is _fp_workspace and workspace.model is model:
            out = workspace.{field}
            handle = workspace.handle
        else:
            return _fp_wrong_workspace(model, workspace)
        try:
{call}
        except _fp_not_an_array:  # raised by the entry point before the kernel runs
            status = _fp_bad_input
        if not status:
            return out
    elif workspace is not None:
        _fp_check_workspace(model, workspace)
    return {checked}({params})
"""
_STATE_CHECK = '{0}.ndim == 1 and {0}.dtype is _fp_float64'

_nd = np.ndarray


def check_workspace(model, workspace):
    """Raise InputError unless ``workspace`` is a Workspace made from ``model``."""
    if type(workspace) is not Workspace:
        raise InputError(f'workspace must be a denoc_ros.Workspace, got '
                         f'{type(workspace).__name__}')
    if workspace.model is not model:
        raise InputError('the workspace was made for another model: make one per model with '
                         'denoc_ros.Workspace(model)')


def _wrong_workspace(model, workspace):
    check_workspace(model, workspace)
    raise AssertionError('unreachable')  # pragma: no cover


def one_state(model, q, qd=None, qdd=None):
    """
    Return the model's PackedModel if ``q`` (and ``qd``, ``qdd`` unless None) go to a kernel as is.

    For a fast path that is more than one kernel call (Cartesian dynamics, the prediction):
    each state argument an ``ndarray`` (not a subclass) of one dimension and dtype native
    float64 (any strides), and ``model`` a RobotModel; else None, and the caller takes its
    checked path. Checks of type, not of values: the kernels check lengths and finiteness.
    """
    if (type(q) is _nd and q.ndim == 1 and q.dtype is FLOAT64
            and (qd is None or (type(qd) is _nd and qd.ndim == 1 and qd.dtype is FLOAT64))
            and (qdd is None or (type(qdd) is _nd and qdd.ndim == 1
                                 and qdd.dtype is FLOAT64))):
        try:
            return model._kernel_form
        except AttributeError:
            return packed(model) if isinstance(model, RobotModel) else None
    return None


def one_wrench_set(pk, f_ext):
    """Return True if ``f_ext`` (not None) goes to a ``*_one`` kernel as is: (nb, ...) float64."""
    # A (0, 6) f_ext would read as "no wrenches" in the kernel: the length is checked here, the
    # width of 6 by the kernel.
    return (type(f_ext) is _nd and f_ext.ndim == 2 and f_ext.dtype is FLOAT64
            and f_ext.shape[0] == pk.nb)


def fast_path(kernel, kinds, field, states, result, args=None, wrench=None, guard=None,
              plain=None, lookup=None):
    """
    Return a decorator that puts a single-state fast path in front of a public function.

    The fast path calls ``kernel``'s compiled entry point (readied by
    :func:`._compile.single_state` with ``kinds``, as ``_<kernel name>`` in the function's
    module) as ``kernel(pk.handle, <args>, out)`` with a fresh ``out = np.empty(<result>)``,
    and returns ``out`` if the kernel's status is OK; the decorated function is the checked
    path for everything else. ``field``: the :class:`~denoc_ros.Workspace` buffer the result
    goes to when the call brings a workspace.

    ``states``: the names of the state arguments (vectors), space-separated. ``args``: the
    kernel's arguments between the handle and ``out``, as Python source that may name the
    function's arguments, :data:`._state.NO_ACCEL` and :data:`._state.NO_WRENCH` (default: the
    states). ``result``: the output's shape, as source in terms of ``pk``, the
    :class:`._packed.PackedModel`. ``wrench``: the name of an optional external-wrench
    argument (None: the kernel's "none"; an array must pass :func:`one_wrench_set`).
    ``guard``: further conditions, as source (e.g. a known frame). ``plain``: ``(kernel,
    kinds, args)`` of a kernel for the calls whose ``wrench`` is None, with fewer arguments
    (each array argument costs the entry point about 0.05 us). ``lookup``: a statement run
    after ``pk`` is found, whose AttributeError (``pk`` is None) or TypeError (an unhashable
    key) sends the call to the checked path, e.g. a frame's packed row looked up by name.
    """
    states = states.split()
    args = ', '.join(states) if args is None else args
    conditions = ''
    if wrench is not None:
        conditions += f' and ({wrench} is None or _fp_wrench_ok(pk, {wrench}))'
        if plain is None:
            args = re.sub(rf'\b{wrench}\b',
                          f'(_fp_no_wrench if {wrench} is None else {wrench})', args)
    indent = ' ' * 12
    if guard is not None:
        conditions += f' and {guard}'

    def decorate(checked):
        name = checked.__name__
        namespace = vars(sys.modules[checked.__module__])
        entry = '_' + kernel.__name__
        if entry not in namespace:
            single_state(kernel, namespace, entry, kinds)
        call = f'{indent}status = {entry}(handle, {args}, out)'
        if plain is not None:
            plain_kernel, plain_kinds, plain_args = plain
            plain_entry = '_' + plain_kernel.__name__
            if plain_entry not in namespace:
                single_state(plain_kernel, namespace, plain_entry, plain_kinds)
            call = (f'{indent}if {wrench} is None:\n'
                    f'{indent}    status = {plain_entry}(handle, {plain_args}, out)\n'
                    f'{indent}else:\n    {call}')
        code = checked.__code__
        params = ', '.join(code.co_varnames[:code.co_argcount])
        source = FAST_PATH.format(
            name=name, params=params, field=field,
            lookup='' if lookup is None else f'\n        {lookup}',
            caught=('AttributeError' if lookup is None
                    else '(AttributeError, TypeError, KeyError)'),
            checks=' and '.join(_STATE_CHECK.format(s) for s in states),
            guard=conditions, result=result, call=call, checked=f'_checked_{name}')
        filename = f'<fast path of {checked.__module__}.{name}>'
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        # The names the generated source uses, in the module's namespace (its globals).
        namespace.update(
            _fp_float64=FLOAT64, _fp_empty=np.empty, _fp_workspace=Workspace,
            _fp_wrong_workspace=_wrong_workspace, _fp_check_workspace=check_workspace,
            _fp_no_wrench=NO_WRENCH, _fp_wrench_ok=one_wrench_set, NO_ACCEL=NO_ACCEL,
            NO_WRENCH=NO_WRENCH, _fp_bad_input=BAD_INPUT,
            _fp_not_an_array=TypeError if COMPILED else ())
        namespace[f'_checked_{name}'] = checked
        scope = {}
        exec(compile(source, filename, 'exec'), namespace, scope)
        public = functools.update_wrapper(scope[name], checked)
        public.__defaults__ = (checked.__defaults__ or ()) + (None,)
        del public.__wrapped__  # inspect.signature: the generated one, with ``workspace``
        return public
    return decorate
