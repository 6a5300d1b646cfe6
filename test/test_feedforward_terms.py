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
The node's dynamics as library functions (denoc_ros.feedforward): inertia term, friction.

Independent references: the mass matrix (CRBA) times qdd and the Christoffel Coriolis matrix
times qd for the split of one inverse dynamics; Craig's friction law ``v qd + c tanh(qd / v_s)``
written out here; forward dynamics and simulate() under the effort minus that friction.
"""

import denoc_ros as dr
from denoc_ros.feedforward import feedforward_terms, inverse_dynamics_terms, predict
from denoc_ros.friction import DEFAULT_SMOOTHING, JointFriction
from denoc_ros.resources import bundled_urdf
import numpy as np
import pytest

TOL = {'rtol': 1e-10, 'atol': 1e-10}


def states(model, seed, count=3):
    """Return ``count`` random vectors of the model's size."""
    rng = np.random.default_rng(seed)
    return tuple(rng.uniform(-1.0, 1.0, model.dof) for _ in range(count))


def craig_friction(qd, viscous, coulomb):
    """Craig's joint friction (seed 002) with the tanh-smoothed sign, written out."""
    return viscous * qd + coulomb * np.tanh(qd / DEFAULT_SMOOTHING)


def friction_of(model):
    """Return (JointFriction, viscous, coulomb) with distinct random coefficients per joint."""
    rng = np.random.default_rng(7)
    viscous, coulomb = rng.uniform(0.1, 2.0, model.dof), rng.uniform(0.1, 3.0, model.dof)
    return JointFriction(model, viscous, coulomb), viscous, coulomb


@pytest.mark.parametrize('name', ['panda', 'ur5e', 'puma560'])
def test_inverse_dynamics_terms_split(name):
    """Inertia = M(q) qdd, coriolis = C(q, qd) qd (Christoffel), gravity = g(q); sum = ID."""
    model = dr.load_urdf(bundled_urdf(name))
    q, qd, qdd = states(model, 1)
    terms = inverse_dynamics_terms(model, q, qd, qdd)
    np.testing.assert_allclose(terms.inertia, dr.mass_matrix(model, q) @ qdd, **TOL)
    np.testing.assert_allclose(terms.coriolis, dr.coriolis_matrix(model, q, qd) @ qd, **TOL)
    np.testing.assert_allclose(terms.gravity, dr.inverse_dynamics(model, q, 0 * qd, 0 * qd),
                               **TOL)
    np.testing.assert_allclose(terms.total, dr.inverse_dynamics(model, q, qd, qdd), **TOL)
    assert terms.friction is None


@pytest.mark.parametrize('evaluate_at', ['desired', 'measured'])
def test_feedforward_friction_at_the_evaluated_velocity(evaluate_at):
    """Friction is added at qd_d with the terms at the desired state, at qd otherwise."""
    model = dr.load_urdf(bundled_urdf('panda'))
    friction, viscous, coulomb = friction_of(model)
    q, qd, q_d, qd_d, qdd_d = states(model, 2, 5)
    desired = (q_d, qd_d, qdd_d)
    plain = feedforward_terms(model, q, qd, desired, evaluate_at)
    terms = feedforward_terms(model, q, qd, desired, evaluate_at, friction)
    velocity = qd_d if evaluate_at == 'desired' else qd
    expected = craig_friction(velocity, viscous, coulomb)
    np.testing.assert_allclose(terms.friction, expected, **TOL)
    np.testing.assert_allclose(terms.total, plain.total + expected, **TOL)
    if evaluate_at == 'desired':  # Craig's tau = M qdd + V + G + F at the desired state
        np.testing.assert_allclose(
            terms.total, dr.inverse_dynamics(model, q_d, qd_d, qdd_d) + expected, **TOL)
    # without a desired state: at the measured velocity
    alone = feedforward_terms(model, q, qd, None, evaluate_at, friction)
    np.testing.assert_allclose(alone.total, dr.inverse_dynamics(model, q, qd, 0 * qd)
                               + craig_friction(qd, viscous, coulomb), **TOL)


@pytest.mark.parametrize('horizon, substeps', [(0.0, 1), (0.02, 4)])
def test_prediction_subtracts_friction(horizon, substeps):
    """predict(friction=) integrates under tau - F(qd) at the present qd, held constant."""
    model = dr.load_urdf(bundled_urdf('panda'))
    friction, viscous, coulomb = friction_of(model)
    q, qd, tau = states(model, 3)
    applied = tau - craig_friction(qd, viscous, coulomb)
    q_h, qd_h, qdd_h = predict(model, q, qd, tau, horizon, substeps, friction)
    if horizon > 0:
        run = dr.simulate(model, q, qd, horizon, dt=horizon / substeps, tau=applied,
                          method='rk4')
        q_ref, qd_ref = run.q[-1], run.qd[-1]
    else:
        q_ref, qd_ref = q, qd
    np.testing.assert_allclose(q_h, q_ref, **TOL)
    np.testing.assert_allclose(qd_h, qd_ref, **TOL)
    np.testing.assert_allclose(qdd_h, dr.forward_dynamics(model, q_ref, qd_ref, applied), **TOL)
    # and the friction made a difference
    assert not np.allclose(qdd_h, predict(model, q, qd, tau, horizon, substeps)[2])
