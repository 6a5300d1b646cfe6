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
Experiment: the link named from evidence accumulated over the joint states of one push.

Run from the repository root (about 1 min per seed; the pushes of ``make bench-contact``)::

    .venv/bin/python benchmarks/contact_accumulation.py --seed 0

The pushes of ``benchmarks/contact_accuracy.py`` (same seed, links panda_link3 to the fingers,
half of them on a moving arm, the detectable ones). For each, the points to judge are those a
:class:`denoc_ros.ContactTracker` tracks after the full search at the end of the hold. Each
point is then scored over several joint states of the hold (every ``spacing`` ms over the
last ``span`` ms; the observer's estimate is correlated over its time constant, 20 ms) in two
ways, and the link is the one of the best point on the body with the most weight (evidence
times area), as the locator decides, without its refinement off the grid or its reachability:

* ``free force``: the point fixed on its link, the force free per joint state: the sum of the
  per-state scores (chi-square + log det, :func:`denoc_ros.contact.locate.score_points`);
* ``fixed force``: the point and one force in the link's axes for all the states (the
  simulation's pushes are such): linear least squares of the stacked whitened equations
  ``tau_w(t) = diag(s_t) J_r(q_t)^T R_t f``, chi-square + log det of the 3 x 3 information,
  a force pointing out of the surface excluded.

Prints the link-right rate of the locator at the end of the hold (one ``locate_contact``) and
of each rule, still and moving. A research probe for issue 31's 95 %, not a library feature.
"""

import argparse
import pathlib
import sys
import time

import numpy as np

LAM_SCALE = 50.0   # N: the locator's FORCE_SCALE


def stacked_score(rig, states, noise, points, spacing, span, locate):
    """Return (free-force, fixed-force) scores of ``points`` over the chosen ``states``."""
    model, geometry = rig.model, rig.geometry
    chosen = states[-span::spacing] if span > 1 else states[-1:]
    m = points.owner.shape[0]
    free = np.zeros(m)
    gram, rhs, bb = np.zeros((m, 3, 3)), np.zeros((m, 3)), 0.0
    for q, tau in chosen:
        p = locate._problem(model, geometry, q, tau, 0.6, noise, 0.02, rig.threshold, 0.02)
        if isinstance(p, locate.ContactLocation):
            continue
        points.score(p)
        free += points.r2 + points.ld
        R = p.Rs[points.owner]
        d = np.einsum('pij,pj->pi', R, points.p_link)
        Js = p.Js[points.owner]
        Jr = Js[:, :3, :] - np.cross(d[:, :, None], Js[:, 3:, :], axis=1)   # J_v - [d]x J_w
        A = np.einsum('pin,pij->pnj', Jr, R)          # tau_w = A f (f in link axes)
        gram += np.einsum('pni,pnj->pij', A, A)
        rhs += np.einsum('pni,n->pi', A, p.tau_w)
        bb += float(p.tau_w @ p.tau_w)
    H = gram + np.eye(3) / LAM_SCALE ** 2
    f = np.linalg.solve(H, rhs[:, :, None])[:, :, 0]
    fixed = bb - np.einsum('pi,pi->p', rhs, f) + np.linalg.slogdet(H)[1]
    fixed[np.einsum('pi,pi->p', f, points.n_link) > 0.0] = np.inf   # pulls: no push
    return free, fixed


def decide(score, points, bodies, names):
    """Return the link of the best point on the body with the most weight."""
    w = np.exp(-0.5 * (score - score[np.isfinite(score)].min())) * points.area
    body_of = bodies[points.owner]
    body = int(np.argmax(np.bincount(body_of, weights=w)))
    on = np.flatnonzero(body_of == body)
    return names[points.owner[on[np.argmin(score[on])]]]


def main(argv=None):
    """Run the pushes of one seed and print the link-right rates."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--pushes', type=int, default=40, help='pushes per link (default 40)')
    args = parser.parse_args(argv)
    import contact_accuracy as bench
    from denoc_ros.contact import locate
    from denoc_ros.contact.track import _tracked_points
    windows = [(1, 1), (20, 100), (20, 140), (10, 140), (20, 280)]   # (spacing, span) ms
    rig = bench.Rig(seed=args.seed)
    rng = np.random.default_rng(args.seed)
    rows = []
    started = time.perf_counter()
    for link in bench.PUSHED_LINKS:
        for i in range(args.pushes):
            moving = i < round(0.5 * args.pushes)
            q0 = rig.random_configuration(rng)          # as contact_accuracy.push_trial draws
            pushes = [rig.sample_push(link, q0, rng, bench.FORCE)]
            motion = None
            if moving:
                amp = rng.uniform(0.1, 0.25, len(q0))
                amp[7:] = 0.0
                motion = (amp, rng.uniform(0.2, 0.5, len(q0)), rng.uniform(0, 2 * np.pi, len(q0)))
            sim = rig.simulate(q0, pushes, motion)
            if not np.any(np.abs(sim['tau_true']) >= rig.threshold):
                continue
            q, tau = sim['hold'][-1]
            p = locate._problem(rig.model, rig.geometry, q, tau, 0.6, sim['noise'], 0.02,
                                rig.threshold, 0.02)
            row = {'moving': moving, 'end': False}
            if not isinstance(p, locate.ContactLocation):
                full = locate._full_points(p)
                answer, _, took_part = locate._judge(p, full)
                row['end'] = answer.link == link
                if answer.status != 'unexplained':
                    points = _tracked_points(p.surf, full, took_part, answer)
                    for window in windows:
                        free, fixed = stacked_score(rig, sim['hold'], sim['noise'], points,
                                                    *window, locate)
                        row[('free', window)] = decide(free, points, p.bodies,
                                                       p.surf.names) == link
                        row[('fixed', window)] = decide(fixed, points, p.bodies,
                                                        p.surf.names) == link
            rows.append(row)
        sys.stderr.write(f'\r{link}: {len(rows)} pushes, {time.perf_counter() - started:.0f} s ')
    sys.stderr.write('\n')
    moving = np.array([r['moving'] for r in rows])

    def rate(key):
        right = np.array([r.get(key, False) for r in rows])
        return (f'{100 * right.mean():.1f} % (still {100 * right[~moving].mean():.1f}, moving '
                f'{100 * right[moving].mean():.1f})')
    print(f'seed {args.seed}, {len(rows)} detectable pushes on panda_link3..fingers')
    print(f'locate_contact at the end of the hold: link right {rate("end")}')
    for kind in ('free', 'fixed'):
        for spacing, span in windows:
            print(f'{kind} force, every {spacing} ms over the last {span} ms: '
                  f'{rate((kind, (spacing, span)))}')
    return 0


if __name__ == '__main__':
    here = pathlib.Path(__file__).resolve().parent
    sys.path.insert(0, str(here.parent))   # this tree's package
    sys.path.insert(0, str(here))
    sys.exit(main())
