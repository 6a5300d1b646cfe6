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
Recordings of joint states: :func:`read_recording` of any format, CSV and NPZ read and written.

Reading (:func:`read_recording`) accepts

* a rosbag2 directory (it holds ``metadata.yaml``; either storage, split bags, compression), a
  single ``.db3`` or ``.mcap`` storage file, or a directory of such files without its
  ``metadata.yaml`` (a recording that was not closed cleanly); the messages are
  ``sensor_msgs/msg/JointState`` on one topic (default ``/joint_states``); read by
  :mod:`.bags`, decoded by :mod:`.cdr`;
* a CSV file: one header row, then one row per sample. Columns, by name, in any order:
  ``time`` (s; also ``timestamp``, ``t`` or ``stamp``), and for each joint
  ``<joint>/position``, ``<joint>/velocity`` (optional, for every joint or for none) and
  ``<joint>/effort`` (``<joint>.position`` and ``<joint>_position`` are taken too). Other
  columns are ignored. Example::

      time,shoulder/position,shoulder/velocity,shoulder/effort,elbow/position,...
      0.000,0.1,0.0,1.25,-0.4,...

  A joint without an effort column is a joint without effort sensing: its efforts are NaN
  (:func:`.recording.unsensed_joints`).
* one CSV file per quantity, as many tools export them: files whose names say ``position``,
  ``velocity`` (optional) or ``effort`` (also ``pos``, ``vel``, ``torque``, ``current``),
  given together (a list, or one argument joined by commas), each with a time column and a
  column per joint named ``<joint>`` (or as above). The velocities and efforts are
  interpolated linearly onto the position file's times where their stamps differ.

* an NPZ file (``numpy.savez``): arrays ``time`` ``(N,)``, ``names`` ``(n,)`` of ``str``,
  ``position`` and ``effort`` ``(N, n)``, and optionally ``velocity`` ``(N, n)``.

Joints are matched by name; joints the model does not have (gripper fingers) are ignored.
JointState messages that name none of the model's joints (another publisher on the same topic,
e.g. a gripper driver) are skipped silently; messages that lack only some of them, or carry no
positions or efforts, are dropped with a :class:`DataWarning`, and if no message is usable a
:class:`~denoc_ros.errors.DataError` names the missing joint or field. Time is the header stamp,
or the bag's recording time where the stamp is zero. Samples are sorted by time and exact
duplicate stamps dropped (the first one recorded is kept).

The identification's data live in four modules, this one on top (it re-exports the others'
public names, so ``data.write_bag`` and ``data.prepare_samples`` keep working):

=================  ==========================================================================
module             what
=================  ==========================================================================
recording.py       :class:`JointStateRecording`, :class:`DataWarning`, the shared checks
cdr.py             decoding CDR-serialised JointState messages with NumPy, batch by batch
bags.py            rosbag2 bags (mcap, sqlite3) read and written (:func:`write_bag`)
filtering.py       :func:`prepare_samples`: segments, zero-phase filter, derivatives, decimation
data.py            :func:`read_recording` of every format; CSV and NPZ read and written
=================  ==========================================================================
"""

import os
from pathlib import Path
import warnings

import numpy as np

from .bags import read_bag, write_bag
from .filtering import FilterSettings, prepare_samples, Samples
from .recording import _checked, _finish, _one_line, DataWarning, JointStateRecording, \
    MIN_SAMPLES
from ..errors import DataError

__all__ = ['DataWarning', 'FilterSettings', 'JointStateRecording', 'MIN_SAMPLES',
           'prepare_samples', 'read_recording', 'read_recordings', 'Samples', 'write_bag',
           'write_csv', 'write_npz']


QUANTITIES = ('position', 'velocity', 'effort')
TIME_COLUMNS = ('time', 'timestamp', 't', 'stamp')
"""Accepted names of a CSV file's time column [s], first found counts."""
COLUMN_PATTERNS = ('{joint}/{quantity}', '{joint}.{quantity}', '{joint}_{quantity}')
"""Accepted names of a joint's column in a merged CSV file; a per-quantity file also takes
``{joint}`` alone."""
_QUANTITY_WORDS = {'position': ('position', 'pos'), 'velocity': ('velocity', 'vel'),
                   'effort': ('effort', 'torque', 'current', 'eff')}


