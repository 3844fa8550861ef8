"""The history file: one JSON line per evaluated configuration per run.

Each record (``chunkeval_history`` schema 1)::

    {"chunkeval_history": 1, "timestamp": "2025-05-01T12:00:00+00:00",
     "run": "5d1c09e2a7f4",
     "git": {"commit": "3f2a…", "branch": "main", "dirty": false},
     "test": "tests/test_rag.py::test_chunker[recursive:200:0]",
     "label": "recursive:200:0", "configuration": "recursive:200:0 k=5 token …",
     "config": {...}, "corpus_hash": "…", "queries_hash": "…", "n": 472,
     "metrics": {"recall": {"mean": 0.8123, "std": 0.3011}, …},
     "groups": {"chatlogs.md": {"recall": 0.79, …}, …},
     "chunks": {"count": 2386, "mean_units": 137.35}}

Paths in ``"config"`` (the query file's, ``"queries"``) are written relative to
pytest's rootdir when they lie under it, so a committed history file names no
machine's folders; lines written before with an absolute path still read, and
:func:`read_history` given the rootdir reads them relative too
(:func:`relative_config`).

A whole retriever's record (``score()``) holds ``"results_per_question"`` (its mean
results per question) instead of ``"count"``, which would be results x questions,
as its baseline does (docs/baselines.md); lines written before hold both
``"count"`` and ``"results_per_query"``, and still read (:func:`record_chunks`).

Appending is safe when several processes (xdist workers, parallel CI jobs) append
at once: the file is opened with ``O_APPEND`` and each call writes its whole block
of lines with one ``os.write`` under an exclusive ``flock`` where available, so lines
never interleave. (An atomic rename would be wrong here: two writers would each
replace the file and one run's records would be lost.) A last line cut short by a
killed writer is skipped when reading and cut away by the next append
(:func:`pytest_chunkeval.util.files.append_jsonl`).
"""

from __future__ import annotations

import json
import math
import os
import secrets
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.errors import ChunkevalWarning, DataError
from pytest_chunkeval.reporting.git_info import GitInfo
from pytest_chunkeval.util.files import (
    JsonLineError,
    append_jsonl,
    append_text,
    decode_jsonl,
    iter_jsonl_lines,
)

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult

HISTORY_SCHEMA = 1
VERSION_KEY = "chunkeval_history"
_DECIMALS = 6


class HistoryError(DataError):
    """A history file cannot be read; the message names the file and line."""


class HistoryWarning(ChunkevalWarning):
    """An incomplete last line (a killed writer's) was cut from a history file."""


def _round(value: float | None) -> float | None:
    if value is None or math.isnan(value):
        return None
    return round(float(value), _DECIMALS)


def history_record(
    result: EvalResult,
    *,
    test: str | None = None,
    git: GitInfo | None = None,
    timestamp: datetime | None = None,
    run: str | None = None,
    rootdir: str | os.PathLike[str] | None = None,
) -> dict[str, Any]:
    """The history record of one result (see the module docstring). ``run``
    names the pytest session (or CLI call) the record comes from: the records of
    one run share it, and each run is a point of its own in the trend.
    ``rootdir``: paths under it are written relative to it."""
    when = timestamp or datetime.now(timezone.utc)
    return {
        VERSION_KEY: HISTORY_SCHEMA,
        "timestamp": when.isoformat(timespec="seconds"),
        "run": run or new_run_id(),
        "git": (git or GitInfo()).to_json(),
        "test": test,
        "label": result.label,
        "configuration": result.describe(measured=False),
        "config": relative_config(result.config, rootdir),
        "corpus_hash": result.corpus_hash,
        "queries_hash": result.queries_hash,
        "n": max((s.n for s in result.metrics.values()), default=0),
        "metrics": {
            m: {"mean": _round(s.mean), "std": _round(s.std)}
            for m, s in result.metrics.items()
        },
        "groups": {
            g: {m: _round(s.mean) for m, s in stats.items()}
            for g, stats in result.groups.items()
        },
        "chunks": _chunk_record(result.chunks),
    }


