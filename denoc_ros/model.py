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
The immutable kinematic and inertial model of a tree of rigid bodies, with a fixed or free root.

The model holds constants and topology only (Pinocchio's ``Model``); every algorithm is a free
function of ``(model, q, qd, ...)``. The model imports nothing of the dynamics: the kernels'
packed form of a model and its scratch space live in the dynamics layer
(:mod:`denoc_ros.dynamics._packed`, Pinocchio's ``Data``).

Conventions
-----------
* Bodies are numbered ``0 .. nbodies-1``, parents first (``parent[i] < i``); body ``i`` is the
  child link of its joint. ``-1`` is the fixed base (or the world), which is not a body index.
* Joint types (:mod:`denoc_ros.joints`; dispatched in one place,
  :mod:`denoc_ros.dynamics.kinematics`): ``REVOLUTE`` and ``PRISMATIC`` (one position, one
  velocity) and ``FREE_FLYER`` (the root of a floating-base model only: seven positions, six
  velocities, Pinocchio's ``JointModelFreeFlyer``).
* Fixed-base model: body ``i`` is moved by joint ``i``; ``nq = nv = dof = nbodies = n``.
* Floating-base model (:func:`denoc_ros.load_urdf` with ``floating_base=True``): body 0 is the
  root link (with the links welded to it) on a free-flyer joint, bodies ``1 .. n`` follow, and
  ``nq = 7 + n``, ``nv = 6 + n``, ``dof = n`` (the joints in ``joint_names``). Configuration
  ``q = [base position (3), base orientation quaternion x y z w (4), joint positions]``;
  velocity ``v = [base linear velocity (3), base angular velocity (3), joint rates]``, both
  base parts in the base frame (the linear one of the base frame's origin); generalized forces
  ``[base force (3), base torque about the base origin (3)]`` in the base frame, then the
  joint forces. Gravity is in the world frame; the base pose is in the world frame.
* The frame of body ``i`` is the URDF frame of its link, which coincides with the frame of joint
  ``i``. At ``q_i = 0`` it is placed in its parent's frame by ``joint_rotation[i]`` (3x3) and
  ``joint_translation[i]`` (3,), the URDF ``<origin xyz rpy>`` of the joint. The joint moves the
  body about/along ``axis[i]`` (a unit vector in body ``i``'s frame, fixed by the joint motion).
* Inertial data are expressed in the body frame: ``mass[i]``, centre of mass ``com[i]``, and the
  rotational inertia ``inertia[i]`` about the centre of mass with the body frame's axes. Links
  welded to body ``i`` by fixed (or locked) joints are already lumped into these numbers.
* ``frames`` maps every link name that the model keeps (moving bodies and lumped links, plus the
  base and links welded to it) to the body it is rigidly attached to and its placement there.
* Messages and files name their joints in an order of their own: :func:`joint_order` maps them
  onto ``joint_names``.
"""

from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

import numpy as np

from .errors import InputError
from .joints import (FREE_FLYER, JOINT_NQ, JOINT_NV, JOINT_TYPE_NAMES,  # noqa: F401
                     PRISMATIC, REVOLUTE)


@dataclass(frozen=True, eq=False)
class Frame:
    """A named frame rigidly attached to a body (``body == -1``: the fixed base)."""

    name: str
    body: int
    rotation: np.ndarray     # (3, 3) orientation of the frame in the body frame
    translation: np.ndarray  # (3,) origin of the frame in the body frame


def _frozen(a, dtype=float, shape=None):
    arr = np.array(a, dtype=dtype, copy=True)
    if shape is not None and arr.shape != shape:
        raise InputError(f'model array has shape {arr.shape}, expected {shape}')
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class RobotModel:
    """
    Constants and topology of a tree of rigid bodies on a fixed base or a free-flyer root.

    Build one with :func:`denoc_ros.load_urdf`; all arrays are read-only. Use
    :meth:`replace` to derive a modified model (e.g. another gravity vector).
    """

    joint_names: Tuple[str, ...]   # (n,) the 1-DoF joints, in the order of q, v past the base
    link_names: Tuple[str, ...]    # (nbodies,) the link of each body
    parent: np.ndarray             # (nbodies,) int, -1 = base
    joint_type: np.ndarray         # (nbodies,) int, REVOLUTE, PRISMATIC or FREE_FLYER (body 0)
    axis: np.ndarray               # (nbodies, 3) unit joint axis in body frame (0: free-flyer)
    joint_rotation: np.ndarray     # (nbodies, 3, 3) body frame in parent frame at q = 0
    joint_translation: np.ndarray  # (nbodies, 3)
    mass: np.ndarray               # (nbodies,)
    com: np.ndarray                # (nbodies, 3) centre of mass in body frame
    inertia: np.ndarray            # (nbodies, 3, 3) about the centre of mass, body axes
    gravity: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, -9.81]))
    damping: Optional[np.ndarray] = None        # (n,) viscous coefficient, URDF <dynamics damping>
    friction: Optional[np.ndarray] = None       # (n,) Coulomb level, URDF <dynamics friction>
    lower: Optional[np.ndarray] = None          # (n,) position limits (-inf if none)
    upper: Optional[np.ndarray] = None          # (n,) (+inf if none)
    velocity_limit: Optional[np.ndarray] = None  # (n,) (+inf if none)
    effort_limit: Optional[np.ndarray] = None   # (n,) (+inf if none)
    frames: Tuple[Frame, ...] = ()
    base_link: str = 'base'
    name: str = 'robot'
    tip: str = ''  # link named as load_urdf's tip_link ('' = the last body's link)
    warnings: Tuple[str, ...] = ()  # load_urdf's URDFWarning messages, one per doubtful link

    def __post_init__(self):
        put = object.__setattr__
        put(self, 'joint_names', tuple(self.joint_names))
        put(self, 'link_names', tuple(self.link_names))
        put(self, 'warnings', tuple(str(w) for w in self.warnings))
        n = len(self.link_names)
        types = np.asarray(self.joint_type, dtype=np.int64).reshape(-1)
        free = np.flatnonzero(types == FREE_FLYER)
        if free.size and (free.tolist() != [0] or n == 0):
            raise InputError('a free-flyer joint can only be the root body 0')
        if not np.all(np.isin(types, list(JOINT_TYPE_NAMES))):
            raise InputError(f'unknown joint type in {types.tolist()}')
        if len(self.joint_names) != n - free.size:
            raise InputError(f'{len(self.link_names)} link names for {len(self.joint_names)} '
                             'joints')
        put(self, 'parent', _frozen(self.parent, np.int64, (n,)))
        put(self, 'joint_type', _frozen(self.joint_type, np.int64, (n,)))
        put(self, 'axis', _frozen(self.axis, float, (n, 3)))
        put(self, 'joint_rotation', _frozen(self.joint_rotation, float, (n, 3, 3)))
        put(self, 'joint_translation', _frozen(self.joint_translation, float, (n, 3)))
        put(self, 'mass', _frozen(self.mass, float, (n,)))
        put(self, 'com', _frozen(self.com, float, (n, 3)))
        put(self, 'inertia', _frozen(self.inertia, float, (n, 3, 3)))
        put(self, 'gravity', _frozen(self.gravity, float, (3,)))
        dof = len(self.joint_names)
        for name, default in (('damping', 0.0), ('friction', 0.0), ('lower', -np.inf),
                              ('upper', np.inf), ('velocity_limit', np.inf),
                              ('effort_limit', np.inf)):
            value = getattr(self, name)
            put(self, name, _frozen(np.full(dof, default) if value is None else value, float,
                                    (dof,)))
        for i, p in enumerate(self.parent):
            if not -1 <= p < i:
                raise InputError(f'body {i} ({self.link_names[i]!r}) has parent {p}: '
                                 'parents must come first')
        put(self, 'frames', tuple(self.frames))
        put(self, '_frame_index', {f.name: f for f in self.frames})
        # Sizes, fixed with the model (read on every call of the node's hot path).
        floating = bool(free.size)
        put(self, '_sizes', (floating, dof + 7 if floating else dof, dof + 6 if floating else dof))

    @property
    def dof(self) -> int:
        """Return the number n of 1-DoF joints (``joint_names``), the base excluded."""
        return len(self.joint_names)

    @property
    def floating(self) -> bool:
        """Return True if the root body is a free flyer (a floating-base model)."""
        return self._sizes[0]

    @property
    def nbodies(self) -> int:
        """Return the number of bodies (dof, plus the base of a floating model)."""
        return len(self.link_names)

    @property
    def nq(self) -> int:
        """Return the length of a configuration q: n, or 7 + n for a floating base."""
        return self._sizes[1]

    @property
    def nv(self) -> int:
        """Return the length of velocities, accelerations and forces: n, or 6 + n."""
        return self._sizes[2]

    @property
    def joint_bodies(self) -> np.ndarray:
        """Return the body moved by each joint of ``joint_names`` (int array, (n,))."""
        return np.arange(1 if self.floating else 0, self.nbodies)

    @property
    def total_mass(self) -> float:
        """Return the mass of every body together [kg]."""
        return float(np.sum(self.mass))

    @property
    def tip_link(self) -> str:
        """Return the tip link: load_urdf's tip_link, else the last body's link."""
        if self.tip:
            return self.tip
        return self.link_names[-1] if self.link_names else self.base_link

    @property
    def frame_index(self) -> Dict[str, Frame]:
        """Return the mapping from link name to :class:`Frame`."""
        return self._frame_index

    def frame(self, name: Optional[str] = None) -> Frame:
        """Return the frame called ``name`` (default: the tip link); InputError if unknown."""
        key = self.tip_link if name is None or name == '' else name
        try:
            return self._frame_index[key]
        except KeyError:
            known = ', '.join(sorted(self._frame_index)) or '(none)'
            raise InputError(f'unknown frame {key!r}; known frames: {known}') from None

    def children(self, i: int) -> Tuple[int, ...]:
        """Return the indices of the bodies whose parent is ``i`` (``-1``: the base)."""
        return tuple(int(j) for j in np.flatnonzero(self.parent == i))

    def __getstate__(self):
        """Pickle and copy the constants, without the kernels' packed form (rebuilt on use)."""
        state = dict(vars(self))
        state.pop('_kernel_form', None)
        return state

    def replace(self, **changes) -> 'RobotModel':
        """Return a copy of the model with the given fields replaced (no payload record)."""
        fields = {k: getattr(self, k) for k in self.__dataclass_fields__}
        fields.update(changes)
        return RobotModel(**fields)


def joint_order(joint_names, names, what, others=True):
    """
    Return the index in ``names`` of each of ``joint_names``: a message's joints in model order.

    InputError naming ``what`` (e.g. ``'the joint state'``) if a name appears twice, one of
    ``joint_names`` is missing, or (``others=False``) a name is not one of them.
    """
    position = {}
    known = None if others else set(joint_names)
    for k, name in enumerate(names):
        if known is not None and name not in known:
            raise InputError(f'joint {name!r} of {what} is not a joint of the model '
                             f'({", ".join(joint_names)})')
        if name in position:
            raise InputError(f'joint {name!r} appears twice in {what}')
        position[name] = k
    missing = [j for j in joint_names if j not in position]
    if missing:
        raise InputError(f'{what} lacks joint(s) ' + ', '.join(missing))
    return np.array([position[j] for j in joint_names], dtype=np.intp)
