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
``denoc_excitation``: a periodic excitation trajectory for identification, within the limits.

::

    denoc_excitation --urdf ROBOT.urdf [--base-link L --tip-link L] [--duration 20]
                     [--harmonics 5] [--friction none|viscous|coulomb|viscous+coulomb]
                     [--armature] [--offset] [--start zero|free|Q1,Q2,...] [--safety 0.8]
                     [--rate 100] [--seed 0] [--starts 1] [--payload-link LINK]
                     --output traj.yaml [--csv traj.csv]

Designs a finite Fourier series trajectory (Swevers et al. 1997) of period ``--duration``
that minimises the condition number of the base regressor within the URDF's position,
velocity and effort limits times ``--safety`` (:mod:`denoc_ros.identification.excitation`),
and writes one period, ``--rate`` samples per second, end point included (the last point
equals the first), as a trajectory_msgs/JointTrajectory YAML (the form ``ros2 topic pub`` and
``ct_controller``'s ``trajectory_file`` read; play it with ``loop: true`` for several periods)
and as CSV. The trajectory starts and ends at rest, at ``--start``: ``zero`` (default), the
URDF's zero configuration, each joint moved into its limits where zero is outside them;
``free``: where the optimum puts it; or positions in joint order. The arm must be brought
there before the trajectory is played.

``--payload-link LINK`` designs for payload estimation instead (``denoc_identify --payload``,
the node's ``~/estimate_payload``): the condition number of the ten regressor columns of the
body carrying LINK, in its frame, with only the three joints nearest it moving (the wrist),
the others held at ``--start``. A period of 10 to 20 s suffices (``--duration 12``).

Exit status 0 on success; bad input: one line on stderr and status 1 (2 for a usage error).
"""

import math
import pathlib
import sys

import numpy as np

from ._cli import add_model_arguments, model_of, Parser, StatusLine, tool_main
from ..errors import InputError
from ..identification.excitation import (design_excitation, excitation_limits,
                                         write_trajectory_csv, write_trajectory_yaml)

PROG = 'denoc_excitation'


class Progress:
    """Progress on stderr: one line redrawn in place on a terminal, else every tenth iteration."""

    def __init__(self, stream=None, every=10):
        self.line, self.every = StatusLine(stream), every

    def __call__(self, iteration, condition):
        """Show the iteration and the best condition number so far."""
        self.line.show(f'{PROG}: iteration {iteration:4d}, condition number {condition:10.4g}',
                       iteration if iteration % self.every == 0 else None)

    def done(self):
        """End a line redrawn in place."""
        self.line.done()


def _parser():
    parser = Parser(
        prog=PROG, description='Design a periodic excitation trajectory (finite Fourier '
        "series) that minimises the base regressor's condition number within the URDF's "
        'limits, and write it as a JointTrajectory YAML and a CSV.')
    add_model_arguments(parser)
    parser.add_argument('--duration', type=float, default=20.0,
                        help='period of the trajectory [s] (default 20)')
    parser.add_argument('--harmonics', type=int, default=5,
                        help='harmonics of the Fourier series, at least 2 (default 5)')
    parser.add_argument('--start', default='zero', metavar='zero|free|Q1,Q2,...',
                        help='where the trajectory starts at rest (default: zero)')
    parser.add_argument('--safety', type=float, default=0.8,
                        help='fraction of each URDF limit to use (default 0.8)')
    parser.add_argument('--rate', type=float, default=100.0,
                        help='sample rate of the written trajectory [Hz] (default 100)')
    parser.add_argument('--samples', type=int, default=None,
                        help='design grid points per period (default 30 per harmonic, >= 100)')
    parser.add_argument('--seed', type=int, default=0, help='seed of the random start')
    parser.add_argument('--starts', type=int, default=1,
                        help='random starts, the best result is kept (default 1)')
    parser.add_argument('--max-iterations', type=int, default=100,
                        help='optimiser iterations per start (default 100)')
    parser.add_argument('--payload-link', default=None, metavar='LINK',
                        help='design for estimating the payload on LINK: its ten parameters, '
                        'moving the three joints nearest it (the wrist) only')
    parser.add_argument('--output', required=True, metavar='traj.yaml',
                        help='the JointTrajectory YAML to write')
    parser.add_argument('--csv', default=None, metavar='traj.csv',
                        help='the CSV to write (default: --output with .csv)')
    return parser


def _start(text, model, safety):
    """Return ``(start or None, note)`` from ``--start``."""
    word = text.strip().lower()
    if word == 'free':
        return None, ''
    limits = excitation_limits(model, safety)
    if word == 'zero':
        zero = np.zeros(model.dof)
        start = np.clip(zero, limits.lower, limits.upper)
        moved = [f'{j} to {s:.4g}' for j, s in zip(model.joint_names, start) if s != 0.0]
        note = (' (zero is outside the limits of ' + ', '.join(moved) + ')') if moved else ''
        return start, note
    try:
        start = np.array([float(v) for v in text.split(',')])
    except ValueError:
        raise InputError(f'--start {text!r}: expected zero, free or {model.dof} comma-separated '
                         'positions') from None
    if start.size != model.dof:
        raise InputError(f'--start has {start.size} positions; the chain has {model.dof} joints '
                         f'({", ".join(model.joint_names)})')
    return start, ''


def _fraction(value):
    return '    -' if not math.isfinite(value) else f'{value:5.2f}'


def run(args, stdout=None, stderr=None):
    """Design and write the trajectory as ``args`` say; return the ExcitationResult."""
    stdout = stdout if stdout is not None else sys.stdout
    for name in ('duration', 'rate'):
        value = getattr(args, name)
        if not (math.isfinite(value) and value > 0.0):
            raise InputError(f'--{name} must be positive, got {value:g}')
    output = pathlib.Path(args.output)
    csv = pathlib.Path(args.csv) if args.csv else output.with_suffix('.csv')
    if csv.resolve() == output.resolve():
        raise InputError(f'--csv and --output are the same file {output}')
    _, model, terms = model_of(args)
    start, note = _start(args.start, model, args.safety)
    progress = Progress(stderr)
    try:
        result = design_excitation(model, duration=args.duration, harmonics=args.harmonics,
                                   samples=args.samples, joint_terms=terms, seed=args.seed,
                                   max_iterations=args.max_iterations, progress=progress,
                                   safety=args.safety, start=start, starts=args.starts,
                                   payload_link=args.payload_link)
    finally:
        progress.done()
    t, q, qd, qdd = result.sampled(args.rate)
    comment = (f'{PROG}: {args.urdf}, period {result.duration:g} s, {result.harmonics} '
               f'harmonics, condition number {result.condition:.4g} (columns scaled)\n'
               'Starts and ends at rest at the first point: bring the arm there first; '
               'loop it for several periods.')
    write_trajectory_yaml(output, model.joint_names, t, q, qd, qdd, comment=comment)
    write_trajectory_csv(csv, model.joint_names, t, q, qd, qdd)

    def say(line):
        stdout.write(f'{PROG}: {line}\n')
    if args.payload_link is None:
        say(f'{model.dof} joints, period {result.duration:g} s, {result.harmonics} harmonics, '
            f'{result.base.rank} base parameters (friction {args.friction}'
            + (', armature' if args.armature else '') + (', offset' if args.offset else '')
            + ')')
        what = 'base regressor'
    else:
        moving = np.ptp(q, axis=0) > 1e-9
        say(f'payload on {args.payload_link}: period {result.duration:g} s, '
            f'{result.harmonics} harmonics, the ten parameters of its body; moving '
            + ', '.join(j for j, m in zip(model.joint_names, moving) if m))
        what = "the payload's ten columns"
    say(f'condition number {result.condition:.4g} ({what}, columns scaled to unit '
        f'norm; the random start: {result.initial_condition:.4g}); unscaled '
        f'{result.condition_unscaled:.4g} (the random start: '
        f'{result.initial_condition_unscaled:.4g})')
    say(f'fraction of each URDF limit used (safety factor {args.safety:g}; - : no limit):')
    width = max(len(j) for j in model.joint_names)
    stdout.write(f'  {"joint":<{width}}  position  velocity  effort\n')
    for j, name in enumerate(model.joint_names):
        stdout.write(f'  {name:<{width}}     {_fraction(result.usage["position"][j])}     '
                     f'{_fraction(result.usage["velocity"][j])}   '
                     f'{_fraction(result.usage["effort"][j])}\n')
    positions = ', '.join(f'{v + 0.0:.4g}' for v in np.round(result.start, 9))
    say(f'starts and ends at rest at [{positions}]{note}: bring the arm there first')
    say(f'wrote {output} and {csv}: {t.size} points over one period at {args.rate:g} Hz, in '
        f'{result.elapsed:.3g} s ({result.iterations} iterations)')
    return result


def main(argv=None):
    """Run the command line; return the exit status."""
    return tool_main(PROG, _parser(), run, argv)


if __name__ == '__main__':
    sys.exit(main())
