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
The single-state fast paths call compiled entry points that do not check argument types.

Every array layout and dtype a user might pass -- float32, integers, strided views, big-endian,
read-only, Fortran order, subclasses, lists -- must give exactly the result of the same numbers
as C-contiguous float64 vectors (which the fast path takes), never a result read from the wrong
memory. The reference is the checked batch path, called with a batch of one.
"""

import os

import denoc_ros as dr
from denoc_ros.dynamics import _packed
from denoc_ros.dynamics._packed import packed, PackedModel
from denoc_ros.resources import bundled_urdf
import numpy as np
import pytest


@pytest.fixture(scope='module')
def model():
    return dr.load_urdf(bundled_urdf('panda'))


def variants(x):
    """Yield (label, the numbers of x in another array type or layout)."""
    x = np.asarray(x, dtype=float)
    yield 'float64', x.copy()
    yield 'list', x.tolist()
    yield 'tuple', tuple(x.tolist())
    yield 'float32', x.astype(np.float32)
    yield 'float16', x.astype(np.float16)
    yield 'longdouble', x.astype(np.longdouble)
    yield 'big-endian', x.astype('>f8')
    stretched = np.zeros(x.shape[:-1] + (2 * x.shape[-1],))
    stretched[..., ::2] = x
    yield 'strided', stretched[..., ::2]
    yield 'reversed', x[..., ::-1].copy()[..., ::-1]
    read_only = x.copy()
    read_only.setflags(write=False)
    yield 'read-only', read_only
    yield 'Fortran', np.asfortranarray(x)
    yield 'subclass', x.copy().view(np.recarray) if x.ndim > 1 else np.ma.masked_array(x)
    unaligned = np.frombuffer(b'\0' + x.tobytes(), dtype=float, offset=1).reshape(x.shape)
    yield 'unaligned', unaligned
    yield 'object', np.array(x.tolist(), dtype=object)


def rounded(rng, shape):
    """Return numbers exact in float16 (so every dtype above holds them exactly)."""
    return np.round(rng.uniform(-1.0, 1.0, shape) * 64.0) / 64.0


FUNCTIONS = {
    'inverse_dynamics': (dr.inverse_dynamics, 3),
    'gravity_torques': (dr.gravity_torques, 1),
    'mass_matrix': (dr.mass_matrix, 1),
    'forward_dynamics': (dr.forward_dynamics, 3),
    'coriolis_matrix': (dr.coriolis_matrix, 2),
    'coriolis_torques': (dr.coriolis_torques, 2),
    'convective_inertia_matrix': (dr.convective_inertia_matrix, 2),
    'jacobian': (dr.jacobian, 1),
    'regressor': (dr.regressor, 3),
}


@pytest.mark.parametrize('name', sorted(FUNCTIONS))
def test_every_array_type_gives_the_float64_result(model, name):
    """Each argument in turn, in each type and layout: the same result as float64 vectors."""
    function, count = FUNCTIONS[name]
    rng = np.random.default_rng(7)
    args = [rounded(rng, model.dof) for _ in range(count)]
    expected = function(model, *[a[None] for a in args])[0]  # checked path, batch of one
    assert np.array_equal(function(model, *args), expected)
    tried = 0
    for k in range(count):
        for label, value in variants(args[k]):
            if label == 'float16' and np.abs(args[k]).max() > 2.0:
                continue
            call = list(args)
            call[k] = value
            result = function(model, *call)
            assert type(result) is np.ndarray and result.dtype == np.float64, (name, k, label)
            np.testing.assert_array_equal(result, expected, err_msg=f'{name} arg {k}: {label}')
            tried += 1
    assert tried >= 13 * count


@pytest.mark.parametrize('name', ['inverse_dynamics', 'forward_dynamics'])
def test_every_wrench_array_type_gives_the_float64_result(model, name):
    """f_ext in each type and layout, (n, 6): the same result as a C-contiguous float64 one."""
    function = FUNCTIONS[name][0]
    rng = np.random.default_rng(8)
    q, qd, third = (rounded(rng, model.dof) for _ in range(3))
    f_ext = rounded(rng, (model.dof, 6))
    expected = function(model, q[None], qd[None], third[None], f_ext[None])[0]
    for label, value in variants(f_ext):
        result = function(model, q, qd, third, value)
        np.testing.assert_array_equal(result, expected, err_msg=f'f_ext: {label}')
    transposed = np.ascontiguousarray(f_ext.T).T   # (n, 6) with strides (8, 8 n)
    np.testing.assert_array_equal(function(model, q, qd, third, transposed), expected)
    with pytest.raises(dr.InputError, match='f_ext'):
        function(model, q, qd, third, f_ext[:, :3].copy())
    with pytest.raises(dr.InputError, match='f_ext'):
        function(model, q, qd, third, f_ext.reshape(-1))


def test_wrong_lengths_are_refused_not_read(model):
    """A float64 vector of the wrong length never reaches past the kernel's length check."""
    short, long_ = np.zeros(model.dof - 1), np.zeros(model.dof + 1)
    for function, count in FUNCTIONS.values():
        for bad in (short, long_, np.zeros(0)):
            for k in range(count):
                args = [np.zeros(model.dof) for _ in range(count)]
                args[k] = bad
                with pytest.raises(dr.InputError):
                    function(model, *args)


