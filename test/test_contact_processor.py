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
Contact localization in the dynamics node's processor, without ROS.

The bundled Panda with cylinders for collision geometry (close to franka_description's coarse
collision model), held still; a push of a known force at a known point of a cylinder's side
(analytic, not one of the geometry's samples) gives the joint efforts ``g(q) - J(q, r)^T F``,
with ``g`` and the point's Jacobian ``J`` from Pinocchio (a frame added at the point: an
algorithm and a model not ours). The processor's observer turns the efforts into tau_ext; its
location must be exactly what a direct :func:`denoc_ros.locate_contact` call on the same
torques gives, and the truth within the tolerances below. Then the bad and hard cases: a push
below the threshold, two pushes at once, a push on a link without geometry, an unreadable mesh,
no collision geometry at all, a floating base, the observer off, localization off.
"""

import math
import re

from conftest import require_oracle
import denoc_ros as dr
from denoc_ros.contact.noise import TorqueNoise
from denoc_ros.processor import DynamicsProcessor, HOLD, ProcessorSettings
from denoc_ros.resources import bundled_urdf
import numpy as np
import pytest

pin = require_oracle('pinocchio')

Q = np.array([0.3, -0.5, 0.2, -2.0, 0.1, 1.5, 0.4])   # far from singularities
RATE = 1000.0
PUSH_AT = 0.25  # [s]: the noise at rest is measured before
POINT_TOLERANCE = 0.02   # [m]: the locator's resolution; fine samples are ~5 mm apart
FORCE_TOLERANCE = 0.15   # relative: the force at a sample up to a few mm from the truth

# Cylinders (radius, length, origin xyz, origin rpy) per link, link frame, after
# franka_description's coarse collision model.
CYLINDERS = {
    'panda_link0': [(0.06, 0.03, (0.0, 0.0, 0.015), (0.0, 0.0, 0.0))],
    'panda_link1': [(0.06, 0.283, (0.0, 0.0, -0.1915), (0.0, 0.0, 0.0))],
    'panda_link2': [(0.06, 0.12, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
                    (0.05, 0.2, (0.0, -0.15, 0.0), (math.pi / 2, 0.0, 0.0))],
    'panda_link3': [(0.06, 0.15, (0.0, 0.0, -0.145), (0.0, 0.0, 0.0))],
    'panda_link4': [(0.06, 0.12, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))],
    'panda_link5': [(0.06, 0.1, (0.0, 0.0, -0.26), (0.0, 0.0, 0.0)),
                    (0.025, 0.14, (0.0, 0.08, -0.13), (0.0, 0.0, 0.0))],
    'panda_link6': [(0.05, 0.08, (0.0, 0.0, -0.03), (0.0, 0.0, 0.0))],
    'panda_link7': [(0.04, 0.14, (0.0, 0.0, 0.01), (0.0, 0.0, 0.0))],
}


def _v(values):
    return ' '.join(repr(float(x)) for x in values)


def panda_with_collisions(without=(), meshes=None):
    """
    Return the bundled Panda's URDF text with the CYLINDERS as <collision> elements.

    ``without``: links left without collision; ``meshes``: {link: filename} of a mesh
    collision element instead of the link's cylinders.
    """
    text = bundled_urdf('panda').read_text()
    meshes = meshes or {}
    for link, shapes in CYLINDERS.items():
        if link in without:
            continue
        if link in meshes:
            xml = (f'<collision><geometry><mesh filename="{meshes[link]}"/></geometry>'
                   '</collision>')
        else:
            xml = ''.join(f'<collision><origin xyz="{_v(xyz)}" rpy="{_v(rpy)}"/><geometry>'
                          f'<cylinder radius="{r!r}" length="{h!r}"/></geometry></collision>'
                          for r, h, xyz, rpy in shapes)
        pattern = re.compile(rf'<link name="{link}"\s*(/>|>)')
        match = pattern.search(text)
        assert match, link
        if match.group(1) == '/>':
            text = text[:match.start()] + f'<link name="{link}">{xml}</link>' + \
                text[match.end():]
        else:
            text = text[:match.end()] + xml + text[match.end():]
    return text


def side_point(link, theta, height, shape=0):
    """Return (point, outward normal) on a link's cylinder side: angle theta, height (m)."""
    r, h, xyz, rpy = CYLINDERS[link][shape]
    R = pin.rpy.rpyToMatrix(*rpy)
    local = np.array([r * math.cos(theta), r * math.sin(theta), height])
    return R @ local + np.asarray(xyz), R @ np.array([math.cos(theta), math.sin(theta), 0.0])


