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
The physical judgement of a model's bodies: what no rigid body has, or makes M(q) singular.

Each body is judged with its welded links combined, on the model itself (:func:`judge_bodies`):
an inertia that is not positive semi-definite or breaks the triangle inequality A + B >= C
(:func:`_judge_inertia`), a degree of freedom that moves only massless links or a revolute leaf
without inertia about its axis (:func:`_check_moving_mass`), a floating base on which everything
is massless. :func:`denoc_ros.load_urdf` notes mimic joints loaded as independent degrees of
freedom (:func:`_note_mimic`), then judges the model it built; :func:`rejudged_warnings` gives the
warnings of a model whose inertials changed (:func:`denoc_ros.with_inertial_parameters`). Each
condition is noted in a :class:`~denoc_ros.urdf_notes._Notes`: a warning, or a URDFError where
``strict=True`` refuses it. The tolerances are shared with the strict per-link check in
:func:`denoc_ros.urdf_tree._lump_inertials`.
"""

import numpy as np

from .joints import REVOLUTE
from .spatial import parallel_axis
from .urdf_notes import _fmt, _names, _Notes

# Slack on the physical checks of principal moments: relative to the trace, plus the mass times
# a length (a deviation the size of the mass spread over a micrometre is CAD-export round-off).
INERTIA_RTOL = 1e-6
INERTIA_LENGTH_TOL = 1e-6  # m
ZERO_AXIS_INERTIA_RTOL = 1e-12  # "zero" rotational inertia about a revolute axis, rel. to trace


def body_subjects(model):
    """Return how warnings name each body of ``model``: its link and the links welded to it."""
    welded = {}
    for frame in model.frames:
        welded.setdefault(frame.body, []).append(frame.name)

    def subject(link, links):
        others = [name for name in links if name != link]
        if not others:
            return f'link {link!r}'
        more = f' and {len(others) - 3} more' if len(others) > 3 else ''
        return f'link {link!r} (with the welded {_names(others[:3])}{more})'

    return [subject(link, welded.get(i, [])) for i, link in enumerate(model.link_names)]


def judge_bodies(model, notes):
    """
    Note each doubtful body of ``model`` in ``notes``: the loader's judgement of its inertials.

    Lenient (``notes.strict`` false): every body's inertia, a floating base on which everything
    is massless, every degree of freedom that moves no mass or no inertia. Strict: the inertias
    were judged link by link while loading, and a fixed-base model's moving mass raises.
    """
    subjects = body_subjects(model)
    if not notes.strict:
        for i, subject in enumerate(subjects):
            _judge_inertia(subject, model.mass[i], model.inertia[i], notes)
    if model.floating and model.total_mass <= 0.0:
        notes.add(subjects[0], 'the floating base and everything on it are massless: the '
                  'mass matrix is singular (forward dynamics raises)',
                  f'the floating base {model.base_link!r} and everything on it are massless')
    if not model.floating or not notes.strict:  # strict=True keeps its fixed-base-only check
        _check_moving_mass(model, subjects, notes)


def rejudged_warnings(old, new):
    """
    Return ``old.warnings`` with the judgement of ``old``'s bodies replaced by ``new``'s.

    ``new`` is ``old`` with other inertials (same bodies, links and joints). What the loader
    noted about the description itself (urdfdom's leniency, limits, mimic joints: noted before
    the bodies are judged) is kept in its order; then each body is judged again
    (:func:`judge_bodies`), its conditions joining the message of its link as in a load. The
    result is what :func:`denoc_ros.load_urdf` gives for the description with ``new``'s
    inertials.
    """
    before, after = _Notes(False), _Notes(False)
    judge_bodies(old, before)
    judge_bodies(new, after)
    subjects = set(body_subjects(old))
    slots = {}  # a body's subject, or a whole message -> [head, conditions]
    for message in old.warnings:
        subject, glue, rest = message.partition(': ')
        if subject not in subjects or not glue:
            slots[message] = [message, []]
            continue
        judged = '; '.join(condition for _, condition in before.conditions.get(subject, ()))
        if judged and rest == judged:  # the body's judgement alone
            continue
        if judged and rest.endswith('; ' + judged):  # the description's conditions, then it
            rest = rest[:-len(judged) - 2]
        slots[subject] = [subject + glue, [rest]]
    for subject, conditions in after.conditions.items():
        slot = slots.setdefault(subject, [subject + conditions[0][0], []])
        slot[1].extend(condition for _, condition in conditions)
    return tuple(head + '; '.join(conditions) for head, conditions in slots.values())


def _judge_inertia(subject, mass, inertia, notes):
    """Note a body (its welded links combined) whose inertia no rigid body has."""
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    slack = INERTIA_RTOL * abs(float(np.sum(moments))) + mass * INERTIA_LENGTH_TOL ** 2
    if moments[0] < -slack:
        notes.add(subject, f'principal moments {_fmt(moments)} kg m^2: one is negative (the '
                  'inertia is not positive semi-definite)')
    elif moments[2] > moments[0] + moments[1] + slack:
        notes.add(subject, f'principal moments {_fmt(moments)} kg m^2 violate the triangle '
                  'inequality A + B >= C')


def _check_moving_mass(model, subjects, notes):
    """Note a degree of freedom that moves no mass (or no inertia): M(q) is then singular."""
    subtree_mass = [float(m) for m in model.mass]
    has_children = [False] * model.nbodies
    for i in reversed(range(model.nbodies)):
        parent = int(model.parent[i])
        if parent >= 0:
            subtree_mass[parent] += subtree_mass[i]
            has_children[parent] = True
    for j, i in enumerate(model.joint_bodies):
        joint, child = model.joint_names[j], model.link_names[i]
        if subtree_mass[i] <= 0.0:
            notes.add(subjects[i], f'joint {joint!r} moves only massless links (this one and '
                      'everything below it): the mass matrix is singular (forward dynamics '
                      'raises)', f'joint {joint!r} moves no mass: link {child!r} and '
                      'everything below it are massless, so the mass matrix is singular')
        elif model.joint_type[i] == REVOLUTE and not has_children[i]:
            _check_axis_inertia(model, i, joint, subjects[i], notes)


def _check_axis_inertia(model, i, joint, subject, notes):
    """Note a revolute leaf body with no rotational inertia about its axis (a point on it)."""
    about_origin = parallel_axis(model.mass[i], model.com[i], model.inertia[i])
    axis = model.axis[i]
    moment = float(axis @ about_origin @ axis)
    if moment <= ZERO_AXIS_INERTIA_RTOL * float(np.trace(about_origin)):
        notes.add(subject, f'no rotational inertia about the axis of joint '
                  f'{joint!r}: the mass matrix is singular (forward dynamics raises)',
                  f'joint {joint!r} turns link {model.link_names[i]!r}, which has no '
                  'rotational inertia about the joint axis, so the mass matrix is singular')


def _note_mimic(bodies, notes):
    """Note every mimic joint that became an independent degree of freedom (warned always)."""
    for body in bodies:
        if body.joint.mimic is not None:
            notes.add(f'joint {body.joint.name!r}', f'mimics {body.joint.mimic!r}; it is loaded '
                      'as an independent degree of freedom', glue=' ')
