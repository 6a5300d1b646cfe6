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
Recorded joint states for identification: reading, writing, filtering and differentiation.

Reading (:func:`read_recording`) accepts

* a rosbag2 directory (it holds ``metadata.yaml``; either storage, split bags, compression), a
  single ``.db3`` or ``.mcap`` storage file, or a directory of such files without its
  ``metadata.yaml`` (a recording that was not closed cleanly); the messages are
  ``sensor_msgs/msg/JointState`` on one topic (default ``/joint_states``);
* a CSV file: one header row, then one row per sample. Columns, by name, in any order:
  ``time`` (s), and for each joint ``<joint>/position``, ``<joint>/velocity`` (optional, for
  every joint or for none) and ``<joint>/effort``. Other columns are ignored. Example::

      time,shoulder/position,shoulder/velocity,shoulder/effort,elbow/position,...
      0.000,0.1,0.0,1.25,-0.4,...

* an NPZ file (``numpy.savez``): arrays ``time`` ``(N,)``, ``names`` ``(n,)`` of ``str``,
  ``position`` and ``effort`` ``(N, n)``, and optionally ``velocity`` ``(N, n)``.

Joints are matched by name; joints the model does not have (gripper fingers) are ignored.
JointState messages that name none of the model's joints (another publisher on the same topic,
e.g. a gripper driver) are skipped silently; messages that lack only some of them, or carry no
positions or efforts, are dropped with a :class:`DataWarning`, and if no message is usable a
:class:`~denoc_ros.errors.DataError` names the missing joint or field. Time is the header stamp,
or the bag's recording time where the stamp is zero. Samples are sorted by time and exact
duplicate stamps dropped (the first one recorded is kept).

