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
Results that overflow, and the fast paths' argument checks (issue 33).

* A single pendulum about a vertical axis, ``tau = (I_zz + m d^2) qdd`` and ``qdd = tau /
  (I_zz + m d^2)`` in closed form: just below the overflow the closed form holds; at it the
  result is infinite (not NaN), and every public function must raise rather than return it.
* Arguments of every shape a user might pass as float64 arrays (the fast paths' own input):
  the result, or the error, must be the checked path's for the same numbers as lists.
"""

import denoc_ros as dr
from denoc_ros.errors import InputError
from denoc_ros.resources import bundled_urdf
from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

MASS, ARM, I_ZZ = 20.0, 0.3, 0.01
I_AXIS = I_ZZ + MASS * ARM ** 2     # 1.81 kg m^2 about the joint axis


def pendulum():
    """Return one revolute joint about z (gravity along -z: none about the axis)."""
    return dr.RobotModel(
        joint_names=('j',), link_names=('l',), parent=np.array([-1]),
        joint_type=np.array([dr.REVOLUTE]), axis=np.array([[0.0, 0.0, 1.0]]),
        joint_rotation=np.eye(3)[None], joint_translation=np.zeros((1, 3)),
        mass=np.array([MASS]), com=np.array([[ARM, 0.0, 0.0]]),
        inertia=(I_ZZ * np.eye(3))[None], gravity=np.array([0.0, 0.0, -9.81]))


@pytest.mark.parametrize('batch', [False, True])
def test_an_overflow_to_infinity_raises(batch):
    """Accelerations of 1e300 give I qdd; 1e308 overflows to inf: InputError, no inf result."""
    model = pendulum()

    def shaped(x):
        return np.full((2, 1) if batch else (1,), x)

    zero = shaped(0.0)
    tau = dr.inverse_dynamics(model, zero, zero, shaped(1e300))
    np.testing.assert_allclose(tau, I_AXIS * 1e300, rtol=1e-12)
    qdd = dr.forward_dynamics(model, zero, zero, shaped(1e300))
    np.testing.assert_allclose(qdd, 1e300 / I_AXIS, rtol=1e-12)
    assert np.isinf(I_AXIS * 1e308) and np.isinf(1e308 / (I_AXIS / 100.0))   # the premise
    with pytest.raises(InputError, match='not finite'):
        dr.inverse_dynamics(model, zero, zero, shaped(1e308))
    light = model.replace(mass=np.array([0.001]), com=np.zeros((1, 3)),
                          inertia=(I_AXIS / 100.0 * np.eye(3))[None])
    with pytest.raises(InputError, match='not finite'):
        dr.forward_dynamics(light, zero, zero, shaped(1e308))
    with pytest.raises(InputError, match='not finite'):
        dr.inverse_dynamics(model, zero.tolist(), zero.tolist(), shaped(1e308).tolist())


# ------------------------------------------------------------------------------------------------
# The fast paths' argument checks: float64 arrays of any shape against the checked path


@pytest.fixture(scope='module')
def ur5e():
    return dr.load_urdf(bundled_urdf('ur5e'))


def shapes(n):
    return st.sampled_from([(n,), (n,), (n - 1,), (n + 1,), (0,), (1, n), (2, n), ()])


def outcome(call):
    """Return ('ok', arrays) or ('error', type) of a call."""
    try:
        result = call()
    except InputError as err:
        return 'error', type(err)
    if isinstance(result, tuple):
        return 'ok', [np.asarray(r) for r in result]
    if isinstance(result, np.ndarray):
        return 'ok', [result]
    return 'ok', [result.jacobian, result.inertia, result.coriolis, result.gravity]


def as_lists(args):
    return [a.tolist() if isinstance(a, np.ndarray) else a for a in args]


def same(fast, checked):
    assert fast[0] == checked[0], (fast, checked)
    if fast[0] == 'ok':
        assert len(fast[1]) == len(checked[1])
        for a, b in zip(fast[1], checked[1]):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


FUNCTIONS = {
    'inverse_dynamics': lambda m, a, b, c, f: dr.inverse_dynamics(m, a, b, c, f),
    'forward_dynamics': lambda m, a, b, c, f: dr.forward_dynamics(m, a, b, c, f),
    'coriolis_torques': lambda m, a, b, c, f: dr.coriolis_torques(m, a, b),
    'gravity_torques': lambda m, a, b, c, f: dr.gravity_torques(m, a),
    'mass_matrix': lambda m, a, b, c, f: dr.mass_matrix(m, a),
    'regressor': lambda m, a, b, c, f: dr.regressor(m, a, b, c),
    'cartesian_dynamics': lambda m, a, b, c, f: dr.cartesian_dynamics(m, a, b),
    'predict': lambda m, a, b, c, f: dr.predict(m, a, b, c, 0.01),
}


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(FUNCTIONS)), data=st.data())
def test_float64_arrays_of_any_shape_give_the_checked_paths_answer(ur5e, name, data):
    n, nb = ur5e.dof, ur5e.nbodies
    rng = np.random.default_rng(data.draw(st.integers(0, 1000)))
    args = [rng.uniform(-1.0, 1.0, data.draw(shapes(n))) for _ in range(3)]
    f_ext = data.draw(st.sampled_from([None, (nb, 6), (0, 6), (nb - 1, 6), (nb + 1, 6),
                                       (nb, 3), (1, nb, 6), (6,)]))
    if f_ext is not None:
        f_ext = rng.uniform(-1.0, 1.0, f_ext)
    function = FUNCTIONS[name]
    fast = outcome(lambda: function(ur5e, *args, f_ext))
    checked = outcome(lambda: function(ur5e, *as_lists(args),
                                       None if f_ext is None else f_ext.tolist()))
    same(fast, checked)


WRONG_SHAPES = [(0,), (5,), (7,), (1, 6), (2, 6), (), (6, 1)]


@pytest.mark.parametrize('name', sorted(FUNCTIONS))
def test_each_argument_of_a_wrong_shape_gives_the_checked_paths_answer(ur5e, name):
    """Every state argument, and f_ext, in turn of each wrong shape; the others right."""
    n, nb = ur5e.dof, ur5e.nbodies
    assert n == 6
    rng = np.random.default_rng(1)
    function = FUNCTIONS[name]
    right = [rng.uniform(-1.0, 1.0, n) for _ in range(3)]
    tried = 0
    wrong_wrenches = [(0, 6), (nb - 1, 6), (nb + 1, 6), (nb, 3), (nb, 7), (1, nb, 6), (6,),
                      (nb * 6,)]
    for k in range(4):
        for shape in WRONG_SHAPES if k < 3 else wrong_wrenches:
            args = list(right) + [None]
            args[k] = rng.uniform(-1.0, 1.0, shape)
            fast = outcome(lambda: function(ur5e, *args))
            checked = outcome(lambda: function(ur5e, *as_lists(args[:3]),
                                               None if args[3] is None else args[3].tolist()))
            same(fast, checked)
            tried += 1
    assert tried == 3 * len(WRONG_SHAPES) + 8


@pytest.mark.parametrize('frame', [None, '', 'tool0', 'wrist_2_link', 'no_such_link', 3])
def test_a_frame_of_any_kind_gives_the_checked_paths_answer(ur5e, frame):
    q, qd = np.linspace(-1.0, 1.0, ur5e.dof), np.linspace(0.5, -0.5, ur5e.dof)
    for function, args in ((dr.jacobian, (q,)), (dr.cartesian_dynamics, (q, qd))):
        fast = outcome(lambda: function(ur5e, *args, frame))
        checked = outcome(lambda: function(ur5e, *as_lists(args), frame))
        same(fast, checked)
