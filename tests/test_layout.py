"""The package's shape, read from the source with ``ast``: imports point down the
declared layering (docs/architecture.md#layering) and never form a cycle, at any
level (an import inside a function is still a dependency); private names stay in
their module; modules and functions stay small; every folder introduces itself;
the public API is small and each of its names written once; no test module
imports another (tests/support/ holds what tests share).
"""

from __future__ import annotations

import ast
import importlib
import os
import py_compile
import re
import subprocess
import sys
import zipfile
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from support.project_runs import run_pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "pytest_chunkeval"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
MAX_LINES = 450
MAX_FUNCTION_LINES = 80

# The allowances below are temporary, each with its reason: code that a change in
# flight is rewriting. A test fails when an entry is no longer needed.

OVERSIZE: dict[str, int] = {}
"""Modules allowed past the limit for now (module -> its own limit)."""

LONG_FUNCTIONS: dict[str, int] = {}
"""Functions allowed past the limit for now (module.qualname -> its own limit)."""

PRIVATE_IMPORTS: set[tuple[str, str]] = set()
"""``(importing module, imported module.name)`` pairs allowed for now."""

LAYERING_EXCEPTIONS: set[tuple[str, str]] = set()
"""``(importing module, imported module)`` pairs outside the table, for now."""

FLOOR = {"errors", "util"}
"""Every folder may import these."""


def _modules() -> dict[str, Path]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The module a ``from ... import`` names, relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, *([node.module] if node.module else [])])


def imports_of(module: str, path: Path, tree: ast.Module) -> list[tuple[str, str]]:
    """Every ``(module, name)`` an import statement anywhere in ``tree`` names
    (``name`` is ``""`` for ``import module``)."""
    found: list[tuple[str, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, "") for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _absolute(module, path, node)
            found.extend((target, alias.name) for alias in node.names)
    return found


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports, at any level (``from a import b``
    gives ``a``, and ``a.b`` when b is a submodule)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for target, attr in imports_of(name, path, _tree(path)):
            if f"{target}.{attr}" in modules:
                targets.add(f"{target}.{attr}")
            elif target in modules:
                targets.add(target)
        targets.discard(name)
        graph[name] = targets
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


def test_the_graph_sees_every_level_of_import(tmp_path: Path) -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from pytest_chunkeval.core import spans\n"
        "if TYPE_CHECKING:\n"
        "    from pytest_chunkeval.gate.files.baseline import Baseline\n"
        "def f():\n"
        "    from pytest_chunkeval.run import session\n"
        "    from .sibling import helper\n"
    )
    path = tmp_path / "pytest_chunkeval" / "engine" / "x.py"
    found = imports_of("pytest_chunkeval.engine.x", path, ast.parse(source))
    assert ("pytest_chunkeval.core", "spans") in found
    assert ("pytest_chunkeval.gate.files.baseline", "Baseline") in found
    assert ("pytest_chunkeval.run", "session") in found  # inside a function
    assert ("pytest_chunkeval.engine.sibling", "helper") in found  # relative


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports() -> list[tuple[str, str]]:
    """``(module, imported.name)`` for every private name imported from another
    module of the package."""
    found = []
    for name, path in _modules().items():
        for target, attr in imports_of(name, path, _tree(path)):
            if (
                target.startswith("pytest_chunkeval")
                and target != name
                and _is_private(attr)
            ):
                found.append((name, f"{target}.{attr}"))
    return found


def test_no_private_name_is_imported_across_modules() -> None:
    found = [pair for pair in private_imports() if pair not in PRIVATE_IMPORTS]
    assert not found, (
        "private names imported from another module (make the helper public, in a "
        "module with a private name if it is internal, as stores/_base.py does): "
        + ", ".join(f"{m} imports {n}" for m, n in found)
    )
    stale = PRIVATE_IMPORTS - set(private_imports())
    assert not stale, f"remove from PRIVATE_IMPORTS: {sorted(stale)}"


def _folder(module: str) -> str:
    """The top-level part of the package a module belongs to: a folder name, or a
    root module's own name (``plugin``, ``errors``...; the root is ``""``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layering() -> dict[str, set[str]]:
    """The table in docs/architecture.md: folder -> the folders it may import."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    block = text.split("<!-- layering -->", 1)[1].split("<!-- /layering -->", 1)[0]
    rows = {}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not cells[0].startswith("`"):
            continue
        rows[cells[0].strip("`")] = cells[1]
    folders = set(rows)
    allowed: dict[str, set[str]] = {}
    for folder, cell in rows.items():
        if cell.startswith("every folder but"):
            allowed[folder] = folders - set(re.findall(r"`(\w+)`", cell)) - {folder}
        else:
            allowed[folder] = set(re.findall(r"`(\w+)`", cell.split("(")[0]))
    return allowed


