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
"""

import xml.etree.ElementTree as ET

import numpy as np

from ..errors import InputError, URDFError

_STRIPPED = ('visual', 'collision')
_DROPPED = ('transmission', 'gazebo', 'ros2_control', 'mujoco')


def mujoco_urdf(urdf_xml):
    """Return the URDF with geometry stripped and MuJoCo's compiler options added."""
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
                 keep_joint_dynamics=False):
        import mujoco
        self._mj = mujoco
        try:
            self.model = mujoco.MjModel.from_xml_string(mujoco_urdf(urdf_xml))
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

    def step(self, steps=1):
        """Advance the simulation by ``steps`` time steps."""
        for _ in range(int(steps)):
            self._mj.mj_step(self.model, self.data)

    def forward_dynamics(self, q, qd, effort):
        """Return MuJoCo's joint accelerations at a state (does not change the simulation)."""
        data = self._mj.MjData(self.model)
        data.qpos[self._qpos] = self._vector('q', q)
        data.qvel[self._dof] = self._vector('qd', qd)
        data.qfrc_applied[self._dof] = self._vector('effort', effort)
        self._mj.mj_forward(self.model, data)
        return data.qacc[self._dof].copy()
