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
The momentum observer's recursion and the contact wrench, compiled (one implementation each).

:func:`observer_step` advances De Luca's generalized-momentum observer by one sample (the
scheme of :mod:`denoc_ros.observer`, whose classes call it); :func:`contact_wrench` solves
``tau_ext = J^T F`` for the wrench at a frame by damped least squares. Both run inside the
one-pass kernel of :mod:`.all_terms` too, so the dynamics node and the library functions share
every line.

The observer's state is one float64 array (:func:`observer_state`): the time of the last sample,
whether there is one, its momentum ``p`` and its ``w = tau - tau_f + C^T qd - g``.
"""

import math

import numpy as np

from ._compile import jit

# Columns of the observer's state array.
T_PREV, STARTED_FLAG, STATE_HEAD = 0, 1, 2

# What observer_step did (its return value).
STEP = 0         # integrated the interval
STARTED = 1      # first sample since the last reset: r = 0
GAP = 2          # the gap since the last sample exceeded max_gap: started again
BACKWARDS = 3    # the stamp went backwards: started again
REPEATED = 4     # the same stamp again: nothing integrated


def observer_state(nv):
    """Return a fresh observer state for ``nv`` velocities (no sample yet)."""
    return np.zeros(STATE_HEAD + 2 * nv)


@jit
def observer_step(state, gain, max_gap, t, p, w, r):
    """
    Advance the observer by the sample ``(t, p, w)``; update ``r`` in place; return the event.

    ``e_k = (p_k - p_(k-1)) / dt - (w_k + w_(k-1)) / 2``, ``r_k = exp(-K_O dt) r_(k-1) +
    (1 - exp(-K_O dt)) e_k`` (De Luca et al. 2006, the exact zero-order-hold solution of
    ``r_dot = K_O (e - r)``); the first sample, a gap over ``max_gap`` or a stamp that goes
    backwards start again with ``r = 0``.
    """
    n = r.shape[0]
    event = STARTED
    if state[STARTED_FLAG] != 0.0:
        dt = t - state[T_PREV]
        if dt < 0.0:
            event = BACKWARDS
        elif dt > max_gap:
            event = GAP
        elif dt == 0.0:
            return REPEATED
        else:
            for i in range(n):
                decay = math.exp(-gain[i] * dt)
                mean = ((p[i] - state[STATE_HEAD + i]) / dt
                        - 0.5 * (w[i] + state[STATE_HEAD + n + i]))
                r[i] = decay * r[i] + (1.0 - decay) * mean
                state[STATE_HEAD + i] = p[i]
                state[STATE_HEAD + n + i] = w[i]
            state[T_PREV] = t
            return STEP
    for i in range(n):
        r[i] = 0.0
        state[STATE_HEAD + i] = p[i]
        state[STATE_HEAD + n + i] = w[i]
    state[T_PREV] = t
    state[STARTED_FLAG] = 1.0
    return event


@jit
def smallest_eigenvalue(A):
    """
    Return the smallest eigenvalue of the symmetric 6x6 ``A`` (cyclic Jacobi, in place).

    Jacobi's rotations (Golub & Van Loan, Alg. 8.5.3) until the off-diagonal part is below
    1e-15 of the diagonal's: accurate to rounding relative to ``|A|``, no allocation.
    """
    for _ in range(30):
        off = 0.0
        diag = 0.0
        for p in range(6):
            diag += A[p, p] * A[p, p]
            for q in range(p + 1, 6):
                off += A[p, q] * A[p, q]
        if off <= 1e-30 * diag:
            break
        for p in range(5):
            for q in range(p + 1, 6):
                if A[p, q] == 0.0:
                    continue
                theta = (A[q, q] - A[p, p]) / (2.0 * A[p, q])
                root = math.sqrt(theta * theta + 1.0)
                t = (1.0 if theta >= 0.0 else -1.0) / (abs(theta) + root)
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(6):  # A <- J^T A J, rows and columns p and q
                    akp, akq = A[k, p], A[k, q]
                    A[k, p] = c * akp - s * akq
                    A[k, q] = s * akp + c * akq
                for k in range(6):
                    apk, aqk = A[p, k], A[q, k]
                    A[p, k] = c * apk - s * aqk
                    A[q, k] = s * apk + c * aqk
    smallest = A[0, 0]
    for p in range(1, 6):
        smallest = min(smallest, A[p, p])
    return smallest


@jit
def contact_wrench(J, R, tau_ext, damping, threshold, out):
    """
    Write the wrench at a frame that explains ``tau_ext`` into ``out`` (6): [force; torque].

    ``tau_ext = J^T F`` (``J`` the frame's Jacobian, base axes) by least squares, damped only
    near a singularity (Maciejewski & Klein): with ``s`` the smallest singular value of ``J``
    (0 for fewer than six joints), ``F = (J J^T + l^2 1)^-1 J tau_ext``, ``l^2 = damping^2
    (1 - (s / threshold)^2)`` if ``s < threshold``, else 0. ``out`` in the frame's axes ``R``
    (its orientation in the base), torque about its origin. ``s^2`` is the smallest eigenvalue
    of ``J J^T`` (:func:`smallest_eigenvalue`); the system is solved by Cholesky (Golub & Van
    Loan, Alg. 4.2.1), all in 6x6 scratch of the stack's size.
    """
    n = J.shape[1]
    A = np.empty((6, 6))
    W = np.empty((6, 6))
    b = np.empty(6)
    for r in range(6):
        total = 0.0
        for a in range(n):
            total += J[r, a] * tau_ext[a]
        b[r] = total
        for c in range(r, 6):
            total = 0.0
            for a in range(n):
                total += J[r, a] * J[c, a]
            A[r, c] = total
            A[c, r] = total
    smallest = 0.0
    if n >= 6:
        W[:, :] = A
        smallest = math.sqrt(max(smallest_eigenvalue(W), 0.0))
    lam2 = damping * damping * (1.0 - (smallest / threshold) ** 2) if smallest < threshold \
        else 0.0
    for r in range(6):
        A[r, r] += lam2
    # Cholesky A = L L^T (lower triangle of A), then L y = b, L^T F = y (into b).
    for j in range(6):
        d = A[j, j]
        for k in range(j):
            d -= A[j, k] * A[j, k]
        if not d > 0.0:  # singular (no damping, a rank-deficient J): no wrench explains it
            for r in range(6):
                out[r] = math.nan
            return
        d = math.sqrt(d)
        A[j, j] = d
        for i in range(j + 1, 6):
            v = A[i, j]
            for k in range(j):
                v -= A[i, k] * A[j, k]
            A[i, j] = v / d
    for i in range(6):
        v = b[i]
        for k in range(i):
            v -= A[i, k] * b[k]
        b[i] = v / A[i, i]
    for i in range(5, -1, -1):
        v = b[i]
        for k in range(i + 1, 6):
            v -= A[k, i] * b[k]
        b[i] = v / A[i, i]
    for h in range(2):
        for r in range(3):
            out[3 * h + r] = R[0, r] * b[3 * h] + R[1, r] * b[3 * h + 1] + R[2, r] * b[3 * h + 2]