Speed: deserialising a JointState with rosbags' generic CDR deserialiser takes about 10 us, i.e.
36 s for an hour at 1 kHz, and rosbags' MCAP reader, which merges all chunks through a heap, took
18 s just to hand out the raw messages of such a bag. So the raw bytes are fetched here: MCAP
chunks (indexed by rosbags' reader) are decompressed and walked directly, SQLite is queried
directly, and only other cases (per-message compression, unindexed MCAP) go through rosbags'
``messages``. The CDR is decoded here with NumPy: messages of one publisher share their layout
(same names, same frame_id, same array lengths), so the messages of a batch are grouped by
length and by their structural bytes (string lengths and characters, sequence counts; never
padding, which real middleware leaves uninitialised), and each group is decoded at fixed byte
offsets with strided views. A message that does not parse as CDR falls back to rosbags'
deserialiser. The arrays are preallocated from the bag's message count, so no Python object is
kept per message. :func:`write_bag` works the same way in reverse: one template serialised by
rosbags, copies patched with NumPy.

Filtering (:func:`prepare_samples`): the recording is split into continuous segments at gaps,
each segment resampled onto a uniform grid where its stamps are not uniform, then positions,
velocities and efforts are low-pass filtered with the same zero-phase Butterworth filter
(``scipy.signal.sosfiltfilt``; the same filter on motion and torque keeps them consistent,
"parallel filtering"), accelerations come from central differences of the filtered velocities,
the filter's edge transients are trimmed off and the result decimated. See
:class:`FilterSettings` for the defaults and why.
"""

from dataclasses import dataclass
import functools
from itertools import islice
import math
import os
from pathlib import Path
import struct
import warnings

import numpy as np

from ..errors import DataError
from ..friction import coulomb_sign

__all__ = ['DataWarning', 'FilterSettings', 'JointStateRecording', 'MIN_SAMPLES',
           'prepare_samples', 'read_recording', 'read_recordings', 'Samples', 'write_bag',
           'write_csv', 'write_npz']

JOINT_STATE = 'sensor_msgs/msg/JointState'
"""The message type read and written."""

MIN_SAMPLES = 10
"""Fewest samples a recording (and the filtered result) must have."""

NS = 1_000_000_000
_BATCH = 32768          # messages decoded together (about 12 MB of raw 7-joint messages)
_MAX_LAYOUTS = 64       # distinct layouts of one message length before decoding one by one


class DataWarning(UserWarning):
    """Part of a recording was dropped (unusable messages, short segments, no velocities)."""


@dataclass(frozen=True)
class JointStateRecording:
    """
    Joint states as recorded, in the model's joint order.

    ``time`` ``(N,)`` s, strictly increasing; ``position``, ``velocity`` and ``effort``
    ``(N, n)`` float64, column ``j`` the joint ``joint_names[j]``; ``velocity`` is ``None`` when
    the source has none. ``source`` says what was read (for messages).
    """

    joint_names: tuple
    time: np.ndarray
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    source: str = 'recording'


# ---------------------------------------------------------------------------------------------
# JointState CDR


class _Layout:
    """Byte layout of one serialised JointState: where its stamp and arrays are."""

    __slots__ = ('size', 'endian', 'names', 'frame_id', 'counts', 'offsets', 'index', 'key',
                 'columns', 'reason', 'has_velocity')


def _align(pos, alignment):
    """Return ``pos`` rounded up to ``alignment`` (CDR: relative to the encapsulation header)."""
    return 4 + ((pos - 4 + alignment - 1) & -alignment)


def _parse_layout(raw):
    """
    Return the :class:`_Layout` of one CDR-serialised ``sensor_msgs/msg/JointState``.

    Walks the message (plain CDR, either byte order): header stamp, frame_id, names, then the
    position, velocity and effort sequences (8-byte aligned data after a non-zero count).
    Trailing bytes are allowed. Raises ``ValueError`` if ``raw`` is not such a message.
    """
    size = len(raw)
    if size < 32 or raw[0] != 0 or raw[1] not in (0, 1):
        raise ValueError('not a plain CDR message')
    endian = '<' if raw[1] == 1 else '>'
    u32 = struct.Struct(endian + 'I').unpack_from
    ranges = [(0, 2)]                      # the representation identifier

    def string(pos):
        pos = _align(pos, 4)
        (length,) = u32(raw, pos)
        end = pos + 4 + length
        if length == 0 or end > size or raw[end - 1] != 0:
            raise ValueError('malformed string')
        ranges.append((pos, end))
        return raw[pos + 4:end - 1].decode(), end

    frame_id, pos = string(12)
    pos = _align(pos, 4)
    (count,) = u32(raw, pos)
    if count > size:
        raise ValueError('malformed name sequence')
    ranges.append((pos, pos + 4))
    pos += 4
    names = []
    for _ in range(count):
        name, pos = string(pos)
        names.append(name)
    counts, offsets = [], []
    for _ in range(3):
        pos = _align(pos, 4)
        (count,) = u32(raw, pos)
        ranges.append((pos, pos + 4))
        pos += 4
        if count:
            pos = _align(pos, 8)
        offsets.append(pos)
        counts.append(count)
        pos += 8 * count
        if pos > size:
            raise ValueError('sequence beyond the end of the message')
    layout = _Layout()
    layout.size = size
    layout.endian = endian
    layout.names = tuple(names)
    layout.frame_id = frame_id
    layout.counts = tuple(counts)
    layout.offsets = tuple(offsets)
    layout.index = np.concatenate([np.arange(a, b) for a, b in ranges])
    layout.key = np.frombuffer(raw, np.uint8)[layout.index]
    return layout


def _classify(names, counts, joint_names):
    """
    Return ``(columns, reason, has_velocity)`` for a message with ``names`` and array ``counts``.

    ``columns[j]`` is the message index of ``joint_names[j]``; ``reason`` is ``None`` for a
    usable message, else a tuple saying why not (``('foreign',)``: none of the joints).
    """
    index = {}
    for i, name in enumerate(names):
        index.setdefault(name, i)
    missing = tuple(j for j in joint_names if j not in index)
    n_names = len(names)
    if len(missing) == len(joint_names):
        return None, ('foreign', names), False
    if missing:
        return None, ('missing', missing, names), False
    for field, count in zip(('position', 'velocity', 'effort'), counts):
        if count not in (0, n_names):
            return None, ('length', field, count, n_names), False
    if counts[0] == 0:
        return None, ('empty', 'position'), False
    if counts[2] == 0:
        return None, ('empty', 'effort'), False
    return np.array([index[j] for j in joint_names], dtype=np.intp), None, counts[1] > 0


@functools.lru_cache(maxsize=1)
def _typestore():
    """Return rosbags' ROS 2 type store (JointState has not changed since Humble)."""
    from rosbags.typesys import get_typestore, Stores
    return get_typestore(Stores.ROS2_HUMBLE)


class _Columns:
    """Preallocated, growing per-message arrays: stamps, positions, velocities, efforts."""

    def __init__(self, n, capacity):
        capacity = max(int(capacity), 64)
        self.n = n
        self.count = 0
        self.stamp = np.empty(capacity, np.int64)
        self.valid = np.zeros(capacity, bool)
        self.has_velocity = np.zeros(capacity, bool)
        self.position = np.empty((capacity, n))
        self.velocity = np.empty((capacity, n))
        self.effort = np.empty((capacity, n))

    def reserve(self, k):
        """Make room for ``k`` more messages; return their slots."""
        need = self.count + k
        if need > self.stamp.shape[0]:
            capacity = max(need, int(self.stamp.shape[0] * 1.5))
            for name in ('stamp', 'valid', 'has_velocity', 'position', 'velocity', 'effort'):
                old = getattr(self, name)
                new = np.zeros((capacity,) + old.shape[1:], old.dtype)
                new[:self.count] = old[:self.count]
                setattr(self, name, new)
        slots = np.arange(self.count, need)
        self.valid[slots] = False
        self.count = need
        return slots


class _JointStateDecoder:
    """Decode batches of raw JointState messages into :class:`_Columns` (see module docstring)."""

    def __init__(self, joint_names, capacity):
        self.joint_names = tuple(joint_names)
        self.columns = _Columns(len(self.joint_names), capacity)
        self.layouts = {}
        self.dropped = {}           # reason -> number of messages
        self.total = 0

    def add(self, bag_ns, datas):
        """
        Decode one batch: ``bag_ns`` (k,) int64 recording times, ``datas`` k raw messages.

        ``datas``: a list of ``bytes``, or a ``(k, size)`` uint8 array of messages of one size.
        """
        k = len(datas)
        if not k:
            return
        self.total += k
        slots = self.columns.reserve(k)
        if isinstance(datas, np.ndarray):
            self._add_rows(datas, bag_ns, slots)
            return
        lengths = np.fromiter(map(len, datas), np.int64, k)
        if lengths.min() == lengths.max():
            groups = [(int(lengths[0]), None)]
        else:
            groups = [(int(size), np.flatnonzero(lengths == size)) for size in np.unique(lengths)]
        for size, sel in groups:
            part = datas if sel is None else [datas[i] for i in sel]
            rows = np.frombuffer(b''.join(part), np.uint8).reshape(len(part), size)
            if sel is None:
                self._add_rows(rows, bag_ns, slots)
            else:
                self._add_rows(rows, bag_ns[sel], slots[sel])

    def _layout(self, raw):
        """Parse and classify a new layout (ValueError if ``raw`` is not plain CDR)."""
        layout = _parse_layout(raw)
        layout.columns, layout.reason, layout.has_velocity = _classify(
            layout.names, layout.counts, self.joint_names)
        return layout

    def _add_rows(self, rows, bag_ns, slots):
        """Decode messages of one length: known layouts first, then each new one."""
        known = self.layouts.setdefault(rows.shape[1], [])
        remaining = np.arange(rows.shape[0])
        tried = 0
        while remaining.size:
            if tried < len(known):
                layout = known[tried]
                tried += 1
            else:
                raw = rows[remaining[0]].tobytes()
                try:
                    layout = self._layout(raw)
                except (ValueError, struct.error):
                    self._fallback(raw, bag_ns[remaining[0]], slots[remaining[0]])
                    remaining = remaining[1:]
                    continue
                if len(known) < _MAX_LAYOUTS:
                    known.append(layout)
                    tried += 1
                else:  # pathological: every message its own layout; decode just this one
                    self._decode(layout, rows[remaining[:1]], bag_ns[remaining[:1]],
                                 slots[remaining[:1]])
                    remaining = remaining[1:]
                    continue
            if remaining.size == rows.shape[0]:
                match = (rows[:, layout.index] == layout.key).all(axis=1)
            else:
                match = (rows[remaining[:, None], layout.index] == layout.key).all(axis=1)
            if match.all():
                sub = rows if remaining.size == rows.shape[0] else rows[remaining]
                self._decode(layout, sub, bag_ns[remaining], slots[remaining])
                break
            if match.any():
                chosen = remaining[match]
                self._decode(layout, rows[chosen], bag_ns[chosen], slots[chosen])
                remaining = remaining[~match]

    def _drop(self, reason, k):
        self.dropped[reason] = self.dropped.get(reason, 0) + k

    def _decode(self, layout, rows, bag_ns, slots):
        """Decode ``rows`` (m, size) uint8, all of ``layout``, into ``slots``."""
        m = rows.shape[0]
        if layout.reason is not None:
            self._drop(layout.reason, m)
            return
        rows = np.ascontiguousarray(rows)
        size, e = layout.size, layout.endian
        sec = np.ndarray((m,), e + 'i4', rows, 4, (size,)).astype(np.int64)
        nsec = np.ndarray((m,), e + 'u4', rows, 8, (size,)).astype(np.int64)
        self._store(slots, bag_ns, sec, nsec, layout.columns, layout.has_velocity,
                    *(np.ndarray((m, count), e + 'f8', rows, offset, (size, 8))
                      for count, offset in zip(layout.counts, layout.offsets)))

    def _store(self, slots, bag_ns, sec, nsec, columns, has_velocity, position, velocity, effort):
        """Store decoded messages; a zero header stamp is replaced by the recording time."""
        stamp = sec * NS + nsec
        zero = (sec == 0) & (nsec == 0)
        if zero.any():
            stamp = np.where(zero, bag_ns, stamp)
        out = self.columns
        if slots.size == slots[-1] - slots[0] + 1:  # consecutive (normal): slices, not indices
            slots = slice(int(slots[0]), int(slots[-1]) + 1)
        out.stamp[slots] = stamp
        out.position[slots] = position[:, columns]
        out.effort[slots] = effort[:, columns]
        if has_velocity:
            out.velocity[slots] = velocity[:, columns]
        out.has_velocity[slots] = has_velocity
        out.valid[slots] = True

    def _fallback(self, raw, bag_ns, slot):
        """Decode one message with rosbags' deserialiser (odd encodings)."""
        try:
            msg = _typestore().deserialize_cdr(raw, JOINT_STATE)
            names = [str(name) for name in msg.name]
            arrays = [np.asarray(a, float).reshape(1, -1)
                      for a in (msg.position, msg.velocity, msg.effort)]
            sec, nsec = int(msg.header.stamp.sec), int(msg.header.stamp.nanosec)
        except Exception:  # noqa: B902 - whatever rosbags raises on bytes it cannot decode
            self._drop(('undecodable',), 1)
            return
        columns, reason, has_velocity = _classify(names, [a.shape[1] for a in arrays],
                                                  self.joint_names)
        if reason is not None:
            self._drop(reason, 1)
            return
        self._store(np.array([slot]), np.array([bag_ns]), np.array([sec]), np.array([nsec]),
                    columns, has_velocity, *arrays)


def _describe(reason, k):
    """Say in words why ``k`` messages were dropped."""
    kind = reason[0]
    if kind == 'missing':
        return f'{k} lack joint(s) {", ".join(map(repr, reason[1]))}'
    if kind == 'length':
        return f'{k} have {reason[2]} {reason[1]} values for {reason[3]} names'
    if kind == 'empty':
        return f'{k} have an empty {reason[1]} array'
    if kind == 'foreign':
        return f'{k} name none of the joints'
    return f'{k} are not decodable as {JOINT_STATE}'


def _no_usable_message(where, reason, joint_names):
    """Return the DataError for a topic none of whose messages is usable, by ``reason``."""
    kind = reason[0]
    if kind in ('missing', 'foreign'):
        names = reason[-1]
        missing = reason[1] if kind == 'missing' else joint_names
        return DataError(f'{where}: joint {missing[0]!r} is missing from the JointState messages '
                         f'(they name: {", ".join(names) or "no joints"})')
    if kind == 'empty' and reason[1] == 'effort':
        return DataError(f'{where}: the JointState messages have empty effort arrays '
                         '(identification needs the joint torques)')
    if kind == 'empty':
        return DataError(f'{where}: the JointState messages have empty position arrays')
    if kind == 'length':
        return DataError(f'{where}: the JointState messages have {reason[2]} {reason[1]} values '
                         f'for {reason[3]} names')
    return DataError(f'{where}: the messages are not decodable as {JOINT_STATE}')


# ---------------------------------------------------------------------------------------------
# Reading


def _seconds(ns):
    """Return int64 nanoseconds as float64 seconds, rounded once (exact to the float's ulp)."""
    return (ns // NS).astype(np.float64) + (ns % NS).astype(np.float64) * 1e-9


def _one_line(exc):
    """Return an exception as one line: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f'{type(exc).__name__}: {text[0]}' if text else type(exc).__name__


def _storage_files(path):
    """Return what to open with rosbags' Reader: the bag itself, or the files of a bare dir."""
    if not path.is_dir() or (path / 'metadata.yaml').exists():
        return [path]
    files = sorted(p for p in path.iterdir() if p.suffix in ('.db3', '.mcap'))
    if not files:
        raise DataError(f'{path}: not a rosbag2 directory (no metadata.yaml, no .db3 or .mcap '
                        'file)')
    return files


def _raw_batches(reader, conns):
    """
    Yield ``(bag_ns, payload)`` batches of the raw messages of ``conns`` from an open Reader.

    ``payload``: a list of ``bytes``, or a ``(k, size)`` uint8 array of k messages of one size.
    Each storage file is read the fastest way known: MCAP chunks walked here (rosbags merges
    the messages of all chunks through a heap, some 5 us a message on an hour-long bag),
    SQLite queried directly; anything else (per-message compression, unindexed MCAP, another
    rosbags version) through rosbags' ``messages``. Messages come in the order recorded.
    """
    try:
        from rosbags.rosbag2.storage_mcap import decompress, McapReader
        from rosbags.rosbag2.storage_sqlite3 import Sqlite3Reader
    except ImportError:  # pragma: no cover - another rosbags layout
        McapReader = Sqlite3Reader = None
    storage = reader.storage
    storages = getattr(storage, 'storages', [storage])
    if storage.metadata.compression_mode == 'message' or not all(
            isinstance(x, (McapReader, Sqlite3Reader)) for x in storages if x is not None):
        yield from _generic_batches(reader.messages(connections=conns))
        return
    for each in storages:
        ids = {c.id for c in each.connections if c.topic == conns[0].topic
               and c.msgtype == JOINT_STATE}
        if not ids:
            continue
        if isinstance(each, Sqlite3Reader) and each.dbconn is not None:
            cursor = each.dbconn.execute(
                'SELECT timestamp, data FROM messages WHERE topic_id IN '
                f'({",".join("?" * len(ids))}) ORDER BY id', tuple(sorted(ids)))
            yield from _generic_batches((None, t, d) for t, d in cursor)
        elif isinstance(each, McapReader) and getattr(each, 'chunks', None) \
                and each.bio is not None:
            yield from _mcap_batches(each, ids, decompress)
        else:
            yield from _generic_batches(
                each.messages([c for c in each.connections if c.id in ids]))


def _generic_batches(messages):
    """Batch an iterator of ``(connection, bag_ns, bytes)``."""
    while True:
        batch = list(islice(messages, _BATCH))
        if not batch:
            return
        yield np.fromiter((m[1] for m in batch), np.int64, len(batch)), [m[2] for m in batch]


_MCAP_RECORD = struct.Struct('<BQ')
_MCAP_MESSAGE = struct.Struct('<HIQ')


def _mcap_batches(storage, ids, decompress):
    """
    Yield the messages of channels ``ids`` from the chunks of an open rosbags ``McapReader``.

    A chunk is a sequence of records ``opcode (1) length (8) content``; a message's content is
    ``channel (2) sequence (4) log_time (8) publish_time (8) data``. Consecutive message records
    of one channel and one length (a whole chunk, normally) are taken as one strided array.
    """
    bio = storage.bio
    for chunk in storage.chunks:
        if chunk.channel_count and not any(chunk.channel_count.get(i, 0) for i in ids):
            continue
        bio.seek(chunk.chunk_start_offset + 9 + 24)
        (crc,) = struct.unpack('<I', bio.read(4))
        bio.seek(chunk.chunk_start_offset + 9 + 40 + len(chunk.compression))
        data = bio.read(chunk.compressed_size)
        if len(data) != chunk.compressed_size:
            raise ValueError(f'chunk at byte {chunk.chunk_start_offset} is truncated')
        buf = decompress(data, chunk.compression, chunk.uncompressed_size, crc)
        arr = np.frombuffer(buf, np.uint8)
        end = len(buf)
        pos = 0
        single_ns, single = [], []
        while pos < end:
            if end - pos < 9:
                raise ValueError('truncated record in a chunk')
            op, length = _MCAP_RECORD.unpack_from(buf, pos)
            stride = 9 + length
            if op != 0x05 or length < 22 or pos + stride > end:
                if pos + stride > end:
                    raise ValueError('record beyond the end of its chunk')
                pos += stride
                continue
            channel, _, log_time = _MCAP_MESSAGE.unpack_from(buf, pos + 9)
            if channel not in ids:
                pos += stride
                continue
            count = (end - pos) // stride
            run = 1
            if count > 1:
                ok = ((arr[pos:pos + count * stride:stride] == 0x05)
                      & (np.ndarray((count,), '<u8', buf, pos + 1, (stride,)) == length)
                      & (np.ndarray((count,), '<u2', buf, pos + 9, (stride,)) == channel))
                run = count if ok.all() else int(np.argmin(ok))
            if run < 8:
                single_ns.append(log_time)
                single.append(buf[pos + 31:pos + stride])
                pos += stride
                continue
            if single:
                yield np.array(single_ns, np.int64), single
                single_ns, single = [], []
            bag_ns = np.ndarray((run,), '<u8', buf, pos + 15, (stride,)).astype(np.int64)
            yield bag_ns, np.ndarray((run, length - 22), np.uint8, buf, pos + 31, (stride, 1))
            pos += run * stride
        if single:
            yield np.array(single_ns, np.int64), single


def _read_bag(path, joint_names, topic, progress):
    """Read JointState messages from a rosbag2 bag or storage file (see read_recording)."""
    from rosbags.rosbag2 import Reader

    files = _storage_files(path)
    where = f'{path}: topic {topic!r}'
    decoder = None
    other_types, topics = set(), set()
    for number, file in enumerate(files):
        try:
            reader = Reader(file)
            reader.open()
        except Exception as exc:  # noqa: B902 - rosbags, apsw, zstd, yaml, OS errors alike
            raise DataError(f'{file}: not a readable rosbag2 bag ({_one_line(exc)})') from None
        try:
            conns = [c for c in reader.connections if c.topic == topic]
            topics.update(c.topic for c in reader.connections if c.msgtype == JOINT_STATE)
            other_types.update(c.msgtype for c in conns if c.msgtype != JOINT_STATE)
            conns = [c for c in conns if c.msgtype == JOINT_STATE]
            if not conns:
                continue
            expected = sum(c.msgcount for c in conns)
            if decoder is None:
                decoder = _JointStateDecoder(joint_names, expected)
            batches = _raw_batches(reader, conns)
            done = 0
            while True:
                try:
                    bag_ns, payload = next(batches)
                except StopIteration:
                    break
                except Exception as exc:  # noqa: B902 - as above, while reading
                    raise DataError(f'{file}: cannot read the bag ({_one_line(exc)})') from None
                decoder.add(bag_ns, payload)
                del payload
                done += bag_ns.size
                if progress is not None and expected:
                    progress((number + min(done / expected, 1.0)) / len(files))
        finally:
            reader.close()
    if decoder is None:
        if other_types:
            raise DataError(f'{where}: has type {sorted(other_types)[0]}, not {JOINT_STATE}')
        raise DataError(f'{where}: no such topic in the bag (JointState topics: '
                        f'{", ".join(sorted(topics)) or "none"})')
    if decoder.total == 0:
        raise DataError(f'{where}: no message on the topic')
    out = decoder.columns
    valid = out.valid[:out.count]
    used = int(np.count_nonzero(valid))
    dropped = {r: k for r, k in decoder.dropped.items() if r[0] != 'foreign'}
    if used == 0:
        reasons = dropped or decoder.dropped
        raise _no_usable_message(where, max(reasons, key=reasons.get), tuple(joint_names))
    if dropped:
        text = '; '.join(_describe(r, k) for r, k in sorted(dropped.items(), key=str))
        warnings.warn(f'{where}: dropped {sum(dropped.values())} of {decoder.total} messages '
                      f'({text})', DataWarning, stacklevel=3)
    # compact (in place, array by array: one temporary at a time)
    n_all = out.count
    arrays = {}
    for name in ('stamp', 'has_velocity', 'position', 'velocity', 'effort'):
        a = getattr(out, name)
        if used < n_all:
            a[:used] = a[:n_all][valid]
        arrays[name] = a[:used]
        setattr(out, name, None)
    has_velocity = arrays.pop('has_velocity')
    velocity = arrays['velocity']
    if not has_velocity.all():
        if has_velocity.any():
            warnings.warn(f'{where}: {used - int(has_velocity.sum())} of {used} messages have no '
                          'velocities; velocities ignored (they will come from the positions)',
                          DataWarning, stacklevel=3)
        velocity = None
    return _finish(where, joint_names, arrays['stamp'], arrays['position'], velocity,
                   arrays['effort'], ns=True)


def _order(key):
    """Return the indices sorting ``key`` stably without exact duplicates, or None if sorted."""
    d = np.diff(key)
    if (d > 0).all():
        return None
    order = np.argsort(key, kind='stable')
    sorted_key = key[order]
    keep = np.ones(order.size, bool)
    keep[1:] = sorted_key[1:] != sorted_key[:-1]
    return order[keep]


def _finish(where, joint_names, key, position, velocity, effort, ns=False):
    """Sort, drop duplicates, check finiteness and size; return a JointStateRecording."""
    sel = _order(key)
    if sel is not None:
        key = key[sel]
        position = position[sel]
        effort = effort[sel]
        if velocity is not None:
            velocity = velocity[sel]
    time = _seconds(key) if ns else np.asarray(key, np.float64)
    if not np.isfinite(time).all():
        raise DataError(f'{where}: {int(np.count_nonzero(~np.isfinite(time)))} non-finite times')
    for field, values in (('position', position), ('velocity', velocity), ('effort', effort)):
        if values is None:
            continue
        bad = ~np.isfinite(values)
        if bad.any():
            row, col = np.argwhere(bad)[0]
            raise DataError(f'{where}: joint {joint_names[col]!r} has '
                            f'{int(np.count_nonzero(bad[:, col]))} non-finite {field} values '
                            f'(first at t = {time[row]:.9g} s)')
    if time.size < MIN_SAMPLES:
        raise DataError(f'{where}: only {time.size} usable samples (at least {MIN_SAMPLES} '
                        'needed)')
    return JointStateRecording(tuple(joint_names), time, position, velocity, effort, where)


def _read_csv(path, joint_names):
    """Read the CSV format of the module docstring."""
    where = str(path)
    try:
        with open(path, encoding='utf-8') as f:
            header = f.readline()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f'{where}: cannot read ({_one_line(exc)})') from None
    columns = {name.strip(): i for i, name in reversed(list(enumerate(header.split(','))))}
    if 'time' not in columns:
        raise DataError(f'{where}: no "time" column in the header row')
    use = [columns['time']]
    for joint in joint_names:
        for field in ('position', 'effort'):
            if f'{joint}/{field}' not in columns:
                raise DataError(f'{where}: joint {joint!r} has no column "{joint}/{field}"')
    with_velocity = [f'{j}/velocity' in columns for j in joint_names]
    if any(with_velocity) and not all(with_velocity):
        joint = joint_names[with_velocity.index(False)]
        raise DataError(f'{where}: joint {joint!r} has no column "{joint}/velocity" (velocities '
                        'are given for some joints: give them for all or for none)')
    fields = ('position', 'velocity', 'effort') if all(with_velocity) else ('position', 'effort')
    for field in fields:
        use += [columns[f'{j}/{field}'] for j in joint_names]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', UserWarning)  # "input contained no data"
            table = np.loadtxt(path, delimiter=',', skiprows=1, usecols=use, ndmin=2,
                               dtype=np.float64)
    except (ValueError, OSError) as exc:
        raise DataError(f'{where}: {_one_line(exc)}') from None
    n = len(joint_names)
    blocks = [table[:, 1 + k * n:1 + (k + 1) * n] for k in range(len(fields))]
    velocity = blocks[1] if len(fields) == 3 else None
    return _finish(where, joint_names, table[:, 0].copy(), blocks[0], velocity, blocks[-1])


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

    ``path``: a rosbag2 directory, a ``.db3`` or ``.mcap`` file, a ``.csv`` or a ``.npz`` file
    (formats in the module docstring). ``joint_names``: the model's joints, the column order of
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
    path = Path(os.fspath(path))
    if not path.exists():
        raise DataError(f'{path}: no such file or directory')
    suffix = path.suffix.lower()
    if path.is_dir() or suffix in ('.db3', '.mcap'):
        recording = _read_bag(path, joint_names, topic, progress)
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


# ---------------------------------------------------------------------------------------------
# Writing


def _checked(recording):
    """Return the recording's arrays as float64, checking their shapes."""
    names = tuple(recording.joint_names)
    time = np.asarray(recording.time, np.float64)
    n = len(names)
    out = [time]
    for field in ('position', 'velocity', 'effort'):
        a = getattr(recording, field)
        if a is None:
            if field != 'velocity':
                raise DataError(f'{recording.source}: no {field} array')
            out.append(None)
            continue
        a = np.asarray(a, np.float64)
        if a.shape != (time.size, n):
            raise DataError(f'{recording.source}: {field} has shape {a.shape}, expected '
                            f'{(time.size, n)} (time samples, joints)')
        out.append(a)
    if time.ndim != 1:
        raise DataError(f'{recording.source}: time must be 1-D, got shape {time.shape}')
    return names, *out


def _stamps(time, where):
    """Return (sec, nanosec) int64 of float seconds, for header stamps and bag times."""
    if not np.isfinite(time).all() or time.size and (time.min() < 0 or time.max() >= 2 ** 31):
        raise DataError(f'{where}: times must be finite and in [0, 2^31) s to be written as '
                        'ROS stamps')
    sec = np.floor(time)
    nsec = np.rint((time - sec) * 1e9).astype(np.int64)
    sec = sec.astype(np.int64)
    carry = nsec >= NS
    sec[carry] += 1
    nsec[carry] -= NS
    return sec, nsec


def write_bag(path, recording, topic='/joint_states', storage='mcap', extra_joints=None,
              zero_stamps=False):
    """
    Write ``recording`` as a rosbag2 directory of ``sensor_msgs/msg/JointState`` messages.

    ``storage``: ``'mcap'`` or ``'sqlite3'``. The bag time of each message is its sample time;
    the header stamp too, or zero with ``zero_stamps=True`` (as some drivers publish).
    ``extra_joints``: ``{name: value}`` appended to each message as further joints at that
    constant position (zero velocity and effort), e.g. gripper fingers. Without velocities in
    the recording the messages carry empty velocity arrays. ``path`` must not exist yet.
    Written with rosbags' ``Writer`` (format version 9): one message is serialised by rosbags,
    the others are copies of it with stamps and arrays patched in.
    """
    from rosbags.rosbag2 import StoragePlugin, Writer

    plugins = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}
    if not isinstance(storage, str) or storage not in plugins:
        raise DataError(f'write_bag: storage must be "mcap" or "sqlite3", got {storage!r}')
    path = Path(os.fspath(path))
    if path.exists():
        raise DataError(f'{path}: exists already (write_bag creates a new bag directory)')
    names, time, position, velocity, effort = _checked(recording)
    extra = dict(extra_joints or {})
    clash = [name for name in extra if name in names]
    if clash:
        raise DataError(f'write_bag: extra joint {clash[0]!r} is a joint of the recording')
    all_names = list(names) + [str(name) for name in extra]
    n, n_all = len(names), len(all_names)
    sec, nsec = _stamps(time, str(path))
    bag_ns = sec * NS + nsec

    ts = _typestore()
    msg_type = ts.types[JOINT_STATE]
    header_type = ts.types['std_msgs/msg/Header']
    time_type = ts.types['builtin_interfaces/msg/Time']
    extra_values = np.array([float(v) for v in extra.values()], np.float64)
    template = msg_type(
        header=header_type(stamp=time_type(sec=0, nanosec=0), frame_id=''),
        name=all_names,
        position=np.concatenate([np.zeros(n), extra_values]),
        velocity=np.zeros(n_all if velocity is not None else 0),
        effort=np.zeros(n_all))
    raw = bytes(ts.serialize_cdr(template, JOINT_STATE))
    layout = _parse_layout(raw)
    size = layout.size
    (pos_off, vel_off, eff_off) = layout.offsets

    with Writer(path, version=9, storage_plugin=plugins[storage]) as writer:
        conn = writer.add_connection(topic, JOINT_STATE, typestore=ts)
        write = writer.write
        base = np.frombuffer(raw, np.uint8)
        for start in range(0, time.size, _BATCH):
            stop = min(start + _BATCH, time.size)
            k = stop - start
            rows = np.empty((k, size), np.uint8)
            rows[:] = base
            if not zero_stamps:
                np.ndarray((k,), '<i4', rows, 4, (size,))[:] = sec[start:stop]
                np.ndarray((k,), '<u4', rows, 8, (size,))[:] = nsec[start:stop]
            np.ndarray((k, n), '<f8', rows, pos_off, (size, 8))[:] = position[start:stop]
            if velocity is not None:
                np.ndarray((k, n), '<f8', rows, vel_off, (size, 8))[:] = velocity[start:stop]
            np.ndarray((k, n), '<f8', rows, eff_off, (size, 8))[:] = effort[start:stop]
            data = rows.tobytes()
            for i, stamp in enumerate(bag_ns[start:stop].tolist()):
                write(conn, stamp, data[i * size:(i + 1) * size])


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


