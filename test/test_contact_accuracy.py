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
Contact isolation measured in MuJoCo: the thresholds of issue 31 on a reduced, seeded run.

The harness is ``benchmarks/contact_accuracy.py`` (``make bench-contact`` runs 40 pushes per
link; its docstring says how the truth is made and what the code under test sees). Here: 5
pushes on each of panda_link1 .. panda_link7, the hand and both fingers (50, half of them with
the arm moving), observer at the node's defaults, effort noise 0.05 N m. The truth is MuJoCo's
own collision surface, checked first against the STL files read by trimesh.

Thresholds: the issue's, except the link right (the issue asks 95 %; the locator reaches
92.5-95.3 % on 320 pushes, ``make bench-contact``, seeds 0-3; the README says why): here at least
85 % of the detectable pushes on the links from panda_link3 on, and every push named on a wrong
link answered 'ambiguous' with the pushed link among the candidates, or 'located' on a link fixed
to the pushed one (the same rigid body: the torques cannot tell them apart); on the links five or
more joints move (panda_link5 on), over the pushes called 'located', the point within 2 cm of the
truth in the median and 5 cm at the 95th percentile, and at least half of those pushes located (or
the figures would say nothing); on panda_link3 and panda_link4, a 'located' point within 5 cm, or
the truth inside the reported set; pushes on panda_link1 and panda_link2 'ambiguous' with the truth
inside the set, or 'no_contact' when too weak; the hard cases (two pushes, a push under the
threshold, a link whose collision element is removed) never a confident wrong point. The locator's
threshold is the harness's 0.5 N m (its docstring says why not the node's default 5 N m; the push
under the threshold uses 5 N m), its noise per joint measured before each push as the node measures
it. 40 pushes cannot tell a link right in 90 % from 95 %: ``make bench-contact`` measures it on
320.
"""

import math
import pathlib
import sys

from conftest import example_robot, require_oracle
import numpy as np
import pytest

mujoco = require_oracle('mujoco')

BENCHMARKS = pathlib.Path(__file__).resolve().parent.parent / 'benchmarks'
sys.path.insert(0, str(BENCHMARKS))
try:
    import contact_accuracy as ca
    import contact_twins as ct
finally:
    sys.path.remove(str(BENCHMARKS))

PUSHES_PER_LINK = 5
SEED = 31


@pytest.fixture(scope='module')
def rig():
    """Return the harness on example-robot-data's Panda (skip without it)."""
    return ca.Rig(example_robot(ca.PANDA), effort_noise=0.05, seed=SEED)


@pytest.fixture(scope='module')
def records(rig):
    """Return the records of the reduced run (5 pushes per link, seeded)."""
    return ca.run_pushes(rig, PUSHES_PER_LINK, seed=SEED)


def describe(rows):
    """Return the rows' statuses, links and errors for a failure message."""
    return '\n'.join(
        f'  {r["links"][0]}: {r["status"]} on {r["link"] or "-"}, '
        f'{100 * r["distance_to_reported"]:.1f} cm from the truth, nearest candidate '
        f'{100 * r["candidate_distance"]:.1f} cm, residual {r["residual"]:.3f} N m '
        f'({100 * r["relative_residual"]:.1f} %), observer error {r["observer_error"]:.3f} N m'
        f'{" moving" if r["moving"] else ""}: {r["message"]}' for r in rows)


def test_truth_is_the_stl_surface(rig):
    """The truth from MuJoCo's meshes lies on the STL files' triangles, normals outward."""
    import trimesh
    folder = rig.urdf_path.parent.parent / 'meshes' / 'collision'
    rng = np.random.default_rng(0)
    for link, stl in (('panda_link3', 'link3.stl'), ('panda_link6', 'link6.stl'),
                      ('panda_hand', 'hand.stl')):
        mesh = trimesh.load(str(folder / stl))
        assert mesh.is_watertight and mesh.volume > 0.0
        assert math.isclose(rig.truth.areas[link].sum(), mesh.area, rel_tol=1e-6)
        for _ in range(30):
            point, normal = rig.truth.sample(link, rng)
            tri = mesh.triangles
            plane = np.abs(np.einsum('ij,ij->i', point - tri[:, 0], mesh.face_normals))
            bary = trimesh.triangles.points_to_barycentric(
                tri, np.repeat(point[None], len(tri), 0))
            faces = np.flatnonzero((plane < 1e-6) & np.all(bary > -1e-6, axis=1))
            assert len(faces), f'{link}: {point} is on no triangle of {stl}'
            assert max(mesh.face_normals[faces] @ normal) > 1.0 - 1e-9


