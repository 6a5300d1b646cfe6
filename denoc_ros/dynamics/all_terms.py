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
Everything a controller or the dynamics node needs from one state, in one compiled pass.

Pinocchio's ``computeAllTerms``: one forward kinematics of ``q``, one backward pass of composite
bodies that gives the Christoffel ``C`` (Echeandia & Wensing), the mass matrix ``M`` (Saha Eq.
24) and the gravity torques ``g`` together (:func:`.coriolis.christoffel_terms_state`), then
from those: ``C u`` (the Coriolis torques for ``u = qd``), ``C^T qd`` and ``M qd`` (the momentum
observer's terms), ``M a``; the Jacobian and pose of a frame; with measured efforts ``tau``,
the momentum observer's step (:func:`.momentum_observer.observer_step`), the contact wrench at
the frame (:func:`.momentum_observer.contact_wrench`), the accelerations ``FD(q, qd, tau)``
(articulated body) and the prediction over a horizon (:func:`.prediction.prediction_state`).
Every result lands in a :class:`~denoc_ros.Workspace` the caller owns; nothing is allocated
but the small arrays of the LAPACK calls (the wrench) and the prediction's stages.
"""

import numpy as np

from . import _compile
from ._compile import all_finite, jit, model_arrays, single_state
from ._fast import check_workspace, one_state
from ._state import joint_vector
from .aba import articulated_body_state, singular_error
from .coriolis import christoffel_terms_state
from .jacobian import frame_origin, jacobian_state, resolve_frame
from .kinematics import _R, configuration_ok, configuration_size
from .momentum_observer import contact_wrench, observer_step
from .prediction import prediction_state
from .workspace import Workspace
from ..errors import InputError

__all__ = ['compute_all_terms', 'problems']

# What to compute beyond C, M, g and their products (bits of ``flags``).
FRAME = 1        # the frame's Jacobian and pose
WRENCH = 2       # the contact wrench at the frame from the observer's estimate (needs OBSERVE)
OBSERVE = 4      # one step of the momentum observer (needs tau)
ACCELERATION = 8  # FD(q, qd, tau)
PREDICT = 16     # the state after the horizon under tau held constant (fixed base)

# Rows of the workspace's ``terms`` (K, nv).
G, CU, CTQD, MQD, MA, DDQ, PRED = 0, 1, 2, 3, 4, 5, 6
TERM_ROWS = 9
# Entries of the workspace's ``small``: the frame's rotation (9, row-major) and origin, the
# wrench, the observer's event, the status of the forward dynamics (acceleration and
# prediction: OK, SINGULAR + k or BAD_OUTPUT), whether the observer's estimate and the wrench
# are finite (1.0) or not (0.0).
_ROT, _ORIGIN, _WRENCH, _EVENT, _FD_STATUS, _R_FINITE, _W_FINITE = 0, 9, 12, 18, 19, 20, 21
SMALL = 22


@jit
def all_terms_one(handle, q, qd, u, a, tau, t, obs, gain, r, max_gap, body, frame, damping,
                  threshold, horizon, steps, flags, terms, M, C, J, small):
    """
    Write every term of one state into the workspace's arrays (module docstring); a status.

    ``u`` and ``a`` of length 0: ``u = qd``, ``a = 0``; ``tau`` of length 0: no measured
    efforts (no observer, acceleration or prediction). The status covers the terms of ``q`` and
    ``qd``; the forward dynamics' status and the finiteness of the observer's estimate and of
    the wrench go to ``small`` (so that a singular joint or a diverging observer leaves the
    feed-forward usable).
    """
    ints, reals, work, blocks = model_arrays(handle)
    nv = M.shape[0]
    q, qd = np.ascontiguousarray(q), np.ascontiguousarray(qd)
    u, a, tau = np.ascontiguousarray(u), np.ascontiguousarray(a), np.ascontiguousarray(tau)
    measured = tau.shape[0] > 0
    if not (q.shape[0] == configuration_size(ints) and qd.shape[0] == nv
            and (u.shape[0] == 0 or u.shape[0] == nv) and (a.shape[0] == 0 or a.shape[0] == nv)
            and (not measured or tau.shape[0] == nv) and configuration_ok(ints, q)
            and all_finite(qd) and all_finite(u) and all_finite(a) and all_finite(tau)):
        return _compile.BAD_INPUT
    if (flags & OBSERVE) and not (measured and np.isfinite(t)):
        return _compile.BAD_INPUT
    christoffel_terms_state(ints, reals, q, qd, work, blocks, C, M, terms[G], True)
    if u.shape[0] == 0:
        u = qd
    for i in range(nv):
        cu = 0.0
        ctqd = 0.0
        mqd = 0.0
        ma = 0.0
        for j in range(nv):
            cu += C[i, j] * u[j]
            ctqd += C[j, i] * qd[j]
            mqd += M[i, j] * qd[j]
        if a.shape[0] > 0:
            for j in range(nv):
                ma += M[i, j] * a[j]
        terms[CU, i] = cu
        terms[CTQD, i] = ctqd
        terms[MQD, i] = mqd
        terms[MA, i] = ma
    if flags & FRAME:
        kin, P = work[0], work[1]  # still q's: the Coriolis pass keeps them
        jacobian_state(ints, kin, P, body, frame, J)
        p0, p1, p2 = frame_origin(kin, body, frame)
        small[_ORIGIN], small[_ORIGIN + 1], small[_ORIGIN + 2] = p0, p1, p2
        for row in range(3):
            for col in range(3):
                if body < 0:
                    small[_ROT + 3 * row + col] = frame[3 * row + col]
                else:
                    small[_ROT + 3 * row + col] = (
                        kin[body, _R + 3 * row] * frame[col]
                        + kin[body, _R + 3 * row + 1] * frame[3 + col]
                        + kin[body, _R + 3 * row + 2] * frame[6 + col])
    # Checked before the observer takes the sample: an overflow (a huge velocity) must not
    # reach its state, or the next joint state's estimate would be non-finite too.
    if not (all_finite(terms[:DDQ]) and all_finite(M) and all_finite(C) and all_finite(J)
            and all_finite(small[:_WRENCH])):
        return _compile.BAD_OUTPUT
    if flags & OBSERVE:
        # w = tau - tau_f + C^T qd - g (tau: the efforts less friction, from the caller)
        w = np.empty(nv)
        for i in range(nv):
            w[i] = tau[i] + terms[CTQD, i] - terms[G, i]
        small[_EVENT] = observer_step(obs, gain, max_gap, t, terms[MQD], w, r)
        finite = all_finite(r)
        small[_R_FINITE] = 1.0 if finite else 0.0
        small[_W_FINITE] = 0.0
        if finite and (flags & WRENCH) and (flags & FRAME):
            contact_wrench(J, small[_ROT:_ROT + 9].reshape((3, 3)), r, damping, threshold,
                           small[_WRENCH:_WRENCH + 6])
            small[_W_FINITE] = 1.0 if all_finite(small[_WRENCH:_WRENCH + 6]) else 0.0
    nb = ints.shape[0]
    status = _compile.OK
    if measured and (flags & ACCELERATION):
        status = articulated_body_state(ints, reals, q, qd, tau, np.zeros((0, 6)), work[0],
                                        work[1], work[2], blocks[:nb], blocks[nb], work[3],
                                        terms[DDQ])
        if status == _compile.OK and not all_finite(terms[DDQ]):
            status = _compile.BAD_OUTPUT
    if status == _compile.OK and measured and (flags & PREDICT):
        # FD(q, qd, tau), when computed above, is the first RK4 stage's acceleration
        first = terms[DDQ] if flags & ACCELERATION else terms[DDQ, :0]
        status = prediction_state(ints, reals, q, qd, tau, horizon, steps, work, blocks,
                                  terms[PRED:PRED + 3], first)
        if status == _compile.OK and not all_finite(terms[PRED:PRED + 3]):
            status = _compile.BAD_OUTPUT
    small[_FD_STATUS] = status
    return _compile.OK


_all_terms_one = single_state(all_terms_one, globals(), '_all_terms_one',
                              'vvvvvfovofirfffiimmmmo')


def compute_all_terms(model, q, qd, workspace, u=None, a=None, tau=None, frame=None,
                      observer=None, t=0.0, wrench=False, acceleration=False, horizon=None,
                      substeps=1, damping=0.05, threshold=0.05, strict=True):
    """
    Compute every term of the state ``(q, qd)`` in one pass into ``workspace``; return it.

    Always (Pinocchio's ``computeAllTerms``): ``workspace.g`` = g(q), ``workspace.M`` = M(q),
    ``workspace.C`` the Christoffel ``C(q, qd)``, ``workspace.coriolis`` = ``C(q, qd) u``
    (``u`` default ``qd``: the Coriolis torques), ``workspace.coriolis_transpose`` = ``C^T qd``,
    ``workspace.momentum`` = ``M qd``, ``workspace.inertia`` = ``M a`` (``a`` default 0).
    ``frame`` (a link name; None: skip): ``workspace.J`` and ``workspace.frame_rotation``,
    ``workspace.frame_translation``. With ``tau`` (the efforts, friction already taken off):
    ``observer`` (a :class:`denoc_ros.observer.MomentumObserver` of the model) takes the sample
    at time ``t`` (its ``estimate`` updated; ``workspace.observer_event`` says what it did) and,
    with ``wrench`` and a frame, ``workspace.wrench`` = the contact wrench at the frame
    (:func:`denoc_ros.observer.external_wrench`); ``acceleration``: ``workspace.ddq`` =
    FD(q, qd, tau); ``horizon`` (s, fixed base): ``workspace.prediction`` = (q, qd, qdd) after
    it, ``substeps`` RK4 steps (:func:`denoc_ros.feedforward.predict`).

    Single states (vectors); InputError naming what is wrong otherwise. A singular joint or a
    non-finite acceleration, prediction, estimate or wrench raises too, unless ``strict=False``:
    then the terms are returned and :func:`problems` names what is missing.
    """
    if type(workspace) is not Workspace or workspace.model is not model:
        check_workspace(model, workspace)
    pk = workspace.packed
    if one_state(model, q, qd) is None:
        q, qd = joint_vector(model, 'q', q), joint_vector(model, 'qd', qd)
        if q.ndim != 1:
            raise InputError('compute_all_terms takes one state, not a batch')
    for name, value in (('u', u), ('a', a), ('tau', tau)):
        if value is not None and one_state(model, value) is None:
            raise InputError(f'{name} must be a float64 vector (one state), got '
                             f'{type(value).__name__}')
    flags = 0
    body, data = -1, _NO_FRAME
    if frame is not None:
        known = pk.frames.get(frame)
        body, data = known if known is not None else pk.frames[resolve_frame(model, frame).name]
        flags |= FRAME
    empty = _EMPTY
    if tau is not None:
        if observer is not None:
            flags |= OBSERVE | (WRENCH if wrench and frame is not None else 0)
        if acceleration:
            flags |= ACCELERATION
        if horizon is not None:
            if model.floating:
                raise InputError('the compiled prediction serves fixed-base models')
            flags |= PREDICT
    if observer is not None and observer.model is not model:
        raise InputError('the observer was made for another model')
    obs, gain, r, gap = ((observer.state, observer.gain, observer.estimate, observer.max_gap)
                         if observer is not None else (_NO_STATE, empty, empty, 1.0))
    steps = max(1, int(substeps)) if horizon else 0
    previous = obs[0]
    status = _all_terms_one(
        workspace.handle, q, qd, empty if u is None else u, empty if a is None else a,
        empty if tau is None else tau, float(t), obs, gain, r, gap, body, data,
        float(damping), float(threshold), float(horizon or 0.0), steps, flags,
        workspace.terms, workspace.M, workspace.C, workspace.J, workspace.small)
    if status:
        _raise(model, status, (q, qd, u, a, tau))
    small = workspace.small
    workspace.flags = flags
    if flags & OBSERVE:
        observer.note(small[_EVENT], previous, t)
    if strict and (small[_FD_STATUS] or ((flags & OBSERVE) and not small[_R_FINITE])
                   or ((flags & WRENCH) and not small[_W_FINITE])):
        raise problems(workspace)[0]
    return workspace


_EMPTY = np.zeros(0)
_NO_STATE = np.zeros(2)
_NO_FRAME = np.zeros(12)
_NO_FRAME.setflags(write=False)


def problems(workspace):
    """Return the InputErrors of what the last pass in ``workspace`` could not give."""
    small, model, flags, found = workspace.small, workspace.model, workspace.flags, []
    status = int(small[_FD_STATUS])
    if flags & (ACCELERATION | PREDICT) and status:
        found.append(singular_error(model, status - _compile.SINGULAR)
                     if status >= _compile.SINGULAR else
                     InputError('the forward dynamics are not finite at this state'))
    if flags & OBSERVE and not small[_R_FINITE]:
        found.append(InputError('the external torque estimate is not finite'))
    elif flags & WRENCH and not small[_W_FINITE]:
        found.append(InputError('the external wrench is not finite (a singular Jacobian?)'))
    return found


def _raise(model, status, vectors):
    """Name what the kernel refused (status BAD_INPUT, BAD_OUTPUT or SINGULAR + k)."""
    if status >= _compile.SINGULAR:
        raise singular_error(model, status - _compile.SINGULAR)
    if status == _compile.BAD_OUTPUT:
        raise InputError('compute_all_terms: the result is not finite (an overflow at this '
                         'state?)')
    for name, value in zip(('q', 'qd', 'u', 'a', 'tau'), vectors):
        if value is not None:
            joint_vector(model, name, value, configuration=name == 'q')
    raise InputError('compute_all_terms: the stamp t is not finite')
