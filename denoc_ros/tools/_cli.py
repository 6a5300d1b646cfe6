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

"""What the command-line tools share: main, model arguments, one-line errors, progress, Ctrl-C."""

import argparse
import sys
import time
import warnings

from ..description import read_description
from ..errors import DenocError
from ..identification.parameters import chosen_terms, FRICTION_CHOICES
from ..signals import handle_interrupts
from ..urdf import load_urdf


class Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``<prog>: error: ...``), status 2."""

    def error(self, message):
        """Print one line and exit with status 2."""
        self.exit(2, f'{self.prog}: error: {message} (see --help)\n')


def add_robot_arguments(parser, chain='chain'):
    """Add the arguments that choose the model: ``--urdf``, ``--base-link``, ``--tip-link``."""
    parser.add_argument('--urdf', required=True,
                        help='robot description: URDF or xacro file, or a bundled robot name')
    parser.add_argument('--base-link', default=None, help=f'first link of the {chain}')
    parser.add_argument('--tip-link', default=None, help=f'last link of the {chain}')


def robot_of(args):
    """Return ``(URDF text, model)`` of the robot arguments."""
    text = read_description(args.urdf)
    return text, load_urdf(text, base_link=args.base_link, tip_link=args.tip_link)


def add_model_arguments(parser, chain='chain'):
    """Add the robot arguments and those of the joint terms to identify (``--friction``, ...)."""
    add_robot_arguments(parser, chain)
    parser.add_argument('--friction', choices=sorted(FRICTION_CHOICES),
                        default='viscous+coulomb', help='joint friction to identify')
    parser.add_argument('--armature', action='store_true',
                        help="also identify each joint's reflected rotor inertia")
    parser.add_argument('--offset', action='store_true',
                        help='also identify a constant effort offset per joint')


def model_of(args):
    """Return ``(URDF text, model, joint terms)`` of the model arguments."""
    text, model = robot_of(args)
    return text, model, chosen_terms(args.friction, args.offset, args.armature)


class StatusLine:
    """A progress line on stderr: redrawn in place on a terminal, else printed when it moves on."""

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.key = None
        self.open = False

    def show(self, text, key):
        """Show ``text``; off a terminal only when ``key`` differs from the last (None: never)."""
        if self.tty:
            self.stream.write(f'\r{text}')
            self.open = True
        elif key is not None and key != self.key:
            self.stream.write(text + '\n')
        self.key = key
        self.stream.flush()

    def done(self):
        """End a line redrawn in place."""
        if self.open:
            self.stream.write('\n')
            self.stream.flush()
            self.open = False


def one_line_warnings(prog, stream=None):
    """
    Return a ``warnings.showwarning`` that prints ``<prog>: warning: <message>`` on one line.

    No file name, line number or Python source line: a user of the tool reads the message only.
    """
    def show(message, category, filename, lineno, file=None, line=None):
        text = ' '.join(str(message).split())
        (stream if stream is not None else sys.stderr).write(f'{prog}: warning: {text}\n')
    return show


def run_tool(prog, run, args):
    """
    Return ``(status, result)`` of ``run(args)``.

    Warnings are printed as one line each (:func:`one_line_warnings`).
    A library error or an OSError is printed as ``<prog>: error: <one line>`` with status 1.
    Ctrl-C (once or twice, as a terminal and ``ros2 launch`` send it) or SIGTERM stops the tool
    quietly with status 0, as every executable of the package does, after the line
    ``<prog>: interrupted, no complete result`` (the output files are written last).
    """
    handle_interrupts(sigterm=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter('default')
            warnings.showwarning = one_line_warnings(prog)
            return 0, run(args)
    except (DenocError, OSError) as err:
        message = ' '.join(str(err).split())
        sys.stderr.write(f'{prog}: error: {message}\n')
        return 1, None
    except KeyboardInterrupt:
        sys.stderr.write(f'{prog}: interrupted, no complete result\n')
        return 0, None


def tool_main(prog, parser, run, argv=None, done=None):
    """
    Parse ``argv`` (None: the command line) with ``parser``, run the tool; return the exit status.

    ``run(args)`` does the work (through :func:`run_tool`: one-line errors, Ctrl-C);
    ``done(args, result, seconds)``, if given, prints the summary of a run that completed; a
    non-zero integer it returns is the exit status (a result written with a caveat).
    """
    args = parser.parse_args(argv)
    start = time.perf_counter()
    status, result = run_tool(prog, run, args)
    if result is not None and done is not None:
        status = done(args, result, time.perf_counter() - start) or status
    return status
