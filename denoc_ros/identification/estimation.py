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
Estimators: least squares on the base parameters, and a physically consistent fit.

Every estimator works from the normal equations, accumulated chunk by chunk
(:class:`NormalEquations`), so a recording of any length fits in bounded memory: per joint
``j`` (row ``j`` of each state's regressor ``W``) the sums ``A_j = W_j^T W_j``,
``b_j = W_j^T tau_j`` and ``c_j = tau_j^T tau_j`` over the samples. A joint whose effort is
not sensed (``sensed[j]`` False) adds nothing: its motion enters every other joint's rows
through the regressor, its own rows are left out of every fit below.

* :func:`least_squares` -- ordinary least squares on the base parameters, then weighted
  least squares with each joint's rows weighted by ``1 / sigma_j``, ``sigma_j`` the joint's
  residual spread under OLS (Gautier & Khalil; Swevers et al. 1997). The covariance
  ``sigma^2 (W_b^T W_b)^-1`` (OLS) or ``(W_b^T S^-2 W_b)^-1`` (WLS) gives each base
  parameter's relative standard deviation in percent; the condition number is that of
  ``W_b``, ``sqrt(cond(W_b^T W_b))``.
* :func:`physically_consistent` -- all standard parameters at once, every body a real rigid
  body: its 4x4 pseudo-inertia ``J = [[Sigma, h], [h^T, m]]`` (``Sigma = tr(I)/2 1 - I``,
  inertia ``I`` and ``h = m c`` about the frame origin) positive definite, which is the same
  as mass positive and the inertia about the centre of mass positive definite and within the
  triangle inequalities (Wensing, Kim & Slotine 2017). Optionally each body also holds the
  links locked onto it (``J - J_locked`` positive definite) and lies within a bounding
  ellipsoid (``tr(J Q) >= 0``, the same paper's LMI for a density inside an ellipsoid; see
  :mod:`.bounds`). Friction coefficients and rotor
  inertias are bounded below by zero. A weak prior pulls towards the nominal (URDF) values,
  which keeps the directions the data cannot see at their nominal values. The problem is
  convex, and a log-barrier interior-point method (Newton steps with exact gradients and
  Hessians of ``log det J``) finds its global minimum.
"""

from dataclasses import dataclass

import numpy as np

from .parameters import inertia_about_origin
from ..errors import DataError, InputError

__all__ = ['bound_row', 'consistent_minimum', 'NormalEquations', 'LeastSquaresFit',
           'least_squares', 'physically_consistent', 'PhysicalFit', 'physical_margin',
           'sensed_mask']


class NormalEquations:
    """
    Per-joint normal equations of ``W theta = tau``, accumulated chunk by chunk.

    ``sensed`` (n,) bool, default all: the joints whose efforts are measured. The rows of the
    others are never accumulated (their ``A_j``, ``b_j``, ``c_j`` stay zero), so every
    estimator built on these sums ignores them; their efforts may be NaN.
    """

    def __init__(self, n, p, sensed=None):
        self.n, self.p = n, p
        self.sensed = sensed_mask(sensed, n)
        self.A = np.zeros((n, p, p))
        self.b = np.zeros((n, p))
        self.c = np.zeros(n)
        self.count = 0

    @property
    def rows(self):
        """Return the number of sensed rows accumulated (samples times sensed joints)."""
        return self.count * int(np.count_nonzero(self.sensed))

    def add(self, W, tau):
        """Add samples: ``W`` (B, n, p) full regressors, ``tau`` (B, n) measured efforts."""
        W = np.asarray(W, dtype=float)
        tau = np.asarray(tau, dtype=float)
        if W.shape[1:] != (self.n, self.p) or tau.shape != W.shape[:2]:
            raise DataError(f'normal equations: regressor {W.shape} and efforts {tau.shape} do '
                            f'not fit (..., {self.n}, {self.p})')
        if not self.sensed.all():
            W = W * self.sensed[None, :, None]
            tau = np.where(self.sensed[None, :], tau, 0.0)
        # One contiguous (n, B, p) copy: each joint's rows then go to BLAS without strides.
        Wt = np.ascontiguousarray(W.transpose(1, 0, 2))
        self.A += np.matmul(Wt.transpose(0, 2, 1), Wt)
        self.b += np.matmul(Wt.transpose(0, 2, 1), np.ascontiguousarray(tau.T)[:, :, None])[..., 0]
        self.c += np.einsum('bj,bj->j', tau, tau)
        self.count += W.shape[0]

    def combined(self, weights=None):
        """Return ``(A, b, c)`` summed over the joints, row j weighted by ``weights[j]^2``."""
        w2 = np.ones(self.n) if weights is None else np.asarray(weights, dtype=float) ** 2
        return (np.einsum('j,jkl->kl', w2, self.A), np.einsum('j,jk->k', w2, self.b),
                float(w2 @ self.c))

    def residual_squares(self, theta):
        """Return each joint's sum of squared residuals ``|W_j theta - tau_j|^2``."""
        theta = np.asarray(theta, dtype=float)
        return np.maximum(self.c - 2.0 * self.b @ theta
                          + np.einsum('k,jkl,l->j', theta, self.A, theta), 0.0)


def sensed_mask(sensed, n):
    """Return ``sensed`` as an (n,) bool array (None: every joint); InputError if none is."""
    if sensed is None:
        return np.ones(n, dtype=bool)
    mask = np.asarray(sensed, dtype=bool).reshape(-1)
    if mask.shape != (n,):
        raise InputError(f'sensed: {n} flags expected (one per joint), got {mask.size}')
    if not mask.any():
        raise InputError('sensed: no joint has a sensed effort; nothing to fit')
    return mask


@dataclass(frozen=True)
class LeastSquaresFit:
    """Base parameters by least squares, with their spread and the problem's conditioning."""

    beta: np.ndarray            # (r,) base parameters
    sigma_percent: np.ndarray   # (r,) relative standard deviation of each, in %
    condition: float            # condition number of the (weighted) base regressor
    joint_sigma: np.ndarray     # (n,) residual standard deviation per joint (OLS; 0 unsensed)
    weighted: bool


def _solve_spd(A, b, what):
    try:
        factor = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise DataError(f'{what}: the base regressor is rank-deficient on these data (some '
                        'joints or combinations are not excited)') from None
    y = np.linalg.solve(factor, b)
    return np.linalg.solve(factor.T, y), factor


def unexcited_joints(normal, base, joint_names, rtol=1e-8):
    """Return the joints whose base columns the data leave (nearly) unexcited."""
    A, _, _ = normal.combined()
    Ab = A[np.ix_(base.independent, base.independent)]
    diag = np.diag(Ab)
    scale = np.max(diag, initial=0.0)
    weak = set()
    # Directions of (near) zero eigenvalue: the parameters that carry them.
    values, vectors = np.linalg.eigh(Ab / max(scale, 1e-300))
    for k in np.flatnonzero(values < rtol):
        for idx in np.flatnonzero(np.abs(vectors[:, k]) > 0.3):
            weak.add(base.names[base.independent[idx]])
    joints = []
    for name in joint_names:
        if any(w.startswith(name + '.') for w in weak):
            joints.append(name)
    return joints, sorted(weak)


def least_squares(normal, base, weighted=True):
    """
    Return the :class:`LeastSquaresFit` of the base parameters (OLS, then WLS if ``weighted``).

    Only the sensed joints' rows count (``normal.sensed``; ``base`` should be the reduction
    for the same joints, :func:`.base.base_parameters` ``sensed=``). Raises DataError if the
    data leave the base regressor rank-deficient.
    """
    idx = base.independent
    sensed = normal.sensed
    n = int(np.count_nonzero(sensed))
    rows = normal.rows
    r = idx.size
    if rows <= r:
        raise DataError(f'{normal.count} samples of {n} sensed joints cannot determine {r} '
                        'base parameters')
    A, b, _ = normal.combined()
    Ab, bb = A[np.ix_(idx, idx)], b[idx]
    beta, _ = _solve_spd(Ab, bb, 'least squares')
    theta = np.zeros(normal.p)
    theta[idx] = beta
    per_joint = np.where(sensed, normal.residual_squares(theta), 0.0)
    joint_sigma = np.sqrt(per_joint / max(normal.count - r / n, 1.0))
    if weighted and np.all(joint_sigma[sensed] > 0.0):
        weights = np.where(sensed, 1.0 / np.where(sensed, joint_sigma, 1.0), 0.0)
        A, b, _ = normal.combined(weights)
        Ab, bb = A[np.ix_(idx, idx)], b[idx]
        beta, factor = _solve_spd(Ab, bb, 'weighted least squares')
        theta[idx] = beta
        # Residual of the weighted problem, per row: about 1 by construction.
        s2 = float(weights ** 2 @ normal.residual_squares(theta)) / max(rows - r, 1)
    else:
        weighted = False
        beta, factor = _solve_spd(Ab, bb, 'least squares')
        s2 = float(per_joint.sum()) / max(rows - r, 1)
    inverse = np.linalg.inv(factor)
    covariance = s2 * (inverse.T @ inverse)
    sigma = np.sqrt(np.maximum(np.diag(covariance), 0.0))
    with np.errstate(divide='ignore', invalid='ignore'):
        percent = np.where(np.abs(beta) > 0.0, 100.0 * sigma / np.abs(beta), np.inf)
    eig = np.linalg.eigvalsh(Ab)
    condition = float(np.sqrt(eig[-1] / eig[0])) if eig[0] > 0.0 else float('inf')
    return LeastSquaresFit(beta, percent, condition, joint_sigma, weighted)


# ----------------------------------------------------------------------------------------------
# Physical consistency: the pseudo-inertia (Wensing, Kim & Slotine 2017)

def _pseudo_inertia(p):
    """Return the 4x4 pseudo-inertia of ten parameters [m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]."""
    m, h = p[0], p[1:4]
    inertia = inertia_about_origin(p)
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    J[:3, 3] = J[3, :3] = h
    J[3, 3] = m
    return J


# J is linear in the ten parameters: J = sum_k p_k E_k.
_BASIS = np.array([_pseudo_inertia(np.eye(10)[k]) for k in range(10)])


def _parameters_of_pseudo_inertia(J):
    """Return the ten parameters of a pseudo-inertia: the inverse of the linear map above."""
    return np.linalg.lstsq(_BASIS.reshape(10, 16).T, J.reshape(16), rcond=None)[0]


def physical_margin(p):
    """Return the smallest eigenvalue of the pseudo-inertia over its largest (> 0: physical)."""
    values = np.linalg.eigvalsh(_pseudo_inertia(np.asarray(p, dtype=float)))
    return float(values[0] / max(abs(values[-1]), 1e-300))


@dataclass(frozen=True)
class PhysicalFit:
    """The physically consistent standard parameters, and how the solver got there."""

    theta: np.ndarray           # (p,) standard parameters in the layout's order
    iterations: int             # Newton steps in all
    cost: float                 # weighted squared residual (data part)
    prior_weight: float         # w
    message: str
    scale: np.ndarray = None    # (p,) the typical size of each parameter (D^-1)

    @property
    def converged(self):
        """Return whether the interior-point method reached its duality gap."""
        return self.message == 'converged'

    def objective(self, normal, nominal, weights=None):
        """Return the minimised objective at ``self.theta``: data part plus prior."""
        A, b, c = normal.combined(weights)
        theta = self.theta
        prior = float(np.sum(((theta - nominal) / self.scale) ** 2))
        return float(theta @ A @ theta - 2.0 * b @ theta + c) + self.prior_weight * prior


def _typical_scales(layout, model):
    """Return a typical magnitude per column: kg, kg m, kg m^2, and the joint terms'."""
    mass = max(float(np.mean(model.mass)), 1e-3)
    offsets = np.linalg.norm(model.joint_translation, axis=1)
    length = max(float(np.mean(offsets)), 0.05)
    per_body = np.array([mass] + [mass * length] * 3 + [mass * length ** 2] * 6)
    scales = [np.tile(per_body, layout.n)]
    for term in layout.joint_terms:
        nominal = layout.split(layout.nominal)[1][term]
        scales.append(np.maximum(np.abs(nominal), {'viscous': 0.1, 'coulomb': 0.5,
                                                   'offset': 0.5, 'armature': 0.01}[term]))
    return np.concatenate(scales)


def bound_row(Q):
    """
    Return the (10,) row ``a`` with ``a . p = tr(J(p) Q)`` for a symmetric 4x4 ``Q``.

    With ``Q = [[-S^-1, S^-1 c], [c^T S^-1, 1 - c^T S^-1 c]]`` of the ellipsoid
    ``(x - c)^T S^-1 (x - c) <= 1``, ``tr(J Q) = integral of 1 - (x - c)^T S^-1 (x - c) dm``,
    non-negative for every mass distribution inside the ellipsoid: Wensing, Kim & Slotine
    2017 (IEEE RA-L 3(1), Eq. 20), the LMI of a density bounded by an ellipsoid.
    """
    return np.einsum('kab,ba->k', _BASIS, np.asarray(Q, dtype=float))


def _barrier(theta, bodies, nonnegative, nb, offsets=None, rows=None):
    """
    Return ``(phi, gradient, hessian)`` of ``-sum log det J_i - sum log theta_k``.

    ``J_i`` the pseudo-inertia of body ``i``'s parameters less ``offsets[i]`` (the links locked
    onto it; None: nothing); ``rows`` (bodies, 10) add ``-log(a_i . p_i)`` (a bounding
    ellipsoid, :func:`bound_row`; None: none). ``None`` if a pseudo-inertia is not positive
    definite or a bounded term not positive. ``d log det J / d p_k = tr(J^-1 E_k)``,
    ``d^2 / d p_k d p_l = -tr(J^-1 E_k J^-1 E_l)``; ``d log(a . p) / dp = a / (a . p)``.
    """
    p = theta.size
    phi, grad, hess = 0.0, np.zeros(p), np.zeros((p, p))
    for i in range(bodies):
        block = slice(10 * i, 10 * i + 10)
        own = theta[block] if offsets is None else theta[block] - offsets[i]
        J = _pseudo_inertia(own)
        if rows is not None:
            value = float(rows[i] @ theta[block])
            if not value > 0.0:
                return None
            phi -= np.log(value)
            grad[block] -= rows[i] / value
            hess[block, block] += np.outer(rows[i], rows[i]) / value ** 2
        try:
            factor = np.linalg.cholesky(J)
        except np.linalg.LinAlgError:
            return None
        phi -= 2.0 * float(np.sum(np.log(np.diag(factor))))
        inverse = np.linalg.inv(J)
        G = np.einsum('ab,kbc->kac', inverse, _BASIS)          # J^-1 E_k
        grad[block] -= np.einsum('kaa->k', G)
        hess[block, block] += np.einsum('kab,lba->kl', G, G)
    bounded = theta[nb:][nonnegative]
    if np.any(bounded <= 0.0):
        return None
    index = nb + np.flatnonzero(nonnegative)
    phi -= float(np.sum(np.log(bounded)))
    grad[index] -= 1.0 / bounded
    hess[index, index] += 1.0 / bounded ** 2
    return phi, grad, hess


def _start(nominal, bodies, nonnegative, nb, offsets=None, ellipsoids=None):
    """
    Return a strictly feasible start: the nominal values, lifted where they are not.

    A body whose own part (less ``offsets``) is not positive definite has its small
    eigenvalues raised; one outside its bounding ellipsoid (``ellipsoids``: the 4x4 ``Q`` of
    :func:`bound_row`) gets, in place of its own part, a small ball at the ellipsoid's centre
    of its own part's mass, heavier if the locked links alone leave the bound.
    """
    theta = np.array(nominal, dtype=float)
    for i in range(bodies):
        block = slice(10 * i, 10 * i + 10)
        locked = np.zeros(10) if offsets is None else offsets[i]
        J = _pseudo_inertia(theta[block] - locked)
        values, vectors = np.linalg.eigh(J)
        floor = 1e-3 * max(values[-1], 1e-9)
        if values[0] < floor:
            J = (vectors * np.maximum(values, floor)) @ vectors.T
            theta[block] = locked + _parameters_of_pseudo_inertia(J)
        if ellipsoids is None:
            continue
        row = bound_row(ellipsoids[i])
        if not row @ theta[block] > 1e-3 * abs(theta[10 * i]):
            # A ball of radius rho at the centre c: J = m [[rho^2/5 1 + c c^T, c], [c^T, 1]].
            inverse_shape = -ellipsoids[i][:3, :3]
            c = np.linalg.solve(inverse_shape, ellipsoids[i][:3, 3])
            semi = 1.0 / np.sqrt(np.max(np.linalg.eigvalsh(inverse_shape)))
            ball = np.zeros((4, 4))
            ball[:3, :3] = 0.01 * semi ** 2 / 5.0 * np.eye(3) + np.outer(c, c)
            ball[:3, 3] = ball[3, :3] = c
            ball[3, 3] = 1.0
            unit = _parameters_of_pseudo_inertia(ball)
            mass = max(float(theta[10 * i] - locked[0]), 1e-3 * max(abs(theta[10 * i]), 1.0))
            need = -float(row @ locked)
            if need >= 0.0:
                mass = max(mass, 2.0 * need / float(row @ unit))
            theta[block] = locked + mass * unit
    bounded = theta[nb:]
    bounded[nonnegative] = np.maximum(bounded[nonnegative], 1e-3)
    return theta


def _solve_psd(H, g):
    """Solve ``H x = g`` for a symmetric positive (semi-)definite H; tiny eigenvalues lifted."""
    import scipy.linalg  # here: SciPy's import costs every process (the node) 0.3 s
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(H), g)
    except np.linalg.LinAlgError:
        values, vectors = np.linalg.eigh(H)
        values = np.maximum(values, 1e-12 * max(values[-1], 1e-300))
        return vectors @ ((vectors.T @ g) / values)


