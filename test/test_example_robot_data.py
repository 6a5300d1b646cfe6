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
Every URDF of example-robot-data with a moving joint, fixed and floating, against Pinocchio.

The files are found by walking the installed package (every ``*.urdf`` with a revolute,
continuous or prismatic joint), not from a list; the test counts them, so that a release with
fewer files or a loader that skips some cannot pass unnoticed. Those Pinocchio's own parser
refuses are listed in :data:`PINOCCHIO_REFUSES` and the test asserts that it still refuses them.
Every other one must load with ``dr.load_urdf`` (fixed root and ``floating_base=True``); its
doubtful links give warnings (counted per kind, printed with ``pytest -s``), never an error.

Reference: ``pin.buildModelFromUrdf`` (with ``JointModelFreeFlyer()`` for the floating root),
joints mapped by name, at seeded random states: ``rnea`` (inverse dynamics), ``crba`` (mass
matrix), ``computeGeneralizedGravity``, and ``aba`` (forward dynamics) where the mass matrix is
well conditioned. Tolerance ``TOL = 1e-9`` relative, ``max|ours - pin| <= TOL max|pin|``. Where
the mass matrix's condition number exceeds ``DIRECT_COND`` the accelerations themselves carry
that many times the rounding error in both libraries, so ours are checked through Pinocchio's
``rnea`` (which must give back the forces, to ``TOL``); where it is singular (a joint moving
only massless links) forward dynamics must raise, naming a joint.
"""

import collections
import pathlib
import re
import warnings

from conftest import require_oracle, skip_or_fail
import denoc_ros as dr
from denoc_ros.errors import InputError, URDFWarning
from denoc_ros.resources import example_robot_data_dir
import numpy as np
import pytest
from robots_for_tests import PinocchioMap

pin = require_oracle('pinocchio')

TOL = 1e-9
DIRECT_COND = 1e6    # condition number of M below which accelerations are compared directly
SINGULAR_COND = 1e13  # above it M counts as singular (a pivot at rounding level)
STATES = 2

# The pinned example-robot-data: 69 URDF files, 66 with a moving joint; Pinocchio loads all 66
# (fixed and free-flyer root). The loader before lenient loading refused 8 of them with a fixed
# root and 16 with a floating one (what strict=True still refuses); now it loads all 66 both ways.
MOVING_JOINT_FILES = 66
# URDFs with a moving joint that Pinocchio's URDF parser refuses (relative path: reason); none in
# the pinned release. A file listed here must still be refused by Pinocchio.
PINOCCHIO_REFUSES = {}

MOVING = re.compile(r'<joint\b[^>]*\btype\s*=\s*["\'](revolute|continuous|prismatic)["\']')
WARNING_KINDS = {
    'triangle inequality': 'violate the triangle inequality',
    'negative moment': 'one is negative',
    'moves only massless links': 'moves only massless links',
    'no inertia about the axis': 'no rotational inertia about the axis',
    'massless floating base': 'the floating base and everything on it are massless',
    'mimic joint': ' mimics ',
    'repeated element': 'the first is used',
    'unknown attribute': 'unknown attribute',
    'lower limit above upper': 'above upper limit',
    'unknown element': 'unknown element',
    'negative damping or friction': 'negative ',
}
SEEN = collections.Counter()     # (kind, root) -> links warned about
WORST = collections.defaultdict(lambda: (0.0, ''))  # quantity -> (relative error, robot)
FORWARD = collections.Counter()  # (how forward dynamics was checked, root) -> states


def moving_joint_urdfs():
    """Return the relative paths of the package's URDFs with a moving joint (sorted)."""
    base = example_robot_data_dir()
    if base is None:
        return []
    return sorted(str(path.relative_to(base)) for path in base.rglob('*.urdf')
                  if MOVING.search(path.read_text(errors='replace')))


URDFS = moving_joint_urdfs()


@pytest.fixture(scope='module', autouse=True)
def report():
    """Print the worst errors and the warning kinds after the module's tests."""
    yield
    lines = [f'  {k:12s} {e:9.2e} ({r})' for k, (e, r) in sorted(WORST.items())]
    lines += [f'  forward dynamics {how} [{root}]: {count} state(s)'
              for (how, root), count in sorted(FORWARD.items())]
    lines += [f'  warning {kind} [{root}]: {count} link(s)' for (kind, root), count in sorted(
        SEEN.items())]
    print('\nexample-robot-data vs Pinocchio, worst relative errors, warnings:\n'
          + '\n'.join(lines))


