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
import os
import sys
import tempfile

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from .settings import normalize_arguments
from ..errors import DenocError, InputError
from ..signals import handle_interrupts, ignore_further_interrupts


def init_ros(args=None):
    """
    Run ``rclpy.init`` on the command line (``sys.argv`` if None), its parameters normalized.

    Lists mixing integers and doubles are made doubles (see
    :func:`denoc_ros.ros.settings.normalize_arguments`). Arguments rcl still refuses (``-p x:=``)
    raise InputError with rcl's reason in one line; rcl's own log of the failure is dropped.
    """
    args, copies = normalize_arguments(sys.argv if args is None else list(args))
    saved = os.dup(2)
    with tempfile.TemporaryFile() as captured:
        os.dup2(captured.fileno(), 2)  # rcl logs a failure to parse on fd 2 before raising
        try:
            rclpy.init(args=args)
            error = None
        except Exception as err:  # noqa: B902 - rclpy raises RCLError, a bare RuntimeError
            error = err
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            for path in copies:
                os.remove(path)
        if error is None:
            captured.seek(0)
            sys.stderr.buffer.write(captured.read())
            sys.stderr.flush()
            return
    reason = str(error).splitlines()[0] if str(error) else type(error).__name__
    reason = reason.replace('failed to initialize rcl: ', '').split(', at /')[0]
    raise InputError(f'bad command line: {reason}')


def startup_failed(name, err):
    """
    Print a start-up error as one line and end the process at once with status 1.

    Nothing was started that needs a clean end, and tearing down a node whose construction
    failed part-way (its parameters declared, a check then raising) beside the executor and the
    context crashed with a segmentation fault in about one start in a hundred (Kilted, rclpy
    9.1.2): so no teardown at all.
    """
    print(f'{name}: {err}', file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1)


def spin_node(factory, name, args=None, executor_type=SingleThreadedExecutor):
    """
    Run the node made by ``factory()`` until Ctrl-C or shutdown; return the exit status.

    A configuration error (:class:`DenocError`, e.g. an unreadable URDF) is printed as one line
    and gives exit status 1, without a stack trace. ``executor_type()`` spins the node (a
    MultiThreadedExecutor for a node whose long services must not hold up its topics).
    """
    handle_interrupts()
    try:
        init_ros(args)
    except DenocError as err:
        print(f'{name}: {err}', file=sys.stderr)
        return 1
    node = executor = None
    try:
        # The executor before the node: a signal that lands while an executor is being built
        # leaves a half-made object whose destructor prints a traceback at exit.
        executor = executor_type()
        node = factory()
        # Everything built so far (modules, compiled kernels, the model) lives as long as the
        # process: move it out of the collector's sight, so that a full collection during
        # spinning does not stall a callback for milliseconds.
        gc.collect()
        gc.freeze()
        executor.add_node(node)
        executor.spin()
    except DenocError as err:
        if node is None:  # the node's construction failed: a start-up error
            startup_failed(name, err)
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