def physically_consistent(normal, layout, model, weights=None, prior=1e-8, max_iterations=400,
                          gap=1e-10, locked=None, ellipsoids=None):
    """
    Return the :class:`PhysicalFit`: standard parameters minimising the (weighted) residual.

    Minimises ``|S (W theta - tau)|^2 + w |D (theta - theta_nominal)|^2`` over physically
    consistent bodies (each pseudo-inertia positive definite) and non-negative friction and
    rotor inertia, ``S`` the per-joint ``weights`` (0 for a joint to leave out; the rows of
    joints ``normal`` does not sense are left out anyway), ``D`` one over a typical size per
    parameter (kg, kg m, kg m^2 from the nominal model), and ``w = prior`` times the mean
    diagonal of ``D^-1 A D^-1`` (``A`` the data's normal matrix). With ``prior = 1e-8`` the
    prior shifts a direction the data see with a curvature ``k`` times below the mean by
    about ``1e-8 k`` of its size (negligible for a base regressor of condition number below
    10^3), and pins the directions the data cannot see at their nominal values.

    ``locked`` (n, 10): the parameters of links locked onto each body (off the identified
    chain; :func:`.bounds.locked_parameters`): each body is then kept heavier than they are,
    its pseudo-inertia less theirs positive definite, so that the body less the locked links
    is itself a rigid body. ``ellipsoids`` (n, 4, 4): each body's bounding ellipsoid as the
    ``Q`` of :func:`bound_row` (:func:`.bounds.body_bounds`), ``tr(J Q) > 0``.

    The problem is convex (a quadratic over linear matrix inequalities: a semidefinite
    program), solved by a log-barrier interior-point method: Newton's method with exact
    gradients and Hessians on ``f(theta) - mu (sum_i log det J_i + sum_k log theta_k)``, a
    backtracking line search that stays strictly feasible, ``mu`` divided by 10 per round
    until the duality gap bound ``m mu`` (``m`` the barrier's degree, 4 per body plus one per
    bounded term) is below ``gap`` times the data's total square ``tau^T S^2 tau``. It starts
    from the nominal parameters (lifted into the interior where they are not physical) and
    reaches the global minimum whatever the data.
    """
    if not prior > 0.0:
        raise InputError(f'prior must be positive, got {prior}: without it the directions the '
                         'data cannot see have no minimum')
    A, b, c = normal.combined(weights)
    scale = _typical_scales(layout, model)
    nonnegative = np.array([t in ('viscous', 'coulomb', 'armature')
                            for t in layout.joint_terms for _ in range(layout.n)], dtype=bool)
    return consistent_minimum(A, b, c, layout.nominal, scale, layout.n, nonnegative, prior,
                              max_iterations, gap, locked, ellipsoids)


