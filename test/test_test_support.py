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
The suite's own guards: a missing oracle and a stale install are caught, not passed over.

``require_oracle`` skips without the oracle, and fails with ``DENOC_REQUIRE_ORACLES=1`` (as CI
sets it), and so does ``require_module`` for the other test requirements; ``stale_install``
tells a venv whose installed denoc_ros is the working tree's from one whose stamp is another
tree's or missing.
"""

import subprocess
import sys

from conftest import REPO, require_module, require_oracle, stale_install
import pytest


def test_a_missing_oracle_skips_or_fails(monkeypatch):
    """An oracle that does not import: a skip by default, a failure under CI's setting."""
    monkeypatch.setitem(sys.modules, 'toppra', None)  # import toppra raises ImportError
    monkeypatch.delenv('DENOC_REQUIRE_ORACLES', raising=False)
    with pytest.raises(pytest.skip.Exception, match='toppra'):
        require_oracle('toppra')
    monkeypatch.setenv('DENOC_REQUIRE_ORACLES', '1')
    with pytest.raises(pytest.fail.Exception, match='DENOC_REQUIRE_ORACLES=1'):
        require_oracle('toppra')
    with pytest.raises(ValueError, match='not an oracle'):
        require_oracle('numpy')


def test_a_missing_test_requirement_skips_or_fails(monkeypatch):
    """ROS, our interfaces, the linters: like an oracle; our own modules are never skipped."""
    monkeypatch.setitem(sys.modules, 'launch_ros', None)
    monkeypatch.delenv('DENOC_REQUIRE_ORACLES', raising=False)
    with pytest.raises(pytest.skip.Exception, match='launch_ros'):
        require_module('launch_ros')
    monkeypatch.setenv('DENOC_REQUIRE_ORACLES', '1')
    with pytest.raises(pytest.fail.Exception, match='launch_ros.*DENOC_REQUIRE_ORACLES=1'):
        require_module('launch_ros')
    assert require_module('yaml').safe_load('[1]') == [1]
    with pytest.raises(ValueError, match='our own module'):
        require_module('denoc_ros.ros.payload_services')


def test_stale_install_compares_the_stamp_with_the_tree(tmp_path):
    """A stamp of this tree's sources passes; another hash or none names the setup command."""
    tree = subprocess.run(['bash', str(REPO / 'scripts' / 'source_hash.sh')],
                          capture_output=True, text=True, check=True).stdout.strip()
    venvs = {}
    for name, stamp in (('current', tree), ('stale', '0' * 32), ('unstamped', None)):
        prefix = tmp_path / name
        (prefix / '.denoc_stamps').mkdir(parents=True)
        if stamp is not None:
            (prefix / '.denoc_stamps' / 'denoc_ros').write_text(stamp + '\n')
        venvs[name] = stale_install(str(prefix))
    assert venvs['current'] == ''
    assert 'is stale' in venvs['stale'] and 'setup_env.sh --test' in venvs['stale']
    assert f'DENOC_VENV={tmp_path / "stale"}' in venvs['stale']  # not the default .venv
    assert 'no install stamp' in venvs['unstamped']
