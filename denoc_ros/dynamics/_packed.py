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
The kernel form of a model and its workspace: packed arrays, a model handle, scratch space.

The model (:class:`denoc_ros.RobotModel`) holds constants and topology only; everything the
compiled kernels need besides it lives here, in the dynamics layer, as Pinocchio's ``Data``
lives apart from its ``Model``. :func:`packed` returns a model's :class:`PackedModel`, built on
first use and carried by the model from then on (derived constants, read-only, as Pinocchio's
``Model`` holds them); the per-call scratch space is a :class:`~denoc_ros.Workspace`'s, or, for
calls without one, the packed form's own (the kernels hold the GIL, so such calls never overlap).

The kernels take the model as ``ints`` (int64, shape ``(nb, INT_WIDTH)``) and ``reals``
(float64, shape ``(nb + 1 + nframes, BODY_WIDTH)``), because the call overhead of a compiled
function grows with the number of array arguments. Row ``i < nb`` describes body ``i``
(columns named by the constants below): its parent, its joint type, where its joint's
positions and velocities start in ``q`` and ``v`` (a revolute or prismatic joint has one of
each, the free-flyer root 7 and 6), and whether a revolute axis is along a base vector; row
``nb`` holds the gravity vector in its first three columns, the rows after it the frames
(:data:`FRAME_BODY`). Both arrays are read-only. The ``handle`` gives them, with a scratch
space of the model's own, to the single-state entry points as one integer
(:func:`._compile.model_handle`).
"""

from dataclasses import dataclass, field
import threading
from typing import Dict, Tuple

import numpy as np

from ._compile import model_handle
from ..errors import InputError
from ..joints import JOINT_NQ, JOINT_NV, REVOLUTE
from ..model import RobotModel

# Columns of ``ints``.
PARENT = 0         # parent body index, -1 = the fixed base (or the world, for a free root)
JOINT_TYPE = 1     # REVOLUTE, PRISMATIC or FREE_FLYER (denoc_ros.joints)
Q0 = 2             # index of the joint's first position in q
V0 = 3             # index of the joint's first velocity in v (and force in tau)
NV = 4             # number of velocities of the joint: 1, or 6 for the free-flyer
ALIGNED = 5        # a revolute axis along a base vector: +-1, +-2, +-3 for +-x, +-y, +-z; else 0
INT_WIDTH = 6

# Columns of ``reals`` (row i = body i; row n = gravity in GRAVITY .. GRAVITY + 2).
AXIS = 0           # (3) unit joint axis a_i in the body frame
ROTATION = 3       # (9) joint_rotation, row-major: body frame in the parent frame at q_i = 0
TRANSLATION = 12   # (3) joint_translation
MASS = 15          # (1) m_i
COM = 16           # (3) centre of mass in the body frame
INERTIA = 19       # (9) rotational inertia about the centre of mass, body axes, row-major
ROTATION_JA = 28   # (9) joint_rotation @ (a x 1), row-major (Rodrigues: J Rot(a, q) =
ROTATION_JAA = 37  # (9) joint_rotation @ (a x 1)^2             J + sin q J A + (1 - cos q) J A^2)
ROTATED_AXIS = 46  # (3) joint_rotation @ a (prismatic: the joint moves the origin along it)
BODY_WIDTH = 49
GRAVITY = 0

# Frame data for the Jacobian kernels: rotation (9, row-major) and translation (3) in the body.
FRAME_WIDTH = 12
# Row nb + 1 + f of ``reals`` is frame f's (``PackedModel.frame_ids``): its FRAME_WIDTH numbers,
# then its body's index (as a float) in column FRAME_BODY; the single-state Jacobian takes f.
FRAME_BODY = FRAME_WIDTH


@dataclass(frozen=True, slots=True, eq=False)
class PackedModel:
    """
    A model's kernel form and workspace (Pinocchio's ``Data``), kept apart from the model.

    The arrays the kernels read, what the public wrappers check against, and the single-state
    kernels' handle (with the model's scratch space).

    A slotted class rather than a NamedTuple: every single-state call reads three of its
    fields, and a slot is read in a third of the time of a NamedTuple field.
    """

    ints: np.ndarray            # (nb, INT_WIDTH) int64, read-only
    reals: np.ndarray           # (nb + 1 + nframes, BODY_WIDTH) float64, read-only
    nv: int                     # the length of velocity, acceleration and force vectors
    nq: int                     # the length of a configuration q
    nb: int                     # number of bodies
    square: Tuple[int, int]     # (nv, nv)
    jacobian_shape: Tuple[int, int]  # (6, nv)
    frames: Dict[str, Tuple[int, np.ndarray]]  # frame name (None, '': the tip) -> (body,
    #                                             FRAME_WIDTH reals)
    frame_ids: Dict[str, int]   # frame name (None, '': the tip) -> f, its row nb + 1 + f
    handle: object = field(default=None, init=False, repr=False)  # the *_one kernels' model
    keep: object = field(default=None, init=False, repr=False)    # what the handle points to

    def __post_init__(self):
        self.ints.setflags(write=False)
        self.reals.setflags(write=False)
        handle, keep = model_handle(self.ints, self.reals, self.nv)
        object.__setattr__(self, 'handle', handle)
        object.__setattr__(self, 'keep', keep)

    def __reduce__(self):
        """Pickle and copy without the handle: an address means nothing in another process."""
        return (PackedModel, (self.ints, self.reals, self.nv, self.nq, self.nb, self.square,
                              self.jacobian_shape, self.frames, self.frame_ids))


def _read_only(a):
    a.setflags(write=False)
    return a


def aligned_code(joint_type, axis):
    """Return the ALIGNED code of a joint: +-(k + 1) for a revolute axis exactly +-e_k, else 0."""
    if joint_type != REVOLUTE:
        return 0
    for k in range(3):
        for sign in (1, -1):
            if all(axis[j] == (sign if j == k else 0.0) for j in range(3)):
                return sign * (k + 1)
    return 0


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
    ints[:, ALIGNED] = [aligned_code(t, a) for t, a in zip(model.joint_type.tolist(), model.axis)]
    reals = np.zeros((n + 1 + len(model.frames), BODY_WIDTH))
    reals[:n, AXIS:AXIS + 3] = model.axis
    reals[:n, ROTATION:ROTATION + 9] = model.joint_rotation.reshape(n, 9)
    reals[:n, TRANSLATION:TRANSLATION + 3] = model.joint_translation
    reals[:n, MASS] = model.mass
    reals[:n, COM:COM + 3] = model.com
    reals[:n, INERTIA:INERTIA + 9] = model.inertia.reshape(n, 9)
    a = model.axis
    axis_cross = np.zeros((n, 3, 3))  # A = a x 1 (Rodrigues)
    axis_cross[:, 0, 1], axis_cross[:, 0, 2], axis_cross[:, 1, 2] = -a[:, 2], a[:, 1], -a[:, 0]
    axis_cross[:, 1, 0], axis_cross[:, 2, 0], axis_cross[:, 2, 1] = a[:, 2], -a[:, 1], a[:, 0]
    rotated = model.joint_rotation @ axis_cross
    reals[:n, ROTATION_JA:ROTATION_JA + 9] = rotated.reshape(n, 9)
    reals[:n, ROTATION_JAA:ROTATION_JAA + 9] = (rotated @ axis_cross).reshape(n, 9)
    reals[:n, ROTATED_AXIS:ROTATED_AXIS + 3] = np.einsum('nij,nj->ni', model.joint_rotation, a)
    reals[n, GRAVITY:GRAVITY + 3] = model.gravity
    frames, frame_ids = {}, {}
    for f, frame in enumerate(model.frames):
        data = np.concatenate((np.asarray(frame.rotation, dtype=float).reshape(9),
                               np.asarray(frame.translation, dtype=float).reshape(3)))
        frames[frame.name] = (int(frame.body), _read_only(data))
        frame_ids[frame.name] = f
        reals[n + 1 + f, :FRAME_WIDTH] = data
        reals[n + 1 + f, FRAME_BODY] = frame.body
    if model.tip_link in frames:  # the default frame, looked up without a call of tip_link
        frames[None] = frames[''] = frames[model.tip_link]
        frame_ids[None] = frame_ids[''] = frame_ids[model.tip_link]
    nv = model.nv
    return PackedModel(ints=_read_only(ints), reals=_read_only(reals), nv=nv, nq=model.nq, nb=n,
                       square=(nv, nv), jacobian_shape=(6, nv), frames=frames,
                       frame_ids=frame_ids)


_BUILDING = threading.Lock()


def packed(model) -> PackedModel:
    """
    Return the :class:`PackedModel` of ``model``, built on first use; InputError if no model.

    The model carries it (attribute ``_kernel_form``, set once under a lock, dropped when the
    model is pickled or copied, see :meth:`denoc_ros.RobotModel.__getstate__`): constants
    derived from the model's constants, as Pinocchio's ``Model`` holds them. Its handle's
    scratch space serves the calls that bring no :class:`~denoc_ros.Workspace`.
    """
    try:
        return model._kernel_form
    except AttributeError:
        pass
    if not isinstance(model, RobotModel):
        raise InputError(f'model must be a denoc_ros.RobotModel, got {type(model).__name__} '
                         '(load one with denoc_ros.load_urdf)')
    with _BUILDING:  # two threads' first calls: one builds, the other finds it
        pk = vars(model).get('_kernel_form')
        if pk is None:
            pk = pack_model(model)
            object.__setattr__(model, '_kernel_form', pk)
    return pk
