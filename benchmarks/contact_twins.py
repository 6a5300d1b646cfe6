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
Torque twins of the contact-accuracy pushes: could another link have made the same torques.

Run from the repository root on a report of ``benchmarks/contact_accuracy.py``::

    .venv/bin/python benchmarks/contact_accuracy.py --seed 0 --report /tmp/ca0
    .venv/bin/python benchmarks/contact_twins.py --report /tmp/ca0

A push on link ``k`` has a *twin* on another link ``L`` if a push on ``L`` -- at a point a
pusher can reach, with a force inside the pushes' friction cone -- gives the same joint torques
within the noise: then no method that sees only the joint torques and the geometry can tell
``k`` from ``L``. The oracle is independent of the code under test (nothing of
``denoc_ros.contact`` is called): MuJoCo and numpy / scipy only.

**The oracle** (:class:`TwinOracle`). For one push record (its configuration ``q`` and MuJoCo's
noise-free torques ``tau_true = J^T F``) and every link ``L`` with collision geometry other than
the pushed link and the links of its rigid body (bodies MuJoCo joins to their parent without a
joint: panda_link7, panda_link8 and panda_hand are one), points are drawn area-uniformly on
``L``'s MuJoCo triangles (:class:`contact_accuracy.SurfaceTruth`, ``--points`` per link, the
same points in the link frame for every push). At each point ``p`` with outward normal ``n``
the force is fitted by nonnegative least squares over the generators of a polyhedral cone
inscribed in the friction cone ``mu`` = :data:`contact_accuracy.FRICTION` = 0.5 about ``-n``
(``--generators`` edges, default 32: every force it allows is inside the circular cone, so a
twin found is a twin of the true cone, and the cone is 0.5 % narrower at most):

    chi2(p) = min_{c >= 0} sum_j ((J_p(q)^T G c - tau_true)_j / sigma_j)^2,   F = G c,

