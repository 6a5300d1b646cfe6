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
Time denoc_ros against Pinocchio and the Robotics Toolbox, in one process, on the same robots.

Run from the repository root (``make bench`` runs exactly this)::

    .venv/bin/python benchmarks/run.py                      # everything, about 2-3 minutes
    .venv/bin/python benchmarks/run.py --quick              # tiny repeat counts (smoke test)
    .venv/bin/python benchmarks/run.py --only pinocchio rtb # some sections only
    .venv/bin/python benchmarks/run.py --output bench.md    # also write the tables as markdown

Sections (``--only``):

``pinocchio``
    per-call times of denoc_ros and Pinocchio (``import pinocchio``) on the bundled
    ``urdf/ur5e.urdf`` (6 DoF), ``urdf/panda.urdf`` (7 DoF) and example-robot-data's Panda
    (the chain to ``panda_link8``; Pinocchio: ``buildReducedModel`` with the fingers locked; and
    the whole tree, 9 DoF, the two fingers as independent joints on both sides):
    ``rnea``, ``crba``, ``computeCoriolisMatrix``, ``computeGeneralizedGravity``, ``aba``,
    ``computeFrameJacobian`` (``LOCAL_WORLD_ALIGNED``, tip frame) and Cartesian dynamics. Pinocchio
    has no Cartesian-dynamics call: its side is composed of ``crba`` + ``computeFrameJacobian`` +
    ``nonLinearEffects`` + ``computeGeneralizedGravity`` + ``forwardKinematics`` (q, qd, 0) and
    ``getFrameClassicalAcceleration`` (for J-dot qd), then ``Lambda = (J M^-1 J^T)^-1``,
    ``J_bar = M^-1 J^T Lambda``, ``mu = J_bar^T (C qd) - Lambda Jdot qd``, ``p = J_bar^T g``
    in NumPy (the formulas of ``denoc_ros.cartesian_dynamics``).
``rtb``
    per-call times against the Robotics Toolbox for Python (``roboticstoolbox-python``) DH models
    ``Puma560`` and ``Stanford``: each is rebuilt as URDF at run time by
    ``benchmarks/dh_to_urdf.py`` from the same DH and dynamic parameters (motor inertia, gear
    ratio and friction set to zero on the toolbox side; inertia tensors the URDF loader
    rejects are repaired first, as printed): ``rne``, ``inertia``, ``coriolis``, ``gravload``,
    ``accel``, ``jacob0``.
``batch``
    throughput: 10,000 random states in one call of ours (leading batch axis) against a Python
    loop of 10,000 single Pinocchio calls (bundled Panda), and against the toolbox on the Puma
    (``rne`` takes the whole trajectory in one call; ``inertia``, ``gravload``, ``accel`` loop in
    Python and get fewer states, scaled to 10,000).
``floating``
    a floating base: example-robot-data's Solo-12 quadruped on a free flyer (ours:
    ``load_urdf(..., floating_base=True)``; Pinocchio: ``buildModelFromUrdf(path,
    JointModelFreeFlyer())``; q of 7 + 12, v of 6 + 12, joints mapped by name): per-call
    ``rnea``, ``crba``, ``computeCoriolisMatrix``, ``computeGeneralizedGravity``, ``aba`` and
    ``computeFrameJacobian`` (``LOCAL_WORLD_ALIGNED``, a foot frame) at one random state (unit
    quaternion), then 10,000 random states in one call of ours against a Python loop of 10,000
    single Pinocchio calls.
``identification``
    the joint-torque regressor (``denoc_ros.regressor``) against Pinocchio's
    ``computeJointTorqueRegressor`` per call on the three robots above, and on 100,000 random
    states of the bundled Panda in one call against a Python loop of single Pinocchio calls.
    The whole ``denoc_identify`` on a long bag is ``benchmarks/identify_cli.py``.
``payload``
    payload estimation as the node's ``~/estimate_payload`` runs it: 30 s of 1 kHz joint states
    (30,000 messages, the bundled UR5e moving its wrist, efforts of the arm with a 1.5 kg
    payload plus noise) appended one by one to a ``PayloadWindow``, then ``estimate`` over the
    whole window (filtering and differentiating at 1 kHz, decimating to 100 Hz, the regressor,
    the fit); the estimate is checked (mass within 1 %) before it is timed. Ours only: no other
    library here estimates a payload. Target (issue 22): the estimate under 1 s.
