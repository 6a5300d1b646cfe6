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
The node's momentum observer starts again on a gap, a backward stamp, a payload and a new model.

Through the node's topics, services, parameters and diagnostics only. A probe streams 1 kHz
joint states of the Panda pushed at the tool (efforts ``ID(q, qd, qdd) - J^T F``, the arm's
inverse dynamics, with the payload or the new inertials once they are in force) and, after each
event, checks that:

- the estimate restarts: exactly zero at the event's joint state;
- the next estimates are right: they follow ``r_dot = K_O (J^T F - r)`` from ``r = 0`` at the
  event, integrated by SciPy (DOP853), within 1e-5 of ``|J^T F|``;
- ``/diagnostics`` says why (a value naming the restart and 'gap', 'backward', 'payload' or
  'model').

The payload's reference arm is the URDF with a fixed link carrying the payload's inertial (not
the library's ``attach_payload``); the new model is the URDF with other inertials.
"""

import denoc_ros as dr
from denoc_ros.resources import bundled_urdf
import denoc_ros_interfaces.srv as srv
from geometry_msgs.msg import Inertia, Vector3
import numpy as np
import pytest
from rclpy.parameter import Parameter
from scipy.integrate import solve_ivp
from test_dynamics_node_observer import (motion, ObserverHarness, stamp_seconds, stream,
                                         tool_wrench_torques)

pytestmark = pytest.mark.ros
K_O = 50.0
MAX_GAP = 0.1
RESTART_WORDS = ('start', 'reset')
PAYLOAD = {'mass': 1.5, 'com': (0.02, -0.01, 0.12),
           'inertia': {'ixx': 0.004, 'ixy': 0.0005, 'ixz': 0.0, 'iyy': 0.005, 'iyz': 0.0,
                       'izz': 0.003}}


def payload_urdf(text):
    """Return the URDF with the payload as a fixed link on panda_link7 (the reference arm)."""
    inertia = ' '.join(f'{k}="{v}"' for k, v in PAYLOAD['inertia'].items())
    com = ' '.join(str(c) for c in PAYLOAD['com'])
    return text.replace('</robot>', f"""
  <joint name="payload_joint" type="fixed"><parent link="panda_link7"/><child link="payload"/>
  </joint>
  <link name="payload"><inertial><origin xyz="{com}"/><mass value="{PAYLOAD['mass']}"/>
    <inertia {inertia}/></inertial></link>
</robot>""")


def heavier_urdf(text):
    """Return the URDF with other inertials: link 3 half again as heavy (4.8 kg)."""
    text = text.replace('<mass value="3.228604"/>', '<mass value="4.8"/>')
    assert '<mass value="4.8"/>' in text, 'the bundled Panda changed: update heavier_urdf'
    return text


@pytest.fixture
def harness(rclpy_context):
    """Start the node on the bundled Panda (observer on, 0.1 s max gap, fast diagnostics)."""
    from denoc_ros.ros.dynamics_node import DynamicsNode
    node = DynamicsNode(context=rclpy_context, parameter_overrides=[
        Parameter('urdf_path', value='panda'), Parameter('observer_gain', value=K_O),
        Parameter('observer_max_gap', value=MAX_GAP), Parameter('diagnostics_period', value=0.1),
        Parameter('contact_threshold', value=[2.0])])
    h = ObserverHarness(rclpy_context, node)
    h.connect()
    yield h
    h.close()


def diagnostics_text_after(h, start):
    """Return the diagnostic values published after message ``start`` (wait for two)."""
    h.spin_until(lambda: h.count('diagnostics') >= start + 2, timeout=5.0)
    return [kv.value for array in h.received.get('diagnostics', [])[start:]
            for status in array.status for kv in status.values]


def check_restart(h, arm, base, event, keyword, t0, t1, diagnostics_start):
    """Stream the arm from t0 to t1 after an event; check the restart, the estimates, the why."""
    h.received['external'] = []
    stream(h, arm, t1, push_at=0.0, t_start=t0)
    got = {round(stamp_seconds(m), 6): np.array(m.effort) for m in h.received['external']}
    assert round(t0, 6) in got, f'{event}: no estimate at the event ({t0} s)'
    first = got[round(t0, 6)]
    assert np.all(first == 0.0), f'{event}: the estimate did not restart: {first}'
    times = np.array(sorted(got))
    estimates = np.array([got[t] for t in times])
    assert times.size > 0.9 * (t1 - t0) * 1000, f'{event}: {times.size} estimates'
    reference = solve_ivp(lambda s, y: K_O * (tool_wrench_torques(base, motion(s)[0]) - y),
                          (t0, times[-1]), np.zeros(base.nv), method='DOP853', rtol=1e-11,
                          atol=1e-12, dense_output=True).sol(times).T
    scale = max(np.abs(tool_wrench_torques(base, motion(t)[0])).max() for t in times)
    error = np.abs(estimates - reference).max()
    tolerance = 1e-5 * scale
    print(f'{event}: max |r - reference| {error:.3g} N m (tolerance {tolerance:.3g}) over '
          f'{times.size} estimates; |r| at the end {np.abs(estimates[-1]).max():.3g}')
    assert error < tolerance, f'{event}: estimates after the restart are off by {error:.3g}'
    values = diagnostics_text_after(h, diagnostics_start)
    why = [v for v in values
           if keyword in v.lower() and any(w in v.lower() for w in RESTART_WORDS)]
    assert why, f'{event}: no diagnostic names the restart and {keyword!r}: {values}'
    return estimates


def test_observer_restarts_on_gap_backward_stamp_payload_and_model(harness):
    """Each event restarts the estimate at zero, the next ones are right, diagnostics say why."""
    h = harness
    text = bundled_urdf('panda').read_text()
    base = dr.load_urdf(text)
    stream(h, base, 0.2, push_at=0.0)
    before = np.array(h.received['external'][-1].effort)
    assert np.abs(before).max() > 2.0, 'the observer must be well off zero before each event'

    # A gap of 0.2 s (> observer_max_gap 0.1 s) in the stamps.
    estimates = check_restart(h, base, base, 'gap', 'gap', 0.4, 0.6, h.count('diagnostics'))
    assert np.abs(estimates[-1]).max() > 2.0
    # A stamp going backwards (0.45 s after 0.599 s).
    check_restart(h, base, base, 'backward stamp', 'backward', 0.45, 0.65,
                  h.count('diagnostics'))

    # A payload on the tip: the efforts are now those of the arm carrying it.
    inertia = PAYLOAD['inertia']
    request = srv.SetPayload.Request(link='panda_link7', payload=Inertia(
        m=PAYLOAD['mass'], com=Vector3(x=PAYLOAD['com'][0], y=PAYLOAD['com'][1],
                                       z=PAYLOAD['com'][2]), **inertia))
    start = h.count('diagnostics')
    response = h.call(srv.SetPayload, 'set_payload', request)
    assert response.success, response.message
    loaded = dr.load_urdf(payload_urdf(text))
    check_restart(h, loaded, base, 'payload', 'payload', 0.651, 0.85, start)

    # A new model (other inertials) through the robot_description parameter, stamps continuous.
    start = h.count('diagnostics')
    heavier = heavier_urdf(text)
    result = h.node.set_parameters([Parameter('robot_description', value=heavier)])
    assert result[0].successful, result[0].reason
    check_restart(h, dr.load_urdf(heavier), base, 'new model', 'model', 0.851, 1.05, start)
