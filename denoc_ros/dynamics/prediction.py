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
Short-horizon prediction: the forward dynamics integrated by classical Runge-Kutta, compiled.

:func:`prediction_one` integrates Craig's state-space form ``[q; qd]' = [qd; FD(q, qd, tau)]``
(seed 002) under a constant ``tau`` in one compiled call, the forward dynamics being the O(n)
articulated-body recursion of :mod:`.aba`: the node's ``~/prediction`` (8 us a step on the
Panda), called by :func:`denoc_ros.feedforward.predict`. Its steps are those of
:func:`denoc_ros.simulation.rk4` in a vector space (the classical RK4 tableau), which serves
every other integration (time-varying inputs, friction, a floating base); the tests hold the
two to each other.
"""

import math

import numpy as np

from . import _compile
from ._compile import all_finite, jit, model_arrays
from .aba import articulated_body_state
from .kinematics import configuration_size

__all__ = ['prediction_one']


@jit
def prediction_one(handle, q, qd, tau, horizon, steps, out):
    """
    Write the state after ``horizon`` s under constant ``tau`` into ``out`` (3, n): q, qd, qdd.

    ``steps`` classical Runge-Kutta steps of ``horizon / steps`` on Craig's state-space form
    ``[q; qd]' = [qd; FD(q, qd, tau)]`` (the scheme of :func:`denoc_ros.simulation.rk4`), then
    ``qdd = FD`` at the end state. Fixed-base models only (``q`` and ``qd`` of one length).
    Returns a status (``SINGULAR + i`` from the forward dynamics).
    """
    ints, reals, work, blocks = model_arrays(handle)
    nb, n = ints.shape[0], out.shape[1]
    q = np.ascontiguousarray(q)
    qd = np.ascontiguousarray(qd)
    tau = np.ascontiguousarray(tau)
    if not (configuration_size(ints) == n and q.shape[0] == n and qd.shape[0] == n
            and tau.shape[0] == n and out.shape[0] == 3 and steps >= 0
            and math.isfinite(horizon) and all_finite(q) and all_finite(qd)
            and all_finite(tau)):
        return _compile.BAD_INPUT
    kin, P, mot, ab = work[0], work[1], work[2], work[3]
    M_hat, T = blocks[:nb], blocks[nb]
    none = np.zeros((0, 6))
    # Rows: x, v, then the stages x2, v2, x3, v3, x4, v4 and accelerations a1 .. a4.
    w = np.empty((12, n))
    x, v = w[0], w[1]
    x2, v2, x3, v3, x4, v4 = w[2], w[3], w[4], w[5], w[6], w[7]
    a1, a2, a3, a4 = w[8], w[9], w[10], w[11]
    x[:] = q
    v[:] = qd
    h = horizon / steps if steps > 0 else 0.0
    stages = ((x, v, a1, 0.0), (x2, v2, a2, 0.5 * h), (x3, v3, a3, 0.5 * h), (x4, v4, a4, h))
    # 4 evaluations of FD a step, then one at the end state (into a1): one call site of the
    # recursion, which the compiler inlines (a second one doubles the compilation).
    for e in range(4 * steps + 1):
        k = e % 4
        xs, vs, acc, step = stages[k]
        if e == 4 * steps:
            xs, vs, acc = x, v, a1
        elif k > 0:
            # Stage k starts from [x; v] + c_k h (the previous stage's [v; a]), c = 1/2, 1/2, 1.
            v_prev, a_prev = stages[k - 1][1], stages[k - 1][2]
            for i in range(n):
                xs[i] = x[i] + step * v_prev[i]
                vs[i] = v[i] + step * a_prev[i]
        status = articulated_body_state(ints, reals, xs, vs, tau, none, kin, P, mot, M_hat, T,
                                        ab, acc)
        if status != _compile.OK:
            return status
        if k == 3:
            for i in range(n):
                x[i] = x[i] + h / 6.0 * (v[i] + 2.0 * v2[i] + 2.0 * v3[i] + v4[i])
                v[i] = v[i] + h / 6.0 * (a1[i] + 2.0 * a2[i] + 2.0 * a3[i] + a4[i])
    out[0, :] = x
    out[1, :] = v
    out[2, :] = a1
    return _compile.OK if all_finite(out) else _compile.BAD_OUTPUT
