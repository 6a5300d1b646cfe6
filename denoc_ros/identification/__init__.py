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
Identification of inertial parameters and joint friction from recorded joint states.

==========================  ================================================================
module                      what
==========================  ================================================================
parameters.py               the standard parameters, the joint columns, the full regressor
base.py                     base parameters: the identifiable combinations (pivoted QR)
estimation.py               normal equations by chunks, (weighted) least squares, the
                            physically consistent fit (unsensed joints left out)
bounds.py                   what bounds a body: links locked onto it, bounding ellipsoids
recording.py                the recording type (JointStateRecording), its shared checks
cdr.py                      decoding CDR-serialised JointState messages with NumPy
bags.py                     rosbag2 bags (mcap, sqlite3) read and written
data.py                     read_recording of any format; CSV and NPZ
filtering.py                filtering, differentiation, decimation (prepare_samples)
fourier.py                  the finite Fourier series and its derivatives
excitation.py               design_excitation: limits, SLSQP, the result (payload link too)
excitation_problem.py       the design's variables, objective, constraints, derivatives
trajectory_files.py         trajectory YAML (JointTrajectory) and CSV writers
payload.py                  the payload names, re-exported from the two modules below
payload_estimate.py         the payload on one link: estimate_payload
payload_window.py           PayloadWindow, the stamp-keyed window of joint states
pipeline.py                 identify(): samples -> base parameters, fits, validation
report.py                   report.json, plots and index.html
urdf_output.py              the identified URDF
==========================  ================================================================

The regressor kernel itself is :mod:`denoc_ros.dynamics.regressor`, beside inverse dynamics;
the command-line tools are :mod:`denoc_ros.tools.identify` and :mod:`denoc_ros.tools.excitation`.
"""

from .parameters import (inertial_parameters, joint_columns, ParameterLayout,
                         with_inertial_parameters)

__all__ = ['inertial_parameters', 'joint_columns', 'ParameterLayout',
           'with_inertial_parameters']
