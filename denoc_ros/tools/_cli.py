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

"""What the command-line tools share: bad input as one line on stderr, Ctrl-C without a trace."""

import signal
import sys

from ..errors import DenocError


def _stop(signum, frame):
    """Turn the first SIGINT or SIGTERM into KeyboardInterrupt; ignore the ones after it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def run_tool(prog, run, args):
    """
    Return ``(status, result)`` of ``run(args)``.

    A library error or an OSError is printed as ``<prog>: error: <one line>`` with status 1.
    Ctrl-C (once or twice, as a terminal and ``ros2 launch`` send it) or SIGTERM stops the tool
    quietly with status 0, as every executable of the package does, after the line
    ``<prog>: interrupted, no complete result`` (the output files are written last).
    """
    signal.signal(signal.SIGINT, _stop)
    signal.signal(signal.SIGTERM, _stop)
    try:
        return 0, run(args)
    except (DenocError, OSError) as err:
        message = ' '.join(str(err).split())
        sys.stderr.write(f'{prog}: error: {message}\n')
        return 1, None
    except KeyboardInterrupt:
        sys.stderr.write(f'{prog}: interrupted, no complete result\n')
        return 0, None