def _csv_help(joint_names):
    j0 = joint_names[0]
    j1 = joint_names[1] if len(joint_names) > 1 else j0
    return (f'a CSV needs a time column ({", ".join(TIME_COLUMNS)}) and per joint the columns '
            f'<joint>/position, <joint>/velocity (optional), <joint>/effort (also '
            f'<joint>.position or <joint>_position); example header: time,{j0}/position,'
            f'{j0}/velocity,{j0}/effort,{j1}/position,... Or one file per quantity, named '
            'after it (position.csv, velocity.csv, effort.csv), given as one argument '
            f'joined by commas, each with the header time,{j0},{j1},...')


def _csv_table(path, joint_names):
    """Return ``(where, header columns {name: index}, time column name)`` of a CSV file."""
    where = str(path)
    try:
        with open(path, encoding='utf-8') as f:
            header = f.readline()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f'{where}: cannot read ({_one_line(exc)})') from None
    columns = {name.strip(): i for i, name in reversed(list(enumerate(header.split(','))))}
    time = next((c for c in TIME_COLUMNS if c in columns), None)
    if time is None:
        raise DataError(f'{where}: no time column in the header row; {_csv_help(joint_names)}')
    return where, columns, time


def _column(columns, joint, quantity, alone=False):
    """Return the header name of ``joint``'s ``quantity`` column, or None."""
    for pattern in COLUMN_PATTERNS:
        name = pattern.format(joint=joint, quantity=quantity)
        if name in columns:
            return name
    return joint if alone and joint in columns else None


def _load(path, where, columns, names):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', UserWarning)  # "input contained no data"
            return np.loadtxt(path, delimiter=',', skiprows=1, ndmin=2, dtype=np.float64,
                              usecols=[columns[c] for c in names])
    except (ValueError, OSError) as exc:
        raise DataError(f'{where}: {_one_line(exc)}') from None


def _read_csv(path, joint_names):
    """Read the merged CSV format of the module docstring."""
    where, columns, time = _csv_table(path, joint_names)
    found = {q: [_column(columns, j, q) for j in joint_names] for q in QUANTITIES}
    for joint, name in zip(joint_names, found['position']):
        if name is None:
            raise DataError(f'{where}: joint {joint!r} has no column "{joint}/position"; '
                            f'{_csv_help(joint_names)}')
    with_velocity = [name is not None for name in found['velocity']]
    if any(with_velocity) and not all(with_velocity):
        joint = joint_names[with_velocity.index(False)]
        raise DataError(f'{where}: joint {joint!r} has no column "{joint}/velocity" (velocities '
                        'are given for some joints: give them for all or for none)')
    fields = ('position', 'velocity') if all(with_velocity) else ('position',)
    use = [time] + [name for f in fields for name in found[f]]
    effort = [name for name in found['effort'] if name is not None]
    table = _load(path, where, columns, use + effort)
    n = len(joint_names)
    blocks = [table[:, 1 + k * n:1 + (k + 1) * n] for k in range(len(fields))]
    velocity = blocks[1] if len(fields) == 2 else None
    return _finish(where, joint_names, table[:, 0].copy(), blocks[0], velocity,
                   _efforts(table[:, 1 + len(fields) * n:], found['effort']))


def _efforts(values, names):
    """Return (N, n) efforts: the given columns in place, NaN where a joint has none."""
    out = np.full((values.shape[0], len(names)), np.nan)
    present = [j for j, name in enumerate(names) if name is not None]
    out[:, present] = values
    return out