ROOT_MODULES: dict[str, set[str] | None] = {"plugin": None, "": None}
"""The package root's modules outside the table: None may import anything."""


def layering_violations() -> list[tuple[str, str]]:
    allowed = layering()
    found = []
    for module, targets in import_graph().items():
        source = _folder(module)
        may = allowed.get(source, ROOT_MODULES.get(source, set()))
        if may is None:
            continue
        for target in targets:
            folder = _folder(target)
            if folder in (source, *FLOOR) or folder in may:
                continue
            found.append((module, target))
    return sorted(found)


def test_the_layering_table_names_every_folder() -> None:
    folders = {p.parent.name for p in PACKAGE.glob("*/__init__.py")}
    root_modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert set(layering()) >= folders
    assert set(layering()) <= folders | root_modules


def test_imports_follow_the_declared_layering() -> None:
    found = [pair for pair in layering_violations() if pair not in LAYERING_EXCEPTIONS]
    assert not found, (
        "imports the layering in docs/architecture.md does not allow: "
        + ", ".join(f"{m} -> {t}" for m, t in found)
    )
    stale = LAYERING_EXCEPTIONS - set(layering_violations())
    assert not stale, f"remove from LAYERING_EXCEPTIONS: {sorted(stale)}"


def folder_graph() -> dict[str, set[str]]:
    """Folder (or root module) -> the folders its modules import, at any level;
    the floor left out (it imports nothing above it)."""
    graph: dict[str, set[str]] = {}
    for module, targets in import_graph().items():
        source = _folder(module)
        graph.setdefault(source, set())
        for target in targets:
            folder = _folder(target)
            graph.setdefault(folder, set())
            if folder != source and folder not in FLOOR:
                graph[source].add(folder)
    return graph


def test_the_folders_import_each_other_without_a_cycle() -> None:
    graph = folder_graph()
    assert {"core", "config", "tokenizers", "gate"} <= set(graph)
    assert "core" in graph["config"]  # the graph sees folder edges
    cycle = find_cycle(graph)
    assert cycle is None, "folder import cycle: " + " -> ".join(cycle or [])


def test_the_layering_table_has_no_cycle() -> None:
    allowed = layering()
    graph = {
        f: {t for t in may if t in allowed and t != f} for f, may in allowed.items()
    }
    cycle = find_cycle(graph)
    assert cycle is None, "cycle in docs/architecture.md's table: " + " -> ".join(
        cycle or []
    )


def test_the_layering_parser_reads_the_table() -> None:
    allowed = layering()
    assert allowed["config"] == {"util", "core"}
    assert "engine" in allowed["gate"]
    assert "cli" not in allowed["run"]
    assert "gate" in allowed["run"]


def test_every_oversize_allowance_is_still_needed() -> None:
    modules = _modules()
    stale = [
        m
        for m in OVERSIZE
        if m not in modules
        or len(modules[m].read_text(encoding="utf-8").splitlines()) <= MAX_LINES
    ]
    assert not stale, f"remove from OVERSIZE: {stale}"


@pytest.mark.parametrize("module", sorted(_modules()))
def test_no_module_is_longer_than_the_limit(module: str) -> None:
    path = _modules()[module]
    limit = OVERSIZE.get(module, MAX_LINES)
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= limit, (
        f"{path.relative_to(PACKAGE.parent)} has {lines} lines (limit {limit}): "
        "split it along its roles"
    )


def long_functions() -> dict[str, int]:
    """``module.qualname -> lines`` of every function over the limit."""
    found = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (child.end_lineno or child.lineno) - child.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    found[f"{prefix}{child.name}"] = lines
                visit(child, f"{prefix}{child.name}.")

    for name, path in _modules().items():
        visit(_tree(path), f"{name}.")
    return found


def test_no_function_is_longer_than_the_limit() -> None:
    too_long = {
        f: n for f, n in long_functions().items() if n > LONG_FUNCTIONS.get(f, 0)
    }
    assert not too_long, f"functions over {MAX_FUNCTION_LINES} lines: {too_long}"
    stale = set(LONG_FUNCTIONS) - set(long_functions())
    assert not stale, f"remove from LONG_FUNCTIONS: {sorted(stale)}"


