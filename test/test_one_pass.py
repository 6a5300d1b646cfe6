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
One pass per joint state: the workspace, ``compute_all_terms`` and the node's processor.

Every output of the one pass is compared with the separate library functions that each compute
one quantity (gravity, Coriolis torques, mass and Coriolis matrices, Jacobian, pose, forward
dynamics, prediction, the momentum observer fed by M, C and g of their own calls, the wrench):
on every bundled robot and every example-robot-data URDF with a moving joint, with the observer,
friction, a payload and each reference mode on and off. The separate functions are checked
against Pinocchio and closed forms elsewhere (test_dynamics_pinocchio.py, test_observer.py).
Tolerance: 1e-12 relative to the largest magnitude of the quantity compared (at least 1e-6 of
its unit: a drone's rotor has Coriolis torques of 1e-21 N m; the observer's estimate relative to
its momentum rate |p| / dt, which its difference quotient amplifies).
"""

import threading
import zlib

from conftest import bundled_urdfs
import denoc_ros as dr
from denoc_ros.dynamics._packed import packed
from denoc_ros.friction import JointFriction
from denoc_ros.processor import DynamicsProcessor, ProcessorSettings
from denoc_ros.resources import example_robot_data_dir
import numpy as np
import pytest

RTOL = 1e-12
DIVERGED = 1e150  # a prediction beyond this is an overflowing integration, not a state
WORST = {}


def close(name, actual, expected, scale=None):
    """Assert |actual - expected| <= RTOL * scale (default: the largest |expected|, >= 1e-6)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    scale = max(float(np.max(np.abs(expected), initial=0.0)) if scale is None else scale, 1e-6)
    error = float(np.max(np.abs(actual - expected), initial=0.0)) / scale
    WORST[name] = max(WORST.get(name, 0.0), error)
    assert error <= RTOL, f'{name}: relative error {error:.3g} > {RTOL}'


def models():
    """Every bundled robot and every example-robot-data URDF with a moving joint (fixed base)."""
    paths = [(p.stem, str(p)) for p in bundled_urdfs()]
    base = example_robot_data_dir()
    if base is None:  # (test_example_robot_data fails or skips for it)
        return paths
    for path in sorted(base.rglob('*.urdf')):
        text = path.read_text(errors='replace')
        if any(f'type="{k}"' in text for k in ('revolute', 'continuous', 'prismatic')):
            paths.append((str(path.relative_to(base)), str(path)))
    return paths


@pytest.fixture(scope='module', autouse=True)
def report():
    """Print the worst relative errors after the module's tests."""
    yield
    print('\none pass against the separate functions, worst relative errors:\n' + '\n'.join(
        f'  {k:22s} {v:9.2e}' for k, v in sorted(WORST.items())))


