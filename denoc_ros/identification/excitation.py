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
Excitation trajectories for identification: periodic finite Fourier series.

Each joint follows a finite Fourier series of period ``T`` (Swevers, Ganseman, Tukel,
De Schutter & Van Brussel, "Optimal robot excitation and identification", IEEE Trans. Robotics
and Automation 13(5), 1997), ``w_f = 2 pi / T``, ``k = 1..K``::

    q_j(t)   = q0_j + sum_k  a_jk / (w_f k) sin(w_f k t) - b_jk / (w_f k) cos(w_f k t)
    qd_j(t)  =        sum_k  a_jk cos(w_f k t) + b_jk sin(w_f k t)
    qdd_j(t) =        sum_k -a_jk w_f k sin(w_f k t) + b_jk w_f k cos(w_f k t)

(:func:`fourier_trajectory`). The trajectory is periodic with period ``T``, and so are its
derivatives: a recording of whole periods can be averaged period by period and differentiated
without end effects, and the bandwidth is ``K w_f``.

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
import pathlib
import time as _time
from typing import Dict, Tuple

import numpy as np
import scipy.linalg
import scipy.optimize
from threadpoolctl import threadpool_limits
import yaml

from .base import base_parameters, BaseParameters
from .parameters import inertial_parameters, joint_columns, ParameterLayout
from ..dynamics import inverse_dynamics, regressor as rigid_regressor
from ..errors import InputError
from ..model import PRISMATIC

__all__ = ['fourier_trajectory', 'fourier_basis', 'design_excitation', 'ExcitationResult',
           'ExcitationLimits', 'excitation_limits', 'write_trajectory_yaml',
           'write_trajectory_csv', 'period_samples', 'DEFAULT_SAFETY']

DEFAULT_SAFETY = 0.8
"""Fraction of each URDF limit the designed trajectory may use."""

DEFAULT_HALF_RANGE = {'revolute': math.pi, 'prismatic': 0.5}
"""Half the position range [rad, m] about zero of a joint without position limits."""

DESIGN_SMOOTHING = 0.05
"""Velocity scale [rad/s or m/s] of the Coulomb columns' tanh during the design."""

POSITION_STEP = 6e-6
"""Central-difference step of the regressor's position derivatives [rad or m]."""

FEASIBILITY = 1e-6
"""Constraint violation tolerated (``1 - (x / L)^2 >= -1e-6``: ``|x| <= L (1 + 5e-7)``)."""

CHECK_REFINEMENT = 10
"""The limits are checked afterwards on a grid this many times finer than the design's."""


def fourier_basis(base_frequency, harmonics, t):
    """
    Return ``(P, V, A)``, each ``(len(t), 2 K)``: the series' basis functions at times ``t``.

    ``q_j = q0_j + P @ [a_j, b_j]``, ``qd_j = V @ [a_j, b_j]``, ``qdd_j = A @ [a_j, b_j]``
    (the module docstring's series, Swevers et al. 1997), ``base_frequency`` ``w_f`` in rad/s.
    """
    t = np.asarray(t, dtype=float).reshape(-1)
    w = base_frequency * np.arange(1, harmonics + 1)
    s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    P = np.hstack((s / w, -c / w))
    V = np.hstack((c, s))
    A = np.hstack((-s * w, c * w))
    return P, V, A


def _coefficients(coefficients):
    """Return ``(a, b)`` as (n, K) float arrays, checked; else InputError."""
    try:
        a, b = coefficients
        a = np.atleast_2d(np.asarray(a, dtype=float))
        b = np.atleast_2d(np.asarray(b, dtype=float))
    except (TypeError, ValueError) as exc:
        raise InputError(f'Fourier coefficients must be a pair (a, b) of (n, K) arrays: '
                         f'{exc}') from None
    if a.ndim != 2 or a.shape != b.shape or a.shape[1] < 1:
        raise InputError(f'Fourier coefficients a {a.shape} and b {b.shape} must both have '
                         'shape (n joints, K harmonics)')
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise InputError('Fourier coefficients must be finite (no NaN or inf)')
    return a, b