@pytest.mark.parametrize(
    "init", sorted(PACKAGE.glob("*/__init__.py")), ids=lambda p: p.parent.name
)
def test_every_folder_introduces_itself(init: Path) -> None:
    doc = ast.get_docstring(_tree(init)) or ""
    assert "Stage" in doc, f"{init.parent.name}/__init__.py: say which stage it is"
    assert "May import" in doc, f"{init.parent.name}/__init__.py: what it may import"


def imports_of_test_modules(folder: Path) -> list[str]:
    """``file:line name`` for each import of a test module (or a conftest) by a
    file under ``folder``: what tests share lives in tests/support/."""
    tests = {path.stem for path in folder.glob("test_*.py")} | {"conftest"}
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
                if node.module == "tests":
                    names = [f"tests.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                first = parts[1] if parts[0] == "tests" and len(parts) > 1 else parts[0]
                if first in tests:
                    found.append(f"{path.relative_to(folder)}:{node.lineno} {name}")
    return found


def test_no_test_module_imports_another() -> None:
    found = imports_of_test_modules(ROOT / "tests")
    assert not found, "move what is shared to tests/support/: " + ", ".join(found)


def test_tests_import_their_support_as_support() -> None:
    """``tests.support`` resolves only where the working directory is on sys.path
    (``python -m pytest``, not ``pytest`` or .ci/write_bytecode.py), and beside
    ``support`` it would load a second copy of each helper module."""
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            if any(name.startswith("tests.support") for name in names):
                found.append(f"{path.name}:{node.lineno}")
    assert not found, "import support.X, not tests.support.X: " + ", ".join(found)


def test_naming_a_helper_that_starts_python_marks_the_test_pytester(
    request: pytest.FixtureRequest,
) -> None:
    """tests/conftest.py marks ``pytester`` (left out of ``make compat``) a test
    whose code names a helper of tests/support that starts a Python child, as
    this one names ``run_pytest``, not only one that starts it itself."""
    assert callable(run_pytest)
    assert request.node.get_closest_marker("pytester") is not None


def test_the_test_import_check_finds_every_spelling(tmp_path: Path) -> None:
    (tmp_path / "test_a.py").write_text("X = 1\n")
    (tmp_path / "support").mkdir()
    (tmp_path / "support" / "helpers.py").write_text(
        "import os\nfrom support.other import Y\ndef f():\n    from test_a import X\n"
    )
    (tmp_path / "test_b.py").write_text(
        "import tests.test_a\nfrom tests import test_a\nfrom tests.test_a import X\n"
        "from conftest import fixture\nfrom support.helpers import f\n"
    )
    assert imports_of_test_modules(tmp_path) == [
        "support/helpers.py:4 test_a",
        "test_b.py:1 tests.test_a",
        "test_b.py:2 tests.test_a",
        "test_b.py:3 tests.test_a",
        "test_b.py:4 conftest",
    ]


CLOCKS = {"perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time"}


def _reads_the_clock(node: ast.AST) -> bool:
    return any(
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in CLOCKS
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "time"
        for call in ast.walk(node)
    )


def unmarked_clock_asserts(folder: Path) -> list[str]:
    """``file:line test`` for each assert comparing a clock reading (directly or
    through a name bound to one) in a test not marked ``perf``. A bound on a
    wait (a name holding "deadline") guards against a hang and is not a budget."""
    found = []
    for path in sorted(folder.glob("test_*.py")):
        for test in ast.walk(_tree(path)):
            if not isinstance(test, ast.FunctionDef) or not test.name.startswith(
                "test_"
            ):
                continue
            if any("perf" in ast.unparse(mark) for mark in test.decorator_list):
                continue
            timed = {
                target.id
                for node in ast.walk(test)
                if isinstance(node, ast.Assign) and _reads_the_clock(node.value)
                for target in node.targets
                if isinstance(target, ast.Name)
            }
            for node in ast.walk(test):
                if not isinstance(node, ast.Assert) or not isinstance(
                    node.test, ast.Compare
                ):
                    continue
                names = {n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)}
                if any("deadline" in name for name in names):
                    continue
                if _reads_the_clock(node.test) or names & timed:
                    found.append(f"{path.name}:{node.lineno} {test.name}")
    return found


