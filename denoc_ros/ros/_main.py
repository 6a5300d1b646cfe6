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

"""The ``main()`` shared by every executable: init, build the node, spin, shut down cleanly."""

import gc
import sys

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from ..errors import DenocError
from ..signals import handle_interrupts, ignore_further_interrupts


def spin_node(factory, name, args=None):
    """
    Run the node made by ``factory()`` until Ctrl-C or shutdown; return the exit status.

    A configuration error (:class:`DenocError`, e.g. an unreadable URDF) is printed as one line
    and gives exit status 1, without a stack trace.
    """
    handle_interrupts()
    rclpy.init(args=args)
    node = executor = None
    try:
        # The executor before the node: a signal that lands while an executor is being built
        # leaves a half-made object whose destructor prints a traceback at exit.
        executor = SingleThreadedExecutor()
        node = factory()
        # Everything built so far (modules, compiled kernels, the model) lives as long as the
        # process: move it out of the collector's sight, so that a full collection during
        # spinning does not stall a callback for milliseconds.
        gc.collect()
        gc.freeze()
        executor.add_node(node)
        executor.spin()
    except DenocError as err:
        print(f'{name}: {err}', file=sys.stderr)
        return 1
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:  # noqa: B902 - a callback cut short by a signal's shutdown is no error
        if rclpy.ok():
            raise
    finally:
        ignore_further_interrupts()
        try:
            if executor is not None:
                executor.shutdown()
            if node is not None:
                node.destroy_node()
            rclpy.try_shutdown()
        except (KeyboardInterrupt, ExternalShutdownException):
            pass
    return 0
