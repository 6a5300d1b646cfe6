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
Craig's planar RR arm with point masses (seed 002) against its closed form, to 1e-10.

The closed form is typed from the seed's equations for tau_1, tau_2 (Craig ch. 6). The seed's
printed M_11 reads ``l2^2 + 2 l1 l2 m2 c2 + l1^2 (m1 + m2)``: the first term lacks ``m2`` (its
own tau_1 equation has ``m2 l2^2``), so M below follows the tau equations. Gravity acts along
-y0 (``G_1 = m2 l2 g c12 + (m1 + m2) l1 g c1``).
"""

import pathlib
import xml.etree.ElementTree as ET

from conftest import URDF_DIR
import denoc_ros as dr
import numpy as np
import pytest
from robots_for_tests import assert_close, craig_rr, rng_for


TOL = 1e-10   # relative to max(1, largest entry)


def closed_form(q, qd, qdd, l1, l2, m1, m2, g, izz1=0.0, izz2=0.0):
    """Return M, V, G, tau of Craig's RR arm (seed 002), plus the rods' own inertia about z."""
    c1, c2, c12 = np.cos(q[0]), np.cos(q[1]), np.cos(q[0] + q[1])
    s2 = np.sin(q[1])
    M = np.array([
        [m2 * l2**2 + 2 * m2 * l1 * l2 * c2 + (m1 + m2) * l1**2 + izz1 + izz2,
         m2 * l2**2 + m2 * l1 * l2 * c2 + izz2],
        [m2 * l2**2 + m2 * l1 * l2 * c2 + izz2, m2 * l2**2 + izz2],
    ])
    V = np.array([-m2 * l1 * l2 * s2 * qd[1]**2 - 2 * m2 * l1 * l2 * s2 * qd[0] * qd[1],
                  m2 * l1 * l2 * s2 * qd[0]**2])
    G = np.array([m2 * l2 * g * c12 + (m1 + m2) * l1 * g * c1, m2 * l2 * g * c12])
    tau = np.array([
        m2 * l2**2 * (qdd[0] + qdd[1]) + m2 * l1 * l2 * c2 * (2 * qdd[0] + qdd[1])
        + (m1 + m2) * l1**2 * qdd[0] - m2 * l1 * l2 * s2 * qd[1]**2
        - 2 * m2 * l1 * l2 * s2 * qd[0] * qd[1] + m2 * l2 * g * c12 + (m1 + m2) * l1 * g * c1
        + izz1 * qdd[0] + izz2 * (qdd[0] + qdd[1]),
        m2 * l1 * l2 * c2 * qdd[0] + m2 * l1 * l2 * s2 * qd[0]**2 + m2 * l2 * g * c12
        + m2 * l2**2 * (qdd[0] + qdd[1]) + izz2 * (qdd[0] + qdd[1]),
    ])
    # Christoffel C of this M: h = m2 l1 l2 s2, C = [[-h qd2, -h (qd1 + qd2)], [h qd1, 0]].
    h = m2 * l1 * l2 * s2
    C = np.array([[-h * qd[1], -h * (qd[0] + qd[1])], [h * qd[0], 0.0]])
    return M, V, G, tau, C


PARAMS = [{'l1': 0.7, 'l2': 0.45, 'm1': 1.3, 'm2': 0.8, 'g': 9.81},
          {'l1': 1.0, 'l2': 1.0, 'm1': 1.0, 'm2': 1.0, 'g': 9.81},
          {'l1': 0.3, 'l2': 1.7, 'm1': 4.0, 'm2': 0.25, 'g': 1.62}]


def check_against_closed_form(model, params, seed):
    rng = rng_for('craig', seed)
    for _ in range(20):
        q = rng.uniform(-np.pi, np.pi, 2)
        qd, qdd = rng.uniform(-3, 3, 2), rng.uniform(-5, 5, 2)
        M, V, G, tau, C = closed_form(q, qd, qdd, **params)
        assert_close(dr.inverse_dynamics(model, q, qd, qdd), tau, TOL, 'tau')
        assert_close(dr.mass_matrix(model, q), M, TOL, 'M')
        assert_close(dr.coriolis_torques(model, q, qd), V, TOL, 'V')
        assert_close(dr.gravity_torques(model, q), G, TOL, 'G')
        # With two joints the Christoffel matrix is unique; Saha's equals it.
        assert_close(dr.coriolis_matrix(model, q, qd), C, TOL, 'C Christoffel')
        assert_close(dr.convective_inertia_matrix(model, q, qd), C, TOL, 'C Saha')
        expected_qdd = np.linalg.solve(M, tau - V - G)
        assert_close(dr.forward_dynamics(model, q, qd, tau), expected_qdd, TOL, 'FD')
        assert_close(dr.forward_dynamics_cholesky(model, q, qd, tau), expected_qdd, TOL,
                     'FD Cholesky')


@pytest.mark.parametrize('k', range(len(PARAMS)))
def test_craig_rr_built_directly_matches_closed_form_1e_10(k):
    params = PARAMS[k]
    check_against_closed_form(craig_rr(**params), params, k)


def test_craig_rr_configuration_space_form_1e_10():
    """Seed 002: V = B(q) [qd1 qd2] + C(q) [qd1^2, qd2^2] with B = [-2h, 0], C = [[0,-h],[h,0]]."""
    p = PARAMS[0]
    model = craig_rr(**p)
    rng = rng_for('craig-config')
    for _ in range(10):
        q, qd = rng.uniform(-np.pi, np.pi, 2), rng.uniform(-3, 3, 2)
        h = p['m2'] * p['l1'] * p['l2'] * np.sin(q[1])
        V = np.array([-2 * h, 0.0]) * qd[0] * qd[1] + np.array([[0, -h], [h, 0]]) @ qd**2
        assert_close(dr.coriolis_torques(model, q, qd), V, TOL)


def rotation_x(a):
    return np.array([[1, 0, 0], [0, np.cos(a), -np.sin(a)], [0, np.sin(a), np.cos(a)]])


def rotation_y(a):
    return np.array([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]])


def rotation_z(a):
    return np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])


def _read_craig_urdf(path):
    """Read l1, l2, m1, m2 and the rods' izz from the bundled URDF (two parallel revolutes)."""
    root = ET.parse(path).getroot()
    joints = [j for j in root.findall('joint') if j.get('type') in ('revolute', 'continuous')]
    assert len(joints) == 2
    links = {ln.get('name'): ln for ln in root.findall('link')}

    def vec(element, attr, default='0 0 0'):
        return np.array([float(x) for x in
                         (element.get(attr) if element is not None else default).split()])

    axis = vec(joints[0].find('axis'), 'xyz', '1 0 0')
    axis = axis / np.linalg.norm(axis)
    assert np.allclose(np.cross(axis, vec(joints[1].find('axis'), 'xyz', '1 0 0')), 0)
    origin2 = vec(joints[1].find('origin'), 'xyz')
    roll, pitch, yaw = vec(joints[0].find('origin'), 'rpy')
    out = {'axis': axis, 'l1': float(np.linalg.norm(origin2)), 'x1': origin2,
           'R0': rotation_z(yaw) @ rotation_y(pitch) @ rotation_x(roll)}
    for k, joint in enumerate(joints, start=1):
        link = links[joint.find('child').get('link')]
        inertial = link.find('inertial')
        com = vec(inertial.find('origin'), 'xyz')
        out[f'm{k}'] = float(inertial.find('mass').get('value'))
        out[f'com{k}'] = com
        tensor = inertial.find('inertia')
        tensor = np.array([[float(tensor.get(a, 0.0)) for a in row] for row in
                           (('ixx', 'ixy', 'ixz'), ('ixy', 'iyy', 'iyz'), ('ixz', 'iyz', 'izz'))])
        out[f'izz{k}'] = float(axis @ tensor @ axis)
    return out