@pytest.mark.parametrize('bad', [np.nan, np.inf, -np.inf])
def test_a_non_finite_element_anywhere_is_named(model, bad):
    """The kernels' finiteness check sees a NaN or inf in every element of every argument."""
    names = {1: ('q',), 2: ('q', 'qd'), 3: ('q', 'qd', 'qdd')}
    for name, (function, count) in FUNCTIONS.items():
        labels = names[count] if name != 'forward_dynamics' else ('q', 'qd', 'tau')
        for k in range(count):
            for i in range(model.dof):
                args = [np.full(model.dof, 0.25) for _ in range(count)]
                args[k][i] = bad
                with pytest.raises(dr.InputError, match=rf'{labels[k]}\[{i}\]'):
                    function(model, *args)
    huge = np.full(model.dof, 1e300)  # finite: v * 0 is 0, not NaN
    assert np.all(np.isfinite(dr.gravity_torques(model, huge)))


@pytest.mark.skipif(os.environ.get('NUMBA_DISABLE_JIT') == '1', reason='plain Python kernels')
def test_single_state_calls_reach_the_compiled_entry_point(model):
    """After the first call each fast path holds the compiled entry point, not the dispatcher."""
    import importlib
    rng = np.random.default_rng(9)
    for name, (function, count) in FUNCTIONS.items():
        function(model, *[rng.uniform(-1.0, 1.0, model.dof) for _ in range(count)])
    dr.inverse_dynamics(model, *[np.zeros(model.dof)] * 3, np.zeros((model.dof, 6)))
    dr.predict(model, *[np.zeros(model.dof)] * 3, 0.01)
    dr.regressor(model, *[np.zeros(model.dof)] * 3)
    holders = {'denoc_ros.dynamics.rnea': ('_newton_euler_one', '_inverse_dynamics_one',
                                           '_gravity_torques_one'),
               'denoc_ros.dynamics.crba': ('_mass_matrix_one',),
               'denoc_ros.dynamics.aba': ('_forward_dynamics_one',),
               'denoc_ros.dynamics.coriolis': ('_coriolis_matrix_one',),
               'denoc_ros.dynamics.convective': ('_convective_inertia_matrix_one',),
               'denoc_ros.dynamics.regressor': ('_regressor_one',),
               'denoc_ros.dynamics.jacobian': ('_jacobian_one',),
               'denoc_ros.feedforward': ('_prediction_one',)}
    for module_name, names in holders.items():
        module = importlib.import_module(module_name)
        for attr in names:
            entry = getattr(module, attr)
            assert type(entry).__name__ == 'builtin_function_or_method', (module_name, attr)


@pytest.mark.parametrize('dtype', [np.int64, np.int32, np.uint8, np.bool_])
def test_integer_arrays_give_the_float64_result(model, dtype):
    """Integer and boolean vectors (int64 has float64's itemsize) are converted, not misread."""
    values = np.array([1, 0, 1, 1, 0, 1, 0, 1, 1, 0][:model.dof])
    for name, (function, count) in FUNCTIONS.items():
        expected = function(model, *[values.astype(float)] * count)
        result = function(model, *[values.astype(dtype)] * count)
        np.testing.assert_array_equal(result, expected, err_msg=f'{name}: {np.dtype(dtype)}')