``startup``
    first-call cost: a fresh ``python`` subprocess imports denoc_ros, loads the bundled Panda and
    calls each function once, timed with ``time.perf_counter`` inside the child. *Cold*: numba's
    on-disk cache is empty (by default the child gets a new, empty ``NUMBA_CACHE_DIR``, which is
    what a cleared cache is without touching anybody's ``__pycache__``;
    ``--clear-numba-cache`` instead deletes ``__pycache__/*.nbi`` / ``*.nbc`` under
    ``denoc_ros/``). *Warm*: a second fresh subprocess with the cache the cold one wrote.
    ``--quick`` skips the cold run and times the warm one with denoc_ros' own cache.

Before anything is timed, both sides are evaluated at the benchmark state and must agree to
1e-9 (relative to the largest entry), so a ratio never compares different robots; a mismatch
stops the run with exit status 1. Per-call times: the repeats of ours and theirs alternate (so
that a slow spell of the machine hits both), each repeat long enough to be measurable, and each
time is the fastest of its repeats; ratios are ours / theirs (above 1: we are slower).
"""

import argparse
import contextlib
import datetime
import hashlib
import json
import math
import os
import pathlib
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
import warnings

import denoc_ros as dr
from denoc_ros.resources import example_robot_data_dir
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from dh_to_urdf import dh_to_urdf, make_physical, rigid_body_only  # noqa: E402, I100

TOL = 1e-9
SECTIONS = ('pinocchio', 'rtb', 'batch', 'floating', 'identification', 'payload', 'startup')


class MismatchError(RuntimeError):
    """The two libraries disagree: the benchmark would compare different robots."""


# -- settings ------------------------------------------------------------------------------------
class Settings:
    """Repeat counts and batch sizes (full run or ``--quick``)."""

    def __init__(self, quick):
        self.quick = quick
        self.repeats = 2 if quick else 9          # timeit repeats; the fastest is reported
        self.min_time = 0.0005 if quick else 0.1  # seconds per repeat (number of calls adapts)
        self.batch_states = 200 if quick else 10_000
        self.batch_repeats = 1 if quick else 3
        self.regressor_states = 500 if quick else 100_000


def calls_per_repeat(timer, settings):
    """Return how many calls make one repeat of at least ``settings.min_time`` seconds."""
    number = 1
    while True:
        elapsed = timer.timeit(number)
        if elapsed >= settings.min_time or number >= 1 << 20:
            return number
        number = max(number * 2, int(number * settings.min_time / max(elapsed, 1e-9) * 1.2))


def time_pair(ours, theirs, settings):
    """
    Return the times of one call of ``ours()`` and of ``theirs()`` [s], measured alternately.

    The repeats of the two alternate (ours, theirs, ours, ...), so that a slow spell of a shared
    machine hits both; each time is the fastest repeat (timeit's advice: the others are slowed
    by other processes, not by the code).
    """
    ours(), theirs()                              # warm-up (first-call costs: see startup)
    timers = [timeit.Timer(ours), timeit.Timer(theirs)]
    numbers = [calls_per_repeat(t, settings) for t in timers]
    best = [math.inf, math.inf]
    for _ in range(settings.repeats):
        for k in (0, 1):
            best[k] = min(best[k], timers[k].timeit(numbers[k]) / numbers[k])
    return best[0], best[1]


def time_once(fn, repeats, warmup=False):
    """Return (median wall time of one call of ``fn()`` over repeats [s], its last result)."""
    if warmup:
        fn()
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def check_close(what, ours, theirs, tol=TOL):
    """Raise MismatchError unless ``max|ours - theirs| <= tol * max|theirs|``."""
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    if ours.shape != theirs.shape:
        raise MismatchError(f'{what}: shapes differ, ours {ours.shape}, theirs {theirs.shape}')
    scale = max(float(np.max(np.abs(theirs))), 1e-300)
    err = float(np.max(np.abs(ours - theirs)))
    if not err <= tol * scale:
        raise MismatchError(f'{what}: max difference {err:.3g} > {tol:g} x {scale:.3g}')
    return err / scale


# -- tables --------------------------------------------------------------------------------------
class Table:
    """A titled table printed as aligned plain text or as markdown."""

    def __init__(self, title, columns, notes=(), left=1):
        self.title, self.columns, self.rows, self.notes = title, list(columns), [], list(notes)
        self.left = left    # how many leading columns are text (left-aligned)

    def add(self, *cells):
        self.rows.append([str(c) for c in cells])

    def text(self):
        widths = [max(len(r[i]) for r in [self.columns] + self.rows)
                  for i in range(len(self.columns))]

        def line(cells):
            return '  '.join(c.ljust(w) if i < self.left else c.rjust(w)
                             for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
        out = [self.title, '-' * len(self.title), line(self.columns),
               line(['-' * w for w in widths])]
        out += [line(r) for r in self.rows]
        out += [f'  {n}' for n in self.notes]
        return '\n'.join(out)

    def markdown(self):
        out = [f'### {self.title}', '', '| ' + ' | '.join(self.columns) + ' |',
               '|' + '|'.join('---' if i < self.left else '---:'
                              for i in range(len(self.columns)))
               + '|']
        out += ['| ' + ' | '.join(r) + ' |' for r in self.rows]
        if self.notes:
            out += [''] + [f'- {n}' for n in self.notes]
        return '\n'.join(out)


def fmt_us(seconds):
    """Format a time in microseconds with 3 significant figures or so."""
    us = seconds * 1e6
    if us >= 100:
        return f'{us:.0f}'
    if us >= 10:
        return f'{us:.1f}'
    return f'{us:.2f}'


def fmt_ms(seconds):
    """Format a time in milliseconds."""
    ms = seconds * 1e3
    return f'{ms:.0f}' if ms >= 100 else f'{ms:.1f}' if ms >= 10 else f'{ms:.2f}'


def fmt_ratio(ratio):
    """Format ours / theirs."""
    return f'{ratio:.0f}x' if ratio >= 100 else f'{ratio:.1f}x' if ratio >= 10 else f'{ratio:.2f}x'


def print_table(table, tables):
    """Print a table now (so that a long run shows progress) and keep it for ``--output``."""
    print(table.text(), end='\n\n', flush=True)
    tables.append(table)


# -- robots --------------------------------------------------------------------------------------
def random_state(model, seed, lower=None, upper=None):
    """Return (q, qd, qdd, tau) at a seeded random state (q within the limits if given)."""
    rng = np.random.default_rng(seed)
    n = model.dof
    lower = -np.ones(n) if lower is None else np.asarray(lower, dtype=float)
    upper = np.ones(n) if upper is None else np.asarray(upper, dtype=float)
    q = lower + (upper - lower) * rng.uniform(0.1, 0.9, n)
    return q, rng.uniform(-1.0, 1.0, n), rng.uniform(-1.0, 1.0, n), rng.uniform(-10.0, 10.0, n)


class PinocchioRobot:
    """A robot loaded by both libraries, with the joint-order map between them."""

    def __init__(self, pin, label, path, tip, ours, pmodel):
        self.pin, self.label, self.path, self.tip = pin, label, path, tip
        self.ours, self.pmodel = ours, pmodel
        self.pdata = pmodel.createData()
        if pmodel.nq != pmodel.nv or pmodel.nv != ours.dof:
            raise MismatchError(f'{label}: Pinocchio has nq={pmodel.nq}, nv={pmodel.nv}; '
                                f'denoc_ros has {ours.dof} joints')
        # pin_index[k] = our index of Pinocchio's k-th velocity
        pin_index = np.empty(ours.dof, dtype=int)
        for jid in range(1, pmodel.njoints):
            name = pmodel.names[jid]
            if name not in ours.joint_names:
                raise MismatchError(f'{label}: Pinocchio joint {name!r} is not in denoc_ros')
            pin_index[pmodel.joints[jid].idx_v] = ours.joint_names.index(name)
        self.pin_index = pin_index
        self.frame_id = pmodel.getFrameId(tip)
        if self.frame_id >= len(pmodel.frames):
            raise MismatchError(f'{label}: no frame {tip!r} in the Pinocchio model')

    def to_pin(self, v):
        return np.ascontiguousarray(np.asarray(v)[..., self.pin_index])

    def from_pin(self, v):
        out = np.empty_like(v)
        out[..., self.pin_index] = v
        return out

    def from_pin_matrix(self, m):
        out = np.empty_like(m)
        out[np.ix_(self.pin_index, self.pin_index)] = m
        return out


def load_pinocchio_robots(pin):
    """Return the three robots of the Pinocchio section."""
    robots = []
    for name, tip in (('ur5e', 'tool0'), ('panda', 'panda_link8')):
        path = REPO / 'urdf' / f'{name}.urdf'
        robots.append(PinocchioRobot(pin, f'{name} (bundled urdf/{name}.urdf)', path, tip,
                                     dr.load_urdf(str(path)),
                                     pin.buildModelFromUrdf(str(path))))
    base = example_robot_data_dir()
    if base is None:
        raise SystemExit('example-robot-data is not installed (pip install example-robot-data)')
    path = base / 'panda_description' / 'urdf' / 'panda.urdf'
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')       # the fingers' mimic joint
        ours = dr.load_urdf(str(path), tip_link='panda_link8')
        full = pin.buildModelFromUrdf(str(path))
    locked = [full.getJointId(n) for n in full.names[1:] if n not in ours.joint_names]
    pmodel = pin.buildReducedModel(full, locked, pin.neutral(full))
    robots.append(PinocchioRobot(pin, 'panda (example-robot-data, chain to panda_link8)', path,
                                 'panda_link8', ours, pmodel))
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        tree = dr.load_urdf(str(path))
    robots.append(PinocchioRobot(pin, 'panda (example-robot-data, whole tree: 2 fingers)', path,
                                 'panda_link8', tree, full))
    return robots


def pinocchio_cartesian(pin, pmodel, pdata, q, v, frame_id):
    """Return J, Lambda, mu, p of a frame: Pinocchio calls plus the NumPy formulas (see top)."""
    M = pin.crba(pmodel, pdata, q)
    M = np.triu(M) + np.triu(M, 1).T
    J = pin.computeFrameJacobian(pmodel, pdata, q, frame_id, pin.LOCAL_WORLD_ALIGNED)
    g = np.array(pin.computeGeneralizedGravity(pmodel, pdata, q))
    h = pin.nonLinearEffects(pmodel, pdata, q, v) - g
    pin.forwardKinematics(pmodel, pdata, q, v, np.zeros_like(v))
    jdot_qd = pin.getFrameClassicalAcceleration(pmodel, pdata, frame_id,
                                                pin.LOCAL_WORLD_ALIGNED).vector
    m_inv_jt = np.linalg.solve(M, J.T)
    lam = np.linalg.inv(J @ m_inv_jt)
    j_bar = m_inv_jt @ lam
    return J, lam, j_bar.T @ h - lam @ jdot_qd, j_bar.T @ g


def pinocchio_pairs(robot):
    """Return [(function, ours(), theirs(), compare(ours_result, theirs_result))]."""
    pin, pm, pd, m, tip = robot.pin, robot.pmodel, robot.pdata, robot.ours, robot.tip
    q, qd, qdd, tau = random_state(m, 1)
    pq, pv, pa, pt = (robot.to_pin(x) for x in (q, qd, qdd, tau))
    fid = robot.frame_id
    vec, mat = robot.from_pin, robot.from_pin_matrix

    def jac_cols(J):
        out = np.empty_like(J)
        out[:, robot.pin_index] = J
        return out

    def sym(M):
        return np.triu(M) + np.triu(M, 1).T

    def cart_ours():
        return dr.cartesian_dynamics(m, q, qd, tip)

    def cart_check(a, b):
        J, lam, mu, p = b
        errs = [check_close('Jacobian', a.jacobian, jac_cols(J)),
                check_close('Lambda', a.inertia, lam), check_close('mu', a.coriolis, mu),
                check_close('p', a.gravity, p)]
        return max(errs)

    return [
        ('inverse dynamics', 'rnea', lambda: dr.inverse_dynamics(m, q, qd, qdd),
         lambda: pin.rnea(pm, pd, pq, pv, pa), lambda a, b: check_close('tau', a, vec(b))),
        ('mass matrix', 'crba', lambda: dr.mass_matrix(m, q), lambda: pin.crba(pm, pd, pq),
         lambda a, b: check_close('M', a, mat(sym(b)))),
        ('Coriolis matrix', 'computeCoriolisMatrix', lambda: dr.coriolis_matrix(m, q, qd),
         lambda: pin.computeCoriolisMatrix(pm, pd, pq, pv),
         lambda a, b: check_close('C', a, mat(b))),
        ('gravity', 'computeGeneralizedGravity', lambda: dr.gravity_torques(m, q),
         lambda: pin.computeGeneralizedGravity(pm, pd, pq),
         lambda a, b: check_close('g', a, vec(b))),
        ('forward dynamics', 'aba', lambda: dr.forward_dynamics(m, q, qd, tau),
         lambda: pin.aba(pm, pd, pq, pv, pt), lambda a, b: check_close('qdd', a, vec(b))),
        ('Jacobian', 'computeFrameJacobian', lambda: dr.jacobian(m, q, tip),
         lambda: pin.computeFrameJacobian(pm, pd, pq, fid, pin.LOCAL_WORLD_ALIGNED),
         lambda a, b: check_close('J', a, jac_cols(b))),
        ('Cartesian dynamics', 'composed (see notes)', cart_ours,
         lambda: pinocchio_cartesian(pin, pm, pd, pq, pv, fid), cart_check),
    ] + workspace_pairs(robot, q, qd, qdd, tau)


def workspace_pairs(robot, q, qd, qdd, tau):
    """Return the same calls with a Workspace (no allocation), and compute_all_terms's pass."""
    pin, pm, pd, m, tip = robot.pin, robot.pmodel, robot.pdata, robot.ours, robot.tip
    pq, pv, pa, pt = (robot.to_pin(x) for x in (q, qd, qdd, tau))
    vec, mat = robot.from_pin, robot.from_pin_matrix
    fid = robot.frame_id
    ws = dr.Workspace(m)

    def jac_cols(J):
        out = np.empty_like(J)
        out[:, robot.pin_index] = J
        return out

    def sym(M):
        return np.triu(M) + np.triu(M, 1).T

    def all_theirs():
        pin.computeAllTerms(pm, pd, pq, pv)
        return pin.computeCoriolisMatrix(pm, pd, pq, pv), pd.M

    def all_check(a, b):
        C, M = b
        return max(check_close('C', a.C, mat(C)), check_close('M', a.M, mat(sym(M))))
    return [
        ('inverse dynamics, workspace', 'rnea', lambda: dr.inverse_dynamics(
            m, q, qd, qdd, workspace=ws), lambda: pin.rnea(pm, pd, pq, pv, pa),
         lambda a, b: check_close('tau', a, vec(b))),
        ('mass matrix, workspace', 'crba', lambda: dr.mass_matrix(m, q, workspace=ws),
         lambda: pin.crba(pm, pd, pq), lambda a, b: check_close('M', a, mat(sym(b)))),
        ('Coriolis matrix, workspace', 'computeCoriolisMatrix',
         lambda: dr.coriolis_matrix(m, q, qd, workspace=ws),
         lambda: pin.computeCoriolisMatrix(pm, pd, pq, pv),
         lambda a, b: check_close('C', a, mat(b))),
        ('gravity, workspace', 'computeGeneralizedGravity',
         lambda: dr.gravity_torques(m, q, workspace=ws),
         lambda: pin.computeGeneralizedGravity(pm, pd, pq),
         lambda a, b: check_close('g', a, vec(b))),
        ('Jacobian, workspace', 'computeFrameJacobian',
         lambda: dr.jacobian(m, q, tip, workspace=ws),
         lambda: pin.computeFrameJacobian(pm, pd, pq, fid, pin.LOCAL_WORLD_ALIGNED),
         lambda a, b: check_close('J', a, jac_cols(b))),
        ('forward dynamics, workspace', 'aba',
         lambda: dr.forward_dynamics(m, q, qd, tau, workspace=ws),
         lambda: pin.aba(pm, pd, pq, pv, pt), lambda a, b: check_close('qdd', a, vec(b))),
        ('all terms (C, M, g, J; one pass)', 'computeAllTerms + computeCoriolisMatrix',
         lambda: dr.compute_all_terms(m, q, qd, ws, frame=tip), all_theirs, all_check),
    ]


def compare_and_time(title, pairs, settings, notes=()):
    """Check every pair at the benchmark state, then time both sides; return the table."""
    worst = {}
    for function, _, ours, theirs, check in pairs:
        try:
            worst[function] = check(ours(), theirs())
        except MismatchError as err:
            raise MismatchError(f'{title}, {function}: {err}') from None
    table = Table(title, ['function', 'their call', 'ours [us/call]', 'theirs [us/call]',
                          'ours/theirs', 'max rel. diff'], notes, left=2)
    for function, their_name, ours, theirs, _ in pairs:
        t_ours, t_theirs = time_pair(ours, theirs, settings)
        table.add(function, their_name, fmt_us(t_ours), fmt_us(t_theirs),
                  fmt_ratio(t_ours / t_theirs), f'{worst[function]:.0e}')
    return table


def section_pinocchio(pin, settings, tables):
    """Per-call times against Pinocchio on the three robots."""
    for robot in load_pinocchio_robots(pin):
        notes = [f'{robot.ours.dof} DoF, tip frame {robot.tip}; Jacobian: '
                 'LOCAL_WORLD_ALIGNED; crba fills the upper triangle only (as Pinocchio '
                 'returns it)',
                 'Cartesian dynamics, Pinocchio side: crba + computeFrameJacobian + '
                 'nonLinearEffects + computeGeneralizedGravity + forwardKinematics + '
                 'getFrameClassicalAcceleration, then Lambda, J_bar, mu, p in NumPy']
        print_table(compare_and_time(f'{robot.label} vs Pinocchio {pin.__version__}',
                                     pinocchio_pairs(robot), settings, notes), tables)


# -- Robotics Toolbox ----------------------------------------------------------------------------
def load_rtb_robot(rtb, name):
    """Return (toolbox robot without motor/friction terms, our model, notes)."""
    robot = getattr(rtb.models.DH, name)()
    rigid_body_only(robot)
    notes = make_physical(robot)
    model = dr.load_urdf(dh_to_urdf(robot, name=name.lower()))
    return robot, model, notes


def rtb_pairs(robot, model):
    """Return the (function, name, ours, theirs, check) list of the toolbox comparison."""
    q, qd, qdd, tau = random_state(model, 2, robot.qlim[0], robot.qlim[1])

    def close(what):
        return lambda a, b: check_close(what, a, b)
    return [
        ('inverse dynamics', 'rne', lambda: dr.inverse_dynamics(model, q, qd, qdd),
         lambda: robot.rne(q, qd, qdd), close('tau')),
        ('mass matrix', 'inertia', lambda: dr.mass_matrix(model, q), lambda: robot.inertia(q),
         close('M')),
        ('Coriolis matrix', 'coriolis', lambda: dr.coriolis_matrix(model, q, qd),
         lambda: robot.coriolis(q, qd), close('C')),
        ('gravity', 'gravload', lambda: dr.gravity_torques(model, q), lambda: robot.gravload(q),
         close('g')),
        ('forward dynamics', 'accel', lambda: dr.forward_dynamics(model, q, qd, tau),
         lambda: robot.accel(q, qd, tau), close('qdd')),
        ('Jacobian', 'jacob0', lambda: dr.jacobian(model, q, 'tool0'), lambda: robot.jacob0(q),
         close('J')),
    ]


def section_rtb(rtb, settings, tables):
    """Per-call times against the Robotics Toolbox DH models."""
    for name in ('Puma560', 'Stanford'):
        robot, model, repairs = load_rtb_robot(rtb, name)
        notes = [f'{robot.name}, {model.dof} DoF ({robot.structure}), standard DH rebuilt as '
                 'URDF by benchmarks/dh_to_urdf.py; toolbox Jm, G, B, Tc set to 0; '
                 'Jacobian of tool0 = jacob0 frame']
        notes += [f'inertia repair: {r}' for r in repairs]
        print_table(compare_and_time(f'{name} vs Robotics Toolbox {rtb.__version__}',
                                     rtb_pairs(robot, model), settings, notes), tables)


# -- identification ------------------------------------------------------------------------------
def section_identification(pin, settings, tables):
    """Time the joint-torque regressor per call and on 100,000 states against Pinocchio."""
    table = Table(f'Joint-torque regressor vs Pinocchio {pin.__version__} '
                  '(computeJointTorqueRegressor)',
                  ['robot', 'ours [us/call]', 'theirs [us/call]', 'ours/theirs',
                   'max rel. diff'],
                  ['one random state per robot; Y of shape (n, 10 n), results checked equal '
                   '(1e-9)'])
    robots = load_pinocchio_robots(pin)
    for robot in robots:
        m, pm, pd = robot.ours, robot.pmodel, robot.pdata
        q, qd, qdd, _ = random_state(m, 11)
        pq, pv, pa = (robot.to_pin(x) for x in (q, qd, qdd))
        err = check_close(f'{robot.label} regressor', dr.regressor(m, q, qd, qdd),
                          pin.computeJointTorqueRegressor(pm, pd, pq, pv, pa))
        ours, theirs = time_pair(lambda: dr.regressor(m, q, qd, qdd),
                                 lambda: pin.computeJointTorqueRegressor(pm, pd, pq, pv, pa),
                                 settings)
        table.add(robot.label, fmt_us(ours), fmt_us(theirs), fmt_ratio(ours / theirs),
                  f'{err:.0e}')
    print_table(table, tables)
    robot = robots[1]
    m, pm, pd = robot.ours, robot.pmodel, robot.pdata
    N = settings.regressor_states
    Q, QD, QDD, _ = random_batch(m, N, 12)
    PQ, PV, PA = (robot.to_pin(x) for x in (Q, QD, QDD))
    table = batch_table(f'Regressor on {N:,} random states, {robot.label}',
                        f'ours: one call with q of shape ({N}, {m.nq}), result ({N}, 7, 70); '
                        'theirs: a Python loop of single calls (results collected into an '
                        'array); checked equal (1e-9)')
    batch_row(table, 'regressor', 'computeJointTorqueRegressor', N,
              lambda: dr.regressor(m, Q, QD, QDD),
              lambda: np.array([pin.computeJointTorqueRegressor(pm, pd, *r).copy()
                                for r in zip(PQ, PV, PA)]),
              N, lambda x, y: check_close('regressor batch', x, y), settings)
    print_table(table, tables)


def section_payload(settings, tables):
    """Time the payload window: appending 30 s of 1 kHz joint states, then the estimate."""
    from denoc_ros.identification.payload import PayloadWindow
    model = dr.load_urdf(str(REPO / 'urdf' / 'ur5e.urdf'))
    truth = dr.attach_payload(model, 'tool0', 1.5, [0.02, -0.03, 0.08],
                              np.diag([0.006, 0.005, 0.003]))
    seconds = 3.0 if settings.quick else 30.0
    t = np.arange(0.0, seconds, 1e-3)
    w = 2.0 * np.pi * np.array([0.0, 0.0, 0.0, 0.31, 0.37, 0.43])
    q = 0.8 * np.sin(np.outer(t, w)) + [0.3, -1.3, 1.4, -1.2, -1.4, 0.3]
    qd = 0.8 * w * np.cos(np.outer(t, w))
    qdd = -0.8 * w ** 2 * np.sin(np.outer(t, w))
    tau = dr.inverse_dynamics(truth, q, qd, qdd)
    tau += np.random.default_rng(0).normal(0.0, 0.05, tau.shape)
    stamps = (10 ** 9 + np.round(t * 1e9)).astype(np.int64)

    def fill():
        window = PayloadWindow(model.dof, window=seconds)
        for k in range(t.size):
            window.append(stamps[k], q[k], qd[k], tau[k])
        return window
    window = fill()
    est = window.estimate(model, 'tool0')
    if abs(est.mass - 1.5) > 0.015:
        raise MismatchError(f'payload estimate {est.mass:.4f} kg, expected 1.5 kg')
    repeats = 1 if settings.quick else 3
    append = time_once(fill, repeats)[0] / t.size
    estimate = time_once(lambda: window.estimate(model, 'tool0'), repeats + 2)[0]
    table = Table('Payload estimate (UR5e, tool0)',
                  ['step', 'time', 'per'],
                  [f'{t.size:,} joint states at 1 kHz ({seconds:g} s of header stamps); '
                   f'estimate {est.mass:.4f} kg (true 1.5), inertia identified: '
                   f'{est.inertia_identified}; median of {repeats} (append) and '
                   f'{repeats + 2} (estimate) runs'])
    table.add('PayloadWindow.append', fmt_ms(append * t.size), fmt_us(append) + '/message')
    table.add('PayloadWindow.estimate (whole window)', fmt_ms(estimate),
              'target < 1000 ms' if not settings.quick else '')
    print_table(table, tables)


# -- batches -------------------------------------------------------------------------------------
def random_batch(model, count, seed):
    """Return (Q, QD, QDD, TAU), each (count, n)."""
    rng = np.random.default_rng(seed)
    n = model.dof
    return (rng.uniform(-1.0, 1.0, (count, n)), rng.uniform(-1.0, 1.0, (count, n)),
            rng.uniform(-1.0, 1.0, (count, n)), rng.uniform(-10.0, 10.0, (count, n)))


def batch_table(title, note):
    """Return an empty table of batch timings (rows from :func:`batch_row`)."""
    return Table(title, ['function', 'their call', 'ours [ms]', 'theirs [ms]', 'ours/theirs',
                         'ours [states/s]'], [note], left=2)


def batch_row(table, function, their_name, states, ours, theirs, their_states, check,
              settings):
    """Time ours on ``states`` in one call and theirs on ``their_states`` (scaled); add a row."""
    t_ours, r_ours = time_once(ours, settings.batch_repeats, warmup=True)
    t_theirs, r_theirs = time_once(theirs, settings.batch_repeats)
    check(r_ours[:their_states], r_theirs)
    scaled = t_theirs * states / their_states
    how = f'{their_states} states' + ('' if their_states == states
                                      else f', x{states / their_states:g}')
    table.add(function, f'{their_name} ({how})', fmt_ms(t_ours), fmt_ms(scaled),
              fmt_ratio(t_ours / scaled), f'{states / t_ours:,.0f}')


def pinocchio_batch_table(pin, label, m, pm, pd, ours_args, their_args, from_pin,
                          from_pin_matrices, settings, tables):
    """Print the batch table of ours (one call) against a loop of Pinocchio calls."""
    N = settings.batch_states
    Q, V, A, TAU = ours_args
    PQ, PV, PA, PT = their_args

    def loop(fn, *arrays):
        return lambda: np.array([fn(pm, pd, *row) for row in zip(*arrays)])

    def check_vec(what):
        return lambda x, y: check_close(what, x, from_pin(y))

    def check_mat(what, sym=False):
        def check(x, y):
            if sym:
                y = np.triu(y) + np.swapaxes(np.triu(y, 1), -1, -2)
            return check_close(what, x, from_pin_matrices(y))
        return check
    table = batch_table(f'Batch: {N:,} random states, {label} vs Pinocchio {pin.__version__}',
                        f'ours: one call with q of shape (N, {m.nq}); theirs: a Python loop '
                        'of N single calls (results collected into an array); results '
                        'checked equal (1e-9)')
    rows = [
        ('inverse dynamics', 'rnea', lambda: dr.inverse_dynamics(m, Q, V, A),
         loop(pin.rnea, PQ, PV, PA), check_vec('tau')),
        ('mass matrix', 'crba', lambda: dr.mass_matrix(m, Q), loop(pin.crba, PQ),
         check_mat('M', sym=True)),
        ('Coriolis matrix', 'computeCoriolisMatrix', lambda: dr.coriolis_matrix(m, Q, V),
         loop(pin.computeCoriolisMatrix, PQ, PV), check_mat('C')),
        ('gravity', 'computeGeneralizedGravity', lambda: dr.gravity_torques(m, Q),
         loop(pin.computeGeneralizedGravity, PQ), check_vec('g')),
        ('forward dynamics', 'aba', lambda: dr.forward_dynamics(m, Q, V, TAU),
         loop(pin.aba, PQ, PV, PT), check_vec('qdd')),
    ]
    for function, name, ours, theirs, check in rows:
        batch_row(table, function, name, N, ours, theirs, N, check, settings)
    print_table(table, tables)


def section_batch(pin, rtb, settings, tables):
    """Throughput: many states in one call of ours against loops of single calls."""
    N = settings.batch_states
    if pin is not None:
        robot = load_pinocchio_robots(pin)[1]
        m, pm, pd = robot.ours, robot.pmodel, robot.pdata
        Q, QD, QDD, TAU = random_batch(m, N, 3)
        PQ, PV, PA, PT = (robot.to_pin(x) for x in (Q, QD, QDD, TAU))
        pinocchio_batch_table(pin, robot.label, m, pm, pd, (Q, QD, QDD, TAU), (PQ, PV, PA, PT),
                              robot.from_pin,
                              lambda b: np.array([robot.from_pin_matrix(x) for x in b]),
                              settings, tables)
    if rtb is not None:
        robot, model, _ = load_rtb_robot(rtb, 'Puma560')
        Q, QD, QDD, TAU = random_batch(model, N, 4)
        few = max(N // 10, 1)
        fewer = max(N // 50, 1)

        def close(what):
            return lambda a, b: check_close(what, a, b)

        def loop(fn, count, *arrays):
            return lambda: np.array([fn(*(a[i] for a in arrays)) for i in range(count)])
        table = batch_table(f'Batch: {N:,} random states, Puma560 vs Robotics Toolbox '
                            f'{rtb.__version__}',
                            'rne takes the whole (N, 6) trajectory in one call (its C '
                            'extension loops); inertia, gravload and accel are Python loops '
                            'of single calls on fewer states, scaled to N; results checked '
                            'equal (1e-9)')
        batch_row(table, 'inverse dynamics', 'rne', N,
                  lambda: dr.inverse_dynamics(model, Q, QD, QDD),
                  lambda: robot.rne(Q, QD, QDD), N, close('tau'), settings)
        batch_row(table, 'mass matrix', 'inertia', N, lambda: dr.mass_matrix(model, Q),
                  loop(robot.inertia, few, Q), few, close('M'), settings)
        batch_row(table, 'gravity', 'gravload', N, lambda: dr.gravity_torques(model, Q),
                  loop(robot.gravload, few, Q), few, close('g'), settings)
        batch_row(table, 'forward dynamics', 'accel', N,
                  lambda: dr.forward_dynamics(model, Q, QD, TAU),
                  loop(robot.accel, fewer, Q, QD, TAU), fewer, close('qdd'), settings)
        print_table(table, tables)


# -- floating base -------------------------------------------------------------------------------
FLOATING_URDF = ('solo_description', 'robots', 'solo12.urdf')
FLOATING_FRAME = 'FL_FOOT'


class FloatingRobot:
    """A URDF on a free flyer in both libraries, with the index maps between their q and v."""

    def __init__(self, pin, label, path, frame):
        self.pin, self.label, self.path, self.frame = pin, label, path, frame
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')       # mimic joints, if any
            self.ours = dr.load_urdf(str(path), floating_base=True)
        self.pmodel = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        self.pdata = self.pmodel.createData()
        m, pm = self.ours, self.pmodel
        if (pm.nq, pm.nv) != (m.nq, m.nv):
            raise MismatchError(f'{label}: Pinocchio has nq={pm.nq}, nv={pm.nv}; denoc_ros '
                                f'nq={m.nq}, nv={m.nv}')
        ids = []
        for name in m.joint_names:
            if not pm.existJointName(name):
                raise MismatchError(f'{label}: joint {name!r} is not in the Pinocchio model')
            ids.append(pm.getJointId(name))
        # iq[k] / iv[k] = Pinocchio's index of our k-th configuration / velocity entry
        self.iq = np.r_[0:7, [pm.joints[j].idx_q for j in ids]].astype(int)
        self.iv = np.r_[0:6, [pm.joints[j].idx_v for j in ids]].astype(int)
        self.frame_id = pm.getFrameId(frame)
        if self.frame_id >= len(pm.frames):
            raise MismatchError(f'{label}: no frame {frame!r} in the Pinocchio model')

    def q_to_pin(self, q):
        out = np.empty_like(q)
        out[..., self.iq] = q
        return out

    def v_to_pin(self, v):
        out = np.empty_like(v)
        out[..., self.iv] = v
        return out

    def from_pin(self, v):
        return np.asarray(v)[..., self.iv]

    def from_pin_matrix(self, m):
        return np.asarray(m)[..., self.iv[:, None], self.iv]

    def from_pin_columns(self, J):
        return np.asarray(J)[..., self.iv]


def random_floating_batch(model, count, seed):
    """Return (Q, V, A, TAU): (count, nq) with unit quaternions, the others (count, nv)."""
    rng = np.random.default_rng(seed)
    quat = rng.normal(size=(count, 4))
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    Q = np.concatenate((rng.uniform(-1.0, 1.0, (count, 3)), quat,
                        rng.uniform(-1.0, 1.0, (count, model.dof))), axis=1)
    return (Q, rng.uniform(-1.0, 1.0, (count, model.nv)),
            rng.uniform(-1.0, 1.0, (count, model.nv)), rng.uniform(-10.0, 10.0, (count, model.nv)))


def floating_pairs(robot):
    """Return [(function, their call, ours(), theirs(), check)] at one random state."""
    pin, pm, pd, m = robot.pin, robot.pmodel, robot.pdata, robot.ours
    q, v, a, tau = (x[0] for x in random_floating_batch(m, 1, 5))
    pq, pv, pa, pt = robot.q_to_pin(q), robot.v_to_pin(v), robot.v_to_pin(a), robot.v_to_pin(tau)
    frame, fid = robot.frame, robot.frame_id
    vec, mat = robot.from_pin, robot.from_pin_matrix

    def sym(M):
        return np.triu(M) + np.triu(M, 1).T

    return [
        ('inverse dynamics', 'rnea', lambda: dr.inverse_dynamics(m, q, v, a),
         lambda: pin.rnea(pm, pd, pq, pv, pa), lambda x, y: check_close('tau', x, vec(y))),
        ('mass matrix', 'crba', lambda: dr.mass_matrix(m, q), lambda: pin.crba(pm, pd, pq),
         lambda x, y: check_close('M', x, mat(sym(y)))),
        ('Coriolis matrix', 'computeCoriolisMatrix', lambda: dr.coriolis_matrix(m, q, v),
         lambda: pin.computeCoriolisMatrix(pm, pd, pq, pv),
         lambda x, y: check_close('C', x, mat(y))),
        ('gravity', 'computeGeneralizedGravity', lambda: dr.gravity_torques(m, q),
         lambda: pin.computeGeneralizedGravity(pm, pd, pq),
         lambda x, y: check_close('g', x, vec(y))),
        ('forward dynamics', 'aba', lambda: dr.forward_dynamics(m, q, v, tau),
         lambda: pin.aba(pm, pd, pq, pv, pt), lambda x, y: check_close('qdd', x, vec(y))),
        ('Jacobian', 'computeFrameJacobian', lambda: dr.jacobian(m, q, frame),
         lambda: pin.computeFrameJacobian(pm, pd, pq, fid, pin.LOCAL_WORLD_ALIGNED),
         lambda x, y: check_close('J', x, robot.from_pin_columns(y))),
    ]


def section_floating(pin, settings, tables):
    """Solo-12 on a free flyer: per-call times and a batch against Pinocchio."""
    base = example_robot_data_dir()
    if base is None:
        raise SystemExit('example-robot-data is not installed (pip install example-robot-data)')
    path = base.joinpath(*FLOATING_URDF)
    robot = FloatingRobot(pin, 'solo12 (example-robot-data, free flyer)', path, FLOATING_FRAME)
    m, pm, pd = robot.ours, robot.pmodel, robot.pdata
    notes = [f'{m.dof} joints on a free flyer: nq = {m.nq}, nv = {m.nv}, {m.nbodies} bodies; '
             'q = [base position, quaternion x y z w, joints], v = [base linear, base angular '
             '(base frame), joint rates], the conventions of Pinocchio; random unit quaternion',
             f'Jacobian: frame {robot.frame}, LOCAL_WORLD_ALIGNED; crba fills the upper '
             'triangle only (as Pinocchio returns it)']
    print_table(compare_and_time(f'{robot.label} vs Pinocchio {pin.__version__}',
                                 floating_pairs(robot), settings, notes), tables)

    N = settings.batch_states
    Q, V, A, TAU = random_floating_batch(m, N, 6)
    PQ, PV, PA, PT = robot.q_to_pin(Q), robot.v_to_pin(V), robot.v_to_pin(A), robot.v_to_pin(TAU)

    pinocchio_batch_table(pin, robot.label, m, pm, pd, (Q, V, A, TAU), (PQ, PV, PA, PT),
                          robot.from_pin, robot.from_pin_matrix, settings, tables)


# -- start-up ------------------------------------------------------------------------------------
STARTUP_CHILD = r"""
import sys, time
t0 = time.perf_counter()
import json
lib, path, tip = sys.argv[1:4]
out = {}
if lib == 'denoc_ros':
    import numpy as np
    import denoc_ros as dr
    out['import'] = time.perf_counter() - t0
    t = time.perf_counter()
    m = dr.load_urdf(path)
    out['load_urdf'] = time.perf_counter() - t
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-1.0, 1.0, m.dof) for _ in range(3))
    calls = [('inverse_dynamics', lambda: dr.inverse_dynamics(m, q, qd, qdd)),
             ('mass_matrix', lambda: dr.mass_matrix(m, q)),
             ('coriolis_matrix', lambda: dr.coriolis_matrix(m, q, qd)),
             ('gravity_torques', lambda: dr.gravity_torques(m, q)),
             ('forward_dynamics', lambda: dr.forward_dynamics(m, q, qd, qdd)),
             ('jacobian', lambda: dr.jacobian(m, q, tip)),
             ('cartesian_dynamics', lambda: dr.cartesian_dynamics(m, q, qd, tip))]
    for name, fn in calls:
        t = time.perf_counter()
        fn()
        out['first ' + name] = time.perf_counter() - t
    out['total'] = time.perf_counter() - t0
    t = time.perf_counter()
    calls[0][1]()
    out['second inverse_dynamics'] = time.perf_counter() - t
    out['numba loaded'] = 'numba' in sys.modules
else:
    import numpy as np
    import pinocchio as pin
    out['import'] = time.perf_counter() - t0
    t = time.perf_counter()
    pm = pin.buildModelFromUrdf(path)
    pd = pm.createData()
    out['load_urdf'] = time.perf_counter() - t
    q = pin.neutral(pm)
    t = time.perf_counter()
    pin.rnea(pm, pd, q, q * 0, q * 0)
    out['first inverse_dynamics'] = time.perf_counter() - t
    out['total'] = time.perf_counter() - t0
print('STARTUP ' + json.dumps(out))
"""


def numba_cache_files(root):
    """Return numba's cache files (index .nbi, data .nbc) under a folder."""
    return [p for pattern in ('*.nbi', '*.nbc') for p in pathlib.Path(root).rglob(pattern)]


def run_startup_child(lib, path, tip, env):
    """Run the start-up probe in a fresh interpreter; return (its timings, parent wall time)."""
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, '-c', STARTUP_CHILD, lib, str(path), tip],
                          env=env, cwd=str(REPO), capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - start
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith('STARTUP ')]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f'start-up probe ({lib}) failed with status {proc.returncode}:\n'
                           f'{proc.stderr[-2000:]}')
    return json.loads(lines[-1][len('STARTUP '):]), wall


def section_startup(args, tables):
    """Cold and warm first-call times in fresh subprocesses."""
    path, tip = REPO / 'urdf' / 'panda.urdf', 'panda_link8'
    package_dir = pathlib.Path(dr.__file__).resolve().parent
    env = dict(os.environ)
    cold = None
    with contextlib.ExitStack() as stack:
        if args.quick:
            how = ('--quick: cold run skipped (a cold numba compile takes tens of seconds); '
                   'warm: the cache numba keeps in denoc_ros/ (compiled now if stale)')
        elif args.clear_numba_cache:
            removed = numba_cache_files(package_dir)
            for p in removed:
                p.unlink(missing_ok=True)
            how = (f'cold: {len(removed)} numba cache files deleted under {package_dir.name}/ '
                   'first; warm: the cache the cold run wrote')
            cache_root = package_dir
        else:
            cache_root = stack.enter_context(tempfile.TemporaryDirectory(prefix='numba_cache_'))
            env['NUMBA_CACHE_DIR'] = cache_root
            how = 'cold: new empty NUMBA_CACHE_DIR; warm: the same directory after the cold run'
        if not args.quick:
            cold, cold_wall = run_startup_child('denoc_ros', path, tip, env)
            how += f'; numba cache files after the cold run: {len(numba_cache_files(cache_root))}'
        warm, warm_wall = run_startup_child('denoc_ros', path, tip, env)
    pin_times, pin_wall = run_startup_child('pinocchio', path, tip, dict(os.environ))
    table = Table('Start-up: fresh subprocess, bundled panda (7 DoF)',
                  ['step', 'ours cold [ms]', 'ours warm [ms]', 'Pinocchio [ms]'],
                  [how + f'; numba imported by denoc_ros: '
                   f'{"yes" if warm.get("numba loaded") else "no"}',
                   'times from time.perf_counter inside the child; "total" = child start to '
                   'the end of the last first call; "process wall" (parent side) adds '
                   'interpreter start-up and exit',
                   'Pinocchio: import, buildModelFromUrdf + createData, first rnea'])
    keys = ['import', 'load_urdf'] + [k for k in warm if k.startswith('first ')] + [
        'total', 'second inverse_dynamics']
    for key in keys:
        table.add(key, fmt_ms(cold[key]) if cold else 'skipped', fmt_ms(warm[key]),
                  fmt_ms(pin_times[key]) if key in pin_times else '')
    table.add('process wall', fmt_ms(cold_wall) if cold else 'skipped', fmt_ms(warm_wall),
              fmt_ms(pin_wall))
    print_table(table, tables)


# -- main ----------------------------------------------------------------------------------------
def source_fingerprint():
    """Return a short hash of denoc_ros' Python sources (to notice edits during a run)."""
    package_dir = pathlib.Path(dr.__file__).resolve().parent
    digest = hashlib.sha1()
    for path in sorted(package_dir.rglob('*.py')):
        digest.update(str(path.relative_to(package_dir)).encode())
        with contextlib.suppress(OSError):
            digest.update(path.read_bytes())
    return digest.hexdigest()[:10]


def machine_description(fingerprint):
    """Return a few lines naming the machine, the software and the source revision."""
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        for line in subprocess.run(['lscpu'], capture_output=True, text=True,
                                   timeout=10).stdout.splitlines():
            if line.startswith('Model name:'):
                cpu = line.split(':', 1)[1].strip()
                break
    revision = 'unknown'
    if shutil.which('git'):
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            revision = subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], cwd=str(REPO),
                                      capture_output=True, text=True, timeout=10).stdout.strip()
            dirty = subprocess.run(['git', 'status', '--porcelain', '--', 'denoc_ros'],
                                   cwd=str(REPO), capture_output=True, text=True,
                                   timeout=10).stdout.strip()
            if dirty:
                revision += ' + uncommitted changes in denoc_ros/'
    versions = [f'Python {platform.python_version()}', f'NumPy {np.__version__}',
                f'denoc_ros {dr.__version__} ({revision}; sources {fingerprint})']
    numba = sys.modules.get('numba')
    versions.append(f'numba {numba.__version__}' if numba else 'numba not imported by denoc_ros')
    return [f'machine: {cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}',
            'software: ' + ', '.join(versions),
            'date: ' + datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')
            + ', load average at start: ' + ' '.join(f'{x:.2f}' for x in os.getloadavg())
            + ' (other processes share the CPUs)']


def parse_args(argv=None):
    """Return the command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--quick', action='store_true',
                        help='tiny repeat counts and batches (smoke test; numbers meaningless)')
    parser.add_argument('--only', nargs='+', choices=SECTIONS, metavar='SECTION',
                        help=f'run only these sections ({", ".join(SECTIONS)})')
    parser.add_argument('--output', type=pathlib.Path,
                        help='also write the tables as markdown to this file')
    parser.add_argument('--clear-numba-cache', action='store_true',
                        help='cold start-up: delete __pycache__/*.nbi|*.nbc under denoc_ros/ '
                             'instead of using an empty private NUMBA_CACHE_DIR')
    return parser.parse_args(argv)


def main(argv=None):
    """Run the selected sections; return the exit status."""
    args = parse_args(argv)
    sections = args.only or SECTIONS
    settings = Settings(args.quick)
    fingerprint = source_fingerprint()
    header = machine_description(fingerprint)
    if args.quick:
        header.append('--quick: tiny repeat counts, the numbers are not meaningful')
    print('\n'.join(header), end='\n\n', flush=True)
    pin = rtb = None
    if {'pinocchio', 'batch', 'floating', 'identification'} & set(sections):
        import pinocchio as pin
    if {'rtb', 'batch'} & set(sections):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            import roboticstoolbox as rtb
    tables = []
    try:
        if 'pinocchio' in sections:
            section_pinocchio(pin, settings, tables)
        if 'rtb' in sections:
            section_rtb(rtb, settings, tables)
        if 'batch' in sections:
            section_batch(pin, rtb, settings, tables)
        if 'floating' in sections:
            section_floating(pin, settings, tables)
        if 'identification' in sections:
            section_identification(pin, settings, tables)
        if 'payload' in sections:
            section_payload(settings, tables)
        if 'startup' in sections:
            section_startup(args, tables)
    except MismatchError as err:
        print(f'MISMATCH, nothing timed for it: {err}', file=sys.stderr)
        return 1
    finally:
        end_fingerprint = source_fingerprint()
        if end_fingerprint != fingerprint:
            warning = (f'WARNING: denoc_ros sources changed during this run (fingerprint '
                       f'{fingerprint} at start, {end_fingerprint} at the end): this process '
                       'timed the sources it imported at start, subprocesses (start-up) '
                       'may have seen newer ones')
            print(warning, flush=True)
            header.append(warning)
        if args.output is not None and tables:
            text = '# denoc_ros benchmarks\n\n' + '\n'.join(f'- {h}' for h in header) + '\n\n'
            text += '\n\n'.join(t.markdown() for t in tables) + '\n'
            args.output.write_text(text)
    return 0


if __name__ == '__main__':
    sys.exit(main())