def load(path):
    """Load a URDF quietly (doubtful inertias warn; they are beside the point here)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        try:
            return dr.load_urdf(path)
        except dr.DenocError as err:
            pytest.skip(f'not loadable: {err}')


def check_processor(model, rng, friction, reference, payload):
    """Feed a processor three joint states; compare each output with the separate functions."""
    if payload:
        model = dr.attach_payload(model, model.tip_link, 1.5, (0.01, 0.02, 0.05),
                                  0.003 * np.eye(3))
    settings = ProcessorSettings(feedforward_state=reference or 'desired', friction=friction,
                                 observer_gain=40.0, prediction_horizon=0.004,
                                 prediction_substeps=2)
    processor = DynamicsProcessor(model, settings)
    if payload:  # the payload set through the processor as the node sets it: same numbers
        processor = DynamicsProcessor(dr.detach_payload(model), settings)
        processor.set_payload(model.tip_link, 1.5, (0.01, 0.02, 0.05), 0.003 * np.eye(3))
        close('payload mass', processor.model.mass, model.mass)
    fr = JointFriction(dr.detach_payload(model)) if friction else None
    observer = dr.MomentumObserver(model, 40.0, fr)  # fed by mass_matrix, coriolis_matrix, g
    detector = dr.ContactDetector(np.full(model.nv, 5.0), 0.2)
    n = model.nv
    for k in range(3):
        t = 10.0 + 0.001 * k
        q = rng.uniform(-1.0, 1.0, n)
        qd, effort = rng.uniform(-1.0, 1.0, n), rng.uniform(-5.0, 5.0, n)
        desired = None
        if reference:
            desired = tuple(rng.uniform(-1.0, 1.0, n) for _ in range(3))
            processor.set_reference(*desired, now=0.0)
        out = processor.process(t, q, qd, effort, prediction=True, wrench=True,
                                accelerations=True, now=0.0)
        terms = dr.feedforward_terms(model, q, qd, desired, reference or 'desired', fr)
        for name in ('gravity', 'coriolis', 'inertia'):
            close(name, getattr(out, name), getattr(terms, name),
                  np.max(np.abs(terms.total)) + np.max(np.abs(getattr(terms, name))))
        close('friction', out.friction, terms.friction if fr else np.zeros(n), 1.0)
        close('feedforward', out.feedforward, terms.total)
        r = observer.update(t, q, qd, effort)
        flags = detector.update(r).tolist()
        tau = effort - (fr(qd) if fr else 0.0)
        try:  # the separate functions: an error (a massless joint, an overflow) or the values
            expected = (dr.forward_dynamics(model, q, qd, tau),
                        *dr.predict(model, q, qd, effort, 0.004, 2, fr))
            expected = None if not all(np.all(np.isfinite(x)) for x in expected) else expected
        except dr.InputError:
            expected = None
        if expected is not None and max(np.max(np.abs(x)) for x in expected) > DIVERGED:
            # An integration that diverges (a 1e-8 kg m^2 eyelid at 5e6 rad/s^2 reaches 1e302
            # in two substeps): the same operations in another order overflow a step earlier
            # or later, so the pass may refuse it or give it; whatever it gives is finite.
            if out.prediction is None:
                assert any(p.startswith('no prediction') for p in out.problems), out.problems
            else:
                assert all(np.all(np.isfinite(x)) for x in out.prediction)
        elif expected is None:  # the pass says so and gives neither
            assert any(p.startswith('no prediction') for p in out.problems), out.problems
            assert out.accelerations is None and out.prediction is None
        else:
            assert not out.problems, out.problems
            close('accelerations', out.accelerations, expected[0])
            for name, a, b in zip(('predicted q', 'predicted qd', 'predicted qdd'),
                                  out.prediction, expected[1:]):
                close(name, a, b)
        p = dr.mass_matrix(model, q) @ qd
        close('external torques', out.external_torques, r,
              max(np.max(np.abs(r)), np.max(np.abs(p)) / 0.001))
        if k > 0:
            wrench = dr.external_wrench(model, q, r, model.tip_link)
            close('wrench', out.wrench, wrench, max(np.max(np.abs(wrench)), 1.0))
        assert out.joint_in_contact.tolist() == flags


@pytest.mark.parametrize('name, path', models(), ids=[m[0] for m in models()])
def test_every_output_equals_the_separate_functions(name, path):
    """Observer, friction, payload and the reference modes on and off, on every robot."""
    model = load(path)
    rng = np.random.default_rng(zlib.crc32(name.encode()))  # (hash() differs per process)
    cases = [(False, None, False), (True, 'desired', True), (True, 'measured', False),
             (False, 'measured', True)]
    for friction, reference, payload in cases:
        check_processor(model, rng, friction, reference, payload)


@pytest.mark.parametrize('name, path', models()[:12], ids=[m[0] for m in models()[:12]])
def test_compute_all_terms_on_a_floating_base(name, path):
    """The same pass on the free-flyer model: g, M, C, C u, C^T qd, M a, J and the pose."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        try:
            model = dr.load_urdf(path, floating_base=True)
        except dr.DenocError as err:
            pytest.skip(f'not loadable: {err}')
    rng = np.random.default_rng(7)
    ws = dr.Workspace(model)
    q = np.concatenate((rng.uniform(-1, 1, 3), _quaternion(rng), rng.uniform(-1, 1, model.dof)))
    qd, u, a = (rng.uniform(-1, 1, model.nv) for _ in range(3))
    frame = model.link_names[-1]
    dr.compute_all_terms(model, q, qd, ws, u=u, a=a, frame=frame)
    M = dr.mass_matrix(model, q)
    C = dr.coriolis_matrix(model, q, qd)
    close('floating g', ws.g, dr.gravity_torques(model, q))
    close('floating M', ws.M, M)
    close('floating C', ws.C, C)
    close('floating C u', ws.coriolis, C @ u)
    close('floating C^T qd', ws.coriolis_transpose, C.T @ qd)
    close('floating M a', ws.inertia, M @ a)
    close('floating J', ws.J, dr.jacobian(model, q, frame))
    R, p = dr.frame_pose(model, q, frame)
    close('floating pose', np.concatenate((ws.frame_rotation.ravel(), ws.frame_translation)),
          np.concatenate((R.ravel(), p)), max(1.0, np.max(np.abs(p))))