def test_a_wall_clock_budget_is_marked_perf() -> None:
    # make unit runs perf tests alone, after the rest: under load a budget fails
    found = unmarked_clock_asserts(ROOT / "tests")
    assert not found, "mark these @pytest.mark.perf: " + ", ".join(found)


def test_the_clock_check_finds_a_budget(tmp_path: Path) -> None:
    (tmp_path / "test_x.py").write_text(
        "import time\nimport pytest\n\n"
        "def test_direct():\n    t = time.perf_counter()\n"
        "    assert time.perf_counter() - t < 1\n\n"
        "def test_through_a_name():\n    t = time.perf_counter()\n"
        "    took = time.perf_counter() - t\n    assert took < 1\n\n"
        "@pytest.mark.perf\ndef test_marked():\n"
        "    assert time.monotonic() < 1e12\n\n"
        "def test_hang_guard():\n    deadline = time.monotonic() + 60\n"
        "    assert time.monotonic() < deadline\n"
    )
    assert unmarked_clock_asserts(tmp_path) == [
        "test_x.py:6 test_direct",
        "test_x.py:11 test_through_a_name",
    ]


def test_the_code_cites_the_docs_not_the_spec() -> None:
    cited = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in _modules().values()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "SPEC §" in line
    ]
    assert not cited, "cite the docs section that defines it instead: " + ", ".join(
        cited
    )


def test_validators_raise_config_error_and_one_place_adapts_them() -> None:
    # docs/architecture.md: an option's validator raises ConfigError; argparse's
    # usage error is raised by config/option.argparse_type alone.
    raising = sorted(
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in _modules().values()
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Raise)
        and node.exc is not None
        and "ArgumentTypeError" in ast.unparse(node.exc)
    )
    assert len(raising) == 1, raising
    assert raising[0].startswith("pytest_chunkeval/config/option.py:"), (
        f"{raising}: raise ConfigError and give argparse_type(validator) as the type"
    )


PUBLIC_API_SIZE = 40
"""At most this many names at the package's top level (docs/index.md, "The Python
API"): what moved off it is in its module (pytest_chunkeval.assertions...)."""


def _public_api() -> list[tuple[str, str]]:
    """``(module, name)`` of each ``TYPE_CHECKING`` import of the package's
    ``__init__.py``: the public API."""
    tree = _tree(PACKAGE / "__init__.py")
    found = []
    for node in tree.body:
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom), ast.unparse(stmt)
                for alias in stmt.names:
                    # ``X as X``: re-exported for type checkers (PEP 484)
                    assert alias.asname == alias.name, ast.unparse(stmt)
                    found.append((stmt.module or "", alias.name))
    return found


def test_the_public_api_is_small_and_each_name_written_once() -> None:
    import pytest_chunkeval

    api = _public_api()
    names = [name for _, name in api]
    assert len(set(names)) == len(names), "a public name imported twice"
    assert 0 < len(names) <= PUBLIC_API_SIZE, len(names)
    # the lazy table (data, so that an install without sources resolves it)
    # says what the imports say, and __all__ is its names
    table = pytest_chunkeval._PUBLIC
    assert table == {name: module for module, name in api}
    assert list(table) == names  # in the imports' order
    assert pytest_chunkeval.__all__ == sorted(names)
    # written twice: an import (``X as X``) and the table's key, never again as
    # a string or a name
    written = Counter(
        alias.name
        for node in ast.walk(_tree(PACKAGE / "__init__.py"))
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    )
    for node in ast.walk(_tree(PACKAGE / "__init__.py")):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            written[node.value] += 1
        elif isinstance(node, ast.Name):
            written[node.id] += 1
    again = {name: written[name] for name in names if written[name] != 2}
    assert not again, f"public names written other than twice: {again}"
    # no public name from a private module
    private = [
        f"{m}.{n}" for m, n in api if any(p.startswith("_") for p in m.split("."))
    ]
    assert not private, private