def _quantity_of(path):
    """Return the quantity a per-quantity CSV file's name says, or None."""
    stem = Path(path).stem.lower()
    for quantity, words in _QUANTITY_WORDS.items():
        if any(word in stem for word in words):
            return quantity
    return None


def _read_csv_files(paths, joint_names):
    """Read one CSV file per quantity (position, velocity, effort), merged on time."""
    where = ','.join(map(str, paths))
    parts = {}
    for path in paths:
        quantity = _quantity_of(path)
        if quantity is None or quantity in parts:
            raise DataError(f'{path}: cannot tell which quantity the file holds (its name must '
                            f'say position, velocity or effort, once each); '
                            f'{_csv_help(joint_names)}')
        name, columns, time = _csv_table(path, joint_names)
        found = [_column(columns, j, quantity, alone=True) for j in joint_names]
        if quantity == 'position' and None in found:
            joint = joint_names[found.index(None)]
            raise DataError(f'{path}: joint {joint!r} has no column; {_csv_help(joint_names)}')
        if quantity == 'velocity' and None in found:
            joint = joint_names[found.index(None)]
            raise DataError(f'{path}: joint {joint!r} has no velocity column (give velocities '
                            'for all joints or for none)')
        table = _load(path, name, columns, [time] + [f for f in found if f is not None])
        values = (table[:, 1:] if quantity != 'effort' else _efforts(table[:, 1:], found))
        parts[quantity] = (table[:, 0], values)
    if 'position' not in parts:
        raise DataError(f'{where}: no position file among them; {_csv_help(joint_names)}')
    t, position = parts['position']
    order = np.argsort(t, kind='stable')
    t, position = t[order], position[order]
    merged = {}
    for quantity in ('velocity', 'effort'):
        if quantity not in parts:
            continue
        tq, values = parts[quantity]
        if tq.shape == t.shape and np.array_equal(tq, t):
            merged[quantity] = values
            continue
        o = np.argsort(tq, kind='stable')
        tq, values = tq[o], values[o]
        inside = (t >= tq[0]) & (t <= tq[-1])
        t, position = t[inside], position[inside]
        for other in merged:
            merged[other] = merged[other][inside]
        merged[quantity] = np.column_stack([np.interp(t, tq, values[:, j])
                                            for j in range(values.shape[1])]) \
            if t.size else np.empty((0, values.shape[1]))
    effort = merged.get('effort', np.full(position.shape, np.nan))
    return _finish(where, joint_names, t.copy(), position, merged.get('velocity'), effort)