def fourier_trajectory(coefficients, base_frequency, t, q0=0.0):
    """
    Return ``(q, qd, qdd)``, each ``(len(t), n)``: the finite Fourier series at times ``t``.

    ``coefficients``: ``(a, b)``, each ``(n, K)``; ``base_frequency``: ``w_f = 2 pi / T``
    [rad/s], ``T`` the period; ``q0``: the offsets (n,) or a scalar. Swevers et al. (1997)'s
    series (module docstring); ``qd`` and ``qdd`` are its exact derivatives.
    """
    a, b = _coefficients(coefficients)
    w_f = float(base_frequency)
    if not (math.isfinite(w_f) and w_f > 0.0):
        raise InputError(f'base frequency must be a positive angular frequency [rad/s], got '
                         f'{base_frequency!r}')
    t = np.asarray(t, dtype=float).reshape(-1)
    if not np.all(np.isfinite(t)):
        raise InputError('times must be finite')
    q0 = np.broadcast_to(np.asarray(q0, dtype=float), (a.shape[0],))
    P, V, A = fourier_basis(w_f, a.shape[1], t)
    c = np.hstack((a, b)).T                          # (2K, n)
    return q0 + P @ c, V @ c, A @ c


def period_samples(duration, rate, endpoint=True):
    """
    Return times over one period ``[0, T]``, evenly spaced at ``rate`` [Hz] or slightly faster.

    ``ceil(T rate)`` intervals; ``endpoint``: include ``t = T`` (where a periodic trajectory is
    back at ``t = 0``'s state, so that a controller looping the samples never jumps).
    """
    if not (math.isfinite(rate) and rate > 0.0):
        raise InputError(f'sample rate must be positive, got {rate!r}')
    count = max(1, int(math.ceil(duration * rate - 1e-9)))
    return np.linspace(0.0, duration, count + 1 if endpoint else count, endpoint=endpoint)


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


def _log_condition(Wb, gradient=False):
    """
    Return ``log kappa(W_b D^-1)`` (column norms ``D``), its ``kappa`` and the gradient.

    ``Wb``: (m, r). From the eigen-decomposition of ``(W_b D^-1)^T (W_b D^-1)``;
    ``d sigma_i / d W_b[:, k] = v_ik / d_k (u_i - sigma_i v_ik W_s[:, k])`` (the column scaling
    differentiated too), ``u_i = W_s v_i / sigma_i``.
    """
    d = np.linalg.norm(Wb, axis=0)
    tiny = 1e-300
    d = np.maximum(d, tiny)
    Ws = Wb / d
    lam, vec = np.linalg.eigh(Ws.T @ Ws)
    lam_min = max(lam[0], 1e-30 * max(lam[-1], tiny))
    value = 0.5 * (math.log(lam[-1]) - math.log(lam_min))
    if not gradient:
        return value, math.exp(value), None
    G = np.zeros_like(Wb)
    for i, sign in ((-1, 1.0), (0, -1.0)):
        sigma = math.sqrt(max(lam[i], lam_min))
        v = vec[:, i]
        u = Ws @ v / sigma
        # d log sigma_i / d W_b
        G += sign * (np.outer(u, v / d) / sigma - Ws * (v * v / d))
    return value, math.exp(value), G


def _unscaled_condition(Wb):
    """Return ``sigma_max / sigma_min`` of ``W_b`` = ``sqrt(cond(W_b^T W_b))`` (by SVD)."""
    s = np.linalg.svd(Wb, compute_uv=False)
    return float(s[0] / s[-1]) if s[-1] > 0.0 else float('inf')