def test_covered_is_inside_another_shape(rig):
    """Points inside the right finger's box are covered; points under the base plate are not."""
    truth = rig.truth
    rng = np.random.default_rng(3)
    q = ca.HOME.copy()
    truth.pose(q, rig.names)
    boxes = [g for g in truth.geoms['panda_rightfinger']
             if truth.model.geom_type[g] == int(mujoco.mjtGeom.mjGEOM_BOX)]
    g = max(boxes, key=lambda g: np.prod(truth.model.geom_size[g]))  # the finger has four
    centre = np.array(truth.data.geom_xpos[g])
    axes = np.array(truth.data.geom_xmat[g]).reshape(3, 3)
    half = np.array(truth.model.geom_size[g])
    b = truth.body['panda_leftfinger']
    R, o = np.array(truth.data.xmat[b]).reshape(3, 3), np.array(truth.data.xpos[b])
    for _ in range(20):
        inside = centre + axes @ (0.9 * half * rng.uniform(-1.0, 1.0, 3))  # analytic: in the box
        assert truth.covered('panda_leftfinger', R.T @ (inside - o), rng)
        below = np.array([*rng.uniform(-0.3, 0.3, 2), rng.uniform(-0.3, -0.05)])  # no link there
        assert not truth.covered('panda_leftfinger', R.T @ (below - o), rng)


def test_link_is_right(rig, records):
    """The link right in >= 85 % of the pushes from panda_link3 on; a wrong one never confident."""
    rows = [r for r in records if r['links'][0] in ca.PUSHED_LINKS and r['detectable']]
    wrong = [r for r in rows if not r['link_right']]
    assert len(rows) >= 0.8 * PUSHES_PER_LINK * len(ca.PUSHED_LINKS)
    assert len(wrong) <= 0.15 * len(rows), (
        f'link wrong in {len(wrong)} of {len(rows)} pushes:\n{describe(wrong)}')
    body = {name: rig.model.frame(name).body for name in ca.PUSHED_LINKS}
    confident = [r for r in wrong if not (
        (r['status'] == 'ambiguous' and r['link_in_set'])
        or (r['status'] == 'located' and rig.model.frame(r['link']).body == body[r['links'][0]]))]
    assert not confident, f'a wrong link named with confidence:\n{describe(confident)}'


def test_point_error_on_resolvable_links(rig, records):
    """Resolvable links: 'located' points within 2 cm (median) and 5 cm (p95) of the truth."""
    links = [k for k in ca.PUSHED_LINKS if ca.resolvable(rig.model, k)]
    assert links == list(ca.PUSHED_LINKS[2:])
    rows = [r for r in records if r['links'][0] in links and r['detectable']]
    located = [r for r in rows if r['status'] == 'located']
    others = [r for r in rows if r['status'] != 'located']
    assert len(located) >= 0.5 * len(rows), (
        f'only {len(located)} of {len(rows)} pushes located:\n{describe(others)}')
    errors = np.array([r['error'] for r in located])
    far = [r for r in located if r['error'] > 0.02]
    assert np.median(errors) <= 0.02 and np.percentile(errors, 95) <= 0.05, (
        f'median {100 * np.median(errors):.2f} cm, p95 {100 * np.percentile(errors, 95):.2f} '
        f'cm over {len(located)} located pushes; beyond 2 cm:\n{describe(far)}')
    unset = [r for r in others if r['status'] == 'ambiguous' and not r['in_set']]
    assert not unset, f'ambiguous without the truth in the set:\n{describe(unset)}'


def test_unresolvable_links_truth_in_set(records):
    """panda_link3/4: a 'located' point within 5 cm, or the truth inside the reported set."""
    rows = [r for r in records if r['links'][0] in ('panda_link3', 'panda_link4')
            and r['detectable']]
    bad = [r for r in rows if r['confident_wrong']
           or (r['status'] == 'ambiguous' and not r['in_set'])
           or r['status'] not in ('located', 'ambiguous')]
    assert not bad, f'{len(bad)} of {len(rows)} pushes:\n{describe(bad)}'


