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
Free-floating-base dynamics in SpaceDyn's terms (seed 003), over the one :class:`RobotModel`.

The system equation of seed 003 (Eq. 1)::

    [H_b    H_bm] [a_b]   [c_b]   [F_b  ]
    [H_bm^T H_m ] [qdd] + [c_m] = [tau_m]

with ``H_b`` (6x6), ``H_bm`` (6xn), ``H_m`` (nxn), non-linear terms ``c_b``, ``c_m`` (Coriolis,
centrifugal and gravity), base wrench ``F_b`` and joint forces ``tau_m``.

A floating base is one more joint type of the library's model: ``load_floating_base(source)``
is ``dr.load_urdf(source, floating_base=True)`` (body 0 = the root link and the links welded
to it, on a free-flyer joint), and every function here is a thin layer over
:mod:`denoc_ros.dynamics` (``H`` is ``dr.mass_matrix``, ``c`` and the base wrench
``dr.inverse_dynamics``, the accelerations ``dr.forward_dynamics``), :mod:`denoc_ros.energy`
(centre of mass, momentum) and :mod:`denoc_ros.simulation` (RK4 on the Lie group). It names
the seed's blocks and quantities; no algorithm is implemented twice.

Conventions (Pinocchio's free-flyer joint, so numbers compare directly; see
:class:`~denoc_ros.RobotModel`)
---------------------------------------------------------------------------------------------
* Configuration ``q`` (7 + n): base position in the world (3), base orientation as a unit
  quaternion in the order **x y z w** (4; its norm must be 1 within 1e-3, it is then
  normalised), joint positions (n, ``model.joint_names`` order).
* Velocity ``v`` (6 + n): base linear velocity (3) and base angular velocity (3), **both in the
  base-local frame** (linear: velocity of the base frame origin), then joint rates (n).
  Accelerations ``a`` are the time derivatives of ``v``. Generalized forces ``tau`` (6 + n):
  base wrench ``[force; torque about the base origin]`` in the base frame, then joint forces.
* Spatial vectors are ordered ``[linear; angular]``. Gravity (``model.gravity``) is in the
  world frame.
* External wrenches: ``f_ext`` (n, 6) on the joints' bodies and ``f_base`` (6,) on the base,
  each ``[force; torque about the body frame origin]`` in that body's own frame; or ``f_ext``
  (n + 1, 6) with row 0 the base, as :func:`denoc_ros.inverse_dynamics` takes it.
