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
Operational-space (Cartesian) dynamics of a frame: Lambda, mu, p and J_bar (Craig, seed 002).

``F = Lambda x_dd + mu + p`` with ``Lambda = (J M^-1 J^T)^-1`` (Craig's ``M_x = J^-T M J^-1``
for a square J), ``mu = Lambda (J M^-1 C qd - Jdot qd)`` and ``p = Lambda J M^-1 g``, generalised
to the pseudo-inverse (or a damped inverse) for redundant, deficient or singular J. One
compiled call evaluates J, Jdot qd, M, C qd and g (:mod:`.jacobian`, :mod:`.crba`,
:mod:`.rnea`) and the 6x6 algebra.
"""

from dataclasses import dataclass
import math
from typing import Optional, Union

import numpy as np

from . import _compile
from ._compile import all_finite, jit
from ._fast import one_state
from ._packed import packed
from ._state import kernel_arrays, prepare
from .crba import composite_inertias, generalized_inertia_matrix, IC_WIDTH, mass_matrix
from .jacobian import (jacobian, jacobian_dot_times_qd, jacobian_dot_times_qd_state,
                       jacobian_state, resolve_frame)
from .kinematics import _T, configuration_ok, frame_kinematics, KIN_WIDTH, MOT_WIDTH
from .rnea import coriolis_torques, gravity_torques, newton_euler_state
from ..errors import InputError

__all__ = ['CartesianDynamics', 'cartesian_dynamics']

# Singular values of L^-1 J^T below EPS * (largest one) are round-off: the reported condition
# number of J M^-1 J^T is capped at 1 / EPS**2 (about 2.0e31) instead of being infinite.
EPS = np.finfo(float).eps
CONDITION_CAP = 1.0 / EPS ** 2


@jit
def cartesian_terms_batch(ints, reals, q, qd, body, frame, J, Jdqd, M, h, g):
    """Write J, Jdot qd, M (Eq. 24), C qd and g (Eq. 30) of each row of (B, n) states."""
    nb, nv = ints.shape[0], qd.shape[1]
    kin, P, mot = np.empty((nb, KIN_WIDTH)), np.empty((nv, 6)), np.empty((nb, MOT_WIDTH))
    I_c = np.empty((nb, IC_WIDTH))
    zero, none = np.zeros(nv), np.zeros((0, 6))
    for b in range(q.shape[0]):
        # J as jacobian() computes it (the kinematics about the origins, frame_kinematics),
        # then newton_euler_state recomputes the kinematics of q[b]; the rest reuse them.
        frame_kinematics(ints[:body + 1], reals, q[b], kin, P)
        jacobian_state(ints, kin, P, body, frame, J[b])
        newton_euler_state(ints, reals, q[b], zero, zero, none, 1.0, kin, P, mot, g[b])
        newton_euler_state(ints, reals, q[b], qd[b], zero, none, 0.0, kin, P, mot, h[b])
        jacobian_dot_times_qd_state(ints, kin, P, mot[:, _T:_T + 6], qd[b], body, frame,
                                    Jdqd[b])
        composite_inertias(ints, reals, kin, P, I_c)  # last: they carry P to the origin
        generalized_inertia_matrix(ints, kin, P, I_c, M[b])
    if all_finite(J) and all_finite(Jdqd) and all_finite(M) and all_finite(h) \
            and all_finite(g):
        return _compile.OK
    return _compile.BAD_OUTPUT


# ----------------------------------------------------------------------------------------------
# Operational-space dynamics (Lambda, mu, p, J_bar)

@jit
def operational_space_state(J, Jdqd, M, h, g, damping, rcond, L, Y, Lam, J_bar, mu, p):
    """Write Lambda = (J M^-1 J^T)^+ (or damped), J_bar, mu, p; return (status, cond)."""
    n = M.shape[0]
    # M = L L^T (Cholesky; LAPACK potrf's test: a pivot that is not > 0 fails).
    for j in range(n):
        s = M[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return _compile.NOT_POSITIVE_DEFINITE, 0.0
        L[j, j] = math.sqrt(s)
        for i in range(j + 1, n):
            s = M[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / L[j, j]
            L[j, i] = 0.0
    # Y = L^-1 J^T (n, 6); A = J M^-1 J^T = Y^T Y = V S^2 V^T from the SVD Y = U S V^T.
    for col in range(6):
        for i in range(n):
            s = J[col, i]
            for k in range(i):
                s -= L[i, k] * Y[k, col]
            Y[i, col] = s / L[i, i]
    _, sv, Vt = np.linalg.svd(Y)
    m = sv.shape[0]
    s_max = sv[0] if m > 0 else 0.0
    lam_max = s_max * s_max
    inv = np.zeros(6)
    for k in range(m):
        lam = sv[k] * sv[k]
        if damping > 0.0:
            inv[k] = 1.0 / (lam + damping)
        elif lam > rcond * lam_max and lam > 0.0:
            inv[k] = 1.0 / lam
    if damping > 0.0:
        for k in range(m, 6):
            inv[k] = 1.0 / damping
    for i in range(6):
        for j in range(6):
            s = 0.0
            for k in range(6):
                s += Vt[k, i] * inv[k] * Vt[k, j]
            Lam[i, j] = s
    for i in range(6):
        for j in range(i + 1, 6):
            s = 0.5 * (Lam[i, j] + Lam[j, i])
            Lam[i, j] = s
            Lam[j, i] = s
    s_min = max(sv[5] if m == 6 else 0.0, EPS * s_max)
    if s_max > 0.0:
        cond = (s_max / (s_min if s_min > 0.0 else 1.0)) ** 2
        if cond > CONDITION_CAP:
            cond = CONDITION_CAP
    else:
        cond = CONDITION_CAP
    # J_bar = M^-1 J^T Lambda = L^-T (Y Lambda) (n, 6), by back substitution.
    for col in range(6):
        for i in range(n - 1, -1, -1):
            s = 0.0
            for k in range(6):
                s += Y[i, k] * Lam[k, col]
            for k in range(i + 1, n):
                s -= L[k, i] * J_bar[k, col]
            J_bar[i, col] = s / L[i, i]
    # mu = J_bar^T C qd - Lambda Jdot qd, p = J_bar^T g.
    for r in range(6):
        a = 0.0
        b = 0.0
        for i in range(n):
            a += J_bar[i, r] * h[i]
            b += J_bar[i, r] * g[i]
        for k in range(6):
            a -= Lam[r, k] * Jdqd[k]
        mu[r] = a
        p[r] = b
    return _compile.OK, cond


@jit
def cartesian_dynamics_batch(ints, reals, q, qd, body, frame, damping, rcond, J, Lam, mu, p,
                             J_bar, cond):
    """
    Write J, Lambda, mu, p, J_bar and cond(J M^-1 J^T) of each row of (B, n) states.

    Returns a status: BAD_OUTPUT unless every output is finite.
    """
    size, n = qd.shape
    for b in range(size):
        if not configuration_ok(ints, q[b]):
            return _compile.BAD_INPUT
    if not all_finite(qd):
        return _compile.BAD_INPUT
    Jdqd, M = np.empty((size, 6)), np.empty((size, n, n))
    h, g = np.empty((size, n)), np.empty((size, n))
    if cartesian_terms_batch(ints, reals, q, qd, body, frame, J, Jdqd, M, h, g) != _compile.OK:
        return _compile.BAD_OUTPUT
    L, Y = np.empty((n, n)), np.empty((n, 6))
    for b in range(size):
        status, cond[b] = operational_space_state(J[b], Jdqd[b], M[b], h[b], g[b], damping,
                                                  rcond, L, Y, Lam[b], J_bar[b], mu[b], p[b])
        if status != _compile.OK:
            return status
    if all_finite(Lam) and all_finite(J_bar) and all_finite(mu) and all_finite(p) \
            and all_finite(cond):
        return _compile.OK
    return _compile.BAD_OUTPUT


@dataclass(frozen=True, eq=False)
class CartesianDynamics:
    """
    Operational-space dynamics of one frame: ``F = Lambda x_dd + mu + p`` (Craig, seed 002).

    Arrays carry the batch axes of the state (shapes below are for a single state).
    ``jacobian`` J (6, n); ``inertia`` Lambda (6, 6); ``coriolis`` mu (6,); ``gravity`` p (6,);
    ``jacobian_bar`` J_bar = M^-1 J^T Lambda (n, 6), the dynamically consistent generalised
    inverse; ``condition_number`` of J M^-1 J^T (a float, or an array for a batch, at most
    about 2.0e31); ``frame`` the link name.
    """

    jacobian: np.ndarray
    inertia: np.ndarray
    coriolis: np.ndarray
    gravity: np.ndarray
    jacobian_bar: np.ndarray
    condition_number: Union[float, np.ndarray]
    frame: str


def _check_nonnegative(name, value):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f'{name} must be a number, got {value!r}') from None
    if not np.isfinite(x) or x < 0.0:
        raise InputError(f'{name} must be a finite number >= 0, got {value!r}')
    return x


def cartesian_dynamics(model, q, qd, frame: Optional[str] = None, damping: float = 0.0,
                       rcond: float = 1e-12):
    """
    Return the Cartesian dynamics: Lambda = (J M^-1 J^T)^-1, mu, p (Craig's M_x, V_x, G_x).

    With M the mass matrix, C qd the Coriolis/centrifugal torques and g the gravity torques:
    ``Lambda = (J M^-1 J^T)^-1``, ``mu = Lambda (J M^-1 C qd - Jdot qd)``,
    ``p = Lambda J M^-1 g``; for a square invertible J these equal Craig's
    ``J^-T M J^-1``, ``J^-T (C qd - M J^-1 Jdot qd)`` and ``J^-T g`` (seed 002).

    Inverting ``A = J M^-1 J^T`` (6 x 6, symmetric positive semi-definite): with the Cholesky
    factor ``M = L L^T``, ``A = Y^T Y`` where ``Y = L^-1 J^T``; the SVD ``Y = U S V^T`` gives
    the eigen-decomposition ``A = V S^2 V^T`` (eigenvalues ``lambda_i = s_i^2``, accurate
    even when A is badly conditioned).

    * ``damping == 0`` (default): Moore-Penrose pseudo-inverse, ``Lambda = V diag(1/lambda_i)
      V^T`` over the eigenvalues ``lambda_i > rcond * lambda_max`` and 0 on the others. Where
      A is invertible this is the inverse; for n < 6, a singular configuration or a frame
      that does not move, it is the inertia of the task subspace the frame can move in, and
      ``A Lambda A = A`` holds.
    * ``damping > 0``: the damped (Tikhonov) inverse ``Lambda = (A + damping 1)^-1``, which
      is smooth through singularities (damping has the units of A: 1/kg, 1/(kg m^2)).

    The result is always finite. ``condition_number`` is ``lambda_max / lambda_min`` of A,
    with singular values of Y below machine epsilon times the largest (round-off) taken as
    that floor, so that it is at most 1/eps^2 (about 2.0e31) instead of infinite.
    Leading batch axes of ``q`` and ``qd`` are supported.
    """
    damping = _check_nonnegative('damping', damping)
    rcond = _check_nonnegative('rcond', rcond)
    pk = one_state(model, q, qd)  # one state: one kernel call (the kernel checks the values)
    if (pk is not None and (frame is None or type(frame) is str) and frame in pk.frames
            and q.shape == (pk.nq,) and qd.shape == (pk.nv,) and pk.nv > 0):
        name = model.tip_link if frame is None or frame == '' else frame
        result = _compiled(pk, (), np.ascontiguousarray(q)[None],
                           np.ascontiguousarray(qd)[None], pk.frames[frame], damping, rcond,
                           name)
        if result is not None:
            return result
    batch, (qf, qdf), _ = prepare(model, (('q', q), ('qd', qd)))
    fr = resolve_frame(model, frame)
    (qf, qdf), _ = kernel_arrays(model, (qf, qdf))
    pk = packed(model)
    result = _compiled(pk, batch, qf, qdf, pk.frames[fr.name], damping, rcond, fr.name)
    if result is not None:
        return result
    # An overflow: the term that overflowed raises its documented error.
    jacobian(model, q, frame), jacobian_dot_times_qd(model, q, qd, frame)
    mass_matrix(model, q), coriolis_torques(model, q, qd), gravity_torques(model, q)
    raise InputError('cartesian_dynamics is not finite for this input (overflow: joint '
                     'velocities too large for the model)')


def _not_positive_definite():
    return InputError('the mass matrix is not positive definite at this configuration (a body '
                      'without mass or inertia moves with a joint): the Cartesian inertia is '
                      'undefined')


def _compiled(pk, batch, q, qd, data, damping, rcond, name):
    """Return cartesian_dynamics of (B, ...) states by one kernel call; None on overflow."""
    size, n = qd.shape
    J, Lam, mu = np.empty((size, 6, n)), np.empty((size, 6, 6)), np.empty((size, 6))
    p, J_bar, cond = np.empty((size, 6)), np.empty((size, n, 6)), np.empty(size)
    status = cartesian_dynamics_batch(pk.ints, pk.reals, q, qd, data[0], data[1], damping,
                                      rcond, J, Lam, mu, p, J_bar, cond)
    if status == _compile.NOT_POSITIVE_DEFINITE:
        raise _not_positive_definite()
    if status != _compile.OK:
        return None
    return _result(batch, name, J, Lam, mu, p, J_bar, cond)


def _result(batch, name, J, Lam, mu, p, J_bar, cond):
    """
    Return the :class:`CartesianDynamics` of flattened (B, ...) arrays, batch axes restored.

    The kernel has checked that every array is finite (a NumPy check of the seven arrays here
    cost 15 of the 32 us of a single state).
    """
    cond = cond.reshape(batch)
    return CartesianDynamics(
        jacobian=J.reshape(batch + J.shape[1:]),
        inertia=Lam.reshape(batch + Lam.shape[1:]),
        coriolis=mu.reshape(batch + mu.shape[1:]),
        gravity=p.reshape(batch + p.shape[1:]),
        jacobian_bar=J_bar.reshape(batch + J_bar.shape[1:]),
        condition_number=float(cond) if cond.ndim == 0 else cond,
        frame=name,
    )