# ---------------------------------------------------------------------------------------------
# Filtering and differentiation


@dataclass(frozen=True)
class FilterSettings:
    """
    How :func:`prepare_samples` filters, differentiates, trims and decimates.

    ``cutoff`` (Hz), default 10: excitation trajectories for identification are band-limited
    to a few Hz (finite Fourier series, fundamental about 0.1 Hz, a handful of harmonics), so
    10 Hz keeps the motion and the torque it causes essentially unattenuated (the 4th-order
    zero-phase filter passes 1.5 Hz with a gain of 1 - 3e-7) while removing the sensor and
    quantisation noise that differentiation amplifies. ``order``, default 4: Butterworth order;
    applied forwards and backwards, so the magnitude response is that of order 8 and the
    phase is zero.

    ``decimate``: keep every k-th sample after filtering; ``None`` picks the largest k that
    keeps the sample rate at or above 10 times the cut-off (1 kHz, 10 Hz: k = 10, 100 Hz kept).
    The filtered signals hold nothing above the cut-off, so more samples add no information,
    only regressor rows.

    ``trim`` (s): dropped at both ends of every segment, where the filter's edge transient
    corrupts the (differentiated) signals. ``None``: ``3 / cutoff`` (0.3 s at 10 Hz). Measured on
    a 1 kHz sum of 0.2 to 1.5 Hz sinusoids, the acceleration error of the filtered derivative
    decays to 2e-4 of the acceleration amplitude 3 / cutoff away from an edge at cut-offs of 5,
    10 and 20 Hz, and is 1000 times larger 0.5 / cutoff away.

    ``max_gap``: a gap between stamps longer than this many median sample periods
    splits the recording into segments, filtered separately; shorter gaps (a few dropped
    messages) are bridged by the linear resampling. Default 10 (10 ms at 1 kHz, a tenth of a
    period of the cut-off frequency).
    """

    cutoff: float = 10.0
    order: int = 4
    decimate: int = None
    trim: float = None
    max_gap: float = 10.0


