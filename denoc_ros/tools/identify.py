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
                   [--unsensed JOINT[,JOINT...]] [--effort-scale JOINT=S ...]
                   [--gear-ratio JOINT=N ...] [--torque-constant JOINT=K ...]
                   [--body-radius R | --no-bounds]
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
(one merged file, or one file per quantity joined by commas: ``pos.csv,vel.csv,eff.csv``) or
an NPZ file (:mod:`denoc_ros.identification.data`).

A real robot's recording:

* Efforts must be joint-side torques [N m] or forces [N]. Efforts in motor units are converted
  first, per joint: ``--effort-scale JOINT=S`` (``S`` a number or a product such as
  ``100*0.09``), ``--gear-ratio JOINT=N`` and ``--torque-constant JOINT=K`` (multiplied: torque
  = N K current). Without a scale, a joint whose efforts are more than 3 times off the nominal
  model's torques (their fitted slope over the training data) gets a warning naming the
  factor and the option.
* ``--unsensed JOINT[,JOINT]``: joints without effort sensing (efforts of zero, or of a motor
  current without gravity compensation): their motion is used, their efforts are not, and they
  are in no metric or plot. A joint whose effort column is absent or all NaN is unsensed
  without the option (a line says so).
* Each body is bounded: the physically consistent fit keeps its mass within a bounding
  ellipsoid of its links' ``<collision>`` (else ``<visual>``) geometry, or, without geometry,
  within a sphere around its joint origins ``--body-radius`` wider than they are (default: the
  model's longest joint offset, at least 0.1 m); and heavier than the links locked onto it
  (:mod:`denoc_ros.identification.bounds`). ``--no-bounds``: the pseudo-inertia alone.
* Without ``--validate`` the last 20 % of the moving part of each recording is held out for
  validation (a rest at the end stays out of it, and in the training data).

Exit status 0 on success (and after Ctrl-C or SIGTERM, with one line saying so); bad data or
arguments: one line on stderr and status 1 (2 for a usage error); a failure after the fit: one
line, status 1, and DIR/report.json with the reason and the figures found; a physically
consistent fit that did not converge: everything written, one line saying so, status 3.
"""

import dataclasses
import json
import math
import pathlib
import sys
import time
import warnings

import numpy as np

from ._cli import add_model_arguments, model_of, Parser, StatusLine, tool_main
from ..errors import DataError, DenocError
from ..identification import data as recordings
from ..identification.bounds import body_bounds, locked_parameters
from ..identification.payload import (estimate_payload, PAYLOAD_CUTOFF,
                                      STANDARD_DEVIATION_NAMES)
from ..identification.pipeline import identify, nominal_torques
from ..identification.recording import DataWarning, unsensed_joints
from ..identification.report import write_report
from ..identification.urdf_output import identified_urdf, payload_urdf

PROG = 'denoc_identify'
HOLD_OUT = 0.2
SCALE_WARNING = 3.0
"""Efforts whose fitted slope on the nominal torques is beyond 3 (or below 1/3) are warned of."""
MOVING = 0.01
"""A sample moves if some joint's filtered speed exceeds this [rad/s or m/s]."""
NOT_CONVERGED = 3
"""Exit status of a run whose physically consistent fit did not converge."""


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
    parser.add_argument('--unsensed', action='append', default=[], metavar='JOINT[,JOINT]',
                        help='joints without effort sensing: their motion is used, their '
                        'efforts are not')
    parser.add_argument('--effort-scale', action='append', default=[], metavar='JOINT=S',
                        help="multiply JOINT's efforts by S (e.g. 100*0.09: gear ratio times "
                        'torque constant) to make them joint torques')
    parser.add_argument('--gear-ratio', action='append', default=[], metavar='JOINT=N',
                        help='gear ratio of JOINT (efforts multiplied by it)')
    parser.add_argument('--torque-constant', action='append', default=[], metavar='JOINT=K',
                        help='motor torque constant of JOINT [N m/A] (efforts multiplied by it)')
    parser.add_argument('--body-radius', type=float, default=None, metavar='R',
                        help='a body without geometry stays within R [m] of its joint origins '
                        '(default: the longest joint offset, at least 0.1 m)')
    parser.add_argument('--no-bounds', action='store_true',
                        help='no geometric bound on the bodies (pseudo-inertia only)')
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


def _chain_hint(args):
    """Return the hint to add to an error about a joint the data or options do not match."""
    if args.tip_link is None:
        return (' (if that joint is not part of the arm, choose the chain with '
                '--base-link/--tip-link)')
    return ''


def _joint(args, model, name, option):
    """Return ``name`` if it is a joint of the model, else raise DataError naming the option."""
    if name not in model.joint_names:
        raise DataError(f'{option}: {name!r} is not a joint of the identified chain (its joints: '
                        f'{", ".join(model.joint_names)}){_chain_hint(args)}')
    return name


def _unsensed_option(args, model):
    """Return the set of joints ``--unsensed`` names."""
    out = set()
    for item in args.unsensed:
        for name in filter(None, (x.strip() for x in item.split(','))):
            out.add(_joint(args, model, name, '--unsensed'))
    return out


def _number(text, option, item):
    """Return the float of ``text``: a number or a product of numbers (``100*0.09``)."""
    try:
        value = math.prod(float(x) for x in text.split('*'))
    except ValueError:
        raise DataError(f'{option} {item!r}: {text!r} is not a number (or a product such as '
                        '100*0.09)') from None
    if not (math.isfinite(value) and value != 0.0):
        raise DataError(f'{option} {item!r}: the factor must be finite and non-zero')
    return value


def effort_scales(args, model):
    """
    Return ``{joint: factor}`` from ``--effort-scale``, ``--gear-ratio``, ``--torque-constant``.

    Each is ``JOINT=VALUE`` (repeatable); the factors of one joint multiply (torque = gear
    ratio x torque constant x current).
    """
    scales = {}
    for option, items in (('--effort-scale', args.effort_scale),
                          ('--gear-ratio', args.gear_ratio),
                          ('--torque-constant', args.torque_constant)):
        for item in items:
            name, sep, value = item.partition('=')
            if not sep or not name.strip():
                raise DataError(f'{option} {item!r}: expected JOINT=VALUE')
            name = _joint(args, model, name.strip(), option)
            scales[name] = scales.get(name, 1.0) * _number(value.strip(), option, item)
    return scales


def _moving_split(samples, fraction):
    """
    Return ``(training parts, validation part, note)``: the last ``fraction`` of the moving part.

    The moving part runs from the first to the last sample at which some joint moves faster
    than :data:`MOVING`; rests before and after it stay in the training data.
    """
    n = samples.q.shape[0]
    moving = np.flatnonzero(np.max(np.abs(samples.qd), axis=1) > MOVING)
    if moving.size == 0:
        raise DataError(f'the recording ({n} samples) never moves faster than {MOVING} rad/s; '
                        'give --validate data')
    first, last = int(moving[0]), int(moving[-1]) + 1
    cut = first + int(math.floor((last - first) * (1.0 - fraction)))
    if cut - first < 1 or last - cut < recordings.MIN_SAMPLES:
        raise DataError(f'{last - first} moving samples are too few to hold out '
                        f'{100 * fraction:.0f} % for validation; give --validate data')
    training = [part for part in (samples.part(slice(0, cut)), samples.part(slice(last, n)))
                if part.q.shape[0] > 0]
    t = samples.time
    note = (f't = {t[cut] - t[0]:.3g} to {t[last - 1] - t[0]:.3g} s of {t[-1] - t[0]:.3g} s'
            + (f' (a rest of {t[-1] - t[last - 1]:.3g} s at the end excluded)'
               if last < n else ''))
    return training, samples.part(slice(cut, last)), note


def _scale_warnings(model, samples, sensed, scales):
    """
    Warn of each sensed joint whose efforts are more than 3x off the nominal torques.

    Return ``({joint: fitted slope}, [warning texts])``.
    """
    measured = np.concatenate([s.tau for s in samples])
    nominal = np.concatenate([nominal_torques(model, s, dynamics=False) for s in samples])
    found, said = {}, []

    def warn(text):
        said.append(text)
        warnings.warn(text, DataWarning)

    for j, name in enumerate(model.joint_names):
        if not sensed[j]:
            continue
        m, p = measured[:, j], nominal[:, j]
        denominator = float(p @ p)
        if denominator <= 0.0:
            continue
        slope = float(m @ p) / denominator
        found[name] = slope
        if 1.0 / SCALE_WARNING <= slope <= SCALE_WARNING:
            continue
        given = name in scales
        if abs(slope) < 1e-3:
            advice = (f'no effort sensing? give --unsensed {name}' if not given else
                      f'check --effort-scale {name}')
            warn(f"joint {name!r}: its efforts do not follow the nominal model's "
                 f'torques (fitted slope {slope:.3g}); {advice}')
            continue
        advice = (f'efforts in motor units? give --effort-scale {name}={1.0 / slope:.4g} '
                  '(or --gear-ratio/--torque-constant), or --unsensed ' + name
                  if not given else f'check --effort-scale {name} (now {scales[name]:.4g})')
        warn(f"joint {name!r}: its efforts are {slope:.3g} times the nominal model's "
             f'torques (fitted slope, factor {1.0 / slope:.3g}); {advice}')
    return found, said


def _payload(args, text, model, settings, timings, read):
    """Estimate the payload alone; write the URDF and report.json; return the report dict."""
    if args.validate:
        raise DenocError('--validate is not used with --payload (the estimate reports its own '
                         'residual and standard deviations)')
    samples = read(args.data, 'data')
    missing = [name for j, name in enumerate(model.joint_names)
               if any(np.isnan(s.tau[:, j]).any() for s in samples)]
    if missing:
        raise DataError(f'--payload needs the efforts of every joint of the chain; none for '
                        f'{", ".join(missing)} (choose a shorter chain with --tip-link)')
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


def _recording_with(recording, unsensed, scales):
    """Return the recording with efforts scaled and the unsensed joints' efforts NaN."""
    effort = np.array(recording.effort, dtype=float)
    for j, name in enumerate(recording.joint_names):
        if name in unsensed:
            effort[:, j] = np.nan
        elif name in scales:
            effort[:, j] *= scales[name]
    return dataclasses.replace(recording, effort=effort)


def _bounds(args, text, model):
    """Return the bodies' bounds (None with ``--no-bounds``)."""
    if args.no_bounds:
        return None
    radius = args.body_radius
    if radius is None:
        offsets = np.linalg.norm(model.joint_translation, axis=1)
        radius = max(0.1, float(np.max(offsets, initial=0.0)))
    folder = None
    path = pathlib.Path(str(args.urdf))
    if path.is_file():
        folder = path.parent
    return body_bounds(text, model, radius, folder)


def _after_the_fit(args, result, text, model, sources, config, timings):
    """Write OUT.urdf, report.json, plots and index.html; return the report dict."""
    t0 = time.perf_counter()
    inertial, coefficients = result.layout.split(result.physical.theta)
    out_text = identified_urdf(text, model, inertial, coefficients.get('viscous'),
                               coefficients.get('coulomb'))
    output = pathlib.Path(args.output_urdf)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(out_text, encoding='utf-8')
    timings['writing URDF'] = time.perf_counter() - t0
    t0 = time.perf_counter()
    report = write_report(args.report, result, model, sources, config, timings,
                          plots=not args.no_plots)
    timings['report'] = time.perf_counter() - t0
    return report


def _failure_report(args, reason, result, model, sources, config, timings):
    """Write report.json with the reason of a failure after the fit and what was found."""
    report = {'status': 'failed after the fit', 'error': reason, 'robot': model.name,
              'joints': list(model.joint_names), 'data': sources, 'settings': config,
              'timings_s': {k: round(float(v), 3) for k, v in timings.items()}}
    try:
        report['validation'] = result.validation
        report['physical_fit'] = {'iterations': result.physical.iterations,
                                  'message': result.physical.message,
                                  'converged': result.physical.converged}
        report['standard_parameters'] = {
            name: {'nominal': float(nominal), 'identified': float(value)}
            for name, nominal, value in zip(result.layout.names, result.layout.nominal,
                                            result.physical.theta)}
    except Exception:  # noqa: B902 - the figures are a courtesy; the reason is the point
        pass
    directory = pathlib.Path(args.report)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / 'report.json').write_text(json.dumps(report, indent=2, default=str) + '\n')


