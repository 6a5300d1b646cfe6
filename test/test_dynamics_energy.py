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
Energy balance: the work of the joint forces equals the change of kinetic + potential energy.

Kinetic energy is ``1/2 qd^T M qd`` (mass matrix only) and potential energy ``-sum m_i g . C_i``
from 4x4 forward kinematics of the mass centres; neither uses inverse dynamics. The motion comes
from integrating ``forward_dynamics`` with RK4 (step 2 ms), the work ``int qd^T tau dt`` is
integrated alongside.
"""

import denoc_ros as dr
import numpy as np
import pytest
from robots_for_tests import assert_close, make_model, potential_energy, random_state, rng_for


def energy(model, q, qd):
    return 0.5 * qd @ dr.mass_matrix(model, q) @ qd + potential_energy(model, q)


def simulate(model, q, qd, torque, duration=0.2, h=2e-3):
    """Integrate [q, qd, work] with RK4; return the final state and the work done by tau."""
    n = model.dof

    def rate(t, x):
        q, qd = x[:n], x[n:2 * n]
        tau = torque(t)
        return np.concatenate((qd, dr.forward_dynamics(model, q, qd, tau), [qd @ tau]))

    x, t = np.concatenate((q, qd, [0.0])), 0.0
    for _ in range(int(round(duration / h))):
        k1 = rate(t, x)
        k2 = rate(t + h / 2, x + h / 2 * k1)
        k3 = rate(t + h / 2, x + h / 2 * k2)
        k4 = rate(t + h, x + h * k3)
        x, t = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4), t + h
    return x[:n], x[n:2 * n], x[-1]


@pytest.mark.parametrize('case', ['chain7_revolute', 'branched8', 'two_roots_tree6'])
def test_work_of_joint_forces_equals_energy_change_1e_7(case):
    model = make_model(case)
    n = model.dof
    rng = rng_for('energy', case)
    q0, qd0 = random_state(rng, n, scale=np.pi), random_state(rng, n, scale=1.0)
    amplitude, omega, phase = rng.uniform(-5, 5, n), rng.uniform(1, 10, n), rng.uniform(0, 6, n)
    q1, qd1, work = simulate(model, q0, qd0, lambda t: amplitude * np.sin(omega * t + phase))
    change = energy(model, q1, qd1) - energy(model, q0, qd0)
    scale = max(1.0, abs(energy(model, q0, qd0)), abs(work))
    # RK4 with 2 ms steps leaves ~1e-9 relative; 1e-7 leaves room for other machines.
    assert abs(change - work) <= 1e-7 * scale, (change, work, abs(change - work) / scale)
    assert abs(work) > 1e-3          # the torques did real work


def test_energy_is_conserved_without_joint_forces_1e_8():
    model = make_model('chain7_mixed')
    rng = rng_for('conservation')
    q0, qd0 = random_state(rng, 7, scale=np.pi), random_state(rng, 7, scale=1.0)
    q1, qd1, work = simulate(model, q0, qd0, lambda t: np.zeros(7))
    assert work == 0.0
    assert_close(energy(model, q1, qd1), energy(model, q0, qd0), 1e-8)
    assert np.abs(q1 - q0).max() > 1e-2     # it did move


@pytest.mark.parametrize('case', ['chain7_revolute', 'branched5'])
def test_kinetic_energy_rate_is_power_minus_gravity_1e_6(case):
    """d/dt (1/2 qd^T M qd) = qd^T (tau - g) at qdd = FD(q, qd, tau), dM/dt by differences."""
    model = make_model(case)
    n, h = model.dof, 1e-6
    rng = rng_for('kinetic-rate', case)
    for _ in range(3):
        q, qd, tau = (random_state(rng, n, scale=s) for s in (np.pi, 2.0, 5.0))
        qdd = dr.forward_dynamics(model, q, qd, tau)
        M_dot = (dr.mass_matrix(model, q + h * qd) - dr.mass_matrix(model, q - h * qd)) / (2 * h)
        rate = qd @ dr.mass_matrix(model, q) @ qdd + 0.5 * qd @ M_dot @ qd
        assert_close(rate, qd @ (tau - dr.gravity_torques(model, q)), 1e-6)