class PinocchioArm:
    """The same URDF in Pinocchio: gravity and contact-point Jacobians (the independent side)."""

    def __init__(self, text):
        self.model = pin.buildModelFromXML(text)
        self.data = self.model.createData()

    def gravity(self, q):
        """Return g(q)."""
        return pin.computeGeneralizedGravity(self.model, self.data, q).copy()

    def pose(self, q, link):
        """Return (R, o) of a link frame in the base frame."""
        pin.framesForwardKinematics(self.model, self.data, q)
        placement = self.data.oMf[self.model.getFrameId(link)]
        return placement.rotation.copy(), placement.translation.copy()

    def push_torques(self, q, link, point, force_base):
        """Return J(q, r)^T F: the linear Jacobian of a frame added at the point (link frame)."""
        model = self.model.copy()
        parent = model.getFrameId(link)
        frame = model.frames[parent]
        placement = frame.placement * pin.SE3(np.eye(3), np.asarray(point, dtype=float))
        fid = model.addFrame(pin.Frame('contact_point', frame.parentJoint, parent, placement,
                                       pin.FrameType.OP_FRAME))
        data = model.createData()
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        J = pin.getFrameJacobian(model, data, fid, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED)
        return J[:3].T @ np.asarray(force_base, dtype=float)


def push_force(rotation, normal, magnitude, tangent_ratio=0.2):
    """Return a force (base axes) pushing into the surface, inside a 0.6 friction cone."""
    n = rotation @ normal
    t = np.cross(n, [0.0, 0.0, 1.0])
    if np.linalg.norm(t) < 1e-6:
        t = np.cross(n, [1.0, 0.0, 0.0])
    t /= np.linalg.norm(t)
    return magnitude * (-n + tangent_ratio * t) / math.hypot(1.0, tangent_ratio)


def side_push(arm, link, theta, height, magnitude):
    """Return the joint torques (Pinocchio) of a push_force on a link's cylinder side at Q."""
    point, normal = side_point(link, theta, height)
    R, _ = arm.pose(Q, link)
    return arm.push_torques(Q, link, point, push_force(R, normal, magnitude))


def run_still(processor, arm, tau_ext_at, duration=0.55, locate_from=0.5):
    """
    Feed the still arm at Q for ``duration`` s at 1 kHz, efforts g(q) - tau_ext(t).

    Returns the Outputs of every joint state; locations only from ``locate_from`` on (after a
    push from PUSH_AT the observer has converged: exp(-50 * 0.25) < 4e-6).
    """
    g = arm.gravity(Q)
    zero = np.zeros(7)
    outs = []
    for k in range(int(round(duration * RATE))):
        t = 10.0 + k / RATE
        outs.append(processor.process(t, Q.copy(), zero, g - tau_ext_at(k / RATE),
                                      locate=k / RATE >= locate_from))
    return outs


@pytest.fixture(scope='module')
def robot():
    """Return (URDF text, our model, Pinocchio arm, collision geometry)."""
    text = panda_with_collisions()
    return text, dr.load_urdf(text), PinocchioArm(text), dr.load_collision_geometry(text)


def processor_for(model, geometry, **values):
    """
    Return a processor with localization on (observer 50/s, threshold 5 N m).

    No relative noise unless asked: the torques here are exact (no model error); every joint
    state in contact located (no time share).
    """
    values.setdefault('contact_relative_noise', 0.0)
    values.setdefault('contact_time_share', 0.0)
    settings = ProcessorSettings(contact_localization=True, **values)
    return DynamicsProcessor(model, settings, geometry)


