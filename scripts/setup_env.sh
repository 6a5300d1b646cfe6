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

# Create or update the project environment in a venv, from nothing but Python and PyPI, for one
# ROS 2 distribution (DENOC_ROS_DISTRO: kilted, the default, or jazzy; `make ... ROS_DISTRO=jazzy`):
#   1. the venv, with the distribution's Python (kilted: 3.11; jazzy: 3.12, or 3.11 if PYTHON says so);
#   2. PyPI packages (requirements/runtime.txt + requirements/<distro>/runtime.txt, plus both test.txt
#      with --test);
#   3. repair of the build-machine paths baked into the ROS wheels' CMake files;
#   4. build and install of the denoc_ros_interfaces ament_cmake package into the venv, then of
#      ros-controls' control_msgs (for trajectory_gate; a failure there is only a warning), and
#      with --test the real `ros2 launch` and CLI from ../shared/ros2-clients when it exists;
#   5. install of denoc_ros (console scripts denoc_* in the venv's bin, data in its share/denoc_ros),
#      and its numba kernels compiled once into the installed package's cache.
# Each step records a hash of its inputs and is skipped when they have not changed, so a re-run
# is idempotent and takes about a second. A failing step stops everything with its name.
#
# Usage: scripts/setup_env.sh [--test]
#   env: DENOC_ROS_DISTRO (kilted | jazzy), DENOC_VENV (the venv; default .venv for kilted,
#        .venv-<distro> otherwise), PYTHON (the interpreter to make the venv with)

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DISTRO="${DENOC_ROS_DISTRO:-kilted}"
case "$DISTRO" in
  # the distribution's Pythons, the one searched for first; its ROS wheels exist for each of them
  kilted) PYTHONS="3.11" ;;
  jazzy) PYTHONS="3.12 3.11" ;;
  *) echo "setup_env: unknown ROS 2 distribution '$DISTRO' (known: kilted, jazzy)" >&2; exit 1 ;;
esac
if [ "$DISTRO" = kilted ]; then VENV="${DENOC_VENV:-$ROOT/.venv}"; else VENV="${DENOC_VENV:-$ROOT/.venv-$DISTRO}"; fi
REQ="$ROOT/requirements"
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
STEP="check the venv at $VENV"
made_for=""
if [ -x "$VENV/bin/python" ] && [ -d "$STAMPS" ]; then
  made_for="$(cat "$STAMPS/distro" 2>/dev/null || echo kilted)"  # venvs made before jazzy: kilted
fi
if [ -n "$made_for" ] && [ "$made_for" != "$DISTRO" ]; then
  die "$VENV was made for ROS 2 $made_for, not $DISTRO: remove it or set DENOC_VENV"
fi
WANT="${PYTHONS// / or }"
STEP="find Python $WANT"
is_wanted_python() {  # a working interpreter whose major.minor is one of $PYTHONS
  local v
  v="$("$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)" || return 1
  case " $PYTHONS " in *" $v "*) return 0 ;; esac
  return 1
}
PYTHON="${PYTHON:-}"
if [ -z "$PYTHON" ]; then
  for v in $PYTHONS; do
    # on PATH (Debian, Ubuntu, python.org), then a pyenv-installed version not on PATH
    for cand in "python$v" "${PYENV_ROOT:-${HOME:-/root}/.pyenv}"/versions/"$v".*/bin/"python$v"; do
      if is_wanted_python "$cand"; then PYTHON="$(command -v "$cand")"; break 2; fi
    done
  done
  if [ -z "$PYTHON" ] && is_wanted_python python3; then PYTHON="$(command -v python3)"; fi
fi
[ -n "$PYTHON" ] || die "no Python $WANT found (the ROS 2 ${DISTRO^} wheels are for Python $WANT); set PYTHON=/path/to/python"
is_wanted_python "$PYTHON" \
  || die "$PYTHON is not a working Python $WANT (the ROS 2 ${DISTRO^} wheels are for Python $WANT)"

STEP="create the venv at $VENV"
if [ ! -x "$VENV/bin/python" ]; then
  say "creating $VENV (ROS 2 ${DISTRO^}, $("$PYTHON" -c 'import sys; print("Python %d.%d" % sys.version_info[:2])'))"
  "$PYTHON" -m venv "$VENV" || die "'$PYTHON -m venv' failed (Debian: apt-get install python3-venv)"
  rm -rf "$STAMPS"
fi
VPY="$VENV/bin/python"
stamp_set distro "$DISTRO"
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
pip_step runtime "$REQ/runtime.txt" "$REQ/$DISTRO/runtime.txt"
if [ "$WITH_TEST" = 1 ]; then
  pip_step test "$REQ/runtime.txt" "$REQ/$DISTRO/runtime.txt" "$REQ/test.txt" "$REQ/$DISTRO/test.txt"
