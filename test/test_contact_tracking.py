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
:class:`denoc_ros.ContactTracker`: a contact located over a stream of joint states.

The bundled Panda with cylinders for collision geometry and pushes of known forces at known
points (joint torques from Pinocchio, as in ``test_contact_processor``). The tracker's updates
after the first score only the points near the last full search's answer; each is checked
against :func:`denoc_ros.locate_contact` (the full search) on the same inputs: the same status,
link, point and force where the contact stays (a tracked set that missed the best point would
give another point or a worse residual), the new link found again when the contact jumps, and
every joint state in contact located by the processor.
"""

import math

import denoc_ros as dr
from denoc_ros.errors import InputError
import numpy as np
import pytest
from test_contact_processor import (panda_with_collisions, PinocchioArm, processor_for,
                                    push_force, Q, run_still, side_point, side_push)

NOISE = 0.05   # N m per joint: the node's floor
PUSHES = [('panda_link7', 0.7, 0.04, 30.0), ('panda_link6', 2.5, -0.02, 25.0),
          ('panda_link5', -1.0, 0.02, 30.0), ('panda_link4', 1.0, 0.0, 40.0),
          ('panda_link3', 2.0, -0.15, 30.0)]


@pytest.fixture(scope='module')
def robot():
    """Return (our model, Pinocchio arm, collision geometry)."""
    text = panda_with_collisions()
    return dr.load_urdf(text), PinocchioArm(text), dr.load_collision_geometry(text)


def torques(arm, q, link, theta, height, magnitude):
    """Return J(q, r)^T F of a push into a link's cylinder side at configuration q."""
    point, normal = side_point(link, theta, height)
    R, _ = arm.pose(q, link)
    return arm.push_torques(q, link, point, push_force(R, normal, magnitude))


def same(a, b, point_tolerance=0.0):
    """Assert two locations give the same status, link, point and force."""
    assert (a.status, a.link) == (b.status, b.link), (a.message, b.message)
    np.testing.assert_allclose(a.point, b.point, rtol=0, atol=point_tolerance)
    np.testing.assert_allclose(a.force, b.force, rtol=1e-6, atol=1e-6 + 100 * point_tolerance)


@pytest.mark.parametrize('push', PUSHES, ids=[p[0] for p in PUSHES])
def test_tracked_update_is_the_full_search_on_the_same_inputs(robot, push):
    """On the same q and tau_ext, the tracked update answers as locate_contact does."""
    model, arm, geometry = robot
    tau = torques(arm, Q, *push)
    full = dr.locate_contact(model, geometry, Q, tau, noise=NOISE)
    tracker = dr.ContactTracker(model, geometry)
    first = tracker.update(Q, tau, noise=NOISE)
    assert tracker.last_full and tracker.full_searches == 1
    second = tracker.update(Q, tau, noise=NOISE)
    assert not tracker.last_full and tracker.tracked == 1   # the tracked path ran
    points = sum(s.points.shape[0] for s in geometry.surfaces.values())
    print(f'\n{push[0]}: {full.status} on {full.link}; tracked {tracker.tracked_points} of '
          f'{points} points; {full.message}')
    assert 0 < tracker.tracked_points < points / 4
    same(first, full)
    same(second, full)
    assert second.message == full.message and second.residual == full.residual
    np.testing.assert_array_equal(second.candidates, full.candidates)


@pytest.mark.parametrize('push', PUSHES[:3], ids=[p[0] for p in PUSHES[:3]])
def test_moving_arm_tracked_as_the_full_search(robot, push):
    """
    A push fixed on a link while the arm moves (up to 1.9 rad/s, 1 kHz joint states).

    Each tracked answer is compared with the full search on the same inputs: the status and
    link agree in at least 95 % of the joint states (a body entering the band between full
    searches is seen by the next one, 25 states later at most), the point to 1 mm where both
    agree; the full searches' answers are locate_contact's exactly.
    """
    model, arm, geometry = robot
    tracker = dr.ContactTracker(model, geometry, full_period=25)
    steps, agree = 100, 0
    pattern = np.array([1, -1, 1, 1, -1, 1, 1.0])
    for k in range(steps):
        q = Q + 0.3 * math.sin(2 * math.pi * k / 1000.0) * pattern
        tau = torques(arm, q, *push)
        got = tracker.update(q, tau, noise=NOISE)
        full = dr.locate_contact(model, geometry, q, tau, noise=NOISE)
        if tracker.last_full:
            same(got, full)
        if (got.status, got.link) == (full.status, full.link):
            agree += 1
            same(got, full, point_tolerance=1e-3)
    print(f'\n{push[0]}: {tracker.full_searches} full searches, {tracker.tracked} tracked '
          f'updates, {agree} of {steps} as the full search')
    assert tracker.full_searches >= math.ceil(steps / 25) and tracker.tracked >= steps - 10
    assert agree >= 0.95 * steps


