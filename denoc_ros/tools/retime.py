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
``denoc_retime``: retime a joint path time-optimally under the arm's effort and velocity limits.

::

    denoc_retime --urdf ARM.urdf --input traj.yaml --output retimed.yaml
                 [--base-link L --tip-link L] [--payload LINK,MASS,CX,CY,CZ]
                 [--effort-scaling S] [--velocity-scaling S] [--acceleration-limit A]
                 [--sample-period 0.01] [--friction] [--plot]

Reads a trajectory_msgs/JointTrajectory YAML (the form ``denoc_excitation`` writes and
``ros2 topic pub`` accepts: ``joint_names``, ``points`` with ``positions``; times and
derivatives are ignored), takes its positions as waypoints of the path
(:mod:`denoc_ros.trajectories.path`), retimes it with :func:`denoc_ros.retime` (TOPP-RA,
Pham & Pham 2018) under the URDF's ``<limit effort>`` and ``<limit velocity>`` times the
scalings, with a point-mass payload (``--payload``: link, kg, centre of mass in the link frame
in m) and the URDF's ``<dynamics damping friction>`` (``--friction``), and writes the retimed
trajectory in the same form (positions, velocities, accelerations and the predicted effort of
every point). Prints the duration and the worst effort ratio of the output sampled as a 1 kHz
controller samples it; ``--plot`` also writes ``<output>.png``, each joint's effort against its
limits.

