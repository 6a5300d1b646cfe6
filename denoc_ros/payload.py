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
Rigid payloads: a model with an extra mass welded to one of its links.

:func:`attach_payload` returns a **new** model (the input is immutable and stays valid) in which
the payload's mass, centre of mass and inertia are combined exactly into the body that carries
the link (the link may be a moving body or a link lumped into one by a fixed joint, e.g. a
flange or tool frame), by the parallel-axis theorem (Craig ch. 6, seed 002)::

    m = m_b + m_p,   c = (m_b c_b + m_p c_p) / m
    I = I_b + m_b (|d_b|^2 1 - d_b d_b^T) + I_p + m_p (|d_p|^2 1 - d_p d_p^T),   d = c_x - c

all in the body frame (``c_p`` and ``I_p`` are mapped from the link frame with the link's
placement ``model.frame(link)``; :func:`denoc_ros.spatial.combine_inertials` does the sum). A
payload on the fixed base (or a link welded to it) is recorded but changes no dynamics; on a
floating-base model the base is body 0 and carries a payload like any other body (the mass
arrays have ``model.nbodies`` rows either way).

Replacing and removing payloads. Every model returned by this module remembers the model it
was derived from without payloads (its *base model*) and the payloads attached since: the
model object carries that record (an attribute set here, kept by pickling and copying). The
mass properties of a derived model are
always recomputed from the base model's, so ``replace=True`` (drop the payloads recorded on that
link, then attach the new one) and :func:`detach_payload` restore the original numbers bit for
bit instead of subtracting. The record belongs to the returned object only: a model made from it
with ``RobotModel.replace`` (or loaded anew) has no record, so ``replace=True`` there removes
nothing. Keep the model that :func:`attach_payload` returned, or keep the base model yourself
and call ``attach_payload(base, ...)`` again.
"""

from typing import NamedTuple, Tuple

import numpy as np

from .dynamics._state import check_model
from .spatial import check_inertial, combine_inertials, read_only, rotate_inertia
from .urdf_judgement import rejudged_warnings


class Payload(NamedTuple):
    """A rigid payload welded to a link (link-frame data)."""

    link: str
    mass: float
    com: np.ndarray      # (3,) centre of mass in the link frame
    inertia: np.ndarray  # (3, 3) about the centre of mass, link-frame axes


class _Record(NamedTuple):
    base: object                   # the RobotModel without any payload of this module
    payloads: Tuple[Payload, ...]  # in the order they were attached


def _record(model):
    found = vars(model).get('_payload_record')
    return found if found is not None else _Record(model, ())


def _apply(base, payloads):
    """Return ``base`` with every payload combined into its body (mass properties recomputed)."""
    mass, com, inertia = np.array(base.mass), np.array(base.com), np.array(base.inertia)
    for p in payloads:
        frame = base.frame(p.link)
        if frame.body < 0:  # welded to the fixed base (a floating base is body 0, not -1)
            continue  # no effect on the dynamics
        i = frame.body
        c_p = frame.translation + frame.rotation @ p.com
        I_p = rotate_inertia(frame.rotation, p.inertia)
        mass[i], com[i], inertia[i] = combine_inertials(mass[i], com[i], inertia[i],
                                                        p.mass, c_p, I_p)
    model = base.replace(mass=mass, com=com, inertia=inertia)
    model = model.replace(warnings=rejudged_warnings(base, model))  # e.g. a massless link's
    object.__setattr__(model, '_payload_record', _Record(base, tuple(payloads)))
    return model


def attach_payload(model, link, mass, com=(0.0, 0.0, 0.0), inertia=None, replace=False):
    """
    Return a new model with a rigid payload welded to ``link`` (parallel-axis theorem).

    ``mass`` in kg (>= 0); ``com``: its centre of mass in the link's frame; ``inertia``: its
    3x3 rotational inertia about that centre of mass, with the link frame's axes (default zero:
    a point mass). ``link`` is any link the model keeps (a moving body or a link lumped into
    one, such as a flange or tool frame; ``None``: the tip link). ``replace=True`` first
    removes the payloads previously attached to ``link`` by this module (see the module
    docstring for how they are recorded); otherwise the payload is added to whatever is already
    there. The input model is unchanged.
    """
    check_model(model)
    link = model.frame(link).name  # InputError naming the known links if unknown
    if inertia is None:
        inertia = np.zeros((3, 3))
    mass, com, inertia = check_inertial(f'payload on {link!r}', mass, com, inertia)
    record = _record(model)
    kept = tuple(p for p in record.payloads if not (replace and p.link == link))
    payload = Payload(link, mass, read_only(com), read_only(inertia))
    return _apply(record.base, kept + (payload,))


def detach_payload(model, link=None):
    """
    Return the model without the payloads this module attached to ``link`` (all if None).

    The mass properties are recomputed from the base model, so detaching everything gives the
    original numbers exactly. A model without recorded payloads is returned unchanged.
    """
    check_model(model)
    record = _record(model)
    if link is not None:
        link = model.frame(link).name
    kept = tuple(p for p in record.payloads if link is not None and p.link != link)
    if not kept:
        return record.base
    return _apply(record.base, kept)


def attached_payloads(model):
    """Return the payloads recorded on ``model``, in the order they were attached."""
    check_model(model)
    return _record(model).payloads


def base_model(model):
    """Return the model that ``model`` was derived from without payloads (itself if none)."""
    check_model(model)
    return _record(model).base
