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
Ctrl-C for every executable: the first SIGINT (or SIGTERM) stops, the ones after it do nothing.

A terminal's Ctrl-C reaches every process of its group, and ``ros2 launch`` then sends its own
SIGINT: an executable gets two in quick succession. The second must neither cut the clean-up
short nor land while the first one's KeyboardInterrupt is still unwinding (a long start-up:
kernels compiling in a fresh workspace), which ends a process with a traceback from some
destructor. No rclpy here: the command-line tools use it too.
"""

import signal


def ignore_further_interrupts(sigterm=False):
    """Ignore SIGINT (and SIGTERM if asked) from here on: the process is shutting down."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sigterm:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _stop(signum, frame):
    """Turn the first signal into KeyboardInterrupt and ignore every later one at once."""
    ignore_further_interrupts(sigterm=signum == signal.SIGTERM or _stop.sigterm)
    raise KeyboardInterrupt


_stop.sigterm = False


def handle_interrupts(sigterm=False):
    """
    Make the first SIGINT (and, with ``sigterm``, SIGTERM) raise KeyboardInterrupt, once.

    A ROS executable calls it before ``rclpy.init``, whose signal handler then hands SIGINT on
    to this one (rclpy itself turns SIGTERM into a shutdown); a process without rclpy asks for
    SIGTERM too.
    """
    _stop.sigterm = sigterm
    signal.signal(signal.SIGINT, _stop)
    if sigterm:
        signal.signal(signal.SIGTERM, _stop)
