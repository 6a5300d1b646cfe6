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
The excitation design's optimisation problem: variables, objective, constraints, derivatives.

:class:`_Design` holds what :func:`~.excitation.design_excitation` hands to SLSQP (the method
is :mod:`.excitation`'s docstring): the variables (coordinates in the null space of the
start-at-rest equalities, :mod:`.fourier`'s series on the design grid), the objective
``log kappa`` of the column-scaled base regressor (:func:`_log_condition`, or the payload
link's ten columns), the position, velocity and effort constraints ``1 - (x / L)^2 >= 0``,
their exact derivatives, the best feasible point evaluated, and the random start.
"""

import math

import numpy as np
import scipy.linalg

from .fourier import fourier_basis
from .parameters import inertial_parameters, joint_columns, ParameterLayout
from ..dynamics import regressor as rigid_regressor
from ..errors import InputError

DESIGN_SMOOTHING = 0.05
"""Velocity scale [rad/s or m/s] of the Coulomb columns' tanh during the design."""

POSITION_STEP = 6e-6
"""Central-difference step of the regressor's position derivatives [rad or m]."""

FEASIBILITY = 1e-6
"""Constraint violation tolerated (``1 - (x / L)^2 >= -1e-6``: ``|x| <= L (1 + 5e-7)``)."""


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
