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
Move one arm of the free-flying space robot and watch the base turn (zero gravity, no thrusters).

Run from the repository root::

    .venv/bin/python examples/space_robot_manoeuvre.py [--duration 6] [--dt 0.005]

(this imports the installed ``denoc_ros``; to run the working tree's, prefix ``PYTHONPATH=.``).

The robot (``urdf/space_robot.urdf``, a made-up 351 kg spacecraft with two arms) starts at rest,
so its momentum is zero. Arm A follows a rest-to-rest cycloidal joint path under free-floating
computed torque (``free_floating_inverse_dynamics``: the joint torques that give the desired
joint accelerations with no base wrench) plus a PD term; arm B is held still the same way.
:func:`denoc_ros.floating_base.simulate_floating` integrates the motion (RK4, quaternion
normalised each step). Printed: the base attitude drift the manoeuvre causes, the base and
centre-of-mass displacement, the momentum error of the integration, and the tracking error.
"""

import argparse
import math
import pathlib

from denoc_ros import floating_base as fb
import numpy as np

URDF = pathlib.Path(__file__).resolve().parent.parent / 'urdf' / 'space_robot.urdf'
# Arm A's joint travel (rad): yaw, shoulder pitch, elbow, wrist roll.
TRAVEL = {'arm_a_joint1': 1.2, 'arm_a_joint2': -0.8, 'arm_a_joint3': 1.4, 'arm_a_joint4': 2.0}
KP, KD = 25.0, 10.0  # PD gains on joint errors, 1/s^2 and 1/s


def attitude_angle(quaternion_a, quaternion_b):
    """Return the angle (rad) of the rotation between two unit quaternions (x y z w)."""
    return 2.0 * math.acos(min(1.0, abs(float(np.dot(quaternion_a, quaternion_b)))))


def main(argv=None):
    """Run the manoeuvre and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--duration', type=float, default=6.0, help='manoeuvre time, s')
    parser.add_argument('--dt', type=float, default=0.005, help='RK4 step, s')
    args = parser.parse_args(argv)

    model = fb.load_floating_base(str(URDF), gravity=(0.0, 0.0, 0.0))
    delta = np.array([TRAVEL.get(name, 0.0) for name in model.joint_names])
    q0 = fb.neutral_configuration(model)
    q0[7:] = [0.0, 0.3, -0.6, 0.0, 0.0, 0.3, 0.1, 0.2]  # arms folded a little, boom half out
    start = q0[7:].copy()
    duration = args.duration

    def reference(t):
        """Return the desired joint positions, rates and accelerations (cycloidal profile)."""
        s = min(max(t / duration, 0.0), 1.0)
        w = 2.0 * math.pi
        return (start + delta * (s - math.sin(w * s) / w),
                delta / duration * (1.0 - math.cos(w * s)),
                delta / duration ** 2 * w * math.sin(w * s))

    def torques(t, q, v):
        q_d, qd_d, qdd_d = reference(t)
        qdd = qdd_d + KP * (q_d - q[7:]) + KD * (qd_d - v[6:])
        return fb.free_floating_inverse_dynamics(model, q, v, qdd)[0]

    run = fb.simulate_floating(model, q0, np.zeros(model.nv), duration, args.dt, tau=torques)

    momenta = np.array([fb.system_momentum(model, q, v) for q, v in zip(run.q, run.v)])
    arm_only = max(np.abs(fb.system_momentum(model, q, np.r_[np.zeros(6), v[6:]])).max()
                   for q, v in zip(run.q, run.v))
    com = np.array([fb.system_center_of_mass(model, q) for q in run.q])
    drift = attitude_angle(run.q[0, 3:7], run.q[-1, 3:7])
    peak = max(attitude_angle(run.q[0, 3:7], q[3:7]) for q in run.q)
    tracking = np.abs(run.q[-1, 7:] - reference(duration)[0]).max()

    print(f'space robot: {model.total_mass:.0f} kg, base {model.mass[0]:.0f} kg, '
          f'{model.dof} joints; arm A moves {np.degrees(np.abs(delta).max()):.0f} deg at most '
          f'in {duration:g} s (RK4, dt = {args.dt:g} s, {len(run.t) - 1} steps)')
    print(f'base attitude drift at the end: {math.degrees(drift):.3f} deg '
          f'(peak during the manoeuvre {math.degrees(peak):.3f} deg)')
    print(f'base displacement: {1e3 * np.linalg.norm(run.q[-1, :3] - q0[:3]):.2f} mm; '
          f'centre-of-mass drift: {np.abs(com - com[0]).max():.2e} m')
    print(f'momentum error (zero at start): max |h| = {np.abs(momenta).max():.2e} '
          f"(kg m/s, kg m^2/s), {np.abs(momenta).max() / arm_only:.2e} of the arm's own "
          f'momentum {arm_only:.2f}')
    print(f'joint tracking error at the end: {tracking:.2e} rad')


if __name__ == '__main__':
    main()
