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
The contact locator against torques the code under test never made.

The external torques of a push come from Pinocchio (the frame Jacobian of the touched link,
shifted to the contact point: tau = J_r^T F), the pushes from trimesh's own sampling of the
collision meshes (not the locator's samples), the cone-restricted least squares from SciPy's
SLSQP; the many-frame kinematics kernel from the library's checked single-frame functions.
"""

import math
import warnings

from conftest import example_robot, require_oracle
import denoc_ros as dr
from denoc_ros.contact import locate as loc
from denoc_ros.contact.geometry import load_collision_geometry
from denoc_ros.dynamics._packed import packed
from denoc_ros.errors import InputError
import numpy as np
import pytest

PANDA = 'panda_description/urdf/panda.urdf'
DISTAL = ('panda_link6', 'panda_link7', 'panda_hand')
NOISE = 0.05


@pytest.fixture(scope='module')
def panda():
    """Return the example-robot-data Panda: model, collision geometry, Pinocchio model and data."""
    pin = require_oracle('pinocchio')
    path = str(example_robot(PANDA))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        model = dr.load_urdf(path)
    geometry = load_collision_geometry(path)
    pm = pin.buildModelFromUrdf(path)
    return model, geometry, pm, pm.createData()


def _truth_point(geometry, link, rng):
    """Return a point and outward normal of ``link``'s surface, drawn by trimesh (link frame)."""
    trimesh = pytest.importorskip('trimesh')
    shapes = geometry.surfaces[link].shapes
    mesh = trimesh.util.concatenate([trimesh.Trimesh(s.vertices, s.faces, process=False)
                                     for s in shapes])
    points, faces = trimesh.sample.sample_surface(mesh, 1, seed=int(rng.integers(1 << 30)))
    return points[0], mesh.face_normals[faces[0]]


def _winding(vertices, faces, points):
    """Return the generalized winding number of each point (1 inside, 0 outside a closed mesh)."""
    a, b, c = (vertices[faces[:, i]][None] - points[:, None, :] for i in range(3))
    la, lb, lc = (np.linalg.norm(x, axis=2) for x in (a, b, c))
    det = np.einsum('pfi,pfi->pf', a, np.cross(b, c))
    den = (la * lb * lc + np.einsum('pfi,pfi->pf', a, b) * lc
           + np.einsum('pfi,pfi->pf', b, c) * la + np.einsum('pfi,pfi->pf', c, a) * lb)
    return np.arctan2(det, den).sum(axis=1) / (2 * np.pi)


def _reachable(panda, link, r, f):
    """Return whether a pusher reaches r along f: r in no other solid, 3 cm back free of all."""
    _, geometry, pm, pd = panda
    u = -f / np.linalg.norm(f)
    path = r + np.outer(np.arange(0.01, 0.031, 0.005), u)
    for name, surface in geometry.surfaces.items():
        pose = pd.oMf[pm.getFrameId(name)]
        for shape in surface.shapes:
            v = shape.vertices @ pose.rotation.T + pose.translation
            probe = path if name == link else np.vstack((r, path))
            if np.any(_winding(v, shape.faces, probe) > 0.5):
                return False
    return True


def _push(panda, link, rng, q=None, magnitude=None, mu=0.5):
    """Return q, tau_ext = J_r^T F (Pinocchio, plus noise) and the truth (base point, F)."""
    pin = require_oracle('pinocchio')
    model, geometry, pm, pd = panda
    if q is None:
        q = np.where(np.isfinite(model.lower), rng.uniform(model.lower, model.upper), 0.0)
    pin.framesForwardKinematics(pm, pd, q)
    fid = pm.getFrameId(link)
    pose = pd.oMf[fid]
    for _ in range(100):  # a point a pusher can reach (MuJoCo's accuracy test does the same)
        x, m = _truth_point(geometry, link, rng)
        r, nb = pose.act(x), pose.rotation @ m
        t = rng.normal(size=3)
        t -= (t @ nb) * nb
        t /= np.linalg.norm(t)
        angle = rng.uniform(0.0, math.atan(mu))
        f = (magnitude or rng.uniform(10.0, 40.0)) * (-math.cos(angle) * nb
                                                      + math.sin(angle) * t)
        if _reachable(panda, link, r, f):
            break
    J = pin.computeFrameJacobian(pm, pd, q, fid, pin.LOCAL_WORLD_ALIGNED)
    Jr = J[:3] - pin.skew(r - pose.translation) @ J[3:]
    tau = Jr.T @ f + rng.normal(scale=NOISE, size=q.shape[0])
    return q, tau, r, f


def test_distal_pushes_are_located_on_the_right_link_within_two_centimetres(panda):
    """A push on the hand or the last two links: right link, point within 2 cm (median 5 mm)."""
    model, geometry = panda[:2]
    rng = np.random.default_rng(7)
    errors, force_errors, located = [], [], 0
    for trial in range(45):
        link = DISTAL[trial % 3]
        q, tau, r, f = _push(panda, link, rng)
        out = dr.locate_contact(model, geometry, q, tau, noise=NOISE, relative_noise=0.0)
        assert out.status in (loc.LOCATED, loc.AMBIGUOUS), out.message
        if out.located:
            located += 1
            # the right link, or one rigidly fixed to it (link 7 and the hand) near their joint
            assert model.frame(out.link).body == model.frame(link).body, (link, out.message)
            errors.append(np.linalg.norm(out.point_base - r))
            force_errors.append(np.linalg.norm(out.force - f) / np.linalg.norm(f))
        else:  # then the truth is among the candidates (within a coarse cluster)
            d = np.min(np.linalg.norm(out.candidates - r, axis=1))
            assert d < geometry.coarse_spacing, (link, d, out.message)
    print(f'{located} of 45 located; point error median {np.median(errors):.4f} m, max '
          f'{np.max(errors):.4f} m; force error median {np.median(force_errors):.3f}, max '
          f'{np.max(force_errors):.3f} of |F|')
    assert located >= 30, located
    assert np.median(errors) < 0.005 and np.percentile(errors, 95) < 0.02
    assert np.median(force_errors) < 0.1 and np.max(force_errors) < 0.5


def test_a_push_near_the_base_is_never_a_confident_wrong_point(panda):
    """Pushes on the first two links: ambiguous, the truth among the candidates, never located."""
    model, geometry = panda[:2]
    rng = np.random.default_rng(11)
    seen = 0
    for trial in range(24):
        link = ('panda_link1', 'panda_link2')[trial % 2]
        q, tau, r, _ = _push(panda, link, rng, magnitude=30.0)
        out = dr.locate_contact(model, geometry, q, tau, noise=NOISE, relative_noise=0.0)
        if out.status == loc.NO_CONTACT:  # a push through joint 1's axis: nothing to see
            assert np.all(np.abs(tau) <= 3 * NOISE)
            continue
        seen += 1
        assert out.status == loc.AMBIGUOUS, out.message
        assert out.spread > 0.02
        d = np.min(np.linalg.norm(out.candidates - r, axis=1))
        assert d < 1.5 * geometry.coarse_spacing, (link, d, out.message)
        assert len(out.candidates) == len(out.candidate_links)
    assert seen >= 16


def test_below_the_threshold_there_is_no_contact(panda):
    """Noise alone, or a push too weak for the threshold: no contact, zeros, no NaN."""
    model, geometry = panda[:2]
    rng = np.random.default_rng(3)
    q, tau, _, _ = _push(panda, 'panda_hand', rng, magnitude=0.2)
    out = dr.locate_contact(model, geometry, q, tau, noise=NOISE, threshold=2.0)
    assert out.status == loc.NO_CONTACT and not out.in_contact and out.link == ''
    assert np.all(out.point == 0) and np.all(np.isfinite(out.covariance))


def test_two_pushes_are_never_one_confident_point_on_either(panda):
    """Two simultaneous pushes (link 4 and the hand): unexplained or ambiguous, never located."""
    model, geometry = panda[:2]
    rng = np.random.default_rng(5)
    statuses = []
    for _ in range(12):
        q, tau1, r1, _ = _push(panda, 'panda_link4', rng, magnitude=30.0)
        _, tau2, r2, _ = _push(panda, 'panda_hand', rng, q=q, magnitude=30.0)
        out = dr.locate_contact(model, geometry, q, tau1 + tau2, noise=NOISE,
                                relative_noise=0.0)
        statuses.append(out.status)
        if out.located:  # allowed only where one of the two truly dominates, then at it
            d = min(np.linalg.norm(out.point_base - r1), np.linalg.norm(out.point_base - r2))
            assert d < 0.03, out.message
    assert statuses.count(loc.UNEXPLAINED) >= 8, statuses


def test_a_push_on_a_link_without_geometry_is_not_placed_elsewhere(panda):
    """With link 5's surface removed, a push on link 5 is never located elsewhere; it is named."""
    model, geometry = panda[:2]
    blind = type(geometry).__new__(type(geometry))
    for key, value in vars(geometry).items():
        if key != '_locator_form':
            object.__setattr__(blind, key, value)
    object.__setattr__(blind, 'surfaces', {k: v for k, v in geometry.surfaces.items()
                                           if k != 'panda_link5'})
    rng = np.random.default_rng(9)
    statuses, named = [], 0
    for _ in range(12):
        q, tau, r, _ = _push(panda, 'panda_link5', rng, magnitude=30.0)
        out = dr.locate_contact(model, blind, q, tau, noise=NOISE, relative_noise=0.0)
        statuses.append(out.status)
        assert out.status in (loc.UNEXPLAINED, loc.AMBIGUOUS), out.message
        if 'panda_link5' in out.message:
            named += 1
    assert named >= 9, statuses


def test_cone_restricted_least_squares_against_slsqp():
    """The per-point force: min |t - A^T F|^2 + lam |F|^2 with F in the cone, against SLSQP."""
    optimize = pytest.importorskip('scipy.optimize')
    rng = np.random.default_rng(1)
    mu, lam = 0.6, 1e-4
    worst = 0.0
    for trial in range(24):
        n = 7
        A = rng.normal(size=(3, n)) * (0.05 if trial % 3 == 0 else 1.0)
        if trial % 4 == 1:
            A[2] = A[0] + 1e-9 * rng.normal(size=n)  # rank-deficient: a link near the base
        nrm = rng.normal(size=3)
        nrm /= np.linalg.norm(nrm)
        t = rng.normal(size=n) * 3.0
        H = A @ A.T + lam * np.eye(3)
        g = A @ t
        F = np.empty(3)
        cost, inside = loc._unconstrained(H, g, nrm, mu, F)
        if not inside:
            cost = loc._cone_boundary(H, g, nrm, mu, *loc._ANGLES, loc.POLISH, F)
        ours = t @ t + cost
        assert ours == pytest.approx(t @ t - 2 * g @ F + F @ H @ F, rel=1e-9, abs=1e-9)
        fn = -F @ nrm
        assert fn >= -1e-12 and np.linalg.norm(F + fn * nrm) <= mu * fn + 1e-9

        def objective(x):
            return float(np.sum((t - A.T @ x) ** 2) + lam * x @ x)

        def cone(x):
            xn = -x @ nrm
            return mu * xn - np.linalg.norm(x + xn * nrm)

        best = objective(np.zeros(3))
        for x0 in (F, -nrm):
            res = optimize.minimize(objective, x0, constraints=[{'type': 'ineq', 'fun': cone}],
                                    method='SLSQP', options={'ftol': 1e-14, 'maxiter': 500})
            if cone(res.x) > -1e-8:
                best = min(best, res.fun)
        # The boundary is scanned at 16 angles and refined by a golden-section search: within
        # 1e-4 of the optimum in chi-square units (whitened torques: 1 = one noise variance).
        gap = ours - best
        worst = max(worst, gap)
        assert ours >= best - 1e-7 * max(1.0, best)
        assert gap < 1e-4, (trial, ours, best)
    print(f'worst gap to SLSQP {worst:.2e}')


def test_point_score_is_the_gaussian_marginal_likelihood():
    """
    A point's score r2 + ld is minus twice the log evidence: the force integrated out.

    With F ~ N(0, I / lam) and whitened torques t = A F + e, e ~ N(0, I), the torques' marginal
    is N(0, S), S = I + A A^T / lam (n x n): -2 log p(t) = t.S^-1.t + log det S + n log 2 pi.
    Where the best force lies inside the cone, score_points' r2 + ld (3 x 3 blocks, Laplace about
    the best force) must equal it up to the constant 3 log lam - n log 2 pi, to 1e-9; elsewhere
    ld is log det(A^T A + lam I) and r2 at least the unconstrained minimum.
    """
    rng = np.random.default_rng(7)
    n, links, m = 7, 3, 60
    lam = 1.0 / loc.FORCE_SCALE ** 2
    Js = rng.normal(size=(links, 6, n)) * 4.0
    Js[0, :, 3:] = 0.0                          # a link near the base: three joints move it
    Rs = np.array([np.linalg.qr(rng.normal(size=(3, 3)))[0] for _ in range(links)])
    t = rng.normal(size=n) * 5.0
    blocks = np.empty((links, 33))
    loc.link_blocks(Js, t, blocks)
    points = rng.normal(size=(m, 3)) * 0.1
    normals = rng.normal(size=(m, 3))
    normals /= np.linalg.norm(normals, axis=1)[:, None]
    owner = rng.integers(0, links, m).astype(np.int64)
    for k in range(0, m, 2):   # every other normal against the free best force: inside the cone
        J, R = Js[owner[k]], Rs[owner[k]]
        A = (J[:3] - np.cross(R @ points[k], J[3:].T).T).T
        F = np.linalg.solve(A.T @ A + lam * np.eye(3), A.T @ t)
        normals[k] = -R.T @ F / np.linalg.norm(F)
    index = np.arange(m, dtype=np.int64)
    r2, ld, force = np.empty(m), np.empty(m), np.empty((m, 3))
    loc.score_points(points, normals, owner, index, Rs, blocks, float(t @ t), 0.6, lam,
                     *loc._ANGLES, loc.POLISH, m, np.inf, r2, ld, force)
    inside = 0
    for k in range(m):
        J, d = Js[owner[k]], Rs[owner[k]] @ points[k]
        A = (J[:3] - np.cross(d, J[3:].T).T).T                    # n x 3: t = A F
        H = A.T @ A + lam * np.eye(3)
        assert ld[k] == pytest.approx(np.linalg.slogdet(H)[1], rel=1e-12, abs=1e-12)
        F = np.linalg.solve(H, A.T @ t)
        r_free = float(np.sum((t - A @ F) ** 2) + lam * F @ F)
        assert r2[k] >= r_free - 1e-9 * max(1.0, r_free)
        nb = Rs[owner[k]] @ normals[k]
        fn = -F @ nb
        if fn > 0.0 and np.linalg.norm(F + fn * nb) < 0.6 * fn:
            inside += 1
            S = np.eye(n) + A @ A.T / lam
            marginal = float(t @ np.linalg.solve(S, t)) + np.linalg.slogdet(S)[1]
            assert r2[k] + ld[k] == pytest.approx(marginal + 3.0 * math.log(lam), rel=1e-9)
    assert inside >= m // 2, inside


@pytest.mark.parametrize('relpath', [PANDA, 'ur_description/urdf/ur5_robot.urdf',
                                     'talos_data/robots/talos_left_arm.urdf'])
def test_frames_state_equals_the_single_frame_functions(relpath):
    """Poses and Jacobians of every frame from one kinematics pass: as frame_pose and jacobian."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        model = dr.load_urdf(str(example_robot(relpath)))
    pk = packed(model)
    names = [f.name for f in model.frames if f.body >= 0]
    bodies = np.array([pk.frames[nm][0] for nm in names], dtype=np.int64)
    data = np.array([pk.frames[nm][1] for nm in names])
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = rng.uniform(-2.0, 2.0, model.nq)
        R, p = np.empty((len(names), 3, 3)), np.empty((len(names), 3))
        J = np.empty((len(names), 6, model.nv))
        assert loc.frames_state(pk.ints, pk.reals, q, bodies, data, R, p, J) == 0
        for i, nm in enumerate(names):
            R1, p1 = dr.frame_pose(model, q, nm)
            np.testing.assert_allclose(R[i], R1, rtol=0, atol=1e-14)
            np.testing.assert_allclose(p[i], p1, rtol=0, atol=1e-14)
            np.testing.assert_allclose(J[i], dr.jacobian(model, q, nm), rtol=0, atol=1e-14)


def test_bad_input_is_named(panda):
    """Wrong lengths, NaN, bad noise or threshold, a free-flyer model: InputError naming it."""
    model, geometry = panda[:2]
    q, tau = np.zeros(model.nq), np.ones(model.nv)
    with pytest.raises(InputError, match='tau_ext'):
        dr.locate_contact(model, geometry, q, tau[:3])
    with pytest.raises(InputError, match='q must'):
        dr.locate_contact(model, geometry, q * np.nan, tau)
    with pytest.raises(InputError, match='noise'):
        dr.locate_contact(model, geometry, q, tau, noise=0.0)
    with pytest.raises(InputError, match='threshold'):
        dr.locate_contact(model, geometry, q, tau, threshold=[1.0, 2.0])
    with pytest.raises(InputError, match='friction_coefficient'):
        dr.locate_contact(model, geometry, q, tau, friction_coefficient=float('nan'))
    floating = dr.load_floating_base(str(example_robot(PANDA)))
    with pytest.raises(InputError, match='fixed-base'):
        dr.locate_contact(floating, geometry, np.zeros(floating.nq), np.ones(floating.nv))


def _deepest_link_with_surface(model, geometry):
    """Return the link with a surface whose body the most joints move (None without one)."""
    best, depth = None, 0
    for name in sorted(geometry.surfaces):
        frame = model.frame_index.get(name)
        if frame is None or frame.body < 0:
            continue
        joints, b = 0, frame.body
        while b >= 0:
            joints, b = joints + 1, int(model.parent[b])
        if joints > depth and geometry.surfaces[name].points.shape[0] >= 20:
            best, depth = name, joints
    return best


def test_every_example_robot_data_robot_with_collision_geometry():
    """A push on each e-r-d robot's deepest link: a defined answer, right where it is located."""
    pin = require_oracle('pinocchio')
    trimesh = pytest.importorskip('trimesh')
    from robots_for_tests import PinocchioMap
    from test_example_robot_data import moving_joint_urdfs
    base = example_robot(PANDA).parents[2]
    rng = np.random.default_rng(4)
    counts = {}
    for rel in moving_joint_urdfs():
        path = str(base / rel)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            model = dr.load_urdf(path)
            geometry = load_collision_geometry(path, spacing=0.01, coarse_spacing=0.04)
        link = _deepest_link_with_surface(model, geometry)
        if link is None:
            counts['no surface'] = counts.get('no surface', 0) + 1
            continue
        pm = pin.buildModelFromUrdf(path)
        pd = pm.createData()
        mp = PinocchioMap(pm, model.joint_names)
        q = rng.uniform(-1.0, 1.0, model.nq)
        pin.framesForwardKinematics(pm, pd, mp.q(q))
        shapes = geometry.surfaces[link].shapes
        mesh = trimesh.util.concatenate([trimesh.Trimesh(s.vertices, s.faces) for s in shapes])
        if len(shapes) > 1 or not mesh.is_watertight:  # no outside/inside to push from
            counts['open or composite surface'] = counts.get('open or composite surface', 0) + 1
            continue
        mesh.fix_normals()  # trimesh's own outward winding
        x, face = trimesh.sample.sample_surface(mesh, 1, seed=int(rng.integers(1 << 30)))
        fid = pm.getFrameId(link)
        pose = pd.oMf[fid]
        r, nb = pose.act(x[0]), pose.rotation @ mesh.face_normals[face[0]]
        f = -25.0 * nb
        J = pin.computeFrameJacobian(pm, pd, mp.q(q), fid, pin.LOCAL_WORLD_ALIGNED)
        tau = mp.from_v((J[:3] - pin.skew(r - pose.translation) @ J[3:]).T @ f)
        if np.all(np.abs(tau) <= 3 * NOISE):
            counts['pushed through the axes'] = counts.get('pushed through the axes', 0) + 1
            continue
        tau = tau + rng.normal(scale=NOISE, size=tau.shape[0])
        out = dr.locate_contact(model, geometry, q, tau, noise=NOISE, relative_noise=0.0)
        counts[out.status] = counts.get(out.status, 0) + 1
        assert out.status in (loc.LOCATED, loc.AMBIGUOUS, loc.UNEXPLAINED, loc.NO_CONTACT)
        for value in (out.point, out.point_base, out.force, out.covariance, out.candidates):
            assert np.all(np.isfinite(value)), rel
        if out.located:
            same_body = model.frame(out.link).body == model.frame(link).body
            error = np.linalg.norm(out.point_base - r)
            assert same_body and error < 3.0 * out.spread + 0.02, (rel, link, out.message,
                                                                   error)
    print('e-r-d pushes:', counts)
    assert sum(counts.values()) >= 60 and counts.get(loc.LOCATED, 0) >= 10, counts


def test_torque_noise_is_the_quiet_estimate_rms_per_joint():
    """Gaussian torques of known sigma at 1 kHz: measured within 5 %; contact samples ignored."""
    from denoc_ros.contact.noise import TorqueNoise
    rng = np.random.default_rng(0)
    truth = np.array([0.05, 0.1, 0.3, 0.01])
    noise = TorqueNoise(4, time_constant=2.0, floor=0.02, initial=0.5)
    assert np.all(noise.sigma == 0.5)
    for k in range(6000):
        t = 1e-3 * k
        if 2000 <= k < 2500:  # a push: large torques, flagged as contact
            noise.update(t, np.full(4, 30.0), in_contact=True)
        else:
            noise.update(t, rng.normal(scale=truth), in_contact=False)
        noise.update(t, np.full(4, 99.0), in_contact=False)  # a repeated stamp: ignored
    np.testing.assert_allclose(noise.sigma, np.maximum(truth, 0.02), rtol=0.05)
    noise.reset()
    assert np.all(noise.sigma == 0.5)
    with pytest.raises(InputError, match='floor'):
        TorqueNoise(3, floor=0.0)


def test_a_robot_without_collision_geometry_gets_a_defined_answer(panda):
    """No surface at all (a URDF without <collision>): unexplained, said, no exception."""
    model = panda[0]
    bare = dr.load_collision_geometry(
        '<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
        '<parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>')
    assert not bare.surfaces
    out = dr.locate_contact(model, bare, np.zeros(model.nq), np.ones(model.nv))
    assert out.status == loc.UNEXPLAINED and 'no readable collision geometry' in out.message