Exit status 0 on success; bad input: one line on stderr and status 1 (2 for a usage error).
"""

import math
import pathlib
import sys

import numpy as np
import yaml

from ._cli import add_robot_arguments, Parser, robot_of, tool_main
from ..errors import InputError
from ..identification.trajectory_files import write_trajectory_yaml
from ..model import joint_order
from ..payload import attach_payload
from ..trajectories.retime import DEFAULT_SAMPLE_PERIOD, retime

PROG = 'denoc_retime'


def _parser():
    parser = Parser(prog=PROG, description='Retime a joint path time-optimally under the '
                    "arm's effort, velocity and acceleration limits (TOPP-RA).")
    add_robot_arguments(parser)
    parser.add_argument('--input', required=True, help='JointTrajectory YAML: the waypoints')
    parser.add_argument('--output', required=True, help='retimed JointTrajectory YAML')
    parser.add_argument('--payload', default=None, metavar='LINK,MASS,CX,CY,CZ',
                        help='a point-mass payload on LINK [kg, m in the link frame]')
    parser.add_argument('--effort-scaling', type=float, default=1.0,
                        help='factor on the URDF effort limits (default 1)')
    parser.add_argument('--velocity-scaling', type=float, default=1.0,
                        help='factor on the URDF velocity limits (default 1)')
    parser.add_argument('--acceleration-limit', type=float, default=None,
                        help='one acceleration limit for every joint (default none)')
    parser.add_argument('--sample-period', type=float, default=DEFAULT_SAMPLE_PERIOD,
                        help='spacing of the output points [s] (default 0.01)')
    parser.add_argument('--friction', action='store_true',
                        help="count the URDF's joint friction (<dynamics damping friction>)")
    parser.add_argument('--plot', action='store_true',
                        help='also write <output>.png: efforts against their limits')
    return parser


def _payload(model, text):
    parts = text.split(',')
    if len(parts) != 5:
        raise InputError(f'--payload {text!r}: expected LINK,MASS,CX,CY,CZ')
    try:
        mass, com = float(parts[1]), [float(v) for v in parts[2:]]
    except ValueError:
        raise InputError(f'--payload {text!r}: MASS,CX,CY,CZ must be numbers') from None
    return attach_payload(model, parts[0], mass, com)


def read_waypoints(path, model):
    """Return the positions ``(W, n)`` of a JointTrajectory YAML, in model joint order."""
    try:
        data = yaml.safe_load(pathlib.Path(path).read_text())
    except yaml.YAMLError as err:
        raise InputError(f'{path}: not YAML: {str(err).splitlines()[0]}') from None
    if not isinstance(data, dict) or not isinstance(data.get('joint_names'), list) \
            or not isinstance(data.get('points'), list):
        raise InputError(f'{path}: expected a JointTrajectory (joint_names, points)')
    names = [str(n) for n in data['joint_names']]
    try:
        index = joint_order(model.joint_names, names, 'the trajectory', others=False)
    except InputError as err:
        raise InputError(f'{path}: {err}') from None
    rows = []
    for k, point in enumerate(data['points']):
        positions = point.get('positions') if isinstance(point, dict) else None
        if not isinstance(positions, list) or len(positions) != len(names):
            raise InputError(f'{path}: point {k} needs {len(names)} positions')
        try:
            rows.append([float(positions[i]) for i in index])
        except (TypeError, ValueError):
            raise InputError(f'{path}: point {k}: positions must be numbers') from None
    if len(rows) < 2:
        raise InputError(f'{path}: a path needs at least two points')
    return np.array(rows)


def write_retimed_yaml(path, result, comment):
    """Write the retimed trajectory as a JointTrajectory YAML, efforts included."""
    write_trajectory_yaml(path, result.joint_names, result.t, result.q, result.qd, result.qdd,
                          comment=comment, effort=result.effort)


def plot_efforts(path, result, limits):
    """Write a PNG of each joint's effort (at the points) against its limits."""
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    n = len(result.joint_names)
    cols = 2 if n > 3 else 1
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6 * cols, 2.2 * rows), sharex=True,
                             squeeze=False)
    for j, name in enumerate(result.joint_names):
        ax = axes[j // cols][j % cols]
        ax.plot(result.t, result.effort[:, j], lw=1.2, label='effort')
        if np.isfinite(limits[j]):
            ax.axhline(limits[j], color='r', lw=0.8, ls='--', label='limit')
            ax.axhline(-limits[j], color='r', lw=0.8, ls='--')
        ax.set_title(name, fontsize=9)
        ax.set_ylabel('N m or N', fontsize=8)
        ax.grid(alpha=0.3)
    for j in range(n, rows * cols):
        axes[j // cols][j % cols].axis('off')
    for ax in axes[-1]:
        ax.set_xlabel('time [s]')
    axes[0][0].legend(fontsize=8, loc='upper right')
    fig.suptitle(f'retimed: {result.duration:.3f} s, worst effort ratio '
                 f'{result.max_effort_ratio:.3f} (1 kHz dense check)', fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def run(args):
    """Retime ``args.input`` and write ``args.output`` (and the plot); return the result."""
    for name in ('effort_scaling', 'velocity_scaling', 'sample_period'):
        value = getattr(args, name)
        if not (math.isfinite(value) and value > 0.0):
            raise InputError(f'--{name.replace("_", "-")} is {value}: it must be positive')
    _, model = robot_of(args)
    if args.payload:
        model = _payload(model, args.payload)
    waypoints = read_waypoints(args.input, model)
    limits = model.effort_limit * args.effort_scaling
    result = retime(model, waypoints, velocity_limits=model.velocity_limit
                    * args.velocity_scaling, acceleration_limits=args.acceleration_limit,
                    effort_limits=limits, friction=args.friction,
                    sample_period=args.sample_period)
    worst = int(np.argmax(result.check.max_effort_ratio))
    summary = (f'duration {result.duration:.4f} s, worst effort ratio '
               f'{result.max_effort_ratio:.4f} ({result.joint_names[worst]})')
    write_retimed_yaml(args.output, result, f'{PROG}: {summary}\nfrom {args.input}')
    print(f'{PROG}: {summary}; wrote {args.output}')
    if args.plot:
        png = pathlib.Path(args.output).with_suffix('.png')
        plot_efforts(png, result, limits)
        print(f'{PROG}: plot {png}')
    return result


def main(argv=None):
    """Run the command line (see the module docstring); return the exit status."""
    return tool_main(PROG, _parser(), run, argv)


if __name__ == '__main__':
    sys.exit(main())
