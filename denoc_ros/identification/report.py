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
The identification report: ``report.json``, plots (matplotlib, Agg) and an ``index.html``.

``report.json`` holds the base parameters (relation, value, relative standard deviation in %),
the condition number, the identified standard parameters and joint coefficients, the
validation numbers (``validation.nrmse_nominal``, ``validation.nrmse_identified``, per joint
RMS and NRMSE of both models) and the time each step took. The plots show the measured
against the predicted torque of each joint for the nominal and the identified model, and the
residuals, on the validation data, for the joints whose efforts are sensed (the others are in no
metric or plot). ``index.html`` also has a table of every body: nominal and identified mass,
centre of mass and principal moments of inertia, flagging a body that moved far from its nominal
(:data:`FAR`) or lies outside its bound (:mod:`.bounds`).
"""

import html
import json
import pathlib

import numpy as np

__all__ = ['write_report']

PLOT_POINTS = 4000
"""At most this many samples per curve (evenly strided): a plot shows shapes, not every ms."""

FAR = {'mass': 0.5, 'com': 0.05, 'moments': 1.0}
"""A body is flagged when its mass changed by over 50 %, its centre of mass moved over 5 cm, or a
principal moment changed by over 100 % (of the nominal's largest)."""


def _principal(inertia):
    """Return the principal moments of a 3x3 inertia, ascending."""
    return np.linalg.eigvalsh(0.5 * (inertia + inertia.T))


def body_rows(result, model):
    """Return one dict per body: nominal and identified mass, COM, principal moments, flags."""
    from .bounds import bound_margins
    identified = result.model
    margins = (None if result.bounds is None else
               bound_margins(result.layout.split(result.physical.theta)[0], result.bounds))
    nominal_margins = (None if result.bounds is None else
                       bound_margins(result.layout.split(result.layout.nominal)[0],
                                     result.bounds))
    rows = []
    for i, link in enumerate(model.link_names):
        m0, m1 = float(model.mass[i]), float(identified.mass[i])
        c0, c1 = model.com[i], identified.com[i]
        p0, p1 = _principal(model.inertia[i]), _principal(identified.inertia[i])
        flags = []
        if abs(m1 - m0) > FAR['mass'] * max(m0, 1e-9):
            flags.append(f'mass {100 * (m1 - m0) / max(m0, 1e-9):+.0f} %')
        moved = float(np.linalg.norm(c1 - c0))
        if moved > FAR['com']:
            flags.append(f'centre of mass moved {100 * moved:.1f} cm')
        if np.max(np.abs(p1 - p0)) > FAR['moments'] * max(float(p0[-1]), 1e-12):
            flags.append('principal moments changed over 100 %')
        row = {'link': link, 'joint': model.joint_names[i], 'nominal_mass': m0, 'mass': m1,
               'nominal_com': c0.tolist(), 'com': c1.tolist(),
               'nominal_principal_moments': p0.tolist(), 'principal_moments': p1.tolist(),
               'com_moved': moved}
        if margins is not None:
            bound = result.bounds[i]
            row['bound'] = {'source': bound.source, 'centre': bound.centre.tolist(),
                            'semi_axes': bound.semi_axes.tolist(),
                            'margin': float(margins[i]),
                            'nominal_margin': float(nominal_margins[i])}
            if margins[i] < -1e-9:
                flags.append('outside its bound')
        row['flags'] = flags
        rows.append(row)
    return rows


def report_dict(result, model, sources, settings, timings):
    """Return the JSON-ready report of an :class:`.pipeline.Identification`."""
    base = result.base
    fit = result.least_squares
    layout = result.layout
    theta = result.physical.theta
    bodies = {}
    for i, link in enumerate(result.model.link_names):
        bodies[link] = {
            'joint': model.joint_names[i],
            'mass': float(result.model.mass[i]),
            'com': result.model.com[i].tolist(),
            'inertia_about_com': result.model.inertia[i].tolist(),
            'nominal_mass': float(model.mass[i]),
            'nominal_com': model.com[i].tolist(),
        }
    physical = result.physical
    return {
        'status': 'ok' if physical.converged else 'physical fit not converged',
        'robot': model.name,
        'joints': list(model.joint_names),
        'data': sources,
        'settings': settings,
        'samples': {'training': result.samples, 'validation': result.validation['samples']},
        'base_parameters': {
            'count': base.rank,
            'condition_number': fit.condition,
            'weighted': fit.weighted,
            'parameters': [
                {'relation': base.relation_text(k), 'value': float(fit.beta[k]),
                 'sigma_percent': float(fit.sigma_percent[k]),
                 'physical_fit_value': float(base(theta)[k])}
                for k in range(base.rank)],
            'unidentifiable': list(base.unidentifiable()),
        },
        'standard_parameters': {name: {'nominal': float(nominal), 'identified': float(value)}
                                for name, nominal, value in zip(layout.names, layout.nominal,
                                                                theta)},
        'bodies': bodies,
        'body_table': body_rows(result, model),
        'joint_terms': {term: dict(zip(model.joint_names, map(float, values)))
                        for term, values in result.joint_terms.items()},
        'physical_fit': {'iterations': physical.iterations, 'message': physical.message,
                         'converged': physical.converged,
                         'prior_weight': physical.prior_weight},
        'validation': result.validation,
        'timings_s': {k: round(float(v), 3) for k, v in timings.items()},
    }


def _plot(result, model, directory):
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt

    times, measured, nominal, identified = result.predictions
    stride = max(1, times.size // PLOT_POINTS)
    t = times[::stride] - times[0]
    files = []
    sensed = result.validation['joints']
    for j, joint in enumerate(model.joint_names):
        if joint not in sensed:
            continue
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 5.5), sharex=True,
                                          height_ratios=(2, 1))
        top.plot(t, measured[::stride, j], color='black', lw=1.0, label='measured')
        top.plot(t, nominal[::stride, j], color='tab:orange', lw=0.9, label='nominal URDF')
        top.plot(t, identified[::stride, j], color='tab:blue', lw=0.9, ls='--',
                 label='identified')
        top.set_ylabel('effort [N m or N]')
        top.legend(loc='upper right', fontsize=8)
        v = result.validation['joints'][joint]
        top.set_title(f'{joint}: NRMSE nominal {100 * v["nrmse_nominal"]:.2f} %, '
                      f'identified {100 * v["nrmse_identified"]:.2f} %', fontsize=10)
        bottom.plot(t, nominal[::stride, j] - measured[::stride, j], color='tab:orange', lw=0.8,
                    label='nominal - measured')
        bottom.plot(t, identified[::stride, j] - measured[::stride, j], color='tab:blue',
                    lw=0.8, label='identified - measured')
        bottom.axhline(0.0, color='grey', lw=0.5)
        bottom.set_ylabel('residual')
        bottom.set_xlabel('validation time [s]')
        bottom.legend(loc='upper right', fontsize=8)
        fig.tight_layout()
        name = f'torque_{j + 1:02d}_{joint}.png'
        fig.savefig(directory / name, dpi=90)
        plt.close(fig)
        files.append(name)
    # Summary: NRMSE per sensed joint, both models, on a log scale (one bad joint must not
    # flatten the others).
    fig, ax = plt.subplots(figsize=(8, 3.5))
    joints = result.validation['joints']
    names = list(joints)
    x = np.arange(len(names))
    ax.bar(x - 0.2, [100 * joints[j]['nrmse_nominal'] for j in names], 0.4,
           color='tab:orange', label='nominal URDF')
    ax.bar(x + 0.2, [100 * joints[j]['nrmse_identified'] for j in names], 0.4,
           color='tab:blue', label='identified')
    ax.set_xticks(x, names, rotation=30, ha='right', fontsize=8)
    ax.set_yscale('log')
    ax.set_ylabel('torque NRMSE [%]')
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(directory / 'nrmse.png', dpi=90)
    plt.close(fig)
    return ['nrmse.png'] + files


