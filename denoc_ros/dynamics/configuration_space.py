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
Craig's configuration-space form of the equations of motion (seed 002, Eq. 6).

The joint forces are written with coefficient matrices that depend on the configuration only::

    tau = M(q) qdd + B(q) [qd qd] + Cc(q) [qd^2] + G(q)

with the ``n(n-1)/2`` velocity products and the ``n`` squares, in this order::

    [qd qd] = (qd_1 qd_2, qd_1 qd_3, ..., qd_1 qd_n, qd_2 qd_3, ..., qd_{n-1} qd_n)
    [qd^2]  = (qd_1^2, qd_2^2, ..., qd_n^2)

(pairs ``(j, k)``, ``j < k``, row by row: the order of ``numpy.triu_indices(n, 1)``). Every
coefficient depends on ``q`` only -- hence "configuration space" -- so they can be tabulated
along a path and reused for any speed.

How they are computed. The Coriolis/centrifugal torque is a quadratic form in ``qd``,
``c_i(q, qd) = sum_jk Gamma_ijk qd_j qd_k`` (Christoffel symbols of the first kind,
``Gamma_ijk = Gamma_ikj``), so ``B_i,jk = 2 Gamma_ijk`` and ``Cc_ij = Gamma_ijj``. They are read
off the O(n) recursion (Saha Eq. 30 without gravity, :func:`coriolis_torques`) evaluated at
unit and pairwise-sum velocity vectors::

    c(e_j)                         = Cc[:, j]
    c(e_j + e_k) - c(e_j) - c(e_k) = 2 Gamma_{:, jk} = B[:, jk]

exact (up to rounding) because ``c`` is exactly quadratic in ``qd``; no derivative of ``M`` is
taken. Cost: ``n(n+1)/2`` recursions, O(n^3) in all.
"""

import numpy as np

from ._state import finish, joint_vector, prepare
from .rnea import coriolis_torques
from ..errors import InputError


def velocity_pairs(n):
    """Return the index arrays ``(j, k)``, ``j < k``, of the entries of ``[qd qd]`` (in order)."""
    return np.triu_indices(n, 1)


def velocity_products(model, qd):
    """
    Return Craig's ``([qd qd], [qd^2])``, shapes ``(..., n(n-1)/2)`` and ``(..., n)``.

    ``[qd qd] = (qd_1 qd_2, qd_1 qd_3, ..., qd_{n-1} qd_n)`` (pairs ``j < k`` row by row, see
    :func:`velocity_pairs`) and ``[qd^2] = (qd_1^2, ..., qd_n^2)``.
    """
    qd = joint_vector(model, 'qd', qd)
    j, k = velocity_pairs(model.dof)
    return qd[..., j] * qd[..., k], qd * qd


def configuration_space_matrices(model, q):
    """
    Return Craig's ``(B(q), Cc(q))`` with ``tau = M qdd + B [qd qd] + Cc [qd^2] + G`` (Eq. 6).

    ``B``: Coriolis coefficients, shape ``(..., n, n(n-1)/2)``, columns in the order of
    :func:`velocity_products`; ``Cc``: centrifugal coefficients, ``(..., n, n)``. Read off the
    recursive Coriolis torques at unit and pairwise-sum joint velocities (module docstring).
    """
    if model.floating:
        raise InputError('configuration_space_matrices takes a fixed-base model')
    batch, (q,), _ = prepare(model, (('q', q),))
    size, n = q.shape
    j, k = velocity_pairs(n)
    pairs = len(j)
    # Velocity probes: e_0 .. e_{n-1}, then e_j + e_k for each pair (j < k).
    probes = np.zeros((n + pairs, n))
    probes[np.arange(n), np.arange(n)] = 1.0
    probes[n + np.arange(pairs), j] = 1.0
    probes[n + np.arange(pairs), k] = 1.0
    count = len(probes)
    q_rep = np.repeat(q, count, axis=0)
    qd_rep = np.tile(probes, (size, 1))
    c = coriolis_torques(model, q_rep, qd_rep).reshape(size, count, n)
    centrifugal = np.swapaxes(c[:, :n], -1, -2)                       # column j = c(e_j)
    coriolis = np.swapaxes(c[:, n:] - c[:, j] - c[:, k], -1, -2)     # column jk
    return (finish(batch, coriolis, 'configuration_space_matrices (B)'),
            finish(batch, centrifugal, 'configuration_space_matrices (Cc)'))
