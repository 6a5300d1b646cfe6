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


@pytest.mark.parametrize('check, module', [(require_oracle, 'toppra'),
                                           (require_module, 'launch_ros')],
                         ids=['oracle', 'test requirement'])
def test_a_missing_requirement_skips_or_fails(monkeypatch, check, module):
    """An oracle, or ROS, our interfaces, a linter: a skip by default, a failure under CI's."""
    monkeypatch.setitem(sys.modules, module, None)  # import <module> raises ImportError
    monkeypatch.delenv('DENOC_REQUIRE_ORACLES', raising=False)
    with pytest.raises(pytest.skip.Exception, match=module):
        check(module)
    monkeypatch.setenv('DENOC_REQUIRE_ORACLES', '1')
    with pytest.raises(pytest.fail.Exception, match=f'{module}.*DENOC_REQUIRE_ORACLES=1'):
        check(module)


def test_what_is_no_oracle_or_our_own_module_is_refused():
    """Only the oracles are oracles; our own modules are never skipped, they import plainly."""
    with pytest.raises(ValueError, match='not an oracle'):
        require_oracle('numpy')
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