def _body_row(b, vector):
    """Return one row of index.html's table of the bodies."""
    e = html.escape
    bound = 'none'
    if 'bound' in b:
        bound = f'{e(b["bound"]["source"])} ({b["bound"]["margin"]:.3g})'
    style = ' style="background:#fdd"' if b['flags'] else ''
    return (f'<tr{style}><td>{e(b["link"])}</td>'
            f'<td>{b["nominal_mass"]:.4g}</td><td>{b["mass"]:.4g}</td>'
            f'<td>{vector(b["nominal_com"])}</td><td>{vector(b["com"])}</td>'
            f'<td>{vector(b["nominal_principal_moments"])}</td>'
            f'<td>{vector(b["principal_moments"])}</td>'
            f'<td>{bound}</td><td>{e("; ".join(b["flags"]))}</td></tr>')


def _html(report, images):
    e = html.escape
    v = report['validation']
    rows = ''.join(
        f'<tr><td>{e(j)}</td><td>{x["rms_nominal"]:.4g}</td>'
        f'<td>{100 * x["nrmse_nominal"]:.2f}</td><td>{x["rms_identified"]:.4g}</td>'
        f'<td>{100 * x["nrmse_identified"]:.2f}</td></tr>' for j, x in v['joints'].items())
    base = report['base_parameters']
    base_rows = ''.join(
        f'<tr><td>{k + 1}</td><td><code>{e(p["relation"])}</code></td>'
        f'<td>{p["value"]:.6g}</td><td>{p["sigma_percent"]:.3g}</td>'
        f'<td>{p["physical_fit_value"]:.6g}</td></tr>'
        for k, p in enumerate(base['parameters']))
    terms = ''.join(
        f'<tr><td>{e(term)}</td>' + ''.join(f'<td>{value:.4g}</td>' for value in values.values())
        + '</tr>' for term, values in report['joint_terms'].items())
    head = ''.join(f'<th>{e(j)}</th>' for j in report['joints'])
    pictures = ''.join(f'<p><img src="{e(name)}" alt="{e(name)}"></p>' for name in images)
    timing = ', '.join(f'{e(k)} {v:.2f} s' for k, v in report['timings_s'].items())

    def vector(values, digits=3):
        return ' '.join(f'{x:.{digits}g}' for x in values)

    body_rows_html = ''.join(_body_row(b, vector) for b in report['body_table'])
    settings = report.get('settings', {})
    unsensed = settings.get('unsensed') or []
    notes = ''
    if unsensed:
        notes += (f'<p>Unsensed joints (motion used, efforts not, in no metric or plot): '
                  f'{e(", ".join(unsensed))}.</p>')
    if settings.get('effort_scales'):
        notes += ('<p>Efforts scaled: ' + e(', '.join(
            f'{j} x {f:.6g}' for j, f in settings['effort_scales'].items())) + '.</p>')
    if settings.get('effort_warnings'):
        notes += ('<p style="color:#b00">Effort scale warnings:</p><ul>' + ''.join(
            f'<li>{e(text)}</li>' for text in settings['effort_warnings']) + '</ul>')
    window = report['data'].get('validation_window') if isinstance(report['data'], dict) else None
    if window:
        notes += f'<p>Validation window: {e(window)}.</p>'
    fit = report['physical_fit']
    if not fit['converged']:
        notes += (f'<p style="color:#b00"><b>The physically consistent fit did not converge</b> '
                  f'({e(fit["message"])}): its parameters are not the optimum.</p>')
    return f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Identification of {e(report['robot'])}</title>
