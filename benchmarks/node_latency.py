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
Round-trip latency of the dynamics node against a bare rclpy relay, both driven at 1 kHz.

Run from the repository root::

    .venv/bin/python benchmarks/node_latency.py                  # 30 s per target at 1 kHz
    .venv/bin/python benchmarks/node_latency.py --duration 2 --rate 200   # smoke test
    .venv/bin/python benchmarks/node_latency.py --outputs all --with-effort  # every output
    .venv/bin/python benchmarks/node_latency.py --outputs state --with-effort  # one message

This process (the driver) starts two children: the dynamics node (``<venv>/bin/denoc_dynamics_node
--ros-args -p urdf_path:=panda``) and ``benchmarks/relay_node.py`` in namespace ``/relay``. It
publishes 7-joint ``sensor_msgs/JointState`` messages (reliable, depth 10; the subscribers are best
effort, depth 100) to ``/joint_states`` for the node and ``/relay/joint_states`` for the relay, and
receives ``/denoc_dynamics/feedforward_torques`` (``--outputs state``: ``~/dynamics_state``) and
``/relay/joint_states_echo``, whose headers are copies of the input's. Each message's send time
(``time.time_ns()``, taken just before ``publish``) is its ``header.stamp`` and its key; the round
trip is the driver's receive time minus that stamp, on the same clock:

* ``callback``: ``time.time_ns()`` when the driver's subscription callback runs (what a
  controller in the driver's place would see);
* ``rmw``: the receive timestamp the middleware puts in the message info (leaves out the
  driver's own executor delay).

The two targets are driven one after the other, the same way, so that they do not compete for
the CPUs, in ``--rounds`` R alternating rounds: round k drives the relay for duration/R seconds,
then the node for duration/R seconds, so that a slow period of a shared machine falls on both
alike. Each target gets ``--duration`` seconds in all and its results are pooled over the
rounds; after each round the driver waits for the stragglers (until all came back, or 1 s
without news). Before the first round each target gets ``--warmup`` messages answered one by one
(header ``frame_id`` ``warmup``; not counted). Messages are sent from a thread on an absolute
1/rate schedule (an rclpy timer at 1 kHz does not keep its rate); the achieved rate is measured
and reported. Reported per target: sent, received, lost, achieved send rate, p50 / p99 / max
round trip, and its CPU time per message: the user + system time of its process
(``/proc/PID/stat``, read before and after each of its rounds) divided by the messages it
answered; then the node minus relay differences against the targets of the issue (no message
lost; p50 within 0.3 ms and p99 within 1.5 ms of the relay's; CPU time per message at most
0.3 ms with every output, 0.1 ms with ``~/dynamics_state`` only) -- reported, not asserted,
beside the CPU model.

The node skips the outputs nobody subscribes to, so by default it only produces
``feedforward_torques``. ``--outputs all`` (or ``--subscribe-all``) also subscribes to
``gravity_torques``, ``coriolis_torques``, ``inertia_torques``, ``effort_command``,
``dynamics_state`` and, with ``--with-effort``, ``prediction``, ``external_torques``,
``contact`` and ``external_wrench``: these are counted (raw, nothing deserialized) by
``--counter-processes`` N processes of their own (``benchmarks/counter_node.py``, the outputs
split between them, 2 by default), so that the driver is not what falls behind; the report
says how many messages each delivered during the node's rounds. Their discovery is awaited, the
node's warm-up lasts until each has delivered a message, and their counts start once they have
been quiet for 0.3 s. ``--outputs state`` subscribes to ``~/dynamics_state`` alone and times the
round trip on it. ``--external-torques`` sends efforts and subscribes to ``~/external_torques``;
``--observer-gain K_O`` starts the node with ``-p observer_gain:=K_O`` (0 turns the observer
off, to compare). ``--drain-limit N`` starts the node with ``-p drain_limit:=N`` (joint states
that queued up which one callback answers after its own, when the executor serves them; default:
the node's, 10). ``--relay-thread``: the relay serves its joint states as the node does (a
thread of its own with its own wait set, outside the executor, the messages serialized): what
rclpy and DDS cost per message that way, with no work in between. ``--relay-fanout N`` (with
``--relay-thread``): the relay also republishes each message on N more topics, counted like the
node's extra outputs (during the relay's rounds): the floor of answering each joint state with
N + 1 messages (``--outputs all --with-effort`` has the node publish ten).

