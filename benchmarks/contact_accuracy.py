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
Contact isolation measured in MuJoCo: the Panda pushed at random points of its surface.

Run from the repository root (``make bench-contact``)::

    .venv/bin/python benchmarks/contact_accuracy.py                   # 40 pushes per link
    .venv/bin/python benchmarks/contact_accuracy.py --pushes 10 --report /tmp/contact

The arm is example-robot-data's Panda (``panda_description/urdf/panda.urdf``: STL collision
meshes for panda_link0..7 and the hand, boxes for the fingers), simulated by MuJoCo through
:class:`denoc_ros.mujoco_arm.MujocoArm` (RK4, 1 ms; the fingers' ``<mimic>``, which MuJoCo turns
into an equality constraint, is disabled: the library loads the fingers as independent joints).

**Ground truth, independent of the code under test.** The surface is MuJoCo's own: a second
MuJoCo model of the same URDF keeps the collision geometry (:class:`SurfaceTruth`), and truth
points are drawn area-uniformly on the triangles of ``mesh_vert``/``mesh_face`` placed by the
geom's pose in its body (= the URDF link frame), and on the faces of its boxes, each with the
outward normal of its face. A point is kept only if a pusher can reach it: the 3 cm path along
which the force arrives (``-F`` from the point, starting 1 mm outside) meets no geom of the
posed arm (MuJoCo's ``mj_ray``), and the point lies inside no other link's geometry (where two
links' shapes overlap at a joint: counted crossings of rays with the other links' posed
triangles; ``mj_ray`` from inside a shape returns the distance to its far side, which may be
more than 3 cm).

**Push.** 10-40 N into the surface, direction uniform (in solid angle) inside the friction cone
of ``mu = 0.5`` about the inward normal (the locator assumes 0.6), fixed in the link's axes and
applied at the point through ``xfrc_applied`` (force in world axes, moment about the body's
centre of mass), recomputed at every step from the body's pose; held ``HOLD`` = 0.3 s after
``SETTLE`` = 0.15 s without contact. The arm: still at a random configuration (PD + MuJoCo's
bias forces) or moving (a sinusoid of 0.1-0.25 rad at 0.2-0.5 Hz about it, computed-torque
feed-forward with MuJoCo's mass matrix and bias forces). Gains are set per joint from MuJoCo's
mass-matrix diagonal (``omega`` 60 rad/s on the arm, 300 rad/s on the light fingers).

**What the code under test sees**: the joint states MuJoCo gives and the actuator torques it
applied (plus Gaussian effort noise, ``--effort-noise``, default 0.05 N m), at 1 kHz, fed to
:class:`denoc_ros.processor.DynamicsProcessor` with the node's defaults (observer gain 50/s);
at the end of the hold its external torques go to
``dr.locate_contact(model, geometry, q, tau_ext, threshold=THRESHOLD, noise=...)``, ``geometry``
from ``dr.load_collision_geometry`` of the URDF (trimesh on the STL files), ``noise`` per joint
as the node measures it: the RMS of the observer's estimate while nothing touches the arm
(:class:`denoc_ros.contact.TorqueNoise` over the ``SETTLE`` window; ``--noise`` to change it),
``relative_noise`` the locator's default. ``THRESHOLD`` is 0.5 N m
(``--threshold``), not the node's default ``contact_threshold`` of 5 N m: a 10-40 N push within
the cone gives panda_link1 at most ~1.3 N m, and a good share of the pushes on panda_link3 and
on the fingers stay under 5 N m on every joint; the table says how many pushes the node's
default would have flagged at all (``node flags``).

**Figures per link** (:func:`summarize`): the link right (the reported link is the pushed one),
point error (base frame, located point to truth) median / 95th percentile over the pushes called
``located``, and for ``ambiguous`` ones whether the truth is in the set (the nearest candidate
within the coarse spacing 3 cm, or the truth within 3.37 sigma -- chi-square 99 % in 3 dof -- of
the reported covariance), counts per status. A push on a link from panda_link5 on is
*resolvable* (five or more joints before it: the line of action of the force is determined);
panda_link3 and panda_link4 are not, panda_link1 and panda_link2 must come back ambiguous.

Hard cases (:func:`hard_cases`): two simultaneous pushes on different links, a push whose joint
torques stay below the contact threshold, and a push on panda_link5 with the locator given the
geometry of a copy of the URDF without link5's ``<collision>``. Each must give a defined status,
never a confident wrong point.

Output: a table per link (stdout, with progress on stderr), ``report.json`` and
``errors.png`` (histogram of the located points' errors per link) in ``--report``
(``benchmarks/reports/contact_accuracy`` by default, git-ignored), and with ``--image`` the
picture of the README (MuJoCo's offscreen renderer, EGL). ``benchmarks/contact_twins.py`` reads
``report.json`` and tells, per push, whether another link could have made the same torques (an
oracle independent of the code under test).
"""

import argparse
import json
import math
import os
import pathlib
import sys
import time
import xml.etree.ElementTree as ET

from node_latency import cpu_model   # the benchmarks' one CPU-model reader
import numpy as np

PANDA = 'panda_description/urdf/panda.urdf'
PUSHED_LINKS = ('panda_link3', 'panda_link4', 'panda_link5', 'panda_link6', 'panda_link7',
                'panda_hand', 'panda_leftfinger', 'panda_rightfinger')
BASE_LINKS = ('panda_link1', 'panda_link2')
RESOLVABLE_JOINTS = 5      # joints before a link from which the line of action is determined
FRICTION = 0.5             # the pushes' friction cone (the locator assumes 0.6)
FORCE = (10.0, 40.0)       # N
SETTLE = 0.15              # s without contact before the push
HOLD = 0.3                 # s of push; located at its end (15 observer time constants)
ACCESS = 0.03              # m of free path along which the force arrives
HOME = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785, 0.02, 0.02])
SPREAD = 0.7               # rad: random configurations are HOME + uniform(-SPREAD, SPREAD)
THRESHOLD = 0.5           # N m: the locator's contact threshold here (module docstring)
CHI2_3_99 = 11.345         # chi-square, 3 dof, 99 %: the covariance's ellipsoid
CONFIDENT_WRONG = 0.05     # m: a 'located' point farther than this from the truth is wrong
REPORT = pathlib.Path(__file__).resolve().parent / 'reports' / 'contact_accuracy'


def panda_urdf():
    """Return the path of example-robot-data's Panda URDF (FileNotFoundError without it)."""
    from denoc_ros.resources import example_robot_data_dir
    base = example_robot_data_dir()
    if base is None or not (base / PANDA).exists():
        raise FileNotFoundError('example-robot-data is not installed (pip install '
                                'example-robot-data): no Panda with collision meshes')
    return base / PANDA


def _mesh_dirs(root, urdf_path):
    """Return the folder holding the URDF's mesh files (one, as for the Panda)."""
    share = pathlib.Path(urdf_path).resolve().parents[3]   # .../share/example-robot-data
    folders = set()
    for mesh in root.iter('mesh'):
        name = mesh.get('filename')
        if name.startswith('package://'):
            package, rel = name[len('package://'):].split('/', 1)
            path = share / rel if package == share.name else None
            if path is None:
                raise ValueError(f'cannot resolve {name} for MuJoCo')
        elif name.startswith('file://'):
            path = pathlib.Path(name[len('file://'):])
        else:
            path = pathlib.Path(urdf_path).parent / name
        folders.add(str(path.parent))
    if len(folders) > 1:
        raise ValueError(f'collision meshes in several folders {sorted(folders)}: MuJoCo '
                         'takes one meshdir')
    return folders.pop() if folders else '.'


def _quat_matrix(quat):
    """Return the rotation matrix of MuJoCo's quaternion (w, x, y, z)."""
    w, x, y, z = quat
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def _box_triangles(half):
    """Return the 12 outward-wound triangles (12, 3, 3) of a box of half sizes ``half``."""
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)],
                       dtype=float) * half
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4),
             (1, 5, 7, 3)]     # -x, +x, -y, +y, -z, +z, counter-clockwise seen from outside
    tris = []
    for a, b, c, d in quads:
        tris += [(a, b, c), (a, c, d)]
    return corners[np.array(tris)]