@pytest.mark.parametrize('link, theta, height, magnitude', [
    ('panda_link7', 0.7, 0.04, 30.0), ('panda_link6', 2.5, -0.02, 25.0),
    ('panda_link7', -2.0, -0.03, 15.0)])
def test_located_as_a_direct_call_and_at_the_truth(robot, link, theta, height, magnitude):
    """The processor's location is locate_contact's on its tau_ext, and the truth within 2 cm."""
    _, model, arm, geometry = robot
    point, normal = side_point(link, theta, height)
    R, o = arm.pose(Q, link)
    force = push_force(R, normal, magnitude)
    tau_ext = arm.push_torques(Q, link, point, force)
    processor = processor_for(model, geometry)
    assert processor.localizing, processor.localization_note
    outs = run_still(processor, arm, lambda t: tau_ext if t >= PUSH_AT else np.zeros(7))
    assert all(o.contact_location is None for o in outs[:500])   # not asked for
    out = outs[-1]
    np.testing.assert_allclose(out.external_torques, tau_ext, atol=1e-4)
    noise = processor.noise()
    np.testing.assert_array_equal(noise, processor.torque_noise.floor)   # exact torques: 0
    got = out.contact_location
    direct = dr.locate_contact(model, geometry, Q, out.external_torques.copy(),
                               threshold=processor.detector.thresholds, noise=noise,
                               relative_noise=0.0)
    for name in ('status', 'link', 'message', 'residual'):
        assert getattr(got, name) == getattr(direct, name), name
    for name in ('point', 'point_base', 'normal', 'force', 'covariance', 'candidates'):
        np.testing.assert_array_equal(getattr(got, name), getattr(direct, name), err_msg=name)
    truth_base = R @ point + o
    error = np.linalg.norm(got.point_base - truth_base)
    force_error = np.linalg.norm(got.force - force) / magnitude
    print(f'\n{link}: {got.status} on {got.link}, point error {100 * error:.2f} cm, force '
          f'error {100 * force_error:.1f} %, residual {got.residual:.3g} N m; {got.message}')
    assert got.status == 'located' and got.link == link
    assert error < POINT_TOLERANCE
    assert force_error < FORCE_TOLERANCE
    np.testing.assert_allclose(out.contact_rotation, R, atol=1e-12)
    assert processor.stats.located == 50


def test_contact_end_is_reported_once(robot):
    """The push stops: one joint state says the contact ended, the next ones nothing."""
    _, model, arm, geometry = robot
    tau_ext = side_push(arm, 'panda_link7', 0.3, 0.0, 30.0)
    processor = processor_for(model, geometry)
    outs = run_still(processor, arm, lambda t: tau_ext if PUSH_AT <= t < 0.4 else np.zeros(7),
                     duration=0.6, locate_from=0.0)
    located = [k for k, o in enumerate(outs) if o.contact_location is not None]
    ended = [k for k, o in enumerate(outs) if o.contact_ended]
    assert located and len(ended) == 1
    assert ended[0] == located[-1] + 1 and not outs[ended[0]].in_contact
    assert all(outs[k].in_contact for k in located)


def test_below_threshold_no_location(robot):
    """A 1 N push gives torques under the 5 N m threshold: no contact, no locator call."""
    _, model, arm, geometry = robot
    tau_ext = side_push(arm, 'panda_link7', 0.3, 0.0, 1.0)
    processor = processor_for(model, geometry)
    outs = run_still(processor, arm, lambda t: tau_ext if t >= PUSH_AT else np.zeros(7),
                     locate_from=0.0)
    assert np.abs(outs[-1].external_torques).max() > 0.1   # felt, under the threshold
    assert all(o.contact_location is None and not o.contact_ended for o in outs)
    assert processor.stats.located == 0 and processor.last_location is None