def test_the_public_api_resolves_without_the_package_source(tmp_path: Path) -> None:
    # An install of compiled files only (a zip, a .pyc-only image): the package's
    # __init__ is a .pyc in a zip, its other modules come from this tree.
    compiled = tmp_path / "__init__.pyc"
    py_compile.compile(str(PACKAGE / "__init__.py"), cfile=str(compiled), doraise=True)
    archive = tmp_path / "sourceless.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.write(compiled, "pytest_chunkeval/__init__.pyc")
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(archive)!r})\n"
        "import pytest_chunkeval as p\n"
        f"assert p.__file__.startswith({str(archive)!r}), p.__file__\n"
        f"p.__path__.append({str(PACKAGE)!r})\n"
        "print(len(p.__all__), p.QuerySet.__module__)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [
        str(len(_public_api())),
        "pytest_chunkeval.data.queries",
    ]


def test_every_public_name_resolves_from_its_module() -> None:
    import pytest_chunkeval

    for module, name in _public_api():
        value = getattr(pytest_chunkeval, name)
        assert value is getattr(importlib.import_module(module), name), name


KEY_MODULE = "pytest_chunkeval.engine.keys"
"""The one package that builds cache keys (docs/performance.md, "What a cache
keys on")."""
KEYED_FOLDERS = ("engine", "relationships", "run")
"""The folders whose caches key an evaluation's work."""
CONFIGURATION = {
    "identity",
    "spec",
    "config",
    "store",
    "embedder",
    "tokenizer",
    "reranker",
    "chunker",
    "candidates",
    "version",
    "settings",
}
"""Names whose value is a configuration or a component's identity."""


def hashing_sites(
    tree: ast.Module,
) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, set[str]]]:
    """Each function that hashes (``hashlib.*``, ``entry_key``, ``.update``
    of a hash), with the names and attributes its hashed values read."""
    sites = []
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        read: set[str] = set()
        hashes = False
        for call in ast.walk(func):
            if not isinstance(call, ast.Call):
                continue
            callee = ast.unparse(call.func)
            if not (
                callee.startswith("hashlib.")
                or callee == "entry_key"
                or callee.endswith(".update")
            ):
                continue
            hashes = hashes or not callee.endswith(".update")
            for arg in [*call.args, *(k.value for k in call.keywords)]:
                for node in ast.walk(arg):
                    if isinstance(node, ast.Name):
                        read.add(node.id)
                    elif isinstance(node, ast.Attribute):
                        read.add(node.attr)
        if hashes:
            sites.append((func, read))
    return sites


def test_cache_keys_are_built_only_by_the_key_module() -> None:
    # docs/performance.md: what determines a result is written once; every key
    # is engine/keys/'s, so no other module of the evaluation's folders hashes
    # a configuration or an identity, or calls entry_key.
    built = []
    for module, path in _modules().items():
        folder = module.split(".")[1] if "." in module else ""
        if module == KEY_MODULE or module.startswith(f"{KEY_MODULE}."):
            continue
        for func, read in hashing_sites(_tree(path)):
            calls_entry_key = any(
                isinstance(n, ast.Call) and ast.unparse(n.func) == "entry_key"
                for n in ast.walk(func)
            )
            mixed = read & CONFIGURATION if folder in KEYED_FOLDERS else set()
            if calls_entry_key or mixed:
                where = f"{path.relative_to(ROOT)}:{func.lineno}"
                built.append(f"{where} ({', '.join(sorted(mixed)) or 'entry_key'})")
    assert not built, "cache keys built outside engine/keys/: " + "; ".join(built)


def test_the_key_check_finds_a_key_built_elsewhere() -> None:
    tree = ast.parse(
        "import hashlib\n"
        "def key(store, k):\n"
        "    h = hashlib.sha256(f'{store.identity}')\n"
        "    h.update(str(k).encode())\n"
        "    return h.hexdigest()\n"
        "def content(text):\n"
        "    return hashlib.sha256(text.encode()).hexdigest()\n"
    )
    sites = {func.name: read for func, read in hashing_sites(tree)}
    assert "identity" in sites["key"]
    assert not sites["content"] & CONFIGURATION


def test_every_threshold_metric_has_its_assertion_helper() -> None:
    """The metric table's threshold metrics (the marker's ``min_*``) each have an
    ``assert_<metric>_at_least`` in ``pytest_chunkeval.assertions``, one
    implementation for all, and no other metric has one."""
    from pytest_chunkeval import assertions
    from pytest_chunkeval.core.metric_names import METRIC_TABLE, thresholds

    for metric in thresholds().values():
        name = f"assert_{metric}_at_least"
        helper = getattr(assertions, name)
        assert helper.__name__ == name
        assert helper.__module__ == "pytest_chunkeval.assertions"
        assert helper.__doc__, name
    others = {f"assert_{m.name}_at_least" for m in METRIC_TABLE if not m.marker}
    assert not others & set(vars(assertions)), others & set(vars(assertions))
    assert assertions.assert_metric_at_least.__module__ == assertions.__name__