def test_models_keep_their_own_scratch_space(model):
    """Single-state calls on two models in turn, and on copies, give each model's own result."""
    import copy
    import pickle
    small = dr.load_urdf(bundled_urdf('ur5e'))
    rng = np.random.default_rng(4)
    dr.mass_matrix(model, np.zeros(model.dof))  # the packed model (and its handle) exists
    copies = [copy.copy(model), copy.deepcopy(model), pickle.loads(pickle.dumps(model))]
    for _ in range(3):
        for m in (model, small, *copies):
            states = [rng.uniform(-1.0, 1.0, m.dof) for _ in range(3)]
            for name, (function, count) in FUNCTIONS.items():
                fast = function(m, *states[:count])
                checked = function(m, *[s[None] for s in states[:count]])[0]
                np.testing.assert_array_equal(fast, checked, err_msg=name)
    for m in copies:  # each copy has its own packed form and handle, not the original's
        assert packed(m) is not packed(model)
        assert packed(m).handle != packed(model).handle
        np.testing.assert_array_equal(packed(m).reals, packed(model).reals)
        assert not packed(m).ints.flags.writeable and not packed(m).reals.flags.writeable


def test_the_model_carries_its_packed_form_and_no_table_outlives_it():
    """No process-global table keyed by id(): the model carries its constants, dies with them."""
    import gc
    import weakref
    from denoc_ros import payload
    from denoc_ros.dynamics import _fast
    m = dr.load_urdf(bundled_urdf('ur5e'))
    dr.mass_matrix(m, np.zeros(m.dof))
    assert vars(m)['_kernel_form'] is packed(m)
    assert isinstance(packed(m), PackedModel)
    for module in (_packed, _fast, payload):  # the tables of before: gone
        assert not {'PACKED', '_fp_recent', '_RECORDS'} & set(vars(module))
    alive = weakref.ref(m)
    del m
    gc.collect()
    assert alive() is None  # nothing keeps the model of the last call
    with pytest.raises(dr.InputError, match='RobotModel'):
        dr.mass_matrix(None, np.zeros(6))


class DuckVector:
    """An array-like with ``ndim`` and a float64 ``dtype`` that is no NumPy array."""

    def __init__(self, values):
        self.values = np.array(values, dtype=float)
        self.ndim, self.dtype, self.shape = 1, self.values.dtype, self.values.shape

    def __array__(self, dtype=None, copy=None):
        return self.values if dtype is None else self.values.astype(dtype)


def test_array_likes_that_are_no_ndarray_take_the_checked_path(model):
    """The compiled entry points refuse them (TypeError before the kernel runs): same result."""
    rng = np.random.default_rng(12)
    for name, (function, count) in FUNCTIONS.items():
        states = [rng.uniform(-1.0, 1.0, model.dof) for _ in range(count)]
        expected = function(model, *states)
        np.testing.assert_array_equal(function(model, *[DuckVector(s) for s in states]),
                                      expected, err_msg=name)


def test_the_public_functions_keep_their_signature_and_docstring():
    """The generated fast path stands in for the function: same parameters, defaults, docs."""
    import inspect
    import importlib
    for function in (dr.inverse_dynamics, dr.forward_dynamics, dr.jacobian, dr.mass_matrix):
        module = importlib.import_module(function.__module__)
        checked = vars(module)['_checked_' + function.__name__]
        expected = list(inspect.signature(checked).parameters.values())
        parameters = list(inspect.signature(function).parameters.values())
        assert [p.name for p in parameters] == [p.name for p in expected] + ['workspace']
        assert [p.default for p in parameters[:-1]] == [p.default for p in expected]
        assert parameters[-1].default is None
        assert function.__doc__ == checked.__doc__ and function.__doc__
        assert function.__name__ == checked.__name__


