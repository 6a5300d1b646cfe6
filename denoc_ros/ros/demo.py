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
Run the demo without ``ros2 launch``: the dynamics node, a joint-state source and a torque monitor.

The same three executables that ``launch/demo.launch.py`` starts, as child processes of this one,
all on loopback (``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` unless already set). Ctrl-C (or
``--duration``) stops them all.
"""

import argparse
import os
import pathlib
import signal
import subprocess
import sys
import time

from ..signals import handle_interrupts, ignore_further_interrupts

DEFAULT_ROBOT = 'panda'


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def executable(name):
    """Return the command that runs executable ``name`` (console script ``denoc_<name>``) here."""
    beside = pathlib.Path(sys.executable).parent / f'denoc_{name}'
    if beside.is_file():
        return [str(beside)]
    return [sys.executable, '-m', f'denoc_ros.ros.{name}']


def demo_commands(robot, rate):
    """Return the three command lines of the demo for a robot (bundled name or URDF path)."""
    return [
        executable('dynamics_node') + ['--ros-args', '-p', f'urdf_path:={robot}'],
        executable('joint_state_source') + ['--ros-args', '-p', f'urdf_path:={robot}',
                                            '-p', f'rate:={float(rate)}'],
        executable('torque_monitor'),
    ]


def main(argv=None):
    """Start the demo processes and wait for Ctrl-C or the duration."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--robot', default=DEFAULT_ROBOT,
                        help='bundled robot name or URDF path (default: %(default)s)')
    parser.add_argument('--rate', type=float, default=100.0,
                        help='joint-state rate in Hz (default: %(default)s)')
    parser.add_argument('--duration', type=float, default=0.0,
                        help='stop after this many seconds (default: run until Ctrl-C)')
    args = parser.parse_args(argv)

    env = dict(os.environ)
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    env.setdefault('PYTHONUNBUFFERED', '1')
    handle_interrupts(sigterm=True)
    # The children start with SIGINT ignored until their own handler is in place: a Ctrl-C
    # while an interpreter is still starting would end it with a traceback from `site`.
    procs = [subprocess.Popen(cmd, env=env, preexec_fn=_ignore_sigint)
             for cmd in demo_commands(args.robot, args.rate)]
    print(f'demo: robot {args.robot!r}, joint states at {args.rate:g} Hz; Ctrl-C to stop',
          flush=True)
    status = 0
    try:
        deadline = time.monotonic() + args.duration if args.duration > 0 else None
        while deadline is None or time.monotonic() < deadline:
            failed = [p for p in procs if p.poll() not in (None, 0)]
            if failed:
                print(f'demo: {failed[0].args[0]} exited with {failed[0].returncode}',
                      file=sys.stderr)
                status = 1
                break
            time.sleep(0.1)
    except KeyboardInterrupt:
        pass
    finally:
        # Ctrl-C reaches the children too; a second one must not interrupt the waiting below.
        ignore_further_interrupts(sigterm=True)
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
    return status


if __name__ == '__main__':
    sys.exit(main())
