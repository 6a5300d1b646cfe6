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
Recordings for identification: rosbag2 / CSV / NPZ reading and writing, filtering, derivatives.

Oracles: analytic trajectories written and read back exactly; rosbags' own CDR deserialiser (and
ROS 2's rmw serialiser, where rclpy is installed) for the fast JointState decoder, on messages
of random layouts written by rosbags' Writer directly; the analytic derivatives of sinusoids for
the filtered velocities and accelerations.
"""

import shutil
import warnings

from conftest import require_module
from denoc_ros.errors import DataError
from denoc_ros.identification.bags import write_bag
from denoc_ros.identification.cdr import _parse_layout
from denoc_ros.identification.data import read_recording, read_recordings, write_csv, write_npz
from denoc_ros.identification.filtering import FilterSettings, prepare_samples
from denoc_ros.identification.recording import DataWarning, JointStateRecording, MIN_SAMPLES
import numpy as np
import pytest

JOINTS = ('shoulder', 'elbow', 'wrist')
T0 = 1_700_000_000.0          # epoch-like stamps: float seconds keep 0.24 us resolution there
W = 2 * np.pi * np.array([0.3, 0.7, 1.1])
AMP = np.array([0.8, 0.5, 0.3])


def analytic(t):
    """Return q, qd, qdd, tau (N, 3) of sinusoids at times ``t``."""
    rel = (np.asarray(t) - T0)[:, None]
    phase = W * rel + np.array([0.1, 0.2, 0.3])
    q = AMP * np.sin(phase)
    qd = AMP * W * np.cos(phase)
    qdd = -AMP * W ** 2 * np.sin(phase)
    tau = 5.0 * qdd + 2.0 * np.cos(phase) + 0.3
    return q, qd, qdd, tau


def recording(n=200, rate=1000.0, velocity=True, names=JOINTS):
    """Return an analytic JointStateRecording of ``n`` samples."""
    t = T0 + np.arange(n) / rate
    q, qd, _, tau = analytic(t)
    return JointStateRecording(tuple(names), t, q, qd if velocity else None, tau, 'analytic')


def assert_same(a, b, columns=None):
    """Assert two recordings hold exactly the same samples (``b``'s columns picked)."""
    cols = slice(None) if columns is None else columns
    np.testing.assert_array_equal(a.time, b.time)
    np.testing.assert_array_equal(a.position, b.position[:, cols])
    np.testing.assert_array_equal(a.effort, b.effort[:, cols])
    if b.velocity is None:
        assert a.velocity is None
    else:
        np.testing.assert_array_equal(a.velocity, b.velocity[:, cols])


def typestore():
    """Return the rosbags type store of ROS 2 Humble (test side)."""
    from rosbags.typesys import get_typestore, Stores
    return get_typestore(Stores.ROS2_HUMBLE)


def joint_state(ts, sec, nsec, frame_id, names, position, velocity, effort):
    """Return a rosbags JointState message."""
    msg = ts.types['sensor_msgs/msg/JointState']
    header = ts.types['std_msgs/msg/Header']
    stamp = ts.types['builtin_interfaces/msg/Time']
    return msg(header=header(stamp=stamp(sec=sec, nanosec=nsec), frame_id=frame_id),
               name=list(names), position=np.asarray(position, float),
               velocity=np.asarray(velocity, float), effort=np.asarray(effort, float))


def raw_bag(path, raws, storage='mcap', topic='/joint_states', msgtype=None):
    """Write raw CDR messages ``[(bag_ns, bytes)]`` with rosbags' Writer (independent of ours)."""
    from rosbags.rosbag2 import StoragePlugin, Writer
    ts = typestore()
    plugin = StoragePlugin.MCAP if storage == 'mcap' else StoragePlugin.SQLITE3
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        conn = writer.add_connection(topic, msgtype or 'sensor_msgs/msg/JointState', typestore=ts)
        for stamp, raw in raws:
            writer.write(conn, stamp, raw)
    return path


def serialize(ts, msg, little_endian=True):
    """Serialise with rosbags."""
    return bytes(ts.serialize_cdr(msg, 'sensor_msgs/msg/JointState', little_endian=little_endian))


# ---------------------------------------------------------------------------------------------
# round trips


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
@pytest.mark.parametrize('form', ['directory', 'file'])
def test_bag_round_trip_exact(tmp_path, storage, form):
    rec = recording()
    bag = tmp_path / 'bag'
    write_bag(bag, rec, storage=storage)
    path = bag
    if form == 'file':  # the storage file alone, away from its metadata.yaml
        suffix = '.mcap' if storage == 'mcap' else '.db3'
        path = tmp_path / f'alone{suffix}'
        shutil.copy(bag / f'bag{suffix}', path)
    back = read_recording(path, JOINTS)
    assert back.joint_names == JOINTS
    assert_same(back, rec)
    assert back.time.dtype == np.float64 and back.position.shape == (200, 3)


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_bag_without_velocities_and_without_metadata(tmp_path, storage):
    rec = recording(velocity=False)
    write_bag(tmp_path / 'bag', rec, storage=storage)
    (tmp_path / 'bag' / 'metadata.yaml').unlink()  # a recording that was never closed cleanly
    back = read_recording(tmp_path / 'bag', JOINTS)
    assert back.velocity is None
    assert_same(back, rec)


@pytest.mark.parametrize('velocity', [True, False])
def test_csv_and_npz_round_trip_exact(tmp_path, velocity):
    rec = recording(velocity=velocity)
    write_csv(tmp_path / 'r.csv', rec)
    write_npz(tmp_path / 'r.npz', rec)
    header = (tmp_path / 'r.csv').read_text().splitlines()[0]
    middle = 'shoulder/velocity,' if velocity else ''
    assert header.startswith(f'time,shoulder/position,{middle}shoulder/effort,elbow/')
    for name in ('r.csv', 'r.npz'):
        assert_same(read_recording(tmp_path / name, JOINTS), rec)
    # joints picked by name, in the requested order
    back = read_recording(tmp_path / 'r.csv', ('wrist', 'shoulder'))
    assert_same(back, rec, columns=[2, 0])


def test_csv_columns_in_any_order_and_extra_columns(tmp_path):
    rec = recording(n=20)
    lines = ['elbow/effort,comment,time,elbow/position,shoulder/effort,shoulder/position']
    for i in range(20):
        e1, t, q1, e0, q0 = (float(x) for x in (
            rec.effort[i, 1], rec.time[i], rec.position[i, 1], rec.effort[i, 0],
            rec.position[i, 0]))
        lines.append(f'{e1!r},7,{t!r},{q1!r},{e0!r},{q0!r}')
    (tmp_path / 'x.csv').write_text('\n'.join(lines) + '\n')
    back = read_recording(tmp_path / 'x.csv', ('shoulder', 'elbow'))
    assert back.velocity is None
    np.testing.assert_array_equal(back.position, rec.position[:, :2])
    np.testing.assert_array_equal(back.effort, rec.effort[:, :2])


def test_read_recordings_and_progress(tmp_path):
    write_bag(tmp_path / 'a', recording(n=100), storage='mcap')
    write_npz(tmp_path / 'b.npz', recording(n=50))
    seen = []
    out = read_recordings([tmp_path / 'a', tmp_path / 'b.npz'], JOINTS, progress=seen.append)
    assert [r.time.size for r in out] == [100, 50]
    assert seen and seen[-1] == pytest.approx(1.0)
    assert all(0.0 <= f <= 1.0 for f in seen) and seen == sorted(seen)


# ---------------------------------------------------------------------------------------------
# the fast decoder against rosbags' deserialiser


def random_messages(rng, ts, count, joints=JOINTS):
    """
    Return ``[(bag_ns, raw)]`` of JointStates of random layouts and the rosbags decoding.

    Names: the model's joints in random order, with random extra joints; random frame_ids;
    velocity sometimes empty; some zero stamps; pads filled with garbage (as rmw leaves them);
    some big-endian.
    """
    layouts = []
    for _ in range(6):
        names = list(rng.permutation(joints))
        for _ in range(int(rng.integers(0, 3))):
            names.insert(int(rng.integers(0, len(names) + 1)),
                         'x' * int(rng.integers(1, 9)) + str(len(names)))
        frame = ''.join(rng.choice(list('abcdefgh_/'), int(rng.integers(0, 12))))
        layouts.append((names, frame, bool(rng.integers(0, 2)), bool(rng.random() < 0.2)))
    raws = []
    for i in range(count):
        names, frame, with_vel, big = layouts[int(rng.integers(0, len(layouts)))]
        k = len(names)
        zero = rng.random() < 0.1
        sec, nsec = (0, 0) if zero else (int(rng.integers(1, 2 ** 31)),
                                         int(rng.integers(0, 10 ** 9)))
        msg = joint_state(ts, sec, nsec, frame, names, rng.standard_normal(k),
                          rng.standard_normal(k if with_vel else 0), rng.standard_normal(k))
        raw = bytearray(serialize(ts, msg, little_endian=not big))
        layout = _parse_layout(bytes(raw))
        pads = np.setdiff1d(np.arange(4, len(raw)), layout.index)
        for lo, count_ in zip(layout.offsets, layout.counts):   # keep the data bytes
            pads = pads[(pads < lo) | (pads >= lo + 8 * count_)]
        pads = pads[(pads < 4) | (pads >= 12)]                   # and the stamp
        raw = np.frombuffer(bytes(raw), np.uint8).copy()
        raw[pads] = rng.integers(0, 256, pads.size)
        raws.append((1_000_000_000 + i * 1_000_000, raw.tobytes()))
    return raws


def truth(ts, raws):
    """Return stamps (ns), q, qd (NaN if none), tau, has_velocity by rosbags' deserialiser."""
    stamps, q, qd, tau, has_vel = [], [], [], [], []
    for bag_ns, raw in raws:
        m = ts.deserialize_cdr(raw, 'sensor_msgs/msg/JointState')
        idx = [list(m.name).index(j) for j in JOINTS]
        s = m.header.stamp.sec * 10 ** 9 + m.header.stamp.nanosec
        stamps.append(s if s else bag_ns)
        q.append(m.position[idx])
        tau.append(m.effort[idx])
        has_vel.append(len(m.velocity) > 0)
        qd.append(m.velocity[idx] if len(m.velocity) else np.full(3, np.nan))
    return np.array(stamps), np.array(q), np.array(qd), np.array(tau), np.array(has_vel)


def test_fast_decoder_agrees_with_rosbags(tmp_path):
    rng = np.random.default_rng(7)
    ts = typestore()
    raws = random_messages(rng, ts, 3000)
    stamps, q, qd, tau, has_vel = truth(ts, raws)
    order = np.argsort(stamps, kind='stable')
    for storage in ('mcap', 'sqlite3'):
        bag = raw_bag(tmp_path / storage, raws, storage)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            back = read_recording(bag, JOINTS)
        np.testing.assert_array_equal(back.position, q[order])
        np.testing.assert_array_equal(back.effort, tau[order])
        ns = stamps[order]
        np.testing.assert_array_equal(back.time, (ns // 10 ** 9) + (ns % 10 ** 9) * 1e-9)
        assert back.velocity is None  # some layouts had none
        assert any('have no velocities' in str(w.message) for w in caught)
    # and with velocities in every message
    keep = [r for r, v in zip(raws, has_vel) if v]
    back = read_recording(raw_bag(tmp_path / 'vel', keep), JOINTS)
    sel = [i for i in order if has_vel[i]]
    np.testing.assert_array_equal(back.velocity, qd[sel])


@pytest.fixture(scope='module')
def mixed_messages():
    """Return 6000 JointStates of random layouts (about 1.5 MB) and their rosbags decoding."""
    ts = typestore()
    raws = random_messages(np.random.default_rng(13), ts, 6000)
    return raws, truth(ts, raws)


@pytest.mark.parametrize('storage, compression', [
    ('mcap', None), ('mcap', 'STORAGE'), ('mcap', 'FILE'), ('mcap', 'MESSAGE'),
    ('sqlite3', None), ('sqlite3', 'FILE'), ('sqlite3', 'MESSAGE')])
def test_storage_variants_with_other_topics(tmp_path, storage, compression, mixed_messages):
    """
    Several chunks, other topics interleaved, compression: the same messages as rosbags reads.

    (MCAP chunks are walked by the reader itself, SQLite queried directly, compressed messages
    go through rosbags' own reader: all must agree with rosbags' deserialiser.)
    """
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer
    rng = np.random.default_rng(17)
    ts = typestore()
    raws, (stamps, q, qd, tau, has_vel) = mixed_messages  # more than one 1 MB chunk
    string = ts.types['std_msgs/msg/String']
    bag = tmp_path / 'bag'
    writer = Writer(bag, version=9, storage_plugin=getattr(StoragePlugin, storage.upper()))
    if compression:
        writer.set_compression(getattr(CompressionMode, compression), CompressionFormat.ZSTD)
    with writer:
        joints = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState',
                                       typestore=ts)
        other = writer.add_connection('/log', 'std_msgs/msg/String', typestore=ts)
        gripper = writer.add_connection('/gripper', 'sensor_msgs/msg/JointState', typestore=ts)
        for i, (bag_ns, raw) in enumerate(raws):
            writer.write(joints, bag_ns, raw)
            if (i // 500) % 2 and rng.random() < 0.4:  # interleaved in every other stretch
                text = 'x' * int(rng.integers(0, 30))
                writer.write(other, bag_ns + 1, bytes(ts.serialize_cdr(
                    string(data=text), 'std_msgs/msg/String')))
                writer.write(gripper, bag_ns + 2, serialize(ts, joint_state(
                    ts, 0, 0, '', JOINTS, [1.0, 2.0, 3.0], [], [4.0, 5.0, 6.0])))
    order = np.argsort(stamps, kind='stable')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', DataWarning)  # some layouts have no velocities
        back = read_recording(bag, JOINTS)
    np.testing.assert_array_equal(back.position, q[order])
    np.testing.assert_array_equal(back.effort, tau[order])
    ns = stamps[order]
    np.testing.assert_array_equal(back.time, (ns // 10 ** 9) + (ns % 10 ** 9) * 1e-9)
    gripper = read_recording(bag, JOINTS, topic='/gripper')
    np.testing.assert_array_equal(gripper.effort, np.tile([4.0, 5.0, 6.0], (gripper.time.size, 1)))


def test_layout_parser_on_random_messages():
    rng = np.random.default_rng(3)
    ts = typestore()
    for _ in range(300):
        k = int(rng.integers(0, 6))
        names = [''.join(rng.choice(list('abcü_1'), int(rng.integers(0, 7)))) for _ in range(k)]
        counts = [int(rng.choice([0, k])) for _ in range(3)]
        arrays = [rng.standard_normal(c) for c in counts]
        frame = 'f' * int(rng.integers(0, 10))
        msg = joint_state(ts, int(rng.integers(0, 2 ** 31)), int(rng.integers(0, 10 ** 9)),
                          frame, names, *arrays)
        for little in (True, False):
            raw = serialize(ts, msg, little)
            layout = _parse_layout(raw + b'\0' * int(rng.integers(0, 8)))  # trailing bytes
            assert layout.names == tuple(names) and layout.frame_id == frame
            buf = np.frombuffer(raw, np.uint8)
            for a, c, off in zip(arrays, layout.counts, layout.offsets):
                got = np.ndarray((c,), layout.endian + 'f8', buf, off)
                np.testing.assert_array_equal(got, a)


def test_fast_decoder_on_rmw_serialised_messages(tmp_path):
    """ROS 2's own serialiser leaves garbage in padding and may append bytes: still decoded."""
    serialization = require_module('rclpy.serialization')
    sensor_msgs = require_module('sensor_msgs.msg')
    rng = np.random.default_rng(11)
    raws, truth = [], []
    for i in range(200):
        m = sensor_msgs.JointState()
        m.header.stamp.sec = 100 + i
        m.header.frame_id = 'base' * (i % 3)
        m.name = ['finger'] * (i % 2) + list(JOINTS)
        values = rng.standard_normal((3, len(m.name)))
        m.position, m.velocity, m.effort = (list(v) for v in values)
        raws.append((i, bytes(serialization.serialize_message(m))))
        truth.append(values[:, -3:])
    back = read_recording(raw_bag(tmp_path / 'rmw', raws), JOINTS)
    truth = np.array(truth)
    np.testing.assert_array_equal(back.time, 100.0 + np.arange(200))
    np.testing.assert_array_equal(back.position, truth[:, 0])
    np.testing.assert_array_equal(back.velocity, truth[:, 1])
    np.testing.assert_array_equal(back.effort, truth[:, 2])


def test_undecodable_messages_dropped_with_a_warning(tmp_path):
    ts = typestore()
    rec = recording(n=30)
    raws = [(int(round((t - T0) * 1e9)) + 1, serialize(ts, joint_state(
        ts, 0, 0, '', JOINTS, rec.position[i], rec.velocity[i], rec.effort[i])))
        for i, t in enumerate(rec.time)]
    raws[5] = (raws[5][0], b'\x00\x01\x00\x00garbage')
    raws[9] = (raws[9][0], b'\x07\x07not cdr at all, not at all' * 2)
    with pytest.warns(DataWarning, match=r'dropped 2 of 30 .*not decodable'):
        back = read_recording(raw_bag(tmp_path / 'g', raws), JOINTS)
    assert back.time.size == 28


# ---------------------------------------------------------------------------------------------
# names, stamps, order


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_name_mapping_extra_joints_other_order(tmp_path, storage):
    rec = recording()
    order = [2, 0, 1]  # the messages name wrist, shoulder, elbow, then the fingers
    shuffled = JointStateRecording(tuple(JOINTS[i] for i in order), rec.time,
                                   rec.position[:, order], rec.velocity[:, order],
                                   rec.effort[:, order])
    write_bag(tmp_path / 'b', shuffled, storage=storage,
              extra_joints={'finger_joint1': 0.04, 'finger_joint2': 0.04})
    assert_same(read_recording(tmp_path / 'b', JOINTS), rec)
    fingers = read_recording(tmp_path / 'b', ('finger_joint2', 'elbow'))
    np.testing.assert_array_equal(fingers.position[:, 0], 0.04)
    np.testing.assert_array_equal(fingers.effort[:, 0], 0.0)
    np.testing.assert_array_equal(fingers.position[:, 1], rec.position[:, 1])


def test_messages_of_another_publisher_are_skipped_silently(tmp_path):
    """A gripper driver publishing its own JointState on the same topic is not an error."""
    ts = typestore()
    rec = recording(n=40)
    raws = []
    for i, t in enumerate(rec.time):
        ns = int(round((t - T0) * 1e9)) + 10 ** 9
        raws.append((ns, serialize(ts, joint_state(ts, 0, 0, 'arm', JOINTS, rec.position[i],
                                                   rec.velocity[i], rec.effort[i]))))
        raws.append((ns + 1, serialize(ts, joint_state(ts, 0, 0, '', ['finger'], [0.01], [],
                                                       []))))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        back = read_recording(raw_bag(tmp_path / 'g', raws), JOINTS)
    np.testing.assert_array_equal(back.position, rec.position)


def test_zero_stamps_take_the_recording_time(tmp_path):
    rec = recording()
    write_bag(tmp_path / 'z', rec, zero_stamps=True)
    assert_same(read_recording(tmp_path / 'z', JOINTS), rec)


def test_unsorted_and_duplicate_stamps(tmp_path):
    ts = typestore()
    rng = np.random.default_rng(5)
    stamps = np.arange(50) * 1_000_000 + 5 * 10 ** 9
    stamps = np.concatenate([stamps, stamps[[3, 17, 17]]])  # three duplicates, recorded later
    perm = rng.permutation(stamps.size)
    perm = perm[np.argsort(perm == np.flatnonzero(perm < 50)[0], kind='stable')]
    raws = []
    values = rng.standard_normal((stamps.size, 3))
    for bag_i, i in enumerate(perm):  # bag times increase, header stamps are shuffled
        s = int(stamps[i])
        msg = joint_state(ts, s // 10 ** 9, s % 10 ** 9, '', JOINTS, values[i], values[i],
                          values[i])
        raws.append((bag_i, serialize(ts, msg)))
    back = read_recording(raw_bag(tmp_path / 'u', raws), JOINTS)
    np.testing.assert_array_equal(back.time, 5.0 + np.arange(50) * 1e-3)
    # for each stamp, the first message recorded (in bag order) is kept
    first = {}
    for i in perm:
        first.setdefault(int(stamps[i]), i)
    expected = values[[first[int(s)] for s in np.sort(np.unique(stamps))]]
    np.testing.assert_array_equal(back.position, expected)
    # the same rule for CSV rows
    rows = JointStateRecording(JOINTS, stamps[perm] * 1e-9, values[perm], None, values[perm])
    write_csv(tmp_path / 'u.csv', rows)
    back = read_recording(tmp_path / 'u.csv', JOINTS)
    np.testing.assert_array_equal(back.position, expected)


# ---------------------------------------------------------------------------------------------
# errors


def test_missing_joint_is_named(tmp_path):
    write_bag(tmp_path / 'b', recording())
    with pytest.raises(DataError, match=r"joint 'gripper' is missing .*shoulder, elbow, wrist"):
        read_recording(tmp_path / 'b', JOINTS + ('gripper',))
    write_npz(tmp_path / 'b.npz', recording())
    with pytest.raises(DataError, match=r"b\.npz: joint 'gripper' is missing"):
        read_recording(tmp_path / 'b.npz', ('gripper',))
    write_csv(tmp_path / 'b.csv', recording())
    with pytest.raises(DataError, match=r'b\.csv: joint .gripper. has no column "gripper/posit'):
        read_recording(tmp_path / 'b.csv', ('elbow', 'gripper'))


def test_messages_lacking_some_joints_dropped_with_a_warning(tmp_path):
    ts = typestore()
    rec = recording(n=30)
    raws = [(i, serialize(ts, joint_state(ts, 0, 0, '', JOINTS[:2] if i % 10 == 0 else JOINTS,
                                          rec.position[i, :2 if i % 10 == 0 else 3], [],
                                          rec.effort[i, :2 if i % 10 == 0 else 3])))
            for i in range(30)]
    with pytest.warns(DataWarning, match=r"dropped 3 of 30 messages \(3 lack joint\(s\) 'wrist'"):
        back = read_recording(raw_bag(tmp_path / 'm', raws), JOINTS)
    assert back.time.size == 27


def test_empty_efforts(tmp_path):
    ts = typestore()
    raws = [(i, serialize(ts, joint_state(ts, 0, 0, '', JOINTS, [1, 2, 3], [], [])))
            for i in range(20)]
    with pytest.raises(DataError, match=r"m: topic '/joint_states': .*empty effort arrays"):
        read_recording(raw_bag(tmp_path / 'm', raws), JOINTS)


def test_wrong_topic_and_wrong_type(tmp_path):
    write_bag(tmp_path / 'b', recording(), topic='/arm/joint_states')
    with pytest.raises(DataError, match=r"topic '/joint_states': no such topic .*/arm/joint_st"):
        read_recording(tmp_path / 'b', JOINTS)
    assert read_recording(tmp_path / 'b', JOINTS, topic='/arm/joint_states').time.size == 200
    from rosbags.typesys import get_typestore, Stores
    ts = get_typestore(Stores.ROS2_HUMBLE)
    string = ts.types['std_msgs/msg/String']
    raw = bytes(ts.serialize_cdr(string(data='x'), 'std_msgs/msg/String'))
    raw_bag(tmp_path / 's', [(1, raw)], msgtype='std_msgs/msg/String')
    with pytest.raises(DataError, match=r'has type std_msgs/msg/String, not sensor_msgs/msg/Joi'):
        read_recording(tmp_path / 's', JOINTS)
    raw_bag(tmp_path / 'e', [])
    with pytest.raises(DataError, match=r"e: topic '/joint_states': no message on the topic"):
        read_recording(tmp_path / 'e', JOINTS)


def test_too_few_samples(tmp_path):
    write_bag(tmp_path / 'b', recording(n=5))
    with pytest.raises(DataError, match=r'b: topic .*only 5 usable samples \(at least 10'):
        read_recording(tmp_path / 'b', JOINTS)
    write_csv(tmp_path / 'c.csv', recording(n=3))
    with pytest.raises(DataError, match=r'c\.csv: only 3 usable samples'):
        read_recording(tmp_path / 'c.csv', JOINTS)


def test_non_finite_values_are_named(tmp_path):
    rec = recording(n=30)
    effort = rec.effort.copy()
    effort[12, 1] = np.nan
    write_npz(tmp_path / 'n.npz', JointStateRecording(JOINTS, rec.time, rec.position, None,
                                                      effort))
    with pytest.raises(DataError, match=r"n\.npz: joint 'elbow' has 1 non-finite effort values"):
        read_recording(tmp_path / 'n.npz', JOINTS)


@pytest.mark.parametrize('name, content, pattern', [
    ('bad.mcap', b'not an mcap file at all', r'bad\.mcap: not a readable rosbag2 bag'),
    ('bad.db3', b'SQLite format 3\0 but not really' * 10, r'bad\.db3: not a readable rosbag2'),
    ('bad.npz', b'PK not a zip', r'bad\.npz: not a readable NPZ file'),
    ('bad.csv', b'time,shoulder/position,shoulder/effort\n0,1,x\n', r'bad\.csv: ValueError'),
    ('bad.txt', b'hello', r'bad\.txt: unknown format'),
])
def test_unreadable_files(tmp_path, name, content, pattern):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(DataError, match=pattern):
        read_recording(tmp_path / name, ('shoulder',))


def test_missing_path_and_plain_directory(tmp_path):
    with pytest.raises(DataError, match=r'nothing-here: no such file or directory'):
        read_recording(tmp_path / 'nothing-here', JOINTS)
    (tmp_path / 'empty').mkdir()
    with pytest.raises(DataError, match=r'empty: not a rosbag2 directory'):
        read_recording(tmp_path / 'empty', JOINTS)
    bag = tmp_path / 'b'
    write_bag(bag, recording())
    with pytest.raises(DataError, match=r'exists already'):
        write_bag(bag, recording())


def test_errors_are_one_line(tmp_path):
    (tmp_path / 'bad.mcap').write_bytes(b'\x89MCAP0\r\n' + b'\0' * 100)
    with pytest.raises(DataError) as info:
        read_recording(tmp_path / 'bad.mcap', JOINTS)
    assert '\n' not in str(info.value) and 'bad.mcap' in str(info.value)


# ---------------------------------------------------------------------------------------------
# filtering and differentiation


def noisy(duration=12.0, rate=1000.0, sigma=(1e-4, 1e-3, 0.05), seed=0, t=None,
          velocity=True):
    """Return an analytic recording with Gaussian noise on q, qd and tau."""
    rng = np.random.default_rng(seed)
    if t is None:
        t = T0 + np.arange(int(duration * rate)) / rate
    q, qd, _, tau = analytic(t)
    noise = [s * rng.standard_normal(q.shape) for s in sigma]
    return JointStateRecording(JOINTS, t, q + noise[0], qd + noise[1] if velocity else None,
                               tau + noise[2], 'noisy')


def test_accelerations_from_noisy_velocities():
    """
    1 kHz, velocity noise 1e-3 rad/s: qdd within 0.02 rad/s^2 of the analytic one.

    (The largest analytic qdd is 2.9 rad/s^2; differentiating the raw velocities by central
    differences would give noise of about 1e-3 / (sqrt(2) * 1 ms) = 0.7 rad/s^2.)
    """
    samples = prepare_samples(noisy())
    q, qd, qdd, tau = analytic(samples.time)
    assert samples.joint_names == JOINTS and samples.segments == 1
    assert np.abs(samples.qdd - qdd).max() < 0.02
    assert np.abs(samples.qd - qd).max() < 1e-3
    assert np.abs(samples.q - q).max() < 1e-4
    assert np.abs(samples.tau - tau).max() < 0.05
    # defaults: decimated to 100 Hz, 0.3 s trimmed at each end
    np.testing.assert_allclose(np.diff(samples.time), 0.01, atol=1e-6)
    assert samples.time[0] - T0 == pytest.approx(0.3, abs=1e-6)
    assert T0 + 12.0 - 1e-3 - samples.time[-1] <= 0.3 + 0.01 + 1e-6


def test_zero_phase():
    """Filtered signals do not lag: the fitted delay is below 10 us (one sample is 1000 us)."""
    samples = prepare_samples(noisy(sigma=(1e-4, 1e-3, 0.0)))
    q, qd, qdd, tau = analytic(samples.time)
    for measured, true, rate in ((samples.q, q, qd), (samples.qd, qd, qdd),
                                 (samples.tau, tau, None)):
        if rate is None:  # tau's derivative, by finite differences of the analytic one
            h = 1e-6
            rate = (analytic(samples.time + h)[3] - analytic(samples.time - h)[3]) / (2 * h)
        delay = -np.sum((measured - true) * rate, axis=0) / np.sum(rate ** 2, axis=0)
        assert np.abs(delay).max() < 1e-5


def test_accelerations_from_positions_only():
    """Without velocities, qd and qdd come from the filtered positions (noise 1e-5 rad)."""
    samples = prepare_samples(noisy(sigma=(1e-5, 0.0, 0.0), velocity=False))
    q, qd, qdd, _ = analytic(samples.time)
    assert np.abs(samples.qd - qd).max() < 2e-3
    assert np.abs(samples.qdd - qdd).max() < 0.05


def test_gaps_split_segments():
    t = T0 + np.arange(10000) / 1000.0
    t = np.concatenate([t[:4000], t[6000:]])  # a 2 s hole
    samples = prepare_samples(noisy(t=t))
    assert samples.segments == 2
    rel = samples.time - T0
    assert not ((rel > 4.0 - 0.3 + 1e-6) & (rel < 6.0 + 0.3 - 1e-6)).any()  # trimmed
    q, qd, qdd, _ = analytic(samples.time)
    assert np.abs(samples.qdd - qdd).max() < 0.02
    # a short hole (5 missing samples, < max_gap periods) is bridged
    t2 = np.delete(T0 + np.arange(10000) / 1000.0, np.arange(5000, 5005))
    assert prepare_samples(noisy(t=t2)).segments == 1


def test_short_segment_dropped_with_a_warning():
    t = T0 + np.arange(10000) / 1000.0
    t = np.concatenate([t[:200], t[3000:]])  # 0.2 s, shorter than the 2 x 0.3 s trim
    with pytest.warns(DataWarning, match=r'1 of 2 segments too short'):
        samples = prepare_samples(noisy(t=t))
    assert samples.segments == 1 and samples.time[0] - T0 > 3.0


def test_non_uniform_sampling():
    """Jittered stamps (+-0.3 ms at 1 kHz) are resampled onto a uniform grid first."""
    rng = np.random.default_rng(2)
    t = T0 + np.arange(12000) / 1000.0 + rng.uniform(-3e-4, 3e-4, 12000)
    samples = prepare_samples(noisy(t=np.sort(t)))
    q, qd, qdd, _ = analytic(samples.time)
    steps = np.diff(samples.time)
    np.testing.assert_allclose(steps, steps.mean(), atol=1e-6)  # a uniform grid
    assert steps.mean() == pytest.approx(0.01, rel=0.01)         # at about 100 Hz
    assert np.abs(samples.qdd - qdd).max() < 0.03
    assert np.abs(samples.q - q).max() < 2e-4


def test_settings():
    rec = noisy(duration=4.0)
    s = prepare_samples(rec, FilterSettings(cutoff=5.0, decimate=1, trim=0.5))
    assert np.diff(s.time)[0] == pytest.approx(1e-3, abs=1e-6)
    assert s.time[0] - T0 == pytest.approx(0.5, abs=1e-6)
    with pytest.raises(DataError, match=r'cut-off 600 Hz is not below half the sample rate'):
        prepare_samples(rec, FilterSettings(cutoff=600.0))
    for bad in ({'cutoff': -1.0}, {'order': 0}, {'decimate': 0}, {'trim': -1.0},
                {'max_gap': 0.5}):
        with pytest.raises(DataError, match='FilterSettings.' + next(iter(bad))):
            prepare_samples(rec, FilterSettings(**bad))
    with pytest.raises(DataError, match=r'only \d+ samples left after filtering'):
        prepare_samples(noisy(duration=1.0), FilterSettings(trim=0.48))


def test_prepare_samples_rejects_bad_recordings():
    rec = noisy(duration=1.0)
    q = rec.position.copy()
    q[3, 2] = np.inf
    with pytest.raises(DataError, match=r'noisy: position has non-finite values'):
        prepare_samples(JointStateRecording(JOINTS, rec.time, q, None, rec.effort, 'noisy'))
    t = rec.time.copy()
    t[10] = t[9]
    with pytest.raises(DataError, match=r'time is not strictly increasing \(at sample 10\)'):
        prepare_samples(JointStateRecording(JOINTS, t, rec.position, None, rec.effort, 'x'))


def test_bag_to_samples_end_to_end(tmp_path):
    write_bag(tmp_path / 'b', noisy(duration=5.0), storage='sqlite3')
    samples = prepare_samples(read_recording(tmp_path / 'b', JOINTS))
    _, _, qdd, _ = analytic(samples.time)
    assert np.abs(samples.qdd - qdd).max() < 0.02
    assert MIN_SAMPLES == 10
