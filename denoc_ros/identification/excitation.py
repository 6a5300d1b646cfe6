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
Excitation trajectories for identification: the design of a periodic finite Fourier series.

The series (:mod:`.fourier`, Swevers, Ganseman, Tukel, De Schutter & Van Brussel,
"Optimal robot excitation and identification", IEEE Trans. Robotics and Automation
13(5), 1997) has period ``T``, ``w_f = 2 pi / T`` and ``K`` harmonics. This module holds
the limits a design enforces (:func:`excitation_limits`), the result
(:class:`ExcitationResult`) and the design (:func:`design_excitation`: SLSQP on
:mod:`.excitation_problem`'s problem, the payload-link criterion included). The series
and the file writers are re-exported from :mod:`.fourier` and :mod:`.trajectory_files`.

Design (:func:`design_excitation`), the decision variables being the ``2 n K`` coefficients
``a, b`` and the ``n`` offsets ``q0``:

* Objective: the condition number of the base regressor ``W_b`` (the independent columns,
  :mod:`.base`, of the full regressor ``[Y | joint columns]``, :mod:`.parameters`) stacked over
  the ``N`` samples ``t_i = i T / N`` of one period, a ``(N n) x r`` matrix, after scaling each
  column to unit Euclidean norm::

      kappa_s = sigma_max(W_b D^-1) / sigma_min(W_b D^-1),   D = diag(|W_b[:, k]|)

  minimised as ``log kappa_s`` (Gautier & Khalil, "Exciting trajectories for the
  identification of base inertial parameters of robots", IJRR 11(4), 1992; Swevers et al.
  1997 use ``kappa`` unscaled). The column scaling makes the criterion independent of the
  parameters' units (kg against kg m^2) and, by van der Sluis' theorem (Numer. Math. 14, 1969),
  within a factor ``sqrt(r)`` of the smallest condition number any column scaling gives; the
  unscaled ``sigma_max(W_b) / sigma_min(W_b) = sqrt(cond(W_b^T W_b))`` (what the
  identification report shows) is reported too.
* Constraints, on the same ``N`` samples, with a safety factor ``s`` (default 0.8):
  ``|q_j - m_j| <= s h_j`` (``m_j``, ``h_j`` the middle and half width of the URDF's position
  limits; +-pi rad or +-0.5 m about zero where a joint has none), ``|qd_j| <= s qd_max_j`` and
  ``|tau_j| <= s tau_max_j``, ``tau`` the rigid-body inverse dynamics (no friction) with the
  URDF's inertials; velocity and effort constraints only where the URDF gives finite limits.
  Each is written as ``1 - (x / L)^2 >= 0``.
* Start at rest: ``qd(0) = 0`` and ``qdd(0) = 0`` (``sum_k a_jk = 0``,
  ``sum_k k b_jk = 0``), so that a controller starts from standing still and, the series
  being periodic, every period ends at rest where it began. Optionally ``q(0) = start``
  (``q0_j - sum_k b_jk / (w_f k) = start_j``), a given configuration the arm can be brought
  to; otherwise ``q(0)`` is whatever the optimum makes it. The arm must be at ``q(0)`` before
  the trajectory is played. These equalities are eliminated: the variables are coordinates
  in their null space (per joint ``2 K + 1 - 3`` with a start, ``2 K + 1 - 2`` without).
* Optimiser: SciPy's SLSQP (Kraft 1988) with exact gradients: the regressor's derivatives
  with respect to each joint's position (central differences, step ``6e-6``), velocity
  (central differences with unit step, exact: the rigid-body regressor is quadratic in
  ``qd``) and acceleration (a unit forward difference, exact: it is linear in ``qdd``), the
  joint columns' derivatives in closed form; the singular values' derivatives
  ``d sigma_i = u_i^T d(W_b D^-1) v_i``. The Coulomb columns are smoothed with ``v_s = 0.05``
  rad/s during the design (their ``tanh(qd / 0.001)`` is a step whose derivative would only
  add noise); the reported condition numbers use the identification's own columns.

  The constraints at ``t = 0`` are left out where they are constant (all of them with a
  given start, the velocities always): a constraint without gradient, active when the start
  is on a limit, can make SLSQP's linearised subproblem infeasible. The result is the best
  feasible point SLSQP evaluated (it may end a hair outside), the limits then checked on a
  grid ten times finer with :func:`denoc_ros.inverse_dynamics`. The small dense algebra runs
  with BLAS on one thread (``threadpoolctl.threadpool_limits``): on matrices this small (a
  57 x 57 eigenproblem, SLSQP's subproblems) OpenBLAS's threads only wait for each other, and
  on a busy 2-core machine the design ran 7 times slower threaded.

The optimiser starts from a random trajectory (normal coefficients, a joint starting near a
limit moving away from it only), scaled to half the room the limits leave: the baseline of
the result's ``initial_condition``. Measured on this project's Panda URDF (7 joints, 57 base
parameters with viscous and Coulomb friction; 5 harmonics, 20 s, 150 samples, start at the
URDF zero moved into the limits, 100 iterations, 4.5 s on 2 cores): column-scaled condition
number 18 at the random start, 4.9 designed; unscaled 513 and 130.
"""

from dataclasses import dataclass, field
import math
import time as _time
from typing import Dict, Tuple

import numpy as np
import scipy.optimize
from threadpoolctl import threadpool_limits

from .base import base_parameters, BaseParameters
from .excitation_problem import _Design
from .fourier import fourier_basis, fourier_trajectory, period_samples
from .parameters import ParameterLayout
from .trajectory_files import write_trajectory_csv, write_trajectory_yaml
from ..dynamics import inverse_dynamics
from ..errors import InputError
from ..model import PRISMATIC

__all__ = ['fourier_trajectory', 'fourier_basis', 'design_excitation', 'ExcitationResult',
           'ExcitationLimits', 'excitation_limits', 'write_trajectory_yaml',
           'write_trajectory_csv', 'period_samples', 'DEFAULT_SAFETY']

DEFAULT_SAFETY = 0.8
"""Fraction of each URDF limit the designed trajectory may use."""

DEFAULT_HALF_RANGE = {'revolute': math.pi, 'prismatic': 0.5}
"""Half the position range [rad, m] about zero of a joint without position limits."""

CHECK_REFINEMENT = 10
"""The limits are checked afterwards on a grid this many times finer than the design's."""


@dataclass(frozen=True)
class ExcitationLimits:
    """
    The limits a design enforces (the URDF's times the safety factor), each ``(n,)``.

    ``lower``/``upper`` positions (URDF-less joints: a default range about zero), ``velocity``
    and ``effort`` magnitudes (``inf``: not constrained; a URDF limit of 0 counts as none).
    ``middle``/``half`` are the URDF range's (or default range's) middle and half width.
    """

    lower: np.ndarray
    upper: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    middle: np.ndarray
    half: np.ndarray
    safety: float


def excitation_limits(model, safety=DEFAULT_SAFETY):
    """Return the :class:`ExcitationLimits` of ``model`` with the safety factor ``safety``."""
    safety = float(safety)
    if not (0.0 < safety <= 1.0):
        raise InputError(f'safety factor must be in (0, 1], got {safety!r}')
    n = model.dof
    lower = np.asarray(model.lower, dtype=float)[:n]
    upper = np.asarray(model.upper, dtype=float)[:n]
    kinds = np.asarray(model.joint_type)[-n:] if n else np.zeros(0, dtype=int)
    default = np.array([DEFAULT_HALF_RANGE['prismatic' if k == PRISMATIC else 'revolute']
                        for k in kinds])
    bounded = np.isfinite(lower) & np.isfinite(upper)
    lo, hi = np.where(bounded, lower, -default), np.where(bounded, upper, default)
    middle, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
    for j in np.flatnonzero(half <= 0.0):
        raise InputError(f'joint {model.joint_names[j]!r}: its position limits '
                         f'[{lower[j]:g}, {upper[j]:g}] leave it no motion')
    # A velocity or effort limit of 0 is a URDF's way of giving none.
    velocity = np.asarray(model.velocity_limit, dtype=float)[:n]
    effort = np.asarray(model.effort_limit, dtype=float)[:n]
    velocity = safety * np.where(velocity > 0.0, velocity, np.inf)
    effort = safety * np.where(effort > 0.0, effort, np.inf)
    return ExcitationLimits(middle - safety * half, middle + safety * half, velocity, effort,
                            middle, half, safety)


@dataclass(frozen=True)
class ExcitationResult:
    """
    A designed excitation trajectory, its conditioning and how much of each limit it uses.

    ``coefficients``: ``(a, b)``, each ``(n, K)``, and ``q0`` (n,): the series of
    :func:`fourier_trajectory` with ``base_frequency = 2 pi / duration``. ``t``: the design
    grid (N,), one period. ``condition``: the objective, the column-scaled condition number of
    the base regressor on that grid (module docstring), ``condition_unscaled``:
    ``sqrt(cond(W_b^T W_b))`` on the same grid; ``initial_*``: the same of the random start.
    ``usage``: per quantity (``position``, ``velocity``, ``effort``) the fraction (n,) of each
    URDF limit (position: of the half range about its middle) used at most, checked on a grid
    ten times finer with :func:`denoc_ros.inverse_dynamics`; ``nan`` where there is no limit.
    ``margins``: ``1 - usage``. ``start``: ``q(0)``, where the arm must be before the
    trajectory starts (at rest).
    """

    joint_names: Tuple[str, ...]
    duration: float
    harmonics: int
    coefficients: Tuple[np.ndarray, np.ndarray]
    q0: np.ndarray
    t: np.ndarray
    condition: float
    condition_unscaled: float
    initial_condition: float
    initial_condition_unscaled: float
    limits: ExcitationLimits
    usage: Dict[str, np.ndarray]
    margins: Dict[str, np.ndarray]
    start: np.ndarray
    base: BaseParameters = field(repr=False)
    layout: ParameterLayout = field(repr=False)
    iterations: int = 0
    evaluations: int = 0
    elapsed: float = 0.0
    message: str = ''

    @property
    def base_frequency(self):
        """Return ``w_f = 2 pi / duration`` [rad/s]."""
        return 2.0 * math.pi / self.duration

    def trajectory(self, t):
        """Return ``(q, qd, qdd)`` at times ``t``, each ``(len(t), n)``."""
        return fourier_trajectory(self.coefficients, self.base_frequency, t, self.q0)

    def sampled(self, rate=100.0, endpoint=True):
        """Return ``(t, q, qd, qdd)`` over one period at ``rate`` [Hz] (:func:`period_samples`)."""
        t = period_samples(self.duration, rate, endpoint)
        return (t,) + self.trajectory(t)


def _limit_usage(model, result_traj, limits, t):
    """Return per quantity the fraction (n,) of each URDF limit used at most on times ``t``."""
    q, qd, qdd = result_traj(t)
    tau = inverse_dynamics(model, q, qd, qdd)
    with np.errstate(divide='ignore', invalid='ignore'):
        usage = {'position': np.max(np.abs(q - limits.middle), axis=0) / limits.half,
                 'velocity': np.max(np.abs(qd), axis=0) * limits.safety / limits.velocity,
                 'effort': np.max(np.abs(tau), axis=0) * limits.safety / limits.effort}
    bounded = np.isfinite(model.lower) & np.isfinite(model.upper)
    usage['position'] = np.where(bounded, usage['position'], np.nan)
    for name in ('velocity', 'effort'):
        usage[name] = np.where(np.isfinite(getattr(limits, name)), usage[name], np.nan)
    return usage


def payload_joints(model, link, count=3):
    """Return the indices of the ``count`` joints nearest the body carrying ``link`` (wrist)."""
    body = model.frame(link).body
    chain = []
    while body >= 0:
        chain.append(body)
        body = int(model.parent[body])
    joints = [int(np.flatnonzero(model.joint_bodies == b)[0]) for b in chain
              if b in model.joint_bodies]
    return sorted(joints[:count])


def design_excitation(model, duration=20.0, harmonics=5, samples=None,
                      joint_terms=('viscous', 'coulomb'), seed=0, max_iterations=100,
                      progress=None, safety=DEFAULT_SAFETY, start=None, starts=1,
                      tolerance=1e-5, payload_link=None, moving=None):
    """
    Return an :class:`ExcitationResult`: the best conditioned periodic excitation within limits.

    The method (objective, constraints, the start at rest) is the module docstring's.
    ``model``: a fixed-base model with the URDF's limits; ``duration``: the period ``T`` [s];
    ``harmonics``: ``K`` (at least 2: starting at rest takes two equalities per joint);
    ``samples``: the design grid over one period (default ``max(100, 30 K)``);
    ``joint_terms``: the joint columns identified besides the inertial parameters
    (:data:`.parameters.JOINT_TERMS`); ``seed``: of the random start(s); ``max_iterations``:
    SLSQP iterations per start; ``progress``: called ``progress(iteration, condition)`` after
    each iteration (the column-scaled condition number); ``safety``: the fraction of each limit
    used; ``start``: ``q(0)`` (n,), within the safety-scaled position limits, or None to leave
    it to the optimiser; ``starts``: random starts (the best result is kept); ``tolerance``:
    SLSQP's ``ftol`` on ``log kappa``.

    ``payload_link``: design for payload estimation on that link instead
    (:mod:`.payload`): the criterion is the column-scaled condition number of the ten
    regressor columns of the body carrying the link, in the link frame (no joint terms: the
    model's friction is taken as known), and only the joints ``moving`` (default
    :func:`payload_joints`: the three nearest the link, the wrist) move; the others stay at
    the start (or the middle of their range).
    """
    with threadpool_limits(limits=1, user_api='blas'):
        return _design(model, duration, harmonics, samples, tuple(joint_terms), seed,
                       max_iterations, progress, safety, start, starts, tolerance,
                       payload_link, moving)


def _design(model, duration, harmonics, samples, joint_terms, seed, max_iterations, progress,
            safety, start, starts, tolerance, payload_link=None, moving=None):
    """Return design_excitation's result (its arguments, in its order)."""
    t0 = _time.perf_counter()
    layout = ParameterLayout.of(model, joint_terms)
    n = model.dof
    if n == 0:
        raise InputError('the model has no joints to excite')
    duration = float(duration)
    if not (math.isfinite(duration) and duration > 0.0):
        raise InputError(f'duration must be positive, got {duration!r}')
    if isinstance(harmonics, bool) or int(harmonics) != harmonics or harmonics < 2:
        raise InputError(f'harmonics must be an integer of at least 2 (starting at rest takes '
                         f'two equalities per joint), got {harmonics!r}')
    harmonics = int(harmonics)
    limits = excitation_limits(model, safety)
    base = base_parameters(layout, model, seed=seed)
    samples = int(samples or max(100, 30 * harmonics))
    if samples * n < 2 * base.rank or samples < 4 * harmonics:
        raise InputError(f'{samples} samples are too few for {base.rank} base parameters and '
                         f'{harmonics} harmonics')
    if start is not None:
        start = np.asarray(start, dtype=float).reshape(-1)
        if start.shape != (n,) or not np.all(np.isfinite(start)):
            raise InputError(f'start must be {n} finite positions, got {start.tolist()}')
        outside = np.flatnonzero((start < limits.lower - 1e-12)
                                 | (start > limits.upper + 1e-12))
        if outside.size:
            j = outside[0]
            raise InputError(f'start: joint {model.joint_names[j]!r} at {start[j]:g} is outside '
                             f'[{limits.lower[j]:g}, {limits.upper[j]:g}] (its limits times the '
                             f'safety factor {limits.safety:g})')
    if isinstance(starts, bool) or int(starts) != starts or starts < 1:
        raise InputError(f'starts must be a positive integer, got {starts!r}')
    payload = None
    q_static = start if start is not None else limits.middle
    if payload_link is not None:
        from .payload import link_transform
        body, _, X = link_transform(model, payload_link)
        payload = (body, X)
        moving = payload_joints(model, payload_link) if moving is None else list(moving)
    design = _Design(model, layout, base, duration, harmonics, samples, limits, start, payload)
    rng = np.random.default_rng(seed)
    initial = None
    iteration = 0
    for _ in range(int(starts)):
        z0 = design.random_start(rng, q_static)
        if payload is not None:
            design.freeze(z0, moving, q_static)
            z0 = design.reduce(z0)
        design.evaluate(z0)
        if initial is None:
            initial = design.identification_conditions(z0)

        def callback(z, *_):
            nonlocal iteration
            iteration += 1
            if progress is not None:
                progress(iteration, math.exp(design.best[0]))

        constraint = {'type': 'ineq',
                      'fun': lambda z: design.evaluate(z)['constraints'],
                      'jac': lambda z: design.evaluate(z, True)['jacobian']}
        solution = scipy.optimize.minimize(
            lambda z: design.evaluate(z)['value'], z0,
            jac=lambda z: design.evaluate(z, True)['gradient'], method='SLSQP',
            constraints=[constraint], callback=callback,
            options={'maxiter': int(max_iterations), 'ftol': float(tolerance)})
    # The best feasible point evaluated (SLSQP may end on a slightly infeasible one).
    if design.best is None:  # pragma: no cover - the random start is feasible
        raise InputError('no trajectory within the limits was found')
    z = design.best[1]
    if payload is not None:
        z = design.expand(z)
    a, b, q0 = design.full(z)
    condition, unscaled = design.identification_conditions(z)

    def traj(t):
        return fourier_trajectory((a, b), design.w_f, t, q0)
    check = np.arange(CHECK_REFINEMENT * samples) * (duration / (CHECK_REFINEMENT * samples))
    usage = _limit_usage(model, traj, limits, check)
    margins = {k: 1.0 - v for k, v in usage.items()}
    return ExcitationResult(
        tuple(model.joint_names), duration, harmonics, (a, b), q0, design.t, condition,
        unscaled, initial[0], initial[1], limits, usage, margins, traj([0.0])[0][0], base,
        layout, iteration, design.evaluations, _time.perf_counter() - t0,
        str(solution.message))
