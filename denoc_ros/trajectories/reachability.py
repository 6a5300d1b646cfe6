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
the controllable sets ``K_i`` (backward pass, Alg. 1), :func:`_forward` the greatest ``u``
keeping ``x_{i+1}`` in ``K_{i+1}`` under a reference profile (:func:`_reference`, the sets'
upper bounds with their dips widened). The method is :mod:`.retime`'s docstring.
"""

import numpy as np

from ..dynamics._compile import jit

REFERENCE_WINDOW = 2
REFERENCE_MARGIN = 0.0
TRIVIAL = 1e300  # right-hand side of a row that bounds nothing (a limit of inf)


@jit
def _row(a, b, h, i, k, lo_next, hi_next, two_delta):
    """Return row ``k`` (``a u + b x <= h``) of stage ``i``; the last two keep x_next in range."""
    R = a.shape[1]
    if k < R:
        return a[i, k], b[i, k], h[i, k]
    if k == R:
        return two_delta, 1.0, hi_next
    return -two_delta, -1.0, -lo_next


@jit
def _eliminate(a, b, h, i, lo_next, hi_next, two_delta, tol):
    """Return the ``x`` interval of stage ``i``'s rows with ``x + 2 delta u`` in [lo, hi]."""
    R = a.shape[1]
    xlo, xhi = 0.0, np.inf
    # Rows 0..R-1 are the stage's, R and R+1 the reachability ones.
    for k in range(R + 2):
        ak, bk, hk = _row(a, b, h, i, k, lo_next, hi_next, two_delta)
        if ak == 0.0:
            if bk > 0.0:
                xhi = min(xhi, hk / bk)
            elif bk < 0.0:
                xlo = max(xlo, hk / bk)
            elif hk < -tol:
                return 1.0, 0.0
            continue
        if ak < 0.0:
            continue
        for m in range(R + 2):
            am, bm, hm = _row(a, b, h, i, m, lo_next, hi_next, two_delta)
            if am >= 0.0:
                continue
            # (-am) * row_k + ak * row_m eliminates u: c x <= d.
            c = -am * bk + ak * bm
            d = -am * hk + ak * hm
            if c > 0.0:
                xhi = min(xhi, d / c)
            elif c < 0.0:
                xlo = max(xlo, d / c)
            elif d < -tol * (abs(am * hk) + abs(ak * hm)):
                return 1.0, 0.0
    return xlo, xhi


@jit
def _controllable_sets(a, b, h, xmax, s, lo, hi):
    """Backward pass (Pham & Pham Alg. 1): ``K_i = [lo_i, hi_i]``; the failed stage or -1."""
    N = s.shape[0] - 1
    tol = 1e-9
    # The last stage: at rest, if rest is feasible there.
    xl, xh = _eliminate(a, b, h, N, -TRIVIAL, TRIVIAL, 0.0, tol)
    if xl > tol * (1.0 + abs(xh)):
        return N
    lo[N], hi[N] = 0.0, 0.0
    for i in range(N - 1, -1, -1):
        xl, xh = _eliminate(a, b, h, i, lo[i + 1], hi[i + 1], 2.0 * (s[i + 1] - s[i]), tol)
        xh = min(xh, xmax[i])
        if xl > xh + tol * (1.0 + abs(xh)):
            return i
        lo[i] = max(xl, 0.0)
        hi[i] = max(xh, lo[i])
    return -1


@jit
def _forward(a, b, h, s, lo, hi, ref, x, u):
    """Forward pass: from rest, the greatest ``u_i`` keeping ``x_{i+1}`` in ``K_{i+1}``, <= ref."""
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
        ui = max(ub, lb)  # ub < lb only by rounding: stay inside K_{i+1}
        xn = xi + two_delta * ui
        xn = min(max(xn, lo[i + 1]), hi[i + 1])
        u[i] = (xn - xi) / two_delta
        x[i + 1] = xn
    x[N] = 0.0
    u[N - 1] = -x[N - 1] / (2.0 * (s[N] - s[N - 1]))


def _reference(hi):
    """
    Return the profile the forward pass stays under: ``K``'s upper bounds, its dips widened.

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
    for j in dips:
        lo, up = max(j - w, 1), min(j + w + 1, hi.size - 1)
        ref[lo:up] = np.minimum(ref[lo:up], ref[j])
    return ref
