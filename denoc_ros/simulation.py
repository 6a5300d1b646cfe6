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
Time integration of the equations of motion: ``qdd = forward_dynamics(q, qd, tau - tau_f)``.

The state ``x = [q; qd]`` obeys ``xd = [qd; FD(q, qd, tau(t, q, qd) - tau_f(qd), f_ext)]``
(Craig's state-space form, seed 002). Two integrators:

* ``method='rk4'``: the classical fixed-step fourth-order Runge-Kutta scheme (:func:`rk4`, the
  library's one RK4, which also integrates configurations on a Lie group, such as a
  free-flyer's; its steps: :func:`denoc_ros.dynamics.prediction.rk4_stage`); the step is
  ``dt`` (default 1 ms), shortened uniformly so that the last step lands on ``t_final``;
* ``method='solve_ivp'``: :func:`scipy.integrate.solve_ivp` with an adaptive step
  (``ivp_method``, default ``'DOP853'``, tolerances ``rtol``/``atol``); the result holds the
  solver's own steps, or the grid ``0, dt, 2 dt, ...`` when ``dt`` is given.

Joint friction (off by default) uses the model's URDF coefficients, Craig's viscous plus
Coulomb model ``tau_f = v qd + c tanh(qd / v_s)`` with the Coulomb sign smoothed over ``v_s``.

A floating-base model (``q`` of ``7 + n``, ``qd`` the velocity ``v`` of ``6 + n``) is
integrated on its Lie group: RK4 steps the configuration with the free-flyer exponential
(:func:`denoc_ros.spatial.integrate_free_flyer`, Pinocchio's ``integrate``), so the quaternion
stays of unit length; ``solve_ivp`` integrates ``dq/dt = free_flyer_rate(q, v)``, whose flow
keeps the quaternion's norm, and the quaternions of its output are normalised.
"""

from dataclasses import dataclass
import math

import numpy as np

from .dynamics import forward_dynamics
from .dynamics._state import check_model, joint_vector, wrench_array
from .dynamics.prediction import MOVES, rk4_stage
from .errors import InputError
from .friction import friction_torques
from .spatial import free_flyer_rate, integrate_free_flyer

METHODS = ('rk4', 'solve_ivp')


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """
    A simulated trajectory: times ``t`` (T,), positions ``q`` (T, nq), velocities ``qd`` (T, nv).

    ``nfev`` counts calls of the forward dynamics; ``success`` and ``message`` report whether
    the integrator reached ``t_final`` (always true for RK4).
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    method: str
    nfev: int
    success: bool = True
    message: str = ''


def _positive(name, value):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f'{name} must be a number, got {value!r}') from None
    if not (math.isfinite(x) and x > 0.0):
        raise InputError(f'{name} is {x}: it must be finite and positive')
    return x


def _input_function(model, name, value, check):
    """Return ``f(t, q, qd)`` for a constant, a callable or None (zero), checking results."""
    if value is None:
        return None
    if callable(value):
        return lambda t, q, qd: check(model, f'{name}(t={t:g}, q, qd)', value(t, q, qd))
    const = check(model, name, value)
    return lambda t, q, qd: const


def _check_tau(model, name, value):
    """Return one force vector (nv,); for a floating model also (n,): no base wrench."""
    if model.floating and np.shape(value)[-1:] == (model.dof,):
        value = np.concatenate((np.zeros(6), np.asarray(value, dtype=float).reshape(-1)))
    arr = joint_vector(model, name, value)
    if arr.shape != (model.nv,):
        raise InputError(f'{name} has shape {arr.shape}, expected ({model.nv},)')
    return arr


def _check_state(model, name, value):
    """Return one configuration (nq,) (``q0``) or velocity (nv,), checked."""
    arr = joint_vector(model, name, value)
    size = model.nq if name == 'q0' else model.nv
    if arr.shape != (size,):
        raise InputError(f'{name} has shape {arr.shape}, expected ({size},)')
    return arr


def _check_wrench(model, name, value):
    arr = wrench_array(model, name, value)
    if arr.shape != (model.nbodies, 6):
        raise InputError(f'{name} has shape {arr.shape}, expected ({model.nbodies}, 6)')
    return arr


def _friction_function(model, friction, smoothing):
    """Return ``tau_f(qd)`` or None; ``friction`` is falsy, True (URDF values) or a callable."""
    if friction is None or friction is False:
        return None
    if callable(friction):
        return lambda qd: _check_tau(model, 'friction(qd)', friction(qd))
    if friction is not True:
        raise InputError(f'friction must be None, True or a callable tau_f(qd), got {friction!r}')
    v_s = _positive('friction_smoothing', smoothing)
    return lambda qd: friction_torques(model, qd, smoothing=v_s)


def simulate(model, q0, qd0, t_final, dt=None, tau=None, method='rk4', f_ext=None,
             friction=None, friction_smoothing=1e-3, rtol=1e-9, atol=1e-12,
             ivp_method='DOP853'):
    """
    Integrate the forward dynamics from ``(q0, qd0)`` over ``[0, t_final]``.

    ``tau``: None (no joint forces), a constant (nv,) array, or a callable ``tau(t, q, qd)``
    returning (nv,); for a floating-base model also (n,): joint forces, no base wrench.
    ``f_ext``: None, a constant (nbodies, 6) array of body wrenches or a callable
    ``f_ext(t, q, qd)`` (as in :func:`denoc_ros.forward_dynamics`). ``friction``: None (off),
    True (the model's URDF damping and friction, Coulomb term smoothed over
    ``friction_smoothing`` rad/s) or a callable ``tau_f(qd)`` that opposes the motion.
    ``method``: ``'rk4'`` (fixed step ``dt``, default 1e-3 s) or ``'solve_ivp'`` (adaptive,
    ``ivp_method``, ``rtol``, ``atol``; output at every ``dt`` if given). Returns a
    :class:`SimulationResult`. A floating-base model: ``q0`` (7 + n), ``qd0`` (6 + n), see the
    module docstring.
    """
    check_model(model)
    nq, n = model.nq, model.nv
    q0 = _check_state(model, 'q0', q0)
    qd0 = _check_state(model, 'qd0', qd0)
    t_final = _positive('t_final', t_final)
    if method not in METHODS:
        raise InputError(f'unknown method {method!r}; choose one of {", ".join(METHODS)}')
    torque = _input_function(model, 'tau', tau, _check_tau)
    wrench = _input_function(model, 'f_ext', f_ext, _check_wrench)
    friction_torque = _friction_function(model, friction, friction_smoothing)
    zero = np.zeros(n)
    count = [0]

    def acceleration(t, q, qd):
        applied = zero if torque is None else torque(t, q, qd)
        if friction_torque is not None:
            applied = applied - friction_torque(qd)
        count[0] += 1
        return forward_dynamics(model, q, qd, applied,
                                None if wrench is None else wrench(t, q, qd))

    if method == 'rk4':
        h = 1e-3 if dt is None else _positive('dt', dt)
        steps = max(1, math.ceil(t_final / h - 1e-9))
        t, q, qd = rk4(acceleration, q0, qd0, t_final, steps,
                       integrate_free_flyer if model.floating else None)
        return SimulationResult(t=t, q=q, qd=qd, method='rk4', nfev=count[0])

    def rate(t, x):
        q, qd = x[:nq], x[nq:]
        if not model.floating:
            return np.concatenate((qd, acceleration(t, q, qd)))
        q = q.copy()
        q[3:7] /= np.linalg.norm(q[3:7])  # the solver's stages drift off the unit sphere a little
        return np.concatenate((free_flyer_rate(q, qd), acceleration(t, q, qd)))

    t_eval = None
    if dt is not None:
        h = _positive('dt', dt)
        t_eval = np.append(np.arange(0.0, t_final - 1e-9 * h, h), t_final)
    from scipy.integrate import solve_ivp  # here: SciPy's import costs every process 0.5 s
    sol = solve_ivp(rate, (0.0, t_final), np.concatenate((q0, qd0)), method=ivp_method,
                    t_eval=t_eval, rtol=_positive('rtol', rtol), atol=_positive('atol', atol))
    q = sol.y[:nq].T.copy()
    if model.floating:
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=1, keepdims=True)
    return SimulationResult(t=sol.t, q=q, qd=sol.y[nq:].T.copy(),
                            method=f'solve_ivp/{ivp_method}', nfev=count[0],
                            success=bool(sol.success), message=str(sol.message))


def rk4(acceleration, q0, v0, t_final, steps, integrate=None):
    """
    Return ``(t, q, v)`` after ``steps`` fourth-order Runge-Kutta steps of ``h = t_final/steps``.

    Integrates ``dq/dt = v`` (in the sense of ``integrate``), ``dv/dt = acceleration(t, q, v)``
    from ``(q0, v0)`` at ``t = 0``; returns the times ``t`` (steps + 1,) and the states ``q``
    (steps + 1, nq), ``v`` (steps + 1, nv) at them, the initial state first.

    The steps are the library's one RK4 scheme, :func:`denoc_ros.dynamics.prediction.rk4_stage`
    (Craig's state-space form, seed 002; the compiled ``prediction_one`` takes the same steps):
    four calls of ``acceleration`` and five of ``integrate`` a step. ``integrate(q, v, dt)``
    maps a configuration and a velocity held for ``dt`` to the new configuration; None
    (default): a vector space, ``q + v dt``, where the scheme is the classical RK4. Otherwise
    ``q`` lives on a Lie group (e.g. the free-flyer's ``q`` of 7 + n entries with its unit
    quaternion and ``v`` of 6 + n) and ``integrate`` must be the exponential map of the
    body-frame velocity, ``q exp(v dt)`` (Pinocchio's ``integrate``, as
    :func:`denoc_ros.spatial.integrate_free_flyer`); ``v`` and ``acceleration`` are vectors in
    that velocity space, and the scheme is the commutator-free Lie-group method of order 4 on
    the classical tableau (Celledoni, Marthinsen and Owren 2003, "CF4").
    """
    h = t_final / steps
    t = np.linspace(0.0, t_final, steps + 1)
    q0, v0 = np.asarray(q0, dtype=float), np.asarray(v0, dtype=float)
    q = np.empty((steps + 1,) + q0.shape)
    v = np.empty((steps + 1,) + v0.shape)
    q[0], v[0] = q0, v0
    if integrate is None:
        integrate = _vector_step
    configurations = [None] * (MOVES + 1)
    for k in range(steps):
        # Fresh stage arrays each step: what acceleration and integrate are given stays as given.
        V, A = np.empty((MOVES,) + v0.shape), np.empty((MOVES - 1,) + v0.shape)
        configurations[0], V[0] = q[k], v[k]
        A[0] = acceleration(t[k], q[k], V[0])
        for move in range(1, MOVES + 1):
            u = np.empty(v0.shape)
            start, dt, c = rk4_stage(move, h, V, A, u)
            configurations[move] = integrate(configurations[start], u, dt)
            if move < MOVES - 1:
                A[move] = acceleration(t[k] + c * h, configurations[move], V[move])
        q[k + 1] = configurations[MOVES]
        v[k + 1] = V[MOVES - 1]
    return t, q, v


def _vector_step(q, v, dt):
    """Return ``q + v dt``: a configuration in a vector space moved at ``v`` for ``dt``."""
    return q + v * dt
