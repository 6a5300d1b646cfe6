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
The cost of contact localization per joint state: ``DynamicsProcessor.process``, off and on.

Run from the repository root (``make bench-contact-cost``)::

    .venv/bin/python benchmarks/contact_cost.py                 # 2000 joint states per case
    .venv/bin/python benchmarks/contact_cost.py --messages 200  # smoke test

example-robot-data's Panda (its collision meshes; the bundled Panda with ``--robot bundled``,
then only the cost with localization off), held still at a generic pose, 1 kHz joint states
with efforts ``g(q) - J^T F`` (a 30 N push into link 7's surface at one of its samples, or no
push), after 2.5 s at rest (the node measures the noise at rest meanwhile). Cases, each timed
as the wall time of ``process`` per joint state (median, mean, p95, p99, max):

* ``off``: the node's defaults (observer on, ``contact_localization`` false), no push;
* ``off, pushed``: the same while pushed (the observer flags a contact);
* ``on, no contact``: localization on, no push;
* ``on, in contact``: localization on while pushed, every joint state located
  (``contact_time_share`` 0): a :class:`denoc_ros.ContactTracker`'s full search on the first
  and every 25th, the tracked points on the others (``max`` is a full search's);
* ``on, share 0.5``: the same with the node's ``contact_time_share`` (0.5, its default);
* ``on, full search``: every joint state a full search (``ContactTracker`` with
  ``full_period`` 1, what ``locate_contact`` costs; before tracking, the node made one per
  located joint state).

Each case prints median, mean, p95, p99 and max per joint state, how many were located and how
many of those were full searches. ``--link`` picks the pushed link (``panda_link4``: an
ambiguous answer with many candidates, the tracked set's largest).

With ``PYTHONPATH`` set to an older tree it times that tree's processor (the cases it has):
run it on the commit before localization to compare the ``off`` path. Prints the CPU model.
"""

import argparse
import statistics
import time

import denoc_ros as dr
from denoc_ros.processor import DynamicsProcessor, ProcessorSettings
from denoc_ros.resources import bundled_urdf, example_robot_data_dir
from node_latency import cpu_model   # the benchmarks' one CPU-model reader
import numpy as np

Q7 = np.array([0.3, -0.5, 0.2, -2.0, 0.1, 1.5, 0.4])


def robot(name):
    """Return (URDF path, model, q) of the Panda to time."""
    if name == 'bundled':
        path = bundled_urdf('panda')
    else:
        base = example_robot_data_dir()
        if base is None:
            raise SystemExit('example-robot-data is not installed (make test installs it); '
                             'or use --robot bundled')
        path = base / 'panda_description' / 'urdf' / 'panda.urdf'
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        model = dr.load_urdf(str(path))
    q = np.zeros(model.nq)
    q[:7] = Q7
    return path, model, q


def push_torques(model, geometry, q, link='panda_link7', magnitude=30.0):
    """Return J^T F of a push into ``link``'s surface at its sample nearest the centre."""
    surface = geometry.surfaces[link]
    k = int(np.argmin(np.linalg.norm(surface.points - surface.points.mean(axis=0), axis=1)))
    R, o = dr.frame_pose(model, q, link)
    point, normal = R @ surface.points[k] + o, R @ surface.normals[k]
    J = dr.jacobian(model, q, link)
    Jr = J[:3] - np.cross(point - o, J[3:].T).T   # v_r = v_o + w x (r - o)
    return Jr.T @ (-magnitude * normal)


def time_case(processor, q, effort, messages, rest):
    """
    Return the per-message wall times [s] of ``messages`` joint states after a warm-up.

    The warm-up: ``rest`` (efforts) for 2.5 s, the noise at rest measured as the node does,
    then ``effort`` for 0.3 s (the observer converges: exp(-50 * 0.3) ~ 3e-7).
    """
    zero = np.zeros(processor.model.nv)
    times = []
    lead = 2800
    for k in range(messages + lead):
        t = 5.0 + k / 1000.0
        if k == lead:
            processor.stats.end_period()
        start = time.perf_counter()
        processor.process(t, q, zero, effort if k >= lead - 300 else rest)
        if k >= lead:
            times.append(time.perf_counter() - start)
    return times


def main(argv=None):
    """Time each case and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--messages', type=int, default=2000)
    parser.add_argument('--robot', choices=('example-robot-data', 'bundled'),
                        default='example-robot-data')
    parser.add_argument('--link', default='panda_link7', help='the pushed link')
    args = parser.parse_args(argv)
    path, model, q = robot(args.robot)
    g = dr.gravity_torques(model, q)
    new = hasattr(ProcessorSettings(), 'contact_localization')
    tracking = hasattr(dr, 'ContactTracker')
    geometry = None
    if new and args.robot != 'bundled':
        start = time.perf_counter()
        geometry = dr.load_collision_geometry(str(path))
        points = sum(len(s.points) for s in geometry.surfaces.values())
        print(f'collision geometry: {len(geometry.surfaces)} links, {points} points, loaded in '
              f'{time.perf_counter() - start:.2f} s')
    cases = [('off', ProcessorSettings(), g)]
    if geometry is not None:
        pushed = g - push_torques(model, geometry, q, link=args.link)
        on = ProcessorSettings(contact_localization=True)
        every = ProcessorSettings(contact_localization=True, contact_time_share=0.0)
        cases += [('off, pushed', ProcessorSettings(), pushed), ('on, no contact', on, g),
                  ('on, in contact', every, pushed), ('on, share 0.5', on, pushed)]
        if tracking:
            cases.append(('on, full search', every, pushed))
    print(f'{model.name}: {model.nv} joints; CPU: {cpu_model()}')
    print(f'{"case":<16} {"median us":>10} {"mean us":>10} {"p95 us":>10} {"p99 us":>10} '
          f'{"max us":>10}  located (full searches), last location')
    for name, settings, effort in cases:
        processor = (DynamicsProcessor(model, settings, geometry) if geometry is not None
                     else DynamicsProcessor(model, settings))
        if name == 'on, full search':
            processor._tracker = dr.ContactTracker(
                model, geometry, friction_coefficient=settings.contact_friction_coefficient,
                relative_noise=settings.contact_relative_noise, full_period=1)
        times = time_case(processor, q, effort, args.messages, g)
        last = getattr(processor, 'last_location', None)
        stats = processor.stats
        where = (f'{stats.located} ({getattr(stats, "full_searches", stats.located)}), '
                 f'{last.status} {last.link}' if last is not None else '-')
        print(f'{name:<16} {1e6 * statistics.median(times):>10.1f} '
              f'{1e6 * statistics.fmean(times):>10.1f} '
              f'{1e6 * float(np.percentile(times, 95)):>10.1f} '
              f'{1e6 * float(np.percentile(times, 99)):>10.1f} '
              f'{1e6 * max(times):>10.1f}  {where}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
