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
The TOPP-RA reachability core: per-stage sets, the backward and the forward pass.

With ``x = sd^2`` and ``u = sdd`` each grid stage's constraints are rows ``a u + b x <= h``
(Pham & Pham 2018, Eq. 3-5; built by :mod:`.path_dynamics`). :func:`_eliminate` gives a
stage's bounds on ``x`` by eliminating ``u`` (Fourier-Motzkin), :func:`_controllable_sets`
the controllable sets ``[lo_i, hi_i]`` of ``x`` (backward pass, Alg. 1), :func:`_forward` the
greatest ``u`` keeping ``x_{i+1}`` in ``[lo_{i+1}, hi_{i+1}]`` under a reference profile
(:func:`_reference`, the sets' upper bounds with their dips widened). The method is
:mod:`.retime`'s docstring.
"""

import numpy as np

from ..dynamics._compile import jit

REFERENCE_WINDOW = 2
REFERENCE_MARGIN = 0.0
TRIVIAL = 1e300  # right-hand side of a row that bounds nothing (a limit of inf)


@jit
def _eliminate(a, b, h, i, lo_next, hi_next, two_delta, tol, pb, ph, nb, nh):
    """
    Return the ``x`` interval of stage ``i``'s rows with ``x + 2 delta u`` in [lo, hi].

    Each row with ``a != 0`` is divided by ``|a|``: ``u + b' x <= h'`` (bounds ``u`` above,
    kept in ``pb``, ``ph``) or ``-u + b' x <= h'`` (below, ``nb``, ``nh``); each pair of an
    upper and a lower one gives ``(b'_k + b'_m) x <= h'_k + h'_m``.
    """
    R = a.shape[1]
    xlo, xhi = 0.0, np.inf
    P = M = 0
    # Rows 0..R-1 are the stage's, R and R+1 the reachability ones.
    for k in range(R + 2):
        if k < R:
            ak, bk, hk = a[i, k], b[i, k], h[i, k]
        elif k == R:
            ak, bk, hk = two_delta, 1.0, hi_next
        else:
            ak, bk, hk = -two_delta, -1.0, -lo_next
        if ak == 0.0:
            if bk > 0.0:
                xhi = min(xhi, hk / bk)
            elif bk < 0.0:
                xlo = max(xlo, hk / bk)
            elif hk < -tol:
                return 1.0, 0.0
        elif ak > 0.0:
            pb[P], ph[P] = bk / ak, hk / ak
            P += 1
        else:
            nb[M], nh[M] = -bk / ak, -hk / ak
            M += 1
    for k in range(P):
        bk, hk = pb[k], ph[k]
        for m in range(M):
            c = bk + nb[m]
            d = hk + nh[m]
            if c > 0.0:
                if d < xhi * c:
                    xhi = d / c
            elif c < 0.0:
                if d < xlo * c:
                    xlo = d / c
            elif d < -tol * (abs(hk) + abs(nh[m])):
                return 1.0, 0.0
    return xlo, xhi


@jit
def _controllable_sets(a, b, h, xmax, s, lo, hi, same, old_lo, old_hi):
    """
    Backward pass (Pham & Pham Alg. 1): the controllable sets ``[lo_i, hi_i]``; failed stage or -1.

    Where a stage's rows are the ``same`` as in the solve that gave ``old_lo``, ``old_hi``
    and stage ``i + 1``'s set is too, stage ``i``'s set is the old one (a re-solve after a
    local change redoes the changed stretch and what it reaches upstream only).
    """
    N = s.shape[0] - 1
    tol = 1e-9
    R = a.shape[1] + 2
    pb, ph, nb, nh = np.empty(R), np.empty(R), np.empty(R), np.empty(R)
    # The last stage: at rest, if rest is feasible there.
    xl, xh = _eliminate(a, b, h, N, -TRIVIAL, TRIVIAL, 0.0, tol, pb, ph, nb, nh)
    if xl > tol * (1.0 + abs(xh)):
        return N
    lo[N], hi[N] = 0.0, 0.0
    for i in range(N - 1, -1, -1):
        if same[i] and lo[i + 1] == old_lo[i + 1] and hi[i + 1] == old_hi[i + 1]:
            lo[i], hi[i] = old_lo[i], old_hi[i]
            continue
        xl, xh = _eliminate(a, b, h, i, lo[i + 1], hi[i + 1], 2.0 * (s[i + 1] - s[i]), tol,
                            pb, ph, nb, nh)
        xh = min(xh, xmax[i])
        if xl > xh + tol * (1.0 + abs(xh)):
            return i
        lo[i] = max(xl, 0.0)
        hi[i] = max(xh, lo[i])
    return -1


@jit
def _forward(a, b, h, s, lo, hi, ref, x, u):
    """Forward pass: from rest, the greatest ``u_i`` keeping ``x_{i+1}`` in its set, <= ref."""
    N = s.shape[0] - 1
    R = a.shape[1]
    x[0] = 0.0
    for i in range(N):
        two_delta = 2.0 * (s[i + 1] - s[i])
        xi = x[i]
        ub = (min(hi[i + 1], max(ref[i + 1], lo[i + 1])) - xi) / two_delta
        lb = (lo[i + 1] - xi) / two_delta
        for k in range(R):
            ak = a[i, k]
            if ak > 0.0:
                ub = min(ub, (h[i, k] - b[i, k] * xi) / ak)
            elif ak < 0.0:
                lb = max(lb, (h[i, k] - b[i, k] * xi) / ak)
        ui = max(ub, lb)  # ub < lb only by rounding: stay inside [lo, hi]_{i+1}
        xn = xi + two_delta * ui
        xn = min(max(xn, lo[i + 1]), hi[i + 1])
        u[i] = (xn - xi) / two_delta
        x[i + 1] = xn
    x[N] = 0.0
    u[N - 1] = -x[N - 1] / (2.0 * (s[N] - s[N - 1]))


def _reference(hi):
    """
    Return the profile the forward pass stays under: ``hi``, its dips widened.

    Riding the boundary of the controllable sets exactly, as the greedy pass does, makes ``u``
    chatter where a joint's ``a(s)`` crosses zero (a dynamic singularity: the boundary has a
    narrow dip there that the pass can only meet with ``u`` of either extreme sign). Around
    every local minimum of the bounds the pass stays under that minimum for
    ``REFERENCE_WINDOW`` points on either side (times ``1 - REFERENCE_MARGIN``), so it enters
    and leaves the dip level. Every ``u`` that keeps ``x`` in the controllable sets is still
    feasible, so the result remains feasible (Pham & Pham, Thm. 1); monotone stretches of the
    bounds are left as they are.
    """
    w = REFERENCE_WINDOW
    ref = hi * (1.0 - REFERENCE_MARGIN)
    inner = hi[1:-1]
    dips = np.flatnonzero((inner < hi[:-2]) & (inner <= hi[2:])) + 1
    _level_dips(ref, dips, w)
    return ref


@jit
def _level_dips(ref, dips, w):
    """Lower ``ref`` to ``ref[j]`` within ``w`` points of each dip ``j``, in order."""
    for j in dips:
        level = ref[j]
        for k in range(max(j - w, 1), min(j + w + 1, ref.shape[0] - 1)):
            ref[k] = min(ref[k], level)
