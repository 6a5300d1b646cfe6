#!/usr/bin/env bash
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
#
# Print the hash of every source file that goes into the installed denoc_ros (the package,
# launch, config, urdf, resource, setup.py, setup.cfg, package.xml; caches left out), in a
# byte-wise file order whatever the locale. scripts/setup_env.sh stamps it into
# <venv>/.denoc_stamps/denoc_ros after installing; test/conftest.py compares it with that
# stamp before a test runs an installed executable. Usage: scripts/source_hash.sh
set -eu
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export LC_ALL=C
find denoc_ros launch config urdf resource setup.py setup.cfg package.xml -type f \
    ! -name '*.pyc' ! -path '*/__pycache__/*' -print0 2>/dev/null \
  | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-32
