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
Time and peak memory of writing, reading and filtering a long JointState bag; other readers.

Run from the repository root::

    .venv/bin/python benchmarks/bag_io.py                                # 1 h, 1 kHz, 7 joints
    .venv/bin/python benchmarks/bag_io.py --storage mcap sqlite3
    .venv/bin/python benchmarks/bag_io.py --duration 60 --storage mcap   # a quick look
    .venv/bin/python benchmarks/bag_io.py --compare                      # against the libraries

Each phase runs in a fresh process, so its peak resident memory (``ru_maxrss``) is its own:

* ``write``: synthesise the recording (sinusoids, efforts with deterministic noise; the arrays
  alone are ``3 x N x n x 8`` bytes, 605 MB for the default), then
  :func:`denoc_ros.identification.bags.write_bag` it (the recording's joints plus two gripper
  fingers, as a Panda publishes);
* ``read``: our reader, :func:`~denoc_ros.identification.data.read_recording` of the bag (joints
  asked for in reverse order);
* ``read+filter``: the same read, then
  :func:`~denoc_ros.identification.filtering.prepare_samples` with the default settings;
* ``rosbags``: the library alone: rosbags' ``AnyReader`` hands out the messages, its
  ``deserialize`` decodes each one, the arrays are filled message by message;
* ``mcap-ros2``: the library alone (``.mcap`` only): ``mcap``'s reader with
  ``mcap-ros2-support``'s decoder (``iter_decoded_messages``), arrays filled likewise;
* ``rosbags+cdr``, ``mcap+cdr``: the raw messages from the library's reader (rosbags'
  ``Reader.messages``, ``mcap``'s ``iter_messages``) decoded by our NumPy decoder
  (:mod:`denoc_ros.identification.cdr`): against ``read`` they time our way of fetching the raw
  bytes alone; against ``rosbags`` and ``mcap-ros2`` our decoder alone.

Every reader's arrays are checked at 20000 random samples against the synthetic trajectory.
Prints one row per storage and phase: messages, seconds, messages per second, the speed of
``read`` over the phase's (``ours x``), peak RSS and the bag's size. ``--compare`` runs all
the readers on both storages, by default on 3 minutes (180,000 messages). The bags are written
to a temporary directory (``--dir`` to choose), removed afterwards unless ``--keep``.
"""

import argparse
import json
import os
import pathlib
import resource
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent


def synthetic(index, rate, joints):
    """Return time, position, velocity, effort at sample indices ``index`` (sinusoids, noise)."""
    rel = index / rate
    time_ = 1.7e9 + rel
    position = np.empty((index.size, joints))
    velocity = np.empty((index.size, joints))
    effort = np.empty((index.size, joints))
    for j in range(joints):
        w = 2.0 * np.pi * 0.1 * (1 + j % 3)
        position[:, j] = 0.5 * np.sin(w * rel + j)
        velocity[:, j] = 0.5 * w * np.cos(w * rel + j)
        # deterministic "noise" (a function of the index), so any subset can be regenerated
        noise = np.sin(index * (12.9898 + j)) * 43758.5453
        effort[:, j] = 3.0 * np.sin(w * rel + j + 0.4) + 0.01 * (noise - np.floor(noise) - 0.5)
    return time_, position, velocity, effort


def joint_names(joints):
    """Return the synthetic arm's joint names."""
    return tuple(f'joint{j + 1}' for j in range(joints))


NS = 1_000_000_000
READERS = ('read', 'read+filter', 'rosbags', 'mcap-ros2', 'rosbags+cdr', 'mcap+cdr')
MCAP_ONLY = ('mcap-ros2', 'mcap+cdr')


def _storage_file(bag):
    """Return the one storage file of a bag directory written by write_bag."""
    (file,) = [p for p in pathlib.Path(bag).iterdir() if p.suffix in ('.mcap', '.db3')]
    return file


