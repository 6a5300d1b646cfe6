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
Robot descriptions from where users keep them: URDF files, xacro files, bundled robot names.

:func:`read_description` returns URDF XML for :func:`denoc_ros.load_urdf`; ``.xacro`` files are
expanded with the ``xacro`` package (PyPI ``xacro``, ROS's own), with optional ``name:=value``
arguments.
"""

import pathlib

from .errors import URDFError
from .resources import resolve_urdf


def expand_xacro(path, mappings=None):
    """Return the URDF XML that xacro makes of ``path`` (``mappings``: xacro arguments)."""
    try:
        import xacro
    except ImportError:  # pragma: no cover - xacro is a declared dependency
        raise URDFError(f'{path}: expanding a .xacro file needs the xacro package') from None
    try:
        document = xacro.process_file(str(path), mappings=dict(mappings or {}))
    except Exception as err:  # noqa: B902 - xacro raises many types; report them all as one
        raise URDFError(f'{path}: xacro failed: {err}') from None
    return document.toxml()


def read_description(path_or_name, mappings=None):
    """
    Return the URDF XML of a file path, a ``.xacro`` file, or a bundled robot name.

    Raises URDFError naming the file if it cannot be read.
    """
    try:
        path = pathlib.Path(resolve_urdf(str(path_or_name)))
    except ValueError:
        path = pathlib.Path(path_or_name)
        if not path.is_file():
            raise URDFError(f'{path_or_name}: no such file, and not a bundled robot') from None
    if path.suffix == '.xacro' or path.name.endswith('.urdf.xacro'):
        return expand_xacro(path, mappings)
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as err:
        raise URDFError(f'{path}: cannot read: {err}') from None
