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

"""ament_pep257 over the package's Python sources (ROS 2's docstring conventions)."""

import pathlib

from conftest import require_module
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
PYTHON_PATHS = ['denoc_ros', 'test', 'launch', 'benchmarks', 'examples', 'setup.py']


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257():
    """Check the docstrings of every Python file of the package."""
    main = require_module('ament_pep257.main').main
    paths = [str(REPO / p) for p in PYTHON_PATHS if (REPO / p).exists()]
    rc = main(argv=paths)
    assert rc == 0, 'Found code style errors / warnings (listed above)'