def _quaternion(rng):
    x = rng.normal(size=4)
    return x / np.linalg.norm(x)


# -- the workspace -----------------------------------------------------------------------------
FUNCTIONS = {  # public single-state function -> (number of state arguments, workspace field)
    'inverse_dynamics': (3, 'tau'), 'gravity_torques': (1, 'g'),
    'coriolis_torques': (2, 'coriolis'), 'mass_matrix': (1, 'M'),
    'coriolis_matrix': (2, 'C'), 'convective_inertia_matrix': (2, 'convective'),
    'forward_dynamics': (3, 'ddq'), 'jacobian': (1, 'J'), 'regressor': (3, 'Y'),
}


@pytest.fixture(scope='module')
def panda():
    """Return the bundled Panda."""
    from denoc_ros.resources import bundled_urdf
    return dr.load_urdf(bundled_urdf('panda'))


def test_a_workspace_call_writes_its_buffer_and_equals_the_allocating_call(panda):
    """Same bits; the result is the workspace's own array; lists take the checked path."""
    ws = dr.Workspace(panda)
    rng = np.random.default_rng(3)
    for name, (count, field) in FUNCTIONS.items():
        function = getattr(dr, name)
        states = [rng.uniform(-1.0, 1.0, panda.nv) for _ in range(count)]
        expected = function(panda, *states)
        result = function(panda, *states, workspace=ws)
        assert result is getattr(ws, field), name
        np.testing.assert_array_equal(result, expected, err_msg=name)
        np.testing.assert_array_equal(function(panda, *[s.tolist() for s in states],
                                               workspace=ws), expected, err_msg=name)


def test_a_workspace_of_another_model_or_no_workspace_is_refused(panda):
    """The workspace names what is wrong; nothing is computed into a foreign buffer."""
    from denoc_ros.resources import bundled_urdf
    other = dr.Workspace(dr.load_urdf(bundled_urdf('ur5e')))
    q = np.zeros(panda.nv)
    for bad, match in ((other, 'another model'), ('ws', 'must be a denoc_ros.Workspace')):
        with pytest.raises(dr.InputError, match=match):
            dr.mass_matrix(panda, q, workspace=bad)
        with pytest.raises(dr.InputError, match=match):
            dr.mass_matrix(panda, q.tolist(), workspace=bad)
        with pytest.raises(dr.InputError, match=match):
            dr.compute_all_terms(panda, q, q, bad)
    with pytest.raises(dr.InputError, match=r'qd\[2\]'):
        dr.compute_all_terms(panda, q, np.array([0, 0, np.nan, 0, 0, 0, 0.0]),
                             dr.Workspace(panda))