PATH_CONFIG_KEYS = ("queries",)
"""The configuration fields holding a path (the corpus is named by its folder's
name, not its path)."""


def relative_config(
    config: Mapping[str, Any], rootdir: str | os.PathLike[str] | None
) -> dict[str, Any]:
    """``config`` with each absolute path of :data:`PATH_CONFIG_KEYS` under
    ``rootdir`` made relative to it (POSIX separators); other values as given."""
    out = dict(config)
    if rootdir is None:
        return out
    root = Path(rootdir).resolve()
    for key in PATH_CONFIG_KEYS:
        value = out.get(key)
        if not isinstance(value, str) or not os.path.isabs(value):
            continue
        try:
            out[key] = Path(value).resolve().relative_to(root).as_posix()
        except ValueError:  # outside the rootdir: as it was given
            continue
    return out


def _chunk_record(chunks: Mapping[str, float]) -> dict[str, float | None]:
    """A result's chunk stats as a record keeps them (module docstring)."""
    out = {k: _round(float(v)) for k, v in chunks.items() if k != "mean_chars"}
    per_question = out.pop("results_per_query", None)
    if per_question is not None:  # a whole retriever: no chunk count
        out.pop("count", None)
        out["results_per_question"] = per_question
    return out


def record_chunks(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record's chunk stats under the names results use (``results_per_query``
    for a retriever's ``results_per_question``), old lines and new alike."""
    chunks = dict(record.get("chunks") or {})
    if "results_per_question" in chunks:
        chunks["results_per_query"] = chunks.pop("results_per_question")
    return chunks


def append_lines(path: str | os.PathLike[str], text: str) -> None:
    """Append ``text`` (whole lines) to ``path`` in one locked ``O_APPEND`` write,
    so concurrent appenders never interleave. Creates the file and its folder.
    Starts on a new line if the file does not end with one."""
    append_text(path, text)


def append_history(
    path: str | os.PathLike[str],
    records: Iterable[Mapping[str, Any]],
    *,
    note: Callable[[str], None] | None = None,
) -> int:
    """Append records (one JSON line each, sorted keys); returns how many.

    A last line cut short by a killed writer is cut away first, so it never ends
    up mid-file where every later :func:`read_history` would reject it. That is
    reported to ``note`` when given, else as a :class:`HistoryWarning`.
    """
    lines = [
        json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        for r in records
    ]
    repair = append_jsonl(path, lines)
    if repair is not None and repair.cut:
        message = (
            f"{os.fspath(path)}: cut an incomplete last line "
            f"({len(repair.fragment)} bytes; an interrupted write?) before appending"
        )
        if note is not None:
            note(message)
        else:  # after the write: should warnings be errors, the records are kept
            warnings.warn(message, HistoryWarning, stacklevel=2)
    return len(lines)


def read_history(
    path: str | os.PathLike[str], *, rootdir: str | os.PathLike[str] | None = None
) -> list[dict[str, Any]]:
    """All records of a history file, in file order.

    Blank lines are skipped, and so is a last line cut short by a crash (no final
    newline, invalid JSON); a complete last line without its newline is kept.
    Any other bad line is a :class:`HistoryError` naming the file and line.
    ``rootdir``: the absolute paths older lines hold under it read relative to
    it, as newer lines are written (:func:`relative_config`).
    """
    path = Path(path)
    try:
        text = decode_jsonl(path.read_bytes())
    except FileNotFoundError:
        raise HistoryError(
            f"history file {path} does not exist: pytest appends to one with "
            "--chunkeval-history FILE (or the chunkeval_history setting)"
        ) from None
    except OSError as exc:
        raise HistoryError(f"cannot read history file {path}: {exc}") from None
    except UnicodeDecodeError as exc:
        raise HistoryError(f"history file {path} is not UTF-8 ({exc.reason})") from None
    records: list[dict[str, Any]] = []
    try:
        # The torn final line of a killed writer is skipped silently: the next
        # append cuts it away, with a warning.
        for number, record in iter_jsonl_lines(text, os.fspath(path)):
            if (
                not isinstance(record, dict)
                or record.get(VERSION_KEY) != HISTORY_SCHEMA
            ):
                found = record.get(VERSION_KEY) if isinstance(record, dict) else None
                raise HistoryError(
                    f"{path}:{number}: not a chunkeval history record of schema "
                    f"{HISTORY_SCHEMA} (found {VERSION_KEY}={found!r})"
                )
            problem = shape_problem(record)
            if problem is not None:
                raise HistoryError(
                    f"{path}:{number}: not a chunkeval history record ({problem}); "
                    "fix or delete that line"
                )
            if rootdir is not None and isinstance(record.get("config"), dict):
                record["config"] = relative_config(record["config"], rootdir)
            records.append(record)
    except JsonLineError as exc:
        raise HistoryError(str(exc)) from None
    return records


_OBJECT_FIELDS = ("git", "config", "metrics", "groups", "chunks")
_TEXT_FIELDS = ("timestamp", "run", "test", "label", "configuration")


def shape_problem(record: Mapping[str, Any]) -> str | None:
    """What is wrong with the shape of a history record (valid JSON of the wrong
    shape, such as ``"config": "x"``), or None: the fields reports read have the
    types the module docstring shows (a missing field is allowed)."""
    for name in _OBJECT_FIELDS:
        value = record.get(name)
        if value is not None and not isinstance(value, dict):
            return f"{name!r} is {type(value).__name__}, not an object"
    for name in _TEXT_FIELDS:
        value = record.get(name)
        if value is not None and not isinstance(value, str):
            return f"{name!r} is {type(value).__name__}, not a string"
    for metric, stats in (record.get("metrics") or {}).items():
        if not isinstance(stats, dict):
            return f"metric {metric!r} is {type(stats).__name__}, not an object"
        for key in ("mean", "std"):
            value = stats.get(key)
            if value is not None and not _number(value):
                return f"metric {metric!r} has a {key} that is not a number"
    for group, stats in (record.get("groups") or {}).items():
        if not isinstance(stats, dict) or not all(
            v is None or _number(v) for v in stats.values()
        ):
            return f"group {group!r} is not an object of numbers"
    for key, value in (record.get("chunks") or {}).items():
        if value is not None and not _number(value):
            return f"chunks {key!r} is not a number"
    n = record.get("n")
    if n is not None and not _number(n):
        return "'n' is not a number"
    return None


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def commits(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Commit keys in order of first appearance (``working tree`` when unknown)."""
    seen: dict[str, None] = {}
    for r in records:
        seen.setdefault(commit_key(r), None)
    return list(seen)


def new_run_id() -> str:
    """A fresh id for the records of one run."""
    return secrets.token_hex(6)


def run_key(record: Mapping[str, Any]) -> tuple[str, str]:
    """One run of the suite: its commit key and its run id (records written
    before run ids existed: their timestamp, which one run's records share).
    Every run is a point of a trend, never merged with another run of the same
    commit."""
    return commit_key(record), str(record.get("run") or record.get("timestamp", ""))


def runs(records: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """Run keys in order of first appearance, a commit's runs side by side (each
    commit where it first appears), so the runs of one commit form a group."""
    by_commit: dict[str, dict[tuple[str, str], None]] = {}
    for r in records:
        key = run_key(r)
        by_commit.setdefault(key[0], {}).setdefault(key, None)
    return [key for group in by_commit.values() for key in group]


def commit_key(record: Mapping[str, Any]) -> str:
    """A short label of the record's commit: ``3f2a9c1``, ``3f2a9c1+`` when dirty."""
    git = record.get("git") or {}
    commit = git.get("commit")
    label = str(commit)[:7] if commit else "no-git"
    return label + ("+" if git.get("dirty") else "")
