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

"""ament_flake8 over the package's Python sources (ROS 2's flake8 configuration and plugins)."""

import pathlib

from conftest import require_module
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
PYTHON_PATHS = ['denoc_ros', 'test', 'launch', 'benchmarks', 'examples', 'setup.py']


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8():
    """Lint every Python file of the package; no error allowed."""
    main_with_errors = require_module('ament_flake8.main').main_with_errors
    paths = [str(REPO / p) for p in PYTHON_PATHS if (REPO / p).exists()]
    rc, errors = main_with_errors(argv=paths)
    assert rc == 0, f'Found {len(errors)} code style errors / warnings:\n' + '\n'.join(errors)
