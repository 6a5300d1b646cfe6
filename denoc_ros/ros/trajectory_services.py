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
The node's trajectory services: messages to arrays, the library's check and retime, and back.

:func:`check_trajectory_service` (``~/check_trajectory``, denoc_ros_interfaces/srv/CheckTrajectory)
and :func:`retime_trajectory_service` (``~/retime_trajectory``, RetimeTrajectory) take the
model, the request and a response object, fill the response and return it; the node calls them
from its service callbacks. Every joint of the model must be in the trajectory, no other; the
results are in the request's joint order. Bad requests (and anything the library refuses) give
``success = false`` and the library's one-line message; no NaN is returned.
"""

from builtin_interfaces.msg import Duration
import numpy as np
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..errors import DenocError, InputError
from ..model import joint_order
from ..trajectories.check import check_trajectory, DEFAULT_CHECK_PERIOD
from ..trajectories.retime import DEFAULT_SAMPLE_PERIOD, retime


def _duration(t):
    """Return a builtin_interfaces/Duration of ``t`` seconds (rounded to the nanosecond)."""
    sec, nanosec = divmod(int(round(float(t) * 1e9)), 1_000_000_000)
    return Duration(sec=sec, nanosec=nanosec)


def _seconds(duration):
    return duration.sec + 1e-9 * duration.nanosec


def _table(points, field, n, required):
    """Return the ``(N, n)`` table of one point field, or None when no point carries it."""
    rows = [getattr(p, field) for p in points]
    lengths = {len(r) for r in rows}
    if lengths == {0} and not required:
        return None
    if lengths != {n}:
        k = next(i for i, r in enumerate(rows) if len(r) != n)
        raise InputError(f'point {k}: {len(rows[k])} {field} for {n} joints (every point must '
                         f'carry {n}' + ('' if required else ' or none') + ')')
    table = np.array([np.asarray(r, dtype=float) for r in rows])
    bad = np.argwhere(~np.isfinite(table))
    if bad.size:
        raise InputError(f'point {bad[0][0]}: {field} contain NaN or inf')
    return table


def trajectory_tables(trajectory):
    """
    Return ``(t, q, qd, qdd)`` of a JointTrajectory in its own joint order (as the points are).

    ``qd``/``qdd`` None where no point carries them; InputError for ragged or non-finite points.
    """
    points = trajectory.points
    if len(points) == 0:
        raise InputError('the trajectory has no points')
    n = len(trajectory.joint_names)
    q, qd, qdd = (_table(points, f, n, f == 'positions')
                  for f in ('positions', 'velocities', 'accelerations'))
    t = np.array([_seconds(p.time_from_start) for p in points])
    return t, q, qd, qdd


def trajectory_arrays(model, trajectory, timed=True):
    """
    Return ``(t, q, qd, qdd, index)`` of a JointTrajectory in model joint order.

    ``index[j]``: the message's column of model joint ``j``. ``qd``/``qdd`` None where the
    points carry none. ``timed=False`` skips the times (a path).
    """
    index = joint_order(model.joint_names, list(trajectory.joint_names), 'the trajectory',
                        others=False)
    t, *tables = trajectory_tables(trajectory)
    q, qd, qdd = (None if x is None else x[:, index] for x in tables)
    return (t if timed else None), q, qd, qdd, index


def _positive_or_default(name, value, default):
    value = float(value)
    if not np.isfinite(value) or value < 0.0:
        raise InputError(f'{name} is {value}: it must be positive (0 = {default})')
    return value if value > 0.0 else default


def _point(index, t, **fields):
    """Return a JointTrajectoryPoint with the fields given in model order, in message order."""
    point = JointTrajectoryPoint(time_from_start=_duration(t))
    for name, values in fields.items():
        out = np.empty(index.size)
        out[index] = values
        setattr(point, name, out.tolist())
    return point


def _fail(response, err):
    response.success = False
    response.message = ' '.join(str(err).split())
    return response


def check_trajectory_service(model, request, response, friction=False):
    """Fill a CheckTrajectory response: the dense check of ``request.trajectory``."""
    try:
        scaling = _positive_or_default('effort_scaling', request.effort_scaling, 1.0)
        period = _positive_or_default('check_period', request.check_period,
                                      DEFAULT_CHECK_PERIOD)
        t, q, qd, qdd, index = trajectory_arrays(model, request.trajectory)
        result = check_trajectory(model, t, q, qd, qdd,
                                  effort_limits=model.effort_limit * scaling,
                                  friction=friction, check_period=period)
        if not (np.all(np.isfinite(result.efforts))
                and np.all(np.isfinite(result.max_effort_ratio))):
            raise InputError('the efforts of the trajectory are not finite')
    except DenocError as err:
        return _fail(response, err)
    names = list(request.trajectory.joint_names)
    ratio = np.empty(index.size)
    ratio[index] = result.max_effort_ratio
    response.joint_names = names
    response.max_effort_ratio = ratio.tolist()
    response.worst_time = result.worst_time
    response.worst_joint = result.worst_joint
    response.efforts = JointTrajectory(
        header=request.trajectory.header, joint_names=names,
        points=[_point(index, t[k], positions=q[k], effort=result.efforts[k])
                for k in range(t.size)])
    response.feasible = result.feasible
    response.success = True
    response.message = ('feasible' if result.feasible else
                        f'exceeds a limit: worst effort ratio {ratio.max():.4g} at joint '
                        f'{result.worst_joint} at t = {result.worst_time:.4g} s')
    return response


def retime_trajectory_service(model, request, response, friction=False):
    """Fill a RetimeTrajectory response: the time-optimal retiming of the request's path."""
    try:
        v_scale = _positive_or_default('velocity_scaling', request.velocity_scaling, 1.0)
        e_scale = _positive_or_default('effort_scaling', request.effort_scaling, 1.0)
        period = _positive_or_default('sample_period', request.sample_period,
                                      DEFAULT_SAMPLE_PERIOD)
        _, q, _, _, index = trajectory_arrays(model, request.trajectory, timed=False)
        acc = np.asarray(request.acceleration_limits, dtype=float)
        if acc.size == 0:
            acc = None
        elif acc.shape != (index.size,):
            raise InputError(f'acceleration_limits has {acc.size} values for {index.size} '
                             'joints (one per joint in trajectory.joint_names order, or none)')
        else:
            acc = acc[index]
        result = retime(model, q, velocity_limits=model.velocity_limit * v_scale,
                        acceleration_limits=acc, effort_limits=model.effort_limit * e_scale,
                        friction=friction, sample_period=period)
        arrays = (result.q, result.qd, result.qdd, result.effort)
        if not all(np.all(np.isfinite(x)) for x in arrays):
            raise InputError('the retimed trajectory is not finite')
    except DenocError as err:
        return _fail(response, err)
    response.trajectory = JointTrajectory(
        header=request.trajectory.header, joint_names=list(request.trajectory.joint_names),
        points=[_point(index, result.t[k], positions=result.q[k], velocities=result.qd[k],
                       accelerations=result.qdd[k], effort=result.effort[k])
                for k in range(result.t.size)])
    response.duration = result.duration
    response.max_effort_ratio = result.max_effort_ratio
    response.success = True
    response.message = (f'duration {result.duration:.4g} s, worst effort ratio '
                        f'{result.max_effort_ratio:.4g}')
    return response
