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

"""The generated denoc_ros_interfaces services, called across a real rclpy service and client."""

from conftest import require_module
import numpy as np
import pytest

rclpy = require_module('rclpy')
srv = require_module('denoc_ros_interfaces.srv')


def call(context, srv_type, name, handler, request, timeout=10.0):
    """Serve ``handler`` on ``name`` from one node, call it from another, return the answer."""
    from rclpy.executors import SingleThreadedExecutor
    server = rclpy.create_node('iface_server', context=context)
    client_node = rclpy.create_node('iface_client', context=context)
    executor = SingleThreadedExecutor(context=context)
    try:
        server.create_service(srv_type, name, handler)
        client = client_node.create_client(srv_type, name)
        executor.add_node(server)
        executor.add_node(client_node)
        assert client.wait_for_service(timeout_sec=timeout), f'{name} never appeared'
        future = client.call_async(request)
        executor.spin_until_future_complete(future, timeout_sec=timeout)
        assert future.done(), f'no response from {name} within {timeout} s'
        return future.result()
    finally:
        executor.shutdown()
        server.destroy_node()
        client_node.destroy_node()


def test_get_mass_matrix_round_trip(rclpy_context):
    """A GetMassMatrix request and its row-major n x n response survive the middleware."""
    def handler(request, response):
        n = len(request.positions)
        response.joint_names = [f'j{i}' for i in range(n)]
        response.mass_matrix = np.diag(np.asarray(request.positions) + 1.0).ravel().tolist()
        response.success = True
        response.message = 'ok'
        return response

    request = srv.GetMassMatrix.Request(positions=[0.1, -0.2, 0.3])
    response = call(rclpy_context, srv.GetMassMatrix, 'get_mass_matrix', handler, request)
    assert response.success and response.message == 'ok'
    assert list(response.joint_names) == ['j0', 'j1', 'j2']
    m = np.reshape(response.mass_matrix, (3, 3))
    np.testing.assert_array_equal(m, np.diag([1.1, 0.8, 1.3]))


def test_get_cartesian_dynamics_round_trip(rclpy_context):
    """Every GetCartesianDynamics field crosses, with the documented sizes."""
    def handler(request, response):
        n = len(request.positions)
        response.joint_names = [f'j{i}' for i in range(n)]
        response.frame = request.frame or 'tool0'
        response.jacobian = np.arange(6.0 * n).tolist()
        response.inertia = np.eye(6).ravel().tolist()
        response.coriolis = list(request.velocities) + [0.0] * (6 - n)
        response.gravity = [0.0, 0.0, 9.81, 0.0, 0.0, 0.0]
        response.condition_number = 1.0
        response.success = True
        return response

    request = srv.GetCartesianDynamics.Request(positions=[0.0, 1.0], velocities=[0.5, -0.5],
                                               frame='')
    response = call(rclpy_context, srv.GetCartesianDynamics, 'get_cartesian_dynamics', handler,
                    request)
    assert response.success
    assert response.frame == 'tool0'
    assert np.reshape(response.jacobian, (6, 2))[5, 1] == 11.0
    np.testing.assert_array_equal(np.reshape(response.inertia, (6, 6)), np.eye(6))
    assert list(response.coriolis[:2]) == [0.5, -0.5]
    assert response.gravity[2] == pytest.approx(9.81)


def test_failure_fields_exist():
    """Both responses carry success and message, for requests that cannot be answered."""
    for srv_type in (srv.GetMassMatrix, srv.GetCartesianDynamics):
        response = srv_type.Response(success=False, message='unknown frame')
        assert response.success is False
        assert response.message == 'unknown frame'


def test_contact_state_message():
    """The ContactState message imports and has the contact fields with their types."""
    msg_module = require_module('denoc_ros_interfaces.msg')
    from std_msgs.msg import Header
    contact = msg_module.ContactState
    fields = contact.get_fields_and_field_types()
    assert fields == {
        'header': 'std_msgs/Header',
        'in_contact': 'boolean',
        'joint_names': 'sequence<string>',
        'external_torques': 'sequence<double>',
        'thresholds': 'sequence<double>',
        'joint_in_contact': 'sequence<boolean>',
        'max_ratio': 'double',
    }
    msg = contact(in_contact=True, joint_names=['a', 'b'], external_torques=[0.5, -3.0],
                  thresholds=[1.0, 2.0], joint_in_contact=[False, True], max_ratio=1.5)
    assert isinstance(msg.header, Header)
    assert list(msg.joint_in_contact) == [False, True]
    np.testing.assert_array_equal(msg.external_torques, [0.5, -3.0])
    assert msg.max_ratio == 1.5


def test_contact_state_round_trip(rclpy_context):
    """A ContactState published by one node arrives intact at another's subscription."""
    from rclpy.executors import SingleThreadedExecutor
    from denoc_ros_interfaces.msg import ContactState
    sender = rclpy.create_node('contact_sender', context=rclpy_context)
    receiver = rclpy.create_node('contact_receiver', context=rclpy_context)
    executor = SingleThreadedExecutor(context=rclpy_context)
    received = []
    try:
        receiver.create_subscription(ContactState, 'contact', received.append, 10)
        pub = sender.create_publisher(ContactState, 'contact', 10)
        executor.add_node(sender)
        executor.add_node(receiver)
        msg = ContactState(in_contact=True, joint_names=['j0', 'j1'],
                           external_torques=[0.1, -4.0], thresholds=[2.0, 2.0],
                           joint_in_contact=[False, True], max_ratio=2.0)
        msg.header.stamp.sec = 3
        msg.header.frame_id = 'base'
        for _ in range(200):
            if received:
                break
            if pub.get_subscription_count() > 0:
                pub.publish(msg)
            executor.spin_once(timeout_sec=0.05)
        assert received, 'no ContactState arrived'
        got = received[0]
        assert got.in_contact and got.header.stamp.sec == 3 and got.header.frame_id == 'base'
        assert list(got.joint_names) == ['j0', 'j1']
        np.testing.assert_array_equal(got.external_torques, [0.1, -4.0])
        assert list(got.joint_in_contact) == [False, True]
        assert got.max_ratio == 2.0
    finally:
        executor.shutdown()
        sender.destroy_node()
        receiver.destroy_node()


def test_contact_location_message():
    """The ContactLocation message has the located contact's fields, types and fixed sizes."""
    msg_module = require_module('denoc_ros_interfaces.msg')
    location = msg_module.ContactLocation
    assert location.get_fields_and_field_types() == {
        'header': 'std_msgs/Header',
        'in_contact': 'boolean',
        'status': 'string',
        'link': 'string',
        'point': 'geometry_msgs/Point',
        'normal': 'geometry_msgs/Vector3',
        'point_base': 'geometry_msgs/Point',
        'force': 'geometry_msgs/Vector3',
        'covariance': 'double[9]',
        'residual': 'double',
        'candidates': 'sequence<geometry_msgs/Point>',
        'candidate_links': 'sequence<string>',
        'message': 'string',
    }
    from geometry_msgs.msg import Point
    msg = location(in_contact=True, status='ambiguous', link='panda_link2',
                   candidates=[Point(x=0.1), Point(y=0.2)], candidate_links=['a', 'b'])
    assert len(msg.covariance) == 9 and not np.any(msg.covariance)
    msg.covariance = np.eye(3).ravel()
    assert msg.covariance[4] == 1.0 and msg.candidates[1].y == 0.2
