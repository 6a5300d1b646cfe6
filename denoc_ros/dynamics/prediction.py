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
The one Runge-Kutta scheme of the library (RK4, on a Lie group too) and the compiled prediction.

The scheme is Craig's state-space form ``[q; v]' = [v; a(t, q, v)]`` (seed 002) stepped by the
commutator-free Lie-group method of order 4 on the classical RK4 tableau (Celledoni, Marthinsen
and Owren 2003, "CF4"): :func:`rk4_stage` writes its stage velocities and the velocity of every
move of a configuration, once, for both drivers of the library:

* :func:`prediction_one`, compiled: the node's ``~/prediction`` (a constant ``tau``, the O(n)
  articulated-body forward dynamics of :mod:`.aba`, ``q`` in a vector space) in one call;
* :func:`denoc_ros.simulation.rk4`: any acceleration function of ``(t, q, v)`` and any
  ``integrate(q, v, dt)`` (the free flyer's exponential for a floating base).

One step of ``h`` from ``(x, v)`` (``X_0 = x``, ``V_0 = v``, ``A_k = a(t + c_k h, X_k, V_k)``,
``c = 0, 1/2, 1/2, 1``)::

    move 1:  V_1 = v + h/2 A_0       X_1 = integrate(X_0, V_0, h/2)
    move 2:  V_2 = v + h/2 A_1       X_2 = integrate(X_0, V_1, h/2)
    move 3:  V_3 = v + h A_2         X_3 = integrate(X_1, V_2 - V_0/2, h)
    move 4:  V_4 = v + h/6 (A_0 + 2 A_1 + 2 A_2 + A_3)
                                     X_4 = integrate(X_0, 3 V_0 + 2 V_1 + 2 V_2 - V_3, h/12)
    move 5:                          X_5 = integrate(X_4, -V_0 + 2 V_1 + 2 V_2 + 3 V_3, h/12)

and ``(X_5, V_4)`` is the state after the step. In a vector space (``integrate(x, u, dt) = x + u
dt``) this is the classical RK4 step, ``x' = x + h/6 (V_0 + 2 V_1 + 2 V_2 + V_3)``; on a Lie
group it keeps order 4 where ``integrate(x, mean stage velocity, h)`` drops to 2.
"""

import math

import numpy as np

from . import _compile
from ._compile import all_finite, jit, model_arrays
from .aba import articulated_body_state
from .kinematics import configuration_size

__all__ = ['prediction_one', 'rk4_stage']

#: Moves per RK4 step (:func:`rk4_stage`): three to the stages, two to the step's end.
MOVES = 5


@jit
def rk4_stage(k, h, V, A, u):
    """
    Write move ``k`` (1 .. 5) of an RK4 step of ``h`` (module docstring); return (start, dt, c).

    ``V`` (5, nv): ``V[0]`` the step's velocity, then the stage velocities; this writes ``V[k]``
    (moves 1 to 4: ``V[4]`` is the velocity after the step). ``A`` (4, nv): the accelerations
    at the stages before move ``k``. ``u`` (nv,): receives the velocity that moves configuration
    ``X[start]`` for ``dt`` to ``X[k]``. ``c``: the stage's time ``t + c h`` (moves 1 to 3).
    """
    n = u.shape[0]
    if k == 1:
        for i in range(n):
            V[1, i] = V[0, i] + 0.5 * h * A[0, i]
            u[i] = V[0, i]
        return 0, 0.5 * h, 0.5
    if k == 2:
        for i in range(n):
            V[2, i] = V[0, i] + 0.5 * h * A[1, i]
            u[i] = V[1, i]
        return 0, 0.5 * h, 0.5
    if k == 3:
        for i in range(n):
            V[3, i] = V[0, i] + h * A[2, i]
            u[i] = V[2, i] - 0.5 * V[0, i]
        return 1, h, 1.0
    if k == 4:
        for i in range(n):
            V[4, i] = V[0, i] + h / 6.0 * (A[0, i] + 2.0 * A[1, i] + 2.0 * A[2, i] + A[3, i])
            u[i] = 3.0 * V[0, i] + 2.0 * V[1, i] + 2.0 * V[2, i] - V[3, i]
        return 0, h / 12.0, 1.0
    for i in range(n):
        u[i] = -V[0, i] + 2.0 * V[1, i] + 2.0 * V[2, i] + 3.0 * V[3, i]
    return 4, h / 12.0, 1.0


@jit
def prediction_one(handle, q, qd, tau, horizon, steps, out):
    """
    Write the state after ``horizon`` s under constant ``tau`` into ``out`` (3, n): q, qd, qdd.

    ``steps`` RK4 steps (:func:`rk4_stage`) of ``horizon / steps`` on Craig's state-space form
    ``[q; qd]' = [qd; FD(q, qd, tau)]``, then ``qdd = FD`` at the end state. Fixed-base models
    only (``q`` and ``qd`` of one length, a vector space). Returns a status (``SINGULAR + i``
    from the forward dynamics).
    """
    ints, reals, work, blocks = model_arrays(handle)
    n = out.shape[1]
    q = np.ascontiguousarray(q)
    qd = np.ascontiguousarray(qd)
    tau = np.ascontiguousarray(tau)
    if not (configuration_size(ints) == n and q.shape[0] == n and qd.shape[0] == n
            and tau.shape[0] == n and out.shape[0] == 3 and steps >= 0
            and math.isfinite(horizon) and all_finite(q) and all_finite(qd)
            and all_finite(tau)):
        return _compile.BAD_INPUT
    status = prediction_state(ints, reals, q, qd, tau, horizon, steps, work, blocks, out,
                              np.empty(0))
    if status != _compile.OK:
        return status
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT


@jit
def prediction_state(ints, reals, q, qd, tau, horizon, steps, work, blocks, out, first):
    """
    Write q, qd, qdd after ``horizon`` (see :func:`prediction_one`) into ``out``; a status.

    ``first``: FD(q, qd, tau) when the caller has it (the one pass computed it: the first
    stage's acceleration is not computed again), else of length 0.
    """
    nb, n = ints.shape[0], out.shape[1]
    kin, P, mot, ab = work[0], work[1], work[2], work[3]
    M_hat, T = blocks[:nb], blocks[nb]
    none = np.zeros((0, 6))
    # Rows: the configurations X_0 .. X_5 of the moves, the velocities V_0 .. V_4, the stage
    # accelerations A_0 .. A_3 and the moving velocity u.
    w = np.empty((16, n))
    X, V, A, u = w[0:6], w[6:11], w[11:15], w[15]
    X[0, :] = q
    V[0, :] = qd
    h = horizon / steps if steps > 0 else 0.0
    # Per step: FD at stage 0, then moves 1 .. 5 with FD after moves 1 .. 3; a last FD at the
    # end state (into A_0). One call site of the recursion, which the compiler inlines (a
    # second one doubles the compilation).
    for e in range((MOVES + 1) * steps + 1):
        k = e % (MOVES + 1)
        if k > 0:
            start, dt, _ = rk4_stage(k, h, V, A, u)
            for i in range(n):
                X[k, i] = X[start, i] + dt * u[i]  # a vector space: integrate = x + u dt
            if k == MOVES:
                X[0, :] = X[MOVES]
                V[0, :] = V[MOVES - 1]
            if k > 3:
                continue
        elif e == 0 and first.shape[0] == n:
            A[0, :] = first
            continue
        status = articulated_body_state(ints, reals, X[k], V[k], tau, none, kin, P, mot, M_hat,
                                        T, ab, A[k])
        if status != _compile.OK:
            return status
    out[0, :] = X[0]
    out[1, :] = V[0]
    out[2, :] = A[0]
    return _compile.OK
