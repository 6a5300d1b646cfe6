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
The recursive dynamics algorithms (Saha's DeNOC), as free functions of ``(model, q, qd, ...)``.

==============================  =========================  ==========================
function                        module                     seed equations
==============================  =========================  ==========================
inverse_dynamics                inverse_dynamics.py        Saha Eq. 7-8, 12-15, 30
gravity_torques                 inverse_dynamics.py        Eq. 30 at qd = qdd = 0
mass_matrix                     mass_matrix.py             Eq. 21-24 (composite bodies)
convective_inertia_matrix       coriolis.py                Eq. 20, 25-29 (corrected)
coriolis_matrix                 coriolis.py                Christoffel (Echeandia-Wensing)
coriolis_torques                coriolis.py                Eq. 30 without gravity
forward_dynamics                forward_dynamics.py        O(n) UDU^T / articulated body
forward_dynamics_cholesky       forward_dynamics.py        Eq. 20 solved by Cholesky
==============================  =========================  ==========================

``kinematics.py`` holds the forward recursion of poses and twists they all share, and
``_state.py`` the argument checking and batch shapes. Every function accepts leading batch axes:
``q`` of shape ``(..., n)`` gives results of shape ``(..., n)`` or ``(..., n, n)``.

The numbers are computed by the compiled kernels of ``_kernels.py`` (numba ``njit``, cached on
disk; the same recursions in scalar code over preallocated buffers, one call per batch) on the
model packed into two arrays by ``_packed.py``; each module above keeps its algorithm in NumPy
form as well. ``NUMBA_DISABLE_JIT=1`` runs the kernels as plain Python.
"""

from .coriolis import convective_inertia_matrix, coriolis_matrix, coriolis_torques
from .forward_dynamics import forward_dynamics, forward_dynamics_cholesky
from .inverse_dynamics import gravity_torques, inverse_dynamics
from .mass_matrix import mass_matrix

__all__ = [
    'convective_inertia_matrix', 'coriolis_matrix', 'coriolis_torques', 'forward_dynamics',
    'forward_dynamics_cholesky', 'gravity_torques', 'inverse_dynamics', 'mass_matrix',
]
