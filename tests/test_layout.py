"""The package's shape: imports point down (no cycle) and modules stay small.

Read from the source with ``ast``: a module's imports are the ones it runs at
import time, including those under ``if TYPE_CHECKING:`` (a cycle there is still
two modules that each need the other); imports inside functions are lazy by design
and are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "pytest_chunkeval"
MAX_LINES = 550
OVERSIZE: dict[str, int] = {}
"""Modules allowed past the limit for now (module -> its own limit); keep it empty."""


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _module_level_imports(tree: ast.Module) -> list[str]:
    """Every module name a module-level statement imports (``from a import b``
    gives ``a`` and ``a.b``: b may be a submodule)."""
    names: list[str] = []

    def walk(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.Import):
                names.extend(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module)
                names.extend(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.If):
                walk(node.body)
                walk(node.orelse)
            elif isinstance(node, ast.Try):
                walk(node.body)
                for handler in node.handlers:
                    walk(handler.body)
                walk(node.orelse)
                walk(node.finalbody)

    walk(tree.body)
    return names


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports at module level."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        graph[name] = {
            target
            for target in _module_level_imports(tree)
            if target in modules and target != name
        }
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as a path ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_the_package_has_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_the_graph_sees_type_checking_imports(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from pytest_chunkeval.core import spans\n"
        "if TYPE_CHECKING:\n"
        "    from pytest_chunkeval.gate.baseline import Baseline\n"
        "def f():\n"
        "    from pytest_chunkeval.run import session\n"
    )
    names = _module_level_imports(ast.parse(source))
    assert "pytest_chunkeval.core.spans" in names
    assert "pytest_chunkeval.gate.baseline" in names
    assert "pytest_chunkeval.run.session" not in names  # lazy: inside a function


@pytest.mark.parametrize("module", sorted(_modules()))
def test_no_module_is_longer_than_the_limit(module: str) -> None:
    path = _modules()[module]
    limit = OVERSIZE.get(module, MAX_LINES)
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= limit, (
        f"{path.relative_to(PACKAGE.parent)} has {lines} lines (limit {limit}): "
        "split it along its roles"
    )