def run(args, stderr=None):
    """Identify as ``args`` say; return the report dict."""
    timings = {}
    progress = Progress(stderr)
    text, model, terms = model_of(args)
    settings = _settings(args)
    unsensed = _unsensed_option(args, model)
    scales = effort_scales(args, model)
    absent = {}

    def read(paths, what):
        t0 = time.perf_counter()
        out = []
        for k, path in enumerate(paths):
            def step(fraction, k=k, path=path):
                progress((k + fraction) / len(paths), f'reading {what}')
            try:
                recording = recordings.read_recording(path, model.joint_names,
                                                      topic=args.topic, progress=step)
            except DataError as err:
                message = str(err)
                if any(repr(j) in message for j in model.joint_names):
                    message += _chain_hint(args)
                raise DataError(message) from None
            for name in unsensed_joints(recording):
                absent.setdefault(name, str(path))
            out.append(recording)
        timings[f'reading {what}'] = time.perf_counter() - t0
        return out

    def prepare(raw):
        t0 = time.perf_counter()
        prepared = [recordings.prepare_samples(_recording_with(r, unsensed, scales), settings)
                    for r in raw]
        timings['filtering'] = timings.get('filtering', 0.0) + time.perf_counter() - t0
        return prepared

    if args.payload is not None:
        return _payload(args, text, model, settings, timings,
                        lambda paths, what: prepare(read(paths, what)))
    raw_training = read(args.data, 'training data')
    raw_validation = read(args.validate, 'validation data') if args.validate else []
    for name, where in absent.items():
        if name not in unsensed:
            warnings.warn(f'joint {name!r} has no effort data in {where}: taken as unsensed '
                          '(its motion is used, its efforts are not)', DataWarning)
    unsensed |= set(absent)
    sensed = np.array([j not in unsensed for j in model.joint_names])
    if not sensed.any():
        raise DataError('no joint has sensed efforts: nothing to identify from')
    training = prepare(raw_training)
    slopes, scale_warnings = _scale_warnings(model, training, sensed, scales)
    if args.validate:
        validation = prepare(raw_validation)
        window = 'the --validate recordings'
    else:
        pieces = [_moving_split(s, HOLD_OUT) for s in training]
        training = [part for piece in pieces for part in piece[0]]
        validation = [piece[1] for piece in pieces]
        window = ('last 20 % of the moving part of each training recording: '
                  + '; '.join(piece[2] for piece in pieces))
    bounds = _bounds(args, text, model)
    locked = locked_parameters(text, model)
    result = identify(model, training, validation, terms, progress=progress, sensed=sensed,
                      locked=locked if np.any(locked) else None, bounds=bounds)
    timings.update(result.timings)
    sources = {'training': list(map(str, args.data)), 'validation': list(map(str, args.validate))
               or 'last 20 % of the moving part of each training recording',
               'validation_window': window, 'topic': args.topic}
    config = {'friction': args.friction, 'armature': args.armature, 'offset': args.offset,
              'filter': {k: getattr(settings, k) for k in settings.__dataclass_fields__},
              'base_link': model.base_link, 'tip_link': model.tip_link,
              'unsensed': [j for j in model.joint_names if j in unsensed],
              'effort_scales': scales, 'effort_slopes': slopes,
              'effort_warnings': scale_warnings,
              'bounds': 'none' if bounds is None else 'geometry or joint-origin spheres'}
    try:
        return _after_the_fit(args, result, text, model, sources, config, timings)
    except KeyboardInterrupt:
        raise
    except Exception as err:  # noqa: B902 - whatever fails, the fit's figures are written
        reason = ' '.join(str(err).split()) or type(err).__name__
        _failure_report(args, reason, result, model, sources, config, timings)
        raise DenocError(f'after the fit: {reason} (the reason and the figures found are in '
                         f'{pathlib.Path(args.report) / "report.json"})') from None