class SurfaceTruth:
    """
    The arm's collision surface as MuJoCo compiled it: the ground truth of the pushes.

    ``urdf_path``: the URDF (its collision meshes in one folder). Holds a MuJoCo model that
    keeps the collision geoms (contacts off: kinematics and rays only), per link the triangles
    of its surface in the link frame (``triangles[link]``: (T, 3, 3), outward winding) and
    their areas and unit normals.
    """

    def __init__(self, urdf_path):
        import mujoco
        self._mj = mujoco
        root = ET.parse(str(urdf_path)).getroot()
        for child in list(root):
            if child.tag in ('transmission', 'gazebo', 'ros2_control', 'mujoco'):
                root.remove(child)
        for link in root.findall('link'):
            for element in link.findall('visual'):
                link.remove(element)
        extension = ET.SubElement(root, 'mujoco')
        ET.SubElement(extension, 'compiler', discardvisual='false', fusestatic='false',
                      balanceinertia='false', inertiafromgeom='false', angle='radian',
                      strippath='true', meshdir=_mesh_dirs(root, urdf_path))
        self.model = m = mujoco.MjModel.from_xml_string(ET.tostring(root, encoding='unicode'))
        m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT
                               | mujoco.mjtDisableBit.mjDSBL_EQUALITY)
        self.data = mujoco.MjData(m)
        self.joint_names = tuple(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
                                 for j in range(m.njnt))
        self.triangles, self.areas, self.normals, self.geoms = {}, {}, {}, {}
        self.shape_sizes = {}  # triangles per geom (each a closed shape), in self.geoms' order
        for g in range(m.ngeom):
            body = int(m.geom_bodyid[g])
            link = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, body)
            kind = int(m.geom_type[g])
            if kind == int(mujoco.mjtGeom.mjGEOM_MESH):
                mesh = int(m.geom_dataid[g])
                v0, nv = int(m.mesh_vertadr[mesh]), int(m.mesh_vertnum[mesh])
                f0, nf = int(m.mesh_faceadr[mesh]), int(m.mesh_facenum[mesh])
                verts = np.array(m.mesh_vert[v0:v0 + nv], dtype=float)
                local = verts[np.array(m.mesh_face[f0:f0 + nf])]
                a, b, c = local[:, 0], local[:, 1], local[:, 2]
                if np.einsum('ij,ij->i', a, np.cross(b, c)).sum() < 0.0:   # 6 x volume
                    local = local[:, ::-1]
            elif kind == int(mujoco.mjtGeom.mjGEOM_BOX):
                local = _box_triangles(np.array(m.geom_size[g], dtype=float))
            else:
                raise ValueError(f'{link}: geom type {kind} is not sampled here (meshes and '
                                 'boxes only)')
            rotation = _quat_matrix(m.geom_quat[g])
            tris = local @ rotation.T + np.array(m.geom_pos[g])     # geom frame -> link frame
            cross = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
            double_area = np.linalg.norm(cross, axis=1)
            keep = double_area > 1e-14
            self.triangles.setdefault(link, []).append(tris[keep])
            self.areas.setdefault(link, []).append(0.5 * double_area[keep])
            self.normals.setdefault(link, []).append(cross[keep] / double_area[keep, None])
            self.geoms.setdefault(link, []).append(g)
            self.shape_sizes.setdefault(link, []).append(int(np.count_nonzero(keep)))
        for table in (self.triangles, self.areas, self.normals):
            for link in table:
                table[link] = np.concatenate(table[link])
        self.body = {link: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, link)
                     for link in self.triangles}
        self._geomid = np.zeros(1, np.int32)

    @property
    def links(self):
        """Return the links with collision geometry."""
        return tuple(self.triangles)

    def pose(self, q, names):
        """Place the model at ``q`` (joint ``names``' order) and compute the body poses."""
        m, d = self.model, self.data
        for name, value in zip(names, q):
            j = self._mj.mj_name2id(m, self._mj.mjtObj.mjOBJ_JOINT, name)
            d.qpos[m.jnt_qposadr[j]] = value
        self._mj.mj_kinematics(m, d)

    def to_base(self, link, point):
        """Return a link-frame point in the base (world) frame at the last :meth:`pose`."""
        b = self.body[link]
        return self.data.xpos[b] + self.data.xmat[b].reshape(3, 3) @ point

    def sample(self, link, rng):
        """Return a point (link frame) drawn area-uniformly on ``link``'s surface, its normal."""
        areas = self.areas[link]
        t = rng.choice(len(areas), p=areas / areas.sum())
        u, v = rng.random(2)
        if u + v > 1.0:
            u, v = 1.0 - u, 1.0 - v
        a, b, c = self.triangles[link][t]
        return a + u * (b - a) + v * (c - a), self.normals[link][t].copy()

    def reachable(self, link, point, normal, force):
        """Return True if the force's approach path (``ACCESS``, at the last pose) is free."""
        b = self.body[link]
        rotation = self.data.xmat[b].reshape(3, 3)
        start = self.to_base(link, point + 1e-3 * normal)
        towards = -(rotation @ force) / np.linalg.norm(force)
        hit = self._mj.mj_ray(self.model, self.data, start, towards, None, 1, -1, self._geomid)
        return hit < 0.0 or hit > ACCESS

    def covered(self, link, point, rng):
        """
        Return True if ``point`` (on ``link``, link frame) lies inside another link's geometry.

        No pusher touches such a point (where two links' collision shapes overlap at a joint).
        ``mj_ray`` started there returns the distance to the covering shape's far side, which may
        be beyond :data:`ACCESS`: here the crossings of a ray with each other geom's posed
        triangles (each geom a closed shape; a link's shapes may overlap each other) are
        counted, odd = inside that geom, the majority of three random directions deciding (a
        ray through an edge may count one crossing twice). Written here rather than with the
        locator's own inside test (``contact.geometry._RayGrid``): the truth stays independent
        of the code under test.
        """
        origin = self.to_base(link, point)
        tris, sizes = [], []
        for other in self.triangles:
            if other == link:
                continue
            b = self.body[other]
            rotation = self.data.xmat[b].reshape(3, 3)
            tris.append(self.triangles[other] @ rotation.T + self.data.xpos[b])
            sizes += [n for n in self.shape_sizes[other] if n]
        tris = np.concatenate(tris)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        a, e1, e2 = tris[:, 0], tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]
        votes = np.zeros(len(sizes), dtype=int)
        for _ in range(3):
            d = rng.normal(size=3)
            d /= np.linalg.norm(d)
            # Moller-Trumbore: origin + t d = a + u e1 + v e2, t > 0, u, v >= 0, u + v <= 1
            p = np.cross(d, e2)
            det = np.einsum('ij,ij->i', e1, p)
            ok = np.abs(det) > 1e-15
            inv = np.where(ok, 1.0 / np.where(ok, det, 1.0), 0.0)
            s = origin - a
            u = np.einsum('ij,ij->i', s, p) * inv
            qv = np.cross(s, e1)
            v = (qv @ d) * inv
            t = np.einsum('ij,ij->i', e2, qv) * inv
            hits = ok & (u >= 0.0) & (v >= 0.0) & (u + v <= 1.0) & (t > 1e-9)
            votes += np.add.reduceat(hits.astype(int), starts) % 2
        return bool(np.any(votes >= 2))


