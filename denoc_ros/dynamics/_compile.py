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
Compilation of the kernels (numba) and what every kernel module shares.

Each algorithm module (:mod:`.kinematics`, :mod:`.rnea`, :mod:`.crba`, :mod:`.aba`,
:mod:`.coriolis`, :mod:`.convective`, :mod:`.jacobian`, :mod:`.operational_space`,
:mod:`.regressor`, :mod:`.prediction`) writes its recursion as scalar
code over preallocated buffers and compiles it with :func:`jit` (numba ``njit``, cached on
disk, NumPy's error model, fused multiply-add contraction and nothing else of fastmath, so
the finiteness checks stay). With ``NUMBA_DISABLE_JIT=1`` the same functions run as plain
Python; without numba too, after one :class:`denoc_ros.PerformanceWarning` naming the cause.

Status codes returned by the kernel entry points: ``OK``; ``BAD_INPUT`` (a wrong length, a
NaN/inf or a quaternion that is not unit length; the public function re-checks with
:mod:`._state` to name it); ``BAD_OUTPUT`` (an overflow made the result non-finite);
``NOT_POSITIVE_DEFINITE``; ``SINGULAR + k`` (forward dynamics: velocity DoF ``k`` moves
nothing with mass).

Single states take a fast path: :func:`single_state` gives the public function the compiled
entry point of a ``*_one`` kernel, called without numba's dispatcher once the caller has
checked type, dtype and number of dimensions itself (:mod:`._fast`). Such a kernel
takes the model as one integer, its :func:`model_handle` (the address of a small header naming
the packed arrays and a per-model scratch space, both kept by :mod:`._packed` in the dynamics
layer, not by the model), which :func:`model_arrays` turns back into arrays: an
integer crosses into compiled code in a fifth of the time of an array, and the scratch space
saves the kernel its allocations (together 0.1 us of a 1 us call).