@dataclass(frozen=True)
class Samples:
    """
    Filtered samples for identification: ``time`` (M,) s; ``q``, ``qd``, ``qdd``, ``tau`` (M, n).

    Columns in the order of ``joint_names``; ``segments`` continuous pieces of recording
    contributed (their samples are concatenated in time order).

    ``coulomb`` (M, n): the Coulomb friction column ``tanh(qd / v_s)`` (the friction model's
    :func:`~denoc_ros.friction.coulomb_sign` at its default ``v_s``, as the identification's
    layout uses it) computed at the full rate and then low-pass filtered like the efforts. The
    efforts' Coulomb step at a velocity reversal is smeared by the filter; the sign of the
    filtered velocity is not. Regressing
    the filtered efforts on the filtered sign (Gautier's parallel filtering) removes the bias
    the mismatch causes (Coulomb levels found too low, viscous ones too high). None when the
    samples were made otherwise.
    """

    time: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    joint_names: tuple
    segments: int
    coulomb: np.ndarray = None

    def part(self, index):
        """Return the samples ``index`` (a slice) selects, every array alike."""
        return Samples(self.time[index], self.q[index], self.qd[index], self.qdd[index],
                       self.tau[index], self.joint_names, self.segments,
                       None if self.coulomb is None else self.coulomb[index])


