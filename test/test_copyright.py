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
Licence headers: every source file starts with the project's Apache-2.0 header.

ament_copyright has no PyPI wheel, so this test does its job: the copyright line and the
Apache-2.0 licence text at the top of every Python, shell, CMake and launch file.
"""

import pathlib
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
SKIP_DIRS = {'.venv', '.git', 'build', 'install', 'log', '__pycache__', '.pytest_cache'}
SOURCE_SUFFIXES = {'.py', '.sh'}
SOURCE_NAMES = {'CMakeLists.txt'}
REQUIRED = ('Copyright 2026 The denoc_ros Authors',
            'Licensed under the Apache License, Version 2.0',
            'http://www.apache.org/licenses/LICENSE-2.0')


def venv_dirs():
    """Return the virtual environments in the repository (any name: .venv, .venv-jazzy, ...)."""
    return {cfg.parent.relative_to(REPO).parts
            for pattern in ('*/pyvenv.cfg', '*/*/pyvenv.cfg') for cfg in REPO.glob(pattern)}


def source_files():
    """Return the repository's source files (tracked by git when git is available)."""
    try:
        out = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard'],
                             cwd=REPO, capture_output=True, text=True, check=True).stdout
        candidates = [REPO / line for line in out.splitlines() if line]
    except (OSError, subprocess.CalledProcessError):
        candidates = [p for p in REPO.rglob('*')
                      if not SKIP_DIRS.intersection(p.relative_to(REPO).parts)]
    venvs = venv_dirs()
    candidates = [p for p in candidates
                  if not any(p.relative_to(REPO).parts[:len(v)] == v for v in venvs)]
    return sorted(p for p in candidates if p.is_file() and (
        p.suffix in SOURCE_SUFFIXES or p.name in SOURCE_NAMES or p.parent.name == '.ci'))


@pytest.mark.copyright
@pytest.mark.linter
def test_copyright():
    """Every source file carries the copyright line and the Apache-2.0 notice."""
    files = source_files()
    assert files, 'no source files found'
    missing = []
    for path in files:
        head = path.read_text(errors='replace')[:2000]
        if not all(text in head for text in REQUIRED):
            missing.append(str(path.relative_to(REPO)))
    assert not missing, 'files without the Apache-2.0 header:\n' + '\n'.join(missing)