def cone_force(normal, magnitude, mu, rng):
    """Return a force of ``magnitude`` into the surface, uniform in the friction cone ``mu``."""
    inward = -np.asarray(normal, dtype=float)
    cos_max = 1.0 / math.sqrt(1.0 + mu * mu)
    cos_t = rng.uniform(cos_max, 1.0)
    sin_t = math.sqrt(max(0.0, 1.0 - cos_t * cos_t))
    helper = np.eye(3)[np.argmin(np.abs(inward))]
    e1 = np.cross(inward, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(inward, e1)
    phi = rng.uniform(0.0, 2.0 * math.pi)
    return magnitude * (cos_t * inward + sin_t * (math.cos(phi) * e1 + math.sin(phi) * e2))


class Push:
    """A force (link axes) at a point (link frame, with the surface's outward normal) of a link."""

    def __init__(self, link, point, normal, force):
        self.link, self.point, self.normal, self.force = link, point, normal, force

    def as_dict(self):
        """Return the push as JSON-ready lists."""
        return {'link': self.link, 'point': self.point.tolist(), 'normal': self.normal.tolist(),
                'force': self.force.tolist()}


class Rig:
    """
    The simulated Panda, the code under test, and the truth surface (module docstring).

    ``urdf_path``: the robot; ``geometry_urdf``: the URDF (path or XML text) the locator's
    geometry is loaded from (default the same); ``effort_noise``: N m (std) added to the
    efforts the processor gets; ``seed`` for that noise; ``threshold``: the locator's;
    ``noise``: the locator's ``noise``: ``'measured'`` (default, as the node does it: the RMS
    of the observer's estimate per joint while nothing touches the arm, by
    :class:`denoc_ros.contact.TorqueNoise` over the ``SETTLE`` window before the push),
    ``'locator'`` (the locator's own default) or N m; ``locator_options``: more keywords of
    ``locate_contact`` (``relative_noise``; default the locator's).
    """

    def __init__(self, urdf_path=None, geometry_urdf=None, effort_noise=0.05, seed=0,
                 threshold=THRESHOLD, noise='measured', **locator_options):
        import mujoco
        import denoc_ros as dr
        from denoc_ros.mujoco_arm import MujocoArm
        from denoc_ros.processor import DynamicsProcessor
        self._mj, self._dr = mujoco, dr
        self.urdf_path = pathlib.Path(urdf_path or panda_urdf())
        xml = self.urdf_path.read_text()
        self.model = dr.load_urdf(str(self.urdf_path))
        self.arm = MujocoArm(xml)
        m = self.arm.model
        m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_EQUALITY   # <mimic>: see docstring
        self.processor = DynamicsProcessor(self.model)
        self.truth = SurfaceTruth(self.urdf_path)
        self.geometry = self.load_geometry(geometry_urdf or self.urdf_path)
        self.effort_noise = float(effort_noise)
        self.threshold = threshold
        self.locator_options = {k: v for k, v in locator_options.items() if v is not None}
        self.noise = noise
        if noise not in ('measured', 'locator'):
            self.locator_options['noise'] = float(noise)
        self.rng = np.random.default_rng(seed)
        # model order <-> MuJoCo (arm) order
        self.order = np.array([self.arm.joint_names.index(n) for n in self.model.joint_names])
        self.names = self.model.joint_names
        self.lower = np.where(np.isfinite(self.model.lower), self.model.lower, -np.pi)
        self.upper = np.where(np.isfinite(self.model.upper), self.model.upper, np.pi)
        self._mass = np.zeros((m.nv, m.nv))
        self.locate_seconds = []

    def load_geometry(self, source):
        """Return the locator's geometry of a URDF path or text (warnings kept, not shown)."""
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            source = str(source) if isinstance(source, pathlib.Path) else source
            return self._dr.load_collision_geometry(source)

    def random_configuration(self, rng):
        """Return a random configuration about HOME inside the joint limits (model order)."""
        q = HOME + rng.uniform(-SPREAD, SPREAD, len(HOME))
        q[7:] = HOME[7:]
        margin = 0.05
        return np.clip(q, self.lower + margin, self.upper - margin)

    def sample_push(self, link, q, rng, force_range=FORCE, mu=FRICTION):
        """Return a reachable :class:`Push` on ``link`` at ``q`` (model order)."""
        self.truth.pose(q, self.names)
        for _ in range(500):
            point, normal = self.truth.sample(link, rng)
            force = cone_force(normal, rng.uniform(*force_range), mu, rng)
            if (self.truth.reachable(link, point, normal, force)
                    and not self.truth.covered(link, point, rng)):
                return Push(link, point, normal, force)
        raise RuntimeError(f'no reachable point on {link} at q = {np.round(q, 3).tolist()}')

    # -- simulation ----------------------------------------------------------------------------
    def _gains(self, q):
        """Return (Kp, Kd) from MuJoCo's mass-matrix diagonal at ``q`` (MuJoCo order)."""
        mj, m = self._mj, self.arm.model
        d = mj.MjData(m)
        d.qpos[:] = q
        mj.mj_forward(m, d)
        mj.mj_fullM(m, d, self._mass)
        inertia = 1.0 / np.diag(np.linalg.inv(self._mass))   # each joint, the others free
        omega = np.full(m.nv, 60.0)
        omega[7:] = 300.0
        return inertia * omega ** 2, 2.0 * inertia * omega

    def simulate(self, q0, pushes, motion=None, settle=SETTLE, hold=HOLD, trace=False):
        """
        Hold or move the arm about ``q0`` (model order), push after ``settle`` for ``hold`` s.

        ``motion``: None (still) or (amplitude, frequency, phase) arrays (model order) of
        ``q_d = q0 + a sin(2 pi f t + phase)``. Returns a dict: ``q``, ``qd``, ``tau_ext`` (the
        processor's at the last sample), ``tau_true`` (MuJoCo's J^T F of the pushes there),
        ``pushes_base`` (truth points and forces in the base frame there); with ``trace``, the
        time series ``t``, ``tau_ext_series``; always ``hold``: the (q, tau_ext) of every joint
        state of the push (what the node's localization gets).
        """
        mj, arm, proc = self._mj, self.arm, self.processor
        m, d = arm.model, arm.data
        inv = np.argsort(self.order)          # MuJoCo order -> model order is v[self.order]
        q0_mj = np.asarray(q0, dtype=float)[inv]
        if motion is None:
            amp = freq = phase = np.zeros(m.nv)
        else:
            amp, freq, phase = (np.asarray(x, dtype=float)[inv] for x in motion)
        w = 2.0 * np.pi * freq
        kp, kd = self._gains(q0_mj)
        arm.clear_external_wrench()
        d.xfrc_applied[:] = 0.0
        arm.set_state(q0_mj + amp * np.sin(phase), amp * w * np.cos(phase))
        d.time = 0.0
        proc.install_model(self.model)        # a fresh observer, as after a (re)start
        bodies = [(mj.mj_name2id(m, mj.mjtObj.mjOBJ_BODY, p.link), p) for p in pushes]
        steps = int(round((settle + hold) / m.opt.timestep))
        on = int(round(settle / m.opt.timestep))
        series = [] if trace else None
        rest = self._dr.contact.TorqueNoise(self.model.nv)
        out = None
        hold_states = []
        for k in range(steps):
            t = k * m.opt.timestep
            mj.mj_forward(m, d)
            mj.mj_fullM(m, d, self._mass)
            q, qd = d.qpos.copy(), d.qvel.copy()
            s = np.sin(w * t + phase)
            q_d = q0_mj + amp * s
            qd_d = amp * w * np.cos(w * t + phase)
            qdd_d = -amp * w * w * s
            tau = self._mass @ qdd_d + d.qfrc_bias + kp * (q_d - q) + kd * (qd_d - qd)
            d.xfrc_applied[:] = 0.0
            if k >= on:
                for body, p in bodies:
                    rotation = d.xmat[body].reshape(3, 3)
                    force = rotation @ p.force
                    at = d.xpos[body] + rotation @ p.point
                    d.xfrc_applied[body, :3] += force
                    d.xfrc_applied[body, 3:] += np.cross(at - d.xipos[body], force)
            arm.set_effort(tau)
            arm.step(1)
            effort = arm.applied_effort + self.rng.normal(0.0, self.effort_noise, m.nv) \
                if self.effort_noise > 0 else arm.applied_effort
            q, qd = arm.state()
            out = proc.process(arm.time, q[self.order], qd[self.order], effort[self.order])
            if k < on:      # nothing touches the arm yet: the observer's noise at rest
                rest.update(arm.time, out.external_torques, False)
            else:
                hold_states.append((q[self.order], out.external_torques.copy()))
            if trace:
                series.append((arm.time, out.external_torques.copy()))
        q, qd = arm.state()
        mj.mj_kinematics(m, d)
        mj.mj_comPos(m, d)
        tau_true = np.zeros(m.nv)
        pushes_base = []
        for body, p in bodies:
            rotation = d.xmat[body].reshape(3, 3)
            at = d.xpos[body] + rotation @ p.point
            force = rotation @ p.force
            mj.mj_applyFT(m, d, force, np.zeros(3), at, body, tau_true)
            pushes_base.append((at, force, rotation @ p.normal))
        result = {'q': q[self.order], 'qd': qd[self.order], 'noise': rest.sigma.copy(),
                  'tau_ext': out.external_torques.copy(), 'tau_true': tau_true[self.order],
                  'pushes_base': pushes_base, 'hold': hold_states}
        if trace:
            result['t'] = np.array([s[0] for s in series])
            result['tau_ext_series'] = np.array([s[1] for s in series])
        return result

    def joint_torques(self, q, pushes):
        """Return MuJoCo's J^T F (model order) of ``pushes`` at ``q`` (model order)."""
        mj, m = self._mj, self.arm.model
        d = mj.MjData(m)
        d.qpos[:] = np.asarray(q, dtype=float)[np.argsort(self.order)]
        mj.mj_kinematics(m, d)
        mj.mj_comPos(m, d)
        tau = np.zeros(m.nv)
        for p in pushes:
            body = mj.mj_name2id(m, mj.mjtObj.mjOBJ_BODY, p.link)
            rotation = d.xmat[body].reshape(3, 3)
            mj.mj_applyFT(m, d, rotation @ p.force, np.zeros(3),
                          d.xpos[body] + rotation @ p.point, body, tau)
        return tau[self.order]

    def locate(self, q, tau_ext, geometry=None, threshold=None, noise=None):
        """
        Return ``dr.locate_contact`` of the torques at ``q`` (default ``self.threshold``).

        ``noise``: the noise measured at rest, used when the rig's ``noise`` is 'measured'.
        """
        if threshold is None:
            threshold = self.threshold
        options = dict(self.locator_options)
        if self.noise == 'measured' and noise is not None:
            options['noise'] = noise
        start = time.perf_counter()
        result = self._dr.locate_contact(self.model, geometry or self.geometry, q, tau_ext,
                                         threshold=threshold, **options)
        self.locate_seconds.append(time.perf_counter() - start)
        return result

    def track(self, states, geometry=None, threshold=None, noise=None):
        """
        Return the :class:`denoc_ros.ContactTracker`'s answer at the last of ``states``.

        ``states``: the (q, tau_ext) of every joint state of the push, each given to the
        tracker as the node does while in contact (here with the locator's threshold, from
        the push's first joint state on). Also returns (full searches, tracked updates, the
        update times [s]).
        """
        if threshold is None:
            threshold = self.threshold
        options = dict(self.locator_options)
        if self.noise == 'measured' and noise is not None:
            options['noise'] = noise
        noise = options.pop('noise', 0.3)
        tracker = self._dr.ContactTracker(self.model, geometry or self.geometry, **options)
        times = []
        for q, tau_ext in states:
            start = time.perf_counter()
            result = tracker.update(q, tau_ext, noise=noise, threshold=threshold)
            times.append(time.perf_counter() - start)
        return result, (tracker.full_searches, tracker.tracked, times)


def judge(result, truths, coarse_spacing):
    """
    Return the figures of one located contact against the truth(s) (base-frame points, links).

    ``truths``: [(link, point_base)]. ``error``: located point to the nearest truth (m, NaN
    unless the status is 'located'); ``link_right``: the reported link is a pushed one;
    ``in_set``: the nearest candidate within ``coarse_spacing`` or a truth within the 99 %
    ellipsoid of the covariance; ``confident_wrong``: 'located' farther than
    ``CONFIDENT_WRONG`` from every truth; ``located_wrong_link``: 'located' on another link
    (panda_link7 and panda_hand are one rigid body: the torques cannot tell them apart).
    """
    status = result.status
    links = [link for link, _ in truths]
    points = np.array([p for _, p in truths])
    point = np.asarray(result.point_base, dtype=float)
    distances = np.linalg.norm(points - point, axis=1)
    nearest = int(np.argmin(distances))
    error = float(distances[nearest])
    candidates = np.asarray(result.candidates, dtype=float).reshape(-1, 3)
    candidate_distance = (float(np.min(np.linalg.norm(candidates[:, None] - points[None], axis=2)))
                          if len(candidates) else float('nan'))
    cov = np.asarray(result.covariance, dtype=float)
    try:
        mahalanobis2 = float(min((p - point) @ np.linalg.solve(cov, p - point) for p in points))
    except np.linalg.LinAlgError:
        mahalanobis2 = float('inf')
    in_set = bool((len(candidates) and candidate_distance <= coarse_spacing)
                  or mahalanobis2 <= CHI2_3_99)
    link_right = result.link in links
    link_in_set = bool(set(links) & set(result.candidate_links)) or link_right
    located = status == 'located'
    return {'status': status, 'link': result.link, 'link_right': bool(link_right),
            'link_in_set': link_in_set,
            'point_base': point.tolist(), 'force': np.asarray(result.force).tolist(),
            'error': error if located else float('nan'),
            'distance_to_reported': error,
            'candidate_distance': candidate_distance, 'candidates': len(candidates),
            'mahalanobis2': mahalanobis2, 'in_set': in_set,
            'confident_wrong': bool(located and error > CONFIDENT_WRONG),
            'located_wrong_link': bool(located and not link_right),
            'residual': float(result.residual),
            'relative_residual': float(result.relative_residual),
            'sigma': float(np.sqrt(max(np.trace(cov), 0.0))), 'message': result.message}


def push_trial(rig, link, rng, moving, exact=False, force_range=FORCE, geometry=None,
               links=None, threshold=None, tracked=False):
    """
    Simulate one push (or several: ``links``) at a random configuration; return its record.

    ``exact``: also locate from MuJoCo's own J^T F at the end (no observer, no noise), to
    tell the locator's errors from the observer's. ``threshold``: the locator's (default the
    rig's); the push is ``detectable`` if MuJoCo's J^T F reaches it on a joint, ``node_flags``
    if the observer's estimate reaches the node's default ``contact_threshold``. ``tracked``:
    the answer judged is a :class:`denoc_ros.ContactTracker`'s fed every joint state of the
    push (:meth:`Rig.track`), the one-shot ``locate_contact``'s is kept in ``one_shot``.
    """
    q0 = rig.random_configuration(rng)
    pushed = list(links) if links else [link]
    pushes = [rig.sample_push(k, q0, rng, force_range) for k in pushed]
    motion = None
    if moving:
        n = len(q0)
        amp = rng.uniform(0.1, 0.25, n)
        amp[7:] = 0.0
        motion = (amp, rng.uniform(0.2, 0.5, n), rng.uniform(0, 2 * np.pi, n))
    sim = rig.simulate(q0, pushes, motion)
    truths = [(p.link, at) for p, (at, _, _) in zip(pushes, sim['pushes_base'])]
    geometry = geometry or rig.geometry
    threshold = rig.threshold if threshold is None else threshold
    result = rig.locate(sim['q'], sim['tau_ext'], geometry, threshold, sim['noise'])
    record = {'links': pushed, 'moving': bool(moving), 'q': sim['q'].tolist(),
              'threshold': threshold,
              'detectable': bool(np.any(np.abs(sim['tau_true']) >= threshold)),
              'node_flags': bool(np.any(np.abs(sim['tau_ext'])
                                        >= rig.processor.settings.contact_threshold)),
              'pushes': [p.as_dict() for p in pushes],
              'truth_base': [at.tolist() for _, at in truths],
              'tau_ext': sim['tau_ext'].tolist(), 'tau_true': sim['tau_true'].tolist(),
              'noise': sim['noise'].tolist(),
              'observer_error': float(np.linalg.norm(sim['tau_ext'] - sim['tau_true'])),
              'max_tau': float(np.abs(sim['tau_true']).max()),
              'locate_ms': 1e3 * rig.locate_seconds[-1]}
    if tracked:
        one_shot = judge(result, truths, geometry.coarse_spacing)
        record['one_shot'] = {k: one_shot[k] for k in ('status', 'link', 'link_right', 'error',
                                                       'in_set')}
        result, (full, steps, times) = rig.track(sim['hold'], geometry, threshold,
                                                 sim['noise'])
        record['tracking'] = {'full_searches': full, 'tracked': steps,
                              'median_ms': 1e3 * float(np.median(times)),
                              'max_ms': 1e3 * float(np.max(times))}
    record.update(judge(result, truths, geometry.coarse_spacing))
    if exact:
        exact_result = rig.locate(sim['q'], sim['tau_true'], geometry, threshold, sim['noise'])
        figures = judge(exact_result, truths, geometry.coarse_spacing)
        record['exact'] = {k: figures[k] for k in ('status', 'link', 'link_right', 'error',
                                                   'distance_to_reported', 'in_set',
                                                   'candidate_distance', 'residual')}
    return record


def run_pushes(rig, pushes_per_link, seed=0, links=PUSHED_LINKS + BASE_LINKS,
               moving_fraction=0.5, exact=False, progress=None, tracked=False):
    """Return the records of ``pushes_per_link`` pushes on each link, half of them moving."""
    rng = np.random.default_rng(seed)
    records = []
    total = pushes_per_link * len(links)
    for link in links:
        for i in range(pushes_per_link):
            moving = i < round(moving_fraction * pushes_per_link)
            records.append(push_trial(rig, link, rng, moving, exact, tracked=tracked))
            if progress:
                progress(len(records), total, records[-1])
    return records


def tracking_summary(records):
    """Return lines comparing the tracked answers with the one-shot ones (``--tracked``)."""
    rows = [r for r in records if r['links'][0] in PUSHED_LINKS and r['detectable']]
    tracked = [r for r in records if 'tracking' in r]
    full = sum(r['tracking']['full_searches'] for r in tracked)
    steps = full + sum(r['tracking']['tracked'] for r in tracked)
    same = np.mean([r['one_shot']['status'] == r['status'] and r['one_shot']['link'] == r['link']
                    for r in rows])
    one = np.mean([r['one_shot']['link_right'] for r in rows])
    located = [r['one_shot']['error'] for r in rows if r['one_shot']['status'] == 'located']
    return (f'tracked: {steps} joint states located, {full} full searches '
            f'({100 * full / max(steps, 1):.1f} %), per update median '
            f'{np.median([r["tracking"]["median_ms"] for r in tracked]):.2f} ms (median of the '
            f'pushes), max {max(r["tracking"]["max_ms"] for r in tracked):.1f} ms; same status '
            f'and link as one locate_contact at the end in {100 * same:.1f} % of the pushes; '
            f'one-shot: link right {100 * one:.1f} %, located {len(located)} (all links 3..)')


def _percentile(values, p):
    values = [v for v in values if not math.isnan(v)]
    return float(np.percentile(values, p)) if values else float('nan')


def resolvable(model, link):
    """Return True if ``RESOLVABLE_JOINTS`` or more joints move ``link`` (line of action)."""
    import denoc_ros as dr
    q = np.zeros(model.dof)
    J = dr.jacobian(model, q, frame=link)
    return int(np.count_nonzero(np.abs(J).sum(axis=0) > 0)) >= RESOLVABLE_JOINTS


def summarize(records, model=None):
    """Return per-link figures ({link: dict}) of single-push records (module docstring)."""
    table = {}
    for link in dict.fromkeys(r['links'][0] for r in records if len(r['links']) == 1):
        rows = [r for r in records if r['links'] == [link]]
        statuses = {}
        for r in rows:
            statuses[r['status']] = statuses.get(r['status'], 0) + 1
        located = [r['error'] for r in rows if r['status'] == 'located']
        ambiguous = [r for r in rows if r['status'] == 'ambiguous']
        seen = [r for r in rows if r['detectable']] or rows
        entry = {'pushes': len(rows), 'detectable': sum(r['detectable'] for r in rows),
                 'node_flags': sum(r['node_flags'] for r in rows),
                 'threshold': rows[0]['threshold'], 'statuses': statuses,
                 'link_right': sum(r['link_right'] for r in seen) / len(seen),
                 'link_in_set': sum(r['link_in_set'] for r in seen) / len(seen),
                 'located': len(located),
                 'error_median': _percentile(located, 50),
                 'error_p95': _percentile(located, 95),
                 'ambiguous_in_set': (sum(r['in_set'] for r in ambiguous) / len(ambiguous)
                                      if ambiguous else float('nan')),
                 'confident_wrong': sum(r['confident_wrong'] for r in rows),
                 'located_wrong_link': sum(r['located_wrong_link'] for r in rows),
                 'observer_error_median': _percentile([r['observer_error'] for r in rows], 50),
                 'still': sum(not r['moving'] for r in rows)}
        if model is not None:
            entry['resolvable'] = resolvable(model, link)
        exact = [r['exact'] for r in rows if 'exact' in r]
        if exact:
            entry['exact_link_right'] = sum(e['link_right'] for e in exact) / len(exact)
            entry['exact_error_median'] = _percentile(
                [e['error'] for e in exact if e['status'] == 'located'], 50)
            entry['exact_statuses'] = {}
            for e in exact:
                entry['exact_statuses'][e['status']] = entry['exact_statuses'].get(
                    e['status'], 0) + 1
        table[link] = entry
    return table


def hard_cases(rig, seed=1, repeats=3, progress=None):
    """
    Return {case: [records]} for the hard cases (module docstring), ``repeats`` each.

    ``two``: simultaneous pushes on two different links (one of link3..link5, one of
    link6..hand); ``below``: a push whose largest joint torque is 40 % of the node's default
    contact threshold (5 N m), located with that threshold;
    ``no_geometry``: a push on panda_link5, located in the geometry of a URDF copy without
    link5's collision element.
    """
    rng = np.random.default_rng(seed)
    cases = {'two': [], 'below': [], 'no_geometry': []}
    root = ET.parse(str(rig.urdf_path)).getroot()
    for link in root.findall('link'):
        if link.get('name') == 'panda_link5':
            for element in link.findall('collision'):
                link.remove(element)
    stripped = rig.load_geometry(ET.tostring(root, encoding='unicode'))
    threshold = float(np.min(rig.processor.settings.contact_threshold))
    for i in range(repeats):
        first = str(rng.choice(['panda_link3', 'panda_link4', 'panda_link5']))
        second = str(rng.choice(['panda_link6', 'panda_link7', 'panda_hand']))
        cases['two'].append(push_trial(rig, None, rng, i % 2 == 1, links=(first, second)))
        # below the threshold: a 1 N push scaled to 40 % of it
        link = str(rng.choice(PUSHED_LINKS[:6]))
        q0 = rig.random_configuration(rng)
        push = rig.sample_push(link, q0, rng, (1.0, 1.0))
        per_newton = rig.joint_torques(q0, [push])
        push.force *= 0.4 * threshold / np.abs(per_newton).max()
        sim = rig.simulate(q0, [push])
        result = rig.locate(sim['q'], sim['tau_ext'], threshold=threshold, noise=sim['noise'])
        (at, _, _), = sim['pushes_base']
        record = {'links': [link], 'moving': False, 'pushes': [push.as_dict()],
                  'truth_base': [at.tolist()], 'tau_ext': sim['tau_ext'].tolist(),
                  'max_tau': float(np.abs(sim['tau_true']).max()),
                  'threshold': threshold, 'observer_error': float(np.linalg.norm(
                      sim['tau_ext'] - sim['tau_true']))}
        record.update(judge(result, [(link, at)], rig.geometry.coarse_spacing))
        record['in_contact'] = bool(result.in_contact)
        cases['below'].append(record)
        cases['no_geometry'].append(push_trial(rig, 'panda_link5', rng, i % 2 == 1,
                                               geometry=stripped))
        if progress:
            progress(i + 1, repeats, None)
    return cases


def hard_case_failures(cases):
    """Return one line per hard-case record that breaks its rule (empty: all defined)."""
    bad = []
    for r in cases['two']:
        if r['confident_wrong']:
            bad.append(f'two pushes on {r["links"]}: located on {r["link"]} '
                       f'{r["distance_to_reported"]:.3f} m from the nearest truth')
    for r in cases['below']:
        if r['status'] != 'no_contact' or r['in_contact']:
            bad.append(f'push below the threshold ({r["max_tau"]:.2f} N m < {r["threshold"]} '
                       f'N m) on {r["links"][0]}: status {r["status"]}')
    for r in cases['no_geometry']:
        if r['status'] == 'located':
            bad.append(f'push on panda_link5 without its geometry: located on {r["link"]} '
                       f'{r["distance_to_reported"]:.3f} m from the truth ({r["message"]})')
    return bad


def format_table(table):
    """Return the per-link table as text."""
    head = (f'{"link":<18} {"n":>3} {"det":>3} {"node":>4} {"res":>3} {"link ok":>7} '
            f'{"in cand":>7} {"located":>7} '
            f'{"median":>7} {"p95":>7} {"amb in set":>10} {"wrong":>5} {"w.lnk":>5}  statuses')
    lines = ["det: pushes reaching the threshold on a joint; node: flagged at the node's default "
             'threshold; res: resolvable; link ok: of the detectable; in cand: the link among the '
             'candidates; median, p95: point error of the located; amb in set: truth in the set '
             'of the ambiguous; wrong: located > 5 cm from the truth; w.lnk: located on another '
             'link', head, '-' * len(head)]
    for link, e in table.items():
        statuses = ', '.join(f'{k} {v}' for k, v in sorted(e['statuses'].items()))
        res = {True: 'yes', False: 'no'}.get(e.get('resolvable'), '?')
        lines.append(
            f'{link:<18} {e["pushes"]:>3} {e["detectable"]:>3} {e["node_flags"]:>4} {res:>3} '
            f'{100 * e["link_right"]:>6.1f}% {100 * e["link_in_set"]:>6.1f}% '
            f'{e["located"]:>7} {_cm(e["error_median"]):>7} {_cm(e["error_p95"]):>7} '
            f'{_pct(e["ambiguous_in_set"]):>10} {e["confident_wrong"]:>5} '
            f'{e["located_wrong_link"]:>5}  {statuses}')
    return '\n'.join(lines)


def _cm(x):
    return '-' if math.isnan(x) else f'{100 * x:.2f}cm'


def _pct(x):
    return '-' if math.isnan(x) else f'{100 * x:.0f}%'


def plot_errors(records, path):
    """Write a histogram of the located points' errors per link (PNG) to ``path``."""
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    links = list(dict.fromkeys(r['links'][0] for r in records if len(r['links']) == 1))
    cols = 4
    rows = (len(links) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.4 * rows), squeeze=False)
    bins = np.linspace(0.0, 10.0, 41)
    for ax, link in zip(axes.flat, links):
        errors = [100 * r['error'] for r in records
                  if r['links'] == [link] and r['status'] == 'located']
        ax.hist(np.clip(errors, 0.0, 10.0), bins=bins, color='tab:blue')
        n = sum(r['links'] == [link] for r in records)
        ax.set_title(f'{link} ({len(errors)}/{n} located)', fontsize=9)
        ax.set_xlabel('point error [cm] (10 = 10 or more)', fontsize=8)
        ax.axvline(2.0, color='tab:green', lw=0.8)
        ax.axvline(5.0, color='tab:red', lw=0.8)
    for ax in list(axes.flat)[len(links):]:
        ax.axis('off')
    fig.tight_layout()
    fig.savefig(str(path), dpi=80)
    plt.close(fig)


