"""Which collected test owns which baseline file: the files no test used (listed
at the end of a session, deleted by ``--chunkeval-update``)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from pathlib import Path

from pytest_chunkeval.gate.files.corpus_table import table_function
from pytest_chunkeval.gate.files.lookup import function_of
from pytest_chunkeval.gate.files.paths import (
    BaselineLayout,
    NodeRef,
    absolute,
    legacy_sanitize_name,
    owns,
    real,
    sanitize_name,
)


def unused_files(
    layout: BaselineLayout,
    collected: Iterable[NodeRef],
    *,
    touched: Collection[Path],
    passed: Collection[str],
    partial: Iterable[Path],
    names: Callable[[str], list[str]],
) -> list[Path]:
    """Baseline files no test used, among the modules of the ``collected``
    tests (deselected ones included).

    ``touched``: the files checks used (absolute); ``passed``: node ids of the
    tests that passed: files of a test that did not pass (failed, skipped,
    deselected, not reached) are never reported, the test may still use them.
    Files of a test module that no longer exists are reported; modules not
    collected (``pytest tests/test_a.py``) are left alone, and so are the
    ``partial`` test files, selected by node id: their other tests' files have
    no owner in this session but are not unused. ``names(test)``: the test's
    id and the ids it had before (legacy.py). A per-question function's shared
    corpus table is its items' (all of them).
    """
    # Real paths: the command line's paths (relative to the invocation
    # directory) and node ids (relative to rootdir) may differ by a symlink.
    partial_files = {real(Path(f)) for f in partial}
    modules: dict[Path, list[NodeRef]] = {}
    for ref in collected:
        modules.setdefault(absolute(ref.path), []).append(ref)
    roots = {layout.scan_root(f) for f in modules}
    unused = []
    for root in sorted(roots):
        for file in layout.files_under(root):
            if absolute(file) in touched:
                continue
            test_file = absolute(layout.test_file_of(file.parent))
            if partial_files and real(test_file) in partial_files:
                continue  # only some of its tests were collected
            tests = modules.get(test_file)
            if tests is None:
                if not test_file.exists():
                    unused.append(file)  # its test module was deleted or renamed
                continue
            owners = [t for t in tests if _owns(t, file.stem, names)]
            if all(t.nodeid in passed for t in owners):
                unused.append(file)
    return unused


def item_files(unused: Iterable[Path]) -> list[Path]:
    """Of the ``unused`` files, the per-question items' (a file of a function
    whose items share a corpus table beside it): a question gone from the set,
    which fails the session as syrupy's unused snapshots do (docs/baselines.md,
    "The question set is part of the baseline")."""
    out = []
    for file in unused:
        functions = [
            f
            for table in file.parent.glob("*.corpus.json")
            if (f := table_function(table.name[: -len(".json")])) is not None
        ]
        if any(file.stem.startswith(f"{f}[") for f in functions):
            out.append(file)
    return out


def _owns(test: NodeRef, stem: str, names: Callable[[str], list[str]]) -> bool:
    """Whether ``test`` owns the file ``stem``: one of its baselines, or the
    corpus table its function's per-question items share (corpus_table.py)."""
    if any(owns(n, stem) for n in names(test.name)):
        return True
    shared = table_function(stem)
    function = function_of(test.name)
    return (
        shared is not None
        and function is not None
        and (shared in (sanitize_name(function), legacy_sanitize_name(function)))
    )
