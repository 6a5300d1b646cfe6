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

import sys

from ..errors import DenocError


def run_tool(prog, run, args):
    """
    Return ``(status, result)`` of ``run(args)``.

    A library error or an OSError is printed as ``<prog>: error: <one line>`` with status 1;
    Ctrl-C prints ``<prog>: interrupted`` with status 130 (the shell's convention: nothing was
    written that a later step could mistake for a result).
    """
    try:
        return 0, run(args)
    except (DenocError, OSError) as err:
        message = ' '.join(str(err).split())
        sys.stderr.write(f'{prog}: error: {message}\n')
        return 1, None
    except KeyboardInterrupt:
        sys.stderr.write(f'{prog}: interrupted\n')
        return 130, None