def _render(truth, q, names, marks, camera, size=(560, 520)):
    """
    Return an RGB image of the collision model at ``q`` with ``marks`` (MuJoCo, offscreen).

    ``marks``: [(kind, a, b, rgba)]: ('sphere', centre, radius) or ('arrow', from, to).
    ``camera``: (lookat, distance, azimuth, elevation). The background is made white.
    """
    import mujoco
    m = truth.model
    m.vis.global_.offwidth, m.vis.global_.offheight = max(size[0], 640), max(size[1], 480)
    m.geom_rgba[:] = (0.78, 0.80, 0.84, 0.45)
    m.vis.headlight.ambient[:] = (0.45, 0.45, 0.45)
    m.vis.headlight.diffuse[:] = (0.55, 0.55, 0.55)
    truth.pose(q, names)
    mujoco.mj_forward(m, truth.data)
    cam = mujoco.MjvCamera()
    cam.lookat[:], cam.distance, cam.azimuth, cam.elevation = camera
    option = mujoco.MjvOption()
    with mujoco.Renderer(m, size[1], size[0]) as renderer:
        renderer.update_scene(truth.data, camera=cam, scene_option=option)
        scene = renderer.scene
        for kind, a, b, rgba in marks:
            if scene.ngeom >= scene.maxgeom:
                break
            geom = scene.geoms[scene.ngeom]
            if kind == 'sphere':
                mujoco.mjv_initGeom(geom, mujoco.mjtGeom.mjGEOM_SPHERE, np.array([b, 0, 0]),
                                    np.asarray(a, float), np.eye(3).ravel(),
                                    np.asarray(rgba, np.float32))
            else:
                mujoco.mjv_initGeom(geom, mujoco.mjtGeom.mjGEOM_ARROW, np.zeros(3),
                                    np.zeros(3), np.eye(3).ravel(),
                                    np.asarray(rgba, np.float32))
                a, b = np.asarray(a, float), np.asarray(b, float)
                # this MuJoCo draws an arrow of half the connector's length: ask for twice
                mujoco.mjv_connector(geom, mujoco.mjtGeom.mjGEOM_ARROW, 0.012, a, 2 * b - a)
            geom.segid, geom.objid = scene.ngeom, 0     # not background in the segmentation
            geom.objtype = int(mujoco.mjtObj.mjOBJ_GEOM)
            scene.ngeom += 1
        image = renderer.render().copy()
        renderer.enable_segmentation_rendering()
        segments = renderer.render()
    image[segments[..., 0] < 0] = 255
    return image


