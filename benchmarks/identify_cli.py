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
The whole ``denoc_identify`` on a long recording: wall time, its split, and peak memory.

Writes a synthetic rosbag2 (mcap) of the bundled 7-joint Panda at 1 kHz (default one hour:
3.6 million sensor_msgs/JointState messages, with a gripper joint the CLI must ignore): a
periodic 5-harmonic motion, efforts from the library's inverse dynamics of a perturbed arm plus
viscous and Coulomb friction and noise. Then runs the installed ``denoc_identify`` on it as a
separate process and prints its wall time, the time of each step (from its report.json:
reading, filtering, regressor, normal equations, solve, ...) and its peak resident memory
(``getrusage`` of the child). Run from the repository root::

    .venv/bin/python benchmarks/identify_cli.py [--minutes 60] [--keep DIR]
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

REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import denoc_ros as dr  # noqa: E402
from denoc_ros.description import read_description  # noqa: E402
from denoc_ros.identification.bags import write_bag  # noqa: E402
from denoc_ros.identification.excitation import fourier_trajectory  # noqa: E402
from denoc_ros.identification.recording import JointStateRecording  # noqa: E402
from denoc_ros.identification.urdf_output import identified_urdf  # noqa: E402
import numpy as np  # noqa: E402

RATE = 1000.0


def synthetic_recording(minutes, seed=0, chunk=200_000):
    """Return (nominal URDF text, JointStateRecording) of a perturbed Panda moving."""
    rng = np.random.default_rng(seed)
    text = read_description('panda')
    nominal = dr.load_urdf(text)
    n = nominal.dof
    true = nominal.replace(mass=nominal.mass * rng.uniform(0.8, 1.25, n),
                           com=nominal.com + rng.normal(scale=0.02, size=(n, 3)),
                           inertia=nominal.inertia * rng.uniform(0.7, 1.4, (n, 1, 1)))
    true = dr.load_urdf(identified_urdf(text, nominal, dr.inertial_parameters(true),
                                        rng.uniform(0.2, 1.0, n), rng.uniform(0.3, 2.0, n)))
    count = int(minutes * 60 * RATE)
    t = np.arange(count) / RATE
    coefficients = rng.uniform(-0.25, 0.25, (2, n, 5))     # 5 harmonics of 0.1 Hz
    q, qd, tau = np.empty((count, n)), np.empty((count, n)), np.empty((count, n))
    for start in range(0, count, chunk):
        s = slice(start, start + chunk)
        q[s], qd[s], qdd = fourier_trajectory(coefficients, 2 * np.pi * 0.1, t[s])
        tau[s] = (dr.inverse_dynamics(true, q[s], qd[s], qdd) + dr.friction_torques(true, qd[s])
                  + rng.normal(scale=0.05, size=qdd.shape))
    return text, JointStateRecording(nominal.joint_names, t + 1000.0, q, qd, tau)


def main(argv=None):
    """Write the bag, run the CLI on it, print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--minutes', type=float, default=60.0, help='recording length')
    parser.add_argument('--keep', default=None, help='keep the bag and report in this folder')
    args = parser.parse_args(argv)
    folder = pathlib.Path(args.keep or tempfile.mkdtemp(prefix='denoc_identify_bench_'))
    folder.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    text, recording = synthetic_recording(args.minutes)
    (folder / 'nominal.urdf').write_text(text)
    bag = folder / 'recording'
    if bag.exists():
        shutil.rmtree(bag)
    write_bag(bag, recording, storage='mcap', extra_joints={'panda_finger_joint1': 0.02})
    size = sum(p.stat().st_size for p in bag.iterdir())
    messages = recording.time.size
    del recording
    print(f'bag: {messages:,} JointState messages (7 joints + 1 ignored), '
          f'{size / 1e6:.0f} MB mcap, written in {time.perf_counter() - t0:.1f} s')
    executable = pathlib.Path(sys.executable).with_name('denoc_identify')
    command = [str(executable), '--urdf', str(folder / 'nominal.urdf'), '--data', str(bag),
               '--output-urdf', str(folder / 'identified.urdf'), '--report',
               str(folder / 'report')]
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    t0 = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0  # kB -> MB
    if run.returncode != 0:
        print(run.stderr)
        return run.returncode
    report = json.loads((folder / 'report' / 'report.json').read_text())
    print(run.stdout.strip())
    print(f'denoc_identify: wall {wall:.1f} s, peak RSS {peak:.0f} MB '
          f'(targets: 120 s, 2048 MB)')
    for step, seconds in report['timings_s'].items():
        print(f'  {step:<28} {seconds:8.2f} s')
    if not args.keep:
        shutil.rmtree(folder)
    return 0


if __name__ == '__main__':
    sys.exit(main())