def test_craig_rr_from_bundled_urdf_matches_closed_form_1e_10():
    path = pathlib.Path(URDF_DIR) / 'craig_rr.urdf'
    assert path.exists(), 'urdf/craig_rr.urdf is bundled'
    info = _read_craig_urdf(path)
    # The closed form needs the masses on the link lines (point masses or rods along them).
    x1 = info['x1'] / np.linalg.norm(info['x1'])
    l2 = float(np.linalg.norm(info['com2']))
    assert (np.allclose(info['com1'], info['l1'] * x1, atol=1e-12)
            and np.allclose(info['com2'], l2 * x1, atol=1e-12)), \
        'craig_rr.urdf must put the masses on the link lines, as the closed form assumes'
    g = 9.81
    # Along -y0 of Craig's figure (y0 = z0 x x0), expressed in the URDF's base frame.
    gravity = -g * info['R0'] @ np.cross(info['axis'], x1)
    model = dr.load_urdf(str(path), gravity=tuple(gravity))
    assert model.dof == 2
    params = {'l1': info['l1'], 'l2': l2, 'm1': info['m1'], 'm2': info['m2'], 'g': g,
              'izz1': info['izz1'], 'izz2': info['izz2']}
    rng = rng_for('craig-urdf')
    for _ in range(20):
        q = rng.uniform(-np.pi, np.pi, 2)
        qd, qdd = rng.uniform(-3, 3, 2), rng.uniform(-5, 5, 2)
        M, V, G, tau, _ = closed_form(q, qd, qdd, **params)
        assert_close(dr.inverse_dynamics(model, q, qd, qdd), tau, TOL, 'tau')
        assert_close(dr.mass_matrix(model, q), M, TOL, 'M')
        assert_close(dr.coriolis_torques(model, q, qd), V, TOL, 'V')
        assert_close(dr.gravity_torques(model, q), G, TOL, 'G')