def picture_pushes(rig, seed=0, tries=40):
    """
    Return two (push, q, simulation, result) for the README picture: a located, an ambiguous.

    The located one is a still push on panda_link6, link7 or the hand; the ambiguous one a push
    on panda_link2.
    """
    rng = np.random.default_rng(seed)
    found = {}
    for _ in range(tries):
        for key, links in (('located', ('panda_link6', 'panda_link7', 'panda_hand')),
                           ('ambiguous', ('panda_link2',))):
            if key in found:
                continue
            q0 = rig.random_configuration(rng)
            push = rig.sample_push(rng.choice(links), q0, rng, (30.0, 40.0))
            sim = rig.simulate(q0, [push])
            result = rig.locate(sim['q'], sim['tau_ext'], noise=sim['noise'])
            at = sim['pushes_base'][0][0]
            good = (result.status == key and result.link == push.link if key == 'located'
                    else result.status == key)
            if good and key == 'located' and np.linalg.norm(result.point_base - at) > 0.03:
                good = False
            if good:
                found[key] = (push, sim, result)
        if len(found) == 2:
            return found
    raise RuntimeError(f'no located and ambiguous push found in {tries} tries: {sorted(found)}')


def render_picture(rig, path, seed=0):
    """
    Write the README's picture (PNG): a located push and an ambiguous one, side by side.

    Headless, MuJoCo needs ``MUJOCO_GL=egl`` (or osmesa) set before it is imported.
    """
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    found = picture_pushes(rig, seed)
    panels = []
    for key in ('located', 'ambiguous'):
        push, sim, result = found[key]
        at, force, normal = sim['pushes_base'][0]
        direction = force / np.linalg.norm(force)
        tail = at - direction * (0.10 + 0.004 * np.linalg.norm(force))
        marks = [('arrow', tail, at - 0.012 * direction, (0.85, 0.1, 0.1, 1.0)),
                 ('sphere', at, 0.011, (0.1, 0.3, 0.95, 1.0))]
        if key == 'located':
            marks.append(('sphere', result.point_base, 0.022, (0.1, 0.8, 0.2, 0.45)))
        else:
            for c in np.asarray(result.candidates).reshape(-1, 3)[:400]:
                marks.append(('sphere', c, 0.006, (1.0, 0.75, 0.0, 0.9)))
        lookat = 0.6 * at + 0.4 * np.array([0.0, 0.0, 0.4])
        # the camera turned about the vertical from the normal (chosen by eye: contact in view)
        turn = 50.0 if key == 'located' else 230.0
        azimuth = math.degrees(math.atan2(normal[1], normal[0])) + turn
        image = _render(rig.truth, sim['q'], rig.names, marks, (lookat, 1.0, azimuth, -20.0))
        error = np.linalg.norm(np.asarray(result.point_base) - at)
        if key == 'located':
            title = (f'{push.link}, {np.linalg.norm(force):.0f} N: located on {result.link}, '
                     f'{100 * error:.1f} cm from the truth')
        else:
            title = (f'{push.link}, {np.linalg.norm(force):.0f} N: ambiguous, '
                     f'{len(np.asarray(result.candidates).reshape(-1, 3))} candidates')
        panels.append((image, title))
    fig, axes = plt.subplots(1, 2, figsize=(10.0, 5.0))
    for ax, (image, title) in zip(axes, panels):
        ax.imshow(image)
        ax.set_title(title, fontsize=9)
        ax.axis('off')
    fig.text(0.5, 0.02, 'red: force (MuJoCo push)   blue: true contact   green: located point   '
             'orange: candidate set', ha='center', fontsize=9)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(str(path), dpi=90)
    plt.close(fig)