def test_base_links_are_ambiguous(records):
    """Pushes on panda_link1/2: 'ambiguous' with the truth in the set, never 'located'."""
    rows = [r for r in records if r['links'][0] in ca.BASE_LINKS]
    bad = [r for r in rows if not (
        (r['status'] == 'ambiguous' and r['in_set'])
        or (r['status'] == 'no_contact' and not r['detectable']))]
    assert not bad, f'{len(bad)} of {len(rows)} pushes:\n{describe(bad)}'
    assert sum(r['status'] == 'ambiguous' for r in rows) >= len(rows) // 2


def test_hard_cases_give_defined_answers(rig):
    """Two pushes, a push under the threshold, a link without geometry: never confidently wrong."""
    cases = ca.hard_cases(rig, seed=SEED + 1, repeats=2)
    failures = ca.hard_case_failures(cases)
    assert not failures, '\n'.join(failures)
    for r in cases['two'] + cases['no_geometry']:
        assert r['status'] in ('located', 'ambiguous', 'unexplained', 'no_contact')
    assert all(r['status'] == 'no_contact' for r in cases['below'])


@pytest.fixture(scope='module')
def oracle(rig):
    """Return the torque-twin oracle on the rig's truth surface (1500 points per link)."""
    return ct.TwinOracle(rig.truth, rig.names, points=1500, seed=SEED)


def constructed(rig, link, point, normal, force, q):
    """Return a push record (as ``push_trial``'s) of one push, with a noise of 0.05 N m."""
    push = ca.Push(link, point, normal, force)
    tau = rig.joint_torques(q, [push])          # MuJoCo's arm model: mj_applyFT
    record = {'links': [link], 'q': list(q), 'tau_true': tau.tolist(),
              'tau_ext': tau.tolist(), 'noise': [0.05] * len(tau),
              'pushes': [push.as_dict()]}
    return record, ct.locator_sigma(record)


def test_twin_oracle_own_link_fits(rig, oracle):
    """On the pushed link, at the true point, the oracle's fit gives the push's own torques."""
    rng = np.random.default_rng(SEED)
    assert ct.rigid_links(rig.truth, 'panda_hand') == ('panda_link7', 'panda_hand')
    assert ct.rigid_links(rig.truth, 'panda_link3') == ('panda_link3',)
    for link in ('panda_link3', 'panda_link5', 'panda_hand', 'panda_leftfinger'):
        q = rig.random_configuration(rng)
        push = rig.sample_push(link, q, rng, mu=0.45)   # inside the oracle's 32-edge cone
        record, sigma = constructed(rig, link, push.point, push.normal, push.force, q)
        assert np.abs(record['tau_true']).max() > 1.0
        oracle.pose(q)
        chi2, forces = oracle.fit(link, push.point[None], push.normal[None],
                                  record['tau_true'], sigma)
        assert chi2[0] < 1e-8, f'{link}: chi2 {chi2[0]} at the true point'
        assert oracle.own_chi2(record, sigma) < 1e-8
        if link != 'panda_link3':   # five joints or more: the force is determined
            b = rig.truth.body[link]
            world = np.array(rig.truth.data.xmat[b]).reshape(3, 3) @ push.force
            assert np.allclose(forces[0], world, atol=1e-6)
        elsewhere = oracle.fit(link, push.point[None] + [0.0, 0.0, 0.05], push.normal[None],
                               record['tau_true'], sigma)[0]
        assert elsewhere[0] > 1.0, f'{link}: 5 cm away fits as well ({elsewhere[0]})'
        analysis = oracle.analyse(record, sigma)
        assert link not in analysis['links']
        if link == 'panda_hand':
            assert analysis['links']['panda_link7']['rigid']
            assert all('panda_link7' not in v for v in analysis['twins'].values())


