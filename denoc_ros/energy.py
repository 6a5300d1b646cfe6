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
Energy, momentum and centre of mass of the whole robot, body by body.

Craig's Lagrangian quantities (seed 002, ch. 6): the kinetic energy of link ``i``
``k_i = 1/2 m_i v_Ci . v_Ci + 1/2 w_i . I_i w_i`` and the potential energy
``u_i = -m_i g . C_i``. They are summed from the velocity of each mass centre and the angular
velocity of each body, given by the compiled forward recursion
(:func:`denoc_ros.dynamics.kinematics.body_states_batch`: poses and twists, Saha Eq. 12), not
from the mass matrix, so that ``kinetic_energy == 1/2 qd^T M(q) qd`` is an independent check of
:func:`denoc_ros.mass_matrix`.

Every vector is expressed in the base frame of a fixed-base model, in the world frame of a
floating-base one (whose base, body 0, counts like any other body); the angular momentum is
taken about that frame's origin. ``q`` (..., nq), ``qd`` (..., nv) may carry leading batch
axes: they give ``(...)`` for energies and ``(..., 3)`` for vectors.
"""

import numpy as np

from .dynamics._packed import packed
from .dynamics._state import finish, kernel_arrays, prepare
from .dynamics.kinematics import body_states_batch
from .errors import InputError


def body_states(model, q, qd=None):
    """
    Return per-body ``R``, mass centre ``c``, and if ``qd`` is given ``w`` and ``v_c``.

    One call of the compiled kernel for the batch ``B`` of checked states ``q`` (B, nq),
    ``qd`` (B, nv): ``R`` (B, nb, 3, 3) body orientations, ``c`` (B, nb, 3) mass-centre
    positions, ``w`` (B, nb, 3) angular velocities and ``v_c`` (B, nb, 3) mass-centre
    velocities, base (fixed) or world (floating) axes; ``nb = model.nbodies``.
    """
    pk = packed(model)
    size = q.shape[0]
    (q, qd), _ = kernel_arrays(model, (q, np.zeros((size, pk.nv)) if qd is None else qd))
    R = np.empty((size, pk.nb, 9))
    c = np.empty((size, pk.nb, 3))
    t = np.empty((size, pk.nb, 6))
    body_states_batch(pk.ints, pk.reals, q, qd, R, c, t)
    return R.reshape(size, pk.nb, 3, 3), c, t[..., :3], t[..., 3:]


def kinetic_energy(model, q, qd):
    """
    Return ``T = sum_i (1/2 m_i |v_Ci|^2 + 1/2 w_i . I_i w_i)`` (Craig ch. 6), shape (...).

    Computed from each body's twist and inertia, not from the mass matrix.
    """
    batch, (q, qd), _ = prepare(model, (('q', q), ('qd', qd)))
    R, _, w, vc = body_states(model, q, qd)
    w_body = np.einsum('bnji,bnj->bni', R, w)         # angular velocity in body axes
    rot = np.einsum('bni,nij,bnj->b', w_body, model.inertia, w_body)
    trans = np.einsum('n,bni,bni->b', model.mass, vc, vc)
    return finish(batch, 0.5 * (rot + trans), 'kinetic_energy')


def potential_energy(model, q):
    """
    Return ``U = -sum_i m_i g . C_i`` (Craig ch. 6), shape (...).

    The zero level passes through the base origin (the world origin for a floating base).
    """
    batch, (q,), _ = prepare(model, (('q', q),))
    _, c, _, _ = body_states(model, q)
    u = -np.einsum('n,bni,i->b', model.mass, c, model.gravity)
    return finish(batch, u, 'potential_energy')


def total_energy(model, q, qd):
    """Return the mechanical energy ``T + U`` (kinetic plus gravitational), shape (...)."""
    return kinetic_energy(model, q, qd) + potential_energy(model, q)


def momentum(model, q, qd):
    """
    Return ``(p, h)``: linear momentum and angular momentum about the base origin, each (..., 3).

    ``p = sum_i m_i v_Ci``; ``h = sum_i (C_i x m_i v_Ci + I_i w_i)``, base-frame axes (for a
    floating-base model: world axes, about the world origin, the base included).
    """
    batch, (q, qd), _ = prepare(model, (('q', q), ('qd', qd)))
    R, c, w, vc = body_states(model, q, qd)
    mv = model.mass[None, :, None] * vc
    p = mv.sum(axis=1)
    w_body = np.einsum('bnji,bnj->bni', R, w)
    spin = np.einsum('bnij,njk,bnk->bni', R, model.inertia, w_body)   # R I R^T w
    h = (np.cross(c, mv) + spin).sum(axis=1)
    return finish(batch, p, 'linear momentum'), finish(batch, h, 'angular momentum')


def center_of_mass(model, q):
    """
    Return the centre of mass ``sum_i m_i C_i / sum_i m_i`` of the bodies, (..., 3).

    The moving bodies of a fixed-base model (base frame); the base and every body of a
    floating-base one (world frame).
    """
    batch, (q,), _ = prepare(model, (('q', q),))
    total = float(np.sum(model.mass))
    if not total > 0.0:
        raise InputError(f'the model {model.name!r} has no mass: its centre of mass is undefined')
    _, c, _, _ = body_states(model, q)
    com = np.einsum('n,bni->bi', model.mass, c) / total
    return finish(batch, com, 'center_of_mass')
