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
Trajectory files: a sampled joint trajectory written as JointTrajectory YAML or as CSV.

:func:`write_trajectory_yaml` writes one trajectory_msgs/JointTrajectory in the form
``ros2 topic pub`` accepts (by ``yaml.safe_dump``, numbers in full precision);
:func:`write_trajectory_csv` the CSV of :mod:`.data`'s recordings. Both check the arrays
first (shapes, finite values, increasing times).
"""

import pathlib

import numpy as np
import yaml

from ..errors import InputError

__all__ = ['write_trajectory_yaml', 'write_trajectory_csv']


def _trajectory_arrays(joint_names, t, *tables):
    names = [str(j) for j in joint_names]
    t = np.asarray(t, dtype=float).reshape(-1)
    arrays = [np.asarray(x, dtype=float) for x in tables]
    for what, x in zip(('positions', 'velocities', 'accelerations', 'efforts'), arrays):
        if x.shape != (t.size, len(names)):
            raise InputError(f'{what} have shape {x.shape}, expected {(t.size, len(names))} '
                             '(times, joints)')
        if not np.all(np.isfinite(x)):
            raise InputError(f'{what} contain NaN or inf')
    if not np.all(np.isfinite(t)) or np.any(t < 0.0) or np.any(np.diff(t) <= 0.0):
        raise InputError('times must be finite, non-negative and increasing')
    return names, t, arrays


def write_trajectory_yaml(path, joint_names, t, q, qd, qdd, comment=None, effort=None):
    """
    Write one trajectory_msgs/JointTrajectory as YAML, the form ``ros2 topic pub`` accepts.

    ``{header: {stamp: {sec: 0, nanosec: 0}, frame_id: ''}, joint_names: [...], points:
    [{positions, velocities, accelerations, effort, time_from_start: {sec, nanosec}},
    ...]}``; ``t`` [s] (N,), ``q``, ``qd``, ``qdd`` and ``effort`` (N, n) (``effort`` None:
    each point's ``effort: []``). ``comment``: lines written first as YAML comments. Written by
    ``yaml.safe_dump``: mappings as blocks, each list of numbers on one line, numbers in full
    precision (``repr``, so they load back bit for bit).
    """
    tables = (q, qd, qdd) + (() if effort is None else (effort,))
    names, t, (q, qd, qdd, *effort) = _trajectory_arrays(joint_names, t, *tables)
    points = []
    for k in range(t.size):
        sec, nanosec = divmod(int(round(t[k] * 1e9)), 1_000_000_000)
        points.append({'positions': q[k].tolist(), 'velocities': qd[k].tolist(),
                       'accelerations': qdd[k].tolist(),
                       'effort': effort[0][k].tolist() if effort else [],
                       'time_from_start': {'sec': sec, 'nanosec': nanosec}})
    message = {'header': {'stamp': {'sec': 0, 'nanosec': 0}, 'frame_id': ''},
               'joint_names': names, 'points': points}
    text = yaml.safe_dump(message, default_flow_style=None, sort_keys=False, width=1 << 30)
    lines = [f'# {line}' for line in (comment or '').splitlines()]
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(''.join(line + '\n' for line in lines) + text)


def write_trajectory_csv(path, joint_names, t, q, qd, qdd):
    """
    Write a trajectory as CSV: ``time``, then per joint its position, velocity, acceleration.

    Header ``time,<joint>/position,<joint>/velocity,<joint>/acceleration,...``, one row per
    time [s], the joints in ``joint_names`` order (the column naming of :mod:`.data`'s CSV
    recordings), numbers in full precision.
    """
    names, t, (q, qd, qdd) = _trajectory_arrays(joint_names, t, q, qd, qdd)
    header = ['time'] + [f'{j}/{what}' for j in names
                         for what in ('position', 'velocity', 'acceleration')]
    table = np.column_stack([t] + [x[:, j] for j in range(len(names)) for x in (q, qd, qdd)])
    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savetxt(path, table, delimiter=',', header=','.join(header), comments='', fmt='%.17g')