def _check_settings(settings):
    """Raise DataError on settings that cannot be used."""
    def bad(name, must, value):
        raise DataError(f'FilterSettings.{name} must be {must}, got {value!r}')

    if not isinstance(settings, FilterSettings):
        raise DataError(f'settings must be a FilterSettings, got {type(settings).__name__}')
    try:
        if not (math.isfinite(settings.cutoff) and settings.cutoff > 0):
            bad('cutoff', 'a positive number of Hz', settings.cutoff)
    except TypeError:
        bad('cutoff', 'a positive number of Hz', settings.cutoff)
    if not isinstance(settings.order, (int, np.integer)) or not 1 <= settings.order <= 12:
        bad('order', 'an integer from 1 to 12', settings.order)
    if settings.decimate is not None and (
            not isinstance(settings.decimate, (int, np.integer)) or settings.decimate < 1):
        bad('decimate', 'None or a positive integer', settings.decimate)
    if settings.trim is not None and not (isinstance(settings.trim, (int, float))
                                          and math.isfinite(settings.trim)
                                          and settings.trim >= 0):
        bad('trim', 'None or a non-negative number of seconds', settings.trim)
    if not (isinstance(settings.max_gap, (int, float)) and settings.max_gap > 1):
        bad('max_gap', 'a number of sample periods greater than 1', settings.max_gap)


