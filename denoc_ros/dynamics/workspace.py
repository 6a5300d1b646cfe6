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
A workspace the caller owns: every per-call buffer of one model's single-state calls.

Pinocchio's ``Data``: made from a model, holding the scratch space of the kernels and a buffer
for each result, so that a call that brings it (``workspace=ws``) allocates nothing and touches
no memory another workspace uses. Two threads with a workspace each never share a buffer.
Results are the workspace's own arrays: the next call of the same function (or of
:func:`~denoc_ros.dynamics.all_terms.compute_all_terms`) with the same workspace overwrites them;
copy what you keep.

=====================  ============  ==================================================
field                  shape         written by
=====================  ============  ==================================================
``tau``                (nv,)         ``inverse_dynamics``
``g``                  (nv,)         ``gravity_torques``, ``compute_all_terms``
``coriolis``           (nv,)         ``coriolis_torques`` (C qd), ``compute_all_terms`` (C u)
``coriolis_transpose`` (nv,)         ``compute_all_terms``: C^T qd
``momentum``           (nv,)         ``compute_all_terms``: M qd
``inertia``            (nv,)         ``compute_all_terms``: M a
``ddq``                (nv,)         ``forward_dynamics``, ``compute_all_terms``
``prediction``         (3, nv)       ``compute_all_terms``: q, qd, qdd after the horizon
``M``                  (nv, nv)      ``mass_matrix``, ``compute_all_terms``
``C``                  (nv, nv)      ``coriolis_matrix``, ``compute_all_terms``
``convective``         (nv, nv)      ``convective_inertia_matrix``
``J``                  (6, nv)       ``jacobian``, ``compute_all_terms``
``Y``                  (nv, 10 nb)   ``regressor``
``frame_rotation``     (3, 3)        ``compute_all_terms``
``frame_translation``  (3,)          ``compute_all_terms``
``wrench``             (6,)          ``compute_all_terms``: [force; torque] in the frame
=====================  ============  ==================================================
"""

import numpy as np

from ._compile import model_handle
from ._packed import packed

__all__ = ['Workspace']

# (see .all_terms: rows of ``terms`` and entries of ``small``)
_G, _CU, _CTQD, _MQD, _MA, _DDQ, _PRED, _ROWS = 0, 1, 2, 3, 4, 5, 6, 9
_SMALL = 22


class Workspace:
    """Every per-call buffer of one model's single-state calls (module docstring)."""

    __slots__ = ('model', 'packed', 'handle', '_keep', 'terms', 'small', 'tau', 'g',
                 'coriolis', 'coriolis_transpose', 'momentum', 'inertia', 'ddq', 'prediction',
                 'M', 'C', 'convective', 'J', 'Y', 'frame_rotation', 'frame_translation',
                 'wrench', 'flags')

    def __init__(self, model):
        pk = packed(model)  # InputError unless a RobotModel
        self.model = model
        self.packed = pk
        self.handle, self._keep = model_handle(pk.ints, pk.reals, pk.nv)
        nv = pk.nv
        self.terms = np.zeros((_ROWS, nv))
        self.small = np.zeros(_SMALL)
        self.tau = np.zeros(nv)
        self.g, self.coriolis = self.terms[_G], self.terms[_CU]
        self.coriolis_transpose, self.momentum = self.terms[_CTQD], self.terms[_MQD]
        self.inertia, self.ddq = self.terms[_MA], self.terms[_DDQ]
        self.prediction = self.terms[_PRED:_PRED + 3]
        self.M, self.C, self.convective = (np.zeros((nv, nv)) for _ in range(3))
        self.J = np.zeros((6, nv))
        self.Y = np.zeros((nv, 10 * pk.nb))
        self.frame_rotation = self.small[0:9].reshape(3, 3)
        self.frame_translation = self.small[9:12]
        self.wrench = self.small[12:18]
        self.flags = 0  # what the last compute_all_terms asked for (bits of .all_terms)

    @property
    def observer_event(self):
        """Return what the observer did in the last :func:`compute_all_terms` (its codes)."""
        return int(self.small[18])

    @property
    def forward_dynamics_status(self):
        """Return the status of the last pass's FD and prediction (0: OK, else why not)."""
        return int(self.small[19])

    @property
    def estimate_finite(self):
        """Return True if the last pass left the observer's estimate finite."""
        return self.small[20] != 0.0

    @property
    def wrench_finite(self):
        """Return True if the last pass's wrench is finite."""
        return self.small[21] != 0.0

    def __reduce__(self):
        """Pickle and copy as a fresh workspace of the same model (its buffers are scratch)."""
        return (Workspace, (self.model,))

    def __repr__(self):
        return f'Workspace({self.model.name!r}, nv={self.packed.nv})'
