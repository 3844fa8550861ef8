"""Baseline snapshots: the file format and how a result drifted from it.

A baseline is ``<test dir>/__chunkeval__/<module>/<test>.json`` (or under a
configured directory), written only in update mode (``--chunkeval-update``)::

    {
     "anchor": {"date": "2026-11-27"},
     "chunkeval_baseline": 5,
     "chunks": {"count": 1700, "mean_units": 180.2},  # score(): results_per_question
     "config": {
      "chunker": "recursive:200:0",
      ...
     },
     "corpus_hash": "850e…",
     "documents": {
      "chatlogs.md": {"chars": 31245, "hash": "9f86d081884c7d65", "sentences": 402},
      …
     },
     "groups": {
      "chatlogs.md": {"f1": 0.05, "iou": 0.028, …},
      …
     },
     "metrics": {
      "f1": {"mean": 0.050923, "n": 472, "std": 0.071234},
      …
     },
     "queries": {
      "chatlogs-0a1b2c3d": {"f1": 0.0521, "iou": 0.0267, "precision": 0.0267, …},
      …
     },
     "queries_hash": "1470…",
     "questions": {
      "chatlogs-0a1b2c3d": {"hash": "5d41402abc4b2a76"},
      …
     },
     "test": "test_chunker[recursive:200:0]"
    }

Keys are sorted at every level and each inner object sits on one line: a query
whose numbers moved is one changed line in review. Numbers are rounded as
:mod:`~pytest_chunkeval.gate.files.recording` says (per-query values 4 decimals,
means 6). The bundled benchmark's 472 queries make a file of about 55 KB.

``documents`` (schema 2) records each document's hash, length and sentence count
(:mod:`~pytest_chunkeval.gate.files.documents`), so a later run on an edited corpus can
say which documents changed and by how much. ``questions`` (schema 3) records per
question what the gate needs besides its values: its content hash
(:mod:`~pytest_chunkeval.gate.files.questions`), so a question edited under the same id
is left out rather than compared. Schema 1 and 2 files are still read and
compared without that detail (the report says so); ``--chunkeval-update``
rewrites them as 5.

Schema 5 adds what an update must not lose (docs/baselines.md, "An update never
ratchets"): ``anchor`` (the date of the values last accepted explicitly) and, per
question, ``"anchor": {metric: value}`` where the anchored value differs from
the recorded one; per question ``"var"`` and ``"r"`` (its repeats' sample
variance and count) and the top-level ``"noise"`` (what was noisy; no timing).
**A field an older file lacks reads as its documented default**, never as a
change: no ``anchor`` = anchored at the recorded values (date unknown), no
``var`` = 0, no ``r`` = 1, no ``noise`` = a deterministic run (:data:`DEFAULTS`).

A file is damaged, and refused, when it holds a non-finite number, a value
outside its metric's range (recall ``-5.0`` or ``100``: every metric is a
fraction in [0, 1]), a schema it does not know (``"2.0"`` or ``2.0`` are not the
integer 2), or a key twice in one object (JSON readers keep either copy).

Where files live: :mod:`~pytest_chunkeval.gate.files.paths`; a session's store of them:
:mod:`~pytest_chunkeval.gate.store`. Problems are :class:`BaselineError` (an
``AssertionError``: the test calling the check fails) whose message names the file
and ends with the command that fixes it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.errors import CheckFailed
from pytest_chunkeval.gate.files.documents import document_records, valid_records
from pytest_chunkeval.gate.files.paths import nodeid_name
from pytest_chunkeval.gate.files.questions import question_records, valid_questions
from pytest_chunkeval.gate.files.recording import (
    MEAN_DECIMALS,
    QUERY_DECIMALS,
    chunk_record,
    noise_record,
    recorded_config,
    rounded,
)
from pytest_chunkeval.gate.files.validity import (
    DuplicateKey,
    contradicted_mean,
    number_or_nan,
    number_or_none,
    optional_object,
    out_of_range,
    unique_keys,
)

if TYPE_CHECKING:
    from pytest_chunkeval.core.metrics import MetricStats
    from pytest_chunkeval.engine.results import EvalResult


BASELINE_SCHEMA = 5
SHARED_CORPUS_SCHEMA = 6
"""A per-question item's file: schema 5 whose corpus table (``corpus_hash``,
``documents``) is in the file its function's items share (corpus_table.py)."""
ITEM_SCHEMAS = (4, SHARED_CORPUS_SCHEMA)
"""Item files naming their corpus table (4: before anchors and repeats)."""
READABLE_SCHEMAS = (1, 2, 3, 4, 5, 6)  # 1: no per-document records, 1-2: no
# per-question hashes, 1-4: no anchor nor repeats (all read as their defaults,
# migrated on update)
VERSION_KEY = "chunkeval_baseline"
_REQUIRED = {
    "config": dict,
    "corpus_hash": str,
    "queries_hash": str,
    "metrics": dict,
    "groups": dict,
    "queries": dict,
    "test": str,
}


class BaselineError(CheckFailed):
    """A baseline check failed; ``str()`` is the whole explanation."""

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