def through_joint3(rig, oracle):
    """Return a 30 N push record on panda_link3 at HOME along its normal through joint 3's axis."""
    truth = rig.truth
    q = ca.HOME.copy()
    oracle.pose(q)
    m, d = truth.model, truth.data
    j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, 'panda_joint3')
    anchor, axis = np.array(d.xanchor[j]), np.array(d.xaxis[j])
    b = truth.body['panda_link3']
    R, o = np.array(d.xmat[b]).reshape(3, 3), np.array(d.xpos[b])
    points, normals = oracle.samples['panda_link3']
    world, inward = points @ R.T + o, -normals @ R.T
    foot = anchor + ((world - anchor) @ axis)[:, None] * axis
    towards = foot - world
    distance = np.linalg.norm(towards, axis=1)
    towards /= distance[:, None]
    angle = np.degrees(np.arccos(np.clip(np.einsum('ij,ij->i', towards, inward), -1.0, 1.0)))
    rng = np.random.default_rng(SEED)
    chosen = next(i for i in np.argsort(angle) if distance[i] > 0.03
                  and truth.reachable('panda_link3', points[i], normals[i], R.T @ towards[i])
                  and not truth.covered('panda_link3', points[i], rng))
    assert angle[chosen] < 5.0
    force = 30.0 * (R.T @ towards[chosen])
    return constructed(rig, 'panda_link3', points[chosen], normals[chosen], force, q)


def test_twin_oracle_link3_through_joint3_has_twin_on_link2(rig, oracle):
    """A push on panda_link3 along its normal through joint 3's axis: a twin on panda_link2."""
    record, sigma = through_joint3(rig, oracle)
    tau = np.array(record['tau_true'])
    assert abs(tau[2]) < 1e-9 < 1.0 < np.abs(tau[:2]).max()    # joint 3 feels nothing
    analysis = oracle.analyse(record, sigma)
    link2 = analysis['links']['panda_link2']
    assert link2['chi2'] is not None and link2['chi2'] <= 1.0, link2
    assert 'panda_link2' in analysis['twins']['1.0']
    assert link2['weakest'] is not None and link2['weakest'] <= ca.FORCE[1], link2
    assert analysis['links']['panda_link1']['chi2'] > 9.0     # joint 2's torque: not link1


def test_twin_oracle_distal_push_has_no_proximal_twin(rig, oracle):
    """A lateral push on the hand (a large torque on joint 7) has no twin on link2 or link3."""
    rng = np.random.default_rng(SEED + 2)
    q = rig.random_configuration(rng)
    oracle.pose(q)
    best = None
    for _ in range(40):
        push = rig.sample_push('panda_hand', q, rng, (30.0, 30.0))
        tau = rig.joint_torques(q, [push])
        if best is None or abs(tau[6]) > abs(best[1][6]):
            best = (push, tau)
    push, tau = best
    assert abs(tau[6]) > 1.0
    record, sigma = constructed(rig, 'panda_hand', push.point, push.normal, push.force, q)
    analysis = oracle.analyse(record, sigma)
    for link, first_idle in (('panda_link2', 2), ('panda_link3', 3)):
        e = analysis['links'][link]
        floor = float(np.sum((tau[first_idle:] / sigma[first_idle:]) ** 2))  # joints not moving it
        assert e['chi2'] is not None and e['chi2'] >= floor - 1e-6 and e['chi2'] > 100.0, e
        assert link not in analysis['twins']['9.0']
    assert analysis['own_chi2'] < 0.1


def test_twin_table(rig, oracle):
    """The twin table of a report: a miss with a twin, a right push without; figures add up."""
    miss, _ = through_joint3(rig, oracle)
    rng = np.random.default_rng(SEED + 3)
    q = rig.random_configuration(rng)
    push = rig.sample_push('panda_hand', q, rng, (30.0, 30.0))
    right, _ = constructed(rig, 'panda_hand', push.point, push.normal, push.force, q)
    miss.update(link='panda_link2', status='ambiguous', link_right=False)
    right.update(link='panda_hand', status='located', link_right=True)
    for r in (miss, right):
        r.update(detectable=True, moving=False)
    report = {'noise': 'measured', 'locator_options': {}, 'records': [miss, right]}
    rows = ct.analyse_report(report, oracle)
    table, overall = ct.summarize(rows)
    assert (overall['pushes'], overall['link_right'], overall['misses']) == (2, 1, 1)
    assert overall['miss_twin_4'] == overall['miss_named_twin_4'] == 1
    assert overall['no_twin'] == overall['no_twin_right'] == table['panda_hand']['pushes'] == 1
    assert rows[0]['measured']['named'] <= 1.0       # noise-free: the twin fits exactly
    text = ct.format_table(table, overall, rows)
    assert 'misses without a twin on the named link (chi2 <= 4): 0' in text