fi

# -- 3. CMake path repair (see shared/ENVIRONMENT.md) ----------------------------------------------
STEP="repair the ROS wheels' CMake paths"
if ! stamp_is cmake-repair done; then
  inc="$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
  purelib="$("$VPY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  pyver="$("$VPY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
  [ -d "$inc" ] || die "the Python headers ($inc) are missing: install python$pyver-dev"
  # the wheels were built in /opt/python/cpXY-cpXY (manylinux) for the Python they are for
  tag="cp${pyver/./}"
  built="/opt/python/$tag-$tag"
  n=0
  while IFS= read -r -d '' f; do
    sed -i -e "s#$built/include/python$pyver#$inc#g" \
           -e "s#$built/lib/python$pyver/site-packages#$purelib#g" "$f"
    n=$((n + 1))
  done < <(grep -rlZ --include='*.cmake' "$built" "$VENV/share" 2>/dev/null || true)
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

# -- 4b. control_msgs (for the trajectory gate; optional) ---------------------------------------
# ros-controls' control_msgs (FollowJointTrajectory) has no wheel. Its sources, by preference:
# DENOC_CONTROL_MSGS_SRC (a control_msgs package directory), ../shared/control_msgs/<distro>/
# beside the repository, or a shallow clone of the release tag the distribution ships
# (CONTROL_MSGS_TAG). Built with CMake against the wheels like denoc_ros_interfaces (a few
# minutes: some 50 interfaces). Anything failing here is a warning, never the end of the set-up:
# only trajectory_gate needs control_msgs, and it says so when it is missing.
# DENOC_CONTROL_MSGS=0 skips this step.
STEP="build control_msgs"
case "$DISTRO" in
  kilted) CONTROL_MSGS_TAG="6.8.0" ;;   # the Kilted/Rolling line (ros-controls master)
  jazzy) CONTROL_MSGS_TAG="5.8.0" ;;    # ros-jazzy-control-msgs
esac
control_msgs_warn() {
  echo "setup_env: WARNING: control_msgs not built ($1); everything but trajectory_gate works." >&2
  echo "setup_env:   to get it: DENOC_CONTROL_MSGS_SRC=<control_msgs source dir> $0, or an apt" \
       "ROS 2 install's ros-$DISTRO-control-msgs (source /opt/ros/$DISTRO/setup.bash)" >&2
}
if [ "${DENOC_CONTROL_MSGS:-1}" != 0 ]; then
  cm_src="${DENOC_CONTROL_MSGS_SRC:-}"
  shared_cm="$ROOT/../shared/control_msgs/$DISTRO/control_msgs"
  if [ -z "$cm_src" ] && [ -f "$shared_cm/package.xml" ]; then cm_src="$(cd "$shared_cm" && pwd)"; fi
  cm_want="tag $CONTROL_MSGS_TAG"
  if [ -n "$cm_src" ]; then
    cm_want="$(cd "$cm_src" && find . -type f \( -name '*.srv' -o -name '*.msg' -o -name '*.action' \
              -o -name 'CMakeLists.txt' -o -name 'package.xml' \) -print0 | sort -z \
              | xargs -0 sha256sum | sha256sum | cut -c1-32)"
  fi
  if [ "${DENOC_CONTROL_MSGS_FULL:-0}" = 1 ]; then cm_want="$cm_want full"; else cm_want="$cm_want subset"; fi
  if ! stamp_is control_msgs "$cm_want" \
      || ! "$VPY" -c 'import control_msgs.action' 2>/dev/null; then
    LOG="$VENV/.logs/control_msgs.log"
    : > "$LOG"
    if [ -z "$cm_src" ]; then
      cm_src="$VENV/.build/control_msgs-src"
      rm -rf "$cm_src"
      say "cloning control_msgs $CONTROL_MSGS_TAG (log: $LOG)"
      if ! git clone --quiet --depth 1 --branch "$CONTROL_MSGS_TAG" \
          https://github.com/ros-controls/control_msgs.git "$cm_src" >> "$LOG" 2>&1; then
        cm_src=""
        control_msgs_warn "no ../shared/control_msgs and no clone of tag $CONTROL_MSGS_TAG"
      elif [ -f "$cm_src/control_msgs/package.xml" ]; then
        cm_src="$cm_src/control_msgs"
      fi
    fi
    if [ -n "$cm_src" ] && [ "${DENOC_CONTROL_MSGS_FULL:-0}" != 1 ]; then
      # Only what the gate and ct_controller use: FollowJointTrajectory and the two tolerance
      # messages it names (47 s here, against 3 min 49 s for the whole package): a copy of the
      # sources whose CMakeLists.txt lists just those. DENOC_CONTROL_MSGS_FULL=1 builds all.
      subset="$VENV/.build/control_msgs-subset"
      rm -rf "$subset"; mkdir -p "$(dirname "$subset")"; cp -r "$cm_src" "$subset"
      "$VPY" - "$subset/CMakeLists.txt" <<'PYEOF'
