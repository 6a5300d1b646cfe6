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
Base parameters: the combinations of standard parameters that joint torques can reveal.

The full regressor ``W`` (``[Y | joint columns]``, :class:`.parameters.ParameterLayout`) has
dependent columns: a parameter that never moves any joint torque (the first link's mass on a
vertical axis) and groups that act only together (a link's ``m`` with the next link's
inertia about a joint axis). The reduction is numerical (Gautier 1991): stack ``W`` over
random states, factor it by QR with column pivoting ``W E = Q [R1 R2]``, take the rank ``r``
from the diagonal of ``R1``, and with the regrouping matrix ``base_map = R1^-1 R2`` the base
parameters are

    beta = pi_b + base_map pi_d,      W pi = W_b beta       (for every state)

where ``pi_b`` are the ``r`` independent (pivot) columns' parameters and ``pi_d`` the others.
Row ``k`` of ``[1 | base_map]`` is the readable relation of base parameter ``k``: which standard
parameters it sums, with what factors (factors below ``1e-10`` of the largest are dropped).
"""

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from .estimation import sensed_mask
from ..errors import InputError

__all__ = ['BaseParameters', 'base_parameters']


@dataclass(frozen=True)
class BaseParameters:
    """
    The base-parameter reduction of a :class:`.parameters.ParameterLayout`.

    ``independent`` (r,) and ``dependent`` indices into the layout's columns; ``projection``
    (r, p) maps standard parameters to base parameters (``beta = projection @ theta``);
    ``relations[k]``: ``((name, factor), ...)`` of base parameter ``k``, its own column first.
    """

    names: Tuple[str, ...]
    independent: np.ndarray
    dependent: np.ndarray
    projection: np.ndarray
    relations: Tuple[Tuple[Tuple[str, float], ...], ...]

    @property
    def rank(self):
        """Return the number of base parameters."""
        return int(self.independent.size)

    def __call__(self, theta):
        """Return the base parameters ``projection @ theta`` of standard parameters."""
        return self.projection @ np.asarray(theta, dtype=float)

    def columns(self, W):
        """Return the base regressor: the independent columns of ``W`` (..., p)."""
        return W[..., self.independent]

    def relation_text(self, k, digits=6):
        """Return base parameter ``k``'s relation as text, e.g. ``l2.Izz + 0.0625 l3.m``."""
        parts = []
        for name, factor in self.relations[k]:
            if abs(factor - 1.0) < 1e-9:
                term = name
            elif abs(factor + 1.0) < 1e-9:
                term = f'-{name}'
            else:
                term = f'{factor:.{digits}g} {name}'
            parts.append(term if not parts else
                         (f'- {term[1:].lstrip()}' if term.startswith('-') else f'+ {term}'))
        return ' '.join(parts)

    def unidentifiable(self):
        """Return the names of the standard parameters no base parameter depends on."""
        used = np.any(np.abs(self.projection) > 0.0, axis=0)
        return tuple(n for n, u in zip(self.names, used) if not u)


def base_parameters(layout, model, samples=None, seed=0, rtol=1e-9, sensed=None):
    """
    Return the :class:`BaseParameters` of ``layout``'s full regressor for ``model``.

    ``samples`` (default ``max(50, 3 p / n)``) random states, positions uniform within the
    joint limits (within +-pi where a joint has none), velocities and accelerations normal
    with unit spread: random states excite every combination that any motion could. ``rtol``:
    a pivot below ``rtol`` times the largest ends the rank. ``sensed`` (n,) bool (default:
    every joint): only the rows of joints whose efforts are measured count, so a parameter seen
    only by an unsensed joint's torque (its friction, its rotor inertia, a link inertia about
    that joint's axis alone) is not a base parameter.
    """
    rng = np.random.default_rng(seed)
    n, p = layout.n, layout.size
    mask = sensed_mask(sensed, n)
    count = samples or max(50, 3 * p // max(int(np.count_nonzero(mask)), 1))
    lower = np.where(np.isfinite(model.lower), model.lower, -np.pi)
    upper = np.where(np.isfinite(model.upper), model.upper, np.pi)
    q = rng.uniform(lower, upper, size=(count, n))
    qd = rng.normal(size=(count, n))
    qdd = rng.normal(size=(count, n))
    W = layout.regressor(model, q, qd, qdd)[:, mask, :].reshape(-1, p)
    # Column scaling, so that the rank test does not depend on the parameters' units; a column
    # of round-off only (a first moment along an axis through every joint above it) is zero.
    scale = np.linalg.norm(W, axis=0)
    live = scale > 1e-10 * np.max(scale, initial=0.0)
    Ws = W[:, live] / scale[live]
    import scipy.linalg  # here: SciPy's import costs every process (the node) 0.3 s
    _, R, perm = scipy.linalg.qr(Ws, mode='economic', pivoting=True)
    diag = np.abs(np.diag(R))
    if diag.size == 0 or diag[0] == 0.0:
        raise InputError('the regressor is zero: the model has no parameter that moves a joint')
    rank = int(np.sum(diag > rtol * diag[0]))
    live_idx = np.flatnonzero(live)
    independent = live_idx[perm[:rank]]
    # Dependent columns: the rest of the live ones, and every column of zero effect.
    dependent = np.setdiff1d(np.arange(p), independent)
    # base_map from the unscaled columns: W_d = W_b base_map (least squares, exact up to
    # round-off).
    base_map, *_ = np.linalg.lstsq(W[:, independent], W[:, dependent], rcond=None)
    largest = np.max(np.abs(base_map), initial=0.0)
    base_map[np.abs(base_map) < 1e-10 * max(largest, 1.0)] = 0.0
    # Keep the pivots in the layout's order (readable: parameters by body).
    order = np.argsort(independent)
    independent, base_map = independent[order], base_map[order]
    projection = np.zeros((rank, p))
    projection[np.arange(rank), independent] = 1.0
    projection[:, dependent] = base_map
    names = layout.names
    relations = tuple(
        ((names[independent[k]], 1.0),)
        + tuple((names[d], float(base_map[k, j]))
                for j, d in enumerate(dependent) if base_map[k, j] != 0.0)
        for k in range(rank))
    projection.setflags(write=False)
    return BaseParameters(names, independent, dependent, projection, relations)
