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
The doubtful conditions met while loading a URDF, and how loader messages name things.

:class:`_Notes` gathers the conditions per subject (a link or a joint): one
:class:`~denoc_ros.errors.URDFWarning` message per subject, or at once the condition's
:class:`~denoc_ros.errors.URDFError` when ``strict=True`` refuses it. ``_names`` and ``_fmt``
format names and numbers in the loader's messages.
"""

from typing import Dict, List, Tuple

import numpy as np

from .errors import URDFError


class _Notes:
    """
    The doubtful conditions found while loading, gathered per subject (a link or a joint).

    :meth:`add` raises the condition's URDFError at once in strict mode if it is one that
    ``strict=True`` refuses; otherwise it keeps the condition for one warning per subject.
    """

    def __init__(self, strict):
        self.strict = strict
        self.conditions: Dict[str, List[Tuple[str, str]]] = {}

    def add(self, subject, condition, strict_error=None, glue=': '):
        """
        Record ``condition`` of ``subject``; in strict mode raise ``strict_error`` if given.

        ``glue`` joins subject and condition when it is the subject's first one.
        """
        if self.strict and strict_error is not None:
            raise URDFError(strict_error)
        self.conditions.setdefault(subject, []).append((glue, condition))

    def messages(self):
        """Return one message per subject, its conditions joined by semicolons."""
        return tuple(subject + glue + '; '.join(condition for _, condition in conditions)
                     for subject, conditions in self.conditions.items()
                     for glue in (conditions[0][0],))


def _names(names):
    """Format names as a comma-separated list of quoted names."""
    return ', '.join(repr(name) for name in names)


def _fmt(array):
    """Format an array compactly for an error message."""
    return np.array2string(np.asarray(array), precision=6, separator=', ')
