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
Soak test of the dynamics node: joint states at 1 kHz with bad messages mixed in, for minutes.

Run from the repository root::

    .venv/bin/python benchmarks/soak.py                          # 10 min at 1 kHz, 10 % bad
    .venv/bin/python benchmarks/soak.py --duration 60            # 1 min
    .venv/bin/python benchmarks/soak.py --duration 8 --rate 200  # smoke test (test/test_soak.py)

This process (the driver) starts ``<venv>/bin/denoc_dynamics_node --ros-args -p urdf_path:=panda
-p diagnostics_period:=1.0`` and, for ``--duration`` seconds, publishes ``sensor_msgs/JointState``
for the Panda's joints ``panda_joint1`` .. ``panda_joint7`` on ``/joint_states`` at ``--rate`` Hz
(reliable writer, depth 10; the node's reader is best effort, depth 100), from a thread on an
absolute 1/rate schedule that never bursts to catch up (the achieved rate is reported). Each
message carries its sequence number in ``header.frame_id``.

Good messages follow a smooth trajectory (sinusoids of 0.2-0.8 Hz about a bent pose, period
10 s); efforts are empty, or with ``--with-effort`` the gravity torque of the state (precomputed
by the library over one period). Every fourth good message also names ``panda_finger_joint1``
(the node ignores joints it does not model). A fraction ``--bad-fraction`` of the messages,
evenly spread, is bad, cycling through the kinds of the README's "What the node does with bad
input": a missing joint, a duplicated name, NaN / inf in positions / velocities, arrays of
mismatched length, empty positions, huge velocities (1e300: the torques come out non-finite).
Those kinds must be dropped: never published, counted in ``invalid_inputs``. The last kind,
stamps going backwards (1 s before the previous message's), is sent too, but the README does not
list it: such a message is otherwise valid, and the node publishes for it like for a good one
(it counts it in ``stamps_backwards`` of its diagnostics, where it has that counter).

The driver subscribes to ``/denoc_dynamics/feedforward_torques``,
``/denoc_dynamics/effort_command``, ``/diagnostics`` (and ``/denoc_dynamics/prediction`` with
``--with-effort``), all reliable, and checks that every value of every output is finite (numbers
in the diagnostics' key/values included). It samples the node's resident memory (``VmRSS`` of
``/proc/<pid>/status``) every second.

Counting. The node's counters come from its ``/diagnostics`` (cumulative ``joint_states_received``,
``published``, ``invalid_inputs``), less those of a report taken after the warm-up messages
(good messages answered one by one before the soak). Messages the node never received (its
best-effort reader keeps 100; a node slower than the input rate loses the rest) are reported as
input losses. The bad messages the node received are ``joint_states_received`` minus the
distinct accepted messages whose outputs the driver saw (by ``frame_id``); that must equal
``invalid_inputs`` up to ``--count-tolerance``, the room left for outputs lost between node and
driver (reported: ``published`` minus outputs seen). A good message the node wrongly dropped
would pass for a bad one there; when the node received every message the counts are compared
exactly with what was sent, which catches it, and otherwise the report shows the
``invalid_inputs`` expected if losses hit every kind alike (informative, not judged).

Verdict, exit status 0 when every bound holds, 1 otherwise: the node is alive at the end; 0
outputs with non-finite values; 0 outputs for messages of the kinds that must be dropped;
``invalid_inputs`` = bad messages received (within the tolerance); if the node reports
``stamps_backwards``, it equals the backwards-stamped messages answered (within the tolerance);
when the node received every message, ``invalid_inputs`` = the messages sent of the kinds that
must be dropped (within the tolerance); the node's RSS growth from the end of the warm-up (10 s,
or 10 % of the duration if shorter) to the end below ``--rss-bound-mb`` (default 20 MB).

Every process runs with ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST``, a random ``ROS_DOMAIN_ID``
and ``ROS_HOME`` in a temporary directory (also the node's log; ``--keep-logs`` keeps it).
Discovery is awaited through the publishers' subscription counts; every wait is bounded; the
node is stopped (SIGINT, then SIGTERM, then SIGKILL) on every exit path.
"""

import argparse
import math
import os
import pathlib
import shutil
import sys
import threading
import time

import denoc_ros as dr
from denoc_ros.description import read_description
from node_latency import Child, paced, ros_environment, run_cli
import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parent

NODE = 'denoc_dynamics'
JOINTS = [f'panda_joint{i}' for i in range(1, 8)]
FINGER = 'panda_finger_joint1'
# kinds of bad message, in the order they are cycled; every one but the last must be dropped
REJECTED_KINDS = ('missing_joint', 'duplicate_name', 'nan_position', 'inf_position',
                  'nan_velocity', 'inf_velocity', 'length_mismatch', 'empty_positions',
                  'huge_velocity')
ACCEPTED_KINDS = ('backwards_stamp',)   # not in the README's list: computed all the same
BAD_KINDS = REJECTED_KINDS + ACCEPTED_KINDS
KIND_CODES = {kind: code for code, kind in enumerate(BAD_KINDS, start=2)}
GOOD, GOOD_FINGER = 0, 1               # codes of good messages (without / with the finger joint)

# the trajectory: q_i(t) = Q0_i + A_i sin(2 pi F_i t + PHASE_i), period 10 s
Q0 = np.array([0.0, -0.4, 0.0, -2.0, 0.0, 1.6, 0.8])
AMPLITUDE = np.array([0.5, 0.4, 0.5, 0.4, 0.5, 0.4, 0.5])
FREQUENCY = 0.1 * np.arange(2, 9)
PHASE = 0.3 * np.arange(7)
PERIOD = 10.0


def trajectory_table(rate, with_effort):
    """Return positions, velocities and efforts (lists of rows) over one period at ``rate``."""
    samples = max(int(round(PERIOD * rate)), 1)
    t = np.arange(samples)[:, None] * (PERIOD / samples)
    angle = 2.0 * math.pi * FREQUENCY * t + PHASE
    q = Q0 + AMPLITUDE * np.sin(angle)
    qd = AMPLITUDE * 2.0 * math.pi * FREQUENCY * np.cos(angle)
    if with_effort:
        model = dr.load_urdf(read_description('panda'))
        if list(model.joint_names) != JOINTS:
            raise RuntimeError(f'the bundled panda has joints {model.joint_names}, not {JOINTS}')
        effort = dr.gravity_torques(model, q).tolist()
    else:
        effort = None
    return q.tolist(), qd.tolist(), effort


def vm_rss_kb(pid):
    """Return VmRSS of a process [kB], or None if it is gone."""
    try:
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def all_finite(values):
    """Return True if every number of a sequence is finite."""
    return all(map(math.isfinite, values))


class Soak:
    """What the driver sends and receives, shared by the sender thread and the executor."""

    def __init__(self, args, table):
        self.args = args
        self.positions, self.velocities, self.efforts = table
        self.capacity = max(int(math.ceil(args.duration * args.rate)), 1)
        self.kinds = bytearray(self.capacity)       # code of each sequence number sent
        self.seen = bytearray(self.capacity)        # 1 once its feedforward output arrived
        self.sent = 0
        self.counts = dict.fromkeys(range(len(BAD_KINDS) + 2), 0)
        self.send_start = self.send_end = None
        self.schedule_restarts = 0
        self.last_stamp_ns = 0
        self.feedforward = self.feedforward_unknown = self.duplicates = 0
        self.effort_commands = self.predictions = self.diagnostics_messages = 0
        self.effort_commands_warmup = self.predictions_warmup = 0   # answers to the warm-up
        self.nonfinite = 0
        self.nonfinite_examples = []
        self.reports = []                           # (wall time of stamp, {key: value})
        self.warmup_seen = set()

    # -- sending ---------------------------------------------------------------------------------
    def kind_of(self, seq):
        """Return the code of message ``seq``: bad ones evenly spread, cycling through kinds."""
        fraction = self.args.bad_fraction
        bad_index = int(math.floor((seq + 1) * fraction))
        if bad_index > int(math.floor(seq * fraction)):
            return KIND_CODES[BAD_KINDS[(bad_index - 1) % len(BAD_KINDS)]]
        return GOOD_FINGER if seq % 4 == 3 else GOOD

    def message(self, msg_type, seq, code, label=None):
        """Return message ``seq`` of kind ``code``, stamped now (or earlier, for that kind)."""
        row = seq % len(self.positions)
        names = list(JOINTS)
        position = list(self.positions[row])
        velocity = list(self.velocities[row])
        effort = list(self.efforts[row]) if self.efforts is not None else []
        stamp = time.time_ns()
        k = (seq // 7) % 7                     # the joint a bad message spoils
        bad = BAD_KINDS[code - 2] if code >= 2 else None
        if code == GOOD_FINGER:
            names.append(FINGER)
            position.append(0.02)
            velocity.append(0.0)
            if effort:
                effort.append(0.0)
        elif bad == 'missing_joint':
            for values in (names, position, velocity, effort):
                if values:
                    del values[k]
        elif bad == 'duplicate_name':
            for values in (names, position, velocity, effort):
                if values:
                    values.append(values[k])
        elif bad in ('nan_position', 'nan_velocity'):
            (position if bad == 'nan_position' else velocity)[k] = math.nan
        elif bad in ('inf_position', 'inf_velocity'):
            # +inf and -inf in turn
            value = math.inf if seq % 2 else -math.inf
            (position if bad == 'inf_position' else velocity)[k] = value
        elif bad == 'length_mismatch':
            arrays = [position, velocity] + ([effort] if effort else [])
            del arrays[seq % len(arrays)][-1]
        elif bad == 'empty_positions':
            position = []
        elif bad == 'huge_velocity':
            velocity = [1e300] * len(velocity)
        elif bad == 'backwards_stamp':
            stamp = max(self.last_stamp_ns - 1_000_000_000, 0)
        msg = msg_type()
        msg.name = names
        msg.position = position
        msg.velocity = velocity
        msg.effort = effort
        msg.header.frame_id = str(seq) if label is None else label
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        self.last_stamp_ns = stamp
        return msg

    def send(self, publisher, msg_type, stop, deadline):
        """Publish the soak's messages on an absolute 1/rate schedule (never bursting)."""
        self.send_start = time.perf_counter()
        for seq, restarted in paced(range(self.capacity), self.args.rate, deadline, stop):
            self.schedule_restarts += restarted
            code = self.kind_of(seq)
            msg = self.message(msg_type, seq, code)
            self.kinds[seq] = code
            try:
                publisher.publish(msg)
            except Exception:  # noqa: B902 - rclpy shut down under us (interrupted): stop quietly
                break
            self.counts[code] += 1
            self.sent = seq + 1
            self.send_end = time.perf_counter()

    # -- receiving -------------------------------------------------------------------------------
    def violation(self, where, text):
        """Count an output with a non-finite value, keeping the first few for the report."""
        self.nonfinite += 1
        if len(self.nonfinite_examples) < 5:
            self.nonfinite_examples.append(f'{where}: {text}')

    def on_feedforward(self, msg):
        """Check one feed-forward output; mark its input as answered."""
        if not (all_finite(msg.effort) and all_finite(msg.position)
                and all_finite(msg.velocity)):
            self.violation('feedforward_torques', f'frame_id {msg.header.frame_id!r}, '
                           f'effort {list(msg.effort)}')
        key = msg.header.frame_id
        if key.startswith('w'):
            self.warmup_seen.add(key)
            return
        self.feedforward += 1
        if not key.isdigit() or int(key) >= self.capacity:
            self.feedforward_unknown += 1
            return
        seq = int(key)
        if self.seen[seq]:
            self.duplicates += 1
        self.seen[seq] = 1

    def on_effort_command(self, msg):
        """Check one effort command."""
        self.effort_commands += 1
        if not all_finite(msg.data):
            self.violation('effort_command', f'data {list(msg.data)}')

    def on_prediction(self, msg):
        """Check one prediction (with --with-effort)."""
        self.predictions += 1
        for point in msg.points:
            for field in ('positions', 'velocities', 'accelerations', 'effort'):
                if not all_finite(getattr(point, field)):
                    self.violation('prediction', f'{field} {list(getattr(point, field))}')

    def on_diagnostics(self, msg):
        """Check the numbers of every status; keep the node's key/values."""
        self.diagnostics_messages += 1
        for status in msg.status:
            values = {kv.key: kv.value for kv in status.values}
            for key, value in values.items():
                try:
                    number = float(value)
                except ValueError:
                    continue
                if not math.isfinite(number):
                    self.violation('diagnostics', f'{status.name}: {key} = {value}')
            if status.name.startswith(NODE):
                stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
                self.reports.append((stamp, values))


def counters(values):
    """Return the node's cumulative counters from one diagnostics key/value dict."""
    keys = ('joint_states_received', 'published', 'invalid_inputs', 'stamps_backwards')
    return {key: int(values[key]) for key in keys if key in values}


def run(args):
    """Start the node, soak it, print the report; return the exit status."""
    try:
        table = trajectory_table(args.rate, args.with_effort)
    except (dr.DenocError, RuntimeError) as err:
        print(f'soak: cannot build the trajectory: {err}', file=sys.stderr)
        return 1
    home = ros_environment('denoc_soak_')
    # only now: the environment above must be in place before rclpy is imported
    from diagnostic_msgs.msg import DiagnosticArray
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.qos import QoSProfile, ReliabilityPolicy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    from trajectory_msgs.msg import JointTrajectory

    node_exe = pathlib.Path(sys.executable).parent / 'denoc_dynamics_node'
    if not node_exe.exists():
        print(f'soak: denoc_dynamics_node is not installed next to {sys.executable}',
              file=sys.stderr)
        shutil.rmtree(home, ignore_errors=True)
        return 1
    print(f"ROS_DOMAIN_ID={os.environ['ROS_DOMAIN_ID']}, ROS_HOME={home} (node log; "
          + ('kept)' if args.keep_logs else 'removed at exit, --keep-logs keeps it)'), flush=True)

    soak = Soak(args, table)
    child = None
    stop = threading.Event()
    thread = None
    context = rclpy.context.Context()
    try:
        child = Child('dynamics_node', [str(node_exe), '--ros-args', '-p', 'urdf_path:=panda',
                                        '-p', 'diagnostics_period:=1.0'], home)
        rclpy.init(context=context)
        node = rclpy.create_node('soak_driver', context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        publisher = node.create_publisher(JointState, '/joint_states', 10)
        qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
        subscriptions = [
            node.create_subscription(JointState, f'/{NODE}/feedforward_torques',
                                     soak.on_feedforward, qos),
            node.create_subscription(Float64MultiArray, f'/{NODE}/effort_command',
                                     soak.on_effort_command, qos),
            node.create_subscription(DiagnosticArray, '/diagnostics', soak.on_diagnostics, qos)]
        if args.with_effort:
            subscriptions.append(node.create_subscription(
                JointTrajectory, f'/{NODE}/prediction', soak.on_prediction, qos))

        def spin_until(predicate, timeout):
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                if predicate():
                    return True
                if not child.alive():
                    raise RuntimeError(f'dynamics_node exited with status '
                                       f'{child.process.returncode}:\n{child.log_tail()}')
                executor.spin_once(timeout_sec=0.01)
            return predicate()

        start = time.monotonic()
        if not spin_until(lambda: publisher.get_subscription_count() > 0
                          and all(s.get_publisher_count() > 0 for s in subscriptions),
                          args.timeout):
            raise RuntimeError(f'no discovery within {args.timeout} s:\n{child.log_tail()}')
        print(f'discovery: {time.monotonic() - start:.2f} s', flush=True)

        # warm-up: good messages answered one by one (the node has its model and is working)
        warm_start = time.monotonic()
        answered = attempt = 0
        while answered < args.warmup:
            if time.monotonic() - warm_start > args.timeout:
                raise RuntimeError(f'only {answered} of {args.warmup} warm-up messages answered '
                                   f'within {args.timeout} s:\n{child.log_tail()}')
            label = f'w{attempt}'
            attempt += 1
            publisher.publish(soak.message(JointState, 0, GOOD, label))
            if spin_until(lambda: label in soak.warmup_seen, 2.0):
                answered += 1
        # baseline counters: the first report stamped after the last warm-up answer
        answered_at = time.time()
        if not spin_until(lambda: any(s > answered_at for s, _ in soak.reports), 5.0):
            raise RuntimeError('no /diagnostics from the node after the warm-up')
        baseline = counters(next(v for s, v in soak.reports if s > answered_at))
        print(f'warm-up: {answered} messages answered in {time.monotonic() - warm_start:.2f} s; '
              f'soaking for {args.duration:g} s at {args.rate:g} Hz', flush=True)

        soak.effort_commands_warmup = soak.effort_commands
        soak.predictions_warmup = soak.predictions
        rss = []                                    # (seconds since the soak started, kB)
        soak_start = time.monotonic()
        thread = threading.Thread(target=soak.send, args=(
            publisher, JointState, stop, time.perf_counter() + args.duration), daemon=True)
        thread.start()
        next_sample = soak_start
        next_progress = soak_start + 60.0
        died_at = None

        def sample(now):
            value = vm_rss_kb(child.process.pid)
            if value is not None and child.alive():
                rss.append((now - soak_start, value))

        while thread.is_alive():
            executor.spin_once(timeout_sec=0.005)
            now = time.monotonic()
            if now >= next_sample:
                sample(now)
                next_sample += 1.0
            if died_at is None and not child.alive():
                died_at = now - soak_start
                stop.set()
            if now >= next_progress:
                next_progress += 60.0
                print(f'  t = {now - soak_start:5.0f} s: sent {soak.sent}, outputs '
                      f'{soak.feedforward}, RSS {rss[-1][1] / 1024 if rss else math.nan:.1f} '
                      f'MB', flush=True)
        thread.join()
        send_done = time.monotonic()
        # drain: until no output for 1 s (at most 10 s), then the node's final counters
        last, last_change = soak.feedforward, time.monotonic()
        while time.monotonic() - send_done < 10.0 and child.alive():
            executor.spin_once(timeout_sec=0.01)
            now = time.monotonic()
            if now >= next_sample:
                sample(now)
                next_sample += 1.0
            if soak.feedforward != last:
                last, last_change = soak.feedforward, now
            elif now - last_change > 1.0:
                break
        drained_at = time.time()

        def settled():
            after = [counters(v) for s, v in soak.reports if s > drained_at]
            return len(after) >= 2 and after[-1] == after[-2]
        if child.alive():
            try:
                spin_until(settled, 5.0)
            except RuntimeError:
                pass                                # the node died just now: reported below
            sample(time.monotonic())
        alive = child.alive()
        if died_at is None and not alive:
            died_at = time.monotonic() - soak_start
        final = soak.reports[-1][1] if soak.reports else {}
        reports = [v for s, v in soak.reports if s > answered_at]
        child.stop()
        exit_code = child.process.returncode
        log_tail = child.log_tail(8)
        child = None
        return report(args, soak, baseline, final, reports, rss, alive, died_at, exit_code,
                      log_tail)
    except RuntimeError as err:
        print(f'soak: {err}', file=sys.stderr)
        return 1
    finally:
        stop.set()
        if thread is not None:
            thread.join(timeout=2.0)
        if child is not None:
            child.stop()
        rclpy.try_shutdown(context=context)
        if not args.keep_logs:
            shutil.rmtree(home, ignore_errors=True)


def report(args, soak, baseline, final, reports, rss, alive, died_at, exit_code, log_tail):
    """Print the report and the verdict; return 0 if every bound holds, 1 otherwise."""
    sent = soak.sent
    kinds = np.frombuffer(bytes(soak.kinds[:sent]), dtype=np.uint8)
    seen = np.frombuffer(bytes(soak.seen[:sent]), dtype=np.uint8).astype(bool)
    good = soak.counts[GOOD] + soak.counts[GOOD_FINGER]
    bad = sent - good
    rejected_codes = [KIND_CODES[k] for k in REJECTED_KINDS]
    is_rejected_kind = np.isin(kinds, rejected_codes)
    rejected_sent = int(np.count_nonzero(is_rejected_kind))
    accepted_sent = sent - rejected_sent
    seen_accepted = int(np.count_nonzero(seen & ~is_rejected_kind))
    seen_rejected = int(np.count_nonzero(seen & is_rejected_kind))

    now = counters(final) if final else None
    delta = {k: now[k] - baseline.get(k, 0) for k in now} if now else None
    if delta is not None and not all(k in delta for k in ('joint_states_received', 'published',
                                                          'invalid_inputs')):
        delta = None
    span = (soak.send_end - soak.send_start) if sent > 1 else math.nan
    achieved = (sent - 1) / span if sent > 1 and span > 0 else math.nan

    title = (f'Soak: dynamics_node (urdf_path:=panda), 7-joint JointState at {args.rate:g} Hz '
             f'for {args.duration:g} s, bad fraction {args.bad_fraction:g}'
             + (', efforts = gravity torques' if args.with_effort else ', no efforts'))
    print()
    print(title)
    print('-' * len(title))
    print(f'messages sent: {sent} (good {good}, bad {bad}); achieved send rate {achieved:.1f} Hz '
          f'(schedule restarts after falling > 1 period behind: {soak.schedule_restarts})')
    print(f'  {"good, 7 joints":24s} {soak.counts[GOOD]:8d}   outputs seen '
          f'{int(np.count_nonzero(seen & (kinds == GOOD))):8d}')
    print(f'  {"good, + " + FINGER:24s} {soak.counts[GOOD_FINGER]:8d}   outputs seen '
          f'{int(np.count_nonzero(seen & (kinds == GOOD_FINGER))):8d}')
    for kind in BAD_KINDS:
        code = KIND_CODES[kind]
        expect = 'must be dropped' if kind in REJECTED_KINDS else 'accepted by the node'
        print(f'  bad: {kind:19s} {soak.counts[code]:8d}   outputs seen '
              f'{int(np.count_nonzero(seen & (kinds == code))):8d}   ({expect})')
    print(f'outputs received: feedforward_torques {soak.feedforward} (distinct {int(seen.sum())}'
          f', duplicates {soak.duplicates}, unknown frame_id {soak.feedforward_unknown}), '
          f'effort_command {soak.effort_commands - soak.effort_commands_warmup}, '
          f'diagnostics {soak.diagnostics_messages}'
          + (f', prediction {soak.predictions - soak.predictions_warmup}'
             if args.with_effort else ''))
    print(f'outputs with non-finite values: {soak.nonfinite}')
    for example in soak.nonfinite_examples:
        print(f'  {example}')

    if delta is not None:
        published = [int(v.get('published', 0)) for v in reports]
        previous = [baseline.get('published', 0)] + published[:-1]
        steps = [b - a for a, b in zip(previous, published)]
        means = [float(v.get('compute_time_mean_ms', 'nan')) for v in reports]
        maxima = [float(v.get('compute_time_max_ms', 'nan')) for v in reports]
        weight = sum(n for n, m in zip(steps, means) if n > 0)
        mean = (sum(n * m for n, m in zip(steps, means) if n > 0) / weight if weight
                else math.nan)
        active = [v for v, n in zip(reports, steps) if n > 0]
        print(f'node /diagnostics, last status (soak only; the '
              f'{baseline.get("joint_states_received", 0)}'
              f' warm-up messages subtracted): joint_states_received '
              f'{delta["joint_states_received"]}, published {delta["published"]}, '
              f'invalid_inputs {delta["invalid_inputs"]}; last error: '
              f'{final.get("last_error", "")!r}')
        print(f'  compute time over the soak: mean {mean:.3f} ms, max '
              f'{max(maxima, default=math.nan):.3f} ms'
              + (f' (last busy period: mean {active[-1].get("compute_time_mean_ms")} ms, max '
                 f'{active[-1].get("compute_time_max_ms")} ms)' if active else ''))
        received = delta['joint_states_received']
        input_lost = sent - received
        output_lost = delta['published'] - seen_accepted
        bad_received = received - seen_accepted
        print(f'losses: input (sent - received by the node) {input_lost} '
              f'({100.0 * input_lost / max(sent, 1):.2f} %); output (published - distinct '
              f'accepted outputs seen) {output_lost}')
        print(f'bad messages received by the node (received - accepted outputs seen): '
              f'{bad_received}; invalid_inputs {delta["invalid_inputs"]}; difference '
              f'{delta["invalid_inputs"] - bad_received:+d}')
        backwards_seen = int(np.count_nonzero(seen & (kinds == KIND_CODES['backwards_stamp'])))
        if 'stamps_backwards' in delta:
            print(f'stamps going backwards: node counted {delta["stamps_backwards"]}, '
                  f'backwards-stamped messages answered {backwards_seen}')
        else:
            print(f'stamps going backwards: the node reports no stamps_backwards; '
                  f'backwards-stamped messages answered {backwards_seen}')
        if input_lost == 0:
            print(f'  the node received every message: rejected-kind messages sent '
                  f'{rejected_sent}, invalid_inputs {delta["invalid_inputs"]}; accepted sent '
                  f'{accepted_sent}, published {delta["published"]}')
        else:
            fraction = received / max(sent, 1)
            expected = rejected_sent * fraction
            print(f'  if losses hit every kind alike: expected invalid_inputs {expected:.0f} '
                  f'(rejected-kind messages sent {rejected_sent} x received fraction '
                  f'{fraction:.3f}), got {delta["invalid_inputs"]} (informative, not judged)')
    else:
        print('node /diagnostics: no report received')
    print('node process: ' + ('alive at the end' if alive else
                              f'DEAD (gone {died_at:.1f} s into the soak)')
          + f'; exit status after SIGINT: {exit_code}')
    if not alive:
        print('  end of its log:\n' + ''.join(f'    {line}\n' for line in log_tail.splitlines()))

    warm = min(10.0, 0.1 * args.duration)
    after = [(t, kb) for t, kb in rss if t >= warm]
    if after:
        start_mb, end_mb = after[0][1] / 1024, after[-1][1] / 1024
        peak_mb = max(kb for _, kb in rss) / 1024
        growth = end_mb - start_mb
        if len(after) >= 3:
            t = np.array([p[0] for p in after])
            slope = float(np.polyfit(t, np.array([p[1] for p in after]) / 1024, 1)[0]) * 60.0
            slope_text = f', fitted slope {slope:+.3f} MB/min'
        else:
            slope_text = ''
        print(f'node RSS [MB]: start {start_mb:.1f} (at {after[0][0]:.1f} s, after a {warm:g} s '
              f'warm-up), peak {peak_mb:.1f}, end {end_mb:.1f}; growth {growth:+.2f} MB over '
              f'{after[-1][0] - after[0][0]:.0f} s{slope_text} ({len(rss)} samples)')
    else:
        growth = math.nan
        print('node RSS: no sample after the warm-up')

    tolerance = args.count_tolerance
    checks = [
        ('node alive at the end', alive),
        (f'outputs with non-finite values = 0 ({soak.nonfinite})', soak.nonfinite == 0),
        (f'outputs for messages that must be dropped = 0 ({seen_rejected})', seen_rejected == 0),
    ]
    if delta is not None:
        diff = delta['invalid_inputs'] - bad_received
        checks.append((f'invalid_inputs = bad messages received by the node, within +-{tolerance}'
                       f' ({delta["invalid_inputs"]} vs {bad_received})', abs(diff) <= tolerance))
        if 'stamps_backwards' in delta:
            checks.append((f'stamps_backwards = backwards-stamped messages answered, within '
                           f'+-{tolerance} ({delta["stamps_backwards"]} vs {backwards_seen})',
                           abs(delta['stamps_backwards'] - backwards_seen) <= tolerance))
        if input_lost == 0:
            checks.append((f'no input lost: invalid_inputs = rejected-kind messages sent '
                           f'({delta["invalid_inputs"]} vs {rejected_sent}), within '
                           f'+-{tolerance}',
                           abs(delta['invalid_inputs'] - rejected_sent) <= tolerance))
    else:
        checks.append(('node /diagnostics received', False))
    checks.append((f'RSS growth < {args.rss_bound_mb:g} MB ({growth:+.2f} MB)',
                   math.isfinite(growth) and growth < args.rss_bound_mb))
    ok = all(passed for _, passed in checks)
    print('verdict:')
    for text, passed in checks:
        print(f'  [{"PASS" if passed else "FAIL"}] {text}')
    print(f'verdict: {"PASS" if ok else "FAIL"}', flush=True)
    return 0 if ok else 1


def parse_args(argv=None):
    """Return the command-line options."""
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument('--duration', type=float, default=600.0,
                        help='seconds of soaking (default 600)')
    parser.add_argument('--rate', type=float, default=1000.0,
                        help='joint states per second (default 1000)')
    parser.add_argument('--bad-fraction', type=float, default=0.1,
                        help='fraction of bad messages, evenly spread (default 0.1)')
    parser.add_argument('--with-effort', action='store_true',
                        help='good messages carry the gravity torque as efforts (the node then '
                             'also publishes a prediction, checked too)')
    parser.add_argument('--rss-bound-mb', type=float, default=20.0,
                        help='bound on the node RSS growth after the warm-up [MB] (default 20)')
    parser.add_argument('--count-tolerance', type=int, default=5,
                        help='allowed |invalid_inputs - bad messages received| (default 5)')
    parser.add_argument('--warmup', type=int, default=5,
                        help='good messages answered one by one before the soak (default 5)')
    parser.add_argument('--timeout', type=float, default=45.0,
                        help='bound on discovery and on the warm-up [s] (default 45)')
    parser.add_argument('--keep-logs', action='store_true',
                        help="keep the temporary ROS_HOME with the node's log")
    args = parser.parse_args(argv)
    if args.duration <= 0 or args.rate <= 0:
        parser.error('--duration and --rate must be positive')
    if not 0.0 <= args.bad_fraction <= 1.0:
        parser.error('--bad-fraction must be in [0, 1]')
    if args.warmup < 1 or args.timeout <= 0:
        parser.error('--warmup must be at least 1 and --timeout positive')
    return args


def main(argv=None):
    """Run the soak; SIGTERM stops it cleanly like Ctrl-C."""
    return run_cli(run, parse_args(argv), 'soak')


if __name__ == '__main__':
    sys.exit(main())