def test_a_contact_that_jumps_to_another_link_is_found_again(robot):
    """From link 7 to link 5: the tracked residual grows, a full search finds link 5 at once."""
    model, arm, geometry = robot
    tracker = dr.ContactTracker(model, geometry, full_period=1000)
    before = torques(arm, Q, 'panda_link7', 0.7, 0.04, 30.0)
    after = torques(arm, Q, *PUSHES[2])   # on panda_link5
    for _ in range(5):
        got = tracker.update(Q, before, noise=NOISE)
    assert got.link == 'panda_link7' and tracker.full_searches == 1 and tracker.tracked == 4
    got = tracker.update(Q, after, noise=NOISE)
    assert tracker.last_full and tracker.full_searches == 2   # no periodic search due
    same(got, dr.locate_contact(model, geometry, Q, after, noise=NOISE))
    assert got.link == 'panda_link5'
    # and back, while a contact on link 5 is tracked
    tracker.update(Q, after, noise=NOISE)
    assert not tracker.last_full
    got = tracker.update(Q, before, noise=NOISE)
    assert tracker.last_full and got.link == 'panda_link7'


def test_no_contact_resets_and_bad_input(robot):
    """Torques under the threshold end the tracking; a bad full_period or q is named."""
    model, arm, geometry = robot
    tracker = dr.ContactTracker(model, geometry)
    tau = torques(arm, Q, 'panda_link7', 0.7, 0.04, 30.0)
    tracker.update(Q, tau, noise=NOISE)
    assert tracker.tracking
    assert tracker.update(Q, 1e-3 * tau, noise=NOISE).status == 'no_contact'
    assert not tracker.tracking and tracker.tracked_points == 0
    tracker.update(Q, tau, noise=NOISE)
    assert tracker.last_full
    with pytest.raises(InputError, match='full_period'):
        dr.ContactTracker(model, geometry, full_period=0)
    with pytest.raises(InputError, match='friction_coefficient'):
        dr.ContactTracker(model, geometry, friction_coefficient=-1.0)
    with pytest.raises(InputError, match='q must be finite'):
        tracker.update(np.full(7, np.nan), tau, noise=NOISE)
    with pytest.raises(InputError, match='noise must be > 0'):
        tracker.update(Q, tau, noise=np.zeros(7))


def test_processor_locates_every_joint_state_in_contact(robot):
    """The processor locates each joint state in contact, a full search every 25th."""
    model, arm, geometry = robot
    tau_ext = side_push(arm, 'panda_link7', 0.7, 0.04, 30.0)
    processor = processor_for(model, geometry, contact_time_share=0.5)   # the node's default
    outs = run_still(processor, arm, lambda t: tau_ext if 0.25 <= t < 0.45 else np.zeros(7),
                     duration=0.5, locate_from=0.0)
    contact = [o for o in outs if o.in_contact]
    located = [o for o in contact if o.contact_location is not None]
    stats = processor.stats
    print(f'\n{len(contact)} joint states in contact, {len(located)} located, '
          f'{stats.full_searches} full searches; mean {1e3 * stats.locate_sum / stats.located:.3f}'
          f' ms, max {1e3 * stats.locate_max:.3f} ms per location')
    assert len(contact) > 150 and len(located) == len(contact) == stats.located
    assert stats.full_searches <= len(contact) / 25 + 2
    assert all(o.contact_location.link == 'panda_link7' for o in located[20:])
    assert sum(o.contact_ended for o in outs) == 1 and not processor._tracker.tracking