@pytest.mark.parametrize('relative_noise, expected', [(0.0, ('unexplained',)),
                                                      (0.05, ('unexplained', 'ambiguous'))])
def test_two_contacts_are_not_one_confident_point(robot, relative_noise, expected):
    """Pushes on link4 and link7 at once: unexplained (ambiguous with model error), not located."""
    _, model, arm, geometry = robot
    tau_ext = np.zeros(7)
    for link, theta, height, magnitude in (('panda_link4', 1.0, 0.0, 40.0),
                                           ('panda_link7', -1.0, 0.03, 30.0)):
        tau_ext += side_push(arm, link, theta, height, magnitude)
    processor = processor_for(model, geometry, contact_relative_noise=relative_noise)
    got = run_still(processor, arm, lambda t: tau_ext if t >= PUSH_AT else np.zeros(7))
    got = got[-1].contact_location
    print(f'\ntwo contacts, relative noise {relative_noise}: {got.message}')
    assert got.in_contact and got.status in expected
    if got.status == 'unexplained':
        assert got.link == '' and not np.any(got.point) and not np.any(got.force)


@pytest.mark.parametrize('theta, height', [(2.5, -0.02), (-1.5, 0.02)])
def test_push_on_a_link_without_geometry(robot, theta, height):
    """link6 has no <collision>: a push there is unexplained, and names link6."""
    _, model, arm, _ = robot
    text = panda_with_collisions(without=('panda_link6',))
    geometry = dr.load_collision_geometry(text)
    assert 'panda_link6' in geometry.links_without_geometry
    processor = processor_for(model, geometry)
    assert 'without: panda_link6' in processor.localization_note
    tau_ext = side_push(arm, 'panda_link6', theta, height, 30.0)
    got = run_still(processor, arm, lambda t: tau_ext if t >= PUSH_AT else np.zeros(7))
    got = got[-1].contact_location
    print(f'\nlink without geometry: {got.status}: {got.message}')
    assert got.in_contact and got.status == 'unexplained' and 'panda_link6' in got.message
    assert got.link == '' and not np.any(got.point) and np.all(np.isfinite(got.covariance))


def test_unreadable_mesh_is_named_and_the_rest_works(robot):
    """A missing mesh on link5: a warning names link and file; link7 is still located."""
    _, model, arm, _ = robot
    missing = 'package://no_such_package/meshes/link5.stl'
    text = panda_with_collisions(meshes={'panda_link5': missing})
    with pytest.warns(UserWarning):
        geometry = dr.load_collision_geometry(text)
    assert any('panda_link5' in w and 'link5.stl' in w for w in geometry.warnings)
    assert 'panda_link5' in geometry.unreadable
    processor = processor_for(model, geometry)
    assert processor.localizing and 'panda_link5' in processor.localization_note
    tau_ext = side_push(arm, 'panda_link7', 0.7, 0.04, 30.0)
    got = run_still(processor, arm, lambda t: tau_ext if t >= PUSH_AT else np.zeros(7))
    got = got[-1].contact_location
    assert got.status == 'located' and got.link == 'panda_link7'


def test_no_collision_geometry_at_all_runs_without(robot):
    """The bundled Panda has no <collision>: localization says so once, the rest runs."""
    _, model, arm, _ = robot
    geometry = dr.load_collision_geometry(bundled_urdf('panda'))
    assert not geometry.surfaces
    processor = processor_for(model, geometry)
    assert not processor.localizing
    assert processor.localization_note.startswith('off: no moving link')
    tau_ext = side_push(arm, 'panda_link7', 0.7, 0.04, 30.0)
    outs = run_still(processor, arm, lambda t: tau_ext if t >= PUSH_AT else np.zeros(7),
                     locate_from=0.0)
    assert outs[-1].in_contact and all(o.contact_location is None for o in outs)
    assert not any(o.problems for o in outs) and processor.stats.located == 0