def _summary(args, report, seconds):
    """Print what a completed identification found and wrote; return a non-zero caveat."""
    if 'payload' in report:
        for line in report['summary'].splitlines():
            print(f'{PROG}: {line}')
        print(f'{PROG}: wrote {args.output_urdf} and '
              f'{pathlib.Path(args.report) / "report.json"} in {seconds:.1f} s')
        return 0
    v = report['validation']
    base = report['base_parameters']
    unsensed = v.get('unsensed_joints') or []
    which = f' (sensed joints; unsensed: {", ".join(unsensed)})' if unsensed else ''
    print(f'{PROG}: {base["count"]} base parameters, condition number '
          f'{base["condition_number"]:.4g}; validation torque NRMSE{which}: nominal '
          f'{100 * v["nrmse_nominal_rigid"]:.2f} % (rigid bodies; '
          f'{100 * v["nrmse_nominal_with_dynamics"]:.2f} % with the URDF\'s <dynamics>), '
          f'identified {100 * v["nrmse_identified"]:.2f} %')
    print(f'{PROG}: wrote {args.output_urdf} and {pathlib.Path(args.report) / "index.html"} '
          f'in {seconds:.1f} s')
    fit = report['physical_fit']
    if not fit['converged']:
        sys.stderr.write(f'{PROG}: error: the physically consistent fit did not converge '
                         f'({fit["message"]}): its parameters are not the optimum; check the '
                         'effort units (--effort-scale) and --unsensed\n')
        return NOT_CONVERGED
    return 0


def main(argv=None):
    """Run the command line; return the exit status."""
    return tool_main(PROG, _parser(), run, argv, _summary)


if __name__ == '__main__':
    sys.exit(main())