``J_p`` the linear Jacobian of the point from MuJoCo (``mj_jac`` at the body's origin, moved to
the point), ``sigma_j`` the per-joint standard deviation the locator whitens with (read from
``denoc_ros/contact/locate.py``, ``prepare_state``: ``sqrt(noise_j^2 + (relative_noise
|tau_ext_j|)^2)``, ``noise`` what the benchmark gave the locator -- the observer's RMS at rest
-- ``tau_ext`` the observer's estimate it located, ``relative_noise`` the locator's default).
A point counts only where the benchmark would have drawn it as a truth point: reachable (the
pusher's path along the *fitted* force's direction free, ``SurfaceTruth.reachable``) and not
inside another link's shape (``SurfaceTruth.covered``); the points are checked in increasing
``chi2``, so the link's figure is the smallest ``chi2`` over the points kept. Where that is
under :data:`REFINE_BELOW`, points are added area-uniformly about the best ones (kept or not)
in rounds of 2 cm, 6 mm and 2 mm (:data:`REFINE`): on the pushes of a 24-push report, 3000
points per link and 12000 gave the same twin figures within 0.6 in ``chi2``. The push has a
twin on ``L`` at a threshold if that ``chi2`` is within it (:data:`THRESHOLDS` 1, 4, 9; the
decision at :data:`TWIN` = 4). Of a twin the force is reported: the smallest ``|F|`` over the
kept points within :data:`TWIN` (a twin needing more than :data:`contact_accuracy.FORCE`'s 40 N
is outside the pushes' range, and less plausible).

**Output** (:func:`format_table`): per pushed link, over the detectable pushes (as the
benchmark's link right): pushes, link right, pushes with a twin, misses, misses with a twin
(on any link; on the link the locator named), and the link right among the pushes without a
twin; the overall figures for panda_link3 .. fingers; every miss without a twin on the named
link (a locator error, or a named link of the pushed one's own body); the twins' forces.
For a miss, also the smallest ``chi2`` of the pushed and the named link on the torques the
locator had (the observer's ``tau_ext``, same sigma): whether the noise made the named link fit
as well; and the observer's own error ``tau_ext - tau_true`` in the same sigma (how
conservative the locator's sigma is: a twin within ``chi2`` 4 of it may still be several of the
actual errors away). ``twins.json`` beside the report holds every record's figures.

**Measured** 2026-12-02 00:24-00:32 UTC (AMD EPYC, 2 cores; MuJoCo 4.0.0) on the reports of
``contact_accuracy.py --seed 0`` .. ``3`` (2026-12-01 23:58 - 12-02 00:07 UTC), 1277 detectable
pushes on panda_link3 .. fingers, 3000 points per link, 150-180 s per seed: link right 1202
(94.1 %); 165 pushes have a twin (chi2 <= 4), 104 of them named right; of the 75 misses 40 / 61
/ 71 have a twin within chi2 1 / 4 / 9 (56 within 4 on the very link named); among the 1112
pushes without a twin the link is right in 1098 (98.7 %). 9 of the 165 twins need more than
40 N. The 14 misses without a twin: 11 with the named link within chi2 4.2-9.3 of the
torques, and 3 pushes on panda_hand named panda_link7 (its own body, so no twin by definition;
chi2 17-141 there: link7's points that fit lie inside the hand's shape, or out of a pusher's
reach). The observer's own error in the locator's sigma:
chi2 median 0.13-0.16 (still arm), 0.89-1.00 (moving). 12000 points per link gave the same
counts on seeds 0 and 3, but on seed 0 2 more twins within chi2 1 and 1 more beyond 40 N.
"""

import argparse
import inspect
import json
import math
import pathlib
import sys
import time

import contact_accuracy as ca
import numpy as np

POINTS = 3000          # points per link
GENERATORS = 32        # edges of the polyhedral friction cone
THRESHOLDS = (1.0, 4.0, 9.0)
TWIN = 4.0             # chi-square of a twin
MAX_CHECKS = 400       # points checked for reachability per link before giving up
REFINE_BELOW = 30.0    # a link's best chi2 under this: points are added about its best
REFINE = ((0.02, 300), (0.006, 300), (0.002, 300))   # rounds: radius [m], points per seed
REFINE_SEEDS = 6       # the best points refined about, per round


def locator_relative_noise():
    """Return ``locate_contact``'s default ``relative_noise`` (its signature read, not called)."""
    from denoc_ros.contact.locate import locate_contact
    return float(inspect.signature(locate_contact).parameters['relative_noise'].default)


def locator_noise_default():
    """Return ``locate_contact``'s default ``noise`` [N m] (its signature read, not called)."""
    from denoc_ros.contact.locate import locate_contact
    return float(inspect.signature(locate_contact).parameters['noise'].default)


def locator_sigma(record, report=None):
    """
    Return the per-joint sigma the locator whitened ``record``'s torques with.

    ``sqrt(noise^2 + (relative_noise |tau_ext|)^2)`` (``prepare_state``), ``noise`` and
    ``relative_noise`` as the benchmark's ``report`` (its ``noise`` and ``locator_options``)
    gave them to the locator: by default the record's measured noise, the locator's default
    ``relative_noise``.
    """
    report = report or {}
    options = report.get('locator_options') or {}
    mode = report.get('noise', 'measured')
    tau_ext = np.asarray(record['tau_ext'], dtype=float)
    if 'noise' in options:
        noise = np.full(len(tau_ext), float(options['noise']))
    elif mode == 'locator':
        noise = np.full(len(tau_ext), locator_noise_default())
    else:
        noise = np.asarray(record['noise'], dtype=float)
    relative = float(options.get('relative_noise', locator_relative_noise()))
    return np.sqrt(noise ** 2 + (relative * tau_ext) ** 2)


def rigid_links(truth, link):
    """Return the links with geometry on ``link``'s rigid body (MuJoCo: joined without a joint)."""
    m = truth.model

    def root(b):
        while b != 0 and m.body_jntnum[b] == 0:
            b = int(m.body_parentid[b])
        return b
    mine = root(truth.body[link])
    return tuple(other for other in truth.links if root(truth.body[other]) == mine)


def cone_generators(normals, mu, k):
    """Return (N, 3, k) unit edges of the cone ``mu`` about ``-normals`` (inscribed polygon)."""
    inward = -np.asarray(normals, dtype=float)
    helper = np.eye(3)[np.argmin(np.abs(inward), axis=1)]
    e1 = np.cross(inward, helper)
    e1 /= np.linalg.norm(e1, axis=1)[:, None]
    e2 = np.cross(inward, e1)
    phi = 2.0 * np.pi * np.arange(k) / k
    g = (inward[:, :, None] + mu * (e1[:, :, None] * np.cos(phi)
                                    + e2[:, :, None] * np.sin(phi)))
    return g / math.sqrt(1.0 + mu * mu)


class TwinOracle:
    """
    Torque twins of pushes (module docstring), on a :class:`contact_accuracy.SurfaceTruth`.

    ``joint_names``: the order of the records' ``q`` and torques; ``points``: per link;
    ``mu``, ``generators``: the friction cone; ``seed``: of the points.
    """

    def __init__(self, truth, joint_names, points=POINTS, mu=ca.FRICTION,
                 generators=GENERATORS, seed=0):
        self.truth, self.names = truth, tuple(joint_names)
        self.mu, self.generators = float(mu), int(generators)
        m, mj = truth.model, truth._mj
        self._mj = mj
        self.dofs = np.array([m.jnt_dofadr[mj.mj_name2id(m, mj.mjtObj.mjOBJ_JOINT, n)]
                              for n in self.names])
        rng = np.random.default_rng(seed)
        self.samples = {}
        for link in truth.links:
            self.samples[link] = self._sample(link, points, rng)
        self._jacp = np.zeros((3, m.nv))
        self._jacr = np.zeros((3, m.nv))

    def _sample(self, link, n, rng):
        """Return ``n`` points (link frame) area-uniform on ``link`` and their normals."""
        areas = self.truth.areas[link]
        t = rng.choice(len(areas), size=n, p=areas / areas.sum())
        return self._on_triangles(link, t, rng)

    def _on_triangles(self, link, t, rng):
        """Return a point drawn uniformly on each of ``link``'s triangles ``t``, and normals."""
        u, v = rng.random(len(t)), rng.random(len(t))
        flip = u + v > 1.0
        u[flip], v[flip] = 1.0 - u[flip], 1.0 - v[flip]
        a, b, c = (self.truth.triangles[link][t, i] for i in range(3))
        points = a + u[:, None] * (b - a) + v[:, None] * (c - a)
        return points, self.truth.normals[link][t].copy()

    def _about(self, link, centre, radius, n, rng):
        """Return up to ``n`` points (link frame) area-uniform on ``link`` within ``radius``."""
        tris = self.truth.triangles[link]
        centroids = tris.mean(axis=1)
        reach = np.linalg.norm(tris - centroids[:, None], axis=2).max(axis=1)
        near = np.flatnonzero(np.linalg.norm(centroids - centre, axis=1) <= radius + reach)
        areas = self.truth.areas[link][near]
        t = near[rng.choice(len(near), size=4 * n, p=areas / areas.sum())]
        points, normals = self._on_triangles(link, t, rng)
        inside = np.flatnonzero(np.linalg.norm(points - centre, axis=1) <= radius)[:n]
        return points[inside], normals[inside]

    def pose(self, q):
        """Place the truth model at ``q`` (the records' order) for :meth:`fit`."""
        self.truth.pose(q, self.names)
        self._mj.mj_comPos(self.truth.model, self.truth.data)

    def jacobians(self, link, points):
        """Return the (N, 3, n) linear Jacobians (records' joint order) of link-frame points."""
        m, d, mj = self.truth.model, self.truth.data, self._mj
        b = self.truth.body[link]
        origin = np.array(d.xpos[b])
        mj.mj_jac(m, d, self._jacp, self._jacr, origin, b)
        jp, jr = self._jacp[:, self.dofs], self._jacr[:, self.dofs]
        rotation = np.array(d.xmat[b]).reshape(3, 3)
        r = np.asarray(points, dtype=float) @ rotation.T       # origin -> point, world axes
        # v_p = v_o + w x (p - o), per joint column
        return jp[None] + np.cross(jr.T[None, :, :], r[:, None, :]).transpose(0, 2, 1)

    def fit(self, link, points, normals, tau, sigma):
        """
        Return chi2 (N,) and the fitted forces (N, 3, world axes) at ``link``'s points.

        Call :meth:`pose` first. ``points``, ``normals``: link frame; ``tau``, ``sigma`` (n,).
        """
        from scipy.optimize import nnls
        d = self.truth.data
        b = self.truth.body[link]
        rotation = np.array(d.xmat[b]).reshape(3, 3)
        J = self.jacobians(link, points)                          # (N, 3, n)
        G = cone_generators(np.asarray(normals) @ rotation.T, self.mu, self.generators)
        sigma = np.asarray(sigma, dtype=float)
        A = np.einsum('nij,nik->njk', J, G) / sigma[None, :, None]   # (N, n, k)
        target = np.asarray(tau, dtype=float) / sigma
        chi2 = np.empty(len(A))
        forces = np.empty((len(A), 3))
        if not np.any(A):                 # a link no joint moves
            chi2[:] = target @ target
            forces[:] = 0.0
            return chi2, forces
        for i, a in enumerate(A):
            c, residual = nnls(a, target)
            chi2[i] = residual * residual
            forces[i] = G[i] @ c
        return chi2, forces

    def _kept(self, link, point, normal, force_world, rng):
        """Return True if the benchmark would keep ``point`` as a truth point for that force."""
        rotation = np.array(self.truth.data.xmat[self.truth.body[link]]).reshape(3, 3)
        force = rotation.T @ force_world
        if np.linalg.norm(force) < 1e-9:      # no force helps: approached along the normal
            force = -np.asarray(normal, dtype=float)
        return (self.truth.reachable(link, point, normal, force)
                and not self.truth.covered(link, point, rng))

    def link_figures(self, link, tau, sigma, rng, max_checks=MAX_CHECKS):
        """
        Return the figures of ``link`` as a twin of ``tau`` at the pose (:meth:`pose`).

        The link's points are fitted, then (best kept ``chi2`` under :data:`REFINE_BELOW`)
        points are added about the best ones, kept or not, in rounds of shrinking radius
        (:data:`REFINE`). ``chi2``: the smallest over the kept points (None if none of the
        ``max_checks`` best is kept), ``force``: its |F| [N], ``point``: base frame;
        ``weakest``: the smallest |F| over the kept points within :data:`TWIN` (None without
        one); ``chi2_coarse``: the smallest before refining, ``chi2_unfiltered``: over all
        points, kept or not.
        """
        points, normals = self.samples[link]
        chi2, forces = self.fit(link, points, normals, tau, sigma)
        kept = {}

        def is_kept(i):
            if i not in kept:
                kept[i] = self._kept(link, points[i], normals[i], forces[i], rng)
            return kept[i]

        def best_kept(count):
            found = []
            for i in np.argsort(chi2)[:max_checks]:
                if is_kept(int(i)):
                    found.append(int(i))
                    if len(found) == count:
                        break
            return found
        found = best_kept(REFINE_SEEDS)
        coarse = float(chi2[found[0]]) if found else None
        if found and coarse < REFINE_BELOW and np.any(chi2 != chi2[0]):
            for radius, n in REFINE:      # denser about the best points found so far
                seeds = list(dict.fromkeys(found + [int(i) for i in np.argsort(chi2)[:3]]))
                extra = [self._about(link, points[i], radius, n, rng) for i in seeds]
                p = np.concatenate([e[0] for e in extra])
                nr = np.concatenate([e[1] for e in extra])
                c, f = self.fit(link, p, nr, tau, sigma)
                points, normals = np.concatenate([points, p]), np.concatenate([normals, nr])
                chi2, forces = np.concatenate([chi2, c]), np.concatenate([forces, f])
                found = best_kept(REFINE_SEEDS)
        out = {'chi2': None, 'force': None, 'point': None, 'weakest': None,
               'chi2_coarse': coarse, 'chi2_unfiltered': float(chi2.min()),
               'checked': len(kept)}
        if found:
            i = found[0]
            out['chi2'] = float(chi2[i])
            out['force'] = float(np.linalg.norm(forces[i]))
            out['point'] = self.truth.to_base(link, points[i]).tolist()
        within = np.flatnonzero(chi2 <= TWIN)
        magnitudes = np.linalg.norm(forces[within], axis=1)
        for i in within[np.argsort(magnitudes)][:max_checks]:
            if is_kept(int(i)):
                out['weakest'] = float(np.linalg.norm(forces[i]))
                break
        return out

    def own_chi2(self, record, sigma):
        """Return the chi2 of a record's pushed link at its true point and normal (~0)."""
        push = record['pushes'][0]
        chi2, _ = self.fit(push['link'], np.array([push['point']]), np.array([push['normal']]),
                           record['tau_true'], sigma)
        return float(chi2[0])

    def analyse(self, record, sigma, seed=0, max_checks=MAX_CHECKS):
        """
        Return the twin figures of a single-push ``record`` (``q``, ``tau_true``, ``pushes``).

        ``links``: {L: :meth:`link_figures`, plus ``rigid``: L on the pushed link's body (not a
        twin candidate)} for every link with geometry but the pushed one; ``twins``: {threshold:
        the non-rigid links within it}.
        """
        pushed = record['links'][0]
        self.pose(record['q'])
        rng = np.random.default_rng(seed)
        rigid = set(rigid_links(self.truth, pushed))
        tau = np.asarray(record['tau_true'], dtype=float)
        links = {}
        for link in self.truth.links:
            if link == pushed:
                continue
            links[link] = self.link_figures(link, tau, sigma, rng, max_checks)
            links[link]['rigid'] = link in rigid
        twins = {str(t): sorted(k for k, e in links.items() if not e['rigid']
                                and e['chi2'] is not None and e['chi2'] <= t)
                 for t in THRESHOLDS}
        return {'pushed': pushed, 'own_chi2': self.own_chi2(record, sigma), 'links': links,
                'twins': twins}


def analyse_report(report, oracle, links=ca.PUSHED_LINKS, limit=None, progress=None):
    """Return one row per single-push record of ``report`` on ``links`` (:func:`summarize`)."""
    records = [(i, r) for i, r in enumerate(report['records'])
               if len(r['links']) == 1 and r['links'][0] in links]
    if limit is not None:
        records = records[:limit]
    rows = []
    for done, (i, r) in enumerate(records, 1):
        sigma = locator_sigma(r, report)
        row = oracle.analyse(r, sigma, seed=i)
        if not r['link_right'] and r['link'] in oracle.truth.links:
            # what the locator had: the observer's torques, the truth's link and the named one
            rng = np.random.default_rng(i)
            row['measured'] = {which: oracle.link_figures(link, r['tau_ext'], sigma, rng)['chi2']
                               for which, link in (('pushed', r['links'][0]),
                                                   ('named', r['link']))}
        error = (np.asarray(r['tau_ext']) - np.asarray(r['tau_true'])) / sigma
        row.update({'index': i, 'named': r['link'], 'status': r['status'],
                    'observer_chi2': float(error @ error),
                    'link_right': bool(r['link_right']), 'detectable': bool(r['detectable']),
                    'moving': bool(r['moving']),
                    'push_force': float(np.linalg.norm(r['pushes'][0]['force']))})
        rows.append(row)
        if progress:
            progress(done, len(records), row)
    return rows


def _twin(row, t=TWIN):
    return bool(row['twins'][str(t)])


def _named_twin(row, t=TWIN):
    e = row['links'].get(row['named'])
    return bool(e and not e['rigid'] and e['chi2'] is not None and e['chi2'] <= t)


def _weakest(row):
    """Return the smallest force [N] of a row's twins (chi2 <= TWIN), kept points only."""
    forces = []
    for k in row['twins'][str(TWIN)]:
        e = row['links'][k]
        forces.append(e['force'] if e['weakest'] is None else min(e['weakest'], e['force']))
    return min(forces)


def summarize(rows, links=ca.PUSHED_LINKS):
    """Return ({link: figures}, overall figures) over the detectable pushes."""
    def figures(sel):
        misses = [r for r in sel if not r['link_right']]
        out = {'pushes': len(sel), 'link_right': sum(r['link_right'] for r in sel),
               'misses': len(misses)}
        for t in THRESHOLDS:
            out[f'twin_{t:g}'] = sum(_twin(r, t) for r in sel)
            out[f'miss_twin_{t:g}'] = sum(_twin(r, t) for r in misses)
            out[f'miss_named_twin_{t:g}'] = sum(_named_twin(r, t) for r in misses)
        alone = [r for r in sel if not _twin(r)]
        out['no_twin'] = len(alone)
        out['no_twin_right'] = sum(r['link_right'] for r in alone)
        twins = [r for r in sel if _twin(r)]
        weakest = [_weakest(r) for r in twins]
        out['twin_weakest_force'] = weakest
        out['twin_over_range'] = sum(w > ca.FORCE[1] for w in weakest)
        return out
    seen = [r for r in rows if r['detectable']]
    table = {link: figures([r for r in seen if r['pushed'] == link])
             for link in links if any(r['pushed'] == link for r in seen)}
    return table, figures([r for r in seen if r['pushed'] in links])


def _share(a, b):
    return f'{100 * a / b:5.1f}%' if b else '    -'


def format_table(table, overall, rows):
    """Return the twin table (per pushed link, overall) and the misses without a twin, as text."""
    head = (f'{"pushed link":<18} {"n":>3} {"right":>5} {"twin1":>5} {"twin4":>5} {"twin9":>5} '
            f'{"miss":>4} {"m.tw1":>5} {"m.tw4":>5} {"m.tw9":>5} {"m.nm4":>5} {"no tw":>5} '
            f'{"right|no twin":>15} {">40N":>4}')
    lines = ['over the detectable pushes; twinK: a twin (another body, reachable, cone mu '
             f'{ca.FRICTION}) within chi2 <= K; m.twK: misses with a twin; m.nm4: misses with a '
             'twin on the named link; >40N: twins (chi2 <= 4) whose weakest force exceeds 40 N',
             head, '-' * len(head)]

    def line(name, e):
        return (f'{name:<18} {e["pushes"]:>3} {e["link_right"]:>5} {e["twin_1"]:>5} '
                f'{e["twin_4"]:>5} {e["twin_9"]:>5} {e["misses"]:>4} {e["miss_twin_1"]:>5} '
                f'{e["miss_twin_4"]:>5} {e["miss_twin_9"]:>5} {e["miss_named_twin_4"]:>5} '
                f'{e["no_twin"]:>5} {e["no_twin_right"]:>5}/{e["no_twin"]:<3} '
                f'{_share(e["no_twin_right"], e["no_twin"])} {e["twin_over_range"]:>4}')
    for link, e in table.items():
        lines.append(line(link, e))
    lines.append('-' * len(head))
    lines.append(line('links 3..fingers', overall))
    lines.append(f'link right: {_share(overall["link_right"], overall["pushes"])} of '
                 f'{overall["pushes"]}; among the pushes without a twin (chi2 <= 4): '
                 f'{_share(overall["no_twin_right"], overall["no_twin"])} of '
                 f'{overall["no_twin"]}')
    weakest = overall['twin_weakest_force']
    if weakest:
        lines.append(f'twins (chi2 <= 4): {len(weakest)}, weakest force median '
                     f'{np.median(weakest):.1f} N, max {max(weakest):.1f} N, '
                     f'{overall["twin_over_range"]} beyond {ca.FORCE[1]:g} N, '
                     f'{sum(w < ca.FORCE[0] for w in weakest)} under {ca.FORCE[0]:g} N')
    own = [r['own_chi2'] for r in rows]
    lines.append(f'own link at the true point: chi2 max {max(own):.2e} (median '
                 f'{np.median(own):.2e}) over {len(own)} pushes')
    for moving in (False, True):
        errors = [r['observer_chi2'] for r in rows if r['detectable'] and r['moving'] == moving]
        if errors:
            lines.append(f"the observer's own error (tau_ext - tau_true) in the same sigma, "
                         f'{"moving" if moving else "still"} arm: chi2 median '
                         f'{np.median(errors):.2f}, p95 {np.percentile(errors, 95):.2f}, max '
                         f'{max(errors):.2f} ({len(errors)} pushes)')
    misses = [r for r in rows if r['detectable'] and not r['link_right']
              and not _named_twin(r)]
    lines.append(f'misses without a twin on the named link (chi2 <= {TWIN:g}): {len(misses)}')
    for r in misses:
        e = r['links'].get(r['named'])
        named = ('-' if e is None else
                 f'{"rigid, " if e["rigid"] else ""}chi2 {_chi2(e["chi2"])}')
        others = ', '.join(r['twins'][str(TWIN)]) or 'none'
        measured = r.get('measured') or {}
        lines.append(f'  #{r["index"]} {r["pushed"]} named {r["named"]} ({r["status"]}'
                     f'{", moving" if r["moving"] else ""}): named link {named}; twins '
                     f'(chi2 <= 4) {others}; on the observer torques chi2 pushed link '
                     f'{_chi2(measured.get("pushed"))}, named {_chi2(measured.get("named"))}')
    return '\n'.join(lines)


def _chi2(x):
    return '-' if x is None else f'{x:.2f}'


def main(argv=None):
    """Read a contact_accuracy report, find each push's twins, print the table; exit 0."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--report', default=str(ca.REPORT),
                        help="contact_accuracy's --report folder (its report.json)")
    parser.add_argument('--points', type=int, default=POINTS, help='points per link')
    parser.add_argument('--generators', type=int, default=GENERATORS,
                        help='edges of the polyhedral friction cone')
    parser.add_argument('--limit', type=int, default=None, help='analyse the first N pushes')
    args = parser.parse_args(argv)
    folder = pathlib.Path(args.report)
    try:
        report = json.loads((folder / 'report.json').read_text())
    except (OSError, ValueError) as err:
        print(f'contact_twins: no contact_accuracy report in {folder} ({err}); run '
              'benchmarks/contact_accuracy.py --report with that folder first', file=sys.stderr)
        return 2
    names = report.get('joint_names')
    if names is None:          # reports written before the benchmark recorded them
        import warnings
        import denoc_ros as dr
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            names = dr.load_urdf(str(ca.panda_urdf())).joint_names
    truth = ca.SurfaceTruth(ca.panda_urdf())
    oracle = TwinOracle(truth, names, points=args.points, generators=args.generators)
    started = time.perf_counter()

    def progress(done, total, row):
        sys.stderr.write(f'\r{done}/{total} pushes, {time.perf_counter() - started:.0f} s '
                         f'({row["pushed"]}: twins {",".join(row["twins"][str(TWIN)]) or "-"})'
                         '          ')
        sys.stderr.flush()
    rows = analyse_report(report, oracle, limit=args.limit, progress=progress)
    sys.stderr.write('\n')
    elapsed = time.perf_counter() - started
    table, overall = summarize(rows)
    print(f'Torque twins of {folder / "report.json"} (seed {report.get("seed")}, '
          f'{report.get("date")}): {len(rows)} pushes, {args.points} points per link, cone mu '
          f'{ca.FRICTION} ({args.generators} edges), sigma as the locator whitens; '
          f'{ca.cpu_model()}, {elapsed:.0f} s')
    print(format_table(table, overall, rows))
    out = {'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), 'cpu': ca.cpu_model(),
           'report': str(folder / 'report.json'), 'points': args.points,
           'generators': args.generators, 'mu': ca.FRICTION, 'seconds': elapsed,
           'per_link': table, 'overall': overall, 'rows': rows}
    (folder / 'twins.json').write_text(json.dumps(ca._jsonable(out), indent=1))
    print(f'twins: {folder / "twins.json"}')
    return 0


if __name__ == '__main__':
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))  # this tree's package
    sys.exit(main())