class _Rows:
    """Arrays filled one message at a time (the library readers), columns in ``names`` order."""

    def __init__(self, count, names):
        self.names = names
        self.stamp = np.empty(count, np.int64)
        self.position, self.velocity, self.effort = (np.empty((count, len(names)))
                                                     for _ in range(3))
        self.columns = {}
        self.count = 0

    def add(self, msg_names, sec, nanosec, position, velocity, effort):
        """Store one message's stamp and arrays, picking the joints by name."""
        key = tuple(msg_names)
        cols = self.columns.get(key)
        if cols is None:
            index = {name: i for i, name in enumerate(key)}
            cols = self.columns[key] = np.array([index[n] for n in self.names])
        i = self.count
        self.stamp[i] = sec * NS + nanosec
        self.position[i] = np.asarray(position)[cols]
        self.velocity[i] = np.asarray(velocity)[cols]
        self.effort[i] = np.asarray(effort)[cols]
        self.count += 1

    def result(self):
        """Return (time s, position, velocity, effort)."""
        k = self.count
        time_ = (self.stamp[:k] // NS) + (self.stamp[:k] % NS) * 1e-9
        return time_, self.position[:k], self.velocity[:k], self.effort[:k]


def read_rosbags(bag, names, count):
    """Read with rosbags alone: AnyReader's messages, its deserialize, arrays per message."""
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import get_typestore, Stores

    rows = _Rows(count, names)
    with AnyReader([pathlib.Path(bag)],
                   default_typestore=get_typestore(Stores.ROS2_HUMBLE)) as reader:
        conns = [c for c in reader.connections if c.topic == '/joint_states']
        for conn, _, raw in reader.messages(connections=conns):
            msg = reader.deserialize(raw, conn.msgtype)
            stamp = msg.header.stamp
            rows.add(msg.name, stamp.sec, stamp.nanosec, msg.position, msg.velocity,
                     msg.effort)
    return rows.result()


def read_mcap_ros2(bag, names, count):
    """Read with mcap and mcap-ros2-support alone: iter_decoded_messages, arrays per message."""
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    rows = _Rows(count, names)
    with open(_storage_file(bag), 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for _, _, _, msg in reader.iter_decoded_messages(topics=['/joint_states']):
            stamp = msg.header.stamp
            rows.add(msg.name, stamp.sec, stamp.nanosec, msg.position, msg.velocity,
                     msg.effort)
    return rows.result()


def _decode_raw(messages, names, count):
    """Decode ``(bag_ns, bytes)`` pairs with our NumPy decoder, in batches as read_bag does."""
    from denoc_ros.identification.bags import _BATCH
    from denoc_ros.identification.cdr import _JointStateDecoder

    decoder = _JointStateDecoder(names, count)
    stamps, datas = [], []
    for bag_ns, data in messages:
        stamps.append(bag_ns)
        datas.append(data)
        if len(datas) == _BATCH:
            decoder.add(np.array(stamps, np.int64), datas)
            stamps, datas = [], []
    decoder.add(np.array(stamps, np.int64), datas)
    out = decoder.columns
    k = out.count
    return ((out.stamp[:k] // NS) + (out.stamp[:k] % NS) * 1e-9, out.position[:k],
            out.velocity[:k], out.effort[:k])


def read_rosbags_cdr(bag, names, count):
    """Read raw bytes with rosbags' Reader.messages (its MCAP or SQLite reader), decode ours."""
    from rosbags.rosbag2 import Reader

    with Reader(pathlib.Path(bag)) as reader:
        conns = [c for c in reader.connections if c.topic == '/joint_states']
        return _decode_raw(((t, raw) for _, t, raw in reader.messages(connections=conns)),
                           names, count)


def read_mcap_cdr(bag, names, count):
    """Read raw bytes with mcap's reader (iter_messages); decode with ours."""
    from mcap.reader import make_reader

    with open(_storage_file(bag), 'rb') as f:
        reader = make_reader(f)
        return _decode_raw(((message.log_time, message.data) for _, _, message
                            in reader.iter_messages(topics=['/joint_states'])), names, count)


def phase(args):
    """Run one phase in this process; print a JSON line with its time and peak memory."""
    from denoc_ros.identification import bags, data, filtering, recording
    n = int(round(args.duration * args.rate))
    names = joint_names(args.joints)
    result = {'messages': n}
    if args.phase == 'write':
        rec = recording.JointStateRecording(
            names, *synthetic(np.arange(n), args.rate, args.joints), source='synthetic')
        start = time.perf_counter()
        bags.write_bag(args.bag, rec, storage=args.storage[0],
                       extra_joints={'finger_joint1': 0.04, 'finger_joint2': 0.04})
        result['seconds'] = time.perf_counter() - start
        result['size'] = sum(p.stat().st_size for p in pathlib.Path(args.bag).iterdir())
    else:
        readers = {'rosbags': read_rosbags, 'mcap-ros2': read_mcap_ros2,
                   'rosbags+cdr': read_rosbags_cdr, 'mcap+cdr': read_mcap_cdr}
        start = time.perf_counter()
        if args.phase in readers:           # columns in another order, as below
            got = readers[args.phase](args.bag, names[::-1], n)
        else:
            read = data.read_recording(args.bag, names[::-1])
            got = read.time, read.position, read.velocity, read.effort
        result['seconds_read'] = time.perf_counter() - start
        result['seconds'] = result['seconds_read']
        if args.phase == 'read+filter':
            start = time.perf_counter()
            samples = filtering.prepare_samples(read)
            result['seconds_filter'] = time.perf_counter() - start
            result['seconds'] += result['seconds_filter']
            result['samples'] = samples.time.size
        # check 20000 random samples against the synthetic trajectory (after the timing)
        index = np.sort(np.random.default_rng(1).choice(n, min(n, 20000), replace=False))
        t, position, velocity, effort = synthetic(index, args.rate, args.joints)
        result['ok'] = bool(got[0].size == n and np.array_equal(got[0][index], t)
                            and np.array_equal(got[1][index], position[:, ::-1])
                            and np.array_equal(got[2][index], velocity[:, ::-1])
                            and np.array_equal(got[3][index], effort[:, ::-1]))
    result['rss'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps(result))


def main(argv=None):
    """Parse arguments; run each phase in a child process; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--duration', type=float, default=None,
                        help='seconds (default 3600; 180 with --compare)')
    parser.add_argument('--rate', type=float, default=1000.0, help='Hz (default 1000)')
    parser.add_argument('--joints', type=int, default=7, help='joints (default 7)')
    parser.add_argument('--storage', nargs='+', default=None, choices=['mcap', 'sqlite3'],
                        help='default mcap; mcap and sqlite3 with --compare')
    parser.add_argument('--phases', nargs='+', default=None, choices=('write',) + READERS,
                        help='default write, read, read+filter; with --compare write and every '
                        'reader but read+filter')
    parser.add_argument('--compare', action='store_true',
                        help='time our reader against rosbags and mcap-ros2-support')
    parser.add_argument('--dir', help='where to write the bags (default: a temporary directory)')
    parser.add_argument('--keep', action='store_true', help='keep the bags')
    parser.add_argument('--phase', help=argparse.SUPPRESS)
    parser.add_argument('--bag', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.duration is None:
        args.duration = 180.0 if args.compare else 3600.0
    if args.storage is None:
        args.storage = ['mcap', 'sqlite3'] if args.compare else ['mcap']
    if args.phases is None:
        args.phases = (['write', 'read', 'rosbags', 'mcap-ros2', 'rosbags+cdr', 'mcap+cdr']
                       if args.compare else ['write', 'read', 'read+filter'])
    if args.phase:
        phase(args)
        return 0
    workdir = pathlib.Path(args.dir or tempfile.mkdtemp(prefix='bag_io_'))
    workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    print(f'{args.duration:g} s at {args.rate:g} Hz, {args.joints} joints '
          f'(+2 gripper joints in the messages); one process per phase')
    print(f'{"storage":8} {"phase":12} {"messages":>9} {"seconds":>8} {"msg/s":>10} '
          f'{"ours x":>7} {"peak RSS MB":>11} {"bag MB":>7}  notes')
    try:
        for storage in args.storage:
            bag = workdir / f'bag_{storage}'
            size = ours = None
            for name in args.phases:
                if name in MCAP_ONLY and storage != 'mcap':
                    print(f'{storage:8} {name:12} (reads .mcap only)')
                    continue
                if name == 'write' and bag.exists():
                    shutil.rmtree(bag)
                cmd = [sys.executable, __file__, '--phase', name, '--storage', storage,
                       '--bag', str(bag), '--duration', str(args.duration),
                       '--rate', str(args.rate), '--joints', str(args.joints)]
                proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
                if proc.returncode:
                    print(f'{storage:8} {name:12} failed:\n{proc.stderr}')
                    return 1
                r = json.loads(proc.stdout.strip().splitlines()[-1])
                size = r.get('size', size)
                notes = []
                if 'ok' in r:
                    notes.append('data equal' if r['ok'] else 'DATA DIFFER')
                if 'seconds_filter' in r:
                    notes.append(f'read {r["seconds_read"]:.1f} s + filter '
                                 f'{r["seconds_filter"]:.1f} s -> {r["samples"]} samples')
                if name == 'read':
                    ours = r['seconds']
                ratio = (f'{r.get("seconds_read", 0.0) / ours:7.1f}'
                         if ours and 'seconds_read' in r else f'{"":7}')
                print(f'{storage:8} {name:12} {r["messages"]:9d} {r["seconds"]:8.2f} '
                      f'{r["messages"] / r["seconds"]:10.0f} {ratio} {r["rss"] / 1e6:11.0f} '
                      f'{(size or 0) / 1e6:7.0f}  {"; ".join(notes)}', flush=True)
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