def consistent_minimum(A, b, c, nominal, scale, bodies, nonnegative, prior=1e-8,
                       max_iterations=400, gap=1e-10, locked=None, ellipsoids=None):
    """
    Return the :class:`PhysicalFit` minimising ``theta^T A theta - 2 b^T theta + c`` plus prior.

    The solver of :func:`physically_consistent` on given normal equations: ``bodies`` blocks of
    ten body parameters first (each pseudo-inertia kept positive definite), then the
    ``nonnegative`` mask's terms kept positive; ``nominal`` the prior's centre and ``scale``
    each parameter's typical size; ``locked`` and ``ellipsoids`` per body or None (see
    :func:`physically_consistent`).
    """
    p = len(nominal)
    if locked is not None:
        locked = np.asarray(locked, dtype=float).reshape(bodies, 10)
    rows = None
    if ellipsoids is not None:
        ellipsoids = np.asarray(ellipsoids, dtype=float).reshape(bodies, 4, 4)
        rows = np.array([bound_row(Qe) for Qe in ellipsoids])
    nb = 10 * bodies
    nominal = np.array(nominal, dtype=float)
    nonnegative = np.asarray(nonnegative, dtype=bool)
    weight = prior * float(np.trace(A / np.outer(scale, scale))) / p
    prior_diag = weight / scale ** 2
    # f(theta) = theta^T Q theta - 2 q^T theta + const (data plus prior)
    Q = A + np.diag(prior_diag)
    q = b + prior_diag * nominal

    def objective(theta):
        return float(theta @ Q @ theta - 2.0 * q @ theta)

    theta = _start(nominal, bodies, nonnegative, nb, locked, ellipsoids)
    degree = (4 + (rows is not None)) * bodies + int(np.count_nonzero(nonnegative))
    total = max(c, 1e-300)
    mu = 1e-3 * total / max(degree, 1)
    iterations = 0
    message = f'stopped after {max_iterations} Newton steps'
    while iterations < max_iterations:
        # Newton's method on the barrier problem at this mu.
        while iterations < max_iterations:
            barrier = _barrier(theta, bodies, nonnegative, nb, locked, rows)
            phi, g_bar, h_bar = barrier
            # In the scaled coordinates theta / scale, where the Hessian is well conditioned.
            grad = scale * (2.0 * (Q @ theta - q) + mu * g_bar)
            hess = np.outer(scale, scale) * (2.0 * Q + mu * h_bar)
            step = -scale * _solve_psd(hess, grad)
            decrement = float(-(grad / scale) @ step)
            iterations += 1
            if decrement <= 1e-12 * total:
                break
            value = objective(theta) + mu * phi
            t = 1.0
            while t > 1e-12:
                trial = theta + t * step
                trial_barrier = _barrier(trial, bodies, nonnegative, nb, locked, rows)
                if trial_barrier is not None and (objective(trial) + mu * trial_barrier[0]
                                                  <= value - 0.25 * t * decrement):
                    break
                t *= 0.5
            if t <= 1e-12:
                break
            theta = trial
        if degree * mu <= gap * total:
            message = 'converged'
            break
        mu *= 0.1
    data = float(max(theta @ A @ theta - 2.0 * b @ theta + c, 0.0))
    return PhysicalFit(theta, iterations, data, weight, message, scale)
