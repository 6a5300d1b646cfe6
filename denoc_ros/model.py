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
The immutable kinematic and inertial model of a fixed-base tree of rigid bodies.

The model holds constants and topology only (Pinocchio's ``Model``); every algorithm is a free
function of ``(model, q, qd, ...)`` and keeps its scratch data to itself.

Conventions
-----------
* Bodies are numbered ``0 .. n-1`` in the order of the degrees of freedom; body ``i`` is the
  child link of joint ``i``. ``parent[i] < i`` always holds (parents first); ``-1`` is the fixed
  base, which is not a body index.
* The frame of body ``i`` is the URDF frame of its link, which coincides with the frame of joint
  ``i``. At ``q_i = 0`` it is placed in its parent's frame by ``joint_rotation[i]`` (3x3) and
  ``joint_translation[i]`` (3,), the URDF ``<origin xyz rpy>`` of the joint. The joint moves the
  body about/along ``axis[i]`` (a unit vector in body ``i``'s frame, fixed by the joint motion).
* Inertial data are expressed in the body frame: ``mass[i]``, centre of mass ``com[i]``, and the
  rotational inertia ``inertia[i]`` about the centre of mass with the body frame's axes. Links
  welded to body ``i`` by fixed (or locked) joints are already lumped into these numbers.
* ``frames`` maps every link name that the model keeps (moving bodies and lumped links, plus the
  base and links welded to it) to the body it is rigidly attached to and its placement there.
"""

from dataclasses import dataclass, field
from functools import cached_property
from typing import Dict, Optional, Tuple

import numpy as np

from .errors import InputError

REVOLUTE = 0
PRISMATIC = 1
JOINT_TYPE_NAMES = {REVOLUTE: 'revolute', PRISMATIC: 'prismatic'}


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
    Constants and topology of a fixed-base tree of rigid bodies with 1-DoF joints.

    Build one with :func:`denoc_ros.load_urdf`; all arrays are read-only. Use
    :meth:`replace` to derive a modified model (e.g. another gravity vector).
    """

    joint_names: Tuple[str, ...]
    link_names: Tuple[str, ...]
    parent: np.ndarray             # (n,) int, -1 = base
    joint_type: np.ndarray         # (n,) int, REVOLUTE or PRISMATIC
    axis: np.ndarray               # (n, 3) unit joint axis in body frame
    joint_rotation: np.ndarray     # (n, 3, 3) body frame in parent frame at q = 0
    joint_translation: np.ndarray  # (n, 3)
    mass: np.ndarray               # (n,)
    com: np.ndarray                # (n, 3) centre of mass in body frame
    inertia: np.ndarray            # (n, 3, 3) about the centre of mass, body axes
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

    def __post_init__(self):
        n = len(self.joint_names)
        put = object.__setattr__
        put(self, 'joint_names', tuple(self.joint_names))
        put(self, 'link_names', tuple(self.link_names))
        if len(self.link_names) != n:
            raise InputError(f'{len(self.link_names)} link names for {n} joints')
        put(self, 'parent', _frozen(self.parent, np.int64, (n,)))
        put(self, 'joint_type', _frozen(self.joint_type, np.int64, (n,)))
        put(self, 'axis', _frozen(self.axis, float, (n, 3)))
        put(self, 'joint_rotation', _frozen(self.joint_rotation, float, (n, 3, 3)))
        put(self, 'joint_translation', _frozen(self.joint_translation, float, (n, 3)))
        put(self, 'mass', _frozen(self.mass, float, (n,)))
        put(self, 'com', _frozen(self.com, float, (n, 3)))
        put(self, 'inertia', _frozen(self.inertia, float, (n, 3, 3)))
        put(self, 'gravity', _frozen(self.gravity, float, (3,)))
        for name, default in (('damping', 0.0), ('friction', 0.0), ('lower', -np.inf),
                              ('upper', np.inf), ('velocity_limit', np.inf),
                              ('effort_limit', np.inf)):
            value = getattr(self, name)
            put(self, name, _frozen(np.full(n, default) if value is None else value, float, (n,)))
        for i, p in enumerate(self.parent):
            if not -1 <= p < i:
                raise InputError(f'body {i} ({self.link_names[i]!r}) has parent {p}: '
                                 'parents must come first')
        put(self, 'frames', tuple(self.frames))
        put(self, '_frame_index', {f.name: f for f in self.frames})

    @cached_property
    def packed(self):
        """
        Return the model packed into a few contiguous read-only arrays for the compiled kernels.

        Computed on first use and kept (the model is immutable); see
        :mod:`denoc_ros.dynamics._packed` for the layout.
        """
        from .dynamics._packed import pack_model
        return pack_model(self)

    @property
    def dof(self) -> int:
        """Return the number of degrees of freedom n."""
        return len(self.joint_names)

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

    def replace(self, **changes) -> 'RobotModel':
        """Return a copy of the model with the given fields replaced."""
        fields = {k: getattr(self, k) for k in self.__dataclass_fields__}
        fields.update(changes)
        return RobotModel(**fields)
