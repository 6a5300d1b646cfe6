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
The parameters that identification estimates, and the columns of the full regressor.

Rigid bodies: ten standard inertial parameters per body (:func:`inertial_parameters`), in the
order of :func:`denoc_ros.regressor`. Joints: optional columns for what a motor has to supply
besides the rigid-body torque, with the library's friction model
(:mod:`denoc_ros.friction`)::

    tau = Y(q, qd, qdd) pi + F_v qd + F_c tanh(qd / v_s) + offset + I_a qdd

``viscous`` (``F_v``, the URDF's ``damping``), ``coulomb`` (``F_c``, the URDF's ``friction``;
``tanh`` with the friction model's smoothing ``v_s``, ``v_s = 0``: the exact ``sign``),
``offset`` (a constant torque: a torque sensor's bias, an unmodelled spring's mean), and
``armature`` (the reflected rotor inertia ``I_a``: its column is ``qdd``). Each is one column
per joint, zero except in that joint's row. :class:`ParameterLayout` names every column of
the full regressor ``[Y | joint columns]`` and holds the nominal values (the URDF's, zero
for offsets and armature).
"""

from dataclasses import dataclass
from typing import Tuple

import numpy as np

from ..dynamics._state import check_model, finish, prepare
from ..dynamics.regressor import PARAMETERS_PER_BODY, regressor
from ..errors import InputError
from ..friction import coulomb_sign, DEFAULT_SMOOTHING
from ..spatial import check_inertial, parallel_axis
from ..urdf_judgement import rejudged_warnings

__all__ = ['inertial_parameters', 'with_inertial_parameters', 'ParameterLayout',
           'joint_columns', 'BODY_PARAMETER_NAMES', 'JOINT_TERMS', 'chosen_terms']

BODY_PARAMETER_NAMES = ('m', 'mx', 'my', 'mz', 'Ixx', 'Ixy', 'Iyy', 'Ixz', 'Iyz', 'Izz')
"""The ten parameters of a body: mass, first moments m c, inertia about the frame origin."""

JOINT_TERMS = ('viscous', 'coulomb', 'offset', 'armature')
"""The optional joint columns, in the order they follow the body columns."""

FRICTION_CHOICES = {'none': (), 'viscous': ('viscous',), 'coulomb': ('coulomb',),
                    'viscous+coulomb': ('viscous', 'coulomb')}
"""``denoc_identify --friction`` choices and the joint terms each brings."""


def chosen_terms(friction='viscous+coulomb', offset=False, armature=False):
    """Return the joint terms of a friction choice (:data:`FRICTION_CHOICES`) and the options."""
    if friction not in FRICTION_CHOICES:
        raise InputError(f'friction {friction!r}: choose from {", ".join(FRICTION_CHOICES)}')
    return (FRICTION_CHOICES[friction] + (('offset',) if offset else ())
            + (('armature',) if armature else ()))


def parameters_of(mass, com, inertia):
    """Return the ten parameters of one rigid piece: mass, centre of mass, inertia about it."""
    m, c = float(mass), np.asarray(com, dtype=float)
    I_o = parallel_axis(m, c, np.asarray(inertia, dtype=float))  # about the frame origin
    return np.array([m, m * c[0], m * c[1], m * c[2], I_o[0, 0], I_o[0, 1], I_o[1, 1],
                     I_o[0, 2], I_o[1, 2], I_o[2, 2]])


def inertia_about_origin(p):
    """Return the 3x3 inertia about the frame origin held by ten parameters ``p``."""
    return np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])


def inertial_parameters(model):
    """
    Return the standard inertial parameters of every body, shape ``(10 nbodies,)``.

    Per body, in joint order (for a floating model body 0, the base, comes first):
    ``[m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]``, the centre of mass ``c``
    in the body's joint frame and the inertia about that frame's origin (Pinocchio's
    ``Inertia.toDynamicParameters``). A body is the link a joint moves together with every
    link welded to it (lumped by :func:`denoc_ros.load_urdf`), payloads included.
    """
    check_model(model)
    return np.concatenate([parameters_of(model.mass[i], model.com[i], model.inertia[i])
                           for i in range(model.nbodies)])


def body_inertials(model, pi, check=True, what=None):
    """
    Return ``(mass (nb,), com (nb, 3), inertia about the COM (nb, 3, 3))`` from parameters.

    ``check``: raise InputError naming the body unless each is a physical rigid body (mass
    positive, inertia about the centre of mass positive semi-definite and obeying the triangle
    inequality). Without it, any parameters are accepted (a body of zero mass must have zero
    first moments).
    """
    check_model(model)
    nb = model.nbodies
    try:
        pi = np.asarray(pi, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise InputError(f'inertial parameters must be numbers: {exc}') from None
    if pi.shape != (PARAMETERS_PER_BODY * nb,):
        raise InputError(f'inertial parameters have length {pi.size}, expected '
                         f'{PARAMETERS_PER_BODY * nb} (10 per body, {nb} bodies)')
    if not np.all(np.isfinite(pi)):
        raise InputError('inertial parameters must be finite (no NaN or inf)')
    mass, com, inertia = np.empty(nb), np.empty((nb, 3)), np.empty((nb, 3, 3))
    for i, p in enumerate(pi.reshape(nb, PARAMETERS_PER_BODY)):
        name = (what or 'body {i} (link {link!r})').format(i=i, link=model.link_names[i])
        m, h = float(p[0]), p[1:4]
        if m <= 0.0 and (check or np.any(h != 0.0)):
            raise InputError(f'{name}: mass is {m:g} kg with first moments {h.tolist()}; a '
                             'body needs a positive mass')
        c = h / m if m > 0.0 else np.zeros(3)
        I_c = parallel_axis(-m, c, inertia_about_origin(p))  # back to the centre of mass
        if check:
            m, c, I_c = check_inertial(name, m, c, I_c)
        mass[i], com[i], inertia[i] = m, c, I_c
    return mass, com, inertia


def with_inertial_parameters(model, pi, check=True):
    """
    Return ``model`` with the inertial parameters ``pi`` (the layout of inertial_parameters).

    ``check`` (default): every body must be physically consistent, else InputError naming it.
    ``check=False`` accepts any parameters (inverse dynamics and the regressor stay exact; the
    mass matrix may then not be positive definite). Payloads attached to ``model`` are part of
    its bodies' parameters and become part of the new model's. The new model's ``warnings``
    judge its own bodies, as :func:`denoc_ros.load_urdf` does (a doubtful inertia the new
    parameters fix loses its warning, one they make doubtful gains one); what the loader noted
    about the description itself is kept.
    """
    mass, com, inertia = body_inertials(model, pi, check=check)
    new = model.replace(mass=mass, com=com, inertia=inertia)
    return new.replace(warnings=rejudged_warnings(model, new))


def joint_columns(model, qd, qdd, terms=('viscous', 'coulomb'), smoothing=DEFAULT_SMOOTHING,
                  coulomb=None):
    """
    Return the joint columns of the full regressor, shape ``(..., n, len(terms) n)``.

    ``terms``: any of :data:`JOINT_TERMS`, in that order; term ``k``'s column for joint ``j``
    is column ``k n + j``: ``qd_j`` (viscous), ``tanh(qd_j / smoothing)`` (Coulomb; ``sign``
    for ``smoothing=0``), ``1`` (offset) or ``qdd_j`` (armature), in row ``j`` only. Fixed-base
    models only. ``coulomb`` (optional, like ``qd``) replaces the Coulomb column's values: the
    filtered sign of :class:`denoc_ros.identification.filtering.Samples`.
    """
    check_model(model)
    if model.floating:
        raise InputError('joint_columns: identification takes a fixed-base model')
    unknown = [t for t in terms if t not in JOINT_TERMS]
    if unknown:
        raise InputError(f'unknown joint terms {unknown}; choose from {", ".join(JOINT_TERMS)}')
    terms = [t for t in JOINT_TERMS if t in terms]
    if coulomb is not None and 'coulomb' in terms:
        batch, (qd, qdd, coulomb), _ = prepare(model, (('qd', qd), ('qdd', qdd),
                                                       ('coulomb', coulomb)))
    else:
        batch, (qd, qdd), _ = prepare(model, (('qd', qd), ('qdd', qdd)))
        coulomb = None
    n = model.dof
    out = np.zeros((qd.shape[0], n, len(terms) * n))
    rows = np.arange(n)
    for k, term in enumerate(terms):
        value = {'viscous': lambda: qd,
                 'coulomb': lambda: coulomb_sign(qd, smoothing) if coulomb is None else coulomb,
                 'offset': lambda: np.ones_like(qd), 'armature': lambda: qdd}[term]()
        out[:, rows, k * n + rows] = value
    return finish(batch, out, 'joint_columns')


@dataclass(frozen=True)
class ParameterLayout:
    """
    The columns of the full regressor ``[Y | joint columns]`` of a fixed-base model.

    ``names[k]`` is ``"<link>.<parameter>"`` for a body parameter (the link a joint moves) or
    ``"<joint>.<term>"`` for a joint term; ``nominal`` the model's values (the URDF's
    inertials, damping as viscous and friction as Coulomb coefficients, zero offsets and
    armature).
    """

    joint_terms: Tuple[str, ...]
    names: Tuple[str, ...]
    nominal: np.ndarray
    n: int
    smoothing: float

    @classmethod
    def of(cls, model, joint_terms=(), smoothing=DEFAULT_SMOOTHING):
        """Return the layout for ``model`` with the joint columns ``joint_terms``."""
        check_model(model)
        if model.floating:
            raise InputError('identification takes a fixed-base model (load it without '
                             'floating_base)')
        unknown = [t for t in joint_terms if t not in JOINT_TERMS]
        if unknown:
            raise InputError(f'unknown joint terms {unknown}; choose from '
                             f'{", ".join(JOINT_TERMS)}')
        terms = tuple(t for t in JOINT_TERMS if t in joint_terms)
        names = [f'{link}.{p}' for link in model.link_names for p in BODY_PARAMETER_NAMES]
        names += [f'{joint}.{t}' for t in terms for joint in model.joint_names]
        values = {'viscous': model.damping, 'coulomb': model.friction,
                  'offset': np.zeros(model.dof), 'armature': np.zeros(model.dof)}
        nominal = np.concatenate([inertial_parameters(model)] + [values[t] for t in terms])
        nominal.setflags(write=False)
        return cls(terms, tuple(names), nominal, model.dof, float(smoothing))

    @property
    def size(self):
        """Return the number of columns."""
        return len(self.names)

    @property
    def body_size(self):
        """Return the number of body (inertial) columns, 10 n."""
        return PARAMETERS_PER_BODY * self.n

    def regressor(self, model, q, qd, qdd, coulomb=None):
        """
        Return the full regressor ``[Y | joint columns]``, shape ``(..., n, size)``.

        ``coulomb``: the Coulomb column's values if not ``tanh(qd / smoothing)`` (see
        :func:`joint_columns`).
        """
        Y = regressor(model, q, qd, qdd)
        if not self.joint_terms:
            return Y
        J = joint_columns(model, qd, qdd, self.joint_terms, self.smoothing, coulomb)
        J = np.broadcast_to(J, Y.shape[:-1] + J.shape[-1:])
        return np.concatenate((Y, J), axis=-1)

    def split(self, theta):
        """Return ``(inertial parameters (10 n,), {term: (n,) coefficients})`` of ``theta``."""
        theta = np.asarray(theta, dtype=float)
        nb, n = self.body_size, self.n
        return theta[:nb], {t: theta[nb + k * n:nb + (k + 1) * n]
                            for k, t in enumerate(self.joint_terms)}