# Every single-state fast path: (module, the kernel entry it calls, a call of the public function).
FAST_PATHS = [
    ('rnea', '_inverse_dynamics_one', lambda m, x: dr.inverse_dynamics(m, x, x, x)),
    ('rnea', '_newton_euler_one',
     lambda m, x: dr.inverse_dynamics(m, x, x, x, np.zeros((m.nbodies, 6)))),
    ('rnea', '_newton_euler_one', lambda m, x: dr.coriolis_torques(m, x, x)),
    ('rnea', '_gravity_torques_one', lambda m, x: dr.gravity_torques(m, x)),
    ('crba', '_mass_matrix_one', lambda m, x: dr.mass_matrix(m, x)),
    ('aba', '_forward_dynamics_one', lambda m, x: dr.forward_dynamics(m, x, x, x)),
    ('coriolis', '_coriolis_matrix_one', lambda m, x: dr.coriolis_matrix(m, x, x)),
    ('convective', '_convective_inertia_matrix_one',
     lambda m, x: dr.convective_inertia_matrix(m, x, x)),
    ('jacobian', '_jacobian_one', lambda m, x: dr.jacobian(m, x)),
    ('regressor', '_regressor_one', lambda m, x: dr.regressor(m, x, x, x)),
]


class KernelFault(Exception):
    """Raised by a kernel entry replaced for the test."""


@pytest.mark.parametrize('module, entry, call', FAST_PATHS,
                         ids=[f'{m}.{e}' for m, e, _ in FAST_PATHS])
def test_an_error_inside_a_fast_path_is_raised_not_retried(model, monkeypatch, module, entry,
                                                           call):
    """A kernel that raises on the fast path surfaces its error (no silent slow-path result)."""
    import importlib
    target = importlib.import_module(f'denoc_ros.dynamics.{module}')
    calls = []

    def broken(*args):
        calls.append(args)
        raise KernelFault(entry)
    call(model, np.zeros(model.dof))  # readies the entry point
    monkeypatch.setattr(target, entry, broken)
    with pytest.raises(KernelFault):
        call(model, np.zeros(model.dof))
    assert len(calls) == 1
    call(model, [0.0] * model.dof)  # a list takes the checked path: the entry is not called
    assert len(calls) == 1


def test_an_error_inside_the_prediction_fast_path_is_raised(model, monkeypatch):
    """The prediction's compiled RK4 raising surfaces too."""
    import denoc_ros.feedforward as feedforward

    def broken(*args):
        raise KernelFault('prediction')
    x = np.zeros(model.dof)
    feedforward.predict(model, x, x, x, 0.01)
    monkeypatch.setattr(feedforward, '_prediction_one', broken)
    with pytest.raises(KernelFault):
        feedforward.predict(model, x, x, x, 0.01)


THREADS_SCRIPT = """
import threading
import numpy as np
import denoc_ros as dr
from denoc_ros.resources import bundled_urdf

a = dr.load_urdf(bundled_urdf('panda'))
b = dr.with_inertial_parameters(a, 1.5 * dr.inertial_parameters(a))
q = np.linspace(-0.5, 0.5, a.dof)
expected = {id(m): (dr.mass_matrix(m, q[None])[0], dr.gravity_torques(m, q[None])[0])
            for m in (a, b)}
start, wrong, errors = threading.Barrier(4), [], []


def run(m):
    M, g = expected[id(m)]
    start.wait()  # the first single-state calls race: the entry points are not ready yet
    try:
        for _ in range(3000):
            if not (np.array_equal(dr.mass_matrix(m, q), M)
                    and np.array_equal(dr.gravity_torques(m, q), g)):
                wrong.append(1)
    except Exception as exc:
        errors.append(repr(exc))


threads = [threading.Thread(target=run, args=(m,)) for m in (a, b, a, b)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(len(wrong), len(errors), errors[:1])
"""


def test_threads_on_two_models_get_each_models_result():
    """First calls racing to ready an entry point, then calls alternating between two models."""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, '-c', THREADS_SCRIPT], capture_output=True, text=True,
                         timeout=300, env={**os.environ, 'PYTHONPATH': os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[:2] == ['0', '0'], out.stdout + out.stderr[-2000:]
