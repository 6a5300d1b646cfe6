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

"""Bad input raises InputError (a ValueError) with a message naming what is wrong."""

import denoc_ros as dr
from denoc_ros import InputError
import numpy as np
import pytest
from robots_for_tests import make_model


N = 7


@pytest.fixture(scope='module')
def model():
    return make_model('chain7_mixed')


def zeros(*shape):
    return np.zeros(shape + (N,))


# (function, positional joint-vector arguments by name)
CALLS = [
    (dr.inverse_dynamics, ('q', 'qd', 'qdd')),
    (dr.mass_matrix, ('q',)),
    (dr.coriolis_matrix, ('q', 'qd')),
    (dr.convective_inertia_matrix, ('q', 'qd')),
    (dr.coriolis_torques, ('q', 'qd')),
    (dr.gravity_torques, ('q',)),
    (dr.forward_dynamics, ('q', 'qd', 'tau')),
    (dr.forward_dynamics_cholesky, ('q', 'qd', 'tau')),
]
ARGUMENT_CASES = [(f, names, k) for f, names in CALLS for k in range(len(names))]
IDS = [f'{f.__name__}-{names[k]}' for f, names, k in ARGUMENT_CASES]


def call_with(model, function, names, k, bad):
    args = [bad if j == k else zeros() for j in range(len(names))]
    return function(model, *args)


@pytest.mark.parametrize('function, names, k', ARGUMENT_CASES, ids=IDS)
def test_wrong_length_names_argument_and_joint_count(model, function, names, k):
    with pytest.raises(InputError, match=rf'^{names[k]} has length 6 \(shape \(6,\)\), expected '
                                         r'length 7: the model has 7 joints \(7 joint_names: '
                                         r'joint0, joint1'):
        call_with(model, function, names, k, np.zeros(6))


@pytest.mark.parametrize('function, names, k', ARGUMENT_CASES, ids=IDS)
def test_nan_names_argument_and_first_bad_index(model, function, names, k):
    bad = zeros()
    bad[3] = np.nan
    bad[5] = np.inf
    with pytest.raises(InputError, match=rf'^{names[k]}\[3\] is nan'):
        call_with(model, function, names, k, bad)


def test_inf_in_a_batch_names_the_full_index(model):
    qd = zeros(2, 3)
    qd[1, 2, 4] = -np.inf
    with pytest.raises(InputError, match=r'^qd\[1, 2, 4\] is -inf'):
        dr.forward_dynamics(model, zeros(), qd, zeros())


def test_scalar_is_rejected(model):
    with pytest.raises(InputError, match=r'^q has a scalar, expected length 7'):
        dr.mass_matrix(model, 0.0)


def test_non_numeric_is_rejected(model):
    with pytest.raises(InputError, match=r'^q must be an array of numbers'):
        dr.mass_matrix(model, ['a'] * N)


def test_batch_shapes_that_do_not_broadcast(model):
    with pytest.raises(InputError, match=r'batch\) axes do not broadcast together: '
                                         r'q \(3,\), qd \(4,\), qdd \(\)'):
        dr.inverse_dynamics(model, zeros(3), zeros(4), zeros())


def test_f_ext_batch_that_does_not_broadcast(model):
    with pytest.raises(InputError, match=r'do not broadcast together: .*f_ext \(2,\)'):
        dr.forward_dynamics(model, zeros(3), zeros(), zeros(), np.zeros((2, N, 6)))


@pytest.mark.parametrize('shape', [(N, 3), (N + 1, 6), (6,), (N * 6,)])
@pytest.mark.parametrize('function', [dr.inverse_dynamics, dr.forward_dynamics,
                                      dr.forward_dynamics_cholesky])
def test_wrong_f_ext_shape(model, function, shape):
    with pytest.raises(InputError, match=rf'^f_ext has shape \({shape[0]},.*expected '
                                         r'\(\.\.\., 7, 6\)'):
        function(model, zeros(), zeros(), zeros(), np.zeros(shape))


def test_nan_in_f_ext(model):
    f_ext = np.zeros((N, 6))
    f_ext[2, 4] = np.nan
    with pytest.raises(InputError, match=r'^f_ext\[2, 4\] is nan'):
        dr.inverse_dynamics(model, zeros(), zeros(), zeros(), f_ext)


def test_not_a_model():
    with pytest.raises(InputError, match=r'^model must be a denoc_ros.RobotModel, got dict'):
        dr.mass_matrix({}, np.zeros(3))


def test_input_error_is_a_value_error(model):
    with pytest.raises(ValueError):
        dr.mass_matrix(model, np.zeros(3))


def massless_tip(model):
    mass = np.array(model.mass)
    mass[-1] = 0.0
    return model.replace(mass=mass, inertia=np.concatenate((model.inertia[:-1],
                                                            np.zeros((1, 3, 3)))))


def test_forward_dynamics_with_singular_mass_matrix_names_the_joint(model):
    with pytest.raises(InputError, match=r"mass matrix is singular: .* joint 'joint6'"):
        dr.forward_dynamics(massless_tip(model), zeros(), zeros(), zeros())


def test_cholesky_forward_dynamics_with_singular_mass_matrix(model):
    with pytest.raises(InputError, match=r"mass matrix is singular: .* joint 'joint6'"):
        dr.forward_dynamics_cholesky(massless_tip(model), zeros(), zeros(), zeros())


def test_overflow_raises_instead_of_returning_inf(model):
    with np.errstate(over='ignore', invalid='ignore'):
        with pytest.raises(InputError, match=r'^inverse_dynamics is not finite'):
            dr.inverse_dynamics(model, zeros(), np.full(N, 1e200), zeros())


def test_cartesian_dynamics_overflow_raises_single_and_batch():
    """The kernel's finiteness check of every output replaces NumPy's: overflow still raises."""
    from denoc_ros.resources import bundled_urdf
    model = dr.load_urdf(bundled_urdf('panda'))
    with np.errstate(over='ignore', invalid='ignore'):
        for shape in ((N,), (3, N)):
            with pytest.raises(InputError, match=r'is not finite for this input \(overflow'):
                dr.cartesian_dynamics(model, np.zeros(shape), np.full(shape, 1e200))
