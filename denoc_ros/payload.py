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
placement ``model.frame(link)``). A payload on the base (or a link welded to it) is recorded but
changes no dynamics.

Replacing and removing payloads. Every model returned by this module remembers the model it
was derived from without payloads (its *base model*) and the payloads attached since, in a
registry keyed weakly by the returned model object. The mass properties of a derived model are
always recomputed from the base model's, so ``replace=True`` (drop the payloads recorded on that
link, then attach the new one) and :func:`detach_payload` restore the original numbers bit for
bit instead of subtracting. The record belongs to the returned object only: a model made from it
with ``RobotModel.replace`` (or loaded anew) has no record, so ``replace=True`` there removes
nothing. Keep the model that :func:`attach_payload` returned, or keep the base model yourself
and call ``attach_payload(base, ...)`` again.
"""

from typing import NamedTuple, Tuple
import weakref

import numpy as np

from .dynamics._state import check_model
from .errors import InputError


class Payload(NamedTuple):
    """A rigid payload welded to a link (link-frame data)."""

    link: str
    mass: float
    com: np.ndarray      # (3,) centre of mass in the link frame
    inertia: np.ndarray  # (3, 3) about the centre of mass, link-frame axes


class _Record(NamedTuple):
    base: object                   # the RobotModel without any payload of this module
    payloads: Tuple[Payload, ...]  # in the order they were attached


_RECORDS = weakref.WeakKeyDictionary()


def _record(model):
    found = _RECORDS.get(model)
    return found if found is not None else _Record(model, ())


def check_inertial(what, mass, com, inertia, rtol=1e-9):
    """
    Return ``(mass, com (3,), inertia (3, 3))`` as floats, or raise InputError naming the fault.

    The mass must be finite and >= 0, the inertia symmetric, positive semi-definite and its
    principal moments must satisfy the triangle inequality (``a + b >= c``), which every real
    body does (a point mass, all zero, is allowed). ``rtol`` scales the tolerance of the checks
    by the largest moment.
    """
    try:
        mass = float(mass)
        com = np.array(com, dtype=float).reshape(-1)
        inertia = np.array(inertia, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f'{what}: mass, com and inertia must be numbers: {exc}') from None
    if not np.isfinite(mass) or mass < 0.0:
        raise InputError(f'{what}: mass is {mass}; it must be finite and non-negative')
    if com.shape != (3,) or not np.all(np.isfinite(com)):
        raise InputError(f'{what}: com must be 3 finite numbers (x, y, z in the link frame), '
                         f'got {com.tolist()}')
    if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
        raise InputError(f'{what}: inertia must be a finite 3x3 matrix, got shape '
                         f'{inertia.shape}')
    scale = max(float(np.max(np.abs(inertia))), 1e-300)
    tol = rtol * scale
    if np.max(np.abs(inertia - inertia.T)) > tol:
        raise InputError(f'{what}: inertia is not symmetric: {inertia.tolist()}')
    moments = np.linalg.eigvalsh(0.5 * (inertia + inertia.T))
    if moments[0] < -tol:
        raise InputError(f'{what}: inertia is not positive semi-definite (principal moments '
                         f'{moments.tolist()})')
    if moments[0] + moments[1] < moments[2] - tol:
        raise InputError(f'{what}: the principal moments {moments.tolist()} violate the '
                         'triangle inequality (a + b >= c); no rigid body has this inertia')
    if mass == 0.0 and scale > 1e-300:
        raise InputError(f'{what}: a massless payload cannot have rotational inertia')
    return mass, com, 0.5 * (inertia + inertia.T)


def combine_inertials(m_a, c_a, I_a, m_b, c_b, I_b):
    """Return ``(m, c, I)`` of two rigid bodies welded together (parallel-axis theorem)."""
    m = m_a + m_b
    if m == 0.0:
        return 0.0, np.array(c_a, dtype=float), I_a + I_b
    c = (m_a * c_a + m_b * c_b) / m
    out = I_a + I_b
    for mass, point in ((m_a, c_a), (m_b, c_b)):
        d = point - c
        out = out + mass * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    return m, c, out


def _apply(base, payloads):
    """Return ``base`` with every payload combined into its body (mass properties recomputed)."""
    mass, com, inertia = np.array(base.mass), np.array(base.com), np.array(base.inertia)
    for p in payloads:
        frame = base.frame(p.link)
        if frame.body < 0:
            continue  # welded to the fixed base: no effect on the dynamics
        i = frame.body
        c_p = frame.translation + frame.rotation @ p.com
        I_p = frame.rotation @ p.inertia @ frame.rotation.T
        mass[i], com[i], inertia[i] = combine_inertials(mass[i], com[i], inertia[i],
                                                        p.mass, c_p, I_p)
    model = base.replace(mass=mass, com=com, inertia=inertia)
    _RECORDS[model] = _Record(base, tuple(payloads))
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
    com.setflags(write=False)
    inertia.setflags(write=False)
    return _apply(record.base, kept + (Payload(link, mass, com, inertia),))


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
