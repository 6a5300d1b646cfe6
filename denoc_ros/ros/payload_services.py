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
The ``~/estimate_payload`` service between messages and the library (no node state here).

The node keeps a :class:`~denoc_ros.identification.payload.PayloadWindow` of the joint states
that carry efforts (``payload_window`` seconds of header-stamp time) and, per request, calls
:func:`estimate_payload_response`, which fills a ``denoc_ros_interfaces/srv/EstimatePayload``
response; with ``apply``, :func:`applied_payloads` returns the node's new payload table. The
estimate is the change relative to the model in use, so applying it adds it to whatever that
link carries already (combined into one rigid body by the parallel-axis theorem): the link's
payload becomes what ``~/set_payload`` would have been given for the whole.
"""

import math

import numpy as np

from ..errors import DenocError, InputError
from ..spatial import combine_inertials

__all__ = ['applied_payloads', 'estimate_payload_response', 'stamp_nanoseconds']


def stamp_nanoseconds(stamp):
    """Return a builtin_interfaces/Time as integer nanoseconds (the window's key)."""
    return int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec)


def _fill_failure(response, message):
    response.success = False
    response.message = message
    response.standard_deviation = []
    response.inertia_identified = False
    response.residual_rms = 0.0
    return response


def estimate_payload_response(request, response, window, model, friction=False,
                              joint_names=None):
    """
    Fill ``response`` from ``request`` (link, duration) and the window; return the estimate.

    ``window``: the node's PayloadWindow; ``model``: the model in use (payloads included);
    ``friction``: the node's ``friction`` parameter. On bad input or too little information
    ``success`` is false, ``message`` says why (and what to do) and None is returned; no NaN is
    ever written.
    """
    if model is None:
        _fill_failure(response, 'no robot model loaded yet')
        return None
    duration = float(request.duration)
    if not (math.isfinite(duration) and duration >= 0.0):
        _fill_failure(response, f'duration must be 0 (the whole window) or a positive number '
                      f'of seconds, got {duration}')
        return None
    link = request.link or None
    try:
        estimate, notes = window.estimate_with_notes(model, link, duration, friction)
    except DenocError as err:
        _fill_failure(response, str(err))
        return None
    values = np.concatenate(([estimate.mass], estimate.com, estimate.inertia.reshape(-1),
                             estimate.standard_deviation, [estimate.residual_rms]))
    if not np.all(np.isfinite(values)):
        _fill_failure(response, 'the estimate is not finite (the data are degenerate)')
        return None
    p = response.payload
    p.m = float(estimate.mass)
    p.com.x, p.com.y, p.com.z = (float(v) for v in estimate.com)
    inertia = estimate.inertia
    p.ixx, p.ixy, p.ixz = float(inertia[0, 0]), float(inertia[0, 1]), float(inertia[0, 2])
    p.iyy, p.iyz, p.izz = float(inertia[1, 1]), float(inertia[1, 2]), float(inertia[2, 2])
    response.standard_deviation = [float(v) for v in estimate.standard_deviation]
    response.inertia_identified = bool(estimate.inertia_identified)
    response.residual_rms = float(estimate.residual_rms)
    response.success = True
    what = ('mass, centre of mass and inertia' if estimate.inertia_identified else
            'mass and centre of mass (no motion excited the inertia: a point mass)')
    message = (f'{what} of the payload on {estimate.link} from {estimate.samples} filtered '
               f'states over {window.span() if duration == 0.0 else duration:.3g} s'
               + (', friction included' if friction else ''))
    if notes:
        message += '; ' + '; '.join(notes)
    response.message = message
    return estimate


def applied_payloads(payloads, estimate):
    """
    Return a new payload table with ``estimate`` added to its link's payload.

    ``payloads``: the node's ``{link: (mass, com (3,), inertia (3, 3))}``; the estimate is the
    change relative to the model built from them, so the link's entry becomes the rigid union
    of what it held and the estimate (its own entry if it held nothing).
    """
    if estimate is None:
        raise InputError('no estimate to apply')
    out = dict(payloads)
    mass, com, inertia = estimate.mass, np.asarray(estimate.com), np.asarray(estimate.inertia)
    old = out.get(estimate.link)
    if old is not None:
        m0, c0, i0 = old
        mass, com, inertia = combine_inertials(float(m0), np.asarray(c0, dtype=float),
                                               np.asarray(i0, dtype=float), mass, com, inertia)
    out[estimate.link] = (float(mass), [float(v) for v in com], np.array(inertia, dtype=float))
    return out