Numba caches each function under its own module's file, so after an edit of one kernel module
the cached callers in the other modules would be stale (they inline what they call). At import,
:func:`drop_stale_caches` compares a hash of every kernel module's source with the one the cache
was built from, and deletes numba's cache files of this folder when they differ.
"""

import hashlib
import math
import os
import pathlib
import threading
import warnings

import numpy as np

from ..errors import PerformanceWarning

try:
    from numba import carray, literally, njit, types
    from numba.core.imputils import impl_ret_borrowed
    from numba.extending import intrinsic
    _REASON = 'NUMBA_DISABLE_JIT=1 is set' if os.environ.get('NUMBA_DISABLE_JIT', '0') not in (
        '', '0') else ''
except ImportError as exc:  # numba is a dependency; keep working (slowly) without it
    njit = None

    def literally(value):
        """Return ``value`` (numba's literal dispatch; nothing to do without numba)."""
        return value
    _REASON = f'numba cannot be imported ({exc})'

#: True when the kernels run compiled by numba.
COMPILED = not _REASON


#: Modules beside the dynamics package that the kernels compile in: the joint-type codes and the
#: quaternion rotation (:func:`denoc_ros.spatial.quaternion_rotation`).
SHARED_SOURCES = ('joints.py', 'spatial.py')


def drop_stale_caches(folder=pathlib.Path(__file__).resolve().parent):
    """Delete numba's cache files in ``folder/__pycache__`` unless built from these sources."""
    digest = hashlib.sha256()
    # The kernel modules, and the package modules whose code or constants they compile in.
    shared = [folder.parent / name for name in SHARED_SOURCES if (folder.parent / name).exists()]
    for source in sorted(folder.glob('*.py')) + shared:
        digest.update(source.name.encode() + source.read_bytes())
    cache = folder / '__pycache__'
    stamp = cache / 'denoc_kernels.sha256'
    try:
        if stamp.read_text() == digest.hexdigest():
            return
    except OSError:
        pass
    try:
        cache.mkdir(exist_ok=True)
        for stale in list(cache.glob('*.nbi')) + list(cache.glob('*.nbc')):
            stale.unlink()
        stamp.write_text(digest.hexdigest())
    except OSError:  # a read-only installation: numba then compiles in memory or elsewhere
        pass


if COMPILED:
    drop_stale_caches()
_warned = []

OK = 0
BAD_INPUT = 1
BAD_OUTPUT = 2
NOT_POSITIVE_DEFINITE = 3
SINGULAR = 16

FLOAT64 = np.dtype(np.float64)

# Floating-point contraction only (a * b + c as one fused multiply-add, which rounds once): about
# 10 % off the mass matrix recursion. Not numba's full fastmath, whose no-NaN/no-inf assumptions
# would let the compiler delete the finiteness checks.
FAST_MATH = {'contract'}


def warn_if_interpreted():
    """Warn once (PerformanceWarning) when the kernels run as plain Python without being asked."""
    if njit is None and not _warned:
        _warned.append(True)
        warnings.warn(f'denoc_ros runs its dynamics kernels as plain Python, about 300 times '
                      f'slower: {_REASON}; install numba (pip install numba)',
                      PerformanceWarning, stacklevel=3)


def jit(function=None, inline=False):
    """
    Compile ``function`` with numba (cached on disk, NumPy's error model, FMA contraction).

    ``@jit(inline=True)`` inlines the function into its callers at numba's IR level (for the
    joint-type dispatch, which LLVM would otherwise call out of line).
    """
    if function is None:
        return lambda f: jit(f, inline)
    if njit is None:
        return function
    return njit(cache=True, error_model='numpy', fastmath=FAST_MATH,
                inline='always' if inline else 'never')(function)


def single_state(kernel, namespace, name, kinds):
    """
    Return a stand-in for a ``*_one`` kernel that readies it on first use, as ``namespace[name]``.

    The first call compiles (or loads from the cache) the one signature the fast paths use --
    the model handle (an int64, see :func:`model_handle`), then per ``kinds`` letter: ``v`` a
    float64 vector and ``w`` a float64 matrix of any strides (inputs), ``o`` a C-contiguous
    float64 vector and ``m`` a C-contiguous float64 matrix (outputs), ``i`` an int, ``f`` a
    float, ``r`` a read-only float64 vector -- and forbids compiling others. It then puts the
    compiled function's entry point into ``namespace[name]``, so that later calls skip numba's
    dispatcher (its type resolution costs 0.1-0.2 us a call, 10-15 % of a 7-joint mass matrix).

    The entry point checks little of its arguments (that each array is an ndarray of float64,
    raising TypeError otherwise; not the byte order, not the number of dimensions), so the
    callers check the rest: dtype ``is`` :data:`FLOAT64` and the number of dimensions (and
    outputs C-contiguous: the callers allocate them); anything else takes their checked path.
    Inputs may have any strides: a ``*_one`` kernel passes them through
    ``np.ascontiguousarray`` (free for a contiguous array, a copy for a strided view), so that
    the recursions are compiled for contiguous arrays only, and the callers need no strides
    check (40-50 ns a vector). The first call,
    made through the dispatcher, raises TypeError for other types rather than compiling them.
    """
    if not hasattr(kernel, 'disable_compile'):  # NUMBA_DISABLE_JIT=1, or no numba
        def interpreted(*args):
            warn_if_interpreted()
            namespace[name] = kernel
            return kernel(*args)
        namespace[name] = interpreted
        return interpreted

    lock = threading.Lock()

    def first_call(*args):
        # One thread compiles; a thread that waited finds the entry point in place (compiling
        # again after disable_compile would raise).
        with lock:
            if namespace.get(name) is first_call:
                _ready(kernel, namespace, name, kinds)
        return kernel(*args)

    namespace[name] = first_call
    return first_call


def _ready(kernel, namespace, name, kinds):
    """Compile the one signature of a ``*_one`` kernel, forbid others, put its entry point."""
    from numba import types
    kind = {'v': types.Array(types.float64, 1, 'A'),
            'w': types.Array(types.float64, 2, 'A'),
            'o': types.Array(types.float64, 1, 'C'),
            'm': types.Array(types.float64, 2, 'C'),
            'r': types.Array(types.float64, 1, 'C', readonly=True),
            'i': types.int64,
            'f': types.float64}
    signature = (types.int64,) + tuple(kind[k] for k in kinds)
    try:
        kernel.compile(signature)
    except Exception:  # pragma: no cover - keep the kernel usable, compiling as it goes
        namespace[name] = kernel
        raise
    kernel.disable_compile()
    try:
        namespace[name] = kernel.overloads[signature].entry_point
    except (AttributeError, KeyError):  # pragma: no cover - another numba: the dispatcher
        namespace[name] = kernel


# ----------------------------------------------------------------------------------------------
# The model handle of the single-state entry points

#: Scratch space of a model handle: ``work``, SCRATCH_COUNT buffers of (max(nb, nv),
#: SCRATCH_WIDTH) -- per-body or per-velocity rows (kinematics, columns P, motion, ...) -- and
#: ``blocks``, 3 nb + 1 matrices 6x6.
SCRATCH_COUNT, SCRATCH_WIDTH = 4, 30
# The int64 header a compiled handle points to: address, rows and columns of ``ints`` and of
# ``reals``; address, count and rows of ``work``; address and count of ``blocks``.
_HEADER_LENGTH = 11


def model_handle(ints, reals, nv):
    """
    Return ``(handle, keep)``: the one-integer model argument of the ``*_one`` kernels.

    ``ints`` and ``reals`` are the packed model's arrays, ``nv`` its number of velocities. The
    handle also brings a scratch space (see :data:`SCRATCH_COUNT`) that every single-state call
    of the model reuses: the kernels hold the GIL while they run (none is compiled ``nogil``),
    so two calls never overlap, and none reads a scratch value it did not write in the same
    call. ``keep`` owns the memory the handle points to: the caller keeps it as long as the
    handle (:class:`._packed.PackedModel` does, and is pickled and copied without it). Without
    compilation the handle is the tuple of arrays itself.
    """
    nb = ints.shape[0]
    work = np.empty((SCRATCH_COUNT, max(nb, nv), SCRATCH_WIDTH))
    blocks = np.empty((3 * nb + 1, 6, 6))
    if not COMPILED:
        arrays = (ints, reals, work, blocks)
        return arrays, arrays
    for a in (ints, reals, work, blocks):
        if not a.flags.c_contiguous:  # pragma: no cover - pack_model makes them so
            raise ValueError('model_handle needs C-contiguous arrays')
    header = np.array([ints.ctypes.data, ints.shape[0], ints.shape[1],
                       reals.ctypes.data, reals.shape[0], reals.shape[1],
                       work.ctypes.data, work.shape[0], work.shape[1],
                       blocks.ctypes.data, blocks.shape[0]], dtype=np.int64)
    return int(header.ctypes.data), (header, ints, reals, work, blocks)


if COMPILED:
    @intrinsic
    def _pointer(typingctx, address, dtype):
        """Return ``address`` (an int64) as a pointer to ``dtype`` (a NumPy scalar type)."""
        pointer = types.CPointer(dtype.dtype)

        def codegen(context, builder, signature, args):
            return builder.inttoptr(args[0], context.get_value_type(pointer))
        return pointer(address, dtype), codegen

    @intrinsic
    def _read_only(typingctx, array):
        """Return ``array`` typed read-only (the type of the packed arrays everywhere else)."""
        def codegen(context, builder, signature, args):
            return impl_ret_borrowed(context, builder, signature.return_type, args[0])
        return array.copy(readonly=True)(array), codegen

    @jit(inline=True)
    def model_arrays(handle):
        """Return ``(ints, reals, work, blocks)`` of a :func:`model_handle`."""
        h = carray(_pointer(handle, np.int64), _HEADER_LENGTH)
        ints = _read_only(carray(_pointer(h[0], np.int64), (h[1], h[2])))
        reals = _read_only(carray(_pointer(h[3], np.float64), (h[4], h[5])))
        work = carray(_pointer(h[6], np.float64), (h[7], h[8], SCRATCH_WIDTH))
        blocks = carray(_pointer(h[9], np.float64), (h[10], 6, 6))
        return ints, reals, work, blocks
else:
    def model_arrays(handle):
        """Return ``(ints, reals, work, blocks)`` of a :func:`model_handle`."""
        return handle


# ----------------------------------------------------------------------------------------------
# Small helpers on scalars (inlined by the compiler)


@jit
def cross(a0, a1, a2, b0, b1, b2):
    """Return the cross product ``a x b`` of two 3-vectors given by their components."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


# Minimax polynomials of sin and cos on [-pi/4, pi/4] (the coefficients of fdlibm's kernels,
# Sun Microsystems 1993) and pi/2 in two parts for the argument reduction (Cody & Waite).
_S1, _S2 = -1.66666666666666324348e-01, 8.33333333332248946124e-03
_S3 = -1.98412698298579493134e-04
_S4, _S5 = 2.75573137070700676789e-06, -2.50507602534068634195e-08
_S6 = 1.58969099521155010221e-10
_C1, _C2 = 4.16666666666666019037e-02, -1.38888888888741095749e-03
_C3 = 2.48015872894767294178e-05
_C4, _C5 = -2.75573143513906633035e-07, 2.08757232129817482790e-09
_C6 = -1.13596475577881948265e-11
_PIO2_HI, _PIO2_LO, _TWO_OVER_PI = 1.57079632673412561417e+00, 6.07710050650619224932e-11, \
    6.36619772367581382433e-01


@jit
def sincos(x):
    """
    Return ``(sin x, cos x)`` to within an ulp, for half the time of the two library calls.

    ``x = k pi/2 + r``, ``|r| <= pi/4`` (exact for ``|x| < 1e6``; beyond, the library), then the
    polynomials in ``r`` and the quadrant ``k mod 4``.
    """
    if not abs(x) < 1e6:
        return math.sin(x), math.cos(x)
    k = round(x * _TWO_OVER_PI)
    r = (x - k * _PIO2_HI) - k * _PIO2_LO
    z = r * r
    s = r + r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
    h = 0.5 * z
    w = 1.0 - h
    c = w + (((1.0 - w) - h)
             + z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6))))))
    quadrant = int(k) & 3
    if quadrant == 0:
        return s, c
    if quadrant == 1:
        return c, -s
    if quadrant == 2:
        return -s, -c
    return -c, s


@jit
def all_finite(x):
    """Return True if every element of the array ``x`` is finite."""
    # Branch-free: v - v is 0 for a finite v and NaN for inf or NaN. A logical AND over the
    # elements, which the compiler vectorizes (a floating-point sum would be a chain of
    # dependent additions, as it may not reorder them): 10-12 ns for a 7x7 matrix, against
    # 22-30 ns with a sum.
    ok = True
    for v in x.flat:
        ok &= v - v == 0.0
    return ok


if not hasattr(all_finite, 'py_func'):  # NUMBA_DISABLE_JIT=1 (or no numba): NumPy, no warnings
    def all_finite(x):  # noqa: F811
        """Return True if every element of the array ``x`` is finite."""
        return bool(np.isfinite(x).all())


@jit
def row(a, b):
    """Return the batch element ``b`` of ``a``, or element 0 if ``a`` has one (broadcast)."""
    return a[b] if a.shape[0] > 1 else a[0]


@jit(inline=True)
def add6(u, v):
    """Return the 6-tuple ``u + v``."""
    return u[0] + v[0], u[1] + v[1], u[2] + v[2], u[3] + v[3], u[4] + v[4], u[5] + v[5]


@jit(inline=True)
def add_row6(u, A, r, s):
    """Return the 6-tuple ``u + s A[r, :6]``: a 6-vector plus ``s`` times row ``r`` of ``A``."""
    return (u[0] + s * A[r, 0], u[1] + s * A[r, 1], u[2] + s * A[r, 2],
            u[3] + s * A[r, 3], u[4] + s * A[r, 4], u[5] + s * A[r, 5])


@jit
def mat6_vec(A, x0, x1, x2, x3, x4, x5):
    """Return the 6-tuple ``A x`` for a 6x6 ``A`` and a 6-vector ``x`` given by its entries."""
    return (A[0, 0] * x0 + A[0, 1] * x1 + A[0, 2] * x2 + A[0, 3] * x3 + A[0, 4] * x4
            + A[0, 5] * x5,
            A[1, 0] * x0 + A[1, 1] * x1 + A[1, 2] * x2 + A[1, 3] * x3 + A[1, 4] * x4
            + A[1, 5] * x5,
            A[2, 0] * x0 + A[2, 1] * x1 + A[2, 2] * x2 + A[2, 3] * x3 + A[2, 4] * x4
            + A[2, 5] * x5,
            A[3, 0] * x0 + A[3, 1] * x1 + A[3, 2] * x2 + A[3, 3] * x3 + A[3, 4] * x4
            + A[3, 5] * x5,
            A[4, 0] * x0 + A[4, 1] * x1 + A[4, 2] * x2 + A[4, 3] * x3 + A[4, 4] * x4
            + A[4, 5] * x5,
            A[5, 0] * x0 + A[5, 1] * x1 + A[5, 2] * x2 + A[5, 3] * x3 + A[5, 4] * x4
            + A[5, 5] * x5)
