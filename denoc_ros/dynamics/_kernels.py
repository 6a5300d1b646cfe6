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
The compiled kernels: the DeNOC recursions in scalar code over preallocated buffers (numba).

Same algorithms and notation as the NumPy modules (:mod:`.kinematics`,
:mod:`.inverse_dynamics`, :mod:`.mass_matrix`, :mod:`.coriolis`, :mod:`.forward_dynamics`), which
cite the seed's equations at length; here every quantity of body ``i`` is a row ``[i]`` of a
per-call buffer and every 3-vector operation is written out on scalars, so that numba compiles
it to straight-line code without temporaries. Everything is expressed in the base frame at the
mass centres ``C_i`` (Saha 1999), except the Christoffel Coriolis matrix, which works with
spatial quantities at the base-frame origin (Echeandia & Wensing 2021).

Conventions of the kernels
--------------------------
* The model comes packed (:mod:`._packed`): ``ints`` (parent, joint type) and ``reals`` (axis,
  joint placement, inertial data; the last row holds gravity).
* ``*_state`` functions handle one state (1-D joint vectors); the entry points ``*_one`` (one
  state) and ``*_batch`` (joint arrays ``(B, n)``, wrenches ``(B, n, 6)``, one call for the whole
  batch) allocate the buffers once, write the result into the caller's ``out`` and return a
  status: ``OK``; ``BAD_INPUT`` (a wrong length or a NaN/inf in an argument; the caller
  re-checks with :func:`._state.prepare` to name it); ``BAD_OUTPUT`` (an overflow made the
  result non-finite); ``NOT_POSITIVE_DEFINITE``; or ``SINGULAR + i`` (forward dynamics: joint
  ``i`` moves nothing with mass).
* External wrenches ``fext`` of shape ``(0, 6)`` (or ``(0, n, 6)`` in a batch) mean none.
* Rotations and 3x3 inertias are stored row-major in 9 columns; 6-vectors are ``[angular;
  linear]`` (Saha: twists ``[w; v]``, wrenches ``[n; f]``).

* The public wrappers call a ``*_one`` kernel through :func:`single_state`: one compiled
  signature (C-contiguous float64 arrays), called through its entry point without numba's
  dispatcher once the wrapper has checked dtype and strides; other argument types take the
  wrapper's checked path.
* Compiled with FMA contraction (``fastmath={'contract'}``), nothing else of fastmath.