def prepare_samples(recording, settings=FilterSettings()):
    """
    Return filtered :class:`Samples` ``(q, qd, qdd, tau)`` of ``recording``.

    Per continuous segment (split at gaps longer than ``settings.max_gap`` median periods):
    resampled by linear interpolation onto a uniform grid at the nominal sample period (the
    mean of the steps within 50 % of the median step), unless already uniform; ``q``, ``qd``
    and ``tau`` low-pass filtered with a zero-phase Butterworth filter
    (``scipy.signal.sosfiltfilt``); ``qdd`` the central difference of the
    filtered ``qd`` (without velocities in the recording, ``qd`` is the central difference of
    the filtered ``q``); ``settings.trim`` seconds dropped at each end; every
    ``settings.decimate``-th sample kept. Segments too short for that are dropped with a
    :class:`DataWarning`. Raises :class:`~denoc_ros.errors.DataError` if the sample rate is
    too low for the cut-off or fewer than :data:`MIN_SAMPLES` samples are left.
    """
    from scipy.signal import butter, sosfiltfilt

    _check_settings(settings)
    names, t, position, velocity, effort = _checked(recording)
    where = recording.source
    for field, values in (('time', t), ('position', position), ('velocity', velocity),
                          ('effort', effort)):
        if values is not None and not np.isfinite(values).all():
            raise DataError(f'{where}: {field} has non-finite values')
    if t.size < MIN_SAMPLES:
        raise DataError(f'{where}: only {t.size} samples (at least {MIN_SAMPLES} needed)')
    steps = np.diff(t)
    if not (steps > 0).all():
        raise DataError(f'{where}: time is not strictly increasing (at sample '
                        f'{int(np.argmin(steps > 0)) + 1})')
    # The nominal period: the mean of the steps within 50 % of the median step, i.e. without
    # gaps and dropped messages. Not the median itself: float stamps quantise the steps (at
    # epoch times a float resolves 0.24 us), and for evenly spaced stamps the mean is their
    # exact spacing, so no resampling is needed. With jittered stamps any nearby period serves:
    # the samples are interpolated onto the grid whose spacing is used to differentiate.
    median = float(np.median(steps))
    dt = float(steps[np.abs(steps - median) < 0.5 * median].mean())
    gap = steps > settings.max_gap * median
    rate = 1.0 / dt
    cutoff = float(settings.cutoff)
    if cutoff >= 0.5 * rate:
        raise DataError(f'{where}: the cut-off {cutoff:g} Hz is not below half the sample rate '
                        f'({0.5 * rate:.6g} Hz; sample period {dt * 1e3:.6g} ms): lower '
                        'FilterSettings.cutoff')
    sos = butter(settings.order, cutoff, fs=rate, output='sos')
    padlen = 3 * (2 * sos.shape[0] + 1)
    k = settings.decimate or max(1, int(math.floor(rate / (10.0 * cutoff) * (1 + 1e-6))))
    trim = 3.0 / cutoff if settings.trim is None else float(settings.trim)
    n_trim = int(math.ceil(trim / dt - 1e-6))
    breaks = np.flatnonzero(gap) + 1
    bounds = list(zip(np.r_[0, breaks], np.r_[breaks, t.size]))

    def smooth(column, uniform, tr, grid):
        x = column if uniform else np.interp(grid, tr, column)
        return sosfiltfilt(sos, x)

    pieces, dropped = [], []
    n = len(names)
    for number, (i0, i1) in enumerate(bounds):
        tr = t[i0:i1] - t[i0]
        m = int(math.floor(tr[-1] / dt + 1e-6)) + 1
        if m - 2 * n_trim < MIN_SAMPLES or m <= padlen:
            dropped.append(f'{t[i0]:.6g} s to {t[i1 - 1]:.6g} s ({m} samples)')
            continue
        grid = dt * np.arange(m)
        uniform = m == tr.size and np.abs(tr - grid).max() <= 1e-3 * dt
        keep = slice(n_trim, m - n_trim, k)
        kept = grid[keep]
        out = [t[i0] + kept] + [np.empty((kept.size, n)) for _ in range(5)]
        for j in range(n):
            q = smooth(position[i0:i1, j], uniform, tr, grid)
            qd = (smooth(velocity[i0:i1, j], uniform, tr, grid) if velocity is not None
                  else np.gradient(q, dt))
            out[1][:, j] = q[keep]
            out[2][:, j] = qd[keep]
            out[3][:, j] = np.gradient(qd, dt)[keep]
            out[5][:, j] = sosfiltfilt(sos, coulomb_sign(qd))[keep]
            del q, qd
            out[4][:, j] = smooth(effort[i0:i1, j], uniform, tr, grid)[keep]
        pieces.append(out)
    if dropped:
        warnings.warn(f'{where}: {len(dropped)} of {len(bounds)} segments too short to filter '
                      f'and trim ({trim:.3g} s at each end) dropped: {"; ".join(dropped[:5])}'
                      f'{"; ..." if len(dropped) > 5 else ""}', DataWarning, stacklevel=2)
    total = sum(p[0].size for p in pieces)
    if total < MIN_SAMPLES:
        raise DataError(f'{where}: only {total} samples left after filtering, trimming '
                        f'{trim:.3g} s at the ends of {len(bounds)} segment(s) and decimating by '
                        f'{k} (at least {MIN_SAMPLES} needed)')
    time, q, qd, qdd, tau, coulomb = (np.concatenate([p[i] for p in pieces]) for i in range(6))
    return Samples(time, q, qd, qdd, tau, names, len(pieces), coulomb)
