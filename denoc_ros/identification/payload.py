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
Payload estimation: the rigid body on one link that explains the efforts beyond the model.

The public names, from the two modules that hold them: :mod:`.payload_estimate` (the
estimate: :func:`estimate_payload`, :func:`estimate_payload_from_recording`,
:class:`PayloadEstimate`, the method in its docstring) and :mod:`.payload_window`
(:class:`PayloadWindow`, the stamp-keyed window of recent joint states).
"""

from .payload_estimate import (DEFAULT_LENGTH, DEFAULT_RCOND, estimate_payload,
                               estimate_payload_from_recording, INERTIA_RCOND, PAYLOAD_CUTOFF,
                               PayloadEstimate, STANDARD_DEVIATION_NAMES)
# excitation.py's payload criterion imports link_transform from here.
from .payload_estimate import link_transform  # noqa: F401
from .payload_window import PayloadWindow

__all__ = ['estimate_payload', 'estimate_payload_from_recording', 'PayloadEstimate',
           'PayloadWindow', 'DEFAULT_LENGTH', 'DEFAULT_RCOND', 'INERTIA_RCOND',
           'PAYLOAD_CUTOFF',
           'STANDARD_DEVIATION_NAMES']