class _Design:
    """The optimisation problem: variables, objective, constraints and their derivatives."""

    def __init__(self, model, layout, base, duration, harmonics, samples, limits, start,
                 payload=None):
        n, K = model.dof, harmonics
        # payload: (body, X) -- the criterion is then on the body's ten columns, link frame.
        self.payload = payload
        self.model, self.layout, self.base, self.limits = model, layout, base, limits
        self.n, self.K = n, K
        self.w_f = 2.0 * math.pi / duration
        self.t = np.arange(samples) * (duration / samples)
        P, V, A = fourier_basis(self.w_f, K, self.t)
        N = samples
        Pe = np.hstack((P, np.ones((N, 1))))
        Ve = np.hstack((V, np.zeros((N, 1))))
        Ae = np.hstack((A, np.zeros((N, 1))))
        # Equalities on x_j = [a_j, b_j, q0_j]: at rest at t = 0, and q(0) = start.
        k = np.arange(1, K + 1, dtype=float)
        rows = [np.concatenate((np.ones(K), np.zeros(K), [0.0])),
                np.concatenate((np.zeros(K), k, [0.0]))]
        rhs = np.zeros((n, 2))
        if start is not None:
            rows.append(np.concatenate((np.zeros(K), -1.0 / (self.w_f * k), [1.0])))
            rhs = np.hstack((rhs, np.asarray(start, dtype=float).reshape(n, 1)))
        E = np.array(rows)
        self.null = scipy.linalg.null_space(E)                  # (2K+1, d)
        self.particular = np.linalg.lstsq(E, rhs.T, rcond=None)[0].T     # (n, 2K+1)
        self.d = self.null.shape[1]
        self.B = (Pe @ self.null, Ve @ self.null, Ae @ self.null)          # each (N, d)
        self.offset = (self.particular @ Pe.T, self.particular @ Ve.T, self.particular @ Ae.T)
        self.pi = inertial_parameters(model)
        self.design_layout = ParameterLayout.of(model, layout.joint_terms,
                                                smoothing=max(layout.smoothing,
                                                              DESIGN_SMOOTHING))
        self.velocity_rows = np.flatnonzero(np.isfinite(limits.velocity))
        self.effort_rows = np.flatnonzero(np.isfinite(limits.effort))
        # Constraints at t = 0 are constant when q(0) is given (qd(0) = 0 always): left out,
        # since a constraint with a zero gradient can make SLSQP's subproblem infeasible.
        self.first = 0 if start is None else 1
        self.evaluations = 0
        self.best = None             # (log kappa, variables) of the best feasible point so far
        self.best_reduced = None     # the same in the free variables (payload design)
        self._free = None
        self._cache = {}

    # -- variables ---------------------------------------------------------------------------

    def full(self, z):
        """Return (a, b, q0) of the variables ``z`` (n d,)."""
        x = self.particular + z.reshape(self.n, self.d) @ self.null.T
        K = self.K
        return x[:, :K], x[:, K:2 * K], x[:, 2 * K]

    def variables(self, a, b, q0):
        """Return the variables of (a, b, q0), projected onto the equalities' solutions."""
        x = np.hstack((a, b, np.reshape(q0, (-1, 1))))
        return ((x - self.particular) @ self.null).reshape(-1)

    def states(self, z):
        """Return (q, qd, qdd), each (N, n), on the design grid."""
        Z = z.reshape(self.n, self.d).T
        return tuple(o.T + B @ Z for o, B in zip(self.offset, self.B))

    # -- evaluation --------------------------------------------------------------------------

    def _columns_derivatives(self, qd):
        """Return d(joint columns)/d qd and d/d qdd as (n_j, N, n_i, p_joint) arrays."""
        n, N = self.n, qd.shape[0]
        terms = self.design_layout.joint_terms
        dqd = np.zeros((n, N, n, len(terms) * n))
        dqdd = np.zeros_like(dqd)
        vs = self.design_layout.smoothing
        for k, term in enumerate(terms):
            for j in range(n):
                col = k * n + j
                if term == 'viscous':
                    dqd[j, :, j, col] = 1.0
                elif term == 'coulomb':
                    dqd[j, :, j, col] = (1.0 - np.tanh(qd[:, j] / vs) ** 2) / vs
                elif term == 'armature':
                    dqdd[j, :, j, col] = 1.0
        return dqd, dqdd

    def freeze(self, z_start, moving, q_static):
        """Keep only the joints ``moving`` free: the others' variables fixed at rest."""
        zero = np.zeros((self.n, self.K))
        fixed = self.variables(zero, zero, q_static).reshape(self.n, self.d)
        self._template = fixed.reshape(-1).copy()
        mask = np.zeros((self.n, self.d), dtype=bool)
        mask[list(moving)] = True
        self._free = mask.reshape(-1)
        self._template[self._free] = np.asarray(z_start)[self._free]

    def reduce(self, z):
        """Return the free variables of full variables ``z``."""
        return np.asarray(z)[self._free].copy()

    def expand(self, z):
        """Return the full variables of free variables ``z``."""
        full = self._template.copy()
        full[self._free] = z
        return full

    def evaluate(self, z, derivatives=False):
        """Return a dict: objective, kappa, constraint values (and their derivatives)."""
        if getattr(self, '_free', None) is None:
            return self._evaluate(z, derivatives)
        key = ('reduced', z.tobytes(), derivatives)
        if key in self._cache:
            return self._cache[key]
        out = dict(self._evaluate(self.expand(z), derivatives))
        if derivatives:
            out['gradient'] = out['gradient'][self._free]
            out['jacobian'] = out['jacobian'][:, self._free]
        if out['constraints'].min(initial=0.0) >= -FEASIBILITY and (
                self.best_reduced is None or out['value'] < self.best_reduced[0]):
            self.best_reduced = (out['value'], z.copy())
            self.best = self.best_reduced
        self._cache[key] = out
        return out

    def _evaluate(self, z, derivatives=False):
        """Return evaluate's dict for full variables ``z``."""
        key = (z.tobytes(), derivatives)
        if key in self._cache:
            return self._cache[key]
        if not derivatives and (z.tobytes(), True) in self._cache:
            return self._cache[(z.tobytes(), True)]
        self.evaluations += 1
        n, N = self.n, self.t.size
        q, qd, qdd = self.states(z)
        if derivatives:
            S = 1 + 5 * n
            Q = np.repeat(q[None], S, axis=0)
            QD = np.repeat(qd[None], S, axis=0)
            QDD = np.repeat(qdd[None], S, axis=0)
            j = np.arange(n)
            Q[1 + j, :, j] += POSITION_STEP
            Q[1 + n + j, :, j] -= POSITION_STEP
            QD[1 + 2 * n + j, :, j] += 1.0
            QD[1 + 3 * n + j, :, j] -= 1.0
            QDD[1 + 4 * n + j, :, j] += 1.0
            Y = rigid_regressor(self.model, Q, QD, QDD)          # (S, N, n, 10 n)
            dY = ((Y[1:1 + n] - Y[1 + n:1 + 2 * n]) / (2.0 * POSITION_STEP),
                  0.5 * (Y[1 + 2 * n:1 + 3 * n] - Y[1 + 3 * n:1 + 4 * n]),
                  Y[1 + 4 * n:] - Y[0])
            Y = Y[0]
        else:
            Y = rigid_regressor(self.model, q, qd, qdd)
        tau = Y @ self.pi
        terms = self.design_layout.joint_terms
        W = Y if not terms else np.concatenate(
            (Y, joint_columns(self.model, qd, qdd, terms, self.design_layout.smoothing)), -1)
        Wb = self._criterion_columns(Y, W)
        value, kappa, G = _log_condition(Wb, derivatives)
        lim = self.limits
        f = self.first
        vr, er = self.velocity_rows, self.effort_rows
        cons = [1.0 - ((q[f:] - lim.middle) / (lim.half * lim.safety)) ** 2,
                1.0 - (qd[1:, vr] / lim.velocity[vr]) ** 2,
                1.0 - (tau[f:, er] / lim.effort[er]) ** 2]
        out = {'value': value, 'kappa': kappa, 'q': q, 'qd': qd, 'tau': tau,
               'constraints': np.concatenate([c.reshape(-1) for c in cons])}
        if derivatives:
            jqd, jqdd = self._columns_derivatives(qd)
            zeros = np.zeros_like(jqd)
            dW = [np.concatenate((dy, dj), axis=-1) for dy, dj in zip(dY, (zeros, jqd, jqdd))]
            Gb = G.reshape(N, n, -1)
            # d objective / d state_s[t, j], then by the chain rule d objective / d z.
            grad = np.zeros((n, self.d))
            for s in range(3):
                if self.payload is None:
                    dWb = dW[s][..., self.base.independent]
                else:
                    body, X = self.payload
                    dWb = dY[s][..., 10 * body:10 * body + 10] @ X
                g = np.einsum('jtir,tir->jt', dWb, Gb)
                grad += g @ self.B[s]
            out['gradient'] = grad.reshape(-1)
            # d tau[t, i] / d z_j = sum_s (d tau_i / d state_s_j)(t) B_s[t]
            dtau = [dy @ self.pi for dy in dY]                # (n_j, N, n_i)
            J_tau = sum(np.einsum('jti,td->tijd', dt, B) for dt, B in zip(dtau, self.B))
            eye = np.eye(n)
            scale_q = 1.0 / (lim.half * lim.safety) ** 2
            J_q = np.einsum('td,jk,tj->tjkd', self.B[0], eye, -2.0 * (q - lim.middle) * scale_q)
            J_v = np.einsum('td,jk,tj->tjkd', self.B[1], eye,
                            -2.0 * qd / np.where(np.isfinite(lim.velocity), lim.velocity,
                                                 1.0) ** 2)[:, vr]
            J_e = (J_tau * (-2.0 * tau / np.where(np.isfinite(lim.effort), lim.effort, 1.0)
                            ** 2)[:, :, None, None])[:, er]
            out['jacobian'] = np.concatenate([J.reshape(-1, n * self.d)
                                              for J in (J_q[f:], J_v[1:], J_e[f:])])
        if (self._free is None and np.min(out['constraints'], initial=0.0) >= -FEASIBILITY
                and (self.best is None or value < self.best[0])):
            self.best = (value, z.copy())
        if len(self._cache) > 8:
            self._cache.clear()
        self._cache[key] = out
        return out

    def _criterion_columns(self, Y, W):
        """Return the (N n, r) columns whose condition is minimised (base or payload's ten)."""
        if self.payload is None:
            return self.base.columns(W).reshape(-1, self.base.independent.size)
        body, X = self.payload
        return (Y[..., 10 * body:10 * body + 10] @ X).reshape(-1, 10)

    def identification_conditions(self, z):
        """Return (scaled, unscaled) condition numbers with the identification's own columns."""
        if self._free is not None and np.size(z) != self._free.size:
            z = self.expand(z)
        q, qd, qdd = self.states(z)
        W = self.layout.regressor(self.model, q, qd, qdd)
        Y = W[..., :self.layout.body_size]
        Wb = self._criterion_columns(Y, W)
        return math.exp(_log_condition(Wb)[0]), _unscaled_condition(Wb)

    # -- the random start --------------------------------------------------------------------

    def random_start(self, rng, q_static):
        """
        Return variables of a random trajectory about ``q_static`` using about half the limits.

        Coefficients normal; a joint starting within a fifth of its range from a limit moves
        away from it only, ``q_j = q_static_j + sum_k c_k (1 - cos(k w_f t))^2`` (``c_k``
        of one sign, ``k <= K / 2``; at rest at ``t = 0``).
        """
        n, K = self.n, self.K
        lim = self.limits
        zero = np.zeros((n, K))
        z_static = self.variables(zero, zero, q_static)
        a, b = rng.normal(size=(n, K)), rng.normal(size=(n, K))
        q0 = np.zeros(n)
        room_up, room_down = lim.upper - q_static, q_static - lim.lower
        edge = np.minimum(room_up, room_down) < 0.2 * (lim.upper - lim.lower)
        for j in np.flatnonzero(edge):
            # (1 - cos x)^2 = 3/2 - 2 cos x + cos(2 x) / 2, cos(m w_f t) has -b_m / (w_f m).
            a[j], b[j], q0[j] = 0.0, 0.0, 0.0
            sign = 1.0 if room_up[j] >= room_down[j] else -1.0
            for k in range(1, K // 2 + 1):
                c = sign * abs(rng.normal())
                b[j, k - 1] += 2.0 * c * self.w_f * k
                b[j, 2 * k - 1] -= c * self.w_f * k
                q0[j] += 1.5 * c
        shape = self.variables(a, b, q0) - self.variables(zero, zero, np.zeros(n))
        q, qd, _ = self.states(z_static + shape)
        q_s = self.states(z_static)[0]
        # Per joint: half the room its position and velocity limits leave.
        swing = q - q_s
        moves = np.abs(swing) > 1e-9 * np.max(np.abs(swing), axis=0)
        room = np.maximum(np.where(swing > 0.0, lim.upper - q_s, q_s - lim.lower), 0.0)
        with np.errstate(divide='ignore', invalid='ignore'):
            ratio = np.where(moves, room / np.abs(swing), np.inf)
        scale = 0.5 * np.min(ratio, axis=0)
        scale = np.minimum(scale, 0.5 * lim.velocity / np.max(np.abs(qd), axis=0))
        scale = np.where(np.isfinite(scale), scale, 0.0)
        shape = (shape.reshape(n, self.d) * scale[:, None]).reshape(-1)
        # Efforts: half the limit, or halfway from the static (gravity) effort to the limit.
        er = self.effort_rows
        static = np.max(np.abs(self.evaluate(z_static)['tau'][:, er]), axis=0)
        over = np.flatnonzero(static > lim.effort[er])
        if over.size:
            j = er[over[0]]
            raise InputError(f'joint {self.model.joint_names[j]!r}: its effort limit '
                             f'{lim.effort[j] / lim.safety:g} times the safety factor '
                             f'{lim.safety:g} does not hold the arm against gravity at '
                             f'{np.round(q_static, 4).tolist()}')
        allowed = np.maximum(0.5 * lim.effort[er], 0.5 * (static + lim.effort[er]))
        scale = 1.0
        for _ in range(60):
            z = z_static + scale * shape
            if np.all(np.abs(self.evaluate(z)['tau'][:, er]) <= allowed):
                return z
            scale *= 0.7
        return z_static  # pragma: no cover - 0.7^60 of the motion leaves the static efforts


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


# -- writers ---------------------------------------------------------------------------------

def _trajectory_arrays(joint_names, t, q, qd, qdd):
    names = [str(j) for j in joint_names]
    t = np.asarray(t, dtype=float).reshape(-1)
    arrays = [np.asarray(x, dtype=float) for x in (q, qd, qdd)]
    for what, x in zip(('positions', 'velocities', 'accelerations'), arrays):
        if x.shape != (t.size, len(names)):
            raise InputError(f'{what} have shape {x.shape}, expected {(t.size, len(names))} '
                             '(times, joints)')
        if not np.all(np.isfinite(x)):
            raise InputError(f'{what} contain NaN or inf')
    if not np.all(np.isfinite(t)) or np.any(t < 0.0) or np.any(np.diff(t) <= 0.0):
        raise InputError('times must be finite, non-negative and increasing')
    return names, t, arrays


def write_trajectory_yaml(path, joint_names, t, q, qd, qdd, comment=None):
    """
    Write one trajectory_msgs/JointTrajectory as YAML, the form ``ros2 topic pub`` accepts.

    ``{header: {stamp: {sec: 0, nanosec: 0}, frame_id: ''}, joint_names: [...], points:
    [{positions, velocities, accelerations, effort: [], time_from_start: {sec, nanosec}},
    ...]}``; ``t`` [s] (N,), ``q``, ``qd``, ``qdd`` (N, n). ``comment``: lines written first
    as YAML comments. Written by ``yaml.safe_dump``: mappings as blocks, each list of numbers
    on one line, numbers in full precision (``repr``, so they load back bit for bit).
    """
    names, t, (q, qd, qdd) = _trajectory_arrays(joint_names, t, q, qd, qdd)
    points = []
    for k in range(t.size):
        sec, nanosec = divmod(int(round(t[k] * 1e9)), 1_000_000_000)
        points.append({'positions': q[k].tolist(), 'velocities': qd[k].tolist(),
                       'accelerations': qdd[k].tolist(), 'effort': [],
                       'time_from_start': {'sec': sec, 'nanosec': nanosec}})
    message = {'header': {'stamp': {'sec': 0, 'nanosec': 0}, 'frame_id': ''},
               'joint_names': names, 'points': points}
    text = yaml.safe_dump(message, default_flow_style=None, sort_keys=False, width=1 << 30)
    lines = [f'# {line}' for line in (comment or '').splitlines()]
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(''.join(line + '\n' for line in lines) + text)


def write_trajectory_csv(path, joint_names, t, q, qd, qdd):
    """
    Write a trajectory as CSV: ``time``, then per joint its position, velocity, acceleration.

    Header ``time,<joint>/position,<joint>/velocity,<joint>/acceleration,...``, one row per
    time [s], the joints in ``joint_names`` order (the column naming of :mod:`.data`'s CSV
    recordings), numbers in full precision.
    """
    names, t, (q, qd, qdd) = _trajectory_arrays(joint_names, t, q, qd, qdd)
    header = ['time'] + [f'{j}/{what}' for j in names
                         for what in ('position', 'velocity', 'acceleration')]
    table = np.column_stack([t] + [x[:, j] for j in range(len(names)) for x in (q, qd, qdd)])
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(path, table, delimiter=',', header=','.join(header), comments='', fmt='%.17g')