def test_two_threads_with_two_workspaces_never_share_a_buffer(panda):
    """Four threads, two models, a workspace each: every result is its own state's."""
    from denoc_ros.resources import bundled_urdf
    ur5e = dr.load_urdf(bundled_urdf('ur5e'))
    rng = np.random.default_rng(5)
    jobs = []
    for model in (panda, ur5e, panda, ur5e):
        states = [rng.uniform(-1.0, 1.0, (2, model.nv)) for _ in range(50)]
        expected = [(dr.mass_matrix(model, q), dr.gravity_torques(model, q),
                     dr.coriolis_matrix(model, q, qd)) for q, qd in states]
        jobs.append((model, dr.Workspace(model), states, expected))
    buffers = [b for _, ws, _, _ in jobs for b in (ws.terms, ws.M, ws.C, ws.J, ws.small)]
    assert not any(np.shares_memory(x, y) for i, x in enumerate(buffers)
                   for y in buffers[i + 1:])
    assert len({ws.handle for _, ws, _, _ in jobs} | {packed(panda).handle}) == 5
    wrong, errors = [], []

    def run(model, ws, states, expected):
        try:
            for _ in range(40):
                for (q, qd), (M, g, C) in zip(states, expected):
                    dr.compute_all_terms(model, q, qd, ws)
                    ok = np.allclose(ws.M, M, rtol=1e-12, atol=1e-12) and np.allclose(
                        ws.g, g, rtol=1e-12, atol=1e-12) and np.allclose(
                        ws.C, C, rtol=1e-12, atol=1e-12)
                    ok &= np.array_equal(dr.mass_matrix(model, q, workspace=ws), M)
                    if not ok:
                        wrong.append(model.name)
        except Exception as exc:  # noqa: B902 - reported below
            errors.append(repr(exc))
    threads = [threading.Thread(target=run, args=job) for job in jobs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:1]
    assert not wrong, f'{len(wrong)} results of another state'


def test_the_model_carries_its_payload_record_through_pickling(panda):
    """The payload record is the model's (no weak table): a pickled model can detach it."""
    import pickle
    loaded = dr.attach_payload(panda, 'panda_link7', 2.0)
    copy = pickle.loads(pickle.dumps(loaded))
    assert [p.link for p in dr.payload.attached_payloads(copy)] == ['panda_link7']
    np.testing.assert_array_equal(dr.detach_payload(copy).mass, panda.mass)
    assert '_kernel_form' not in vars(copy)  # rebuilt on first use, not pickled


def test_the_compiled_wrench_solves_the_damped_least_squares_of_numpy():
    """contact_wrench (Jacobi eigenvalue, Cholesky) against NumPy's SVD and LAPACK solve."""
    from denoc_ros.dynamics.momentum_observer import contact_wrench
    rng = np.random.default_rng(8)
    worst = 0.0
    for k in range(300):
        n = 7 if k % 5 else 6
        J, tau = rng.normal(size=(6, n)), rng.normal(size=n)
        if k % 3 == 0:  # near a singularity: the damping is on
            J[5] = J[4] * 10.0 ** rng.uniform(-6, -1)
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        s = np.linalg.svd(J, compute_uv=False)[5]
        lam2 = 0.05 ** 2 * (1.0 - (s / 0.05) ** 2) if s < 0.05 else 0.0
        F = np.linalg.solve(J @ J.T + lam2 * np.eye(6), J @ tau)
        expected = np.concatenate((R.T @ F[:3], R.T @ F[3:]))
        out = np.empty(6)
        contact_wrench(J, R, tau, 0.05, 0.05, out)
        worst = max(worst, np.max(np.abs(out - expected)) / np.max(np.abs(expected)))
    assert worst < 1e-9, worst  # (conditioning up to 1e6 near the singular ones)


def test_an_overflowing_state_never_reaches_the_observer(panda):
    """A huge velocity is refused before the observer's step: the next estimate stays finite."""
    processor = DynamicsProcessor(panda, ProcessorSettings())
    q, tau = np.full(panda.nv, 0.2), dr.gravity_torques(panda, np.full(panda.nv, 0.2))
    zero = np.zeros(panda.nv)
    processor.process(1.000, q, zero, tau)
    with pytest.raises(dr.InputError, match='not finite'):
        processor.process(1.001, q, np.full(panda.nv, 1e300), tau)
    out = processor.process(1.002, q, zero, tau)
    assert not out.problems, out.problems
    np.testing.assert_allclose(out.external_torques, 0.0, atol=1e-9)  # at rest, no contact
