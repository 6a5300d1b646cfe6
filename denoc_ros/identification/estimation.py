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
``b_j = W_j^T tau_j`` and ``c_j = tau_j^T tau_j`` over the samples.

* :func:`least_squares` -- ordinary least squares on the base parameters, then weighted
  least squares with each joint's rows weighted by ``1 / sigma_j``, ``sigma_j`` the joint's
  residual spread under OLS (Gautier & Khalil; Swevers et al. 1997). The covariance
  ``sigma^2 (W_b^T W_b)^-1`` (OLS) or ``(W_b^T S^-2 W_b)^-1`` (WLS) gives each base
  parameter's relative standard deviation in percent; the condition number is that of
  ``W_b``, ``sqrt(cond(W_b^T W_b))``.
* :func:`physically_consistent` -- all standard parameters at once, every body a real rigid
  body: its 4x4 pseudo-inertia ``J = [[Sigma, h], [h^T, m]]`` (``Sigma = tr(I)/2 1 - I``,
  inertia ``I`` and ``h = m c`` about the frame origin) is ``U U^T`` with ``U`` upper
  triangular with a positive diagonal, written in log-Cholesky coordinates (Rucker & Wensing
  2022: ``U_kk = exp(.)``), so that ``J`` is positive definite for every value: mass
  positive, inertia about the centre of mass positive definite and within the triangle
  inequalities. Friction coefficients and rotor inertias are bounded below by zero. A weak
  prior pulls towards the nominal (URDF) values, which keeps the directions the data cannot
  see at their nominal values. A Gauss-Newton type solver (SciPy's trust-region reflective
  ``least_squares``) gets the exact Jacobian of the map from log-Cholesky coordinates to
  parameters.
