"""The corpus table a test function's per-question items share
(docs/baselines.md, "Per-question baselines").

A per-question item (``test_q[q-bark]``) compares one question, but its
baseline needs the corpus it was measured on (``corpus_hash`` and the
per-document records that name an edit). Written into every item's file, one
edited document would change every file; so the items of one test function
share one table beside their files, ``<function>.corpus.json``::

    {
     "chunkeval_corpus_table": 1,
     "corpus_hash": "d13f…",
     "documents": {
      "finance.md": {"chars": 274, "hash": "9d20d6217f29b825", "sentences": 5},
      …
     },
     "test": "test_q"
    }

and each item's file (schema 6; 4 before anchors) keeps what is its own and names
the table
(``"corpus_table": "test_q.corpus.json"``) instead of ``corpus_hash`` and
``documents``. Reading an item reads its table and fails closed: a table that
is missing, unreadable, another function's, or without the document of the
item's question is :class:`~pytest_chunkeval.gate.files.baseline.BaselineCorrupt`
naming the table. Files holding the corpus themselves (schema 1-3) are read as
before; ``--chunkeval-update`` rewrites them in this form.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_chunkeval.gate.files.baseline import (
    ITEM_SCHEMAS,
    SHARED_CORPUS_SCHEMA,
    VERSION_KEY,
    Baseline,
    BaselineCorrupt,
    read_json,
    render,
)
from pytest_chunkeval.gate.files.documents import valid_records
from pytest_chunkeval.gate.files.lookup import function_of
from pytest_chunkeval.gate.files.paths import BaselineLayout, NodeRef, sanitize_name

TABLE_KEY = "chunkeval_corpus_table"
TABLE_VERSION = 1
REFERENCE_KEY = "corpus_table"
"""The key of an item's file naming its table (a file name in its folder)."""
TABLE_SUFFIX = ".corpus"
"""A table's file name is ``<function>.corpus.json``."""
CORPUS_KEYS = ("corpus_hash", "documents")
"""What the table holds for the items."""


def table_path(layout: BaselineLayout, test: NodeRef) -> Path | None:
    """The table a per-question item of ``test``'s function shares (None for
    a test that is not parametrized)."""
    function = function_of(test.name)
    if function is None:
        return None
    name = f"{sanitize_name(function)}{TABLE_SUFFIX}.json"
    return layout.module_dir(test.path) / name


def table_function(stem: str) -> str | None:
    """The sanitized function name of a table's file stem, None if ``stem``
    is not a table's."""
    return stem[: -len(TABLE_SUFFIX)] if stem.endswith(TABLE_SUFFIX) else None


def table_text(baseline: Baseline) -> str:
    """The table of ``baseline``'s corpus, for its test's function."""
    return render(
        {
            TABLE_KEY: TABLE_VERSION,
            "test": function_of(baseline.test) or baseline.test,
            "corpus_hash": baseline.corpus_hash,
            "documents": {d: dict(v) for d, v in baseline.documents.items()},
        }
    )


def item_text(baseline: Baseline, table: Path) -> str:
    """An item's file: ``baseline`` without its corpus, naming ``table``."""
    data = baseline.to_json()
    for key in CORPUS_KEYS:
        del data[key]
    data[VERSION_KEY] = SHARED_CORPUS_SCHEMA
    data[REFERENCE_KEY] = table.name
    return render(data)


@dataclass(frozen=True)
class Loaded:
    """A baseline as read, and the table it shares (None: its own corpus)."""

    baseline: Baseline
    table: Path | None = None


def load_baseline(path: Path) -> Loaded:
    """Read a baseline file, with its shared table if it names one;
    :class:`BaselineCorrupt` says what is wrong, naming the file at fault."""
    data = read_json(path)
    if not isinstance(data, dict) or REFERENCE_KEY not in data:
        version = data.get(VERSION_KEY) if isinstance(data, dict) else None
        if type(version) is int and version in ITEM_SCHEMAS:
            raise _refused(path, f"schema {version} without {REFERENCE_KEY!r}")
        return Loaded(Baseline.from_json(data, str(path)))
    name, test = data[REFERENCE_KEY], data.get("test")
    if not isinstance(name, str) or Path(name).name != name or not name:
        raise _refused(path, f"{REFERENCE_KEY!r} is not a file name: {name!r}")
    function = function_of(test) if isinstance(test, str) else None
    if function is None:
        raise _refused(path, f"test {test!r} is not a per-question item")
    table = path.parent / name
    corpus = _read_table(table, path, function)
    baseline = Baseline.from_json({**data, **corpus}, str(path))
    missing = sorted(set(baseline.groups) - set(baseline.documents))
    if baseline.documents and missing:
        raise _table_error(
            table,
            path,
            f"it lists no document {missing[0]!r} of the question this baseline "
            "records, so it is another corpus's table",
        )
    return Loaded(baseline, table)


def _read_table(table: Path, item: Path, function: str) -> dict[str, Any]:
    if not table.is_file():
        raise _table_error(table, item, "it does not exist")
    try:
        data = read_json(table, "shared corpus table")
    except BaselineCorrupt as exc:
        raise _table_error(table, item, str(exc).rsplit(": ", 1)[-1]) from None
    if not isinstance(data, dict) or data.get(TABLE_KEY) != TABLE_VERSION:
        raise _table_error(
            table, item, f"it is not a corpus table of version {TABLE_VERSION}"
        )
    if data.get("test") != function:
        raise _table_error(
            table, item, f"it is the table of {data.get('test')!r}, not {function!r}"
        )
    try:
        documents = valid_records(data.get("documents"))
    except ValueError as exc:
        raise _table_error(table, item, str(exc)) from None
    corpus_hash = data.get("corpus_hash")
    if not isinstance(corpus_hash, str) or not documents:
        raise _table_error(table, item, "its corpus_hash or documents are missing")
    return {"corpus_hash": corpus_hash, "documents": documents}


def _refused(path: Path, what: str) -> BaselineCorrupt:
    return BaselineCorrupt(f"baseline {path} is unreadable: {what}", path)


def _table_error(table: Path, item: Path, what: str) -> BaselineCorrupt:
    """Fail closed: an item is never compared without its corpus."""
    return BaselineCorrupt(
        f"baseline {item} shares the corpus table {table}, which cannot be "
        f"used: {what}",
        table,
    )
