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
Argument checking and batch shapes, shared by every public dynamics function.

Each public function calls :func:`prepare` once at entry. It checks the model, converts every
state argument to a float array, checks its length against the model's number of joints,
rejects NaN/inf (naming the argument and the index of the first bad element), broadcasts the
leading batch axes of all arguments together and flattens them into one axis, so that the
recursions only ever see arrays of shape ``(B, n)`` (joint vectors) and ``(B, n, 6)`` (external
wrenches). :func:`finish` puts the batch shape back on a result.

Sizes: an argument named ``q`` or ``q0`` is a configuration, of length ``model.nq``; every
other joint-space argument (velocities, accelerations, forces) has length ``model.nv``. The two
differ for a floating-base model (``7 + n`` and ``6 + n``), whose quaternion ``q[3:7]`` must be
of unit length within ``QUATERNION_TOLERANCE`` (it is then normalised).

The single-state fast path in front of the public functions, and its checks: :mod:`._fast`.
"""

import numpy as np

from ._compile import warn_if_interpreted
from ._packed import packed
from .kinematics import QUATERNION_TOLERANCE
from ..errors import InputError
from ..model import RobotModel

CONFIGURATIONS = ('q', 'q0')
#: An empty external-wrench argument of the ``*_one`` kernels: no wrenches (``f_ext=None``).
#: (Writeable, as the kernels' signature wants: with no element, nothing can write to it.)
NO_WRENCH = np.zeros((0, 6))
#: An empty acceleration argument of the ``*_one`` kernels: zero accelerations.
NO_ACCEL = np.zeros(0)


def check_model(model):
    """Raise InputError unless ``model`` is a RobotModel."""
    if not isinstance(model, RobotModel):
        raise InputError(f'model must be a denoc_ros.RobotModel, got {type(model).__name__} '
                         '(load one with denoc_ros.load_urdf)')


def _as_float_array(name, value):
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f'{name} must be an array of numbers: {exc}') from None
    return arr


def _check_finite(name, arr):
    bad = ~np.isfinite(arr)
    if bad.any():
        index = tuple(int(k) for k in np.argwhere(bad)[0])
        where = ', '.join(str(k) for k in index)
        raise InputError(f'{name}[{where}] is {float(arr[index])}: every element of {name} '
                         'must be finite (no NaN or inf)')


def joint_vector(model, name, value, configuration=None):
    """
    Return ``value`` as a finite float array of shape (..., nq) or (..., nv), or raise.

    ``configuration`` (default: ``name`` is ``q`` or ``q0``) selects the length nq.
    """
    if configuration is None:
        configuration = name in CONFIGURATIONS
    n = model.nq if configuration else model.nv
    arr = _as_float_array(name, value)
    if arr.ndim == 0 or arr.shape[-1] != n:
        got = 'a scalar' if arr.ndim == 0 else f'length {arr.shape[-1]} (shape {arr.shape})'
        if model.floating:
            what = 'a configuration' if configuration else 'a velocity-sized vector'
            raise InputError(
                f'{name} has {got}, expected length {n} ({what} of this floating-base '
                f'model: nq = 7 + {model.dof} = {model.nq} for q = [base position (3), '
                f'quaternion x y z w (4), joints]; nv = 6 + {model.dof} = {model.nv} for '
                'velocities, accelerations and forces = [base linear, base angular, joints]; '
                f'joints: {", ".join(model.joint_names)})')
        raise InputError(f'{name} has {got}, expected length {n}: the model has {n} joints '
                         f'({len(model.joint_names)} joint_names: '
                         f'{", ".join(model.joint_names)})')
    _check_finite(name, arr)
    if configuration and model.floating:
        norm = np.linalg.norm(arr[..., 3:7], axis=-1)
        bad = np.abs(norm - 1.0) > QUATERNION_TOLERANCE
        if np.any(bad):
            where = tuple(int(k) for k in np.argwhere(bad)[0]) if arr.ndim > 1 else ()
            prefix = ''.join(f'{k}, ' for k in where)
            raise InputError(f'{name}[{prefix}3:7], the base quaternion (x y z w), has norm '
                             f'{float(norm[where]):.6g}: it must be of unit length within '
                             f'{QUATERNION_TOLERANCE:g} (it is then normalised)')
    return arr


def wrench_array(model, name, value):
    """Return external wrenches as a finite float array of shape (..., nbodies, 6), or raise."""
    n = model.nbodies
    arr = _as_float_array(name, value)
    if arr.ndim < 2 or arr.shape[-2:] != (n, 6):
        base = ' (row 0: the floating base)' if model.floating else ''
        raise InputError(f'{name} has shape {arr.shape}, expected (..., {n}, 6): one wrench '
                         '[force(3); torque(3)] per body, in the body frame, for the '
                         f'{n} bodies of the model{base}')
    _check_finite(name, arr)
    return arr


def prepare(model, joint_args, f_ext=None):
    """
    Check the state arguments and flatten their broadcast batch axes into one.

    ``joint_args`` is a sequence of ``(name, value)`` pairs of joint-space vectors. Returns
    ``(batch_shape, arrays, f_ext)`` where each array has shape ``(B, n)`` and ``f_ext`` is
    ``None`` or of shape ``(B, n, 6)``, with ``B = prod(batch_shape)``.
    """
    check_model(model)
    warn_if_interpreted()
    names, arrays = [], []
    for name, value in joint_args:
        names.append(name)
        arrays.append(joint_vector(model, name, value))
    shapes = [a.shape[:-1] for a in arrays]
    if f_ext is not None:
        f_ext = wrench_array(model, 'f_ext', f_ext)
        names.append('f_ext')
        shapes.append(f_ext.shape[:-2])
    try:
        batch = np.broadcast_shapes(*shapes)
    except ValueError:
        listed = ', '.join(f'{a} {s}' for a, s in zip(names, shapes))
        raise InputError(f'the leading (batch) axes do not broadcast together: {listed}') \
            from None
    size = int(np.prod(batch, dtype=np.int64))
    flat = [np.broadcast_to(a, batch + a.shape[-1:]).reshape(size, a.shape[-1]) for a in arrays]
    if f_ext is not None:
        nb = model.nbodies
        f_ext = np.broadcast_to(f_ext, batch + (nb, 6)).reshape(size, nb, 6)
    return batch, flat, f_ext


def kernel_arrays(model, arrays, f_ext=None):
    """
    Return the flattened state arrays as fresh C-contiguous float64 arrays for a batch kernel.

    ``f_ext=None`` becomes the kernels' "no external wrench" placeholder of shape ``(0, nb, 6)``.
    """
    arrays = [np.array(a, dtype=float, order='C') for a in arrays]
    if f_ext is None:
        f_ext = np.zeros((0, model.nbodies, 6))
    else:
        f_ext = np.array(f_ext, dtype=float, order='C')
    return arrays, f_ext


def checked_batch(model, kernel, named, shape, what):
    """
    Return ``kernel(ints, reals, *states, out)`` of the checked states, batch axes restored.

    The checked path of a public function: ``named`` are its ``(name, value)`` state arguments
    (see :func:`prepare`), ``shape(pk)`` the shape of one state's result for the model's
    :class:`._packed.PackedModel`, ``what`` the result's name in an overflow's message.
    """
    batch, arrays, _ = prepare(model, named)
    arrays, _ = kernel_arrays(model, arrays)
    pk = packed(model)
    out = np.empty((arrays[0].shape[0],) + shape(pk))
    kernel(pk.ints, pk.reals, *arrays, out)
    return finish(batch, out, what)


def square(pk):
    """Return the shape ``(nv, nv)`` of a joint-space matrix (for :func:`checked_batch`)."""
    return pk.square


def vector(pk):
    """Return the shape ``(nv,)`` of one state's joint forces, for :func:`checked_batch`."""
    return (pk.nv,)


def finish(batch, result, what):
    """Reshape a ``(B, ...)`` result to ``batch + (...)``; raise rather than return NaN/inf."""
    if not np.all(np.isfinite(result)):
        raise InputError(f'{what} is not finite for this input (overflow: joint velocities, '
                         'accelerations or torques too large for the model)')
    return result.reshape(batch + result.shape[1:])
