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
The located contact as messages, without a node: ContactLocation fields and the RViz markers.

The force arrow is checked against a rotation and a force made here (the link's axes rotated by
a known angle): in the link frame it must be R^T F, end at the point and have the documented
length; the candidates reuse their Points without mixing two messages' values.
"""

import math

from conftest import require_module
from denoc_ros.contact.locate import ContactLocation
import numpy as np
import pytest

require_module('visualization_msgs.msg')
from denoc_ros.ros import contact_outputs as co  # noqa: E402, I100
from denoc_ros_interfaces.msg import ContactLocation as LocationMsg  # noqa: E402
from std_msgs.msg import Header  # noqa: E402
from visualization_msgs.msg import Marker  # noqa: E402


def rotation_z(angle):
    """Return the rotation by ``angle`` about z."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def header(sec=3):
    """Return a header with a stamp."""
    h = Header()
    h.stamp.sec, h.stamp.nanosec = sec, 500
    return h


def test_location_message_fields_and_candidates():
    """Every field written; a shorter candidate list after a long one holds only its own."""
    rng = np.random.default_rng(1)
    many = rng.normal(size=(300, 3))
    first = ContactLocation('ambiguous', link='l2', point=np.array([0.1, 0.2, 0.3]),
                            point_base=np.array([1.0, 2.0, 3.0]), normal=np.array([0, 0, 1.0]),
                            force=np.array([0.0, 0.0, -20.0]), residual=0.4,
                            covariance=np.diag([1e-4, 2e-4, 3e-4]), candidates=many,
                            candidate_links=('l2',) * 300, message='two links')
    msg, pool = LocationMsg(), []
    co.fill_location(msg, header(), first, 'base', pool)
    assert msg.in_contact and msg.status == 'ambiguous' and msg.link == 'l2'
    assert msg.header.frame_id == 'base' and msg.header.stamp.nanosec == 500
    assert (msg.point_base.x, msg.force.z, msg.normal.z) == (1.0, -20.0, 1.0)
    assert msg.covariance[8] == 3e-4 and msg.residual == 0.4 and msg.message == 'two links'
    np.testing.assert_array_equal([[p.x, p.y, p.z] for p in msg.candidates], many)
    few = ContactLocation('located', link='l7', candidates=many[:2] + 5.0,
                          candidate_links=('l7', 'l7'))
    co.fill_location(msg, header(), few, 'base', pool)
    np.testing.assert_array_equal([[p.x, p.y, p.z] for p in msg.candidates], many[:2] + 5.0)
    assert list(msg.candidate_links) == ['l7', 'l7']
    co.fill_location(msg, header(), None, 'base', pool)    # the contact ended
    assert not msg.in_contact and msg.status == 'no_contact' and not msg.candidates
    assert msg.link == '' and msg.force.z == 0.0 and not np.any(msg.covariance)


@pytest.mark.parametrize('magnitude, length', [(20.0, 0.2), (2.0, co.ARROW_MIN),
                                               (80.0, co.ARROW_MAX)])
def test_markers_sphere_arrow_and_label_in_the_link_frame(magnitude, length):
    """The arrow is R^T F in the link's axes, ends at the point, 1 cm/N within its bounds."""
    R = rotation_z(0.7)
    point = np.array([0.04, 0.0, 0.05])
    force_link = magnitude * np.array([-1.0, 0.0, 0.0])        # into the +x face
    location = ContactLocation('located', link='l7', point=point, force=R @ force_link)
    array = co.ContactMarkers().build(header(), location, R, 'base')
    kinds = {m.type: m for m in array.markers if m.action == Marker.ADD}
    sphere, arrow = kinds[Marker.SPHERE], kinds[Marker.ARROW]
    assert sphere.header.frame_id == arrow.header.frame_id == 'l7'
    position = [sphere.pose.position.x, sphere.pose.position.y, sphere.pose.position.z]
    np.testing.assert_allclose(position, point)
    tail, head = (np.array([p.x, p.y, p.z]) for p in arrow.points)
    np.testing.assert_allclose(head, point)
    np.testing.assert_allclose(head - tail, length * force_link / magnitude, atol=1e-12)
    assert 'l7' in kinds[Marker.TEXT_VIEW_FACING].text
    assert (co.CANDIDATES, Marker.DELETE) in {(m.id, m.action) for m in array.markers}


def test_markers_ambiguous_and_unexplained():
    """Ambiguous: the candidates as a base-frame SPHERE_LIST; unexplained: the label alone."""
    candidates = np.array([[0.1, 0.0, 0.5], [0.0, 0.1, 0.5]])
    location = ContactLocation('ambiguous', link='l1', point=np.zeros(3),
                               force=np.array([0.0, 0.0, -5.0]), candidates=candidates,
                               candidate_links=('l1', 'l1'))
    markers = co.ContactMarkers()
    array = markers.build(header(), location, np.eye(3), 'base')
    spheres = [m for m in array.markers if m.type == Marker.SPHERE_LIST][0]
    assert spheres.header.frame_id == 'base' and len(spheres.points) == 2
    assert spheres.points[1].y == 0.1
    unexplained = ContactLocation('unexplained', message='two contacts')
    array = markers.build(header(), unexplained, None, 'base')
    actions = {(m.id, m.action) for m in array.markers}
    assert {(co.POINT, Marker.DELETE), (co.FORCE, Marker.DELETE),
            (co.CANDIDATES, Marker.DELETE)} <= actions
    label = [m for m in array.markers if m.action == Marker.ADD]
    assert len(label) == 1 and label[0].header.frame_id == 'base'
    assert label[0].text == 'contact: unexplained'
    assert [m.action for m in markers.cleared.markers] == [Marker.DELETEALL]
