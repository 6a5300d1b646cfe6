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
Joint reaction wrenches: the full force and moment each joint transmits from parent to child.

The DeNOC backward pass (Saha Eq. 30, :mod:`.rnea`) already holds them: the
resultant wrench ``w~_i = [n~_i; f~_i]`` of the composite body (the subtree rooted at body
``i``), at the mass centre ``C_i`` in base-frame axes, is the wrench that the parent applies
through joint ``i`` -- the inertia wrenches of the subtree, its weights (gravity enters as the
base's fictitious acceleration ``-g``) and minus the external wrenches. It is Craig's
``f_i, n_i`` of the inward recursion (seed 002: the force and moment link ``i-1`` exerts on
link ``i``) and the joint constraint-plus-actuation wrench of seed 001. Moved to the joint frame
origin ``O_i`` (``d_i = C_i - O_i``)::

    f_i = f~_i,    n_i = n~_i + d_i x f~_i

Only its projection on the joint's free direction is the actuator's: ``tau_i = e_i . n_i``
(revolute) or ``e_i . f_i`` (prismatic), equal to ``p_i^T w~_i`` of Eq. 30; the other five
components are carried by the bearings.
"""

import numpy as np

from ._packed import packed
from ._state import finish, kernel_arrays, prepare
from .rnea import reaction_wrenches_batch
from ..errors import InputError

FRAMES = ('joint', 'base')


def joint_reaction_wrenches(model, q, qd, qdd, f_ext=None, frame='joint'):
    """
    Return the wrench ``[f_i; n_i]`` each joint transmits from parent to child, ``(..., n, 6)``.

    ``f_i`` is the force and ``n_i`` the moment about the joint frame origin ``O_i`` that the
    parent body (or the base) exerts on body ``i`` through joint ``i`` while the arm moves with
    ``(q, qd, qdd)`` under gravity and the external wrenches ``f_ext`` (as in
    :func:`inverse_dynamics`): Craig's ``f_i, n_i``, from Saha's resultant wrench ``w~_i``
    (Eq. 30). ``frame='joint'`` (default) gives both vectors in joint ``i``'s (= body ``i``'s)
    frame, as Pinocchio's ``data.f[i]`` after ``rnea``; ``frame='base'`` in base-frame axes
    (moment still about ``O_i``). The projection on the joint axis is ``tau_i``: ``n_i . axis``
    for a revolute, ``f_i . axis`` for a prismatic joint.
    """
    if frame not in FRAMES:
        raise InputError(f'frame must be one of {", ".join(repr(f) for f in FRAMES)}, '
                         f'got {frame!r}')
    batch, (q, qd, qdd), f_ext = prepare(model, (('q', q), ('qd', qd), ('qdd', qdd)), f_ext)
    (q, qd, qdd), f_ext = kernel_arrays(model, (q, qd, qdd), f_ext)
    pk = packed(model)
    out = np.empty((q.shape[0], pk.nb, 6))
    reaction_wrenches_batch(pk.ints, pk.reals, q, qd, qdd, f_ext, frame == 'joint', out)
    return finish(batch, out, 'joint_reaction_wrenches')