"""

from dataclasses import dataclass

import numpy as np

from ..errors import DataError

__all__ = ['NormalEquations', 'LeastSquaresFit', 'least_squares', 'physically_consistent',
           'PhysicalFit', 'log_cholesky', 'parameters_from_log_cholesky']


class NormalEquations:
    """Per-joint normal equations of ``W theta = tau``, accumulated chunk by chunk."""

    def __init__(self, n, p):
        self.n, self.p = n, p
        self.A = np.zeros((n, p, p))
        self.b = np.zeros((n, p))
        self.c = np.zeros(n)
        self.count = 0
        self.tau_sum = np.zeros(n)
        self.tau_min = np.full(n, np.inf)
        self.tau_max = np.full(n, -np.inf)

    def add(self, W, tau):
        """Add samples: ``W`` (B, n, p) full regressors, ``tau`` (B, n) measured efforts."""
        W = np.asarray(W, dtype=float)
        tau = np.asarray(tau, dtype=float)
        if W.shape[1:] != (self.n, self.p) or tau.shape != W.shape[:2]:
            raise DataError(f'normal equations: regressor {W.shape} and efforts {tau.shape} do '
                            f'not fit (..., {self.n}, {self.p})')
        # One contiguous (n, B, p) copy: each joint's rows then go to BLAS without strides.
        Wt = np.ascontiguousarray(W.transpose(1, 0, 2))
        self.A += np.matmul(Wt.transpose(0, 2, 1), Wt)
        self.b += np.matmul(Wt.transpose(0, 2, 1), np.ascontiguousarray(tau.T)[:, :, None])[..., 0]
        self.c += np.einsum('bj,bj->j', tau, tau)
        self.count += W.shape[0]
        if tau.shape[0]:
            self.tau_sum += tau.sum(axis=0)
            self.tau_min = np.minimum(self.tau_min, tau.min(axis=0))
            self.tau_max = np.maximum(self.tau_max, tau.max(axis=0))

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


@dataclass(frozen=True)
class LeastSquaresFit:
    """Base parameters by least squares, with their spread and the problem's conditioning."""

    beta: np.ndarray            # (r,) base parameters
    sigma_percent: np.ndarray   # (r,) relative standard deviation of each, in %
    condition: float            # condition number of the (weighted) base regressor
    joint_sigma: np.ndarray     # (n,) residual standard deviation per joint (OLS)
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

    Raises DataError if the data leave the base regressor rank-deficient.
    """
    idx = base.independent
    n = normal.n
    rows = normal.count * n
    r = idx.size
    if rows <= r:
        raise DataError(f'{normal.count} samples of {n} joints cannot determine {r} base '
                        'parameters')
    A, b, _ = normal.combined()
    Ab, bb = A[np.ix_(idx, idx)], b[idx]
    beta, _ = _solve_spd(Ab, bb, 'least squares')
    theta = np.zeros(normal.p)
    theta[idx] = beta
    per_joint = normal.residual_squares(theta)
    joint_sigma = np.sqrt(per_joint / max(normal.count - r / n, 1.0))
    if weighted and np.all(joint_sigma > 0.0):
        weights = 1.0 / joint_sigma
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
# Log-Cholesky parametrisation of one body (Rucker & Wensing 2022)

def _pseudo_inertia(p):
    """Return the 4x4 pseudo-inertia of ten parameters [m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]."""
    m, h = p[0], p[1:4]
    inertia = np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(inertia) * np.eye(3) - inertia
    J[:3, 3] = J[3, :3] = h
    J[3, 3] = m
    return J


def _parameters_of_pseudo_inertia(J):
    """Return the ten parameters of a 4x4 pseudo-inertia (inverse of _pseudo_inertia)."""
    S = J[:3, :3]
    inertia = np.trace(S) * np.eye(3) - S
    return np.array([J[3, 3], J[0, 3], J[1, 3], J[2, 3], inertia[0, 0], inertia[0, 1],
                     inertia[1, 1], inertia[0, 2], inertia[1, 2], inertia[2, 2]])


# U = [[e^a1, s12, s13, t1], [0, e^a2, s23, t2], [0, 0, e^a3, t3], [0, 0, 0, e^a0]], J = U U^T.
_U_ENTRIES = ((0, 0), (1, 1), (2, 2), (3, 3), (0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3))
_DIAGONAL = 4


def _upper(theta):
    U = np.zeros((4, 4))
    for k, (r, c) in enumerate(_U_ENTRIES):
        U[r, c] = np.exp(theta[k]) if k < _DIAGONAL else theta[k]
    return U


def log_cholesky(p, floor=1e-9):
    """
    Return the log-Cholesky coordinates (10,) of ten body parameters.

    A pseudo-inertia that is only semi-definite (or slightly indefinite: a URDF's rounding) is
    first lifted to eigenvalues of at least ``floor`` times its largest.
    """
    J = _pseudo_inertia(np.asarray(p, dtype=float))
    values, vectors = np.linalg.eigh(J)
    low = floor * max(values[-1], 1e-12)
    if values[0] < low:
        J = (vectors * np.maximum(values, low)) @ vectors.T
    # J = U U^T with U upper triangular: the Cholesky factor of the flipped matrix, flipped.
    flip = np.eye(4)[::-1]
    L = np.linalg.cholesky(flip @ J @ flip)
    U = flip @ L @ flip
    theta = np.empty(10)
    for k, (r, c) in enumerate(_U_ENTRIES):
        theta[k] = np.log(U[r, c]) if k < _DIAGONAL else U[r, c]
    return theta


def parameters_from_log_cholesky(theta):
    """Return ``(p (10,), dp/dtheta (10, 10))``: body parameters of log-Cholesky coordinates."""
    U = _upper(theta)
    p = _parameters_of_pseudo_inertia(U @ U.T)
    jac = np.empty((10, 10))
    for k, (r, c) in enumerate(_U_ENTRIES):
        dU = np.zeros((4, 4))
        dU[r, c] = U[r, c] if k < _DIAGONAL else 1.0
        dJ = dU @ U.T + U @ dU.T
        jac[:, k] = _parameters_of_pseudo_inertia(dJ)  # linear in J
    return p, jac


@dataclass(frozen=True)
class PhysicalFit:
    """The physically consistent standard parameters, and how the solver got there."""

    theta: np.ndarray           # (p,) standard parameters in the layout's order
    iterations: int
    cost: float                 # weighted squared residual (data part)
    prior_weight: float
    message: str


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


def physically_consistent(normal, layout, model, weights=None, prior=1e-8, max_iterations=300):
    """
    Return the :class:`PhysicalFit`: standard parameters minimising the (weighted) residual.

    Minimises ``|S (W theta - tau)|^2 + w |D (theta - theta_nominal)|^2`` over physically
    consistent bodies and non-negative friction and rotor inertia, ``S`` the per-joint
    ``weights``, ``D`` one over a typical size per parameter (kg, kg m, kg m^2 from the
    nominal model), and ``w = prior`` times the mean diagonal of ``D^-1 A D^-1`` (``A`` the
    data's normal matrix). With ``prior = 1e-8`` the prior shifts a direction the data see
    with a curvature ``k`` times below the mean by about ``1e-8 k`` of its size (negligible
    for a base regressor of condition number below 10^3), and pins the directions the data
    cannot see at their nominal values.
    """
    A, b, c = normal.combined(weights)
    p = layout.size
    nb = layout.body_size
    scale = _typical_scales(layout, model)
    nominal = np.array(layout.nominal, dtype=float)
    # |W theta - tau|^2 = |L theta - z|^2 + const with A = L^T L (eigen-decomposition).
    values, vectors = np.linalg.eigh(A)
    keep = values > 1e-14 * max(values[-1], 1e-300)
    L = np.sqrt(values[keep])[:, None] * vectors[:, keep].T
    z = (vectors[:, keep].T @ b) / np.sqrt(values[keep])
    As = A / np.outer(scale, scale)
    weight = prior * float(np.trace(As)) / p
    sqrt_w = np.sqrt(weight)
    bodies = layout.n
    extra = p - nb
    nonnegative = np.array([t in ('viscous', 'coulomb', 'armature')
                            for t in layout.joint_terms for _ in range(layout.n)], dtype=bool)

    def unpack(x):
        theta = np.empty(p)
        dtheta = np.zeros((p, x.size))
        for i in range(bodies):
            pi, jac = parameters_from_log_cholesky(x[10 * i:10 * i + 10])
            theta[10 * i:10 * i + 10] = pi
            dtheta[10 * i:10 * i + 10, 10 * i:10 * i + 10] = jac
        theta[nb:] = x[nb:]
        dtheta[nb:, nb:] = np.eye(extra)
        return theta, dtheta

    def residuals(x):
        theta, _ = unpack(x)
        return np.concatenate((L @ theta - z, sqrt_w * (theta - nominal) / scale))

    def jacobian(x):
        _, dtheta = unpack(x)
        return np.vstack((L @ dtheta, (sqrt_w / scale)[:, None] * dtheta))

    x0 = np.empty(p)
    for i in range(bodies):
        x0[10 * i:10 * i + 10] = log_cholesky(nominal[10 * i:10 * i + 10])
    x0[nb:] = nominal[nb:]
    lower = np.full(p, -np.inf)
    lower[nb:][nonnegative] = 0.0
    x0[nb:][nonnegative] = np.maximum(x0[nb:][nonnegative], 1e-9)
    with np.errstate(over='ignore', invalid='ignore'):  # a rejected trial step may overflow
        x, iterations, message = _levenberg_marquardt(residuals, jacobian, x0, lower,
                                                      max_iterations)
    theta, _ = unpack(x)
    data = float(max(theta @ A @ theta - 2.0 * b @ theta + c, 0.0))
    return PhysicalFit(theta, iterations, data, weight, message)


def _levenberg_marquardt(residuals, jacobian, x, lower, max_iterations, tol=1e-12):
    """
    Minimise ``|r(x)|^2`` for ``x >= lower`` by Levenberg-Marquardt with projected steps.

    Returns ``(x, iterations, message)``. The damping follows Nielsen's rule (gain ratio);
    a step that would cross a bound is clipped to it.
    """
    r = residuals(x)
    cost = float(r @ r)
    mu = None
    nu = 2.0
    for iteration in range(1, max_iterations + 1):
        J = jacobian(x)
        H = J.T @ J
        g = J.T @ r
        if mu is None:
            mu = 1e-6 * float(np.max(np.diag(H)))
        while True:
            step = np.linalg.solve(H + mu * np.diag(np.maximum(np.diag(H), 1e-12)), -g)
            trial = np.maximum(x + step, lower)
            step = trial - x
            r_trial = residuals(trial)
            cost_trial = float(r_trial @ r_trial) if np.all(np.isfinite(r_trial)) else np.inf
            predicted = -(2.0 * g @ step + step @ H @ step)
            rho = (cost - cost_trial) / predicted if predicted > 0.0 else -1.0
            if rho > 0.0:
                x, r = trial, r_trial
                converged = cost - cost_trial <= tol * cost
                cost = cost_trial
                mu *= max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3)
                nu = 2.0
                break
            mu *= nu
            nu *= 2.0
            if mu > 1e20:
                return x, iteration, 'stopped: no step reduces the residual'
        if converged or np.max(np.abs(step)) <= tol * (1.0 + np.max(np.abs(x))):
            return x, iteration, 'converged'
    return x, max_iterations, f'stopped after {max_iterations} iterations'
