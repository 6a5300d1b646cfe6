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
``denoc_identify``: an arm's inertial parameters and friction from recorded joint states.

Bag in, corrected URDF out::

    denoc_identify --urdf NOMINAL.urdf --data BAG [--data BAG ...] [--validate BAG ...]
                   [--topic /joint_states] [--friction none|viscous|coulomb|viscous+coulomb]
                   [--armature] [--offset] [--base-link L --tip-link L]
                   --output-urdf OUT.urdf --report DIR

Payload only (the arm's URDF, nominal or identified, is taken as right)::

    denoc_identify --urdf ARM.urdf --payload LINK --data BAG [--data BAG ...]
                   [--friction none] --output-urdf OUT.urdf --report DIR

prints the payload on LINK that explains the efforts beyond the URDF (mass, centre of mass,
inertia about it when the motion excited it, standard deviations), writes DIR/report.json and
OUT.urdf: the URDF with the payload as a fixed child link ``LINK_payload``. The arm's friction
is the URDF's ``<dynamics>`` (``--friction none``: no friction); the recordings are filtered
at 20 Hz unless ``--cutoff`` says otherwise.

BAG: a rosbag2 directory, a single ``.db3`` or ``.mcap`` file of sensor_msgs/JointState, a CSV
or an NPZ file (:mod:`denoc_ros.identification.data`). Efforts are joint-side torques [N m] or
forces [N]. Without ``--validate`` the last 20 % of each recording is held out for validation.
Exit status 0 on success (and after Ctrl-C or SIGTERM, with one line saying so); bad data or
arguments: one line on stderr and status 1 (2 for a usage error).
"""

import json
import math
import pathlib
import sys
import time

import numpy as np

from ._cli import add_model_arguments, model_of, Parser, StatusLine, tool_main
from ..errors import DenocError
from ..identification import data as recordings
from ..identification.payload import (estimate_payload, PAYLOAD_CUTOFF,
                                      STANDARD_DEVIATION_NAMES)
from ..identification.pipeline import identify
from ..identification.report import write_report
from ..identification.urdf_output import identified_urdf, payload_urdf

PROG = 'denoc_identify'
HOLD_OUT = 0.2


class Progress:
    """A progress bar on one line of stderr (on a terminal redrawn in place, else every 10 %)."""

    def __init__(self, stream=None, width=30):
        self.line, self.width = StatusLine(stream), width

    def __call__(self, fraction, what):
        """Show ``fraction`` (0..1) of step ``what``."""
        fraction = min(max(float(fraction), 0.0), 1.0)
        filled = int(round(self.width * fraction))
        bar = f'[{"#" * filled}{"." * (self.width - filled)}] {100 * fraction:5.1f} %'
        self.line.show(f'{what:<28} {bar}', (what, int(10 * fraction)))
        if fraction >= 1.0:
            self.line.done()


def _parser():
    parser = Parser(
        prog=PROG, description='Identify inertial parameters and joint friction from recorded '
        'joint states (rosbag2, CSV or NPZ), and write the corrected URDF and a report.')
    add_model_arguments(parser, 'identified chain')
    parser.add_argument('--data', action='append', required=True, metavar='BAG',
                        help='training recording (repeat for several)')
    parser.add_argument('--validate', action='append', default=[], metavar='BAG',
                        help='validation recording (default: the last 20 %% of each --data)')
    parser.add_argument('--topic', default='/joint_states', help='JointState topic in bags')
    parser.add_argument('--cutoff', type=float, default=None,
                        help='low-pass cut-off of the zero-phase filter [Hz]')
    parser.add_argument('--filter-order', type=int, default=None,
                        help='order of the Butterworth filter')
    parser.add_argument('--decimate', type=int, default=None,
                        help='keep every k-th filtered sample (default: automatic)')
    parser.add_argument('--output-urdf', required=True, metavar='OUT.urdf',
                        help='where to write the identified URDF')
    parser.add_argument('--report', required=True, metavar='DIR',
                        help='directory for report.json, plots and index.html')
    parser.add_argument('--no-plots', action='store_true', help='skip the PNG plots')
    parser.add_argument('--payload', default=None, metavar='LINK',
                        help='estimate only the payload on LINK (the URDF is the arm)')
    return parser


def _settings(args):
    kwargs = {} if args.payload is None else {'cutoff': PAYLOAD_CUTOFF}
    if args.cutoff is not None:
        kwargs['cutoff'] = args.cutoff
    if args.filter_order is not None:
        kwargs['order'] = args.filter_order
    if args.decimate is not None:
        kwargs['decimate'] = args.decimate
    return recordings.FilterSettings(**kwargs)


def _split(samples, fraction):
    """Return (first 1 - fraction, last fraction) of a Samples, by time."""
    n = samples.q.shape[0]
    cut = int(math.floor(n * (1.0 - fraction)))
    if cut < 1 or cut >= n:
        raise DenocError(f'{n} samples are too few to hold out {100 * fraction:.0f} % for '
                         'validation; give --validate data')

    return samples.part(slice(0, cut)), samples.part(slice(cut, n))


def _payload(args, text, model, settings, timings, read):
    """Estimate the payload alone; write the URDF and report.json; return the report dict."""
    if args.validate:
        raise DenocError('--validate is not used with --payload (the estimate reports its own '
                         'residual and standard deviations)')
    samples = read(args.data, 'data')
    t0 = time.perf_counter()
    friction = args.friction != 'none'
    stack = {k: np.concatenate([getattr(s, k) for s in samples])
             for k in ('q', 'qd', 'qdd', 'tau', 'coulomb')}
    est = estimate_payload(model, args.payload, stack['q'], stack['qd'], stack['qdd'],
                           stack['tau'], friction=friction,
                           coulomb=stack['coulomb'] if friction else None)
    timings['estimate'] = time.perf_counter() - t0
    output = pathlib.Path(args.output_urdf)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(payload_urdf(text, est.link, est.mass, est.com, est.inertia))
    report = {
        'payload': {'link': est.link, 'mass': est.mass, 'com': est.com.tolist(),
                    'inertia': est.inertia.tolist(),
                    'standard_deviation': dict(zip(STANDARD_DEVIATION_NAMES,
                                                   est.standard_deviation.tolist())),
                    'inertia_identified': est.inertia_identified,
                    'residual_rms': est.residual_rms, 'parameters': est.parameters.tolist(),
                    'excitation': est.excitation, 'constrained': est.constrained,
                    'samples': est.samples, 'segments': sum(s.segments for s in samples),
                    'friction': friction},
        'summary': est.summary(),
        'sources': {'data': list(map(str, args.data)), 'topic': args.topic,
                    'urdf': str(args.urdf)},
        'filter': {k: getattr(settings, k) for k in settings.__dataclass_fields__},
        'timings': timings}
    directory = pathlib.Path(args.report)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / 'report.json').write_text(json.dumps(report, indent=2) + '\n')
    return report


def run(args, stderr=None):
    """Identify as ``args`` say; return the report dict."""
    timings = {}
    progress = Progress(stderr)
    text, model, terms = model_of(args)
    settings = _settings(args)

    def read(paths, what):
        t0 = time.perf_counter()
        out = []
        for k, path in enumerate(paths):
            def step(fraction, k=k, path=path):
                progress((k + fraction) / len(paths), f'reading {what}')
            out.append(recordings.read_recording(path, model.joint_names, topic=args.topic,
                                                 progress=step))
        timings[f'reading {what}'] = time.perf_counter() - t0
        t0 = time.perf_counter()
        prepared = [recordings.prepare_samples(r, settings) for r in out]
        timings[f'filtering {what}'] = time.perf_counter() - t0
        return prepared

    if args.payload is not None:
        return _payload(args, text, model, settings, timings, read)
    training = read(args.data, 'training data')
    if args.validate:
        validation = read(args.validate, 'validation data')
    else:
        pairs = [_split(s, HOLD_OUT) for s in training]
        training = [p[0] for p in pairs]
        validation = [p[1] for p in pairs]
    result = identify(model, training, validation, terms, progress=progress)
    timings.update(result.timings)
    t0 = time.perf_counter()
    inertial, coefficients = result.layout.split(result.physical.theta)
    out_text = identified_urdf(text, model, inertial, coefficients.get('viscous'),
                               coefficients.get('coulomb'))
    output = pathlib.Path(args.output_urdf)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(out_text)
    timings['writing URDF'] = time.perf_counter() - t0
    t0 = time.perf_counter()
    sources = {'training': list(map(str, args.data)), 'validation': list(map(str, args.validate))
               or 'last 20 % of each training recording', 'topic': args.topic}
    config = {'friction': args.friction, 'armature': args.armature, 'offset': args.offset,
              'filter': {k: getattr(settings, k) for k in settings.__dataclass_fields__},
              'base_link': model.base_link, 'tip_link': model.tip_link}
    report = write_report(args.report, result, model, sources, config, timings,
                          plots=not args.no_plots)
    timings['report'] = time.perf_counter() - t0
    return report


def _summary(args, report, seconds):
    """Print what a completed identification found and wrote."""
    if 'payload' in report:
        for line in report['summary'].splitlines():
            print(f'{PROG}: {line}')
        print(f'{PROG}: wrote {args.output_urdf} and '
              f'{pathlib.Path(args.report) / "report.json"} in {seconds:.1f} s')
        return
    v = report['validation']
    base = report['base_parameters']
    print(f'{PROG}: {base["count"]} base parameters, condition number '
          f'{base["condition_number"]:.4g}; validation torque NRMSE: nominal '
          f'{100 * v["nrmse_nominal"]:.2f} %, identified {100 * v["nrmse_identified"]:.2f} %')
    print(f'{PROG}: wrote {args.output_urdf} and {pathlib.Path(args.report) / "index.html"} '
          f'in {seconds:.1f} s')


def main(argv=None):
    """Run the command line; return the exit status."""
    return tool_main(PROG, _parser(), run, argv, _summary)


if __name__ == '__main__':
    sys.exit(main())
