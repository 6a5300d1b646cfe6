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
Contact isolation and localization: which link was touched, where, and how sure that is.

One contact force ``F`` (on the robot, base axes) at a point ``r`` of link ``k`` gives the
external joint torques

    tau_ext = J_r(q)^T F,      J_r = J_v - [r - o]x J_w,

with ``[J_v; J_w]`` the link frame's geometric Jacobian at its origin ``o`` (Craig's force
mapping tau = J^T F, seed 003, for the point's linear Jacobian). Joints that do not carry link
``k`` feel nothing. For each candidate point of the link's collision surface
(:func:`denoc_ros.contact.geometry.load_collision_geometry`) the force that explains
``tau_ext`` best is found by least squares restricted to the friction cone around the inward
normal (a push goes into the surface, within ``|F_t| <= mu F_n``):

    residual^2(r) = min_F in cone  |tau_ext - J_r^T F|^2 + lambda |F|^2

(``lambda = 1 / FORCE_SCALE^2``, the precision of the prior ``F ~ N(0, FORCE_SCALE^2 I)``),
with each joint's torque and Jacobian row divided by its error's standard deviation
(``noise``, and ``relative_noise`` times that joint's ``|tau_ext|`` for model error), so that
the residual is a chi-square. A point is judged by its *evidence*, the likelihood of the torques
with the force integrated out (Laplace's approximation about the best force):

    -2 log p(tau_ext | r) = residual^2(r) + log det(J_r J_r^T + lambda I) + const.

The determinant is the price of a point where the torques pin the force down: a distal link
that fits a proximal contact's torques (its own joints' zeros too) must tune its force to do
so, and pays for it. The candidates are the points within the noise band of the best evidence,
and those within the band on their fit alone (the residual plus Akaike's twice what a contact on
the link fits: min(5, joints moving it)); their weights are evidence times the surface area
each stands for (a uniform prior over the surface); the link is the one with the most weight.
Where the joints carrying the link resolve the contact (on a 7-joint arm, the distal links: the
line of action of the wrench meets the surface in points of which the cone keeps the entry
point), the candidates sit within a few millimetres and the answer is ``'located'``: at least
``BODY_SHARE`` of the weight on one body, no other body's point within the band on its fit
alone, and the candidates' spread within ``resolution`` weighed either way. Where they cannot
(links near the base: fewer equations than the five unknowns of a point on a surface and a
force), the candidates spread over the link and the answer is ``'ambiguous'`` with their set
and covariance, never one confident point.

The search is coarse-to-fine: the links whose best wrench (6 free components, a lower bound on
any point's residual) cannot come within the band are skipped, then one representative point of
each ~3 cm cluster is scored, and the fine points (~5 mm apart) of the clusters within reach are
scored.
"""

from dataclasses import dataclass, field
import math
from typing import Tuple

import numpy as np

from ..dynamics import jacobian
from ..dynamics._compile import BAD_INPUT, jit, OK
from ..dynamics._packed import packed
from ..dynamics.jacobian import frames_state
from ..errors import InputError

__all__ = ['ContactLocation', 'locate_contact', 'LOCATED', 'AMBIGUOUS', 'UNEXPLAINED',
           'NO_CONTACT']

LOCATED = 'located'
AMBIGUOUS = 'ambiguous'
UNEXPLAINED = 'unexplained'
NO_CONTACT = 'no_contact'

#: Cone edges sampled on the boundary when the unconstrained force leaves the cone.
_CONE_ANGLES = 16
#: Golden-section steps on the cone's boundary for the fine points (the coarse take a parabola).
POLISH = 12
_ANGLES = (np.cos(2.0 * np.pi * np.arange(_CONE_ANGLES) / _CONE_ANGLES),
           np.sin(2.0 * np.pi * np.arange(_CONE_ANGLES) / _CONE_ANGLES))
#: Band in noise standard deviations: r^2 <= r_min^2 + (BAND sigma)^2 is a candidate.
BAND = 3.0
#: Best residual above this many sigmas: no single contact explains the torques.
UNEXPLAINED_SIGMAS = 4.0
#: Share of the candidates' weight on the chosen link's body needed to call it located.
BODY_SHARE = 0.9
#: Samples refined off the grid: within the band plus this (chi-square) of the best, ...
REFINE_REACH = 25.0
#: ... the best of this many clusters (and each link's best).
REFINED_SAMPLES = 24
#: Voxel size [m] of the links' solids, for the points one link's shape covers on another's.
SOLID_CELL = 0.01
#: The free path [m] a pusher needs out along the normal to reach a point.
APPROACH = 0.03
#: Gauss-Newton steps of a refinement.
REFINE_ITERATIONS = 6
#: Clusters refined (the best by their coarse point's score).
MAX_REFINED_CLUSTERS = 48
#: Candidates returned at most, one per cluster (the covariance uses every point).
MAX_CANDIDATES = 512
#: Scale [N] of a contact force, per axis: the prior F ~ N(0, FORCE_SCALE^2 I) of the evidence
#: (the force fit's Tikhonov weight, and the volume term of :func:`_log_det`).
FORCE_SCALE = 50.0


def _zeros3():
    return np.zeros(3)


@dataclass(frozen=True, eq=False)
class ContactLocation:
    """Where one contact is, as far as the external joint torques tell (:func:`locate_contact`)."""

    status: str                      # LOCATED, AMBIGUOUS, UNEXPLAINED or NO_CONTACT
    link: str = ''                   # the best candidate's link ('' without one)
    point: np.ndarray = field(default_factory=_zeros3)        # link frame [m]
    point_base: np.ndarray = field(default_factory=_zeros3)   # base frame [m]
    normal: np.ndarray = field(default_factory=_zeros3)       # outward unit normal, link frame
    normal_base: np.ndarray = field(default_factory=_zeros3)  # base axes
    force: np.ndarray = field(default_factory=_zeros3)        # on the robot, base axes [N]
    residual: float = 0.0            # |tau_ext - J_r^T F| [N m]
    relative_residual: float = 0.0   # residual / |tau_ext|
    covariance: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))  # of point_base
    candidates: np.ndarray = field(default_factory=lambda: np.zeros((0, 3)))  # base frame
    candidate_links: Tuple[str, ...] = ()
    message: str = ''

    @property
    def in_contact(self) -> bool:
        """Return True when the torques are above the threshold (any status but NO_CONTACT)."""
        return self.status != NO_CONTACT

    @property
    def located(self) -> bool:
        """Return True when one point is determined to within the requested resolution."""
        return self.status == LOCATED

    @property
    def spread(self) -> float:
        """Return the standard deviation [m] along the covariance's widest axis."""
        return float(_widest(np.ascontiguousarray(self.covariance, dtype=np.float64)))


@jit
def _widest(covariance):
    """Return the standard deviation along a 3x3 covariance's widest axis."""
    return math.sqrt(max(np.linalg.eigvalsh(covariance)[2], 0.0))


@jit
def link_blocks(Js, tau, blocks):
    """
    Write each link's [J_v J_v^T, J_v J_w^T, J_w J_w^T, J_v tau, J_w tau] (33 numbers) into blocks.

    With them a surface point's H = J_r J_r^T and g = J_r tau cost a few 3x3 products whatever
    the number of joints (:func:`_point_system`).
    """
    nv = Js.shape[2]
    for L in range(Js.shape[0]):
        J = Js[L]
        for a in range(3):
            for b in range(3):
                s_vv = 0.0
                s_vw = 0.0
                s_ww = 0.0
                for j in range(nv):
                    s_vv += J[a, j] * J[b, j]
                    s_vw += J[a, j] * J[3 + b, j]
                    s_ww += J[3 + a, j] * J[3 + b, j]
                blocks[L, 3 * a + b] = s_vv
                blocks[L, 9 + 3 * a + b] = s_vw
                blocks[L, 18 + 3 * a + b] = s_ww
            s_v = 0.0
            s_w = 0.0
            for j in range(nv):
                s_v += J[a, j] * tau[j]
                s_w += J[3 + a, j] * tau[j]
            blocks[L, 27 + a] = s_v
            blocks[L, 30 + a] = s_w


@jit
def _point_system(x, m, R, blk, lam, H, g, nb):
    """
    Write H = J_r J_r^T + lam I, g = J_r tau and the base-axes normal of one surface point.

    J_r = J_v - S J_w with S = [d]x (d = R x, the point's offset from the link origin), so
    H = A + B S - S B^T - S C S and g = a - d x c from the link's :func:`link_blocks`.
    """
    d0 = R[0, 0] * x[0] + R[0, 1] * x[1] + R[0, 2] * x[2]
    d1 = R[1, 0] * x[0] + R[1, 1] * x[1] + R[1, 2] * x[2]
    d2 = R[2, 0] * x[0] + R[2, 1] * x[1] + R[2, 2] * x[2]
    nb[0] = R[0, 0] * m[0] + R[0, 1] * m[1] + R[0, 2] * m[2]
    nb[1] = R[1, 0] * m[0] + R[1, 1] * m[1] + R[1, 2] * m[2]
    nb[2] = R[2, 0] * m[0] + R[2, 1] * m[1] + R[2, 2] * m[2]
    # Columns of X S for a 3x3 block X (row-major at ``o`` in blk): S's columns are (0, d2, -d1),
    # (-d2, 0, d0), (d1, -d0, 0).
    b00 = blk[10] * d2 - blk[11] * d1
    b01 = blk[11] * d0 - blk[9] * d2
    b02 = blk[9] * d1 - blk[10] * d0
    b10 = blk[13] * d2 - blk[14] * d1
    b11 = blk[14] * d0 - blk[12] * d2
    b12 = blk[12] * d1 - blk[13] * d0
    b20 = blk[16] * d2 - blk[17] * d1
    b21 = blk[17] * d0 - blk[15] * d2
    b22 = blk[15] * d1 - blk[16] * d0
    c01 = blk[20] * d0 - blk[18] * d2
    c02 = blk[18] * d1 - blk[19] * d0
    c10 = blk[22] * d2 - blk[23] * d1
    c11 = blk[23] * d0 - blk[21] * d2
    c12 = blk[21] * d1 - blk[22] * d0
    c20 = blk[25] * d2 - blk[26] * d1
    c21 = blk[26] * d0 - blk[24] * d2
    c22 = blk[24] * d1 - blk[25] * d0
    # Rows of S (C S): S's rows are (0, -d2, d1), (d2, 0, -d0), (-d1, d0, 0).
    s00 = -d2 * c10 + d1 * c20
    s01 = -d2 * c11 + d1 * c21
    s02 = -d2 * c12 + d1 * c22
    s11 = d2 * c01 - d0 * c21
    s12 = d2 * c02 - d0 * c22
    s22 = -d1 * c02 + d0 * c12
    H[0, 0] = blk[0] + 2.0 * b00 - s00 + lam
    H[1, 1] = blk[4] + 2.0 * b11 - s11 + lam
    H[2, 2] = blk[8] + 2.0 * b22 - s22 + lam
    H[0, 1] = H[1, 0] = blk[1] + b01 + b10 - s01
    H[0, 2] = H[2, 0] = blk[2] + b02 + b20 - s02
    H[1, 2] = H[2, 1] = blk[5] + b12 + b21 - s12
    c0, c1, c2 = blk[30], blk[31], blk[32]
    g[0] = blk[27] - (d1 * c2 - d2 * c1)
    g[1] = blk[28] - (d2 * c0 - d0 * c2)
    g[2] = blk[29] - (d0 * c1 - d1 * c0)


@jit
def _unconstrained(H, g, n, mu, F):
    """Write the minimiser of t.t - 2 g.F + F.H.F into F; return (cost - t.t, inside the cone)."""
    h00, h01, h02 = H[0, 0], H[0, 1], H[0, 2]
    h11, h12, h22 = H[1, 1], H[1, 2], H[2, 2]
    c00 = h11 * h22 - h12 * h12
    c01 = h02 * h12 - h01 * h22
    c02 = h01 * h12 - h02 * h11
    c11 = h00 * h22 - h02 * h02
    c12 = h01 * h02 - h00 * h12
    c22 = h00 * h11 - h01 * h01
    det = h00 * c00 + h01 * c01 + h02 * c02
    f0 = (c00 * g[0] + c01 * g[1] + c02 * g[2]) / det
    f1 = (c01 * g[0] + c11 * g[1] + c12 * g[2]) / det
    f2 = (c02 * g[0] + c12 * g[1] + c22 * g[2]) / det
    F[0], F[1], F[2] = f0, f1, f2
    fn = -(f0 * n[0] + f1 * n[1] + f2 * n[2])
    t0, t1, t2 = f0 + fn * n[0], f1 + fn * n[1], f2 + fn * n[2]
    inside = fn >= 0.0 and t0 * t0 + t1 * t1 + t2 * t2 <= (mu * fn) ** 2
    return -(g[0] * f0 + g[1] * f1 + g[2] * f2), inside


@jit
def _log_det(H):
    """Return log det H of a symmetric positive definite 3x3 H."""
    det = (H[0, 0] * (H[1, 1] * H[2, 2] - H[1, 2] * H[1, 2])
           - H[0, 1] * (H[0, 1] * H[2, 2] - H[1, 2] * H[0, 2])
           + H[0, 2] * (H[0, 1] * H[1, 2] - H[1, 1] * H[0, 2]))
    return math.log(det)


@jit
def _ray_cost(H, g, n, e1, e2, c, s):
    """Return (-(g.u)^2 / u.H.u or 0, g.u / u.H.u, u) for the cone ray u = -n + c e1 + s e2."""
    u0 = -n[0] + c * e1[0] + s * e2[0]
    u1 = -n[1] + c * e1[1] + s * e2[1]
    u2 = -n[2] + c * e1[2] + s * e2[2]
    gu = g[0] * u0 + g[1] * u1 + g[2] * u2
    uhu = (u0 * (H[0, 0] * u0 + H[0, 1] * u1 + H[0, 2] * u2)
           + u1 * (H[1, 0] * u0 + H[1, 1] * u1 + H[1, 2] * u2)
           + u2 * (H[2, 0] * u0 + H[2, 1] * u1 + H[2, 2] * u2))
    if gu <= 0.0:
        return 0.0, 0.0, u0, u1, u2
    return -gu * gu / uhu, gu / uhu, u0, u1, u2


@jit
def _cone_boundary(H, g, n, mu, cosines, sines, polish, F):
    """
    Write the best force on the friction cone's boundary into F; return its cost - t.t.

    The unconstrained minimiser left the cone, so the constrained one lies on its boundary (or
    at 0): along a ray ``s u`` the best ``s`` is ``g.u / u.H.u``; the rays are scanned at
    ``len(cosines)`` angles and the best refined: ``polish`` steps of a golden-section search
    between its neighbours, or (0) a parabola through them.
    """
    e1 = np.empty(3)
    e2 = np.empty(3)
    if abs(n[0]) < 0.9:
        a0, a1, a2 = 1.0, 0.0, 0.0
    else:
        a0, a1, a2 = 0.0, 1.0, 0.0
    d = a0 * n[0] + a1 * n[1] + a2 * n[2]
    e1[0], e1[1], e1[2] = a0 - d * n[0], a1 - d * n[1], a2 - d * n[2]
    norm = math.sqrt(e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2])
    e1[0], e1[1], e1[2] = e1[0] / norm, e1[1] / norm, e1[2] / norm
    e2[0] = n[1] * e1[2] - n[2] * e1[1]
    e2[1] = n[2] * e1[0] - n[0] * e1[2]
    e2[2] = n[0] * e1[1] - n[1] * e1[0]
    m = cosines.shape[0]
    best, k_best = 0.0, -1
    v_prev = v_first = 0.0
    vm = vp = 0.0
    for k in range(m):
        v = _ray_cost(H, g, n, e1, e2, mu * cosines[k], mu * sines[k])[0]
        if k == 0:
            v_first = v
        if v < best:
            best, k_best, vm = v, k, v_prev
            vp = v_first if k == m - 1 else _ray_cost(
                H, g, n, e1, e2, mu * cosines[k + 1], mu * sines[k + 1])[0]
        v_prev = v
    if k_best < 0:
        F[0], F[1], F[2] = 0.0, 0.0, 0.0
        return 0.0
    if k_best == 0:
        vm = _ray_cost(H, g, n, e1, e2, mu * cosines[m - 1], mu * sines[m - 1])[0]
    h = 2.0 * math.pi / m
    if polish > 0:
        # Golden-section search between the best ray's neighbours.
        lo, hi = (k_best - 1) * h, (k_best + 1) * h
        ratio = 0.5 * (math.sqrt(5.0) - 1.0)
        x1, x2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        f1 = _ray_cost(H, g, n, e1, e2, mu * math.cos(x1), mu * math.sin(x1))[0]
        f2 = _ray_cost(H, g, n, e1, e2, mu * math.cos(x2), mu * math.sin(x2))[0]
        for _ in range(polish):
            if f1 < f2:
                hi, x2, f2 = x2, x1, f1
                x1 = hi - ratio * (hi - lo)
                f1 = _ray_cost(H, g, n, e1, e2, mu * math.cos(x1), mu * math.sin(x1))[0]
            else:
                lo, x1, f1 = x1, x2, f2
                x2 = lo + ratio * (hi - lo)
                f2 = _ray_cost(H, g, n, e1, e2, mu * math.cos(x2), mu * math.sin(x2))[0]
        angle = x1 if f1 < f2 else x2
    else:
        # A parabola through the best ray and its neighbours.
        den = vm - 2.0 * best + vp
        shift = 0.5 * (vm - vp) / den if den > 0.0 else 0.0
        angle = (k_best + min(0.5, max(-0.5, shift))) * h
    v, sc, u0, u1, u2 = _ray_cost(H, g, n, e1, e2, mu * math.cos(angle), mu * math.sin(angle))
    if v > best:  # no better than the sampled ray: keep that
        v, sc, u0, u1, u2 = _ray_cost(H, g, n, e1, e2, mu * cosines[k_best], mu * sines[k_best])
    F[0], F[1], F[2] = sc * u0, sc * u1, sc * u2
    return v


@jit
def score_points(points, normals, owner, index, Rs, blocks, tt, mu, lam, cosines, sines,
                 polish, keep, band2, r2, ld, force):
    """
    Score the surface points ``index`` (link frames; ``owner``: their link's row of Rs, blocks).

    ``tt = tau.tau``. Writes ``r2[k] = min_F in cone |tau - J_r^T F|^2 + lam |F|^2``, that F
    (base axes) and ``ld[k] = log det (J_r J_r^T + lam I)`` for every point that can matter by
    its score ``r2 + ld`` (minus twice the log evidence, :func:`locate_contact`): the ``keep``
    best and all within ``band2`` of the best. The unconstrained minimum is a lower bound of the
    cone-restricted one, so the points are visited in the order of that bound and the cone is
    solved only until the bound passes the cut; a point past it keeps its bound in ``r2`` (its
    score then larger than the cut). Returns the cut.
    """
    m = index.shape[0]
    H = np.empty((3, 3))
    g, nb, F = np.empty(3), np.empty(3), np.empty(3)
    bound = np.empty(m)
    done = np.zeros(m, dtype=np.bool_)
    for k in range(m):
        i = index[k]
        L = owner[i]
        _point_system(points[i], normals[i], Rs[L], blocks[L], lam, H, g, nb)
        cost, inside = _unconstrained(H, g, nb, mu, F)
        ld[k] = _log_det(H)
        bound[k] = tt + cost + ld[k]
        force[k, 0], force[k, 1], force[k, 2] = F[0], F[1], F[2]
        done[k] = inside
    order = np.argsort(bound)
    best_k = np.full(keep, np.inf)  # the keep smallest values found, ascending
    cut = np.inf
    for j in range(m):
        k = order[j]
        if bound[k] > cut:
            for jj in range(j, m):
                r2[order[jj]] = bound[order[jj]] - ld[order[jj]]
            break
        if done[k]:
            v = bound[k] - ld[k]
        else:
            i = index[k]
            L = owner[i]
            _point_system(points[i], normals[i], Rs[L], blocks[L], lam, H, g, nb)
            v = tt + _cone_boundary(H, g, nb, mu, cosines, sines, polish, F)
            force[k, 0], force[k, 1], force[k, 2] = F[0], F[1], F[2]
        r2[k] = v
        v += ld[k]
        if v < best_k[keep - 1]:
            a = keep - 1
            while a > 0 and best_k[a - 1] > v:
                best_k[a] = best_k[a - 1]
                a -= 1
            best_k[a] = v
            cut = max(best_k[keep - 1], best_k[0] + band2)
    return cut


@jit
def log_dets(points, normals, owner, index, Rs, blocks, lam, ld):
    """Write ``ld[index] = log det (J_r J_r^T + lam I)`` of the points ``index``."""
    H = np.empty((3, 3))
    g, nb = np.empty(3), np.empty(3)
    for k in index:
        L = owner[k]
        _point_system(points[k], normals[k], Rs[L], blocks[L], lam, H, g, nb)
        ld[k] = _log_det(H)


class _Surfaces:
    """The geometry's surfaces as flat arrays, fine points grouped by (link, cluster)."""

    def __init__(self, geometry):
        self.names = tuple(sorted(geometry.surfaces))
        fp, fn, fo, fa, cp, cn, co, start = [], [], [], [], [], [], [], [0]
        for L, name in enumerate(self.names):
            s = geometry.surfaces[name]
            order = np.argsort(s.cluster, kind='stable')
            count = np.bincount(s.cluster, minlength=s.coarse_points.shape[0])
            fp.append(s.points[order])
            fn.append(s.normals[order])
            fo.append(np.full(order.shape[0], L))
            fa.append(np.full(order.shape[0], s.area / max(s.points.shape[0], 1)))
            cp.append(s.coarse_points)
            cn.append(s.coarse_normals)
            co.append(np.full(count.shape[0], L))
            start.extend((start[-1] + np.cumsum(count)).tolist())
        self.points = np.ascontiguousarray(np.concatenate(fp), dtype=float)
        self.normals = np.ascontiguousarray(np.concatenate(fn), dtype=float)
        self.owner = np.concatenate(fo).astype(np.int64)
        self.area = np.concatenate(fa)
        self.coarse_points = np.ascontiguousarray(np.concatenate(cp), dtype=float)
        self.coarse_normals = np.ascontiguousarray(np.concatenate(cn), dtype=float)
        self.coarse_owner = np.concatenate(co).astype(np.int64)
        self.start = np.asarray(start, dtype=np.int64)
        first = np.minimum(self.start[:-1], len(self.area) - 1)
        self.coarse_area = np.diff(self.start) * self.area[first]
        # the cluster of each fine point; the neighbours of each cluster (tracking)
        self.point_cluster = np.repeat(np.arange(len(self.start) - 1), np.diff(self.start))
        self.link_clusters = np.searchsorted(self.coarse_owner, np.arange(len(self.names) + 1))
        self.frames = None   # (packed model, what _link_frames made of it)
        self._geometry = geometry
        self._solids = None

    def solids(self):
        """
        Return each link's solid as an occupancy grid in its frame (built on first use).

        ``(cells, origin (L, 3), dims (L, 3), offset (L,), cell size)``: the voxels (of
        :data:`SOLID_CELL`) whose centre and six neighbours' centres lie inside one of the link's
        closed shapes, so that a point in one is at least about a cell deep inside the link.
        A link without a closed shape has no voxel (dims 0).
        """
        if self._solids is None:
            self._solids = _occupancy(self._geometry, self.names, SOLID_CELL)
        return self._solids


def _occupancy(geometry, names, h):
    """Build the eroded occupancy grids of :meth:`_Surfaces.solids`."""
    from .geometry import _RayGrid
    cells, origins, dims, offsets = [], [], [], []
    total = 0
    for name in names:
        shapes = [sh for sh in geometry.surfaces[name].shapes if sh.watertight]
        if not shapes:
            origins.append(np.zeros(3))
            dims.append(np.zeros(3, dtype=np.int64))
            offsets.append(total)
            continue
        verts = np.concatenate([sh.vertices for sh in shapes])
        lo, hi = verts.min(axis=0) - h, verts.max(axis=0) + h
        n = np.maximum(np.ceil((hi - lo) / h).astype(np.int64), 1)
        axes = [lo[i] + h * (np.arange(n[i]) + 0.5) for i in range(3)]
        centres = np.stack(np.meshgrid(*axes, indexing='ij'), axis=-1).reshape(-1, 3)
        inside = np.zeros(len(centres), dtype=bool)
        for sh in shapes:
            box = np.all((centres > sh.vertices.min(axis=0)) & (centres < sh.vertices.max(axis=0)),
                         axis=1)
            if np.any(box):
                inside[box] |= _RayGrid(sh.vertices, sh.faces).contains(centres[box])
        grid = inside.reshape(tuple(n))
        deep = grid.copy()  # eroded: the six neighbours inside too
        for axis in range(3):
            for shift in (1, -1):
                deep &= np.roll(grid, shift, axis=axis)
        for axis in range(3):  # np.roll wraps around: the faces of the box are outside
            index = [slice(None)] * 3
            index[axis] = 0
            deep[tuple(index)] = False
            index[axis] = -1
            deep[tuple(index)] = False
        cells.append(deep.ravel().astype(np.uint8))
        origins.append(lo)
        dims.append(n)
        offsets.append(total)
        total += deep.size
    data = np.concatenate(cells) if cells else np.zeros(0, dtype=np.uint8)
    return (data, np.array(origins, dtype=float), np.array(dims, dtype=np.int64),
            np.array(offsets, dtype=np.int64), float(h))


@jit
def _inside_solid(b0, b1, b2, skip, Rs, os, posed, cells, origin, dims, offset, h):
    """Return whether the base-frame point lies deep inside a link's solid (not ``skip``'s)."""
    for other in range(Rs.shape[0]):
        if other == skip or not posed[other] or dims[other, 0] == 0:
            continue
        Q = Rs[other]
        d0, d1, d2 = b0 - os[other, 0], b1 - os[other, 1], b2 - os[other, 2]
        y0 = Q[0, 0] * d0 + Q[1, 0] * d1 + Q[2, 0] * d2   # R^T (b - o)
        y1 = Q[0, 1] * d0 + Q[1, 1] * d1 + Q[2, 1] * d2
        y2 = Q[0, 2] * d0 + Q[1, 2] * d1 + Q[2, 2] * d2
        i0 = math.floor((y0 - origin[other, 0]) / h)
        i1 = math.floor((y1 - origin[other, 1]) / h)
        i2 = math.floor((y2 - origin[other, 2]) / h)
        n0, n1, n2 = dims[other, 0], dims[other, 1], dims[other, 2]
        if 0 <= i0 < n0 and 0 <= i1 < n1 and 0 <= i2 < n2:
            if cells[offset[other] + (i0 * n1 + i1) * n2 + i2]:
                return True
    return False


@jit
def unreachable(points, normals, owner, index, Rs, os, posed, cells, origin, dims, offset, h,
                approach, out):
    """
    Mark the points ``index`` (link frames) that nothing can push.

    A point covered by another link's solid (two links' collision shapes overlap at their
    joint), or whose approach, ``approach`` metres out along its normal (where a pusher comes
    from; the force's own direction is not known where the torques leave it free), runs into the
    robot's solids (its own link's included). ``posed``: which links' poses (Rs, os) are known.
    """
    for k in range(index.shape[0]):
        i = index[k]
        me = owner[i]
        x = points[i]
        R = Rs[me]
        b0 = R[0, 0] * x[0] + R[0, 1] * x[1] + R[0, 2] * x[2] + os[me, 0]
        b1 = R[1, 0] * x[0] + R[1, 1] * x[1] + R[1, 2] * x[2] + os[me, 1]
        b2 = R[2, 0] * x[0] + R[2, 1] * x[1] + R[2, 2] * x[2] + os[me, 2]
        hidden = _inside_solid(b0, b1, b2, me, Rs, os, posed, cells, origin, dims, offset, h)
        m = normals[i]
        if not hidden and approach > 0.0:
            u0 = R[0, 0] * m[0] + R[0, 1] * m[1] + R[0, 2] * m[2]
            u1 = R[1, 0] * m[0] + R[1, 1] * m[1] + R[1, 2] * m[2]
            u2 = R[2, 0] * m[0] + R[2, 1] * m[1] + R[2, 2] * m[2]
            # Steps of half a voxel from 1.5 voxels out (a deep voxel is a voxel inside).
            step = 0.5 * h
            t = 1.5 * h
            while t <= approach and not hidden:
                hidden = _inside_solid(b0 + t * u0, b1 + t * u1, b2 + t * u2, -1, Rs, os,
                                       posed, cells, origin, dims, offset, h)
                t += step
        out[k] = hidden


def _surfaces(geometry):
    """Return the geometry's flat arrays, made once and kept on the (immutable) geometry."""
    form = vars(geometry).get('_locator_form') if hasattr(geometry, '__dict__') else None
    if form is None:
        form = _Surfaces(geometry)
        try:
            object.__setattr__(geometry, '_locator_form', form)
        except (AttributeError, TypeError):
            pass
    return form


def _as_vector(name, value, n):
    a = np.asarray(value, dtype=float)
    if a.shape != (n,):
        raise InputError(f'{name} must have {n} entries (one per joint), got shape {a.shape}')
    if not np.all(np.isfinite(a)):
        raise InputError(f'{name} must be finite, got {a!r}')
    return a


def _per_joint(name, value, n):
    """Return ``value`` (one number or one per joint, finite, >= 0) as an (n,) array."""
    try:
        t = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        t = np.full(0, np.nan)
    if t.ndim == 0:
        t = np.full(n, float(t))
    if t.shape != (n,) or not np.all(np.isfinite(t)) or np.any(t < 0.0):
        raise InputError(f'{name} must be a number >= 0 or {n} of them (one per joint), '
                         f'got {value!r}')
    return t


def _ranges(start, clusters):
    """Return the concatenated fine-point indices start[c] .. start[c + 1] of ``clusters``."""
    lo, hi = start[clusters], start[clusters + 1]
    sizes = hi - lo
    offsets = np.repeat(lo - np.concatenate(([0], np.cumsum(sizes)[:-1])), sizes)
    return (np.arange(sizes.sum()) + offsets).astype(np.int64)


class _Problem:
    """One call's prepared inputs: whitened torques, every link's pose, Jacobian and blocks."""

    __slots__ = ('model', 'geometry', 'surf', 'qv', 'tau', 'tau_norm', 'scale', 'tau_w', 'n',
                 'band2', 'lam', 'mu', 'resolution', 'movable', 'bodies', 'posed', 'Rs', 'os',
                 'Js', 'blocks', 'tt', 'link_fits', 'seen')


def _check_options(friction_coefficient, relative_noise, resolution):
    """Raise InputError unless each option is a finite number >= 0."""
    for name, value in (('friction_coefficient', friction_coefficient),
                        ('relative_noise', relative_noise), ('resolution', resolution)):
        if not (isinstance(value, (int, float, np.floating, np.integer))
                and math.isfinite(value) and value >= 0.0):
            raise InputError(f'{name} must be a finite number >= 0, got {value!r}')


def _link_frames(surf, model):
    """
    Return (movable, bodies, data, fixed, posed, seen) of the surfaces' links on ``model``.

    Made once per model. ``movable``: the link is on a moving body; ``bodies``/``data``: its
    body and packed frame (for :func:`frames_state`); ``fixed``: the indices, rotations and
    origins of the links fixed to the base; ``posed``: the links whose pose is known (moving or
    fixed); ``seen``: the moving bodies with a surface.
    """
    pk = packed(model)
    cached = surf.frames
    if cached is not None and cached[0] is pk:
        return cached[1]
    frames = [pk.frames.get(name) for name in surf.names]
    movable = np.array([f is not None and f[0] >= 0 for f in frames], dtype=bool)
    bodies = np.array([f[0] if ok else 0 for f, ok in zip(frames, movable)], dtype=np.int64)
    data = np.array([f[1] if ok else np.zeros(12) for f, ok in zip(frames, movable)])
    fixed = [i for i, f in enumerate(frames) if f is not None and f[0] < 0]
    posed = movable.copy()
    posed[fixed] = True
    fixed = (np.array(fixed, dtype=np.int64),
             np.array([frames[i][1][:9].reshape(3, 3) for i in fixed]).reshape(-1, 3, 3),
             np.array([frames[i][1][9:12] for i in fixed]).reshape(-1, 3))
    value = (movable, bodies, data.reshape(len(frames), 12), fixed, posed,
             set(bodies[movable].tolist()))
    surf.frames = (pk, value)
    return value


_NOTHING = -1   # prepare_state: no joint torque above its threshold


@jit
def prepare_state(ints, reals, q, tau, sigma, thr, relative, bodies, data, fixed, fixed_R,
                  fixed_o, Rs, os, Js, scale, tau_w, blocks, link_fits):
    """
    Whiten the torques and write every link's pose, whitened Jacobian and blocks at ``q``.

    Returns ``(status, tau_w . tau_w, |tau|)``: ``_NOTHING`` when no joint's ``|tau|``
    exceeds its threshold, ``BAD_INPUT`` for a non-finite ``q`` or ``tau``, a noise that is not
    positive or a threshold that is negative (the caller names which), a kinematics status
    otherwise. ``scale`` = 1 / sqrt(sigma^2 + (relative |tau|)^2) per joint; the links
    ``fixed`` to the base take the poses ``fixed_R``, ``fixed_o``; ``link_fits``: twice the
    number of joints moving each link, at most 5 (Akaike's price of what a contact on it fits).
    """
    n = tau.shape[0]
    for j in range(q.shape[0]):
        if not math.isfinite(q[j]):
            return BAD_INPUT, 0.0, 0.0
    above = False
    tt = t2 = 0.0
    for j in range(n):
        if not (math.isfinite(tau[j]) and math.isfinite(sigma[j]) and sigma[j] > 0.0
                and math.isfinite(thr[j]) and thr[j] >= 0.0):
            return BAD_INPUT, 0.0, 0.0
        above = above or abs(tau[j]) > thr[j]
        scale[j] = 1.0 / math.sqrt(sigma[j] * sigma[j] + (relative * tau[j]) ** 2)
        tau_w[j] = tau[j] * scale[j]
        tt += tau_w[j] * tau_w[j]
        t2 += tau[j] * tau[j]
    if not above:
        return _NOTHING, tt, math.sqrt(t2)
    status = frames_state(ints, reals, q, bodies, data, Rs, os, Js)
    if status != OK:
        return status, tt, math.sqrt(t2)
    for i in range(fixed.shape[0]):   # links fixed to the base: their frame is their pose
        Rs[fixed[i]] = fixed_R[i]
        os[fixed[i]] = fixed_o[i]
    for L in range(Js.shape[0]):
        moving = 0
        for j in range(n):
            total = 0.0
            for r in range(6):
                Js[L, r, j] *= scale[j]
                total += abs(Js[L, r, j])
            if total > 0.0:
                moving += 1
        link_fits[L] = 2.0 * min(moving, 5)
    link_blocks(Js, tau_w, blocks)
    return OK, tt, math.sqrt(t2)


def _vector(name, value, n, check):
    """Return ``value`` if a float (n,) array (checked in :func:`prepare_state`), else checked."""
    if type(value) is np.ndarray and value.dtype == np.float64 and value.shape == (n,):
        return value
    return check(name, value, n)


def _problem(model, geometry, q, tau_ext, friction_coefficient, noise, relative_noise,
             threshold, resolution, checked=False):
    """
    Return the :class:`_Problem` of one call, or the :class:`ContactLocation` answering it.

    ``checked``: the options were checked already (a :class:`denoc_ros.ContactTracker`'s).
    """
    if model.floating:
        raise InputError('contact localization needs a fixed-base model '
                         f'({model.name!r} has a free-flyer root)')
    n = model.nv
    qv = _vector('q', q, model.nq, _as_vector)
    tau = _vector('tau_ext', tau_ext, n, _as_vector)
    if not checked:
        _check_options(friction_coefficient, relative_noise, resolution)
    sigma = _vector('noise', noise, n, _per_joint)
    thr = 3.0 * sigma if threshold is None else _vector('threshold', threshold, n, _per_joint)
    if not geometry.surfaces:
        _checked_inputs(model, q, tau_ext, noise, threshold)
        if not np.any(np.abs(tau) > thr):
            return ContactLocation(NO_CONTACT, message='no joint torque above the contact '
                                   'threshold')
        return ContactLocation(UNEXPLAINED, message='the robot has no readable collision '
                               'geometry: nothing to locate the contact on')
    surf = _surfaces(geometry)
    movable, bodies, data, fixed, posed, seen = _link_frames(surf, model)
    L = len(surf.names)
    p = _Problem()
    p.Rs, p.os, p.Js = np.empty((L, 3, 3)), np.empty((L, 3)), np.empty((L, 6, n))
    p.scale, p.tau_w = np.empty(n), np.empty(n)
    p.blocks, p.link_fits = np.empty((L, 33)), np.empty(L)
    pk = packed(model)
    # Whitening: each joint's torque and Jacobian column divided by its error's standard
    # deviation, so that a squared residual is a chi-square with n degrees of freedom. The
    # links' poses and Jacobians, from one forward kinematics.
    status, p.tt, p.tau_norm = prepare_state(
        pk.ints, pk.reals, qv, tau, sigma, thr, float(relative_noise), bodies, data, *fixed,
        p.Rs, p.os, p.Js, p.scale, p.tau_w, p.blocks, p.link_fits)
    if status == BAD_INPUT:
        _checked_inputs(model, q, tau_ext, noise, threshold)
    if status == _NOTHING:
        return ContactLocation(NO_CONTACT, message='no joint torque above the contact threshold')
    if not np.any(movable):
        return ContactLocation(UNEXPLAINED, message='no moving link of the model has collision '
                               'geometry: nothing to locate the contact on')
    if status != OK:
        raise InputError(f'q gives no finite kinematics: {qv!r}')
    p.model, p.geometry, p.qv, p.tau, p.n, p.surf, p.seen = model, geometry, qv, tau, n, surf, seen
    p.band2 = BAND * BAND
    p.lam = 1.0 / FORCE_SCALE ** 2
    p.mu = float(friction_coefficient)
    p.resolution = resolution
    p.movable, p.bodies, p.posed = movable, bodies, posed
    # A point is judged by its evidence: the likelihood of the torques with the force
    # integrated out under its prior N(0, FORCE_SCALE^2 I) (Laplace), minus twice its log being
    # the score r2 + ld: the best fit's chi-square (with the prior's term) plus log det of the
    # force's information J_r J_r^T + lam I (whitened). A distal link that fits a proximal
    # contact's torques, its own joints' zeros included, pays for the force it must tune to
    # do so (a larger determinant), and a point where the torques say little about the force
    # is not preferred for its good fit alone. Each point is also judged on its fit alone, with
    # Akaike's price of what a contact on its link fits (``link_fits``).
    return p


def _checked_inputs(model, q, tau_ext, noise, threshold):
    """Raise the InputError naming what is wrong with the inputs, if anything is."""
    n = model.nv
    _as_vector('q', q, model.nq)
    _as_vector('tau_ext', tau_ext, n)
    sigma = _per_joint('noise', noise, n)
    if np.any(sigma <= 0.0):
        raise InputError(f'noise must be > 0 on every joint, got {noise!r}')
    if threshold is not None:
        _per_joint('threshold', threshold, n)


class _Points:
    """The scored points of one call: fine samples, then unrefined clusters' coarse points."""

    __slots__ = ('fine', 'coarse', 'owner', 'cluster', 'p_link', 'n_link', 'area', 'r2', 'ld',
                 'force', 'link_best')

    def __init__(self, surf, fine, coarse):
        """Take the fine-point indices ``fine`` and coarse clusters ``coarse`` of ``surf``."""
        self.fine, self.coarse = fine, coarse
        self.owner = np.concatenate((surf.owner[fine], surf.coarse_owner[coarse]))
        self.cluster = np.concatenate((surf.point_cluster[fine], coarse))
        self.p_link = np.concatenate((surf.points[fine], surf.coarse_points[coarse]))
        self.n_link = np.concatenate((surf.normals[fine], surf.coarse_normals[coarse]))
        self.area = np.concatenate((surf.area[fine], surf.coarse_area[coarse]))
        self.link_best = None   # the full search's best cluster of each link (coarse level)

    def score(self, p):
        """Score every point at the problem ``p`` (the fine ones with a polished cone)."""
        surf, m = p.surf, self.fine.shape[0]
        total = m + self.coarse.shape[0]
        self.r2, self.ld, self.force = np.empty(total), np.empty(total), np.empty((total, 3))
        cos_, sin_ = _ANGLES
        score_points(surf.points, surf.normals, surf.owner, self.fine, p.Rs, p.blocks, p.tt,
                     p.mu, p.lam, cos_, sin_, POLISH, 1, p.band2, self.r2[:m], self.ld[:m],
                     self.force[:m])
        if total > m:
            score_points(surf.coarse_points, surf.coarse_normals, surf.coarse_owner,
                         self.coarse, p.Rs, p.blocks, p.tt, p.mu, p.lam, cos_, sin_, 0,
                         MAX_REFINED_CLUSTERS, p.band2, self.r2[m:], self.ld[m:],
                         self.force[m:])


def _full_points(p):
    """
    Return the :class:`_Points` of the full search, scored: coarse level, then fine.

    One point per cluster is scored; the best clusters are refined whatever their coarse score
    (a coarse point up to half a cluster from the contact can score far worse than the contact
    itself); clusters past those that still come within the band stay as their coarse points
    (the answer is then ambiguous anyway).
    """
    surf, band2 = p.surf, p.band2
    cos_, sin_ = _ANGLES
    c_idx = np.flatnonzero(p.movable[surf.coarse_owner]).astype(np.int64)
    c_r2, c_ld = np.empty(c_idx.shape[0]), np.empty(c_idx.shape[0])
    c_force = np.empty((c_idx.shape[0], 3))
    score_points(surf.coarse_points, surf.coarse_normals, surf.coarse_owner, c_idx, p.Rs,
                 p.blocks, p.tt, p.mu, p.lam, cos_, sin_, 0, MAX_REFINED_CLUSTERS, band2, c_r2,
                 c_ld, c_force)
    c_score = c_r2 + c_ld
    c_fit = c_r2 + p.link_fits[surf.coarse_owner[c_idx]]
    order = np.argsort(c_score, kind='stable')
    pick = np.unique(np.concatenate((order[:MAX_REFINED_CLUSTERS],
                                     np.argsort(c_fit, kind='stable')[:MAX_REFINED_CLUSTERS
                                                                      // 4])))
    f_idx = _ranges(surf.start, c_idx[pick])
    points = _Points(surf, f_idx, np.zeros(0, dtype=np.int64))
    points.score(p)
    best = min(float((points.r2 + points.ld).min()), float(c_score.min()))
    unpicked = np.ones(c_idx.shape[0], dtype=bool)
    unpicked[pick] = False
    rest = np.flatnonzero(unpicked & ((c_score <= best + band2)
                                      | (c_fit <= c_fit.min() + band2)))
    # each link's best cluster at the coarse level, by evidence and by fit (a tracker's
    # sentinels on the links its points leave out)
    owners = surf.coarse_owner[c_idx]
    link_best = []
    for score in (c_score, c_fit):
        by_link = np.lexsort((score, owners))
        link_best.append(c_idx[by_link[np.r_[True, owners[by_link][1:] != owners[by_link][:-1]]]])
    if rest.shape[0] == 0:
        points.link_best = np.unique(np.concatenate(link_best))
        return points
    full = _Points(surf, f_idx, c_idx[rest])
    full.link_best = np.unique(np.concatenate(link_best))
    full.r2 = np.concatenate((points.r2, c_r2[rest]))
    full.ld = np.concatenate((points.ld, c_ld[rest]))
    full.force = np.concatenate((points.force, c_force[rest]))
    return full


@jit
def _band(r2, ld, fits, band2, extra):
    """Return the indices within ``band2 + extra`` of the best on evidence or on fit alone."""
    s_min = f_min = np.inf
    for k in range(r2.shape[0]):
        s_min = min(s_min, r2[k] + ld[k])
        f_min = min(f_min, r2[k] + fits[k])
    out = np.empty(r2.shape[0], dtype=np.int64)
    m = 0
    for k in range(r2.shape[0]):
        if r2[k] + ld[k] <= s_min + band2 + extra or r2[k] + fits[k] <= f_min + band2 + extra:
            out[m] = k
            m += 1
    return out[:m]


@jit
def _heads(index, score, cluster, n_clusters):
    """Return each cluster's best of the points ``index`` by ``score``, the best first."""
    head = np.full(n_clusters, -1, dtype=np.int64)
    for k in index:   # the first of equal scores, as a stable sort
        c = cluster[k]
        if head[c] < 0 or score[k] < score[head[c]]:
            head[c] = k
    heads = head[head >= 0]   # in cluster order
    values = np.empty(heads.shape[0])
    for i in range(heads.shape[0]):
        values[i] = score[heads[i]]
    return heads[np.argsort(values, kind='mergesort')]


@jit
def screen_and_refine(owner, cluster, p_link, n_link, r2, ld, force, fits, band2, n_clusters,
                      Rs, os, posed, cells, origin, dims, offset, h, tau_w, Js, blocks, step, mu,
                      lam):
    """
    Drop the points nothing can push, then refine the best off the sampling grid, in place.

    Points nothing can push (covered by another link's solid where shapes overlap at a joint,
    or with the robot in the way of a pusher, :func:`unreachable`) get ``r2 = inf``. The best
    sample of each cluster within reach is refined off the grid (within one spacing, in its
    tangent plane, :func:`refine_samples`): a sample half a spacing from the contact leaves a
    moment error of |F| times that, which must decide neither between links nor between the
    points where a line of action crosses the surface. The best REFINED_SAMPLES clusters by
    evidence and by fit, and each link's best by either. Returns the points that took part (a
    boolean mask): those screened and those refined; the candidates
    (:func:`candidate_set`) join them in :func:`_judge`.
    """
    near = _band(r2, ld, fits, band2, 0.0)
    hidden = np.empty(near.shape[0], dtype=np.bool_)
    unreachable(p_link, n_link, owner, near, Rs, os, posed, cells, origin, dims, offset, h,
                APPROACH, hidden)
    if not np.all(hidden):
        for i in range(near.shape[0]):
            if hidden[i]:
                r2[near[i]] = np.inf
    reach = _band(r2, ld, fits, band2, REFINE_REACH)
    chosen = np.zeros(r2.shape[0], dtype=np.bool_)
    for which in range(2):
        score = r2 + ld if which == 0 else r2 + fits
        heads = _heads(reach, score, cluster, n_clusters)
        seen = np.zeros(Rs.shape[0], dtype=np.bool_)
        for i in range(heads.shape[0]):
            k = heads[i]
            if i < REFINED_SAMPLES or not seen[owner[k]]:
                chosen[k] = True
            seen[owner[k]] = True
    picked = np.flatnonzero(chosen)
    refine_samples(tau_w, Rs, Js, owner, picked, p_link, n_link, force, r2, step, mu, lam)
    log_dets(p_link, n_link, owner, picked, Rs, blocks, lam, ld)
    chosen[near] = True
    return chosen


@jit
def candidate_set(owner, cluster, r2, ld, fits, area, p_link, Rs, os, bodies, band2,
                  n_clusters, keep_at_most, spacing):
    """
    Return the candidates of the scored points and what decides between located and ambiguous.

    The candidates ``within`` are the points within the band of the best evidence or of the
    best fit alone (``fair``); ``w`` their weights (evidence times area, summing to 1);
    ``mass`` the weight per link; ``k`` the answer's point: on the body with the most weight,
    the best evidence; ``cand`` the candidates in the base frame; ``cov`` their covariance under
    ``w`` (plus ``spacing**2 / 12`` on the diagonal, a sample's own spread), ``spread`` its
    widest standard deviation, ``spread_fit`` that of the ``fair`` ones' covariance under their
    likelihood alone (times the area);
    ``share`` the weight on ``k``'s body; ``others`` whether a fair point lies on another body;
    ``keep`` (indices into ``within``): one per cluster, its best, the best clusters first.
    """
    m = r2.shape[0]
    j_min = f_min = np.inf
    for i in range(m):
        j_min = min(j_min, r2[i] + ld[i])
        f_min = min(f_min, r2[i] + fits[i])
    within = np.empty(m, dtype=np.int64)
    is_fair = np.empty(m, dtype=np.bool_)
    c = 0
    for i in range(m):
        fair = r2[i] + fits[i] <= f_min + band2
        if fair or r2[i] + ld[i] <= j_min + band2:
            within[c] = i
            is_fair[c] = fair
            c += 1
    within, is_fair = within[:c], is_fair[:c]
    judged = np.empty(c)
    low = np.inf
    for a in range(c):
        judged[a] = r2[within[a]] + ld[within[a]]
        low = min(low, judged[a])
    w = np.empty(c)
    for a in range(c):
        w[a] = math.exp(-0.5 * (judged[a] - low)) * area[within[a]]
    w /= w.sum()
    n_links = Rs.shape[0]
    mass = np.zeros(n_links)
    body_mass = np.zeros(bodies.max() + 1)
    for a in range(c):
        mass[owner[within[a]]] += w[a]
    for L in range(n_links):
        body_mass[bodies[L]] += mass[L]
    body = np.argmax(body_mass)
    k = -1
    for a in range(c):
        if bodies[owner[within[a]]] == body and (k < 0 or judged[a] < judged[k]):
            k = a
    cand = np.empty((c, 3))
    for a in range(c):
        L = owner[within[a]]
        x = p_link[within[a]]
        for r in range(3):
            cand[a, r] = Rs[L, r, 0] * x[0] + Rs[L, r, 1] * x[1] + Rs[L, r, 2] * x[2] + os[L, r]
    cov = _covariance(cand, w)
    for r in range(3):
        cov[r, r] += spacing * spacing / 12.0
    mine = bodies[owner[within[k]]]
    share = 0.0
    others = False
    r_fair = np.inf
    for a in range(c):
        if bodies[owner[within[a]]] == mine:
            share += w[a]
        elif is_fair[a]:
            others = True
        if is_fair[a]:
            r_fair = min(r_fair, r2[within[a]])
    w_fit = np.zeros(c)
    for a in range(c):
        if is_fair[a]:
            w_fit[a] = math.exp(-0.5 * (r2[within[a]] - r_fair)) * area[within[a]]
    w_fit /= w_fit.sum()
    spread = _widest(cov)
    spread_fit = _widest(_covariance(cand, w_fit))
    local = np.empty(m, dtype=np.int64)   # point -> its place in within
    for a in range(c):
        local[within[a]] = a
    heads = _heads(within, r2 + ld, cluster, n_clusters)
    keep = np.empty(min(heads.shape[0], keep_at_most), dtype=np.int64)
    for i in range(keep.shape[0]):
        keep[i] = local[heads[i]]
    return within, w, mass, k, cand, cov, spread, spread_fit, share, others, keep


@jit
def _covariance(points, weights):
    """Return the covariance (3, 3) of ``points`` (m, 3) under ``weights`` summing to 1."""
    mean = np.zeros(3)
    for a in range(points.shape[0]):
        for r in range(3):
            mean[r] += weights[a] * points[a, r]
    cov = np.zeros((3, 3))
    for a in range(points.shape[0]):
        if weights[a] == 0.0:
            continue
        for r in range(3):
            for s in range(3):
                cov[r, s] += weights[a] * (points[a, r] - mean[r]) * (points[a, s] - mean[s])
    return cov


def _judge(p, pts):
    """
    Return the :class:`ContactLocation` of the scored points ``pts`` at the problem ``p``.

    Also returns ``r_min2``, the best chi-square, and which points took part in the answer (a
    boolean mask: those screened for reachability, those refined, the candidates), for a
    tracker: on the same inputs, a subset of the points that holds every cluster of those
    gives the same answer (the same minimum, the same clusters' best points refined, the same
    candidates).
    """
    surf, band2, n, tau, scale = p.surf, p.band2, p.n, p.tau, p.scale
    owner, cluster, area = pts.owner, pts.cluster, pts.area
    r2, ld, force = pts.r2, pts.ld, pts.force
    p_link = pts.p_link.copy()
    # Each point is judged twice: on its evidence (r2 + ld) and on its fit alone (r2 plus
    # Akaike's price of what a contact on its link fits, see below).
    fits = p.link_fits[owner].astype(float)
    n_clusters = surf.start.shape[0] - 1
    cells, origin, dims, offset, h = surf.solids()
    took_part = screen_and_refine(owner, cluster, p_link, pts.n_link, r2, ld, force, fits,
                                  band2, n_clusters, p.Rs, p.os, p.posed, cells, origin, dims,
                                  offset, h, p.tau_w, p.Js, p.blocks, p.geometry.spacing, p.mu,
                                  p.lam)
    k0 = int(np.argmin(r2))
    r_min2 = float(r2[k0])
    tau_norm = p.tau_norm

    # Unexplained: the best residual is not what noise on n joints leaves (chi-square with n
    # degrees of freedom, UNEXPLAINED_SIGMAS of its standard deviations above its mean), or a
    # body without a surface explains the torques markedly better than any surface point.
    L0 = owner[k0]
    limit2 = n + UNEXPLAINED_SIGMAS * math.sqrt(2.0 * n)
    # A moving body without a surface (no collision geometry, or none readable) that could have
    # been touched: the best wrench on it, scored as the surface points are, bounds what a
    # contact there explains.
    bodies = p.bodies
    bare, bare_score = _bare_body(p.model, p.seen, p.qv, p.tau_w, scale)
    if r_min2 > limit2 or (bare is not None and bare_score < r_min2 - 2.0 * band2):
        residual = _residual(tau, p.Rs[L0], p.Js[L0], scale, p_link[k0], force[k0])
        if bare is not None and bare_score < r_min2:
            why = (f'link {bare!r}, which has no collision geometry, explains the torques better '
                   f'than any surface point (best on {surf.names[L0]}, residual '
                   f'{residual:.3g} N m)')
        else:
            why = (f'no single contact on a link with geometry explains the torques (best on '
                   f'{surf.names[L0]}, residual {residual:.3g} N m = '
                   f'{100 * residual / tau_norm:.0f} % of |tau_ext|, chi-square {r_min2:.1f} for '
                   f'{n} joints): two contacts, or a link without geometry')
        return ContactLocation(UNEXPLAINED, residual=residual,
                               relative_residual=residual / tau_norm, message=why), r_min2, \
            took_part

    # Candidates: the points whose evidence is within the band of the best, weighted by their
    # evidence times the area they stand for (the posterior of the contact's place, uniform
    # prior over the surface), and those within the band on their fit alone (``fair``): a
    # contact there is less likely, not excluded. The link is the one with the most weight (a
    # link whose points explain the torques over an area beats one where only a thin curve
    # does); the point is that link's best: on the body with the most weight, the best point
    # (links fixed to one another feel the same torques: only where the point lies tells them
    # apart). A bare body as good as the surface's best: the surface's answer is one
    # possibility.
    bare_possible = bare is not None and bare_score <= r_min2 + band2
    within, w, mass, a, cand, cov, spread, spread_fit, body_share, others, keep = candidate_set(
        owner, cluster, r2, ld, fits, area, p_link, p.Rs, p.os, bodies, band2, n_clusters,
        MAX_CANDIDATES, p.geometry.spacing)
    k = int(within[a])
    link = int(owner[k])
    R, o = p.Rs[link], p.os[link]
    # Located also needs that no point of another body explains the torques within the band
    # on its fit alone (its chi-square plus twice what a contact on its link fits of the
    # torques, Akaike: min(5, joints moving it)): where the evidence prefers a body only
    # because a contact on another would need a less likely force (a push on a roll link's
    # cylinder that passes through its axis), both remain possible. And the spread, weighed by
    # the likelihoods alone (times the area), must hold too: among the points where one line
    # of action crosses the surface, the evidence prefers those where the torques pin the force
    # down least.
    located = (body_share >= BODY_SHARE and not others
               and max(spread, spread_fit) <= p.resolution and not bare_possible)
    took_part[within] = True
    name = surf.names[link]
    point, f_best = p_link[k].copy(), force[k].copy()
    residual = _residual(tau, R, p.Js[link], scale, point, f_best)
    if located:
        message = (f'{name} at {_fmt(point)} (link frame), '
                   f'{np.linalg.norm(f_best):.3g} N, spread {100 * spread:.1f} cm')
    else:
        top = np.argsort(mass)[::-1][:4]
        share = ', '.join(f'{surf.names[i]} {100 * mass[i]:.0f} %' for i in top if mass[i] > 0)
        message = (f'ambiguous: {keep.shape[0]} candidate areas explain the torques (spread '
                   f'{100 * spread:.1f} cm; {share}); best on {name}')
        if bare_possible:
            message += f'; or link {bare!r}, which has no collision geometry'
    names = surf.names
    location = ContactLocation(
        LOCATED if located else AMBIGUOUS, link=name, point=point,
        point_base=R @ point + o, normal=pts.n_link[k].copy(), normal_base=R @ pts.n_link[k],
        force=f_best, residual=residual, relative_residual=residual / tau_norm,
        covariance=cov, candidates=cand[keep],
        candidate_links=tuple(names[i] for i in owner[within[keep]]), message=message)
    return location, r_min2, took_part


def locate_contact(model, geometry, q, tau_ext, *, friction_coefficient=0.6, noise=0.3,
                   relative_noise=0.02, threshold=None, resolution=0.02):
    """
    Return the :class:`ContactLocation` of one contact force that explains ``tau_ext`` best.

    ``geometry``: :func:`denoc_ros.load_collision_geometry` of the same robot (links the model
    does not have, or that are fixed to the base, are skipped). ``tau_ext`` (n,): the external
    joint torques (e.g. a :class:`denoc_ros.MomentumObserver`'s estimate), with
    ``M qdd + C qd + g = tau + tau_ext``. ``noise`` [N m], one or per joint: the standard
    deviation of each joint's torque error (the node measures it while nothing touches the
    arm); with ``relative_noise`` (a fraction of each joint's ``|tau_ext|``, for model error)
    it weighs the joints, so that a squared residual is a chi-square with n degrees of
    freedom: the band of equally good candidates is ``BAND`` sigmas, and a best residual beyond
    what n joints of noise leave means no single contact. ``threshold`` (N m, one or per
    joint; default 3 ``noise``): below it on every joint there is no contact. ``resolution``
    [m]: the largest spread of the candidates (standard deviation along their widest axis, all
    on one body) still called ``'located'``. A stream of joint states of one contact is
    located faster by a :class:`denoc_ros.ContactTracker`.
    """
    p = _problem(model, geometry, q, tau_ext, friction_coefficient, noise, relative_noise,
                 threshold, resolution)
    if isinstance(p, ContactLocation):
        return p
    return _judge(p, _full_points(p))[0]


@jit
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@jit
def _refine_cost(tau, J, d, f, r):
    """Write r = tau - J_v^T f - J_w^T (d x f); return r.r."""
    m0, m1, m2 = _cross(d[0], d[1], d[2], f[0], f[1], f[2])
    total = 0.0
    for j in range(tau.shape[0]):
        v = (tau[j] - J[0, j] * f[0] - J[1, j] * f[1] - J[2, j] * f[2]
             - J[3, j] * m0 - J[4, j] * m1 - J[5, j] * m2)
        r[j] = v
        total += v * v
    return total


@jit
def refine_point(tau, R, J, x, m, F, step, mu, lam, iterations, x_out, F_out):
    """
    Gauss-Newton on a sample's point (in its tangent plane) and force; return the new r^2.

    tau ~ J_v^T F + J_w^T ((d + a t1 + b t2) x F) with d = R x (J, tau whitened); (a, b) stay
    within ``step`` of the sample (its neighbours' spacing) and F in the friction cone, else the
    sample and its force are kept. Writes the point (link frame) and force into x_out, F_out.
    """
    n = tau.shape[0]
    d0 = np.empty(3)
    nb = np.empty(3)
    for i in range(3):
        d0[i] = R[i, 0] * x[0] + R[i, 1] * x[1] + R[i, 2] * x[2]
        nb[i] = R[i, 0] * m[0] + R[i, 1] * m[1] + R[i, 2] * m[2]
    if abs(nb[0]) < 0.9:
        t1 = _cross(nb[0], nb[1], nb[2], 1.0, 0.0, 0.0)
    else:
        t1 = _cross(nb[0], nb[1], nb[2], 0.0, 1.0, 0.0)
    norm = math.sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2])
    t1 = (t1[0] / norm, t1[1] / norm, t1[2] / norm)
    t2 = _cross(nb[0], nb[1], nb[2], t1[0], t1[1], t1[2])
    f = np.empty(3)
    f[:] = F
    d = d0.copy()
    r = np.empty(n)
    a_, b_ = 0.0, 0.0
    best = _refine_cost(tau, J, d, f, r) + lam * (f[0] * f[0] + f[1] * f[1] + f[2] * f[2])
    start = best
    A = np.empty((n, 5))
    N = np.empty((5, 5))
    rhs = np.empty(5)
    new_f = np.empty(3)
    new_d = np.empty(3)
    r_new = np.empty(n)
    for _ in range(iterations):
        e1 = _cross(t1[0], t1[1], t1[2], f[0], f[1], f[2])
        e2 = _cross(t2[0], t2[1], t2[2], f[0], f[1], f[2])
        for j in range(n):
            # d(pred)/df_k = J_v^T e_k + J_w^T (d x e_k); d x e_0 = (0, d2, -d1), d x e_1 =
            # (-d2, 0, d0), d x e_2 = (d1, -d0, 0).
            w0, w1, w2 = J[3, j], J[4, j], J[5, j]
            A[j, 0] = J[0, j] + w1 * d[2] - w2 * d[1]
            A[j, 1] = J[1, j] - w0 * d[2] + w2 * d[0]
            A[j, 2] = J[2, j] + w0 * d[1] - w1 * d[0]
            A[j, 3] = w0 * e1[0] + w1 * e1[1] + w2 * e1[2]
            A[j, 4] = w0 * e2[0] + w1 * e2[1] + w2 * e2[2]
        for p in range(5):
            s_ = 0.0
            for j in range(n):
                s_ += A[j, p] * r[j]
            rhs[p] = s_ - (lam * f[p] if p < 3 else 0.0)
            for q in range(p, 5):
                s_ = 0.0
                for j in range(n):
                    s_ += A[j, p] * A[j, q]
                N[p, q] = s_
                N[q, p] = s_
        # Levenberg's damping, relative to the system's scale, keeps it regular where the point
        # cannot move the torques (a prismatic link, a zero force).
        damp = 1e-9 * (N[0, 0] + N[1, 1] + N[2, 2] + N[3, 3] + N[4, 4]) + 1e-300
        for p in range(5):
            N[p, p] += (lam if p < 3 else 0.0) + damp
        delta = np.linalg.solve(N, rhs)
        na, nb_ = a_ + delta[3], b_ + delta[4]
        length = math.sqrt(na * na + nb_ * nb_)
        if length > step:
            na, nb_ = na * step / length, nb_ * step / length
        for i in range(3):
            new_f[i] = f[i] + delta[i]
            new_d[i] = d0[i] + na * t1[i] + nb_ * t2[i]
        value = _refine_cost(tau, J, new_d, new_f, r_new) + lam * (
            new_f[0] * new_f[0] + new_f[1] * new_f[1] + new_f[2] * new_f[2])
        if value >= best:
            break
        a_, b_, best = na, nb_, value
        f[:] = new_f
        d[:] = new_d
        r[:] = r_new
    fn = -(f[0] * nb[0] + f[1] * nb[1] + f[2] * nb[2])
    ft0, ft1, ft2 = f[0] + fn * nb[0], f[1] + fn * nb[1], f[2] + fn * nb[2]
    if best >= start or fn < 0.0 or ft0 * ft0 + ft1 * ft1 + ft2 * ft2 > (mu * fn) ** 2:
        x_out[:] = x
        F_out[:] = F
        return start
    for i in range(3):  # x + R^T (a t1 + b t2)
        x_out[i] = x[i] + (R[0, i] * (a_ * t1[0] + b_ * t2[0]) + R[1, i] * (a_ * t1[1] + b_
                           * t2[1]) + R[2, i] * (a_ * t1[2] + b_ * t2[2]))
    F_out[:] = f
    return best


@jit
def refine_samples(tau, Rs, Js, owner, chosen, points, normals, force, r2, step, mu, lam):
    """Refine the samples ``chosen`` in place (:func:`refine_point`: point, force, r^2)."""
    x_out, F_out = np.empty(3), np.empty(3)
    for k in chosen:
        L = owner[k]
        r2[k] = refine_point(tau, Rs[L], Js[L], points[k], normals[k], force[k], step, mu, lam,
                             REFINE_ITERATIONS, x_out, F_out)
        points[k, :] = x_out
        force[k, :] = F_out


@jit
def _residual(tau, R, J, scale, x, F):
    """
    Return |tau - J_r^T F| [N m] for the link-frame point x (J at the link's origin, whitened).

    J_r^T F = J_v^T F + J_w^T (d x F) with d = R x; ``J[:, j] / scale[j]`` unwhitens column j.
    """
    d0 = R[0, 0] * x[0] + R[0, 1] * x[1] + R[0, 2] * x[2]
    d1 = R[1, 0] * x[0] + R[1, 1] * x[1] + R[1, 2] * x[2]
    d2 = R[2, 0] * x[0] + R[2, 1] * x[1] + R[2, 2] * x[2]
    m0, m1, m2 = _cross(d0, d1, d2, F[0], F[1], F[2])
    total = 0.0
    for j in range(tau.shape[0]):
        v = tau[j] - (J[0, j] * F[0] + J[1, j] * F[1] + J[2, j] * F[2] + J[3, j] * m0
                      + J[4, j] * m1 + J[5, j] * m2) / scale[j]
        total += v * v
    return math.sqrt(total)


def _bare_body(model, seen, q, tau_w, scale):
    """
    Return the best-fitting moving body without a surface (its link) and its score, or None.

    The score is the whitened residual of the best wrench on the body (a lower bound for any
    contact on it) plus 2, Akaike's price of the wrench's sixth component, which a point force
    (a point on a surface and three force components) does not have.
    """
    best, best_score = None, math.inf
    for body, name in enumerate(model.link_names):
        if body in seen:
            continue
        J = jacobian(model, q, name) * scale
        w, *_ = np.linalg.lstsq(J.T, tau_w, rcond=1e-10)
        r = tau_w - J.T @ w
        score = float(r @ r) + 2.0
        if score < best_score:
            best, best_score = name, score
    return best, best_score


def _fmt(v):
    return '(' + ', '.join(f'{x:.3f}' for x in v) + ') m'
