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
A model packed into two contiguous arrays for the compiled kernels.

The kernels take the model as ``ints`` (int64, shape ``(nb, INT_WIDTH)``) and ``reals``
(float64, shape ``(nb + 1, BODY_WIDTH)``), because the call overhead of a compiled function grows
with the number of array arguments. Row ``i < nb`` describes body ``i`` (columns named by the
constants below): its parent, its joint type, and where its joint's positions and velocities
start in ``q`` and ``v`` (a revolute or prismatic joint has one of each, the free-flyer root 7
and 6); row ``nb`` holds the gravity vector in its first three columns.
:attr:`RobotModel.packed` builds this once per model (the model is immutable) and keeps it;
both arrays are read-only. Its ``handle`` gives them, with a scratch space, to the single-state
entry points as one integer (:func:`._compile.model_handle`).
"""

from dataclasses import dataclass, field
from typing import Dict, Tuple

import numpy as np

from ._compile import model_handle
from ..model import JOINT_NQ, JOINT_NV

# Columns of ``ints``.
PARENT = 0         # parent body index, -1 = the fixed base (or the world, for a free root)
JOINT_TYPE = 1     # REVOLUTE, PRISMATIC or FREE_FLYER (denoc_ros.model)
Q0 = 2             # index of the joint's first position in q
V0 = 3             # index of the joint's first velocity in v (and force in tau)
NV = 4             # number of velocities of the joint: 1, or 6 for the free-flyer
INT_WIDTH = 5

# Columns of ``reals`` (row i = body i; row n = gravity in GRAVITY .. GRAVITY + 2).
AXIS = 0           # (3) unit joint axis a_i in the body frame
ROTATION = 3       # (9) joint_rotation, row-major: body frame in the parent frame at q_i = 0
TRANSLATION = 12   # (3) joint_translation
MASS = 15          # (1) m_i
COM = 16           # (3) centre of mass in the body frame
INERTIA = 19       # (9) rotational inertia about the centre of mass, body axes, row-major
ROTATION_K = 28    # (9) joint_rotation @ (a x 1), row-major (Rodrigues: J Rot(a, q) =
ROTATION_KK = 37   # (9) joint_rotation @ (a x 1)^2             J + sin q J K + (1 - cos q) J K^2)
ROTATED_AXIS = 46  # (3) joint_rotation @ a (prismatic: the joint moves the origin along it)
BODY_WIDTH = 49
GRAVITY = 0

# Frame data for the Jacobian kernels: rotation (9, row-major) and translation (3) in the body.
FRAME_WIDTH = 12


@dataclass(frozen=True, slots=True, eq=False)
class PackedModel:
    """
    The arrays the kernels read, plus what the public wrappers check against.

    A slotted class rather than a NamedTuple: every single-state call reads three of its
    fields, and a slot is read in a third of the time of a NamedTuple field.
    """

    ints: np.ndarray            # (nb, INT_WIDTH) int64, read-only
    reals: np.ndarray           # (nb + 1, BODY_WIDTH) float64, read-only
    n: int                      # nv: the length of velocity, acceleration and force vectors
    nq: int                     # the length of a configuration q
    nb: int                     # number of bodies
    square: Tuple[int, int]     # (nv, nv)
    no_wrench: np.ndarray       # (0, 6) float64 placeholder for f_ext=None
    no_accel: np.ndarray        # (0,) float64 placeholder for zero accelerations
    frames: Dict[str, Tuple[int, np.ndarray]]  # frame name (None, '': the tip) -> (body,
    #                                             FRAME_WIDTH reals)
    handle: object = field(default=None, init=False, repr=False)  # the *_one kernels' model
    keep: object = field(default=None, init=False, repr=False)    # what the handle points to

    def __post_init__(self):
        self.ints.setflags(write=False)
        self.reals.setflags(write=False)
        handle, keep = model_handle(self.ints, self.reals, self.n)
        object.__setattr__(self, 'handle', handle)
        object.__setattr__(self, 'keep', keep)

    def __reduce__(self):
        """Pickle and copy without the handle: an address means nothing in another process."""
        return (PackedModel, (self.ints, self.reals, self.n, self.nq, self.nb, self.square,
                              self.no_wrench, self.no_accel, self.frames))


def _read_only(a):
    a.setflags(write=False)
    return a


def pack_model(model) -> PackedModel:
    """Return the packed arrays of ``model`` (a :class:`denoc_ros.RobotModel`)."""
    n = model.nbodies
    ints = np.zeros((n, INT_WIDTH), dtype=np.int64)
    ints[:, PARENT] = model.parent
    ints[:, JOINT_TYPE] = model.joint_type
    nq_each = np.array([JOINT_NQ[t] for t in model.joint_type.tolist()], dtype=np.int64)
    nv_each = np.array([JOINT_NV[t] for t in model.joint_type.tolist()], dtype=np.int64)
    ints[:, Q0] = np.concatenate(([0], np.cumsum(nq_each)[:-1])) if n else []
    ints[:, V0] = np.concatenate(([0], np.cumsum(nv_each)[:-1])) if n else []
    ints[:, NV] = nv_each
    reals = np.zeros((n + 1, BODY_WIDTH))
    reals[:n, AXIS:AXIS + 3] = model.axis
    reals[:n, ROTATION:ROTATION + 9] = model.joint_rotation.reshape(n, 9)
    reals[:n, TRANSLATION:TRANSLATION + 3] = model.joint_translation
    reals[:n, MASS] = model.mass
    reals[:n, COM:COM + 3] = model.com
    reals[:n, INERTIA:INERTIA + 9] = model.inertia.reshape(n, 9)
    K = np.zeros((n, 3, 3))
    a = model.axis
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -a[:, 2], a[:, 1], -a[:, 0]
    K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = a[:, 2], -a[:, 1], a[:, 0]
    JK = model.joint_rotation @ K
    reals[:n, ROTATION_K:ROTATION_K + 9] = JK.reshape(n, 9)
    reals[:n, ROTATION_KK:ROTATION_KK + 9] = (JK @ K).reshape(n, 9)
    reals[:n, ROTATED_AXIS:ROTATED_AXIS + 3] = np.einsum('nij,nj->ni', model.joint_rotation, a)
    reals[n, GRAVITY:GRAVITY + 3] = model.gravity
    frames = {}
    for frame in model.frames:
        data = np.concatenate((np.asarray(frame.rotation, dtype=float).reshape(9),
                               np.asarray(frame.translation, dtype=float).reshape(3)))
        frames[frame.name] = (int(frame.body), _read_only(data))
    if model.tip_link in frames:  # the default frame, looked up without a call of tip_link
        frames[None] = frames[''] = frames[model.tip_link]
    nv = model.nv
    return PackedModel(ints=_read_only(ints), reals=_read_only(reals), n=nv, nq=model.nq, nb=n,
                       square=(nv, nv),
                       no_wrench=np.zeros((0, 6)), no_accel=np.zeros(0),
                       frames=frames)
