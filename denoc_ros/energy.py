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
velocity of each body, found by an outward recursion of this module's own (not from the mass
matrix), so that ``kinetic_energy == 1/2 qd^T M(q) qd`` is an independent check of
:func:`denoc_ros.mass_matrix`.

Every vector is expressed in the base frame; the angular momentum is taken about the base
origin. ``q``, ``qd`` may carry leading batch axes: ``(..., n)`` gives ``(...)`` for energies
and ``(..., 3)`` for vectors.
"""

import numpy as np

from .dynamics._state import finish, prepare
from .errors import InputError
from .model import PRISMATIC
from .spatial import axis_rotation


def body_states(model, q, qd=None):
    """
    Return per-body ``R``, mass centre ``c``, and if ``qd`` is given ``w`` and ``v_c``.

    Outward recursion over the bodies (parents first), vectorised over the batch ``B``:
    ``R`` (B, n, 3, 3) body orientations, ``c`` (B, n, 3) mass-centre positions, ``w``
    (B, n, 3) angular velocities and ``v_c`` (B, n, 3) mass-centre velocities, all in the
    base frame. ``q``, ``qd`` have shape (B, n).
    """
    batch, n = q.shape
    R = np.empty((batch, n, 3, 3))
    o = np.empty((batch, n, 3))
    w = np.zeros((batch, n, 3))
    v = np.zeros((batch, n, 3))      # velocity of the body-frame origin
    for i in range(n):
        k = model.parent[i]
        Rk = np.broadcast_to(np.eye(3), (batch, 3, 3)) if k < 0 else R[:, k]
        ok = np.zeros((batch, 3)) if k < 0 else o[:, k]
        R_joint = np.broadcast_to(model.joint_rotation[i], (batch, 3, 3))
        R_fixed = Rk @ R_joint                        # body frame at q_i = 0
        axis = np.einsum('bij,j->bi', R_fixed, model.axis[i])   # joint axis, base frame
        o[:, i] = ok + np.einsum('bij,j->bi', Rk, model.joint_translation[i])
        if model.joint_type[i] == PRISMATIC:
            R[:, i] = R_fixed
            o[:, i] += axis * q[:, i, None]
        else:
            R[:, i] = R_fixed @ axis_rotation(model.axis[i], q[:, i])
        if qd is None:
            continue
        wk = np.zeros((batch, 3)) if k < 0 else w[:, k]
        vk = np.zeros((batch, 3)) if k < 0 else v[:, k]
        # The frame origin moves with the parent: v_i = v_k + w_k x (o_i - o_k).
        v[:, i] = vk + np.cross(wk, o[:, i] - ok)
        if model.joint_type[i] == PRISMATIC:
            w[:, i] = wk
            v[:, i] += axis * qd[:, i, None]
        else:
            w[:, i] = wk + axis * qd[:, i, None]
    d = np.einsum('bnij,nj->bni', R, model.com)      # origin to mass centre, base frame
    c = o + d
    if qd is None:
        return R, c, None, None
    return R, c, w, v + np.cross(w, d)


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
    """Return ``U = -sum_i m_i g . C_i`` (Craig ch. 6), zero level through the base origin."""
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

    ``p = sum_i m_i v_Ci``; ``h = sum_i (C_i x m_i v_Ci + I_i w_i)``, base-frame axes.
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
    """Return the centre of mass ``sum_i m_i C_i / sum_i m_i`` of the moving bodies, (..., 3)."""
    batch, (q,), _ = prepare(model, (('q', q),))
    total = float(np.sum(model.mass))
    if not total > 0.0:
        raise InputError(f'the model {model.name!r} has no mass: its centre of mass is undefined')
    _, c, _, _ = body_states(model, q)
    com = np.einsum('n,bni->bi', model.mass, c) / total
    return finish(batch, com, 'center_of_mass')