def test_the_collection_is_all_there():
    if example_robot_data_dir() is None:
        skip_or_fail('example-robot-data is not installed')
    assert len(URDFS) == MOVING_JOINT_FILES, URDFS
    assert set(PINOCCHIO_REFUSES) <= set(URDFS)


def pinocchio_model(path, floating):
    """Return Pinocchio's model of ``path`` (free-flyer root if ``floating``)."""
    if floating:
        return pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    return pin.buildModelFromUrdf(str(path))


def check(what, name, ours, reference):
    """Assert ``max|ours - reference| <= TOL max|reference|``; keep the worst error."""
    ours, reference = np.asarray(ours), np.asarray(reference)
    assert ours.shape == reference.shape, (what, name)
    scale = float(np.max(np.abs(reference)))
    error = float(np.max(np.abs(ours - reference))) / max(scale, 1e-300)
    if error >= WORST[what][0]:
        WORST[what] = (error, name)
    assert error <= TOL, f'{what} ({name}): relative error {error:.3g} > {TOL:g}'


def random_configuration(model, rng):
    """Return a random configuration (a unit quaternion for a floating base)."""
    q = rng.uniform(-1.0, 1.0, size=model.nq)
    if model.floating:
        q[3:7] /= np.linalg.norm(q[3:7])
    return q


@pytest.mark.parametrize('floating', [False, True], ids=['fixed', 'floating'])
@pytest.mark.parametrize('relpath', URDFS)
def test_loads_and_matches_pinocchio(relpath, floating):
    path = pathlib.Path(example_robot_data_dir()) / relpath
    root = 'floating' if floating else 'fixed'
    if relpath in PINOCCHIO_REFUSES:
        with pytest.raises(Exception):  # noqa: B017 - Pinocchio raises assorted types
            pinocchio_model(path, floating)
        pytest.skip(f'Pinocchio refuses it: {PINOCCHIO_REFUSES[relpath]}')
    pm = pinocchio_model(path, floating)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        model = dr.load_urdf(str(path), floating_base=floating)
    messages = [str(w.message) for w in caught if issubclass(w.category, URDFWarning)]
    assert messages == list(model.warnings)
    subjects = [m.split(':')[0].split(' mimics ')[0] for m in messages]
    assert len(subjects) == len(set(subjects)), 'one warning per link or joint'
    for message in messages:
        kinds = [k for k, text in WARNING_KINDS.items() if text in message]
        assert kinds, message
        SEEN[(kinds[0], root)] += 1
    data = pm.createData()
    mp = PinocchioMap(pm, model.joint_names, floating=model.floating)
    rng = np.random.default_rng(len(relpath))
    for _ in range(STATES):
        q = random_configuration(model, rng)
        v, a = rng.normal(size=model.nv), rng.normal(size=model.nv)
        pq, pv, pa = mp.q(q), mp.v(v), mp.v(a)
        tau = dr.inverse_dynamics(model, q, v, a)
        check('rnea', relpath, tau, mp.from_v(pin.rnea(pm, data, pq, pv, pa)))
        M_pin = pin.crba(pm, data, pq)
        M_pin = mp.from_vv(np.triu(M_pin) + np.triu(M_pin, 1).T)
        check('crba', relpath, dr.mass_matrix(model, q), M_pin)
        check('gravity', relpath, dr.gravity_torques(model, q),
              mp.from_v(pin.computeGeneralizedGravity(pm, data, pq)))
        cond = np.linalg.cond(M_pin)
        FORWARD[('raises (singular M)' if cond > SINGULAR_COND else 'direct'
                 if cond <= DIRECT_COND else 'through rnea (ill-conditioned M)', root)] += 1
        if cond > SINGULAR_COND:
            for forward in (dr.forward_dynamics, dr.forward_dynamics_cholesky):
                with pytest.raises(InputError, match="mass matrix is singular: .*joint '"):
                    forward(model, q, v, tau)
            continue
        for forward in (dr.forward_dynamics, dr.forward_dynamics_cholesky):
            qdd = forward(model, q, v, tau)
            if cond <= DIRECT_COND:
                check('aba', relpath, qdd, mp.from_v(pin.aba(pm, data, pq, pv, mp.v(tau))))
            else:  # ill-conditioned: the forces that give these accelerations, by Pinocchio
                back = pin.rnea(pm, data, pq, pv, mp.v(qdd))
                check('aba (rnea)', relpath, tau, mp.from_v(back))
