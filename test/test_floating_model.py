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
The unified API on floating-base models (``load_urdf(..., floating_base=True)``) vs Pinocchio.

Reference: Pinocchio's free-flyer model of the same URDF (``buildModelFromUrdf(path,
JointModelFreeFlyer())``), joints mapped by name (TALOS' joint order differs from ours),
external wrenches given to Pinocchio as ``fext`` in the LOCAL frame of the root joint (our body
0) and of each joint (our body ``k``). Robots: the bundled two-arm ``urdf/space_robot.urdf``
(with a prismatic joint and a welded tool frame per arm), Solo-12 (18 velocities) and the full
TALOS (``talos_full_v2.urdf``, 50 velocities, a big tree with mimic gripper joints loaded as
independent ones on both sides), from example-robot-data (skipped if absent), under a gravity
off the world axes (so a frame mix-up shows), at seeded random states (unit quaternions, random
v, a, tau, wrenches).

Tolerance: ``TOL = 1e-9`` relative, ``max|ours - reference| <= TOL * max|reference|`` over the
whole result; the finite-difference checks of dM/dt use ``FD_TOL`` (see there). The worst
relative error of every check is printed at the end of the module (``pytest -s``).

Checked: inverse_dynamics (with and without f_ext on several bodies, the base included) vs
``rnea``; mass_matrix vs ``crba``; coriolis_matrix vs ``computeCoriolisMatrix``;
coriolis_torques vs ``nonLinearEffects - computeGeneralizedGravity``; gravity_torques;
forward_dynamics (with f_ext too) and forward_dynamics_cholesky vs ``aba``;
convective_inertia_matrix (C v = coriolis_torques, dM/dt - 2C skew-symmetric along a path
``integrate(q, t v)``, as for coriolis_matrix); jacobian (``LOCAL_WORLD_ALIGNED``),
jacobian_dot_times_qd (classical acceleration) and frame_pose of several frames;
cartesian_dynamics vs its formulas on Pinocchio's J and M; leading batch axes; payloads vs
Pinocchio with the payload appended to the joint; momentum, centre of mass and kinetic energy vs
``computeCentroidalMomentum``, ``centerOfMass``, ``computeKineticEnergy``; simulate conserving
momentum in zero gravity under joint torques; and the errors of bad input.
"""

import collections
import warnings

from conftest import example_robot, require_oracle, URDF_DIR
import denoc_ros as dr
import numpy as np
import pytest

pin = require_oracle('pinocchio')

TOL = 1e-9
# Central differences of M along a path, 4th-order stencil, step FD_STEP: truncation ~ h^4 and
# rounding ~ 1e-16 |M| / h: 2.3e-11 of |dM/dt| measured (TALOS); FD_TOL leaves a margin.
FD_STEP = 1e-3
FD_TOL = 1e-8
TILTED_G = (1.2, -0.7, -9.81)
ZERO_G = (0.0, 0.0, 0.0)
ROBOTS = {
    'space_robot': None,
    'solo12': 'solo_description/robots/solo12.urdf',
    'talos_full': 'talos_data/robots/talos_full_v2.urdf',
}
STATES = 3  # random states per robot and check

WORST = collections.defaultdict(lambda: (0.0, ''))  # check -> (worst relative error, robot)


def robot_path(name):
    """Return the URDF path of a test robot (skips if example-robot-data lacks it)."""
    if ROBOTS[name] is None:
        return URDF_DIR / f'{name}.urdf'
    return example_robot(ROBOTS[name])


def load(path, gravity=TILTED_G):
    """Return our floating-base model of ``path`` (mimic warnings silenced)."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return dr.load_urdf(str(path), floating_base=True, gravity=gravity)


def check(what, robot, value, reference, tol=TOL):
    """Assert ``max|value - reference| <= tol * max|reference|``; record the relative error."""
    value, reference = np.asarray(value, dtype=float), np.asarray(reference, dtype=float)
    assert value.shape == reference.shape, (what, robot, value.shape, reference.shape)
    scale = float(np.abs(reference).max())
    error = float(np.abs(value - reference).max()) / max(scale, 1e-300)
    if error >= WORST[what][0]:
        WORST[what] = (error, robot)
    assert error <= tol, f'{what} ({robot}): relative error {error:.3g} > {tol:g} ' \
                         f'(scale {scale:.3g})'
    return error


@pytest.fixture(scope='module', autouse=True)
def report_worst_errors():
    """Print the worst relative error of every check after the module's tests."""
    yield
    if WORST:
        width = max(len(k) for k in WORST)
        lines = [f'  {k.ljust(width)}  {e:9.2e}  ({r})' for k, (e, r) in sorted(WORST.items())]
        print('\nworst relative errors (max|ours - ref| / max|ref|):\n' + '\n'.join(lines))


class Pair:
    """Our floating-base model and Pinocchio's free-flyer model of one URDF, mapped by name."""

    def __init__(self, name, path, gravity=TILTED_G):
        self.name, self.path = name, path
        self.ours = load(path, gravity)
        self.pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        self.pm.gravity.linear = np.asarray(gravity, dtype=float)
        self.pd = self.pm.createData()
        m, pm = self.ours, self.pm
        assert pm.names[1] == 'root_joint' and pm.joints[1].shortname() == 'JointModelFreeFlyer'
        ids = [pm.getJointId(n) for n in m.joint_names]
        assert all(jid < pm.njoints and pm.joints[jid].nv == 1 for jid in ids)
        self.iq = np.r_[0:7, [pm.joints[j].idx_q for j in ids]].astype(int)
        self.iv = np.r_[0:6, [pm.joints[j].idx_v for j in ids]].astype(int)
        self.body_joint = [1] + ids  # Pinocchio joint of our body k (body 0: root_joint)
        assert (pm.nq, pm.nv) == (m.nq, m.nv) == (len(self.iq), len(self.iv))

    # our order -> Pinocchio's
    def q(self, q):
        out = np.empty(self.pm.nq)
        out[self.iq] = q
        return out

    def v(self, v):
        out = np.empty(self.pm.nv)
        out[self.iv] = v
        return out

    def fext(self, f_ext):
        """Return Pinocchio's ``fext`` list for our (nbodies, 6) body wrenches."""
        out = [pin.Force.Zero() for _ in range(self.pm.njoints)]
        for jid, w in zip(self.body_joint, f_ext):
            out[jid] = pin.Force(np.array(w[:3]), np.array(w[3:]))
        return out

    # Pinocchio's order -> ours
    def q_ours(self, pq):
        return np.asarray(pq)[self.iq]

    def vec(self, x):
        return np.asarray(x)[self.iv]

    def mat(self, A):
        return np.asarray(A)[np.ix_(self.iv, self.iv)]

    def cols(self, J):
        return np.asarray(J)[:, self.iv]

    def frame_id(self, name):
        fid = self.pm.getFrameId(name, pin.FrameType.BODY)
        assert fid < len(self.pm.frames), f'{self.name}: Pinocchio has no body frame {name!r}'
        return fid

    def mass_matrix(self, pq):
        M = np.triu(pin.crba(self.pm, self.pd, pq))  # crba fills the upper triangle only
        return M + np.triu(M, 1).T

    def frames(self):
        """Return a few frames: the base, a body in the middle, the last body, a lumped link."""
        m = self.ours
        names = [m.base_link, m.link_names[m.nbodies // 2], m.link_names[-1]]
        lumped = [f.name for f in m.frames if f.name not in m.link_names and f.body > 0]
        names += lumped[-1:]
        welded = [f.name for f in m.frames if f.body == 0 and f.name != m.base_link]
        names += welded[:1]
        return names


def random_state(pair, rng):
    """Return q (unit quaternion), v, a, tau and f_ext (wrenches on the base and two bodies)."""
    m = pair.ours
    quat = rng.normal(size=4)
    q = np.concatenate((rng.normal(size=3), quat / np.linalg.norm(quat),
                        rng.uniform(-1.5, 1.5, m.dof)))
    v, a, tau = (rng.normal(size=m.nv) for _ in range(3))
    f_ext = np.zeros((m.nbodies, 6))
    for body in (0, m.nbodies // 2, m.nbodies - 1):
        f_ext[body] = rng.normal(size=6) * 5.0
    return q, v, a, tau, f_ext


@pytest.fixture(scope='module', params=list(ROBOTS))
def pair(request):
    """Each robot, loaded by both libraries."""
    return Pair(request.param, robot_path(request.param))


def states(pair, seed=7):
    rng = np.random.default_rng(seed)
    return [random_state(pair, rng) for _ in range(STATES)]


# -- model -----------------------------------------------------------------------------------
def test_sizes_and_mass_match_pinocchio(pair):
    m, pm = pair.ours, pair.pm
    assert m.floating
    assert (m.nq, m.nv, m.dof, m.nbodies) == (7 + m.dof, 6 + m.dof, pm.nv - 6, m.dof + 1)
    assert m.total_mass == pytest.approx(pin.computeTotalMass(pm), rel=1e-12)
    assert sorted(m.joint_names) == sorted(pm.names[2:])


# -- joint-space dynamics ----------------------------------------------------------------------
def test_inverse_dynamics_with_and_without_external_wrenches(pair):
    m, pm, pd = pair.ours, pair.pm, pair.pd
    for q, v, a, _, f_ext in states(pair):
        pq, pv, pa = pair.q(q), pair.v(v), pair.v(a)
        check('inverse_dynamics', pair.name, dr.inverse_dynamics(m, q, v, a),
              pair.vec(pin.rnea(pm, pd, pq, pv, pa)))
        check('inverse_dynamics f_ext', pair.name, dr.inverse_dynamics(m, q, v, a, f_ext),
              pair.vec(pin.rnea(pm, pd, pq, pv, pa, pair.fext(f_ext))))
        base_only = np.zeros_like(f_ext)
        base_only[0] = f_ext[0]
        check('inverse_dynamics f_ext', pair.name, dr.inverse_dynamics(m, q, v, a, base_only),
              pair.vec(pin.rnea(pm, pd, pq, pv, pa, pair.fext(base_only))))


def test_mass_matrix(pair):
    m = pair.ours
    for q, *_ in states(pair):
        M = dr.mass_matrix(m, q)
        check('mass_matrix', pair.name, M, pair.mat(pair.mass_matrix(pair.q(q))))
        assert np.array_equal(M, M.T)


def test_coriolis_matrix_and_torques_and_gravity(pair):
    m, pm, pd = pair.ours, pair.pm, pair.pd
    for q, v, *_ in states(pair):
        pq, pv = pair.q(q), pair.v(v)
        check('coriolis_matrix', pair.name, dr.coriolis_matrix(m, q, v),
              pair.mat(pin.computeCoriolisMatrix(pm, pd, pq, pv)))
        g = pin.computeGeneralizedGravity(pm, pd, pq).copy()
        check('gravity_torques', pair.name, dr.gravity_torques(m, q), pair.vec(g))
        check('coriolis_torques', pair.name, dr.coriolis_torques(m, q, v),
              pair.vec(pin.nonLinearEffects(pm, pd, pq, pv) - g))


def test_forward_dynamics(pair):
    m, pm, pd = pair.ours, pair.pm, pair.pd
    for q, v, _, tau, f_ext in states(pair):
        pq, pv, ptau = pair.q(q), pair.v(v), pair.v(tau)
        ref = pair.vec(pin.aba(pm, pd, pq, pv, ptau))
        check('forward_dynamics', pair.name, dr.forward_dynamics(m, q, v, tau), ref)
        check('forward_dynamics_cholesky', pair.name,
              dr.forward_dynamics_cholesky(m, q, v, tau), ref)
        ref = pair.vec(pin.aba(pm, pd, pq, pv, ptau, pair.fext(f_ext)))
        check('forward_dynamics f_ext', pair.name, dr.forward_dynamics(m, q, v, tau, f_ext), ref)
        check('forward_dynamics_cholesky f_ext', pair.name,
              dr.forward_dynamics_cholesky(m, q, v, tau, f_ext), ref)


def mass_matrix_rate(pair, q, v):
    """Return dM/dt along ``q(t) = integrate(q, t v)`` at t = 0 (4th-order central difference)."""
    pq, pv = pair.q(q), pair.v(v)
    h = FD_STEP

    def M_at(t):
        return dr.mass_matrix(pair.ours, pair.q_ours(pin.integrate(pair.pm, pq, t * pv)))
    return (8.0 * (M_at(h) - M_at(-h)) - (M_at(2 * h) - M_at(-2 * h))) / (12.0 * h)


def test_coriolis_matrices_satisfy_the_identities(pair):
    """C v = coriolis_torques for both matrices; dM/dt = C + C^T (dM/dt - 2C skew)."""
    m = pair.ours
    for q, v, *_ in states(pair, seed=8)[:2]:
        c = dr.coriolis_torques(m, q, v)
        N = dr.convective_inertia_matrix(m, q, v)
        C = dr.coriolis_matrix(m, q, v)
        check('convective_inertia_matrix C v', pair.name, N @ v, c)
        check('coriolis_matrix C v', pair.name, C @ v, c)
        M_dot = mass_matrix_rate(pair, q, v)
        check('convective_inertia_matrix dM/dt = C + C^T', pair.name, N + N.T, M_dot, FD_TOL)
        check('coriolis_matrix dM/dt = C + C^T', pair.name, C + C.T, M_dot, FD_TOL)


# -- frames ------------------------------------------------------------------------------------
def test_jacobian_frame_pose_and_jacobian_dot(pair):
    m, pm, pd = pair.ours, pair.pm, pair.pd
    frames = pair.frames()
    assert len(frames) >= 3
    for q, v, *_ in states(pair):
        pq, pv = pair.q(q), pair.v(v)
        pin.forwardKinematics(pm, pd, pq, pv, np.zeros(pm.nv))
        pin.updateFramePlacements(pm, pd)
        pin.computeJointJacobians(pm, pd, pq)
        for name in frames:
            fid = pair.frame_id(name)
            J = pin.getFrameJacobian(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)
            check('jacobian', pair.name, dr.jacobian(m, q, name), pair.cols(J))
            R, p = dr.frame_pose(m, q, name)
            check('frame_pose', pair.name, np.column_stack((R, p)),
                  pd.oMf[fid].homogeneous[:3])
            acc = pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED)
            check('jacobian_dot_times_qd', pair.name, dr.jacobian_dot_times_qd(m, q, v, name),
                  acc.vector)


def test_cartesian_dynamics_matches_its_formulas_on_pinocchio(pair):
    """Lambda = (J M^-1 J^T)^-1, mu = J_bar^T c - Lambda Jdot v, p = J_bar^T g."""
    m, pm, pd = pair.ours, pair.pm, pair.pd
    frame = pair.frames()[2]
    fid = pair.frame_id(frame)
    for q, v, *_ in states(pair)[:2]:
        pq, pv = pair.q(q), pair.v(v)
        M = pair.mass_matrix(pq)
        J = pin.computeFrameJacobian(pm, pd, pq, fid, pin.LOCAL_WORLD_ALIGNED)
        g = pin.computeGeneralizedGravity(pm, pd, pq).copy()
        c = pin.nonLinearEffects(pm, pd, pq, pv) - g
        pin.forwardKinematics(pm, pd, pq, pv, np.zeros(pm.nv))
        jdot_v = pin.getFrameClassicalAcceleration(pm, pd, fid, pin.LOCAL_WORLD_ALIGNED).vector
        m_inv_jt = np.linalg.solve(M, J.T)
        lam = np.linalg.inv(J @ m_inv_jt)
        j_bar = m_inv_jt @ lam
        cd = dr.cartesian_dynamics(m, q, v, frame)
        check('cartesian_dynamics J', pair.name, cd.jacobian, pair.cols(J))
        check('cartesian_dynamics Lambda', pair.name, cd.inertia, lam)
        check('cartesian_dynamics mu', pair.name, cd.coriolis, j_bar.T @ c - lam @ jdot_v)
        check('cartesian_dynamics p', pair.name, cd.gravity, j_bar.T @ g)


# -- batches -----------------------------------------------------------------------------------
def batch_states(pair, shape=(3, 2)):
    rng = np.random.default_rng(21)
    flat = [random_state(pair, rng) for _ in range(int(np.prod(shape)))]
    return [np.array([s[k] for s in flat]).reshape(shape + flat[0][k].shape) for k in range(5)]


BATCH_FUNCTIONS = {
    'inverse_dynamics': lambda m, q, v, a, tau, f, fr: dr.inverse_dynamics(m, q, v, a),
    'inverse_dynamics f_ext': lambda m, q, v, a, tau, f, fr: dr.inverse_dynamics(m, q, v, a, f),
    'mass_matrix': lambda m, q, v, a, tau, f, fr: dr.mass_matrix(m, q),
    'coriolis_matrix': lambda m, q, v, a, tau, f, fr: dr.coriolis_matrix(m, q, v),
    'convective_inertia_matrix':
        lambda m, q, v, a, tau, f, fr: dr.convective_inertia_matrix(m, q, v),
    'coriolis_torques': lambda m, q, v, a, tau, f, fr: dr.coriolis_torques(m, q, v),
    'gravity_torques': lambda m, q, v, a, tau, f, fr: dr.gravity_torques(m, q),
    'forward_dynamics f_ext':
        lambda m, q, v, a, tau, f, fr: dr.forward_dynamics(m, q, v, tau, f),
    'forward_dynamics_cholesky':
        lambda m, q, v, a, tau, f, fr: dr.forward_dynamics_cholesky(m, q, v, tau),
    'jacobian': lambda m, q, v, a, tau, f, fr: dr.jacobian(m, q, fr),
    'jacobian_dot_times_qd':
        lambda m, q, v, a, tau, f, fr: dr.jacobian_dot_times_qd(m, q, v, fr),
    'frame_pose R': lambda m, q, v, a, tau, f, fr: dr.frame_pose(m, q, fr)[0],
    'frame_pose p': lambda m, q, v, a, tau, f, fr: dr.frame_pose(m, q, fr)[1],
    'cartesian_dynamics Lambda':
        lambda m, q, v, a, tau, f, fr: dr.cartesian_dynamics(m, q, v, fr).inertia,
    'cartesian_dynamics mu':
        lambda m, q, v, a, tau, f, fr: dr.cartesian_dynamics(m, q, v, fr).coriolis,
    'joint_reaction_wrenches':
        lambda m, q, v, a, tau, f, fr: dr.joint_reaction_wrenches(m, q, v, a),
}
BATCH_ENERGY_FUNCTIONS = {
    'momentum p': lambda m, q, v, a, tau, f, fr: dr.momentum(m, q, v)[0],
    'momentum h': lambda m, q, v, a, tau, f, fr: dr.momentum(m, q, v)[1],
    'center_of_mass': lambda m, q, v, a, tau, f, fr: dr.center_of_mass(m, q),
    'kinetic_energy': lambda m, q, v, a, tau, f, fr: dr.kinetic_energy(m, q, v),
}


def assert_batch_equals_loop(pair, functions):
    m = pair.ours
    q, v, a, tau, f_ext = batch_states(pair)
    frame = pair.frames()[2]
    for what, fn in functions.items():
        batched = np.asarray(fn(m, q, v, a, tau, f_ext, frame))
        assert batched.shape[:2] == (3, 2), (what, batched.shape)
        loop = np.array([[fn(m, q[i, j], v[i, j], a[i, j], tau[i, j], f_ext[i, j], frame)
                          for j in range(2)] for i in range(3)])
        check(f'batch (3, 2) vs loop: {what}', pair.name, batched, loop)


def test_batch_axes_equal_the_loop(pair):
    assert_batch_equals_loop(pair, BATCH_FUNCTIONS)


def test_batch_axes_of_momentum_and_energy_equal_the_loop(pair):
    assert_batch_equals_loop(pair, BATCH_ENERGY_FUNCTIONS)


def test_nearly_unit_quaternion_is_normalised(pair):
    """A quaternion off unit length by less than 1e-3 gives the results of its normalisation."""
    m = pair.ours
    q, v, a, tau, _ = states(pair)[0]
    scaled = q.copy()
    scaled[3:7] *= 1.0 + 5e-4
    check('quaternion normalised: inverse_dynamics', pair.name,
          dr.inverse_dynamics(m, scaled, v, a), dr.inverse_dynamics(m, q, v, a), 1e-12)
    check('quaternion normalised: frame_pose', pair.name,
          dr.frame_pose(m, scaled, m.link_names[-1])[0],
          dr.frame_pose(m, q, m.link_names[-1])[0], 1e-12)


# -- payloads ----------------------------------------------------------------------------------
def test_payload_matches_pinocchio_with_the_body_appended(pair):
    """attach_payload on a lumped link, a body and the base vs Pinocchio's appendBodyToJoint."""
    rng = np.random.default_rng(3)
    frames = pair.frames()
    links = [frames[-1], frames[1], pair.ours.base_link]
    m = pair.ours
    pm = pin.Model(pair.pm)
    for k, link in enumerate(links):
        mass = 0.5 + k
        com = rng.normal(size=3) * 0.1
        sides = rng.uniform(0.05, 0.3, 3)  # a box, turned: a physical inertia
        box = mass / 12.0 * np.diag([sides[1] ** 2 + sides[2] ** 2,
                                     sides[0] ** 2 + sides[2] ** 2,
                                     sides[0] ** 2 + sides[1] ** 2])
        turn = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        inertia = turn @ box @ turn.T
        m = dr.attach_payload(m, link, mass, com, inertia)
        frame = pm.frames[pair.frame_id(link)]
        pm.appendBodyToJoint(frame.parentJoint, pin.Inertia(mass, com, inertia), frame.placement)
    pd = pm.createData()
    assert m.total_mass == pytest.approx(pin.computeTotalMass(pm), rel=1e-12)
    for q, v, a, tau, f_ext in states(pair):
        pq, pv, pa = pair.q(q), pair.v(v), pair.v(a)
        M = np.triu(pin.crba(pm, pd, pq))
        check('payload mass_matrix', pair.name, dr.mass_matrix(m, q),
              pair.mat(M + np.triu(M, 1).T))
        check('payload inverse_dynamics f_ext', pair.name, dr.inverse_dynamics(m, q, v, a, f_ext),
              pair.vec(pin.rnea(pm, pd, pq, pv, pa, pair.fext(f_ext))))
        check('payload forward_dynamics', pair.name, dr.forward_dynamics(m, q, v, tau),
              pair.vec(pin.aba(pm, pd, pq, pv, pair.v(tau))))
    assert dr.detach_payload(m) is pair.ours


# -- momentum, centre of mass, energy ----------------------------------------------------------
def test_momentum_center_of_mass_and_kinetic_energy(pair):
    """
    Momentum (p, h), h about the world origin in world axes; Pinocchio's ``hg`` is about the COM.

    So [p; h] = [hg_lin; hg_ang + c x hg_lin].
    """
    m, pm, pd = pair.ours, pair.pm, pair.pd
    for q, v, *_ in states(pair):
        pq, pv = pair.q(q), pair.v(v)
        c = pin.centerOfMass(pm, pd, pq).copy()
        check('center_of_mass', pair.name, dr.center_of_mass(m, q), c)
        hg = pin.computeCentroidalMomentum(pm, pd, pq, pv)
        p, h = dr.momentum(m, q, v)
        check('momentum', pair.name, np.r_[p, h],
              np.r_[hg.linear, hg.angular + np.cross(c, hg.linear)])
        check('kinetic_energy', pair.name, dr.kinetic_energy(m, q, v),
              pin.computeKineticEnergy(pm, pd, pq, pv))
        check('potential_energy', pair.name, dr.potential_energy(m, q),
              pin.computePotentialEnergy(pm, pd, pq))


def test_simulate_conserves_momentum_in_zero_gravity():
    """RK4 (1 ms) over 1 s of sinusoidal joint torques: p and h stay put, the quaternion unit."""
    m = load(robot_path('space_robot'), ZERO_G)
    rng = np.random.default_rng(11)
    quat = rng.normal(size=4)
    q0 = np.r_[rng.normal(size=3), quat / np.linalg.norm(quat), rng.uniform(-1, 1, m.dof)]
    v0 = 0.3 * rng.normal(size=m.nv)
    frequency = 0.5 + 0.2 * np.arange(m.dof)

    def tau(t, q, v):
        return np.r_[np.zeros(6), 3.0 * np.sin(2.0 * np.pi * frequency * t)]
    run = dr.simulate(m, q0, v0, 1.0, dt=1e-3, tau=tau)
    assert run.q.shape == (1001, m.nq) and run.qd.shape == (1001, m.nv)
    assert np.abs(np.linalg.norm(run.q[:, 3:7], axis=1) - 1.0).max() < 1e-12
    p, h = dr.momentum(m, run.q, run.qd)
    p0, h0 = dr.momentum(m, q0, v0)
    check('simulate: momentum conserved', 'space_robot', np.c_[p, h],
          np.broadcast_to(np.r_[p0, h0], (len(run.t), 6)))
    assert np.abs(run.qd[-1, 6:] - v0[6:]).max() > 0.1  # the joints did move


# -- bad input ---------------------------------------------------------------------------------
@pytest.fixture(scope='module')
def space_robot():
    """Return the bundled space robot on a floating base and a valid state."""
    m = load(robot_path('space_robot'))
    q = np.r_[0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 1.0, np.linspace(-0.5, 0.5, m.dof)]
    return m, q, np.zeros(m.nv)


@pytest.mark.parametrize('as_list', [False, True], ids=['ndarray', 'list'])
@pytest.mark.parametrize('quaternion', [(0.0, 0.0, 0.0, 1.01), (0.0, 0.0, 0.0, 0.99),
                                        (0.5, 0.5, 0.5, 0.5 + 2e-3), (0.0, 0.0, 0.0, 0.0)],
                         ids=['1.01', '0.99', 'off-by-2e-3', 'zero'])
def test_non_unit_quaternion_raises(space_robot, quaternion, as_list):
    m, q, v = space_robot
    bad = q.copy()
    bad[3:7] = quaternion
    bad = bad.tolist() if as_list else bad
    for call in (lambda: dr.mass_matrix(m, bad), lambda: dr.inverse_dynamics(m, bad, v, v),
                 lambda: dr.forward_dynamics(m, bad, v, v), lambda: dr.jacobian(m, bad),
                 lambda: dr.frame_pose(m, bad), lambda: dr.coriolis_matrix(m, bad, v),
                 lambda: dr.gravity_torques(m, bad)):
        with pytest.raises(dr.InputError, match='quaternion'):
            call()
    batch = np.array([q, np.asarray(bad)])
    with pytest.raises(dr.InputError, match='quaternion'):
        dr.mass_matrix(m, batch)


@pytest.mark.parametrize('length', [-1, +1, -7])
def test_wrong_q_length_names_nq_and_nv(space_robot, length):
    m, q, v = space_robot
    bad = np.zeros(m.nq + length)
    bad[6 if len(bad) > 6 else 0] = 1.0
    for call in (lambda: dr.mass_matrix(m, bad), lambda: dr.inverse_dynamics(m, bad, v, v)):
        with pytest.raises(dr.InputError) as err:
            call()
        assert f'nq = 7 + {m.dof} = {m.nq}' in str(err.value), str(err.value)
        assert f'nv = 6 + {m.dof} = {m.nv}' in str(err.value), str(err.value)


def test_velocity_of_configuration_length_raises(space_robot):
    """A v of length nq (the classic mix-up) is rejected, naming v's length nv."""
    m, q, v = space_robot
    with pytest.raises(dr.InputError, match=str(m.nv)):
        dr.inverse_dynamics(m, q, np.zeros(m.nq), v)
    with pytest.raises(dr.InputError, match=str(m.nv)):
        dr.forward_dynamics(m, q, v, np.zeros(m.dof))


@pytest.mark.parametrize('shape', [(8, 6), (10, 6), (9, 3), (6,), (9,)])
def test_wrong_f_ext_shape_raises(space_robot, shape):
    m, q, v = space_robot
    assert m.nbodies == 9
    f_ext = np.zeros(shape)
    for call in (lambda: dr.inverse_dynamics(m, q, v, v, f_ext),
                 lambda: dr.forward_dynamics(m, q, v, v, f_ext)):
        with pytest.raises(dr.InputError, match='f_ext'):
            call()
