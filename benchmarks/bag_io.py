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
Time and peak memory of writing, reading and filtering a long JointState bag.

Run from the repository root::

    .venv/bin/python benchmarks/bag_io.py                                # 1 h, 1 kHz, 7 joints
    .venv/bin/python benchmarks/bag_io.py --storage mcap sqlite3
    .venv/bin/python benchmarks/bag_io.py --duration 60 --storage mcap   # a quick look

Each phase runs in a fresh process, so its peak resident memory (``ru_maxrss``) is its own:

* ``write``: synthesise the recording (sinusoids, efforts with deterministic noise; the arrays
  alone are ``3 x N x n x 8`` bytes, 605 MB for the default), then
  :func:`denoc_ros.identification.data.write_bag` it (the recording's joints plus two gripper
  fingers, as a Panda publishes);
* ``read``: :func:`~denoc_ros.identification.data.read_recording` of the bag (joints asked for
  in reverse order), then checked at 20000 random samples against the synthetic trajectory;
* ``read+filter``: the same read, then
  :func:`~denoc_ros.identification.data.prepare_samples` with the default settings.

Prints one row per storage and phase: messages, seconds, microseconds per message, peak RSS and
the bag's size. The bags are written to a temporary directory (``--dir`` to choose), removed
afterwards unless ``--keep``.
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


def phase(args):
    """Run one phase in this process; print a JSON line with its time and peak memory."""
    from denoc_ros.identification import data
    n = int(round(args.duration * args.rate))
    names = joint_names(args.joints)
    result = {'messages': n}
    if args.phase == 'write':
        recording = data.JointStateRecording(
            names, *synthetic(np.arange(n), args.rate, args.joints), source='synthetic')
        start = time.perf_counter()
        data.write_bag(args.bag, recording, storage=args.storage[0],
                       extra_joints={'finger_joint1': 0.04, 'finger_joint2': 0.04})
        result['seconds'] = time.perf_counter() - start
        result['size'] = sum(p.stat().st_size for p in pathlib.Path(args.bag).iterdir())
    else:
        start = time.perf_counter()
        read = data.read_recording(args.bag, names[::-1])  # columns in another order
        result['seconds_read'] = time.perf_counter() - start
        result['seconds'] = result['seconds_read']
        if args.phase == 'read+filter':
            start = time.perf_counter()
            samples = data.prepare_samples(read)
            result['seconds_filter'] = time.perf_counter() - start
            result['seconds'] += result['seconds_filter']
            result['samples'] = samples.time.size
        # check 20000 random samples against the synthetic trajectory (after the timing)
        index = np.sort(np.random.default_rng(1).choice(n, min(n, 20000), replace=False))
        t, position, velocity, effort = synthetic(index, args.rate, args.joints)
        result['ok'] = bool(read.time.size == n and np.array_equal(read.time[index], t)
                            and np.array_equal(read.position[index], position[:, ::-1])
                            and np.array_equal(read.velocity[index], velocity[:, ::-1])
                            and np.array_equal(read.effort[index], effort[:, ::-1]))
    result['rss'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps(result))


def main(argv=None):
    """Parse arguments; run each phase in a child process; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--duration', type=float, default=3600.0, help='seconds (default 3600)')
    parser.add_argument('--rate', type=float, default=1000.0, help='Hz (default 1000)')
    parser.add_argument('--joints', type=int, default=7, help='joints (default 7)')
    parser.add_argument('--storage', nargs='+', default=['mcap'], choices=['mcap', 'sqlite3'])
    parser.add_argument('--phases', nargs='+', default=['write', 'read', 'read+filter'],
                        choices=['write', 'read', 'read+filter'])
    parser.add_argument('--dir', help='where to write the bags (default: a temporary directory)')
    parser.add_argument('--keep', action='store_true', help='keep the bags')
    parser.add_argument('--phase', help=argparse.SUPPRESS)
    parser.add_argument('--bag', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phase:
        phase(args)
        return 0
    workdir = pathlib.Path(args.dir or tempfile.mkdtemp(prefix='bag_io_'))
    workdir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(REPO)] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
    print(f'{args.duration:g} s at {args.rate:g} Hz, {args.joints} joints '
          f'(+2 gripper joints in the messages); one process per phase')
    print(f'{"storage":8} {"phase":12} {"messages":>9} {"seconds":>8} {"us/msg":>7} '
          f'{"peak RSS MB":>11} {"bag MB":>7}  notes')
    try:
        for storage in args.storage:
            bag = workdir / f'bag_{storage}'
            size = None
            for name in args.phases:
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
                print(f'{storage:8} {name:12} {r["messages"]:9d} {r["seconds"]:8.1f} '
                      f'{r["seconds"] / r["messages"] * 1e6:7.2f} {r["rss"] / 1e6:11.0f} '
                      f'{(size or 0) / 1e6:7.0f}  {"; ".join(notes)}')
    finally:
        if not args.keep and not args.dir:
            shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
