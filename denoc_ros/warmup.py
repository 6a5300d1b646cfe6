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
Compile every kernel once, ahead of use: ``python -m denoc_ros.warmup``.

numba compiles a kernel on its first call and caches it on disk next to the module
(``cache=True``); a process that finds the cache loads it in milliseconds. ``scripts/setup_env.sh``
runs this module after installing the package, so no node pays the compilation (about 20 s
from cold) on its first message.
"""

import sys
import time

import numpy as np

from .cartesian import cartesian_dynamics, jacobian, jacobian_dot_times_qd
from .dynamics import (convective_inertia_matrix, coriolis_matrix, coriolis_torques,
                       forward_dynamics, forward_dynamics_cholesky, gravity_torques,
                       inverse_dynamics, mass_matrix)
from .resources import bundled_urdf
from .urdf import load_urdf


def compile_kernels(model=None):
    """Call every compiled function on one state and on a batch of two (single and batch paths)."""
    model = model or load_urdf(bundled_urdf('craig_rr'))
    n = model.dof
    for q in (np.full(n, 0.1), np.full((2, n), 0.1)):
        f_ext = np.zeros(q.shape + (6,))
        inverse_dynamics(model, q, q, q)
        inverse_dynamics(model, q, q, q, f_ext)
        gravity_torques(model, q)
        coriolis_torques(model, q, q)
        mass_matrix(model, q)
        coriolis_matrix(model, q, q)
        convective_inertia_matrix(model, q, q)
        forward_dynamics(model, q, q, q)
        forward_dynamics(model, q, q, q, f_ext)
        forward_dynamics_cholesky(model, q, q, q)
        jacobian(model, q)
        jacobian_dot_times_qd(model, q, q)
        cartesian_dynamics(model, q, q)


def main():
    """Compile the kernels and say how long it took."""
    start = time.perf_counter()
    compile_kernels()
    print(f'denoc_ros kernels ready ({time.perf_counter() - start:.1f} s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
