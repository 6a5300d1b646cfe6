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

"""The package's modules import each other without a circle (read from the sources with ast)."""

import ast
import pathlib

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / 'denoc_ros'


def module_name(path):
    """Return the dotted name of a source file of the package."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix('').parts)
    if parts[-1] == '__init__':
        parts.pop()
    return '.'.join(parts)


def imports(path, known):
    """Return the package modules that ``path`` imports anywhere in it (functions included)."""
    name = module_name(path)
    package = name if path.name == '__init__.py' else name.rpartition('.')[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ''
            if node.level:
                anchor = package.split('.')[:len(package.split('.')) - node.level + 1]
                base = '.'.join(anchor + ([base] if base else []))
            for alias in node.names:
                sub = f'{base}.{alias.name}'
                if sub in known:  # "from . import _compile": the submodule
                    found.add(sub)
                elif base in known:
                    found.add(base)
    found.discard(name)
    return found


def import_graph():
    """Return {module: set of package modules it imports} over every source of the package."""
    paths = sorted(PACKAGE.rglob('*.py'))
    known = {module_name(p) for p in paths}
    return {module_name(p): imports(p, known) for p in paths}


def find_cycle(graph):
    """Return one import circle as a list of modules, or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = 'open'
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 'open':
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        state[node] = 'done'
        stack.pop()
        return None
    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_graph_reader_finds_a_circle():
    """The check can fail: a made-up circle is found."""
    assert find_cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}) == ['a', 'b', 'c', 'a']
    assert find_cycle({'a': {'b'}, 'b': set()}) is None


def test_the_package_has_no_import_circle():
    """No module imports, directly or through others, one that imports it."""
    graph = import_graph()
    assert 'denoc_ros.dynamics._packed' in graph['denoc_ros.dynamics._state']
    assert 'denoc_ros.joints' in graph['denoc_ros.model']
    assert find_cycle(graph) is None, ' -> '.join(find_cycle(graph))


def test_the_model_imports_no_kernel():
    """The model and the joint tables stand below the dynamics layer."""
    graph = import_graph()
    for leaf in ('denoc_ros.model', 'denoc_ros.joints', 'denoc_ros.spatial'):
        assert not any(m.startswith('denoc_ros.dynamics') for m in graph[leaf]), leaf