def test_floating_base_observer_off_and_off(robot):
    """A floating base is unsupported, the observer off leaves nothing to locate; said once."""
    text, model, _, geometry = robot
    floating = dr.load_urdf(text, floating_base=True)
    processor = processor_for(floating, geometry)
    assert not processor.localizing and 'floating base' in processor.localization_note
    q = np.zeros(floating.nq)
    q[6] = 1.0
    out = processor.process(0.0, q, np.zeros(floating.nv))
    assert out.contact_location is None and not out.problems
    processor = processor_for(model, geometry, observer_gain=0.0)
    assert not processor.localizing and 'observer' in processor.localization_note
    off = DynamicsProcessor(model, ProcessorSettings(), geometry)
    assert not off.localizing and off.localization_note == 'off'
    # turned on at run time: the same processor starts locating
    on = ProcessorSettings(contact_localization=True)
    off.configure(on)
    assert off.localizing


def test_the_noise_at_rest_leaves_out_the_rise_of_a_push(robot):
    """The observer's rise before a contact is flagged and its decay after are no noise."""
    _, model, arm, geometry = robot
    tau_ext = side_push(arm, 'panda_link7', 0.7, 0.04, 30.0)
    processor = processor_for(model, geometry)
    outs = run_still(processor, arm, lambda t: tau_ext if 0.3 <= t < 0.4 else np.zeros(7),
                     duration=1.0, locate_from=2.0)
    flagged = [k for k, o in enumerate(outs) if o.in_contact]
    rise = flagged[0] - 300
    print(f'\ncontact flagged {rise} joint states after the push began; held {HOLD / 50} s')
    assert 0 < rise < HOLD / 50.0 * RATE
    np.testing.assert_array_equal(processor.noise(), processor.torque_noise.floor)
    # fed at once, with the flags alone, the rise (and the decay after the push) count
    naive = TorqueNoise(7)
    g = arm.gravity(Q)
    replay = DynamicsProcessor(model, ProcessorSettings(), geometry)
    for k in range(1000):
        t = 10.0 + k / RATE
        effort = g - (tau_ext if 0.3 <= k / RATE < 0.4 else np.zeros(7))
        out = replay.process(t, Q.copy(), np.zeros(7), effort)
        naive.update(t, out.external_torques, out.in_contact)
    print(f'naive noise: {np.round(naive.sigma, 3)} N m')
    assert naive.sigma.max() > 5 * naive.floor


def test_a_slow_locator_takes_its_share_of_the_time(robot, monkeypatch):
    """A locator taking >= 4 ms on 1 kHz states, share 0.5: at most half the stamp time."""
    import time
    from denoc_ros.contact.track import ContactTracker
    from denoc_ros.processor import SHARE_WINDOW
    _, model, arm, geometry = robot
    real = ContactTracker.update
    spent = []

    def slow(self, *args, **kwargs):
        start = time.perf_counter()
        time.sleep(0.004)
        try:
            return real(self, *args, **kwargs)
        finally:
            spent.append(time.perf_counter() - start)
    monkeypatch.setattr(ContactTracker, 'update', slow)
    tau_ext = side_push(arm, 'panda_link7', 0.7, 0.04, 30.0)
    processor = processor_for(model, geometry, contact_time_share=0.5)
    outs = run_still(processor, arm, lambda t: tau_ext if t >= PUSH_AT else np.zeros(7),
                     duration=0.6)
    located = [k for k, o in enumerate(outs) if o.contact_location is not None]
    gaps = np.diff(located)
    print(f'\n{len(located)} of 100 states located, gaps {sorted(set(gaps.tolist()))} ms, '
          f'{1e3 * sum(spent):.1f} ms spent')
    # the budget: half of the 100 ms of stamp time, plus half of one window to begin with
    assert len(located) >= 5 and sum(spent) <= 0.5 * (0.1 + SHARE_WINDOW) + 0.004
    assert gaps[-5:].min() >= 8   # once the window's budget is spent
    assert all(outs[k].contact_location.link == 'panda_link7' for k in located)
    assert all(o.in_contact for o in outs[500:])   # the skipped states are still in contact