class BaselineMissing(BaselineError):
    """No baseline file yet (it is created only in update mode)."""


class BaselineCorrupt(BaselineError):
    """The file is not a readable baseline of this schema version."""


class BaselineMismatch(BaselineError):
    """The baseline was made under another configuration or dataset."""


class BaselineUnwritable(BaselineError):
    """``--chunkeval-update`` cannot write the baseline file (its folder is
    read-only, or a file stands where a folder should be)."""


@dataclass(frozen=True)
class Baseline:
    """The content of one baseline file."""

    test: str
    config: Mapping[str, Any]
    corpus_hash: str
    queries_hash: str
    metrics: Mapping[str, MetricStats]
    groups: Mapping[str, Mapping[str, float | None]]
    queries: Mapping[str, Mapping[str, float | None]]
    chunks: Mapping[str, float] = field(default_factory=dict)
    documents: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per document: ``hash``, ``chars``, ``sentences`` (empty in schema 1)."""
    questions: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """Per question id: ``hash`` (its content hash), and the noise evidence the
    run measured (empty before schema 3)."""
    schema: int = BASELINE_SCHEMA
    """The version the file was written in (what was read, for a loaded one)."""
    anchor: Mapping[str, Any] = field(default_factory=dict)
    """``{"date": "YYYY-MM-DD"}``: when the anchored values were accepted
    (empty before schema 5: anchored at the recorded values, date unknown)."""
    noise: Mapping[str, Any] = field(default_factory=dict)
    """The components the recording run found noisy and its repeats (empty:
    a deterministic run)."""

    def anchor_values(self) -> dict[str, dict[str, float | None]]:
        """Per question, the values at the anchor: its ``anchor`` record where
        one is kept, else the recorded values (what the anchor is at creation)."""
        out: dict[str, dict[str, float | None]] = {}
        for qid, values in self.queries.items():
            kept = self.questions.get(qid, {}).get("anchor")
            out[qid] = {**values, **kept} if isinstance(kept, Mapping) else dict(values)
        return out

    @property
    def anchored_elsewhere(self) -> bool:
        """Whether some question's anchored value differs from its recorded one."""
        return any("anchor" in q for q in self.questions.values())

    @classmethod
    def from_result(cls, result: EvalResult, test: str) -> Baseline:
        """What to store for ``result``, rounded as written."""
        from pytest_chunkeval.core.metrics import (
            JUDGED_METRICS,
            METRICS,
            PRESENCE_METRICS,
            REL_METRICS,
            MetricStats,
        )

        ids = [q.id for q in result.queries]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(
                f"query ids are not unique ({', '.join(dup[:5])}); a baseline pairs "
                "queries by id"
            )
        # The rank and judged metrics only where measured, so results from before
        # them (and a retriever's ndcg/ceiling) add no null columns to the file;
        # a relationship result's own metrics instead of the chunk metrics.
        if REL_METRICS[0] in result.metrics:
            written = [m for m in REL_METRICS if m in result.metrics]
        else:
            written = [
                m
                for m in METRICS + JUDGED_METRICS
                if m in PRESENCE_METRICS
                or (m in result.metrics and result.metrics[m].n > 0)
            ]
        metrics = {
            m: MetricStats(
                number_or_nan(rounded(s.mean, MEAN_DECIMALS)),
                number_or_nan(rounded(s.std, MEAN_DECIMALS)),
                s.n,
            )
            for m, s in result.metrics.items()
        }
        return cls(
            test=nodeid_name(test),
            config=recorded_config(result.config),
            corpus_hash=result.corpus_hash,
            queries_hash=result.queries_hash,
            metrics=metrics,
            groups={
                g: {m: rounded(s.mean, MEAN_DECIMALS) for m, s in stats.items()}
                for g, stats in result.groups.items()
            },
            queries={
                q.id: {m: rounded(q.metric(m), QUERY_DECIMALS) for m in written}
                for q in result.queries
            },
            chunks=chunk_record(result.chunks),
            documents=document_records(result.corpus),
            questions=question_records(result),
            noise=noise_record(result.noise),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            VERSION_KEY: BASELINE_SCHEMA,
            "test": self.test,
            "config": dict(self.config),
            "corpus_hash": self.corpus_hash,
            "queries_hash": self.queries_hash,
            "metrics": {
                m: {
                    "mean": rounded(s.mean, MEAN_DECIMALS),
                    "std": rounded(s.std, MEAN_DECIMALS),
                    "n": s.n,
                }
                for m, s in self.metrics.items()
            },
            "groups": {g: dict(v) for g, v in self.groups.items()},
            "queries": {i: dict(v) for i, v in self.queries.items()},
            "chunks": dict(self.chunks),
            "documents": {d: dict(v) for d, v in self.documents.items()},
            "questions": {i: dict(v) for i, v in self.questions.items()},
            **({"anchor": dict(self.anchor)} if self.anchor else {}),
            **({"noise": dict(self.noise)} if self.noise else {}),
        }

    def to_text(self) -> str:
        """The file's text: sorted keys, one line per inner object."""
        return render(self.to_json())

    @classmethod
    def from_json(cls, data: Any, where: str) -> Baseline:
        """Validate and load; :class:`BaselineCorrupt` says what is wrong."""
        from pytest_chunkeval.core.metrics import MetricStats

        if not isinstance(data, dict):
            raise _corrupt(
                where, f"expected a JSON object, found {type(data).__name__}"
            )
        version = data.get(VERSION_KEY)
        if type(version) is not int or version not in READABLE_SCHEMAS:
            if version is None:
                what = f"it has no {VERSION_KEY!r} version key"
            else:
                what = (
                    f"it is schema version {version!r}, this pytest-chunkeval reads "
                    f"versions {', '.join(map(str, READABLE_SCHEMAS))}"
                )
            raise _corrupt(where, f"not a baseline this version can read: {what}")
        if version in ITEM_SCHEMAS and "corpus_hash" not in data:
            raise _corrupt(
                where,
                "a per-question item's file: its corpus is in the table it shares "
                "(gate/files/corpus_table.load_baseline reads both)",
            )
        for key, kind in _REQUIRED.items():
            if not isinstance(data.get(key), kind):
                raise _corrupt(
                    where, f"key {key!r} is missing or not a {kind.__name__}"
                )
        try:
            metrics = {
                m: MetricStats(
                    number_or_nan(s["mean"]), number_or_nan(s["std"]), int(s["n"])
                )
                for m, s in data["metrics"].items()
            }
            queries = {
                str(i): {m: number_or_none(v) for m, v in values.items()}
                for i, values in data["queries"].items()
            }
            groups = {
                str(g): {m: number_or_none(v) for m, v in values.items()}
                for g, values in data["groups"].items()
            }
            documents = valid_records(data.get("documents"))
            questions = valid_questions(data.get("questions"))
            anchor = optional_object(data, "anchor")
            noise = optional_object(data, "noise")
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise _corrupt(
                where, f"malformed metrics or query values ({exc!r})"
            ) from None
        outside = out_of_range(metrics, queries, groups, questions) or (
            contradicted_mean(metrics, queries)
        )
        if outside:
            raise _corrupt(where, outside)
        return cls(
            test=data["test"],
            config=data["config"],
            corpus_hash=data["corpus_hash"],
            queries_hash=data["queries_hash"],
            metrics=metrics,
            groups=groups,
            queries=queries,
            chunks=dict(data.get("chunks") or {}),
            documents=documents,
            questions=questions,
            schema=int(version),
            anchor=anchor,
            noise=noise,
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Baseline:
        """Read a baseline file holding its corpus table (not a per-question
        item's, which gate/files/corpus_table.py reads); anything wrong is
        :class:`BaselineCorrupt`."""
        return cls.from_json(read_json(Path(path)), str(path))


def read_json(path: Path, what: str = "baseline") -> Any:
    """The JSON value of a baseline file (``what`` names the kind of file in
    the error); unreadable text is :class:`BaselineCorrupt`."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise _corrupt(str(path), f"not UTF-8 text ({exc.reason})", what) from None
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise _corrupt(
            str(path), f"invalid JSON at line {exc.lineno} column {exc.colno}", what
        ) from None
    except DuplicateKey as exc:
        raise _corrupt(str(path), f"the key {exc.key!r} appears twice", what) from None


def _corrupt(where: str, what: str, kind: str = "baseline") -> BaselineCorrupt:
    return BaselineCorrupt(f"{kind} {where} is unreadable: {what}", Path(where))


def migration_note(old_schema: int, item: bool = False) -> str:
    """What rewriting a file of ``old_schema`` as the current one records
    ("" when it is current): ``migrated from schema 3 to 5: its anchor
    recorded``."""
    new = SHARED_CORPUS_SCHEMA if item else BASELINE_SCHEMA
    if old_schema >= BASELINE_SCHEMA:
        return ""
    what = ["its anchor"]
    if old_schema < 3:
        what.insert(0, "per-question hashes")
    if old_schema < 2:
        what.insert(0, "per-document hashes and lengths")
    return f"migrated from schema {old_schema} to {new}: {' and '.join(what)} recorded"


def render(data: Mapping[str, Any]) -> str:
    """JSON with sorted keys: top-level and second-level keys one per line, anything
    deeper compact on its line (one query, one metric, one corpus per line)."""

    def compact(value: Any) -> str:
        return json.dumps(
            value, sort_keys=True, ensure_ascii=False, separators=(", ", ": ")
        )

    lines = ["{"]
    top = sorted(data)
    for i, key in enumerate(top):
        value = data[key]
        comma = "," if i < len(top) - 1 else ""
        if isinstance(value, Mapping) and value:
            lines.append(f" {compact(key)}: {{")
            inner = sorted(value)
            for j, sub in enumerate(inner):
                sub_comma = "," if j < len(inner) - 1 else ""
                lines.append(f"  {compact(sub)}: {compact(value[sub])}{sub_comma}")
            lines.append(f" }}{comma}")
        else:
            lines.append(f" {compact(key)}: {compact(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"