<style>body{{font-family:sans-serif;max-width:1000px;margin:auto}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:2px 6px;
font-size:90%}}code{{font-size:85%}}</style></head><body>
<h1>Identification of {e(report['robot'])}</h1>
<p>Training samples {report['samples']['training']}, validation samples
{report['samples']['validation']}. Torque NRMSE on the validation data: nominal URDF
<b>{100 * v['nrmse_nominal']:.2f} %</b>, identified <b>{100 * v['nrmse_identified']:.2f} %</b>
(RMS error over the range of the measured effort, mean over the sensed joints). The nominal
URDF's rigid bodies alone: {100 * v['nrmse_nominal_rigid']:.2f} %; with its
<code>&lt;dynamics&gt;</code> friction: {100 * v['nrmse_nominal_with_dynamics']:.2f} %.</p>
{notes}
<p>Time: {timing}.</p>
<h2>Bodies</h2>
<p>Mass [kg], centre of mass [m] in the body's joint frame, principal moments of inertia about
the centre of mass [kg m^2]; the bound the fit kept the body in (its margin: the mean over the
mass of 1 - (x - c)^T S^-1 (x - c), not negative inside). Rows in red moved far from the nominal
(mass over 50 %, centre of mass over 5 cm, a principal moment over 100 % of the largest) or left
their bound.</p>
<table><tr><th>link</th><th>mass nominal</th><th>mass identified</th><th>COM nominal</th>
<th>COM identified</th><th>moments nominal</th><th>moments identified</th><th>bound</th>
<th>flags</th></tr>{body_rows_html}</table>
<h2>Validation per joint</h2>
<table><tr><th>joint</th><th>RMS nominal</th><th>NRMSE nominal [%]</th><th>RMS identified</th>
<th>NRMSE identified [%]</th></tr>{rows}</table>
{pictures}
<h2>Joint terms</h2>
<table><tr><th>term</th>{head}</tr>{terms}</table>
<h2>Base parameters</h2>
<p>{base['count']} base parameters; condition number of the
{'weighted ' if base['weighted'] else ''}base regressor {base['condition_number']:.4g}.
Values by {'weighted ' if base['weighted'] else ''}least squares, with their relative standard
deviation; the last column is the physically consistent fit's value.</p>
<table><tr><th>#</th><th>relation</th><th>value</th><th>&sigma; [%]</th>
<th>physical fit</th></tr>{base_rows}</table>
</body></html>
"""


def write_report(directory, result, model, sources, settings, timings, plots=True):
    """Write ``report.json``, the plots and ``index.html`` into ``directory``; return the dict."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    report = report_dict(result, model, sources, settings, timings)
    (directory / 'report.json').write_text(json.dumps(report, indent=2, allow_nan=True) + '\n')
    images = _plot(result, model, directory) if plots and result.predictions else []
    (directory / 'index.html').write_text(_html(report, images))
    return report
