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
Locate the files the package installs: bundled URDFs, configuration, launch files.

Looked up, in order, through the ament index (a colcon workspace or a sourced ROS install), in
``<sys.prefix>/share/denoc_ros`` (a pip-installed venv), and beside the source tree (a checkout).
"""

import glob
import os
import pathlib
import site
import sys

from .errors import InputError

PACKAGE = 'denoc_ros'
_SOURCE_ROOT = pathlib.Path(__file__).resolve().parent.parent


def share_directories():
    """Return the candidate share directories of the package, most specific first."""
    dirs = []
    try:
        from ament_index_python.packages import get_package_share_directory
        dirs.append(pathlib.Path(get_package_share_directory(PACKAGE)))
    except Exception:  # noqa: B902 - not on the ament index (plain venv or checkout)
        pass
    dirs.append(pathlib.Path(sys.prefix) / 'share' / PACKAGE)
    dirs.append(_SOURCE_ROOT)
    return [d for d in dirs if d.is_dir()]


def find_resource(kind, name):
    """Return the path of ``<share>/<kind>/<name>`` (kind: 'urdf', 'config', 'launch')."""
    for d in share_directories():
        path = d / kind / name
        if path.is_file():
            return path
    raise InputError(f'{kind}/{name} not found in any of: '
                     + ', '.join(str(d) for d in share_directories()))


def bundled_urdf(name):
    """Return the path of a bundled robot description by file name or stem (e.g. 'craig_rr')."""
    if not name.endswith('.urdf'):
        name += '.urdf'
    return find_resource('urdf', name)


def bundled_robots():
    """Return the stems of the bundled URDFs, sorted."""
    names = set()
    for d in share_directories():
        names.update(p.stem for p in (d / 'urdf').glob('*.urdf'))
    return sorted(names)


def resolve_urdf(path_or_name):
    """Return an existing URDF path: the argument itself if it is a file, else a bundled robot."""
    if os.path.isfile(path_or_name):
        return pathlib.Path(path_or_name)
    return bundled_urdf(path_or_name)


def example_robot_data_dir():
    """Return the ``robots/`` folder of PyPI ``example-robot-data`` if installed, else None."""
    roots = list(site.getsitepackages()) + [site.getusersitepackages()] + sys.path
    for root in roots:
        hits = glob.glob(os.path.join(root, 'cmeel.prefix', 'share', 'example-robot-data',
                                      'robots'))
        if hits:
            return pathlib.Path(hits[0])
    return None
