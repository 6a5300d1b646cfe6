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

"""The ``~/estimate_payload`` service functions with real EstimatePayload messages."""

from pathlib import Path

from conftest import require_module
import denoc_ros as dr
from denoc_ros.identification.payload import PayloadWindow
import numpy as np

srv = require_module('denoc_ros_interfaces.srv')
from denoc_ros.ros import payload_services as services  # noqa: E402, I100

URDF = Path(__file__).resolve().parents[1] / 'urdf' / 'ur5e.urdf'
MASS, COM = 1.2, np.array([0.01, 0.02, 0.07])
INERTIA = np.array([[0.004, 0.0003, 0.0], [0.0003, 0.005, -0.0002], [0.0, -0.0002, 0.003]])
OLD = (0.4, [0.0, -0.01, 0.03], np.diag([4e-4, 5e-4, 3e-4]))


def build(base, table):
    model = base
    for link, (mass, com, inertia) in table.items():
        model = dr.attach_payload(model, link, mass, com, inertia)
    return model


def filled_window(truth, seconds=8.0):
    """Joint states of a wrist motion with efforts from ``truth``, stamped at 500 Hz."""
    t = np.arange(0.0, seconds, 2e-3)
    w = 2.0 * np.pi * np.array([0.0, 0.0, 0.0, 0.4, 0.45, 0.5])
    q = 0.8 * np.sin(np.outer(t, w)) + [0.3, -1.3, 1.4, -1.2, -1.4, 0.3]
    qd = 0.8 * w * np.cos(np.outer(t, w))
    qdd = -0.8 * w ** 2 * np.sin(np.outer(t, w))
    tau = dr.inverse_dynamics_with_friction(truth, q, qd, qdd)
    window = PayloadWindow(truth.dof, window=30.0)
    for k in range(t.size):
        window.append(services.stamp_nanoseconds(_time(100.0 + t[k])), q[k], qd[k], tau[k])
    return window


def _time(seconds):
    from builtin_interfaces.msg import Time
    sec = int(seconds)
    return Time(sec=sec, nanosec=int(round((seconds - sec) * 1e9)))


def test_estimate_then_apply_adds_to_the_payload_already_there():
    text = URDF.read_text().replace('<limit ', '<dynamics damping="0.2" friction="0.5"/><limit ')
    base = dr.load_urdf(text)
    table = {'tool0': OLD}
    model = build(base, table)                                    # what the node uses
    truth = dr.attach_payload(model, 'tool0', MASS, COM, INERTIA)  # what the arm carries
    window = filled_window(truth)
    request = srv.EstimatePayload.Request(link='tool0', duration=0.0, apply=True)
    response = srv.EstimatePayload.Response()
    est = services.estimate_payload_response(request, response, window, model, friction=True)
    assert response.success, response.message
    assert est.link == 'tool0' and 'friction included' in response.message
    assert abs(response.payload.m - MASS) < 2e-3 * MASS
    got = np.array([response.payload.com.x, response.payload.com.y, response.payload.com.z])
    np.testing.assert_allclose(got, COM, atol=2e-4)
    assert response.inertia_identified and len(response.standard_deviation) == 10
    assert all(np.isfinite(response.standard_deviation)) and response.residual_rms >= 0.0
    applied = services.applied_payloads(table, est)
    assert table == {'tool0': OLD}                               # the input table is kept
    after = build(base, applied)
    # The rebuilt model is the arm as it is: old payload and new one, one rigid body.
    np.testing.assert_allclose(dr.inertial_parameters(after), dr.inertial_parameters(truth),
                               atol=2e-3)
    q = np.array([0.3, -1.3, 1.4, -1.2, -1.4, 0.3])
    assert np.abs(dr.gravity_torques(after, q) - dr.gravity_torques(truth, q)).max() < 0.01


def test_failures_say_why_and_leave_no_nan():
    base = dr.load_urdf(URDF.read_text())
    response = srv.EstimatePayload.Response()
    empty = PayloadWindow(base.dof)
    request = srv.EstimatePayload.Request(link='tool0')
    assert services.estimate_payload_response(request, response, empty, base) is None
    assert not response.success and 'no joint states' in response.message
    window = filled_window(dr.attach_payload(base, 'tool0', MASS, COM, INERTIA), 3.0)
    for link, duration, words in (('nowhere', 0.0, 'unknown frame'),
                                  ('tool0', -1.0, 'duration'),
                                  ('tool0', float('nan'), 'duration'),
                                  ('base_link', 0.0, 'fixed base')):
        response = srv.EstimatePayload.Response()
        request = srv.EstimatePayload.Request(link=link, duration=duration)
        assert services.estimate_payload_response(request, response, window, base) is None
        assert not response.success and words in response.message, response.message
        assert list(response.standard_deviation) == []
    response = srv.EstimatePayload.Response()
    assert services.estimate_payload_response(srv.EstimatePayload.Request(), response, window,
                                              None) is None
    assert 'no robot model' in response.message