Every process runs with ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, a random ``ROS_DOMAIN_ID``
and ``ROS_HOME`` in a temporary directory (which also holds the children's logs and, unless
``FASTDDS_DEFAULT_PROFILES_FILE`` is set, a Fast DDS profile announcing every 0.5 s so that
discovery takes under a second). Discovery is awaited through the publishers' subscription
counts, never a fixed sleep. Every wait is bounded; the children are stopped (SIGINT, then
SIGTERM, then SIGKILL) on every exit path. Exit status 0 when both targets answered, 1
otherwise.
"""

import argparse
import contextlib
import json
import math
import os
import pathlib
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent

TARGET_P50_MS = 0.3
TARGET_P99_MS = 1.5

FASTDDS_PROFILE = """<?xml version="1.0" encoding="UTF-8" ?>
<dds xmlns="http://www.eprosima.com">
  <profiles>
    <participant profile_name="denoc_latency" is_default_profile="true">
      <rtps>
        <builtin>
          <discovery_config>
            <leaseAnnouncement><sec>0</sec><nanosec>500000000</nanosec></leaseAnnouncement>
          </discovery_config>
        </builtin>
      </rtps>
    </participant>
  </profiles>
</dds>
"""


def ros_environment(prefix='denoc_latency_'):
    """Force the ROS sandbox into os.environ (before rclpy is imported); return ROS_HOME."""
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ['ROS_DOMAIN_ID'] = str(random.SystemRandom().randint(1, 100))
    home = tempfile.mkdtemp(prefix=prefix)
    os.environ['ROS_HOME'] = home
    os.environ['ROS_LOG_DIR'] = os.path.join(home, 'log')
    if not os.environ.get('FASTDDS_DEFAULT_PROFILES_FILE'):
        profile = os.path.join(home, 'fastdds_profile.xml')
        with open(profile, 'w') as f:
            f.write(FASTDDS_PROFILE)
        os.environ['FASTDDS_DEFAULT_PROFILES_FILE'] = profile
    return home


class Child:
    """A child process with its output in a log file."""

    def __init__(self, name, command, home):
        self.name = name
        self.log_path = os.path.join(home, f'{name}.log')
        self._log = open(self.log_path, 'w')
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env=dict(os.environ),
                                        cwd=str(REPO))

    def alive(self):
        return self.process.poll() is None

    def log_tail(self, lines=20):
        try:
            with open(self.log_path) as f:
                return ''.join(f.readlines()[-lines:])
        except OSError:
            return ''

    def stop(self):
        """Stop the child: SIGINT, then SIGTERM, then SIGKILL, each with a bounded wait."""
        for sig, wait in ((signal.SIGINT, 5.0), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
            if self.process.poll() is not None:
                break
            try:
                self.process.send_signal(sig)
                self.process.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
            except OSError:
                break
        self._log.close()


class Target:
    """One thing under test: where the driver publishes and where the echo comes back."""

    def __init__(self, label, in_topic, out_topic):
        self.label, self.in_topic, self.out_topic = label, in_topic, out_topic
        self.publisher = self.subscription = None
        self.received = {}         # sequence id -> (callback rtt ns, rmw rtt ns or None)
        self.warmup_seen = set()
        self.duplicates = 0
        self.sent = 0              # over all rounds, hence also the next sequence number
        self.intervals = 0         # send intervals timed: each round's messages but its first
        self.send_time = 0.0       # first to last publish of each round [s], summed
        self.outputs = []          # the extra outputs counted (--outputs all)
        self.cpu_ticks = 0         # CPU time of the target's process in its rounds [ticks]
        self.answered = 0          # messages received back in its rounds

    def outputs_counted(self):
        """Return True once every extra output has delivered a message."""
        return all(o.count for o in self.outputs)

    def on_message(self, raw, info, now):
        """Record the round trip of one serialized echo (a message beginning with a Header)."""
        endian = '<' if raw[1] == 1 else '>'  # CDR: 0x0001 little endian, 0x0000 big
        sec, nanosec, length = struct.unpack_from(endian + 'iII', raw, 4)
        stamp = sec * 1_000_000_000 + nanosec
        if raw[16:16 + length - 1] == b'warmup':
            self.warmup_seen.add(stamp)
            return
        if stamp in self.received:  # the send stamp is the message's key (time_ns: unique)
            self.duplicates += 1
            return
        rmw = info.get('received_timestamp', 0) if isinstance(info, dict) else 0
        self.received[stamp] = (now - stamp, rmw - stamp if rmw else None)


class Receiver:
    """
    The targets' echo subscriptions, served from one rclpy wait set outside the executor.

    rclpy's executor costs about 0.2 ms of CPU per message it hands over (its wait set rebuilt,
    a task made, the message converted): the driver would take more of the two cores than the
    target it measures. Here each wake-up takes every queued echo, serialized, and reads its
    header in place.
    """

    def __init__(self, context, targets):
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
        self._context = context
        self._served = [(t, t.subscription.handle, t.subscription.msg_type) for t in targets]
        self._wait_set = _rclpy.WaitSet(len(targets), 0, 0, 0, 0, 0, context.handle)

    def spin_once(self, timeout_sec):
        """Wait up to ``timeout_sec`` for echoes; take and record every one queued."""
        wait_set = self._wait_set
        with contextlib.ExitStack() as handles:
            for _, handle, _ in self._served:
                handles.enter_context(handle)
            handles.enter_context(self._context.handle)
            wait_set.clear_entities()
            for _, handle, _ in self._served:
                wait_set.add_subscription(handle)
            wait_set.wait(int(timeout_sec * 1e9))
            ready = wait_set.get_ready_entities('subscription')
            for target, handle, msg_type in self._served:
                if handle.pointer not in ready:
                    continue
                while True:
                    taken = handle.take_message(msg_type, True)
                    if taken is None:
                        break
                    target.on_message(taken[0], taken[1], time.time_ns())


class CountedOutput:
    """An extra output of the node, counted by a counter process (``--outputs all``)."""

    def __init__(self, topic, type_name):
        self.topic, self.type_name = topic, type_name
        self.count = 0
        self.matched = False
        self.before = 0            # the count when the timed rounds began

    def delivered(self):
        """Return the messages received since the timed rounds began."""
        return self.count - self.before


class Counters:
    """The counter processes (``benchmarks/counter_node.py``) and their status files."""

    def __init__(self, outputs, processes, home):
        self.outputs = outputs
        self.children, self.files = [], []
        for k in range(processes):
            mine = outputs[k::processes]
            if not mine:
                continue
            status = str(pathlib.Path(home) / f'counter_{k}.json')
            self.files.append(status)
            self.children.append(Child(f'counter_{k}', [
                sys.executable, str(HERE / 'counter_node.py'), status]
                + [f'{o.topic}={o.type_name}' for o in mine], home))

    def poll(self):
        """Read every status file (a missing or partial one is skipped)."""
        by_topic = {o.topic: o for o in self.outputs}
        for status in self.files:
            try:
                with open(status) as f:
                    data = json.load(f)
            except (OSError, ValueError):
                continue
            for topic, value in data.items():
                by_topic[topic].count = value['count']
                by_topic[topic].matched = value['matched']


def cpu_ticks(pid):
    """Return the user + system CPU time of a process so far, in clock ticks (/proc/PID/stat)."""
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def joint_state(msg_type, names, frame_id, t):
    """Return a JointState at time t (smooth positions and velocities), stamped now."""
    msg = msg_type()
    msg.name = names
    n = len(names)
    msg.position = [0.5 * math.sin(0.7 * t + 0.3 * i) for i in range(n)]
    msg.velocity = [0.35 * math.cos(0.7 * t + 0.3 * i) for i in range(n)]
    msg.header.frame_id = frame_id
    stamp = time.time_ns()
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
    return msg


def paced(seqs, rate, deadline, stop):
    """
    Yield ``(seq, restarted)`` for each of ``seqs`` at its time on an absolute 1/rate schedule.

    Never bursts to catch up: a sender that fell more than a period behind restarts the schedule
    from now (``restarted`` is then True). Ends early at ``deadline`` (``time.perf_counter``) or
    once ``stop`` is set.
    """
    period = 1.0 / rate
    next_time = time.perf_counter()
    for seq in seqs:
        now = time.perf_counter()
        if now > deadline or stop.is_set():
            return
        restarted = False
        if next_time > now:
            time.sleep(next_time - now)
        elif now - next_time > period:
            next_time, restarted = now, True
        yield seq, restarted
        next_time += period


def sender(target, msg_type, names, count, rate, deadline, efforts, stop):
    """
    Publish one round of ``count`` messages on an absolute 1/rate schedule (never bursting).

    Sequence numbers continue from ``target.sent``; the round's send intervals and first to last
    publish time are added to the target's.
    """
    first = target.sent
    send_start, send_end = time.perf_counter(), None
    for seq, _ in paced(range(first, first + count), rate, deadline, stop):
        msg = joint_state(msg_type, names, '', seq / rate)
        if efforts:
            msg.effort = [0.0] * len(names)
        try:
            target.publisher.publish(msg)
        except Exception:  # noqa: B902 - rclpy shut down under us (interrupted): stop quietly
            break
        target.sent = seq + 1
        send_end = time.perf_counter()
    if send_end is not None:
        target.intervals += target.sent - first - 1
        target.send_time += send_end - send_start


def percentile_ms(values, q):
    return float(np.percentile(values, q)) / 1e6 if len(values) else float('nan')


def run(args):
    """Start the children, drive both targets and print the report; return the exit status."""
    import denoc_ros as dr     # the library half: never imports rclpy
    from denoc_ros.description import read_description
    try:
        names = list(dr.load_urdf(read_description(args.urdf)).joint_names)
    except dr.DenocError as err:
        print(f'node_latency: --urdf {args.urdf}: {err}', file=sys.stderr)
        return 1

    home = ros_environment()
    # only now: the environment above must be in place before rclpy is imported
    from diagnostic_msgs.msg import DiagnosticArray
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from denoc_ros_interfaces.msg import DynamicsState
    from denoc_ros.ros.joint_state_thread import NotInExecutor
    node_exe = pathlib.Path(sys.executable).parent / 'denoc_dynamics_node'
    if not node_exe.exists():
        found = shutil.which('denoc_dynamics_node')
        if found is None:
            print(f'denoc_dynamics_node is not installed next to {sys.executable}',
                  file=sys.stderr)
            shutil.rmtree(home, ignore_errors=True)
            return 1
        node_exe = pathlib.Path(found)
    print(f"ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, ROS_HOME={home} (children's logs; "
          + ('kept)' if args.keep_logs else 'removed at exit, --keep-logs keeps it)'), flush=True)

    children = []
    stop = threading.Event()
    threads = []
    context = rclpy.context.Context()
    try:
        children.append(Child('relay', [sys.executable, str(HERE / 'relay_node.py')]
                              + (['--thread'] if args.relay_thread else [])
                              + (['--fanout', str(args.relay_fanout)] if args.relay_fanout
                                 else [])
                              + ['--ros-args', '-r', '__ns:=/relay'], home))
        node_args = ['-p', f'urdf_path:={args.urdf}']
        if args.drain_limit is not None:
            node_args += ['-p', f'drain_limit:={args.drain_limit}']
        if args.observer_gain is not None:
            node_args += ['-p', f'observer_gain:={args.observer_gain}']
        children.append(Child('dynamics_node', [str(node_exe), '--ros-args'] + node_args, home))
        rclpy.init(context=context)
        node = rclpy.create_node('latency_driver', context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        echo = ('/denoc_dynamics/dynamics_state' if args.outputs == 'state'
                else '/denoc_dynamics/feedforward_torques')
        targets = [Target('relay', '/relay/joint_states', '/relay/joint_states_echo'),
                   Target('dynamics node', '/joint_states', echo)]
        echo_qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        for t in targets:
            t.publisher = node.create_publisher(JointState, t.in_topic, 10)
            t.subscription = node.create_subscription(
                DynamicsState if t.out_topic == echo and args.outputs == 'state' else JointState,
                t.out_topic, lambda _: None, echo_qos, raw=True,
                callback_group=NotInExecutor())  # served by the Receiver
        receiver = Receiver(context, targets)
        outputs = []
        if args.outputs == 'all':
            outputs = [CountedOutput(f'/denoc_dynamics/{term}_torques',
                                     'sensor_msgs/msg/JointState')
                       for term in ('gravity', 'coriolis', 'inertia')]
            outputs.append(CountedOutput('/denoc_dynamics/effort_command',
                                         'std_msgs/msg/Float64MultiArray'))
            outputs.append(CountedOutput('/denoc_dynamics/dynamics_state',
                                         'denoc_ros_interfaces/msg/DynamicsState'))
            if args.with_effort:
                outputs.append(CountedOutput('/denoc_dynamics/prediction',
                                             'trajectory_msgs/msg/JointTrajectory'))
        if args.outputs == 'all' and args.with_effort or args.external_torques:
            outputs.append(CountedOutput('/denoc_dynamics/external_torques',
                                         'sensor_msgs/msg/JointState'))
        if args.outputs == 'all' and args.with_effort:
            outputs.append(CountedOutput('/denoc_dynamics/contact',
                                         'denoc_ros_interfaces/msg/ContactState'))
            outputs.append(CountedOutput('/denoc_dynamics/external_wrench',
                                         'geometry_msgs/msg/WrenchStamped'))
        outputs = [o for o in outputs if o.topic.rsplit('/', 1)[-1] not in args.without]
        targets[1].outputs = outputs
        targets[0].outputs = [CountedOutput(f'/relay/joint_states_echo_{k + 1}',
                                            'sensor_msgs/msg/JointState')
                              for k in range(args.relay_fanout)]
        counters = Counters(outputs + targets[0].outputs, args.counter_processes, home)
        children.extend(counters.children)
        diagnostics = {}

        def on_diagnostics(msg):
            for status in msg.status:
                if 'denoc_dynamics' in status.name:
                    values = {kv.key: kv.value for kv in status.values}
                    # the last report of a period with traffic (the per-period compute
                    # times of a report after the rounds are zero)
                    if float(values.get('input_rate_hz', 0.0)) > 0.0 or not diagnostics:
                        diagnostics.update(values)
        node.create_subscription(DiagnosticArray, '/diagnostics', on_diagnostics, 10)

        def spin_until(predicate, timeout):
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                counters.poll()
                if predicate():
                    return True
                dead = [c for c in children if not c.alive()]
                if dead:
                    raise RuntimeError(f'{dead[0].name} exited with status '
                                       f'{dead[0].process.returncode}:\n{dead[0].log_tail()}')
                receiver.spin_once(0.01)
                executor.spin_once(timeout_sec=0.0)  # discovery, /diagnostics
            return predicate()

        start = time.monotonic()
        if not spin_until(lambda: all(t.publisher.get_subscription_count() > 0
                                      and t.subscription.get_publisher_count() > 0
                                      and all(o.matched for o in t.outputs)
                                      for t in targets), args.timeout):
            raise RuntimeError(f'no discovery within {args.timeout} s:\n'
                               + '\n'.join(f'[{c.name}]\n{c.log_tail()}' for c in children))
        print(f'discovery: {time.monotonic() - start:.2f} s', flush=True)

        for t in targets:
            # untimed: every --warmup message answered in turn, and one on each extra output
            # (which also shows that the node has discovered the driver's subscriptions)
            warm_start = time.monotonic()
            answered = 0
            attempt = 0
            while answered < args.warmup:
                if time.monotonic() - warm_start > args.timeout:
                    silent = ', '.join(o.topic for o in t.outputs if not o.count)
                    raise RuntimeError(f'{t.label}: only {answered} of {args.warmup} warm-up '
                                       f'messages answered within {args.timeout} s'
                                       + (f'; nothing on {silent}' if silent else ''))
                attempt += 1
                msg = joint_state(JointState, names, 'warmup', 0.0)
                if args.with_effort:
                    msg.effort = [0.0] * len(names)
                t.publisher.publish(msg)
                label = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
                if spin_until(lambda: label in t.warmup_seen and t.outputs_counted(),
                              1.0 if answered else 10.0):
                    answered += 1
            print(f'{t.label}: warm-up {args.warmup} messages answered in '
                  f'{time.monotonic() - warm_start:.2f} s', flush=True)
            # the extra outputs' answers to the last warm-up message may come after the echo:
            # count from 0.2 s without any of them (at most 2 s)
            settle_end = time.monotonic() + 2.0
            counts, last_change = None, time.monotonic()
            while t.outputs and time.monotonic() < settle_end:
                counters.poll()
                if counts != [o.count for o in t.outputs]:
                    counts, last_change = [o.count for o in t.outputs], time.monotonic()
                elif time.monotonic() - last_change > 0.3:
                    break
                receiver.spin_once(0.01)
            for o in t.outputs:
                o.before = o.count

        total = max(int(round(args.duration * args.rate)), 1)
        for k in range(args.rounds):
            count = total * (k + 1) // args.rounds - total * k // args.rounds
            for t, child in zip(targets, children[:2]):
                sent_before, received_before = t.sent, len(t.received)
                ticks_before = cpu_ticks(child.process.pid)
                thread = threading.Thread(target=sender, args=(
                    t, JointState, names, count, args.rate,
                    time.perf_counter() + args.duration / args.rounds + 5.0, args.with_effort,
                    stop), daemon=True)
                threads.append(thread)
                thread.start()
                while thread.is_alive():
                    receiver.spin_once(0.005)
                thread.join()
                # drain: until everything came back, or 1 s without news (at most 10 s)
                drain_end = time.monotonic() + 10.0
                last, last_change = len(t.received), time.monotonic()
                while time.monotonic() < drain_end and len(t.received) < t.sent:
                    receiver.spin_once(0.01)
                    if len(t.received) != last:
                        last, last_change = len(t.received), time.monotonic()
                    elif time.monotonic() - last_change > 1.0:
                        break
                t.cpu_ticks += cpu_ticks(child.process.pid) - ticks_before
                t.answered += len(t.received) - received_before
                print(f'{t.label}, round {k + 1}/{args.rounds}: sent {t.sent - sent_before}, '
                      f'received {len(t.received) - received_before}', flush=True)
        # the extra outputs' last messages may come in just after the echo's
        spin_until(lambda: all(o.delivered() >= t.sent for t in targets for o in t.outputs),
                   1.5)
        spin_until(lambda: bool(diagnostics), 2.0)
        report(args, targets, diagnostics, len(names))
        return 0 if all(t.received for t in targets) else 1
    except RuntimeError as err:
        print(f'node_latency: {err}', file=sys.stderr)
        return 1
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=2.0)
        for child in children:
            child.stop()
        rclpy.try_shutdown(context=context)
        if not args.keep_logs:
            shutil.rmtree(home, ignore_errors=True)


def report(args, targets, diagnostics, joints):
    """Print the table of both targets and the node minus relay differences."""
    stats = []
    for t in targets:
        cb = [v[0] for v in t.received.values()]
        rmw = [v[1] for v in t.received.values() if v[1] is not None]
        stats.append({
            'sent': t.sent, 'received': len(t.received), 'lost': t.sent - len(t.received),
            'rate': t.intervals / t.send_time if t.send_time > 0 else float('nan'),
            'p50': percentile_ms(cb, 50), 'p99': percentile_ms(cb, 99),
            'max': max(cb) / 1e6 if cb else float('nan'),
            'rmw p50': percentile_ms(rmw, 50), 'rmw p99': percentile_ms(rmw, 99),
            'rmw max': max(rmw) / 1e6 if rmw else float('nan'),
            'cpu': (t.cpu_ticks / os.sysconf('SC_CLK_TCK') / t.answered * 1e3
                    if t.answered else float('nan')),
        })
    relay, node = stats
    rows = [('messages sent', 'sent', '{:d}'), ('achieved send rate [Hz]', 'rate', '{:.1f}'),
            ('received', 'received', '{:d}'), ('lost', 'lost', '{:d}'),
            ('round trip p50 [ms]', 'p50', '{:.3f}'), ('round trip p99 [ms]', 'p99', '{:.3f}'),
            ('round trip max [ms]', 'max', '{:.3f}'),
            ('rmw receive p50 [ms]', 'rmw p50', '{:.3f}'),
            ('rmw receive p99 [ms]', 'rmw p99', '{:.3f}'),
            ('rmw receive max [ms]', 'rmw max', '{:.3f}'),
            ('CPU time per message [ms]', 'cpu', '{:.3f}')]
    table = [('', 'relay', 'dynamics node', 'node - relay')]
    for label, key, fmt in rows:
        diff = node[key] - relay[key]
        table.append((label, fmt.format(relay[key]), fmt.format(node[key]),
                      fmt.format(diff) if isinstance(diff, int) or math.isfinite(diff) else ''))
    options = [f'urdf_path:={args.urdf}',
               ('drain_limit: node default' if args.drain_limit is None
                else f'drain_limit:={args.drain_limit}'),
               {'all': 'every output subscribed', 'state': 'dynamics_state only',
                'feedforward': 'feedforward_torques only'}[args.outputs],
               'with efforts' if args.with_effort else 'no efforts']
    if args.observer_gain is not None:
        options.append(f'observer_gain:={args.observer_gain:g}')
    if args.external_torques:
        options.append('external_torques subscribed')
    title = (f'Node latency: {joints}-joint JointState at {args.rate:g} Hz for '
             f'{args.duration:g} s per target in {args.rounds} round'
             f'{"" if args.rounds == 1 else "s"} ({", ".join(options)})')
    widths = [max(len(r[i]) for r in table) for i in range(4)]
    print()
    print(title)
    print('-' * len(title))
    for r in table:
        print('  '.join(c.ljust(w) if i == 0 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(r, widths))))
    verdict = [
        ('no message lost', node['lost'] == 0),
        (f"node p50 within {TARGET_P50_MS} ms of the relay's "
         f'({node["p50"] - relay["p50"]:+.3f} ms)', node['p50'] - relay['p50'] <= TARGET_P50_MS),
        (f"node p99 within {TARGET_P99_MS} ms of the relay's "
         f'({node["p99"] - relay["p99"]:+.3f} ms)', node['p99'] - relay['p99'] <= TARGET_P99_MS),
    ]
    if args.outputs == 'all':
        verdict.append((f'node CPU time {node["cpu"]:.3f} ms per message <= 0.3 ms',
                        node['cpu'] <= 0.3))
    if args.outputs == 'state':
        verdict.append((f'node CPU time {node["cpu"]:.3f} ms per message <= 0.1 ms',
                        node['cpu'] <= 0.1))
    print(f'CPU: {cpu_model()}, {os.cpu_count()} cores')
    print('targets (reported, not asserted):')
    for text, ok in verdict:
        print(f'  [{"met" if ok else "NOT met"}] {text}')
    for t in targets[::-1]:
        if t.outputs:
            width = max(len(o.topic) for o in t.outputs)
            print(f'extra outputs of the {t.label}, messages delivered during its rounds (of '
                  f'{t.sent} sent):')
            for o in t.outputs:
                print(f'  {o.topic.ljust(width)}  {o.delivered():d}')
    if diagnostics:
        print(f'node /diagnostics: compute time mean {diagnostics.get("compute_time_mean_ms")} '
              f'ms, max {diagnostics.get("compute_time_max_ms")} ms (its last report with '
              f'traffic), '
              f'invalid inputs {diagnostics.get("invalid_inputs")}')
    print('round trip = driver receive time - send stamp (time.time_ns, same process); '
          '"rmw receive" uses the middleware receive timestamp instead of the callback time; '
          'CPU time = user + system time of the process (/proc/PID/stat) over its rounds, '
          'divided by the messages it answered; the extra outputs are counted by '
          f'{args.counter_processes} process(es) of their own')


def cpu_model():
    """Return the processor's model name (lscpu's "Model name"), or '' if unknown."""
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return ''


def parse_args(argv=None):
    """Return the command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--duration', type=float, default=30.0,
                        help='seconds of driving per target (default 30)')
    parser.add_argument('--rate', type=float, default=1000.0,
                        help='joint states per second (default 1000)')
    parser.add_argument('--urdf', default='panda',
                        help='urdf_path of the dynamics node (default: bundled panda)')
    parser.add_argument('--warmup', type=int, default=20,
                        help='messages answered one by one before timing (default 20)')
    parser.add_argument('--timeout', type=float, default=120.0,
                        help='bound on discovery and on each warm-up [s] (default 120)')
    parser.add_argument('--with-effort', action='store_true',
                        help='send efforts too (the node then also publishes a prediction)')
    parser.add_argument('--rounds', type=int, default=3,
                        help='alternate relay and node this many times, duration/rounds '
                        'seconds each (default 3)')
    parser.add_argument('--outputs', choices=('feedforward', 'all', 'state'),
                        default='feedforward',
                        help='what is subscribed: feedforward_torques only (default); every '
                        'output (counted in --counter-processes processes; the round trip on '
                        'feedforward_torques); or dynamics_state only (the round trip on it)')
    parser.add_argument('--subscribe-all', action='store_true', help='same as --outputs all')
    parser.add_argument('--without', nargs='+', default=[], metavar='TOPIC',
                        help='leave these outputs (last name part, e.g. dynamics_state) out of '
                        '--outputs all: to time code from before they existed')
    parser.add_argument('--counter-processes', type=int, default=2, metavar='N',
                        help='processes counting the extra outputs (default 2)')
    parser.add_argument('--drain-limit', type=int, default=None, metavar='N',
                        help='start the node with -p drain_limit:=N (default: its own, 10)')
    parser.add_argument('--external-torques', action='store_true',
                        help="send efforts and subscribe to the node's ~/external_torques "
                        '(the momentum observer; counted like --subscribe-all)')
    parser.add_argument('--observer-gain', type=float, default=None, metavar='K_O',
                        help='start the node with -p observer_gain:=K_O (0: observer off; '
                        'default: its own, 50)')
    parser.add_argument('--relay-thread', action='store_true',
                        help='the relay serves joint_states as the node does: in a thread of '
                        'its own, outside the executor, serialized (the floor of rclpy + DDS)')
    parser.add_argument('--relay-fanout', type=int, default=0, metavar='N',
                        help='with --relay-thread: the relay also republishes each message on N '
                        'more topics, counted like the extra outputs (the floor of N + 1 writes)')
    parser.add_argument('--keep-logs', action='store_true',
                        help="keep the temporary ROS_HOME with the children's logs")
    args = parser.parse_args(argv)
    if args.duration <= 0 or args.rate <= 0:
        parser.error('--duration and --rate must be positive')
    if args.rounds < 1:
        parser.error('--rounds must be at least 1')
    if args.drain_limit is not None and args.drain_limit < 0:
        parser.error('--drain-limit must be >= 0')
    if args.external_torques:
        args.with_effort = True  # the observer needs efforts
    if args.subscribe_all:
        args.outputs = 'all'
    if args.relay_fanout < 0 or args.relay_fanout and not args.relay_thread:
        parser.error('--relay-fanout N takes N >= 0 and --relay-thread')
    if args.counter_processes < 1:
        parser.error('--counter-processes must be at least 1')
    return args


def run_cli(run, args, name):
    """Run ``run(args)`` with SIGTERM stopping it cleanly like Ctrl-C; return the exit status."""
    # the sender thread and the executor share the GIL: hand it over every 0.5 ms, not 5 ms
    sys.setswitchinterval(0.0005)

    def terminate(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, terminate)
    try:
        return run(args)
    except KeyboardInterrupt:
        print(f'{name}: interrupted', file=sys.stderr)
        return 130


def main(argv=None):
    """Run the benchmark; SIGTERM stops it cleanly like Ctrl-C."""
    return run_cli(run, parse_args(argv), 'node_latency')


if __name__ == '__main__':
    sys.exit(main())
