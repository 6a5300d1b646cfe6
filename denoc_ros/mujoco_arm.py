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
A URDF arm stepped by MuJoCo: the physics engine, not ours, that the closed loop is tested on.

MuJoCo compiles the same URDF the dynamics library loads. Its URDF import differs from a
robot's rigid-body model in known ways, each turned off here so that both sides describe the
same mechanism:

* visual and collision geometry is stripped (``discardvisual``) and contacts are disabled;
* inertias come from the URDF (``inertiafromgeom="false"``), bodies are neither fused
  (``fusestatic="false"``) nor rebalanced (``balanceinertia="false"``);
* joint armature, damping, friction loss and joint-limit constraints are zeroed or disabled
  (``keep_joint_dynamics=True`` keeps damping/friction loss from the URDF's ``<dynamics>``);
* gravity is set explicitly; the integrator is RK4 at ``timestep``.

Efforts are applied as generalised forces (``qfrc_applied``) in the model's joint order, as an
effort interface of ros2_control applies them.

An external wrench (a push on the arm) is given on a URDF link, force and torque in the axes of
the link's frame, applied at its origin (torque about the origin): the convention of the
dynamics node's wrench estimate. Every link of the URDF is a MuJoCo body, links welded to their
parent by fixed joints too (``fusestatic="false"``). MuJoCo's ``xfrc_applied`` takes the wrench
in world axes at the body's centre of mass, so before every step it is recomputed from the
link's pose: ``f_w = R f``, ``t_com = R t + (origin - com) x f_w``; it is held over the step.

A payload (``payload=(link, mass, com, inertia)``, link-frame centre of mass and inertia about
it) is an extra URDF link welded to ``link`` by a fixed joint: a rigid body the dynamics library
never sees.

Joint friction with the library's law (``friction=(viscous, coulomb)``, each one value, one
per joint or a ``{joint: value}`` mapping (joints not named: 0), and
``smoothing`` ``v_s``): ``f(qd) = v qd + c tanh(qd / v_s)``, the law of
:func:`denoc_ros.friction.friction_torques`. MuJoCo's own ``frictionloss`` is a soft
constraint that acts as a damper at low speed (below ~0.3 rad/s with the default ``solref``;
measured on a UR5e's wrist it stayed 0.1 to 0.5 N m rms away from a 0.8 N m Coulomb law even at
``solref`` = 2 timesteps), so it is not used: the friction torque is applied by this class,
implicit in the velocity so that the steep ``tanh`` stays stable: at each time step, with
``M`` and the bias forces ``b`` at the current state, the end-of-step velocity ``w`` of
``M (w - qd) = h (tau - b - f(w))`` (backward Euler on the friction) is found by Newton's
method with backtracking on the convex potential it is the minimum of, and the torque held
over the step is ``f(w)``: the law itself at that velocity, so never beyond ``c + v |w|``.
(Its linearisation, holding ``f(qd) + f'(qd) dqd``, is not bounded: near zero velocity the
slope ``c / v_s`` made it hold 7.6 N m against a 0.4 N m Coulomb level, a stiction the law does
not have.) ``applied_friction`` holds its mean over the last :meth:`step`.

Efforts as a driver reports them: :attr:`applied_effort` is the motor effort held over the
last :meth:`step` call (zero-order hold, so also its mean), to be stamped with the time that
step closes.
"""

from collections.abc import Mapping
import xml.etree.ElementTree as ET

import numpy as np

from .errors import InputError, URDFError

_STRIPPED = ('visual', 'collision')
_DROPPED = ('transmission', 'gazebo', 'ros2_control', 'mujoco')


def mujoco_urdf(urdf_xml, payload=None):
    """Return the URDF with geometry stripped, MuJoCo's compiler options and any payload added."""
    if payload is not None:
        from .identification.urdf_output import payload_urdf
        urdf_xml = payload_urdf(urdf_xml, *payload)
    try:
        root = ET.fromstring(urdf_xml)
    except ET.ParseError as err:
        raise URDFError(f'URDF for MuJoCo: malformed XML: {err}') from None
    for child in list(root):
        if child.tag in _DROPPED:
            root.remove(child)
    for link in root.findall('link'):
        for tag in _STRIPPED:
            for element in link.findall(tag):
                link.remove(element)
    extension = ET.SubElement(root, 'mujoco')
    ET.SubElement(extension, 'compiler', discardvisual='true', fusestatic='false',
                  balanceinertia='false', inertiafromgeom='false', angle='radian')
    return ET.tostring(root, encoding='unicode')


