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

"""Exceptions raised by the denoc_ros library."""


class DenocError(ValueError):
    """
    Base class of every error the library raises on bad input.

    A subclass of ``ValueError`` so that callers catching ``ValueError`` keep working.
    """


class URDFError(DenocError):
    """A robot description cannot be turned into a model (names the element at fault)."""


class InputError(DenocError):
    """A state, torque or wrench argument is malformed (wrong length, NaN/inf, unknown frame)."""


class URDFWarning(UserWarning):
    """A robot description loads, but something in it is doubtful (names the link or joint)."""


class PerformanceWarning(UserWarning):
    """The compiled kernels are unavailable (no numba): the library runs as plain Python."""


class DataError(DenocError):
    """A recording cannot be used for identification (names the file, topic or joint at fault)."""