With ``NUMBA_DISABLE_JIT=1`` (or without numba) the same functions run as plain Python.
"""

import math

import numpy as np

from ._packed import (AXIS, COM, GRAVITY, INERTIA, JOINT_TYPE, MASS, PARENT, ROTATED_AXIS,
                      ROTATION, ROTATION_K, ROTATION_KK, TRANSLATION)
from ..model import PRISMATIC

try:
    from numba import njit
except ImportError:  # pragma: no cover - numba is a runtime dependency; keep working without
    njit = None

OK = 0
BAD_INPUT = 1
BAD_OUTPUT = 2
NOT_POSITIVE_DEFINITE = 3
SINGULAR = 16

# "No external wrenches" (a compile-time constant inside the kernels: no allocation per call).
NO_WRENCH = np.zeros((0, 6))
NO_WRENCH.setflags(write=False)

# Columns of the per-call kinematics buffer ``kin`` (n, KIN_WIDTH).
_R, _O, _E, _D, _C, _P, _I = 0, 9, 12, 15, 18, 21, 27
KIN_WIDTH = 36
# Columns of the per-call motion buffer ``mot`` (n, MOT_WIDTH): t_i, t_dot_i, w~_i.
_T, _TD, _W = 0, 6, 12
MOT_WIDTH = 18

# Floating-point contraction only (a * b + c as one fused multiply-add, which rounds once): about
# 10 % off the mass matrix recursion. Not numba's full fastmath, whose no-NaN/no-inf assumptions
# would let the compiler delete the finiteness checks.
FAST_MATH = {'contract'}


def jit(function):
    """Compile ``function`` with numba (cached on disk, NumPy's error model, FMA contraction)."""
    if njit is None:  # pragma: no cover
        return function
    return njit(cache=True, error_model='numpy', fastmath=FAST_MATH)(function)


def single_state(kernel, namespace, name, kinds):
    """
    Return a stand-in for a ``*_one`` kernel that readies it on first use, as ``namespace[name]``.

    The first call compiles (or loads from the cache) the one signature the fast paths use --
    the packed model, then per ``kinds`` letter: ``v`` a C-contiguous float64 vector, ``m`` a
    C-contiguous float64 matrix, ``i`` an int, ``f`` a float, ``r`` a read-only float64 vector --
    and forbids compiling others. It then puts the compiled function's entry point into
    ``namespace[name]``, so that later calls skip numba's dispatcher (its type resolution costs
    0.1-0.2 us a call, 10-15 % of a 7-joint mass matrix).

    The entry point does not check the types of its arguments, so the callers must: every array
    they pass is an exact ``np.ndarray`` of dtype float64 with the strides of a C-contiguous
    array of the signature's dimension (see :data:`FLOAT64`, :data:`VECTOR_STRIDES` and
    :data:`WRENCH_STRIDES`); anything else takes their checked path. The first call, made
    through the dispatcher, raises TypeError for other types rather than compiling them.
    """
    if not hasattr(kernel, 'disable_compile'):  # NUMBA_DISABLE_JIT=1, or no numba
        namespace[name] = kernel
        return kernel

    def first_call(*args):
        from numba import types
        kind = {'v': types.Array(types.float64, 1, 'C'),
                'm': types.Array(types.float64, 2, 'C'),
                'r': types.Array(types.float64, 1, 'C', readonly=True),
                'i': types.int64,
                'f': types.float64}
        signature = ((types.Array(types.int64, 2, 'C', readonly=True),
                      types.Array(types.float64, 2, 'C', readonly=True))
                     + tuple(kind[k] for k in kinds))
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
        return kernel(*args)

    namespace[name] = first_call
    return first_call


FLOAT64 = np.dtype(np.float64)
VECTOR_STRIDES = (8,)  # ``strides`` of a C-contiguous float64 vector (implies ndim == 1)
WRENCH_STRIDES = (48, 8)  # ... and of a C-contiguous float64 array of shape (n, 6)


# ----------------------------------------------------------------------------------------------
# Small helpers on scalars (inlined by the compiler)


@jit
def cross(a0, a1, a2, b0, b1, b2):
    """Return the cross product ``a x b`` of two 3-vectors given by their components."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@jit
def all_finite(x):
    """Return True if every element of the array ``x`` is finite."""
    # Branch-free: v * 0 is 0 for a finite v and NaN for inf or NaN. Over ``x.flat`` the
    # compiler vectorizes this: 8 ns for three 7-vectors, against 58 ns with a test per
    # element over ``x.ravel()``.
    total = 0.0
    for v in x.flat:
        total += v * 0.0
    return total == 0.0


if not hasattr(all_finite, 'py_func'):  # NUMBA_DISABLE_JIT=1 (or no numba): NumPy, no warnings
    def all_finite(x):  # noqa: F811
        """Return True if every element of the array ``x`` is finite."""
        return bool(np.isfinite(x).all())


@jit
def row(a, b):
    """Return the batch element ``b`` of ``a``, or element 0 if ``a`` has one (broadcast)."""
    return a[b] if a.shape[0] > 1 else a[0]


@jit
def mot_views(mot):
    """Return the named views ``t, t_dot, w_tilde`` of a motion buffer (see _T ...)."""
    return mot[:, _T:_T + 6], mot[:, _TD:_TD + 6], mot[:, _W:_W + 6]


@jit
def congruence_add(A, c0, c1, c2, T, out):
    """Add ``B^T A B`` to the 6x6 ``out``, ``B = [[1, 0], [c x 1, 1]]`` (Saha Eq. 13, 23b)."""
    # T = A B: T[r, :3] = A[r, :3] + A[r, 3:] x c, T[r, 3:] = A[r, 3:].
    for r in range(6):
        x0, x1, x2 = cross(A[r, 3], A[r, 4], A[r, 5], c0, c1, c2)
        T[r, 0] = A[r, 0] + x0
        T[r, 1] = A[r, 1] + x1
        T[r, 2] = A[r, 2] + x2
        T[r, 3] = A[r, 3]
        T[r, 4] = A[r, 4]
        T[r, 5] = A[r, 5]
    left_transpose_add(T, c0, c1, c2, out)


@jit
def left_transpose_add(T, c0, c1, c2, out):
    """Add ``B^T T`` to ``out`` (6x6), ``B = [[1, 0], [c x 1, 1]]``: column-wise wrench moves."""
    for col in range(6):
        x0, x1, x2 = cross(T[3, col], T[4, col], T[5, col], c0, c1, c2)
        out[0, col] += T[0, col] + x0
        out[1, col] += T[1, col] + x1
        out[2, col] += T[2, col] + x2
        out[3, col] += T[3, col]
        out[4, col] += T[4, col]
        out[5, col] += T[5, col]


@jit
def body_mass_matrix(m, inertia, i, out):
    """Write ``M_i = [[I_i, 0], [0, m_i 1]]`` about ``C_i`` into the 6x6 ``out`` (Saha Eq. 2)."""
    for r in range(6):
        for col in range(6):
            out[r, col] = 0.0
    for r in range(3):
        for col in range(3):
            out[r, col] = inertia[i, 3 * r + col]
        out[3 + r, 3 + r] = m


# ----------------------------------------------------------------------------------------------
# Forward recursion: poses, DeNOC vectors, twists (kinematics.py)


@jit
def body_kinematics(ints, reals, q, kin, with_inertia):
    """Fill poses R_i, O_i, e_i, d_i, C_i, inertias I_i and p_i of every body (Eq. 12-15)."""
    # ``kin`` is indexed directly with the column offsets _R, _O, ... rather than through views
    # (``R = kin[:, _R:_R + 9]``, as elsewhere): the compiler then sees that the stores do not
    # alias, which makes this loop, shared by every algorithm, about 30 % faster.
    for i in range(ints.shape[0]):
        a0, a1, a2 = reals[i, AXIS], reals[i, AXIS + 1], reals[i, AXIS + 2]
        x0, x1, x2 = reals[i, TRANSLATION], reals[i, TRANSLATION + 1], reals[i, TRANSLATION + 2]
        prismatic = ints[i, JOINT_TYPE] == PRISMATIC
        # Pose of body i in its parent: rotation L = J Rot(a, q_i) and origin x, J and x the
        # joint's fixed placement; Rot = 1 + s (a x 1) + (1 - c) (a x 1)^2 (Rodrigues).
        if prismatic:
            s, v = 0.0, 0.0
            x0 += q[i] * reals[i, ROTATED_AXIS]
            x1 += q[i] * reals[i, ROTATED_AXIS + 1]
            x2 += q[i] * reals[i, ROTATED_AXIS + 2]
        else:
            s, v = math.sin(q[i]), 1.0 - math.cos(q[i])
        L0 = reals[i, ROTATION] + s * reals[i, ROTATION_K] + v * reals[i, ROTATION_KK]
        L1 = reals[i, ROTATION + 1] + s * reals[i, ROTATION_K + 1] + v * reals[i, ROTATION_KK + 1]
        L2 = reals[i, ROTATION + 2] + s * reals[i, ROTATION_K + 2] + v * reals[i, ROTATION_KK + 2]
        L3 = reals[i, ROTATION + 3] + s * reals[i, ROTATION_K + 3] + v * reals[i, ROTATION_KK + 3]
        L4 = reals[i, ROTATION + 4] + s * reals[i, ROTATION_K + 4] + v * reals[i, ROTATION_KK + 4]
        L5 = reals[i, ROTATION + 5] + s * reals[i, ROTATION_K + 5] + v * reals[i, ROTATION_KK + 5]
        L6 = reals[i, ROTATION + 6] + s * reals[i, ROTATION_K + 6] + v * reals[i, ROTATION_KK + 6]
        L7 = reals[i, ROTATION + 7] + s * reals[i, ROTATION_K + 7] + v * reals[i, ROTATION_KK + 7]
        L8 = reals[i, ROTATION + 8] + s * reals[i, ROTATION_K + 8] + v * reals[i, ROTATION_KK + 8]
        k = ints[i, PARENT]
        if k < 0:
            kin[i, _R + 0], kin[i, _R + 1], kin[i, _R + 2] = L0, L1, L2
            kin[i, _R + 3], kin[i, _R + 4], kin[i, _R + 5] = L3, L4, L5
            kin[i, _R + 6], kin[i, _R + 7], kin[i, _R + 8] = L6, L7, L8
            kin[i, _O + 0], kin[i, _O + 1], kin[i, _O + 2] = x0, x1, x2
        else:
            for r in range(3):
                K0, K1, K2 = kin[k, _R + 3 * r], kin[k, _R + 3 * r + 1], kin[k, _R + 3 * r + 2]
                kin[i, _R + 3 * r] = K0 * L0 + K1 * L3 + K2 * L6
                kin[i, _R + 3 * r + 1] = K0 * L1 + K1 * L4 + K2 * L7
                kin[i, _R + 3 * r + 2] = K0 * L2 + K1 * L5 + K2 * L8
                kin[i, _O + r] = kin[k, _O + r] + K0 * x0 + K1 * x1 + K2 * x2
        m0, m1, m2 = reals[i, COM], reals[i, COM + 1], reals[i, COM + 2]
        for r in range(3):
            R0, R1, R2 = kin[i, _R + 3 * r], kin[i, _R + 3 * r + 1], kin[i, _R + 3 * r + 2]
            kin[i, _E + r] = R0 * a0 + R1 * a1 + R2 * a2
            kin[i, _D + r] = R0 * m0 + R1 * m1 + R2 * m2
            kin[i, _C + r] = kin[i, _O + r] + kin[i, _D + r]
        # I_i = R Ib R^T, Ib the inertia about C_i in body axes (symmetric: 6 entries).
        if with_inertia:
            for r in range(3):
                # Row r of R Ib, times columns col >= r of R^T.
                R0, R1, R2 = kin[i, _R + 3 * r], kin[i, _R + 3 * r + 1], kin[i, _R + 3 * r + 2]
                y0 = (R0 * reals[i, INERTIA] + R1 * reals[i, INERTIA + 3]
                      + R2 * reals[i, INERTIA + 6])
                y1 = (R0 * reals[i, INERTIA + 1] + R1 * reals[i, INERTIA + 4]
                      + R2 * reals[i, INERTIA + 7])
                y2 = (R0 * reals[i, INERTIA + 2] + R1 * reals[i, INERTIA + 5]
                      + R2 * reals[i, INERTIA + 8])
                for col in range(r, 3):
                    value = (y0 * kin[i, _R + 3 * col] + y1 * kin[i, _R + 3 * col + 1]
                             + y2 * kin[i, _R + 3 * col + 2])
                    kin[i, _I + 3 * r + col] = value
                    kin[i, _I + 3 * col + r] = value
        # p_i = [e_i; e_i x d_i] (revolute, Eq. 13) or [0; e_i] (prismatic, Eq. 15).
        e0, e1, e2 = kin[i, _E], kin[i, _E + 1], kin[i, _E + 2]
        if prismatic:
            kin[i, _P + 0], kin[i, _P + 1], kin[i, _P + 2] = 0.0, 0.0, 0.0
            kin[i, _P + 3], kin[i, _P + 4], kin[i, _P + 5] = e0, e1, e2
        else:
            kin[i, _P + 0], kin[i, _P + 1], kin[i, _P + 2] = e0, e1, e2
            kin[i, _P + 3], kin[i, _P + 4], kin[i, _P + 5] = cross(
                e0, e1, e2, kin[i, _D], kin[i, _D + 1], kin[i, _D + 2])


@jit
def twists(ints, kin, qd, t):
    """Fill the twists ``t_i = B_ik t_k + p_i qd_i`` at the mass centres (Saha Eq. 12)."""
    C, p = kin[:, _C:_C + 3], kin[:, _P:_P + 6]
    for i in range(ints.shape[0]):
        k = ints[i, PARENT]
        for r in range(6):
            t[i, r] = p[i, r] * qd[i]
        if k >= 0:
            x0, x1, x2 = cross(C[k, 0] - C[i, 0], C[k, 1] - C[i, 1], C[k, 2] - C[i, 2],
                               t[k, 0], t[k, 1], t[k, 2])
            t[i, 0] += t[k, 0]
            t[i, 1] += t[k, 1]
            t[i, 2] += t[k, 2]
            t[i, 3] += t[k, 3] + x0
            t[i, 4] += t[k, 4] + x1
            t[i, 5] += t[k, 5] + x2


# ----------------------------------------------------------------------------------------------
# Inverse dynamics (inverse_dynamics.py)


@jit
def twist_rates(ints, kin, qd, qdd, g0, g1, g2, t, t_dot):
    """Fill ``t_dot_i = B_ik t_dot_k + B_dot_ik t_k + p_i qdd_i + Omega_i p_i qd_i`` (Eq. 12)."""
    C, p = kin[:, _C:_C + 3], kin[:, _P:_P + 6]
    for i in range(ints.shape[0]):
        k = ints[i, PARENT]
        w0, w1, w2 = t[i, 0], t[i, 1], t[i, 2]
        if k < 0:
            # The base's fictitious acceleration [0; -g].
            t_dot[i, 0], t_dot[i, 1], t_dot[i, 2] = 0.0, 0.0, 0.0
            t_dot[i, 3], t_dot[i, 4], t_dot[i, 5] = -g0, -g1, -g2
        else:
            c0, c1, c2 = C[k, 0] - C[i, 0], C[k, 1] - C[i, 1], C[k, 2] - C[i, 2]
            x0, x1, x2 = cross(c0, c1, c2, t_dot[k, 0], t_dot[k, 1], t_dot[k, 2])
            y0, y1, y2 = cross(t[k, 3] - t[i, 3], t[k, 4] - t[i, 4], t[k, 5] - t[i, 5],
                               t[k, 0], t[k, 1], t[k, 2])
            t_dot[i, 0], t_dot[i, 1], t_dot[i, 2] = t_dot[k, 0], t_dot[k, 1], t_dot[k, 2]
            t_dot[i, 3] = t_dot[k, 3] + x0 + y0
            t_dot[i, 4] = t_dot[k, 4] + x1 + y1
            t_dot[i, 5] = t_dot[k, 5] + x2 + y2
        u0, u1, u2 = cross(w0, w1, w2, p[i, 0], p[i, 1], p[i, 2])
        v0, v1, v2 = cross(w0, w1, w2, p[i, 3], p[i, 4], p[i, 5])
        a, b = qdd[i], qd[i]
        t_dot[i, 0] += p[i, 0] * a + u0 * b
        t_dot[i, 1] += p[i, 1] * a + u1 * b
        t_dot[i, 2] += p[i, 2] * a + u2 * b
        t_dot[i, 3] += p[i, 3] * a + v0 * b
        t_dot[i, 4] += p[i, 4] * a + v1 * b
        t_dot[i, 5] += p[i, 5] * a + v2 * b


@jit
def subtract_external_wrench(kin, fext, i, w):
    """Subtract ``f_ext[i]`` (body frame, [force; torque about O_i]) as [n; f] at C_i from w[i]."""
    R, d = kin[:, _R:_R + 9], kin[:, _D:_D + 3]
    f0 = R[i, 0] * fext[i, 0] + R[i, 1] * fext[i, 1] + R[i, 2] * fext[i, 2]
    f1 = R[i, 3] * fext[i, 0] + R[i, 4] * fext[i, 1] + R[i, 5] * fext[i, 2]
    f2 = R[i, 6] * fext[i, 0] + R[i, 7] * fext[i, 1] + R[i, 8] * fext[i, 2]
    n0 = R[i, 0] * fext[i, 3] + R[i, 1] * fext[i, 4] + R[i, 2] * fext[i, 5]
    n1 = R[i, 3] * fext[i, 3] + R[i, 4] * fext[i, 4] + R[i, 5] * fext[i, 5]
    n2 = R[i, 6] * fext[i, 3] + R[i, 7] * fext[i, 4] + R[i, 8] * fext[i, 5]
    x0, x1, x2 = cross(d[i, 0], d[i, 1], d[i, 2], f0, f1, f2)
    w[i, 0] -= n0 - x0
    w[i, 1] -= n1 - x1
    w[i, 2] -= n2 - x2
    w[i, 3] -= f0
    w[i, 4] -= f1
    w[i, 5] -= f2


@jit
def resultant_wrenches(ints, C, p, w, tau):
    """Accumulate ``w~_i = w_i + sum_children B_ci^T w~_c`` backwards, ``tau_i = p_i^T w~_i``."""
    n = ints.shape[0]
    for i in range(n - 1, -1, -1):
        k = ints[i, PARENT]
        tau[i] = (p[i, 0] * w[i, 0] + p[i, 1] * w[i, 1] + p[i, 2] * w[i, 2]
                  + p[i, 3] * w[i, 3] + p[i, 4] * w[i, 4] + p[i, 5] * w[i, 5])
        if k >= 0:
            x0, x1, x2 = cross(C[k, 0] - C[i, 0], C[k, 1] - C[i, 1], C[k, 2] - C[i, 2],
                               w[i, 3], w[i, 4], w[i, 5])
            w[k, 0] += w[i, 0] - x0
            w[k, 1] += w[i, 1] - x1
            w[k, 2] += w[i, 2] - x2
            w[k, 3] += w[i, 3]
            w[k, 4] += w[i, 4]
            w[k, 5] += w[i, 5]


@jit
def newton_euler_state(ints, reals, q, qd, qdd, fext, gscale, kin, mot, tau):
    """Write ``tau_i = p_i^T w~_i`` (Saha Eq. 30) for one state; gravity scaled by gscale."""
    n = ints.shape[0]
    body_kinematics(ints, reals, q, kin, True)
    t, t_dot, w = mot_views(mot)
    twists(ints, kin, qd, t)
    g0, g1, g2 = (gscale * reals[n, GRAVITY], gscale * reals[n, GRAVITY + 1],
                  gscale * reals[n, GRAVITY + 2])
    twist_rates(ints, kin, qd, qdd, g0, g1, g2, t, t_dot)
    C, p, inertia = kin[:, _C:_C + 3], kin[:, _P:_P + 6], kin[:, _I:_I + 9]
    # Uncoupled Newton-Euler wrenches w_i = M_i t_dot_i + Omega_i M_i E_i t_i (Eq. 7-8).
    for i in range(n):
        w0, w1, w2 = t[i, 0], t[i, 1], t[i, 2]
        Iw0 = inertia[i, 0] * w0 + inertia[i, 1] * w1 + inertia[i, 2] * w2
        Iw1 = inertia[i, 3] * w0 + inertia[i, 4] * w1 + inertia[i, 5] * w2
        Iw2 = inertia[i, 6] * w0 + inertia[i, 7] * w1 + inertia[i, 8] * w2
        x0, x1, x2 = cross(w0, w1, w2, Iw0, Iw1, Iw2)
        a0, a1, a2 = t_dot[i, 0], t_dot[i, 1], t_dot[i, 2]
        w[i, 0] = inertia[i, 0] * a0 + inertia[i, 1] * a1 + inertia[i, 2] * a2 + x0
        w[i, 1] = inertia[i, 3] * a0 + inertia[i, 4] * a1 + inertia[i, 5] * a2 + x1
        w[i, 2] = inertia[i, 6] * a0 + inertia[i, 7] * a1 + inertia[i, 8] * a2 + x2
        m = reals[i, MASS]
        w[i, 3] = m * t_dot[i, 3]
        w[i, 4] = m * t_dot[i, 4]
        w[i, 5] = m * t_dot[i, 5]
        if fext.shape[0] > 0:
            subtract_external_wrench(kin, fext, i, w)
    resultant_wrenches(ints, C, p, w, tau)  # backwards (Eq. 30)


@jit
def newton_euler_one(ints, reals, q, qd, qdd, fext, gscale, out):
    """Write ``tau`` (Saha Eq. 30) of one state into ``out``; return a status (see above)."""
    n = ints.shape[0]
    if not (q.shape[0] == n and qd.shape[0] == n and qdd.shape[0] == n and all_finite(q)
            and all_finite(qd) and all_finite(qdd) and all_finite(fext)):
        return BAD_INPUT
    kin = np.empty((n, KIN_WIDTH))
    mot = np.empty((n, MOT_WIDTH))
    newton_euler_state(ints, reals, q, qd, qdd, fext, gscale, kin, mot, out)
    return OK if all_finite(out) else BAD_OUTPUT


@jit
def inverse_dynamics_one(ints, reals, q, qd, qdd, out):
    """Write ``tau = ID(q, qd, qdd)`` (Saha Eq. 30) into ``out``; return a status."""
    return newton_euler_one(ints, reals, q, qd, qdd, NO_WRENCH, 1.0, out)


@jit
def inverse_dynamics_fext_one(ints, reals, q, qd, qdd, fext, out):
    """Write ``tau = ID(q, qd, qdd) - sum_i J_i^T f_i`` (Saha Eq. 30) into ``out``."""
    if not (fext.shape[0] == ints.shape[0] and fext.shape[1] == 6):
        return BAD_INPUT
    return newton_euler_one(ints, reals, q, qd, qdd, fext, 1.0, out)


@jit
def inverse_dynamics_batch(ints, reals, q, qd, qdd, fext, gscale, out):
    """Write ``tau`` (Saha Eq. 30) of each row of (B, n) states into ``out`` (B, n)."""
    n = ints.shape[0]
    kin = np.empty((n, KIN_WIDTH))
    mot = np.empty((n, MOT_WIDTH))
    none = np.zeros((0, 6))
    for b in range(q.shape[0]):
        newton_euler_state(ints, reals, q[b], row(qd, b), row(qdd, b),
                           row(fext, b) if fext.shape[0] > 0 else none, gscale, kin, mot,
                           out[b])
    return OK if all_finite(out) else BAD_OUTPUT


@jit
def gravity_state(ints, reals, q, kin, w, tau):
    """Write ``g(q) = ID(q, 0, 0)``: Eq. 30 with t_dot_i = [0; -g], w_i = [0; -m_i g] only."""
    n = ints.shape[0]
    body_kinematics(ints, reals, q, kin, False)
    C, p = kin[:, _C:_C + 3], kin[:, _P:_P + 6]
    g0, g1, g2 = reals[n, GRAVITY], reals[n, GRAVITY + 1], reals[n, GRAVITY + 2]
    for i in range(n):
        m = reals[i, MASS]
        w[i, 0], w[i, 1], w[i, 2] = 0.0, 0.0, 0.0
        w[i, 3], w[i, 4], w[i, 5] = -m * g0, -m * g1, -m * g2
    resultant_wrenches(ints, C, p, w, tau)  # backwards (Eq. 30)


@jit
def gravity_torques_one(ints, reals, q, out):
    """Write ``g(q) = ID(q, 0, 0)`` (Eq. 30) into ``out``; return a status."""
    n = ints.shape[0]
    if not (q.shape[0] == n and all_finite(q)):
        return BAD_INPUT
    gravity_state(ints, reals, q, np.empty((n, KIN_WIDTH)), np.empty((n, 6)), out)
    return OK if all_finite(out) else BAD_OUTPUT


@jit
def gravity_torques_batch(ints, reals, q, out):
    """Write ``g(q)`` (Eq. 30) of each row of ``q`` (B, n) into ``out``."""
    n = ints.shape[0]
    kin, w = np.empty((n, KIN_WIDTH)), np.empty((n, 6))
    for b in range(q.shape[0]):
        gravity_state(ints, reals, q[b], kin, w, out[b])
    return OK if all_finite(out) else BAD_OUTPUT


@jit
def coriolis_torques_one(ints, reals, q, qd, out):
    """Write ``C(q, qd) qd = ID(q, qd, 0)`` without gravity (Eq. 30) into ``out``."""
    zero = np.zeros(q.shape[0])
    return newton_euler_one(ints, reals, q, qd, zero, NO_WRENCH, 0.0, out)


@jit
def coriolis_torques_batch(ints, reals, q, qd, out):
    """Write ``C(q, qd) qd`` (Eq. 30 without gravity) of each row of (B, n) states."""
    zero = np.zeros((1, ints.shape[0]))
    return inverse_dynamics_batch(ints, reals, q, qd, zero, np.zeros((0, 1, 6)), 0.0, out)


# ----------------------------------------------------------------------------------------------
# Mass matrix (mass_matrix.py)


@jit
def mat6_vec(A, x):
    """Return the 6-tuple ``A x`` for a 6x6 ``A`` and a 6-vector ``x``."""
    return (A[0, 0] * x[0] + A[0, 1] * x[1] + A[0, 2] * x[2] + A[0, 3] * x[3] + A[0, 4] * x[4]
            + A[0, 5] * x[5],
            A[1, 0] * x[0] + A[1, 1] * x[1] + A[1, 2] * x[2] + A[1, 3] * x[3] + A[1, 4] * x[4]
            + A[1, 5] * x[5],
            A[2, 0] * x[0] + A[2, 1] * x[1] + A[2, 2] * x[2] + A[2, 3] * x[3] + A[2, 4] * x[4]
            + A[2, 5] * x[5],
            A[3, 0] * x[0] + A[3, 1] * x[1] + A[3, 2] * x[2] + A[3, 3] * x[3] + A[3, 4] * x[4]
            + A[3, 5] * x[5],
            A[4, 0] * x[0] + A[4, 1] * x[1] + A[4, 2] * x[2] + A[4, 3] * x[3] + A[4, 4] * x[4]
            + A[4, 5] * x[5],
            A[5, 0] * x[0] + A[5, 1] * x[1] + A[5, 2] * x[2] + A[5, 3] * x[3] + A[5, 4] * x[4]
            + A[5, 5] * x[5])


# Columns of a composite mass matrix ``M~_i = [[I~, s x 1], [(s x 1)^T, m 1]]`` about C_i in the
# buffer ``M_tilde`` (n, MT_WIDTH): the symmetric I~ (xx, xy, xz, yy, yz, zz), s, m. Its lower
# right block stays a multiple of 1 and its off-diagonal block skew under Eq. 23b.
_IXX, _IXY, _IXZ, _IYY, _IYZ, _IZZ, _SX, _SY, _SZ, _MASS = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9
MT_WIDTH = 10


@jit
def composite_mass_matrices(ints, reals, kin, M_tilde):
    """Fill ``M~_i = M_i + sum_children B_ci^T M~_c B_ci`` (Saha Eq. 23b), 10 numbers each."""
    n = ints.shape[0]
    C, inertia = kin[:, _C:_C + 3], kin[:, _I:_I + 9]
    for i in range(n):
        # M_i = [[I_i, 0], [0, m_i 1]] (Eq. 2).
        M_tilde[i, _IXX], M_tilde[i, _IXY], M_tilde[i, _IXZ] = \
            inertia[i, 0], inertia[i, 1], inertia[i, 2]
        M_tilde[i, _IYY], M_tilde[i, _IYZ], M_tilde[i, _IZZ] = \
            inertia[i, 4], inertia[i, 5], inertia[i, 8]
        M_tilde[i, _SX], M_tilde[i, _SY], M_tilde[i, _SZ] = 0.0, 0.0, 0.0
        M_tilde[i, _MASS] = reals[i, MASS]
    for i in range(n - 1, -1, -1):
        k = ints[i, PARENT]
        if k >= 0:
            # B^T M~ B with B = [[1, 0], [c x 1, 1]], c = C_k - C_i (so c x 1 = X, X^T = -X):
            # s' = s - m c, I~' = I~ + c s^T + s c^T - 2 (s.c) 1 + m (|c|^2 1 - c c^T).
            c0, c1, c2 = C[k, 0] - C[i, 0], C[k, 1] - C[i, 1], C[k, 2] - C[i, 2]
            s0, s1, s2, m = M_tilde[i, _SX], M_tilde[i, _SY], M_tilde[i, _SZ], M_tilde[i, _MASS]
            diag = m * (c0 * c0 + c1 * c1 + c2 * c2) - 2.0 * (s0 * c0 + s1 * c1 + s2 * c2)
            M_tilde[k, _IXX] += M_tilde[i, _IXX] + 2.0 * c0 * s0 + diag - m * c0 * c0
            M_tilde[k, _IXY] += M_tilde[i, _IXY] + c0 * s1 + s0 * c1 - m * c0 * c1
            M_tilde[k, _IXZ] += M_tilde[i, _IXZ] + c0 * s2 + s0 * c2 - m * c0 * c2
            M_tilde[k, _IYY] += M_tilde[i, _IYY] + 2.0 * c1 * s1 + diag - m * c1 * c1
            M_tilde[k, _IYZ] += M_tilde[i, _IYZ] + c1 * s2 + s1 * c2 - m * c1 * c2
            M_tilde[k, _IZZ] += M_tilde[i, _IZZ] + 2.0 * c2 * s2 + diag - m * c2 * c2
            M_tilde[k, _SX] += s0 - m * c0
            M_tilde[k, _SY] += s1 - m * c1
            M_tilde[k, _SZ] += s2 - m * c2
            M_tilde[k, _MASS] += m


@jit
def composite_times(M_tilde, i, p):
    """Return ``M~_i p`` (6-tuple) for a 6-vector ``p = [a; b]``: [I~ a + s x b; a x s + m b]."""
    a0, a1, a2, b0, b1, b2 = p[0], p[1], p[2], p[3], p[4], p[5]
    s0, s1, s2, m = M_tilde[i, _SX], M_tilde[i, _SY], M_tilde[i, _SZ], M_tilde[i, _MASS]
    x0, x1, x2 = cross(s0, s1, s2, b0, b1, b2)
    y0, y1, y2 = cross(a0, a1, a2, s0, s1, s2)
    return (M_tilde[i, _IXX] * a0 + M_tilde[i, _IXY] * a1 + M_tilde[i, _IXZ] * a2 + x0,
            M_tilde[i, _IXY] * a0 + M_tilde[i, _IYY] * a1 + M_tilde[i, _IYZ] * a2 + x1,
            M_tilde[i, _IXZ] * a0 + M_tilde[i, _IYZ] * a1 + M_tilde[i, _IZZ] * a2 + x2,
            y0 + m * b0, y1 + m * b1, y2 + m * b2)


@jit
def expand_composite(M_tilde, i, out):
    """Write the 6x6 ``M~_i`` from its 10 numbers into ``out``."""
    out[0, 0], out[0, 1], out[0, 2] = M_tilde[i, _IXX], M_tilde[i, _IXY], M_tilde[i, _IXZ]
    out[1, 0], out[1, 1], out[1, 2] = M_tilde[i, _IXY], M_tilde[i, _IYY], M_tilde[i, _IYZ]
    out[2, 0], out[2, 1], out[2, 2] = M_tilde[i, _IXZ], M_tilde[i, _IYZ], M_tilde[i, _IZZ]
    s0, s1, s2, m = M_tilde[i, _SX], M_tilde[i, _SY], M_tilde[i, _SZ], M_tilde[i, _MASS]
    # s x 1 and its transpose.
    out[0, 3], out[0, 4], out[0, 5] = 0.0, -s2, s1
    out[1, 3], out[1, 4], out[1, 5] = s2, 0.0, -s0
    out[2, 3], out[2, 4], out[2, 5] = -s1, s0, 0.0
    for r in range(3):
        for col in range(3):
            out[3 + r, col] = out[col, 3 + r]
            out[3 + r, 3 + col] = m if r == col else 0.0


@jit
def generalized_inertia_matrix(ints, kin, M_tilde, out):
    """Write the GIM ``i_ij = i_ji = p_i^T M~_i B_ij p_j`` into ``out`` (Saha Eq. 24)."""
    n = ints.shape[0]
    C, p = kin[:, _C:_C + 3], kin[:, _P:_P + 6]
    for i in range(n):
        for j in range(n):
            out[i, j] = 0.0
    for i in range(n):
        # psi_i = M~_i p_i, a wrench at C_i; B_ij^T moves it to C_j.
        s0, s1, s2, f0, f1, f2 = composite_times(M_tilde, i, p[i])
        j = i
        while j >= 0:
            x0, x1, x2 = cross(C[j, 0] - C[i, 0], C[j, 1] - C[i, 1], C[j, 2] - C[i, 2],
                               f0, f1, f2)
            value = (p[j, 0] * (s0 - x0) + p[j, 1] * (s1 - x1) + p[j, 2] * (s2 - x2)
                     + p[j, 3] * f0 + p[j, 4] * f1 + p[j, 5] * f2)
            out[i, j] = value
            out[j, i] = value
            j = ints[j, PARENT]


@jit
def mass_matrix_state(ints, reals, q, kin, M_tilde, out):
    """Write ``M(q)`` (Saha Eq. 24) of one state into ``out`` (n, n)."""
    body_kinematics(ints, reals, q, kin, True)
    composite_mass_matrices(ints, reals, kin, M_tilde)
    generalized_inertia_matrix(ints, kin, M_tilde, out)


@jit
def mass_matrix_one(ints, reals, q, out):
    """Write ``M(q)`` (Saha Eq. 24) into ``out`` (n, n); return a status."""
    n = ints.shape[0]
    if not (q.shape[0] == n and all_finite(q)):
        return BAD_INPUT
    mass_matrix_state(ints, reals, q, np.empty((n, KIN_WIDTH)), np.empty((n, MT_WIDTH)), out)
    return OK if all_finite(out) else BAD_OUTPUT


@jit
def mass_matrix_batch(ints, reals, q, out):
    """Write ``M(q)`` (Saha Eq. 24) of each row of ``q`` (B, n) into ``out`` (B, n, n)."""
    n = ints.shape[0]
    kin, M_tilde = np.empty((n, KIN_WIDTH)), np.empty((n, MT_WIDTH))
    for b in range(q.shape[0]):
        mass_matrix_state(ints, reals, q[b], kin, M_tilde, out[b])
    return OK if all_finite(out) else BAD_OUTPUT


# ----------------------------------------------------------------------------------------------
# Forward dynamics (forward_dynamics.py)

# Columns of the articulated-body buffer ``ab`` (n, AB_WIDTH): kappa_i, psi_i, m^_i, phi_i.
_KAPPA, _PSI, _MHAT, _PHI = 0, 6, 12, 13
AB_WIDTH = 14


@jit
def articulated_body_state(ints, reals, q, qd, tau, fext, kin, mot, M_hat, T, ab, qdd):
    """Write ``qdd`` by the O(n) articulated-body (UDU^T) recursion; return a status."""
    n = ints.shape[0]
    body_kinematics(ints, reals, q, kin, True)
    t, t_dot, eta = mot_views(mot)
    twists(ints, kin, qd, t)
    C, p, inertia = kin[:, _C:_C + 3], kin[:, _P:_P + 6], kin[:, _I:_I + 9]
    kappa, psi = ab[:, _KAPPA:_KAPPA + 6], ab[:, _PSI:_PSI + 6]
    for i in range(n):
        body_mass_matrix(reals[i, MASS], inertia, i, M_hat[i])
        # eta_i = Omega_i M_i E_i t_i - w^E_i (Eq. 7-8 and the external wrench).
        w0, w1, w2 = t[i, 0], t[i, 1], t[i, 2]
        Iw0 = inertia[i, 0] * w0 + inertia[i, 1] * w1 + inertia[i, 2] * w2
        Iw1 = inertia[i, 3] * w0 + inertia[i, 4] * w1 + inertia[i, 5] * w2
        Iw2 = inertia[i, 6] * w0 + inertia[i, 7] * w1 + inertia[i, 8] * w2
        eta[i, 0], eta[i, 1], eta[i, 2] = cross(w0, w1, w2, Iw0, Iw1, Iw2)
        eta[i, 3], eta[i, 4], eta[i, 5] = 0.0, 0.0, 0.0
        if fext.shape[0] > 0:
            subtract_external_wrench(kin, fext, i, eta)
        # kappa_i = B_dot_ik t_k + Omega_i p_i qd_i (Saha Eq. 12, differentiated).
        u0, u1, u2 = cross(w0, w1, w2, p[i, 0], p[i, 1], p[i, 2])
        v0, v1, v2 = cross(w0, w1, w2, p[i, 3], p[i, 4], p[i, 5])
        kappa[i, 0], kappa[i, 1], kappa[i, 2] = u0 * qd[i], u1 * qd[i], u2 * qd[i]
        kappa[i, 3], kappa[i, 4], kappa[i, 5] = v0 * qd[i], v1 * qd[i], v2 * qd[i]
        k = ints[i, PARENT]
        if k >= 0:
            x0, x1, x2 = cross(t[k, 3] - t[i, 3], t[k, 4] - t[i, 4], t[k, 5] - t[i, 5],
                               t[k, 0], t[k, 1], t[k, 2])
            kappa[i, 3] += x0
            kappa[i, 4] += x1
            kappa[i, 5] += x2
    singular = -1
    for i in range(n - 1, -1, -1):
        # psi_i = M^_i p_i, m^_i = p_i^T psi_i, phi_i = tau_i - p_i^T eta^_i.
        Mi = M_hat[i]
        psi[i, 0], psi[i, 1], psi[i, 2], psi[i, 3], psi[i, 4], psi[i, 5] = mat6_vec(Mi, p[i])
        m_hat = 0.0
        phi = tau[i]
        largest = 0.0
        for r in range(6):
            m_hat += p[i, r] * psi[i, r]
            phi -= p[i, r] * eta[i, r]
            for col in range(6):
                largest = max(largest, abs(Mi[r, col]))
        if not m_hat > 1e-12 * largest:
            singular = i
            break
        ab[i, _MHAT] = m_hat
        ab[i, _PHI] = phi
        k = ints[i, PARENT]
        if k >= 0:
            # M_bar = M^_i - psi psi^T / m^_i; eta_bar = eta^_i + M_bar kappa_i + psi phi / m^.
            for r in range(6):
                u = psi[i, r] / m_hat
                for col in range(6):
                    Mi[r, col] -= u * psi[i, col]
            e0, e1, e2, e3, e4, e5 = mat6_vec(Mi, kappa[i])
            s = phi / m_hat
            e0 += eta[i, 0] + psi[i, 0] * s
            e1 += eta[i, 1] + psi[i, 1] * s
            e2 += eta[i, 2] + psi[i, 2] * s
            e3 += eta[i, 3] + psi[i, 3] * s
            e4 += eta[i, 4] + psi[i, 4] * s
            e5 += eta[i, 5] + psi[i, 5] * s
            c0, c1, c2 = C[k, 0] - C[i, 0], C[k, 1] - C[i, 1], C[k, 2] - C[i, 2]
            # M^_k += B_ik^T M_bar B_ik, eta^_k += B_ik^T eta_bar.
            congruence_add(Mi, c0, c1, c2, T, M_hat[k])
            x0, x1, x2 = cross(c0, c1, c2, e3, e4, e5)
            eta[k, 0] += e0 - x0
            eta[k, 1] += e1 - x1
            eta[k, 2] += e2 - x2
            eta[k, 3] += e3
            eta[k, 4] += e4
            eta[k, 5] += e5
    if singular >= 0:
        return SINGULAR + singular
    g0, g1, g2 = reals[n, GRAVITY], reals[n, GRAVITY + 1], reals[n, GRAVITY + 2]
    for i in range(n):
        # a = B_ik t_dot_k + kappa_i (base: [0; -g]); qdd_i = (phi_i - psi_i^T a) / m^_i.
        k = ints[i, PARENT]
        if k < 0:
            a0, a1, a2, a3, a4, a5 = 0.0, 0.0, 0.0, -g0, -g1, -g2
        else:
            x0, x1, x2 = cross(C[k, 0] - C[i, 0], C[k, 1] - C[i, 1], C[k, 2] - C[i, 2],
                               t_dot[k, 0], t_dot[k, 1], t_dot[k, 2])
            a0, a1, a2 = t_dot[k, 0], t_dot[k, 1], t_dot[k, 2]
            a3, a4, a5 = t_dot[k, 3] + x0, t_dot[k, 4] + x1, t_dot[k, 5] + x2
        a0 += kappa[i, 0]
        a1 += kappa[i, 1]
        a2 += kappa[i, 2]
        a3 += kappa[i, 3]
        a4 += kappa[i, 4]
        a5 += kappa[i, 5]
        x = (ab[i, _PHI] - (psi[i, 0] * a0 + psi[i, 1] * a1 + psi[i, 2] * a2 + psi[i, 3] * a3
                            + psi[i, 4] * a4 + psi[i, 5] * a5)) / ab[i, _MHAT]
        qdd[i] = x
        t_dot[i, 0], t_dot[i, 1], t_dot[i, 2] = a0 + p[i, 0] * x, a1 + p[i, 1] * x, \
            a2 + p[i, 2] * x
        t_dot[i, 3], t_dot[i, 4], t_dot[i, 5] = a3 + p[i, 3] * x, a4 + p[i, 4] * x, \
            a5 + p[i, 5] * x
    return OK


@jit
def forward_dynamics_one(ints, reals, q, qd, tau, fext, out):
    """Write ``qdd`` (O(n), Saha's UDU^T) of one state into ``out``; return a status."""
    n = ints.shape[0]
    if not (q.shape[0] == n and qd.shape[0] == n and tau.shape[0] == n
            and (fext.shape[0] == 0 or (fext.shape[0] == n and fext.shape[1] == 6))
            and all_finite(q) and all_finite(qd) and all_finite(tau) and all_finite(fext)):
        return BAD_INPUT
    status = articulated_body_state(ints, reals, q, qd, tau, fext, np.empty((n, KIN_WIDTH)),
                                    np.empty((n, MOT_WIDTH)), np.empty((n, 6, 6)),
                                    np.empty((6, 6)), np.empty((n, AB_WIDTH)), out)
    if status != OK:
        return status
    return OK if all_finite(out) else BAD_OUTPUT


@jit
def forward_dynamics_batch(ints, reals, q, qd, tau, fext, out):
    """Write ``qdd`` of each row of (B, n) states into ``out``; the singular joint wins."""
    n = ints.shape[0]
    kin, mot = np.empty((n, KIN_WIDTH)), np.empty((n, MOT_WIDTH))
    M_hat, T, ab = np.empty((n, 6, 6)), np.empty((6, 6)), np.empty((n, AB_WIDTH))
    none = np.zeros((0, 6))
    singular = -1
    for b in range(q.shape[0]):
        status = articulated_body_state(ints, reals, q[b], qd[b], tau[b],
                                        fext[b] if fext.shape[0] > 0 else none, kin, mot,
                                        M_hat, T, ab, out[b])
        if status != OK:
            # The NumPy recursion checks joints from the last one down across the whole batch.
            singular = max(singular, status - SINGULAR)
    if singular >= 0:
        return SINGULAR + singular
    return OK if all_finite(out) else BAD_OUTPUT


@jit
def prediction_one(ints, reals, q, qd, tau, horizon, steps, out):
    """
    Write the state after ``horizon`` s under constant ``tau`` into ``out`` (3, n): q, qd, qdd.

    ``steps`` classical Runge-Kutta steps of ``horizon / steps`` on Craig's state-space form
    ``[q; qd]' = [qd; FD(q, qd, tau)]`` (the operations of ``simulation._rk4``), then ``qdd =
    FD`` at the end state. Returns a status (``SINGULAR + i`` from the forward dynamics).
    """
    n = ints.shape[0]
    if not (q.shape[0] == n and qd.shape[0] == n and tau.shape[0] == n and out.shape[0] == 3
            and out.shape[1] == n and steps >= 0 and math.isfinite(horizon)
            and all_finite(q) and all_finite(qd) and all_finite(tau)):
        return BAD_INPUT
    kin, mot = np.empty((n, KIN_WIDTH)), np.empty((n, MOT_WIDTH))
    M_hat, T, ab = np.empty((n, 6, 6)), np.empty((6, 6)), np.empty((n, AB_WIDTH))
    # Rows: x, v, then the stages x2, v2, x3, v3, x4, v4 and accelerations a1 .. a4.
    w = np.empty((12, n))
    x, v = w[0], w[1]
    x2, v2, x3, v3, x4, v4 = w[2], w[3], w[4], w[5], w[6], w[7]
    a1, a2, a3, a4 = w[8], w[9], w[10], w[11]
    x[:] = q
    v[:] = qd
    h = horizon / steps if steps > 0 else 0.0
    stages = ((x, v, a1, 0.0), (x2, v2, a2, 0.5 * h), (x3, v3, a3, 0.5 * h), (x4, v4, a4, h))
    for _ in range(steps):
        # Stage k starts from [x; v] + c_k h * (the previous stage's [v; a]), c = 0, 1/2, 1/2, 1.
        for k in range(4):
            xs, vs, acc, step = stages[k]
            if k > 0:
                v_prev, a_prev = stages[k - 1][1], stages[k - 1][2]
                for i in range(n):
                    xs[i] = x[i] + step * v_prev[i]
                    vs[i] = v[i] + step * a_prev[i]
            status = articulated_body_state(ints, reals, xs, vs, tau, NO_WRENCH, kin, mot,
                                            M_hat, T, ab, acc)
            if status != OK:
                return status
        for i in range(n):
            x[i] = x[i] + h / 6.0 * (v[i] + 2.0 * v2[i] + 2.0 * v3[i] + v4[i])
            v[i] = v[i] + h / 6.0 * (a1[i] + 2.0 * a2[i] + 2.0 * a3[i] + a4[i])
    out[0, :] = x
    out[1, :] = v
    status = articulated_body_state(ints, reals, x, v, tau, NO_WRENCH, kin, mot, M_hat, T, ab,
                                    out[2])
    if status != OK:
        return status
    return OK if all_finite(out) else BAD_OUTPUT


# ----------------------------------------------------------------------------------------------
# Christoffel-consistent Coriolis matrix (coriolis.py, Echeandia & Wensing 2021)

# Columns of the spatial buffer ``sp`` (n, SP_WIDTH): screws S_j, their rates S_dot_j = v_j x S_j,
# twists v_j at the base-frame origin.
_S, _SD, _V = 0, 6, 12
SP_WIDTH = 18


@jit
def spatial_inertia_terms(reals, kin, t, i, v, I6, K):
    """Write ``I_i`` at the base origin and ``K_i = 1/2 [(v x*) I + (I v) xbar* - I (v x)]``."""
    C, inertia = kin[:, _C:_C + 3], kin[:, _I:_I + 9]
    m = reals[i, MASS]
    c0, c1, c2 = C[i, 0], C[i, 1], C[i, 2]
    # I_i = [[I_C + m Cx Cx^T, m Cx], [m Cx^T, m 1]], Cx = C x 1, Cx Cx^T = |C|^2 1 - C C^T.
    cc = c0 * c0 + c1 * c1 + c2 * c2
    for r in range(3):
        for col in range(3):
            I6[r, col] = inertia[i, 3 * r + col] + m * ((cc if r == col else 0.0)
                                                        - C[i, r] * C[i, col])
            I6[3 + r, 3 + col] = m if r == col else 0.0
    I6[0, 3], I6[0, 4], I6[0, 5] = 0.0, -m * c2, m * c1
    I6[1, 3], I6[1, 4], I6[1, 5] = m * c2, 0.0, -m * c0
    I6[2, 3], I6[2, 4], I6[2, 5] = -m * c1, m * c0, 0.0
    for r in range(3):
        for col in range(3):
            I6[3 + r, col] = I6[col, 3 + r]
    # v_i = [w; v_C + C x w], the twist at the origin.
    w0, w1, w2 = t[i, 0], t[i, 1], t[i, 2]
    x0, x1, x2 = cross(c0, c1, c2, w0, w1, w2)
    v[0], v[1], v[2], v[3], v[4], v[5] = w0, w1, w2, t[i, 3] + x0, t[i, 4] + x1, t[i, 5] + x2
    # With v x = X = [[W, 0], [V, W]] and v x* = -X^T: (v x*) I - I (v x) = -(P + P^T),
    # P = I X (I is symmetric); row r of P is [I_r,ang x w + I_r,lin x v_O, I_r,lin x w].
    for r in range(6):
        a0, a1, a2 = cross(I6[r, 0], I6[r, 1], I6[r, 2], w0, w1, w2)
        b0, b1, b2 = cross(I6[r, 3], I6[r, 4], I6[r, 5], v[3], v[4], v[5])
        K[r, 0], K[r, 1], K[r, 2] = a0 + b0, a1 + b1, a2 + b2
        K[r, 3], K[r, 4], K[r, 5] = cross(I6[r, 3], I6[r, 4], I6[r, 5], w0, w1, w2)
    for r in range(6):
        for col in range(r, 6):
            s = -0.5 * (K[r, col] + K[col, r])
            K[r, col] = s
            K[col, r] = s
    # + 1/2 (h xbar*), (h xbar*) = [[-h_n x 1, -h_f x 1], [-h_f x 1, 0]], h = I_i v_i.
    h0, h1, h2, h3, h4, h5 = mat6_vec(I6, v)
    h0, h1, h2, h3, h4, h5 = 0.5 * h0, 0.5 * h1, 0.5 * h2, 0.5 * h3, 0.5 * h4, 0.5 * h5
    K[0, 1] += h2
    K[0, 2] -= h1
    K[1, 0] -= h2
    K[1, 2] += h0
    K[2, 0] += h1
    K[2, 1] -= h0
    for o, p in ((0, 3), (3, 0)):
        K[o + 0, p + 1] += h5
        K[o + 0, p + 2] -= h4
        K[o + 1, p + 0] -= h5
        K[o + 1, p + 2] += h3
        K[o + 2, p + 0] += h4
        K[o + 2, p + 1] -= h3


@jit
def christoffel_state(ints, reals, q, qd, kin, mot, sp, I_c, K_c, out):
    """Write ``C = sum_i J_i^T (I_i J_dot_i + K_i J_i)`` by composite bodies into ``out``."""
    n = ints.shape[0]
    body_kinematics(ints, reals, q, kin, True)
    t = mot[:, _T:_T + 6]
    twists(ints, kin, qd, t)
    origin, e = kin[:, _O:_O + 3], kin[:, _E:_E + 3]
    S, S_dot, v = sp[:, _S:_S + 6], sp[:, _SD:_SD + 6], sp[:, _V:_V + 6]
    for i in range(n):
        # Joint screw S_i = [e; O x e] (revolute) or [0; e] (prismatic), at the base origin.
        if ints[i, JOINT_TYPE] == PRISMATIC:
            S[i, 0], S[i, 1], S[i, 2] = 0.0, 0.0, 0.0
            S[i, 3], S[i, 4], S[i, 5] = e[i, 0], e[i, 1], e[i, 2]
        else:
            S[i, 0], S[i, 1], S[i, 2] = e[i, 0], e[i, 1], e[i, 2]
            S[i, 3], S[i, 4], S[i, 5] = cross(origin[i, 0], origin[i, 1], origin[i, 2],
                                              e[i, 0], e[i, 1], e[i, 2])
        spatial_inertia_terms(reals, kin, t, i, v[i], I_c[i], K_c[i])
        # S_dot_i = v_i x S_i = [w x S_ang; v_O x S_ang + w x S_lin].
        w0, w1, w2 = v[i, 0], v[i, 1], v[i, 2]
        S_dot[i, 0], S_dot[i, 1], S_dot[i, 2] = cross(w0, w1, w2, S[i, 0], S[i, 1], S[i, 2])
        x0, x1, x2 = cross(v[i, 3], v[i, 4], v[i, 5], S[i, 0], S[i, 1], S[i, 2])
        y0, y1, y2 = cross(w0, w1, w2, S[i, 3], S[i, 4], S[i, 5])
        S_dot[i, 3], S_dot[i, 4], S_dot[i, 5] = x0 + y0, x1 + y1, x2 + y2
    # Composite sums over subtrees (every quantity is at the base origin).
    for i in range(n - 1, -1, -1):
        k = ints[i, PARENT]
        if k >= 0:
            for r in range(6):
                for col in range(6):
                    I_c[k, r, col] += I_c[i, r, col]
                    K_c[k, r, col] += K_c[i, r, col]
    for i in range(n):
        for j in range(n):
            out[i, j] = 0.0
    for i in range(n):
        # Row i, columns j = i, parent(i), ...: S_i^T (I^c_i S_dot_j + K^c_i S_j), with the
        # row vectors a = I^c_i S_i and b = K^c_i^T S_i (I^c_i is symmetric).
        a0 = a1 = a2 = a3 = a4 = a5 = 0.0
        b0 = b1 = b2 = b3 = b4 = b5 = 0.0
        for r in range(6):
            s = S[i, r]
            a0 += s * I_c[i, r, 0]
            a1 += s * I_c[i, r, 1]
            a2 += s * I_c[i, r, 2]
            a3 += s * I_c[i, r, 3]
            a4 += s * I_c[i, r, 4]
            a5 += s * I_c[i, r, 5]
            b0 += s * K_c[i, r, 0]
            b1 += s * K_c[i, r, 1]
            b2 += s * K_c[i, r, 2]
            b3 += s * K_c[i, r, 3]
            b4 += s * K_c[i, r, 4]
            b5 += s * K_c[i, r, 5]
        j = i
        while j >= 0:
            out[i, j] = (a0 * S_dot[j, 0] + a1 * S_dot[j, 1] + a2 * S_dot[j, 2]
                         + a3 * S_dot[j, 3] + a4 * S_dot[j, 4] + a5 * S_dot[j, 5]
                         + b0 * S[j, 0] + b1 * S[j, 1] + b2 * S[j, 2]
                         + b3 * S[j, 3] + b4 * S[j, 4] + b5 * S[j, 5])
            j = ints[j, PARENT]
        # Column i, rows of the proper ancestors: S_a^T (I^c_i S_dot_i + K^c_i S_i).
        j = ints[i, PARENT]
        if j >= 0:
            f = mat6_vec(I_c[i], S_dot[i])
            g = mat6_vec(K_c[i], S[i])
            f0, f1, f2 = f[0] + g[0], f[1] + g[1], f[2] + g[2]
            f3, f4, f5 = f[3] + g[3], f[4] + g[4], f[5] + g[5]
            while j >= 0:
                out[j, i] = (S[j, 0] * f0 + S[j, 1] * f1 + S[j, 2] * f2
                             + S[j, 3] * f3 + S[j, 4] * f4 + S[j, 5] * f5)
                j = ints[j, PARENT]


@jit
def coriolis_matrix_one(ints, reals, q, qd, out):
    """Write the Christoffel Coriolis matrix of one state into ``out``; return a status."""
    n = ints.shape[0]
    if not (q.shape[0] == n and qd.shape[0] == n and all_finite(q) and all_finite(qd)):
        return BAD_INPUT
    christoffel_state(ints, reals, q, qd, np.empty((n, KIN_WIDTH)), np.empty((n, MOT_WIDTH)),
                      np.empty((n, SP_WIDTH)), np.empty((n, 6, 6)), np.empty((n, 6, 6)), out)
    return OK if all_finite(out) else BAD_OUTPUT


@jit
def coriolis_matrix_batch(ints, reals, q, qd, out):
    """Write the Christoffel Coriolis matrix of each row of (B, n) states into ``out``."""
    n = ints.shape[0]
    kin, mot, sp = np.empty((n, KIN_WIDTH)), np.empty((n, MOT_WIDTH)), np.empty((n, SP_WIDTH))
    I_c, K_c = np.empty((n, 6, 6)), np.empty((n, 6, 6))
    for b in range(q.shape[0]):
        christoffel_state(ints, reals, q[b], qd[b], kin, mot, sp, I_c, K_c, out[b])
    return OK if all_finite(out) else BAD_OUTPUT


# ----------------------------------------------------------------------------------------------
# Saha's convective inertia matrix (coriolis.py, Eq. 20, 25-29 corrected)


@jit
def convective_state(ints, reals, q, qd, kin, mot, M_compact, M_tilde, M_prime, H, T, out):
    """Write Saha's ``C = N^T (M N_dot + M_dot N)``, entries of (corrected) Eq. 29."""
    n = ints.shape[0]
    body_kinematics(ints, reals, q, kin, True)
    t, p_dot = mot[:, _T:_T + 6], mot[:, _TD:_TD + 6]
    twists(ints, kin, qd, t)
    C, p, inertia = kin[:, _C:_C + 3], kin[:, _P:_P + 6], kin[:, _I:_I + 9]
    composite_mass_matrices(ints, reals, kin, M_compact)
    for i in range(n):
        expand_composite(M_compact, i, M_tilde[i])
        # M'_i = Omega_i M_i E_i = [[w_i x I_i, 0], [0, 0]] (Eq. 8); Omega_j p_j (Eq. 26).
        w0, w1, w2 = t[i, 0], t[i, 1], t[i, 2]
        for r in range(6):
            for col in range(6):
                M_prime[i, r, col] = 0.0
                H[i, r, col] = 0.0
        for col in range(3):
            M_prime[i, 0, col], M_prime[i, 1, col], M_prime[i, 2, col] = cross(
                w0, w1, w2, inertia[i, col], inertia[i, 3 + col], inertia[i, 6 + col])
        p_dot[i, 0], p_dot[i, 1], p_dot[i, 2] = cross(w0, w1, w2, p[i, 0], p[i, 1], p[i, 2])
        p_dot[i, 3], p_dot[i, 4], p_dot[i, 5] = cross(w0, w1, w2, p[i, 3], p[i, 4], p[i, 5])
    for c in range(n - 1, -1, -1):
        i = ints[c, PARENT]
        if i >= 0:
            # M'~_i += M'~_c (Eq. 28); H_i += B_ci^T H~_ci, H~_ci = M~_c B_dot_ci + H_c B_ci.
            for r in range(6):
                for col in range(6):
                    M_prime[i, r, col] += M_prime[c, r, col]
            b0, b1, b2 = C[i, 0] - C[c, 0], C[i, 1] - C[c, 1], C[i, 2] - C[c, 2]
            d0, d1, d2 = t[i, 3] - t[c, 3], t[i, 4] - t[c, 4], t[i, 5] - t[c, 5]
            for r in range(6):
                x0, x1, x2 = cross(M_tilde[c, r, 3], M_tilde[c, r, 4], M_tilde[c, r, 5],
                                   d0, d1, d2)
                y0, y1, y2 = cross(H[c, r, 3], H[c, r, 4], H[c, r, 5], b0, b1, b2)
                T[r, 0] = x0 + H[c, r, 0] + y0
                T[r, 1] = x1 + H[c, r, 1] + y1
                T[r, 2] = x2 + H[c, r, 2] + y2
                T[r, 3], T[r, 4], T[r, 5] = H[c, r, 3], H[c, r, 4], H[c, r, 5]
            left_transpose_add(T, b0, b1, b2, H[i])
    for i in range(n):
        for j in range(n):
            out[i, j] = 0.0
    for i in range(n):
        # Row i, columns j = i, parent(i), ...: p_i^T (M~_i B_ij Omega_j + H~_ij + M'~_i) p_j.
        j = i
        while j >= 0:
            c0, c1, c2 = C[j, 0] - C[i, 0], C[j, 1] - C[i, 1], C[j, 2] - C[i, 2]
            x0, x1, x2 = cross(c0, c1, c2, p[j, 0], p[j, 1], p[j, 2])
            s = (p[j, 0], p[j, 1], p[j, 2], p[j, 3] + x0, p[j, 4] + x1, p[j, 5] + x2)
            x0, x1, x2 = cross(c0, c1, c2, p_dot[j, 0], p_dot[j, 1], p_dot[j, 2])
            y0, y1, y2 = cross(t[j, 3] - t[i, 3], t[j, 4] - t[i, 4], t[j, 5] - t[i, 5],
                               p[j, 0], p[j, 1], p[j, 2])
            s_dot = (p_dot[j, 0], p_dot[j, 1], p_dot[j, 2], p_dot[j, 3] + x0 + y0,
                     p_dot[j, 4] + x1 + y1, p_dot[j, 5] + x2 + y2)
            value = 0.0
            for r in range(6):
                wr = 0.0
                for col in range(6):
                    wr += (M_tilde[i, r, col] * s_dot[col]
                           + (H[i, r, col] + M_prime[i, r, col]) * s[col])
                value += p[i, r] * wr
            out[i, j] = value
            j = ints[j, PARENT]
        # Column i, rows a of the proper ancestors: p_a^T B_ia^T (M~_i Omega_i + H_i + M'~_i) p_i.
        a = ints[i, PARENT]
        if a >= 0:
            x = mat6_vec(M_tilde[i], p_dot[i])
            y = mat6_vec(H[i], p[i])
            z = mat6_vec(M_prime[i], p[i])
            n0, n1, n2 = x[0] + y[0] + z[0], x[1] + y[1] + z[1], x[2] + y[2] + z[2]
            f0, f1, f2 = x[3] + y[3] + z[3], x[4] + y[4] + z[4], x[5] + y[5] + z[5]
            while a >= 0:
                x0, x1, x2 = cross(C[a, 0] - C[i, 0], C[a, 1] - C[i, 1], C[a, 2] - C[i, 2],
                                   f0, f1, f2)
                out[a, i] = (p[a, 0] * (n0 - x0) + p[a, 1] * (n1 - x1) + p[a, 2] * (n2 - x2)
                             + p[a, 3] * f0 + p[a, 4] * f1 + p[a, 5] * f2)
                a = ints[a, PARENT]


@jit
def convective_inertia_matrix_one(ints, reals, q, qd, out):
    """Write Saha's convective inertia matrix of one state into ``out``; return a status."""
    n = ints.shape[0]
    if not (q.shape[0] == n and qd.shape[0] == n and all_finite(q) and all_finite(qd)):
        return BAD_INPUT
    convective_state(ints, reals, q, qd, np.empty((n, KIN_WIDTH)), np.empty((n, MOT_WIDTH)),
                     np.empty((n, MT_WIDTH)), np.empty((n, 6, 6)), np.empty((n, 6, 6)),
                     np.empty((n, 6, 6)), np.empty((6, 6)), out)
    return OK if all_finite(out) else BAD_OUTPUT


@jit
def convective_inertia_matrix_batch(ints, reals, q, qd, out):
    """Write Saha's convective inertia matrix of each row of (B, n) states into ``out``."""
    n = ints.shape[0]
    kin, mot = np.empty((n, KIN_WIDTH)), np.empty((n, MOT_WIDTH))
    M_tilde, M_prime, H = np.empty((n, 6, 6)), np.empty((n, 6, 6)), np.empty((n, 6, 6))
    M_compact, T = np.empty((n, MT_WIDTH)), np.empty((6, 6))
    for b in range(q.shape[0]):
        convective_state(ints, reals, q[b], qd[b], kin, mot, M_compact, M_tilde, M_prime, H, T,
                         out[b])
    return OK if all_finite(out) else BAD_OUTPUT


# ----------------------------------------------------------------------------------------------
# Frame Jacobian and J-dot qd (cartesian.py)


@jit
def frame_origin(kin, body, frame):
    """Return the origin p = O_b + R_b t_f of a frame on body ``body`` (-1: the base)."""
    t0, t1, t2 = frame[9], frame[10], frame[11]
    if body < 0:
        return t0, t1, t2
    R, origin = kin[:, _R:_R + 9], kin[:, _O:_O + 3]
    return (origin[body, 0] + R[body, 0] * t0 + R[body, 1] * t1 + R[body, 2] * t2,
            origin[body, 1] + R[body, 3] * t0 + R[body, 4] * t1 + R[body, 5] * t2,
            origin[body, 2] + R[body, 6] * t0 + R[body, 7] * t1 + R[body, 8] * t2)


@jit
def jacobian_state(ints, kin, body, frame, J):
    """Write J (6, n): columns [e_j x (p - O_j); e_j] or [e_j; 0] on the path, else 0."""
    n = ints.shape[0]
    origin, e = kin[:, _O:_O + 3], kin[:, _E:_E + 3]
    for r in range(6):
        for j in range(n):
            J[r, j] = 0.0
    p0, p1, p2 = frame_origin(kin, body, frame)
    j = body
    while j >= 0:
        if ints[j, JOINT_TYPE] == PRISMATIC:
            J[0, j], J[1, j], J[2, j] = e[j, 0], e[j, 1], e[j, 2]
        else:
            J[0, j], J[1, j], J[2, j] = cross(e[j, 0], e[j, 1], e[j, 2], p0 - origin[j, 0],
                                              p1 - origin[j, 1], p2 - origin[j, 2])
            J[3, j], J[4, j], J[5, j] = e[j, 0], e[j, 1], e[j, 2]
        j = ints[j, PARENT]


@jit
def jacobian_dot_times_qd_state(ints, kin, t, qd, body, frame, out):
    """Write Jdot qd (6,): sum over the path of qd_j d/dt of column j (seed 001)."""
    for r in range(6):
        out[r] = 0.0
    if body < 0:
        return
    origin, e = kin[:, _O:_O + 3], kin[:, _E:_E + 3]
    d, C = kin[:, _D:_D + 3], kin[:, _C:_C + 3]
    p0, p1, p2 = frame_origin(kin, body, frame)
    # Velocity of the frame origin: v_p = v_Cb + w_b x (p - C_b).
    x0, x1, x2 = cross(t[body, 0], t[body, 1], t[body, 2], p0 - C[body, 0], p1 - C[body, 1],
                       p2 - C[body, 2])
    vp0, vp1, vp2 = t[body, 3] + x0, t[body, 4] + x1, t[body, 5] + x2
    j = body
    while j >= 0:
        w0, w1, w2 = t[j, 0], t[j, 1], t[j, 2]
        ed0, ed1, ed2 = cross(w0, w1, w2, e[j, 0], e[j, 1], e[j, 2])        # e_dot = w x e
        if ints[j, JOINT_TYPE] == PRISMATIC:
            out[0] += ed0 * qd[j]
            out[1] += ed1 * qd[j]
            out[2] += ed2 * qd[j]
        else:
            x0, x1, x2 = cross(w0, w1, w2, d[j, 0], d[j, 1], d[j, 2])
            # v_p - v_Oj, v_Oj = v_Cj - w_j x d_j.
            u0, u1, u2 = vp0 - t[j, 3] + x0, vp1 - t[j, 4] + x1, vp2 - t[j, 5] + x2
            a0, a1, a2 = cross(ed0, ed1, ed2, p0 - origin[j, 0], p1 - origin[j, 1],
                               p2 - origin[j, 2])
            b0, b1, b2 = cross(e[j, 0], e[j, 1], e[j, 2], u0, u1, u2)
            out[0] += (a0 + b0) * qd[j]
            out[1] += (a1 + b1) * qd[j]
            out[2] += (a2 + b2) * qd[j]
            out[3] += ed0 * qd[j]
            out[4] += ed1 * qd[j]
            out[5] += ed2 * qd[j]
        j = ints[j, PARENT]


@jit
def jacobian_one(ints, reals, q, body, frame, out):
    """Write the frame Jacobian (6, n) of one state into ``out``; return a status."""
    n = ints.shape[0]
    if not (q.shape[0] == n and all_finite(q)):
        return BAD_INPUT
    kin = np.empty((n, KIN_WIDTH))
    body_kinematics(ints, reals, q, kin, False)
    jacobian_state(ints, kin, body, frame, out)
    return OK if all_finite(out) else BAD_OUTPUT


@jit
def jacobian_batch(ints, reals, q, body, frame, out):
    """Write the frame Jacobian of each row of ``q`` (B, n) into ``out`` (B, 6, n)."""
    kin = np.empty((ints.shape[0], KIN_WIDTH))
    for b in range(q.shape[0]):
        body_kinematics(ints, reals, q[b], kin, False)
        jacobian_state(ints, kin, body, frame, out[b])
    return OK if all_finite(out) else BAD_OUTPUT


@jit
def jacobian_dot_times_qd_batch(ints, reals, q, qd, body, frame, out):
    """Write Jdot qd (6,) of each row of (B, n) states into ``out`` (B, 6)."""
    n = ints.shape[0]
    kin, t = np.empty((n, KIN_WIDTH)), np.empty((n, 6))
    for b in range(q.shape[0]):
        body_kinematics(ints, reals, q[b], kin, False)
        twists(ints, kin, qd[b], t)
        jacobian_dot_times_qd_state(ints, kin, t, qd[b], body, frame, out[b])
    return OK if all_finite(out) else BAD_OUTPUT


@jit
def cartesian_terms_batch(ints, reals, q, qd, body, frame, J, Jdqd, M, h, g):
    """Write J, Jdot qd, M (Eq. 24), C qd and g (Eq. 30) of each row of (B, n) states."""
    n = ints.shape[0]
    kin, mot = np.empty((n, KIN_WIDTH)), np.empty((n, MOT_WIDTH))
    M_tilde = np.empty((n, MT_WIDTH))
    zero, none = np.zeros(n), np.zeros((0, 6))
    for b in range(q.shape[0]):
        # newton_euler_state recomputes the kinematics of q[b]; the rest reuse them.
        newton_euler_state(ints, reals, q[b], zero, zero, none, 1.0, kin, mot, g[b])
        newton_euler_state(ints, reals, q[b], qd[b], zero, none, 0.0, kin, mot, h[b])
        jacobian_state(ints, kin, body, frame, J[b])
        jacobian_dot_times_qd_state(ints, kin, mot[:, _T:_T + 6], qd[b], body, frame, Jdqd[b])
        composite_mass_matrices(ints, reals, kin, M_tilde)
        generalized_inertia_matrix(ints, kin, M_tilde, M[b])
    if all_finite(J) and all_finite(Jdqd) and all_finite(M) and all_finite(h) \
            and all_finite(g):
        return OK
    return BAD_OUTPUT


# ----------------------------------------------------------------------------------------------
# Operational-space dynamics (cartesian.py: Lambda, mu, p, J_bar)

EPS = np.finfo(np.float64).eps
CONDITION_CAP = 1.0 / EPS ** 2


@jit
def operational_space_state(J, Jdqd, M, h, g, damping, rcond, L, Y, Lam, J_bar, mu, p):
    """Write Lambda = (J M^-1 J^T)^+ (or damped), J_bar, mu, p; return (status, cond)."""
    n = M.shape[0]
    # M = L L^T (Cholesky; LAPACK potrf's test: a pivot that is not > 0 fails).
    for j in range(n):
        s = M[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return NOT_POSITIVE_DEFINITE, 0.0
        L[j, j] = math.sqrt(s)
        for i in range(j + 1, n):
            s = M[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
            L[j, i] = 0.0
    # Y = L^-1 J^T (n, 6); A = J M^-1 J^T = Y^T Y = V S^2 V^T from the SVD Y = U S V^T.
    for col in range(6):
        for i in range(n):
            s = J[col, i]
            for k in range(i):
                s -= L[i, k] * Y[k, col]
            Y[i, col] = s / L[i, i]
    _, sv, Vt = np.linalg.svd(Y)
    m = sv.shape[0]
    s_max = sv[0] if m > 0 else 0.0
    lam_max = s_max * s_max
    inv = np.zeros(6)
    for k in range(m):
        lam = sv[k] * sv[k]
        if damping > 0.0:
            inv[k] = 1.0 / (lam + damping)
        elif lam > rcond * lam_max and lam > 0.0:
            inv[k] = 1.0 / lam
    if damping > 0.0:
        for k in range(m, 6):
            inv[k] = 1.0 / damping
    for i in range(6):
        for j in range(6):
            s = 0.0
            for k in range(6):
                s += Vt[k, i] * inv[k] * Vt[k, j]
            Lam[i, j] = s
    for i in range(6):
        for j in range(i + 1, 6):
            s = 0.5 * (Lam[i, j] + Lam[j, i])
            Lam[i, j] = s
            Lam[j, i] = s
    s_min = max(sv[5] if m == 6 else 0.0, EPS * s_max)
    if s_max > 0.0:
        cond = (s_max / (s_min if s_min > 0.0 else 1.0)) ** 2
        if cond > CONDITION_CAP:
            cond = CONDITION_CAP
    else:
        cond = CONDITION_CAP
    # J_bar = M^-1 J^T Lambda = L^-T (Y Lambda) (n, 6), by back substitution.
    for col in range(6):
        for i in range(n - 1, -1, -1):
            s = 0.0
            for k in range(6):
                s += Y[i, k] * Lam[k, col]
            for k in range(i + 1, n):
                s -= L[k, i] * J_bar[k, col]
            J_bar[i, col] = s / L[i, i]
    # mu = J_bar^T C qd - Lambda Jdot qd, p = J_bar^T g.
    for r in range(6):
        a = 0.0
        b = 0.0
        for i in range(n):
            a += J_bar[i, r] * h[i]
            b += J_bar[i, r] * g[i]
        for k in range(6):
            a -= Lam[r, k] * Jdqd[k]
        mu[r] = a
        p[r] = b
    return OK, cond


@jit
def cartesian_dynamics_batch(ints, reals, q, qd, body, frame, damping, rcond, J, Lam, mu, p,
                             J_bar, cond):
    """Write J, Lambda, mu, p, J_bar and cond(J M^-1 J^T) of each row of (B, n) states."""
    size, n = q.shape
    if not (all_finite(q) and all_finite(qd)):
        return BAD_INPUT
    Jdqd, M = np.empty((size, 6)), np.empty((size, n, n))
    h, g = np.empty((size, n)), np.empty((size, n))
    if cartesian_terms_batch(ints, reals, q, qd, body, frame, J, Jdqd, M, h, g) != OK:
        return BAD_OUTPUT
    L, Y = np.empty((n, n)), np.empty((n, 6))
    for b in range(size):
        status, cond[b] = operational_space_state(J[b], Jdqd[b], M[b], h[b], g[b], damping,
                                                  rcond, L, Y, Lam[b], J_bar[b], mu[b], p[b])
        if status != OK:
            return status
    return OK