class MujocoArm:
    """A fixed-base arm simulated by MuJoCo, addressed by joint names."""

    def __init__(self, urdf_xml, gravity=(0.0, 0.0, -9.81), timestep=1e-3,
                 keep_joint_dynamics=False, payload=None, friction=None, smoothing=1e-3):
        import mujoco
        self._mj = mujoco
        xml = mujoco_urdf(urdf_xml, payload)   # InputError for a bad payload, URDFError
        try:
            self.model = mujoco.MjModel.from_xml_string(xml)
        except ValueError as err:
            raise URDFError(f'MuJoCo cannot compile the URDF: {err}') from None
        m = self.model
        m.opt.timestep = float(timestep)
        m.opt.integrator = mujoco.mjtIntegrator.mjINT_RK4
        m.opt.gravity[:] = np.asarray(gravity, dtype=float)
        m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT
                               | mujoco.mjtDisableBit.mjDSBL_LIMIT)
        m.dof_armature[:] = 0.0
        if not keep_joint_dynamics:
            m.dof_damping[:] = 0.0
            m.dof_frictionloss[:] = 0.0
        kinds = (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE))
        joints = [j for j in range(m.njnt) if int(m.jnt_type[j]) in kinds]
        if len(joints) != m.nv:
            raise URDFError('MuJoCo model has free or ball joints; only revolute/prismatic arms')
        self.joint_names = tuple(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
                                 for j in joints)
        self._qpos = np.array([m.jnt_qposadr[j] for j in joints])
        self._dof = np.array([m.jnt_dofadr[j] for j in joints])
        self.data = mujoco.MjData(m)
        self._effort = np.zeros(m.nv)
        self.link_names = tuple(mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)
                                for b in range(1, m.nbody))
        self._wrench = None         # (link, body id, force, torque), link axes at its origin
        self._friction = None
        if friction is not None:
            viscous, coulomb = (self._per_joint('friction', x) for x in friction)
            if not (np.all(viscous >= 0.0) and np.all(coulomb >= 0.0) and smoothing > 0.0):
                raise InputError('friction: non-negative viscous and Coulomb coefficients and a '
                                 'positive smoothing expected')
            m.dof_damping[:] = 0.0
            m.dof_frictionloss[:] = 0.0
            self._friction = (viscous, coulomb, float(smoothing))
            self._mass = np.zeros((m.nv, m.nv))
        self.applied_effort = np.zeros(self.dof)
        self.applied_friction = np.zeros(self.dof)

    def _per_joint(self, name, values):
        """Return ``(dof,)`` floats from one value, one per joint, or a ``{joint: value}`` map."""
        if isinstance(values, Mapping):
            unknown = [j for j in values if j not in self.joint_names]
            if unknown:
                raise InputError(f'{name}: unknown joint(s) {", ".join(map(str, unknown))}; '
                                 f'the joints are {", ".join(self.joint_names)}')
            return np.array([float(values.get(j, 0.0)) for j in self.joint_names])
        try:
            return np.broadcast_to(np.asarray(values, dtype=float), (self.dof,)).copy()
        except ValueError:
            raise InputError(f'{name}: one value or {self.dof} (one per joint) expected, got '
                             f'{values!r}') from None

    @property
    def dof(self):
        """Return the number of joints."""
        return len(self.joint_names)

    @property
    def time(self):
        """Return the simulated time [s]."""
        return float(self.data.time)

    def _vector(self, name, values):
        v = np.asarray(values, dtype=float)
        if v.shape != (self.dof,) or not np.all(np.isfinite(v)):
            raise InputError(f'{name} must be {self.dof} finite values, got {values!r}')
        return v

    def set_state(self, q, qd=None):
        """Place the arm at positions ``q`` with velocities ``qd`` (default 0)."""
        self.data.qpos[self._qpos] = self._vector('q', q)
        self.data.qvel[self._dof] = 0.0 if qd is None else self._vector('qd', qd)
        self._mj.mj_forward(self.model, self.data)

    def state(self):
        """Return ``(q, qd)`` in joint-name order."""
        return self.data.qpos[self._qpos].copy(), self.data.qvel[self._dof].copy()

    @property
    def effort(self):
        """Return the effort being applied (held until the next command)."""
        return self._effort.copy()

    def set_effort(self, effort):
        """Apply joint efforts from now on (zero-order hold)."""
        self._effort = self._vector('effort', effort)
        self.data.qfrc_applied[:] = 0.0
        self.data.qfrc_applied[self._dof] = self._effort

    def set_external_wrench(self, link, force, torque):
        """
        Push on ``link`` from now on (replacing any wrench set before) until cleared.

        ``force`` [N] and ``torque`` [N m] are 3-vectors in the axes of the link's frame, the
        force applied at the link frame's origin and the torque about that origin. A zero
        wrench clears it. Raise InputError for an unknown link or non-finite values.
        """
        if link not in self.link_names:
            raise InputError(f'unknown link {link!r}; known links: {", ".join(self.link_names)}')
        f = np.asarray(force, dtype=float)
        t = np.asarray(torque, dtype=float)
        if f.shape != (3,) or t.shape != (3,) or not (np.all(np.isfinite(f))
                                                      and np.all(np.isfinite(t))):
            raise InputError(f'external wrench on {link}: force and torque must be 3 finite '
                             f'values each, got {force!r}, {torque!r} (non-finite or too few)')
        if not (np.any(f) or np.any(t)):
            self.clear_external_wrench()
            return
        body = self._mj.mj_name2id(self.model, self._mj.mjtObj.mjOBJ_BODY, link)
        self._wrench = (link, body, f.copy(), t.copy())
        self._apply_external_wrench()

    def clear_external_wrench(self):
        """Remove the external wrench."""
        self._wrench = None
        self.data.xfrc_applied[:] = 0.0

    @property
    def external_wrench(self):
        """Return ``(link, force, torque)`` of the wrench being applied (link axes), or None."""
        if self._wrench is None:
            return None
        link, _, f, t = self._wrench
        return link, f.copy(), t.copy()

    def _kinematics(self):
        """Bring the body poses (and MuJoCo's Jacobian data) up to date with qpos."""
        self._mj.mj_kinematics(self.model, self.data)
        self._mj.mj_comPos(self.model, self.data)

    def _apply_external_wrench(self):
        """Write the wrench into ``xfrc_applied``: world axes, at the body's centre of mass."""
        self.data.xfrc_applied[:] = 0.0
        if self._wrench is None:
            return
        _, body, f, t = self._wrench
        self._kinematics()
        rotation = self.data.xmat[body].reshape(3, 3)        # link axes -> world axes
        force = rotation @ f
        torque = rotation @ t + np.cross(self.data.xpos[body] - self.data.xipos[body], force)
        self.data.xfrc_applied[body, :3] = force
        self.data.xfrc_applied[body, 3:] = torque

    def external_joint_forces(self):
        """
        Return the generalised forces of the external wrench at the current state, J^T F.

        In joint-name order, MuJoCo's own Jacobian at the link origin (zero without a wrench):
        tau_ext of M qdd + C qd + g = tau + tau_ext.
        """
        qfrc = np.zeros(self.model.nv)
        if self._wrench is not None:
            _, body, f, t = self._wrench
            self._kinematics()
            rotation = self.data.xmat[body].reshape(3, 3)
            self._mj.mj_applyFT(self.model, self.data, rotation @ f, rotation @ t,
                                self.data.xpos[body].copy(), body, qfrc)
        return qfrc[self._dof]

    def _friction_torque(self):
        """Return the friction torque to hold over the next step (module docstring)."""
        viscous, coulomb, v_s = self._friction
        mj, m, d = self._mj, self.model, self.data
        mj.mj_forward(m, d)
        mj.mj_fullM(m, d, self._mass)
        h = m.opt.timestep
        M = self._mass[np.ix_(self._dof, self._dof)]
        rhs = self._effort - d.qfrc_bias[self._dof]
        if self._wrench is not None:
            rhs = rhs + self.external_joint_forces()
        qd = d.qvel[self._dof]
        b = M @ qd + h * rhs
        diagonal = np.diag_indices(len(qd))

        def gradient(x):    # of the convex potential below; zero at the end-of-step velocity
            th = np.tanh(x / v_s)
            return M @ x + h * (viscous * x + coulomb * th) - b, th

        def potential(x):
            y = np.abs(x / v_s)
            log_cosh = y + np.log1p(np.exp(-2.0 * y)) - np.log(2.0)
            friction = 0.5 * viscous * x * x + coulomb * v_s * log_cosh
            return 0.5 * x @ M @ x - b @ x + h * np.sum(friction)
        x = qd.copy()
        g, th = gradient(x)
        for iteration in range(60):   # Newton; backtracking when |gradient| does not fall
            A = M.copy()
            A[diagonal] += h * (viscous + coulomb * (1.0 - th * th) / v_s)
            step = np.linalg.solve(A, g)
            if iteration == 0 and np.all(np.abs(x) > 20 * v_s) and np.all(
                    (x - step) * np.sign(x) > 20 * v_s):
                x = x - step   # tanh flat at both ends, same sign: the linear step is exact
                break
            if np.abs(step).max() <= 1e-10 * v_s:   # converged: f exact to ~1e-10 c
                x = x - step
                break
            t = 1.0
            new, new_th = gradient(x - step)
            if np.abs(new).max() >= np.abs(g).max():
                now, tolerance = potential(x), 1e-14 * (abs(potential(x)) + 1e-12)
                while potential(x - t * step) > now + tolerance and t > 1e-6:
                    t *= 0.5
                new, new_th = gradient(x - t * step)
            x, g, th = x - t * step, new, new_th
        return viscous * x + coulomb * np.tanh(x / v_s)

    def step(self, steps=1):
        """Advance the simulation by ``steps`` time steps (the wrench recomputed before each)."""
        steps = int(steps)
        friction = np.zeros(self.dof)
        for _ in range(steps):
            if self._wrench is not None:
                self._apply_external_wrench()
            if self._friction is not None:
                f = self._friction_torque()
                friction += f
                self.data.qfrc_applied[self._dof] = self._effort - f
            self._mj.mj_step(self.model, self.data)
        self.applied_effort = self._effort.copy()
        self.applied_friction = friction / max(steps, 1)

    def forward_dynamics(self, q, qd, effort):
        """Return MuJoCo's joint accelerations at a state (does not change the simulation)."""
        data = self._mj.MjData(self.model)
        data.qpos[self._qpos] = self._vector('q', q)
        data.qvel[self._dof] = self._vector('qd', qd)
        data.qfrc_applied[self._dof] = self._vector('effort', effort)
        self._mj.mj_forward(self.model, data)
        return data.qacc[self._dof].copy()
