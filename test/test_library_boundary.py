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

"""The dynamics library stands without ROS: no module outside denoc_ros/ros imports rclpy."""

import pathlib
import re
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent


def test_no_rclpy_import_in_library_sources():
    """No library source file mentions an rclpy or ROS message import."""
    offenders = []
    for path in (REPO / 'denoc_ros').rglob('*.py'):
        if 'ros' in path.relative_to(REPO / 'denoc_ros').parts[:1]:
            continue
        text = path.read_text()
        if re.search(r'^\s*(import|from)\s+(rclpy|\w+_msgs|denoc_ros_interfaces)\b', text, re.M):
            offenders.append(str(path.relative_to(REPO)))
    assert not offenders, offenders


def test_import_loads_no_ros_module():
    """``import denoc_ros`` plus a computation leaves rclpy unloaded."""
    probe = ('import sys, numpy as np, denoc_ros as dr\n'
             'm = dr.load_urdf("urdf/craig_rr.urdf")\n'
             'dr.inverse_dynamics(m, np.zeros(2), np.zeros(2), np.zeros(2))\n'
             'bad = [k for k in sys.modules if k.startswith(("rclpy", "sensor_msgs"))]\n'
             'assert not bad, bad\n')
    run = subprocess.run([sys.executable, '-c', probe], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