import re, sys
path = sys.argv[1]
text = open(path).read()
keep = {'msg_files': ['msg/JointTolerance.msg', 'msg/JointComponentTolerance.msg'],
        'action_files': ['action/FollowJointTrajectory.action'], 'srv_files': []}
for name, files in keep.items():
    text, count = re.subn(r'set\(' + name + r'\b[^)]*\)',
                          'set(' + ' '.join([name] + files) + ')', text)
    if count != 1:
        sys.exit(f'control_msgs CMakeLists.txt: no single set({name} ...)')
open(path, 'w').write(text)
PYEOF
      cm_src="$subset"
    fi
    if [ -n "$cm_src" ]; then
      build="$VENV/.build/control_msgs"
      rm -rf "$build"; mkdir -p "$build"
      say "building control_msgs from $cm_src into the venv (about a minute; log: $LOG)"
      if (
        cd "$build"
        export AMENT_PREFIX_PATH="$VENV" PATH="$VENV/bin:$PATH"
        cmake "$cm_src" -DCMAKE_PREFIX_PATH="$VENV" -DCMAKE_INSTALL_PREFIX="$VENV" \
          -DPython3_EXECUTABLE="$VPY" -DBUILD_TESTING=OFF
        make -j"$(nproc 2>/dev/null || echo 2)"
        make install
      ) >> "$LOG" 2>&1 && "$VPY" -c 'from control_msgs.action import FollowJointTrajectory' \
          >> "$LOG" 2>&1; then
        stamp_set control_msgs "$cm_want"
        rm -rf "$build"
      else
        control_msgs_warn "the CMake build failed, see $LOG"
      fi
    fi
    LOG=""
  fi
fi

# -- 4c. the real ros2 launch and CLI (tests only, where ../shared has them) ------------------------
# launch, launch_ros and ros2cli have no wheels; ../shared/ros2-clients/install.sh installs the
# real ones into the venv, so that the launch files are tested with `ros2 launch` itself.
STEP="install the ros2 launch and CLI clients"
CLIENTS="$ROOT/../shared/ros2-clients"
if [ "$WITH_TEST" = 1 ] && [ -x "$CLIENTS/install.sh" ]; then
  want="$(digest "$CLIENTS/install.sh" "$CLIENTS/ros2_clients.tar.gz")"
  if ! stamp_is ros2-clients "$want" || ! "$VPY" -c 'import launch_ros' 2>/dev/null; then
    LOG="$VENV/.logs/ros2-clients.log"
    say "installing the ros2 launch and CLI clients from $CLIENTS (log: $LOG)"
    "$CLIENTS/install.sh" "$VENV" > "$LOG" 2>&1 \
      || die "$CLIENTS/install.sh failed (see the log lines below)"
    stamp_set ros2-clients "$want"
    LOG=""
  fi
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
  # pip builds in the source tree (build/, *.egg-info): two set-ups at once (.ci/run sets up
  # both distributions side by side) take turns there, where flock exists.
  mkdir -p "$ROOT/build"
  (
    if command -v flock >/dev/null 2>&1; then flock 9; fi
    "$VPY" -m pip install --disable-pip-version-check --no-deps --no-build-isolation \
      --force-reinstall "$ROOT" > "$LOG" 2>&1 || exit 1
    rm -rf "$ROOT/build/lib" "$ROOT/build/bdist."* "$ROOT"/*.egg-info
  ) 9> "$ROOT/build/.setup_env.lock" || die "pip install of denoc_ros failed (see the log lines below)"
  STEP="compile the numba kernels"
  say "compiling the dynamics kernels into the installed package's cache (log: $LOG)"
  (cd "$VENV" && "$VPY" -m denoc_ros.warmup) >> "$LOG" 2>&1 \
    || die "the installed denoc_ros does not import or compile (see the log lines below)"
  if [ "$WITH_TEST" = 1 ]; then
    # pytest, run from the repository, imports the working tree's denoc_ros (numba caches per
    # source file): compile its kernels here too, so that the suite does not.
    STEP="compile the working tree's numba kernels (the tests import them)"
    say "compiling the working tree's kernels for the tests (log: $LOG)"
    (cd "$ROOT" && "$VPY" -m denoc_ros.warmup) >> "$LOG" 2>&1 \
      || die "the working tree's denoc_ros does not import or compile (see the log lines below)"
  fi
  stamp_set denoc_ros "$want"
  LOG=""
fi

STEP="done"
say "environment ready: $VENV"
