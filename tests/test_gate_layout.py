"""The gate reads as its flow (issue 30 item 7; pytest_chunkeval/gate/__init__.py):
its folders import only those before them, ``files/`` <- ``comparison/`` <-
``outcome/`` <- the top-level modules (check.py, store.py, records.py,
reading.py, writing.py), and ``tolerances.py`` (the settings) imports none of them."""

from __future__ import annotations

import ast
from pathlib import Path

GATE = Path(__file__).resolve().parents[1] / "pytest_chunkeval" / "gate"
ORDER = ("tolerances", "files", "comparison", "outcome", "top")
"""Each part of the gate may import the parts before it (and itself)."""


def _part(module: str) -> str | None:
    """The part of ``pytest_chunkeval.gate.x[.y]``; None outside the gate."""
    parts = module.split(".")
    if parts[:2] != ["pytest_chunkeval", "gate"] or len(parts) < 3:
        return None
    if parts[2] in ("files", "comparison", "outcome", "tolerances"):
        return parts[2]
    return "top"


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def upward_imports() -> list[str]:
    """``module -> imported`` for each import of a later part of the gate."""
    found = []
    for path in sorted(GATE.rglob("*.py")):
        rel = path.relative_to(GATE.parents[1]).with_suffix("")
        module = ".".join(rel.parts).removesuffix(".__init__")
        mine = _part(module)
        if mine is None:  # gate/__init__.py
            continue
        for target in _imports(path):
            theirs = _part(target)
            if theirs is not None and ORDER.index(theirs) > ORDER.index(mine):
                found.append(f"{module} -> {target}")
    return found


def test_the_gate_folders_import_down_the_flow() -> None:
    assert upward_imports() == []


def test_the_check_finds_an_upward_import() -> None:
    assert _part("pytest_chunkeval.gate.files.baseline") == "files"
    assert _part("pytest_chunkeval.gate.check") == "top"
    assert _part("pytest_chunkeval.gate.tolerances") == "tolerances"
    assert _part("pytest_chunkeval.core.spans") is None
    assert ORDER.index("outcome") > ORDER.index("comparison")


def test_the_gate_imports_nothing_by_name() -> None:
    # importlib would step past the layering (docs/architecture.md): what the gate
    # needs of a component is recorded in the configuration (engine/recorded.py)
    by_name = [
        str(path.relative_to(GATE))
        for path in sorted(GATE.rglob("*.py"))
        if {"importlib", "importlib.metadata"} & _imports(path)
        or "__import__(" in path.read_text(encoding="utf-8")
    ]
    assert not by_name, f"the gate imports modules by name in {by_name}"
