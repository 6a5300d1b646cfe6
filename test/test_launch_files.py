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
The launch files and parameter files, checked without ``launch`` (it has no PyPI wheel).

Each launch file must compile, define ``generate_launch_description``, start only executables
that setup.py installs, and name only parameters the node declares; the YAML must parse in the
``/**: ros__parameters:`` form and hold only declared parameters. When ``launch_ros`` is
importable (a ROS install), the launch descriptions are also built for real.
"""

import ast
import pathlib

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parent.parent
LAUNCH_FILES = sorted((REPO / 'launch').glob('*.launch.py'))


def console_scripts():
    """Return the ROS names of the executables setup.py installs (its ``EXECUTABLES``)."""
    tree = ast.parse((REPO / 'setup.py').read_text())
    for statement in tree.body:
        if isinstance(statement, ast.Assign) and getattr(statement.targets[0], 'id', '') == (
                'EXECUTABLES'):
            return set(ast.literal_eval(statement.value))
    raise AssertionError('setup.py defines no EXECUTABLES')


def node_calls(tree):
    """Yield the keyword arguments of every Node(...) call in a parsed launch file."""
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and getattr(call.func, 'id', '') == 'Node':
            yield {kw.arg: kw.value for kw in call.keywords}


def test_launch_files_exist():
    """Both documented launch files are there."""
    names = {p.name for p in LAUNCH_FILES}
    assert {'dynamics.launch.py', 'demo.launch.py'} <= names


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_structure(path):
    """The file compiles, defines the entry point, and starts installed executables only."""
    tree = ast.parse(path.read_text(), filename=str(path))
    functions = {f.name for f in tree.body if isinstance(f, ast.FunctionDef)}
    assert 'generate_launch_description' in functions
    nodes = list(node_calls(tree))
    assert nodes, 'no Node actions'
    scripts = console_scripts()
    for kwargs in nodes:
        assert ast.literal_eval(kwargs['package']) == 'denoc_ros'
        assert ast.literal_eval(kwargs['executable']) in scripts


def test_dynamics_yaml_matches_node():
    """config/dynamics.yaml holds declared parameters only, each at the node's own default."""
    from denoc_ros.ros.settings import DYNAMICS_PARAMETERS
    defaults = {spec.name: spec.default for spec in DYNAMICS_PARAMETERS}
    data = yaml.safe_load((REPO / 'config' / 'dynamics.yaml').read_text())
    params = data['/**']['ros__parameters']
    assert set(params) <= set(defaults)
    for name, value in params.items():
        assert value == defaults[name], name


@pytest.mark.parametrize('path', LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_description_builds(path, monkeypatch):
    """With launch_ros available, generate_launch_description() returns a description."""
    pytest.importorskip('launch_ros')  # optional: make test installs no launch_ros (no wheel)
    import importlib.util
    spec = importlib.util.spec_from_file_location(path.stem.replace('.', '_'), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.generate_launch_description().entities