def _jsonable(x):
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        return _jsonable(x.item())
    return x


def main(argv=None):
    """Run the pushes, print the table, write the report; exit status 0."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--pushes', type=int, default=40, help='pushes per link (default 40)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--effort-noise', type=float, default=0.05,
                        help='std of the noise on the efforts [N m] (default 0.05)')
    parser.add_argument('--threshold', type=float, default=THRESHOLD,
                        help=f"the locator's contact threshold [N m] (default {THRESHOLD})")
    parser.add_argument('--noise', default='measured',
                        help="locate_contact's noise: 'measured' (default: the observer's RMS "
                        "at rest, as the node measures it), 'locator' (its own default) or N m")
    parser.add_argument('--relative-noise', type=float, default=None,
                        help="locate_contact's relative_noise (default: the locator's)")
    parser.add_argument('--hard', type=int, default=5, help='repeats of each hard case')
    parser.add_argument('--report', default=str(REPORT), help='folder of report.json, errors.png')
    parser.add_argument('--no-exact', action='store_true',
                        help='do not also locate from the exact J^T F (halves the locator time)')
    parser.add_argument('--image', default=None, help='also render the README picture here')
    parser.add_argument('--tracked', action='store_true',
                        help='judge a ContactTracker fed every joint state of the hold (as the '
                        'node locates), not one locate_contact at its end (also reported)')
    args = parser.parse_args(argv)
    if args.image:
        os.environ.setdefault('MUJOCO_GL', 'egl')   # headless; read when mujoco is imported
    folder = pathlib.Path(args.report)
    folder.mkdir(parents=True, exist_ok=True)
    rig = Rig(effort_noise=args.effort_noise, seed=args.seed, threshold=args.threshold,
              noise=args.noise, relative_noise=args.relative_noise)
    started = time.perf_counter()

    def progress(done, total, record):
        if record is not None:
            sys.stderr.write(f'\r{done}/{total} pushes, {time.perf_counter() - started:.0f} s '
                             f'({record["links"][0]}: {record["status"]})      ')
            sys.stderr.flush()
    records = run_pushes(rig, args.pushes, args.seed, exact=not args.no_exact,
                         progress=progress, tracked=args.tracked)
    sys.stderr.write('\nhard cases...\n')
    cases = hard_cases(rig, args.seed + 1, args.hard)
    elapsed = time.perf_counter() - started
    table = summarize(records, rig.model)
    print(f'Contact isolation, example-robot-data Panda in MuJoCo {rig._mj.__version__}: '
          f'{len(records)} pushes, effort noise {args.effort_noise} N m, observer gain '
          f'{rig.processor.settings.observer_gain}/s, locator threshold {rig.threshold} N m '
          f'noise {rig.noise} {rig.locator_options or ""}; {cpu_model()}')
    print(format_table(table))
    resolvable_rows = [r for r in records if r['links'][0] in PUSHED_LINKS]
    located = [r['error'] for r in resolvable_rows
               if r['status'] == 'located' and table[r['links'][0]].get('resolvable')]
    right = np.mean([r['link_right'] for r in resolvable_rows if r['detectable']])
    print(f'links 3..fingers: link right {100 * right:.1f} % of the detectable pushes'
          f'; resolvable links, located: median {_cm(_percentile(located, 50))}, p95 '
          f'{_cm(_percentile(located, 95))} ({len(located)} pushes)')
    print(f'locate_contact: median {1e3 * np.median(rig.locate_seconds):.1f} ms, max '
          f'{1e3 * np.max(rig.locate_seconds):.1f} ms per call')
    if args.tracked:
        print(tracking_summary(records))
    for case, rows in cases.items():
        print(f'hard case {case}: ' + '; '.join(
            f'{r["status"]} ({r["link"] or "-"})' for r in rows))
    failures = hard_case_failures(cases)
    print('hard cases: ' + ('all defined' if not failures else '\n  '.join(['FAIL'] + failures)))
    report = {'date': time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime()), 'cpu': cpu_model(),
              'mujoco': rig._mj.__version__, 'seed': args.seed, 'effort_noise': args.effort_noise,
              'joint_names': list(rig.names),
              'threshold': rig.threshold, 'noise': rig.noise,
              'locator_options': rig.locator_options,
              'seconds': elapsed, 'per_link': table, 'hard_case_failures': failures,
              'locate_ms_median': 1e3 * float(np.median(rig.locate_seconds)),
              'records': records, 'hard_cases': cases}
    (folder / 'report.json').write_text(json.dumps(_jsonable(report), indent=1))
    plot_errors(records, folder / 'errors.png')
    print(f'report: {folder / "report.json"}, {folder / "errors.png"} ({elapsed:.0f} s)')
    if args.image:
        render_picture(rig, args.image, seed=args.seed)
        print(f'picture: {args.image}')
    return 0


if __name__ == '__main__':
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))  # this tree's package
    sys.exit(main())