def _read_npz(path, joint_names):
    """Read the NPZ format of the module docstring."""
    where = str(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as exc:  # noqa: B902 - zipfile, pickle refusals, OS errors alike
        raise DataError(f'{where}: not a readable NPZ file ({_one_line(exc)})') from None
    for key in ('time', 'names', 'position', 'effort'):
        if key not in arrays:
            raise DataError(f'{where}: no array {key!r} (it has: {", ".join(arrays)})')
    names = arrays['names']
    if names.ndim != 1 or names.dtype.kind not in 'US':
        raise DataError(f'{where}: "names" must be a 1-D array of strings, got {names.dtype} '
                        f'{names.shape}')
    names = [str(x) for x in names]
    time = np.asarray(arrays['time'], np.float64)
    if time.ndim != 1:
        raise DataError(f'{where}: "time" must be 1-D, got shape {time.shape}')
    fields = {}
    for key in ('position', 'velocity', 'effort'):
        if key not in arrays:
            continue
        a = arrays[key]
        if a.shape != (time.size, len(names)):
            raise DataError(f'{where}: {key!r} has shape {a.shape}, expected '
                            f'{(time.size, len(names))} (time samples, names)')
        fields[key] = a
    index = {}
    for i, name in enumerate(names):
        index.setdefault(name, i)
    for joint in joint_names:
        if joint not in index:
            raise DataError(f'{where}: joint {joint!r} is missing (names: {", ".join(names)})')
    cols = [index[j] for j in joint_names]
    pick = {k: np.asarray(a[:, cols], np.float64) for k, a in fields.items()}
    return _finish(where, joint_names, time, pick['position'], pick.get('velocity'),
                   pick['effort'])


def read_recording(path, joint_names, topic='/joint_states', progress=None):
    """
    Return the joint states of one recording as a :class:`JointStateRecording`.

    ``path``: a rosbag2 directory, a ``.db3`` or ``.mcap`` file, a ``.csv`` or a ``.npz`` file,
    or one CSV file per quantity (a list of paths, or their names joined by commas) (formats
    in the module docstring). ``joint_names``: the model's joints, the column order of
    the result; other joints in the data are ignored. ``topic``: the JointState topic of a bag.
    ``progress``: optional ``progress(fraction)`` called now and then while a bag is read.

    Raises :class:`~denoc_ros.errors.DataError` naming the file, topic or joint at fault: a
    missing or unreadable file, no such topic, a joint not in the data, empty efforts, non-finite
    values, fewer than :data:`MIN_SAMPLES` samples.
    """
    joint_names = tuple(str(j) for j in joint_names)
    if not joint_names:
        raise DataError('read_recording: no joint names given')
    if len(set(joint_names)) != len(joint_names):
        raise DataError(f'read_recording: joint names repeat: {", ".join(joint_names)}')
    if isinstance(path, str) and ',' in path and not Path(path).exists():
        path = path.split(',')
    if isinstance(path, (list, tuple)):
        paths = [Path(os.fspath(p)) for p in path]
        for p in paths:
            if not p.exists():
                raise DataError(f'{p}: no such file or directory')
            if p.suffix.lower() != '.csv':
                raise DataError(f'{p}: files given together must be CSV files, one per quantity')
        recording = (_read_csv(paths[0], joint_names) if len(paths) == 1
                     else _read_csv_files(paths, joint_names))
        if progress is not None:
            progress(1.0)
        return recording
    path = Path(os.fspath(path))
    if not path.exists():
        raise DataError(f'{path}: no such file or directory')
    suffix = path.suffix.lower()
    if path.is_dir() or suffix in ('.db3', '.mcap'):
        recording = read_bag(path, joint_names, topic, progress)
    elif suffix == '.csv':
        recording = _read_csv(path, joint_names)
    elif suffix == '.npz':
        recording = _read_npz(path, joint_names)
    else:
        raise DataError(f'{path}: unknown format (expected a rosbag2 directory, a .db3, .mcap, '
                        '.csv or .npz file)')
    if progress is not None:
        progress(1.0)
    return recording


def read_recordings(paths, joint_names, topic='/joint_states', progress=None):
    """
    Return one :class:`JointStateRecording` per path (see :func:`read_recording`).

    ``progress(fraction)`` covers all of them.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = list(paths)

    def part(i):
        if progress is None:
            return None
        return lambda fraction: progress((i + fraction) / len(paths))

    return [read_recording(path, joint_names, topic, part(i)) for i, path in enumerate(paths)]


def write_csv(path, recording):
    """Write ``recording`` in the CSV format of the module docstring (17 significant digits)."""
    names, time, position, velocity, effort = _checked(recording)
    fields = [('position', position), ('velocity', velocity), ('effort', effort)]
    fields = [(field, values) for field, values in fields if values is not None]
    header = ['time']
    blocks = [time[:, None]]
    for j, name in enumerate(names):
        for field, values in fields:
            header.append(f'{name}/{field}')
            blocks.append(values[:, j:j + 1])
    np.savetxt(path, np.hstack(blocks), fmt='%.17g', delimiter=',', header=','.join(header),
               comments='')


def write_npz(path, recording):
    """Write ``recording`` in the NPZ format of the module docstring (``numpy.savez``)."""
    names, time, position, velocity, effort = _checked(recording)
    arrays = {'time': time, 'names': np.array(names, dtype=str), 'position': position,
              'effort': effort}
    if velocity is not None:
        arrays['velocity'] = velocity
    np.savez(path, **arrays)
