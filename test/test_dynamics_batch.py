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

"""Batched calls (leading axes (k,) and (a, b), with broadcasting) equal loops of single calls."""

import denoc_ros as dr
import numpy as np
import pytest
from robots_for_tests import make_model, random_state, rng_for


TOL = 1e-12   # same arithmetic, possibly another summation order

# name -> (function, names of its joint-vector arguments, accepts f_ext)
FUNCTIONS = {
    'inverse_dynamics': (dr.inverse_dynamics, ('q', 'qd', 'qdd'), True),
    'mass_matrix': (dr.mass_matrix, ('q',), False),
    'coriolis_matrix': (dr.coriolis_matrix, ('q', 'qd'), False),
    'convective_inertia_matrix': (dr.convective_inertia_matrix, ('q', 'qd'), False),
    'coriolis_torques': (dr.coriolis_torques, ('q', 'qd'), False),
    'gravity_torques': (dr.gravity_torques, ('q',), False),
    'forward_dynamics': (dr.forward_dynamics, ('q', 'qd', 'tau'), True),
    'forward_dynamics_cholesky': (dr.forward_dynamics_cholesky, ('q', 'qd', 'tau'), True),
}


@pytest.fixture(scope='module')
def model():
    return make_model('branched8')


def loop(function, args, f_ext, batch):
    out = None
    for index in np.ndindex(*batch):
        single = [a[index] for a in args]
        kwargs = {} if f_ext is None else {'f_ext': f_ext[index]}
        value = function(*single, **kwargs)
        if out is None:
            out = np.empty(batch + value.shape)
        out[index] = value
    return out


@pytest.mark.parametrize('batch', [(5,), (2, 3)])
@pytest.mark.parametrize('name', list(FUNCTIONS))
def test_batch_equals_loop_of_single_calls(model, name, batch):
    function, arg_names, takes_f_ext = FUNCTIONS[name]
    rng = rng_for('batch', name, batch)
    n = model.dof
    args = [random_state(rng, n, size=batch, scale=2.0) for _ in arg_names]
    f_ext = rng.normal(size=batch + (n, 6)) if takes_f_ext else None
    kwargs = {} if f_ext is None else {'f_ext': f_ext}
    batched = function(model, *args, **kwargs)
    expected = loop(lambda *a, **k: function(model, *a, **k), args, f_ext, batch)
    assert batched.shape == expected.shape
    np.testing.assert_allclose(batched, expected, rtol=TOL, atol=TOL)


def test_arguments_broadcast_against_each_other(model):
    """A trajectory q (k, n) with one qd (n,), qdd (1, n) and one set of wrenches (n, 6)."""
    rng = rng_for('broadcast')
    n = model.dof
    q = random_state(rng, n, size=(4,))
    qd, qdd = random_state(rng, n), random_state(rng, n, size=(1,))
    f_ext = rng.normal(size=(n, 6))
    tau = dr.inverse_dynamics(model, q, qd, qdd, f_ext)
    assert tau.shape == (4, n)
    for k in range(4):
        np.testing.assert_allclose(tau[k], dr.inverse_dynamics(model, q[k], qd, qdd[0], f_ext),
                                   rtol=TOL, atol=TOL)
    qdd_back = dr.forward_dynamics(model, q, qd, tau, f_ext)
    np.testing.assert_allclose(qdd_back, np.broadcast_to(qdd, (4, n)), rtol=1e-10, atol=1e-10)


def test_empty_batch_gives_empty_result(model):
    n = model.dof
    assert dr.mass_matrix(model, np.zeros((0, n))).shape == (0, n, n)
    assert dr.inverse_dynamics(model, np.zeros((0, n)), np.zeros(n), np.zeros(n)).shape == (0, n)
