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
from cold) on its first message, nor the first ``~/estimate_payload`` call (about 13 s: the
regressor's kernels, compiled for the argument types the estimate passes).
"""

from dataclasses import replace
import sys
import time

import numpy as np

from .dynamics import (cartesian_dynamics, convective_inertia_matrix, coriolis_matrix,
                       coriolis_torques, forward_dynamics, forward_dynamics_cholesky,
                       frame_pose, gravity_torques, inverse_dynamics, jacobian,
                       jacobian_dot_times_qd, joint_reaction_wrenches, mass_matrix, regressor)
from .energy import kinetic_energy
from .errors import DenocError
from .feedforward import predict
from .resources import bundled_urdf
from .urdf import load_urdf


def compile_kernels(model=None):
    """Call every compiled function on one state and on a batch of two (single and batch paths)."""
    models = [model] if model else [load_urdf(bundled_urdf('craig_rr')),
                                    load_urdf(bundled_urdf('space_robot'), floating_base=True)]
    for model in models:
        _call_all(model)


def _call_all(model):
    """Call every compiled function of ``model`` on one state and on a batch of two."""
    n, nq = model.nv, model.nq
    # A generic state (equal joint angles can line up a massless axis and make M singular).
    q1, v1 = np.linspace(0.1, 0.9, nq), np.linspace(-0.5, 0.5, n)
    for q, v in ((q1, v1), (np.stack((q1, q1)), np.stack((v1, v1)))):
        if model.floating:
            q[..., 3:7] = 0.5
        f_ext = np.zeros(q.shape[:-1] + (model.nbodies, 6))
        inverse_dynamics(model, q, v, v)
        inverse_dynamics(model, q, v, v, f_ext)
        gravity_torques(model, q)
        coriolis_torques(model, q, v)
        mass_matrix(model, q)
        coriolis_matrix(model, q, v)
        convective_inertia_matrix(model, q, v)
        forward_dynamics(model, q, v, v)
        forward_dynamics(model, q, v, v, f_ext)
        forward_dynamics_cholesky(model, q, v, v)
        jacobian(model, q)
        jacobian_dot_times_qd(model, q, v)
        cartesian_dynamics(model, q, v)

        frame_pose(model, q)
        joint_reaction_wrenches(model, q, v, v)
        kinetic_energy(model, q, v)
        regressor(model, q, v, v)    # identification and ~/estimate_payload
        if not model.floating and q.ndim == 1:
            predict(model, q, v, v, 0.01)
    warm_up_processor(model)
    if not model.floating:  # the trajectory kernels: sampling, reachability, dense check
        from .trajectories import check_trajectory, retime
        out = retime(model, np.linspace(0.0, 0.5, 3)[:, None] + np.linspace(0.1, 0.9, n))
        check_trajectory(model, out.t, out.q, out.qd, out.qdd)


def warm_up_processor(model, settings=None, geometry=None):
    """
    Run the dynamics node's per-joint-state computation once in every mode.

    On a throwaway :class:`~denoc_ros.processor.DynamicsProcessor`, so that no joint state pays
    a compilation (or a load from numba's cache); with ``geometry`` and ``contact_localization``
    on, one contact localization too.
    """
    from .processor import DynamicsProcessor, ProcessorSettings
    settings = settings if settings is not None else ProcessorSettings()
    zero = np.zeros(model.nv)
    q = np.zeros(model.nq)
    if model.floating:
        q[6] = 1.0
    for mode in ('desired', 'measured'):
        try:
            processor = DynamicsProcessor(model, replace(settings, feedforward_state=mode,
                                                         observer_gain=50.0))
            for t in (0.0, 0.001):
                processor.process(t, q, zero, zero, prediction=True, wrench=True,
                                  accelerations=True)
            processor.set_reference(q, zero, zero)
            processor.process(0.002, q, zero, zero, prediction=True, wrench=True,
                              accelerations=True)
        except DenocError:  # e.g. a singular model at q = 0: compiled all the same
            pass
    if (geometry is not None and geometry.surfaces and settings.contact_localization
            and not model.floating):
        from .contact.locate import locate_contact
        try:  # a torque above any threshold on every joint: the whole search runs
            locate_contact(model, geometry, q, np.full(model.nv, 1e3))
        except Exception:  # noqa: B902 - the processor reports it per joint state
            pass


def compile_payload_estimate():
    """
    Estimate a payload once, as ``~/estimate_payload`` does (window, filter, regressor, fit).

    The kernels compile per argument type (array layout included), so the node's own path is
    run rather than the kernels alone: a UR5e swinging its wrist with 1 kg on ``tool0``, 2 s of
    500 Hz joint states with the efforts of its inverse dynamics, friction included.
    """
    from .friction import friction_torques
    from .identification.payload import PayloadWindow
    from .payload import attach_payload
    model = load_urdf(bundled_urdf('ur5e'))
    loaded = attach_payload(model, 'tool0', 1.0, (0.01, -0.02, 0.05), 0.002 * np.eye(3))
    t = np.arange(0.0, 2.0, 0.002)[:, None]
    w = 2.0 * np.pi * np.array([0.3, 0.4, 0.5, 1.1, 1.3, 1.7])
    q, qd, qdd = 0.5 * np.sin(w * t), 0.5 * w * np.cos(w * t), -0.5 * w * w * np.sin(w * t)
    tau = inverse_dynamics(loaded, q, qd, qdd) + friction_torques(model, qd)
    window = PayloadWindow(model.dof)
    for k in range(t.size):
        window.append(k * 2_000_000, q[k], qd[k], tau[k])
    return window.estimate(model, 'tool0', friction=True)


def compile_locator():
    """
    Locate a push as the dynamics node does with ``contact_localization`` on.

    The bundled Panda with a box on link 7 and a cylinder on link 4 for collision geometry,
    a 30 N push into the box: the locator's kernels compile (surface search, refinement).
    """
    from .contact.geometry import load_collision_geometry
    from .processor import DynamicsProcessor, ProcessorSettings
    text = bundled_urdf('panda').read_text()
    for link, shape in (('panda_link7', '<box size="0.08 0.08 0.14"/>'),
                        ('panda_link4', '<cylinder radius="0.06" length="0.12"/>')):
        head = f'<link name="{link}">'
        text = text.replace(head, f'{head}<collision><geometry>{shape}</geometry></collision>')
    model = load_urdf(text)
    geometry = load_collision_geometry(text)
    q = np.array([0.3, -0.5, 0.2, -2.0, 0.1, 1.5, 0.4])
    R, o = frame_pose(model, q, 'panda_link7')
    J = jacobian(model, q, 'panda_link7')
    arm = R @ np.array([0.04, 0.0, 0.03])   # a point on the box's +x face, from the origin
    tau = (J[:3] - np.cross(arm, J[3:].T).T).T @ (R @ np.array([-30.0, 0.0, 0.0]))
    settings = ProcessorSettings(contact_localization=True, contact_time_share=0.0)
    warm_up_processor(model, settings, geometry)
    processor = DynamicsProcessor(model, settings, geometry)
    g = gravity_torques(model, q)
    for k in range(120):
        processor.process(k * 0.001, q, np.zeros(7), g - (tau if k >= 20 else 0.0))
    return processor.last_location


def main():
    """Compile the kernels and say how long it took."""
    start = time.perf_counter()
    compile_kernels()
    compile_payload_estimate()
    compile_locator()
    print(f'denoc_ros kernels ready ({time.perf_counter() - start:.1f} s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