# -- stores declare themselves ----------------------------------------------------

_STRING_CALLS = {"startswith", "endswith", "removeprefix", "removesuffix"}
_REGEX_CALLS = {"compile", "search", "match", "fullmatch", "sub", "findall", "split"}


@cache
def _store_types() -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The store types (registered names without a scheme: ``chroma``, ``faiss``),
    the modules of stores/ that implement one, and the classes those define."""
    from pytest_chunkeval.stores import STORES

    names = frozenset(name.split("+")[0] for name in STORES)
    modules, classes = set(), set()
    for path in sorted((PACKAGE / "stores").glob("*.py")):
        if path.stem.lstrip("_").split("_")[0] not in names:
            continue
        modules.add(f"pytest_chunkeval.stores.{path.stem}")
        tree = _tree(path)
        classes |= {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    return names, frozenset(modules), frozenset(classes)


def _names_a_store(text: str, names: frozenset[str], *, pattern: bool) -> bool:
    """Whether a string compared with, or searched for, names a store type: the
    name itself or a spec of it (``chroma:PATH``, ``qdrant+http://``,
    ``faiss?M=8``); inside a regular expression or a prefix, anywhere."""
    alternatives = "|".join(sorted(names))
    spec = rf"(?<![A-Za-z0-9_])({alternatives})(?![A-Za-z0-9_])([:+?]|$)"
    if pattern:  # an escape (``\bchroma:``) does not join the name
        return re.search(spec, re.sub(r"\\[A-Za-z]", " ", text)) is not None
    return text in names or re.match(spec, text) is not None


def store_type_mentions(tree: ast.Module) -> list[tuple[int, str]]:
    """Where a module outside stores/ names a store type in its code (docstrings
    and messages aside): an import of a store's module or class, a store class,
    a comparison with a store's name or spec, a prefix or a regular expression
    matching one."""
    names, modules, classes = _store_types()
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in modules:
            found.append((node.lineno, f"imports {node.module}"))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name in modules]
        elif isinstance(node, ast.alias) and node.name in classes:
            found.append((getattr(node, "lineno", 0), node.name))
        elif isinstance(node, ast.Name) and node.id in classes:
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in classes:
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            texts = [
                c.value
                for side in sides
                for c in ast.walk(side)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            ]
            found += [
                (node.lineno, repr(t))
                for t in texts
                if _names_a_store(t, names, pattern=False)
            ]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            regex = node.func.attr in _REGEX_CALLS and ast.unparse(node.func.value) in (
                "re",
                "regex",
            )
            if not (regex or node.func.attr in _STRING_CALLS):
                continue
            found += [
                (node.lineno, repr(c.value))
                for arg in node.args
                for c in ast.walk(arg)
                if isinstance(c, ast.Constant)
                and isinstance(c.value, str)
                and _names_a_store(c.value, names, pattern=regex)
            ]
    return found


def test_no_module_outside_stores_names_a_store_type() -> None:
    # docs/stores.md, "What a store declares": what the plugin knows of a store it
    # reads from the store's declarations (stores/_base.py), so adding a store is
    # one module and one registration.
    found = [
        f"{path.relative_to(ROOT)}:{line} {what}"
        for module, path in _modules().items()
        if not module.startswith("pytest_chunkeval.stores")
        for line, what in store_type_mentions(_tree(path))
    ]
    assert not found, "a store type named outside stores/: " + "; ".join(found)


def test_the_store_type_check_finds_each_kind_of_mention() -> None:
    tree = ast.parse(
        "import re\n"
        "from pytest_chunkeval.stores.exact import ExactStore\n"
        "LOCAL = re.compile(r'(?<![\\w+])chroma:(?!//)[^?&@\\s]+')\n"
        "FOLDER = re.compile(r'\\bchroma:[^?&@\\s]+')\n"
        "def f(store, spec, locate):\n"
        "    if isinstance(store, ExactStore) or spec == 'faiss':\n"
        "        return spec.startswith('qdrant+http')\n"
        "    return locate == 'normalized' and store.name in ('x', 'y')\n"
    )
    lines = sorted({line for line, _ in store_type_mentions(tree)})
    assert lines == [2, 3, 4, 6, 7]