* Momentum: world axes, ``[linear; angular]``, angular about the system centre of mass
  (``about='com'``, Pinocchio's centroidal momentum ``hg``) or the world origin.
* End-effector twists (Jacobians, Generalized Jacobian Matrix): ``[linear velocity of the frame
  origin; angular velocity]``, world axes (Pinocchio's ``LOCAL_WORLD_ALIGNED``).

Every function but :func:`neutral_configuration` and :func:`simulate_floating` takes leading
batch axes as the dynamics functions do (``q`` (..., 7 + n), ``v`` (..., 6 + n)).
"""

from dataclasses import dataclass
import math
from typing import NamedTuple

import numpy as np

from .dynamics import forward_dynamics, frame_pose, inverse_dynamics, jacobian, mass_matrix
from .dynamics._state import _as_float_array, _check_finite, check_model, joint_vector
from .dynamics.aba import cholesky_factor
from .energy import center_of_mass, momentum
from .errors import InputError, URDFError
from .model import RobotModel
from .simulation import simulate
from .spatial import free_flyer_rate, integrate_free_flyer, quaternion_to_matrix
from .urdf import load_urdf

__all__ = [
    'configuration_rate', 'FloatingBaseModel', 'FloatingInertia', 'FloatingSimulation',
    'floating_forward_dynamics', 'floating_inertia_matrices', 'floating_inverse_dynamics',
    'floating_jacobian', 'floating_mass_matrix', 'floating_nonlinear_terms',
    'frame_placement', 'free_floating_inverse_dynamics', 'generalized_jacobian',
    'integrate_configuration', 'load_floating_base', 'neutral_configuration',
    'quaternion_to_matrix', 'simulate_floating', 'system_center_of_mass', 'system_momentum',
]

FloatingBaseModel = RobotModel
"""
A floating-base model is a :class:`~denoc_ros.RobotModel` whose body 0 is on a free flyer.

Kept as a name for code written against the former separate class. What it held is now in the
model's arrays: the base's mass, centre of mass and inertia are ``mass[0]``, ``com[0]``,
``inertia[0]``; the bodies below it are ``1 .. n`` (``model.joint_bodies``); ``floating`` is
True, ``nq = 7 + n``, ``nv = 6 + n``.
"""


# ---------------------------------------------------------------------------------------------
# Model and configurations
# ---------------------------------------------------------------------------------------------

def load_floating_base(source, gravity=(0.0, 0.0, -9.81)):
    """
    Build a floating-base model from a URDF path or XML string: the root link floats freely.

    ``dr.load_urdf(source, floating_base=True, gravity=gravity)``: every revolute, continuous
    and prismatic joint is a degree of freedom, fixed joints are lumped, and the base body is
    the root link plus every link welded to it (inertials combined exactly). ``gravity`` is in
    the world frame. Raises URDFError if the base body has no mass (a free-floating base needs
    one, as SpaceDyn's does).
    """
    model = load_urdf(source, gravity=gravity, floating_base=True)
    if not model.mass[0] > 0.0:
        raise URDFError(f'base link {model.base_link!r}: a floating base needs a positive mass '
                        f'(mass {float(model.mass[0])!r})')
    return model


def _floating(model):
    """Raise InputError unless ``model`` is a floating-base RobotModel."""
    check_model(model)
    if not model.floating:
        raise InputError(f'model {model.name!r} has a fixed base: load it with '
                         'load_floating_base(source) or load_urdf(source, floating_base=True)')


def neutral_configuration(model):
    """Return q with the base at the origin, identity orientation, and every joint at 0."""
    _floating(model)
    q = np.zeros(model.nq)
    q[6] = 1.0
    return q


def frame_placement(model, q, frame=None):
    """Return ``(R, p)``: orientation and origin in the world of a link frame (default: tip)."""
    _floating(model)
    return frame_pose(model, q, frame)


def configuration_rate(model, q, v):
    """Return dq/dt (7 + n): p' = R v_lin, quaternion' = quaternion (x) [w/2; 0], joints' = qd."""
    _floating(model)
    return free_flyer_rate(joint_vector(model, 'q', q), joint_vector(model, 'v', v))


def integrate_configuration(model, q, v, dt=1.0):
    """
    Return the configuration reached from ``q`` moving at constant ``v`` for ``dt``.

    The base moves along the SE(3) exponential of its body twist ``v[:6] dt`` (Pinocchio's
    ``integrate`` on the free-flyer); the joints by ``v[6:] dt``. The quaternion is normalised.
    """
    _floating(model)
    return integrate_free_flyer(joint_vector(model, 'q', q), joint_vector(model, 'v', v), dt)


def _joint_forces(model, name, value):
    """Return an (..., n) joint-space argument checked (length n, finite)."""
    arr = _as_float_array(name, value)
    if arr.ndim == 0 or arr.shape[-1] != model.dof:
        raise InputError(f'{name} has shape {arr.shape}, expected (..., {model.dof}): one value '
                         f'per joint ({", ".join(model.joint_names)})')
    _check_finite(name, arr)
    return arr


def _wrenches(model, f_ext, f_base):
    """Return the (..., n + 1, 6) wrenches of dr.inverse_dynamics (None if both are None)."""
    if f_ext is None and f_base is None:
        return None
    n = model.dof
    if f_ext is not None:
        f_ext = _as_float_array('f_ext', f_ext)
        if f_base is None and f_ext.shape[-2:] == (n + 1, 6):
            return f_ext  # already with the base's row 0
        if f_ext.ndim < 2 or f_ext.shape[-2:] != (n, 6):
            raise InputError(f'f_ext has shape {f_ext.shape}, expected (..., {n}, 6): one wrench '
                             '[force; torque] per joint body, body frame (the base: f_base), or '
                             f'(..., {n + 1}, 6) with row 0 the base')
        _check_finite('f_ext', f_ext)
    if f_base is not None:
        f_base = _as_float_array('f_base', f_base)
        if f_base.ndim == 0 or f_base.shape[-1] != 6:
            raise InputError(f'f_base has shape {f_base.shape}, expected (..., 6): the wrench '
                             '[force; torque about the base origin] on the base, base frame')
        _check_finite('f_base', f_base)
    base = np.zeros((1, 6)) if f_base is None else f_base[..., None, :]
    bodies = np.zeros((n, 6)) if f_ext is None else f_ext
    batch = np.broadcast_shapes(base.shape[:-2], bodies.shape[:-2])
    return np.concatenate((np.broadcast_to(base, batch + (1, 6)),
                           np.broadcast_to(bodies, batch + (n, 6))), axis=-2)


# ---------------------------------------------------------------------------------------------
# Dynamics
# ---------------------------------------------------------------------------------------------

class FloatingInertia(NamedTuple):
    """The blocks of the system inertia matrix (seed 003, Eq. 1 and section 3.3)."""

    H_b: np.ndarray   # (..., 6, 6) base
    H_bm: np.ndarray  # (..., 6, n) base-joint coupling
    H_m: np.ndarray   # (..., n, n) joints

    @property
    def H(self) -> np.ndarray:
        """Return the full (6 + n) x (6 + n) matrix [[H_b, H_bm], [H_bm^T, H_m]]."""
        top = np.concatenate((self.H_b, self.H_bm), axis=-1)
        bottom = np.concatenate((np.swapaxes(self.H_bm, -1, -2), self.H_m), axis=-1)
        return np.concatenate((top, bottom), axis=-2)


def floating_inertia_matrices(model, q):
    """Return H_b, H_bm, H_m (seed 003, Eq. 1): the blocks of ``dr.mass_matrix`` (CRBA)."""
    H = floating_mass_matrix(model, q)
    return FloatingInertia(H[..., :6, :6], H[..., :6, 6:], H[..., 6:, 6:])


def floating_mass_matrix(model, q):
    """Return the full (6 + n) x (6 + n) system inertia matrix H (seed 003, Eq. 1)."""
    _floating(model)
    return mass_matrix(model, q)


def floating_inverse_dynamics(model, q, v, a, f_ext=None, f_base=None):
    """
    Return ``tau = H a + c - J^T f`` (6 + n): base wrench then joint forces (RNEA, seed 003 s. 4).

    ``tau[:6]`` is the wrench ``[force; torque about the base origin]`` in the base frame that
    the base needs to move with acceleration ``a[:6]``; zero for a truly free-floating system.
    """
    _floating(model)
    return inverse_dynamics(model, q, v, a, _wrenches(model, f_ext, f_base))


def floating_nonlinear_terms(model, q, v):
    """Return ``c = [c_b; c_m]`` (6 + n): Coriolis, centrifugal and gravity (seed 003, Eq. 1)."""
    _floating(model)
    return inverse_dynamics(model, q, v, np.zeros(np.shape(v)))


def floating_forward_dynamics(model, q, v, tau, f_ext=None, f_base=None):
    """
    Return ``a`` (6 + n) solving ``H a + c = tau + J^T f`` by the articulated-body algorithm.

    ``tau``: ``(6 + n,)`` (base wrench in the base frame, then joint forces, as Pinocchio's
    ``aba``) or ``(n,)`` joint forces only (free floating: no base wrench).
    """
    _floating(model)
    return forward_dynamics(model, q, v, _generalized_forces(model, tau),
                            _wrenches(model, f_ext, f_base))


def _generalized_forces(model, tau):
    """Return ``tau`` with a zero base wrench put in front if it holds joint forces only."""
    if np.ndim(tau) > 0 and np.shape(tau)[-1] == model.dof:
        tau = _joint_forces(model, 'tau', tau)
        return np.concatenate((np.zeros(tau.shape[:-1] + (6,)), tau), axis=-1)
    return tau


def free_floating_inverse_dynamics(model, q, v, qdd, f_ext=None, f_base=None):
    """
    Return ``(tau_m, a_b)``: joint forces giving joint accelerations ``qdd`` with no base wrench.

    From seed 003 Eq. 1 with ``F_b = 0``: ``a_b = -H_b^-1 (H_bm qdd + c_b)`` and
    ``tau_m = H_bm^T a_b + H_m qdd + c_m`` (computed-torque control of a free-floating robot).
    """
    qdd = _joint_forces(model, 'qdd', qdd)
    blocks = floating_inertia_matrices(model, q)
    c = floating_inverse_dynamics(model, q, v, np.zeros(np.shape(v)), f_ext, f_base)
    rhs = np.einsum('...ij,...j->...i', blocks.H_bm, qdd) + c[..., :6]
    a_b = -np.linalg.solve(_checked_base_inertia(model, blocks.H_b), rhs[..., None])[..., 0]
    tau_m = (np.einsum('...ji,...j->...i', blocks.H_bm, a_b)
             + np.einsum('...ij,...j->...i', blocks.H_m, qdd) + c[..., 6:])
    return tau_m, a_b


# ---------------------------------------------------------------------------------------------
# Centre of mass, momentum, Jacobians
# ---------------------------------------------------------------------------------------------

def system_center_of_mass(model, q):
    """Return the centre of mass of the whole system (world frame), seed 003's r_g."""
    _floating(model)
    return center_of_mass(model, q)


def system_momentum(model, q, v, about='com'):
    """
    Return the total momentum ``[linear; angular]`` (6,), world axes (seed 003, H v rows 0-5).

    ``about='com'``: angular momentum about the system centre of mass (Pinocchio's centroidal
    momentum ``hg``); ``about='origin'``: about the world origin. Both are conserved when no
    external force acts (zero gravity); with zero momentum the centre of mass stays put.
    """
    if about not in ('com', 'origin'):
        raise InputError(f"about must be 'com' or 'origin', not {about!r}")
    _floating(model)
    linear, angular = momentum(model, q, v)  # angular about the world origin
    if about == 'com':
        angular = angular - np.cross(center_of_mass(model, q), linear)
    return np.concatenate((linear, angular), axis=-1)


def floating_jacobian(model, q, frame=None):
    """
    Return J (6, 6 + n) with ``[v_frame; w] = J v`` (world axes; seed 003, J_t and J_r).

    ``J[:, :6]`` is the base part J_b, ``J[:, 6:]`` the joint part J_m. ``frame``: a link name,
    default the model's tip link.
    """
    _floating(model)
    return jacobian(model, q, frame)


def generalized_jacobian(model, q, frame=None):
    """
    Return the Generalized Jacobian Matrix J* = J_m - J_b H_b^-1 H_bm (6, n).

    For a free-floating system with zero momentum, the frame's twist (world axes) is
    ``J* qd``: the base reaction is built in.
    """
    J = floating_jacobian(model, q, frame)
    blocks = floating_inertia_matrices(model, q)
    return J[..., 6:] - J[..., :6] @ np.linalg.solve(_checked_base_inertia(model, blocks.H_b),
                                                     blocks.H_bm)


def _checked_base_inertia(model, H_b):
    """Return ``H_b``; InputError naming the floating base if it is singular (no mass on it)."""
    cholesky_factor(model, np.reshape(H_b, (-1, 6, 6)))
    return H_b


# ---------------------------------------------------------------------------------------------
# Simulation
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class FloatingSimulation:
    """A simulated trajectory: times ``t`` (N,), configurations ``q`` (N, 7+n), ``v`` (N, 6+n)."""

    t: np.ndarray
    q: np.ndarray
    v: np.ndarray


def simulate_floating(model, q0, v0, duration, dt, tau=None, f_ext=None, f_base=None):
    """
    Integrate the motion with steps ``dt`` by :func:`denoc_ros.simulate` (method ``'rk4'``).

    That is RK4 on the Lie group (:func:`denoc_ros.simulation.rk4` with
    :func:`integrate_configuration`): the quaternion stays of unit length. The run ends at the
    first multiple of ``dt`` at or past ``duration``. ``tau``: None (no actuation), a constant
    array or a callable ``tau(t, q, v)``, returning ``(n,)`` joint forces (free floating) or
    ``(6 + n,)`` with a base wrench first. ``f_ext`` (n, 6) and ``f_base`` (6,) are constant
    external wrenches (body frames).
    """
    _floating(model)
    q0, v0 = joint_vector(model, 'q0', q0), joint_vector(model, 'v0', v0)
    if not (math.isfinite(duration) and math.isfinite(dt)) or duration < 0.0 or dt <= 0.0:
        raise InputError(f'need duration >= 0 and dt > 0, got {duration!r} and {dt!r}')
    steps = int(math.ceil(duration / dt - 1e-9))
    if steps == 0:
        return FloatingSimulation(np.zeros(1), integrate_free_flyer(q0, v0, 0.0)[None],
                                  np.array(v0, dtype=float)[None])
    run = simulate(model, q0, v0, steps * dt, dt=dt, tau=tau, method='rk4',
                   f_ext=_wrenches(model, f_ext, f_base))
    return FloatingSimulation(run.t, run.q, run.qd)
