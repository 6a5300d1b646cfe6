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
Reading and writing rosbag2 bags of ``sensor_msgs/msg/JointState`` (mcap and sqlite3).

:func:`read_bag` fetches the raw messages of one topic the fastest way known and hands them to
:mod:`.cdr`'s decoder in batches: MCAP chunks (indexed by rosbags' reader) are decompressed and
walked here (a read through rosbags' MCAP reader, which merges all chunks through a heap, took
6.7 times as long, through ``mcap``'s own reader 20.5 times: :func:`_raw_batches`); everything
else (SQLite, per-message compression, unindexed MCAP) comes from rosbags' ``Reader.messages``.
:func:`write_bag` works the same way in reverse: one template serialised by rosbags, copies
patched with NumPy, written with rosbags' ``Writer``.
"""

from itertools import islice
import os
from pathlib import Path
import struct
import warnings

import numpy as np

from .cdr import _describe, _JointStateDecoder, _no_usable_message, _parse_layout, _typestore, \
    JOINT_STATE
from .recording import _checked, _finish, _one_line, DataWarning, NS
from ..errors import DataError

__all__ = ['read_bag', 'write_bag']

_BATCH = 32768          # messages decoded together (about 12 MB of raw 7-joint messages)


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
    Indexed MCAP storage files are walked here chunk by chunk (:func:`_mcap_batches`; rosbags
    merges the messages of all chunks through a heap); anything else (SQLite, per-message
    compression, unindexed MCAP, another rosbags version) goes through rosbags'
    ``Reader.messages``. ``benchmarks/bag_io.py --compare`` (2026-11-25, a 3-minute 1 kHz bag,
    both fed to :mod:`.cdr`'s decoder): MCAP 267,000 messages/s walked here, 40,000 through
    rosbags' reader (6.7x), 13,000 through ``mcap``'s own reader (20.5x); SQLite 57,500
    queried directly against 52,200 through rosbags' reader (1.1x, so rosbags reads it).
    """
    try:
        from rosbags.rosbag2.storage_mcap import decompress, McapReader
    except ImportError:  # pragma: no cover - another rosbags layout
        McapReader = None
    storage = reader.storage
    storages = [x for x in getattr(storage, 'storages', [storage]) if x is not None]
    if (McapReader is None or storage.metadata.compression_mode == 'message'
            or not all(isinstance(x, McapReader) and getattr(x, 'chunks', None)
                       and x.bio is not None for x in storages)):
        yield from _generic_batches(reader.messages(connections=conns))
        return
    for each in storages:
        ids = {c.id for c in each.connections if c.topic == conns[0].topic
               and c.msgtype == JOINT_STATE}
        if ids:
            yield from _mcap_batches(each, ids, decompress)


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


def read_bag(path, joint_names, topic='/joint_states', progress=None):
    """Return the JointStateRecording of a bag or storage file (see data.read_recording)."""
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
