"""``EvalResult``: everything one evaluation measured, JSON-serializable.

Schema (``to_json``; version ``RESULT_SCHEMA``)::

    {"chunkeval_result": 1, "label": str,
     "config": {"chunker", "embedder", "store", "k", "unit", "tokenizer", ...},
     "corpus_hash": str, "queries_hash": str,
     "metrics": {metric: {"mean", "std", "n"}},          # over all queries
     "groups": {doc_id: {metric: {"mean", "std", "n"}}},  # per source doc
     "chunks": {"count", "mean_units", "mean_chars"},
     "timings": {phase: seconds},       # chunk, embed, index, search, score;
                                        # {"cached": seconds}: read back whole
     "queries": [{"id", "question", "doc_id",
                  "excerpts": [[doc_id, start, end], ...],     # as stored
                  "chosen": [[doc_id, start, end], ...],  # scored, if it differs
                  "retrieved": [[doc_id, start, end], ...],   # rank order, char offsets
                  "recall", "precision", "iou", "f1", "precision_omega",
                  "mrr", "ndcg", "complete", "ceiling",
                  "excerpt_units", "retrieved_units", "first_relevant_rank",
                  "excerpt_coverage": [float, ...],
                  "loss": {"chunking", "search", "approximation"},  # if measured
                  "scores": {metric: float | null},   # other metrics, if any
                  "details": {...},                    # what produced them, if any
                  "repeats": {metric: [mean, variance, r]}}],  # if repeated
     "chunk_spans": [[doc_id, start, end], ...],
     "stages": {name: {"depth",
                       "metrics": {"recall", "recall_at_k", "ceiling"}}},  # if any
     "loss": {part: {"mean", "std", "n"}},              # where recall is lost
     "budget": {"budget", "over_budget", "mean_units"},  # with a token budget
     "graph": {"relationships", "entities", "extraction", ...},          # if any
     "unplaced": [{"id", "question", "doc_id", "reason"}, ...],  # if any
     "unscored": [id, ...],  # no excerpts and no judge: nothing scored, if any
     "noise": {"noisy", "repeats", "sampled", "requests", ...}}   # if repeated

A question repeated (docs/baselines.md, "Repeats") holds the mean of its repeats in
its metric values and ``repeats`` per metric; ``noise`` says what was repeated.

``stages`` holds the earlier retrieval stages (a hybrid store's legs ``dense`` and
``bm25``, a reranker's ``candidates``, the ``candidates`` of a two-stage retriever
given to ``score``): each stage's recall over its whole list (``depth`` rows), over
its first ``k`` rows, and ``ceiling``: the best recall any ``k`` of its rows reach
together (what a reranker choosing from it could reach), beside the final result's.

``loss`` says where recall is lost (docs/metrics.md): ``chunking`` = 1 - ceiling,
``search`` = ceiling - recall of the first ``k`` ranks (embedding + search), and for
an approximate store ``approximation`` = exact search's recall - the store's on the
same vectors (signed), with ``exact_recall`` and ``store_recall`` beside it.

Metric values are in [0, 1]; ``precision_omega`` is ``null`` when no chunking was
scored (a whole retriever through ``score``). A relationship evaluation
(:func:`~pytest_chunkeval.relationships.evaluate.evaluate_relationships`) measures other
metrics (``rel_recall``, ``evidence_iou``...): its ``metrics`` hold those, each
query's ``scores`` their values and the chunk metrics are ``null``; ``graph`` holds
its relationship and extraction counts. A question without excerpts has ``null``
chunk metrics too (absent, never 0). With a judge (docs/judged.md#the-two-measures),
``metrics`` and each query's ``scores`` also hold ``context_relevance`` and
``context_relevance_tokens`` (``null`` for a query whose judgment failed), and its
``details["judged"]`` the judged spans ``[[doc_id, start, end], ...]``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.core.absent import nan_if_absent, present
from pytest_chunkeval.core.metrics import (
    JUDGED_METRICS,
    MetricStats,
)
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.query_types import UnplacedQuery
from pytest_chunkeval.engine.labels import degraded_text
from pytest_chunkeval.engine.query_record import QueryRecord as QueryRecord
from pytest_chunkeval.engine.query_record import SpanTuple as SpanTuple
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.util.text import plural

RESULT_SCHEMA = 1


class UnknownName(ConfigError, KeyError):
    """A metric or query group this result does not have."""

    def __str__(self) -> str:
        # KeyError's own __str__ would repr() the message.
        return str(self.args[0]) if self.args else ""


def _stats_json(stats: dict[str, MetricStats]) -> dict[str, dict[str, Any]]:
    return {
        m: {"mean": present(s.mean), "std": present(s.std), "n": s.n}
        for m, s in stats.items()
    }


def _stats_from_json(data: dict[str, dict[str, Any]]) -> dict[str, MetricStats]:
    return {
        m: MetricStats(nan_if_absent(s["mean"]), nan_if_absent(s["std"]), int(s["n"]))
        for m, s in data.items()
    }


@dataclass(frozen=True)
class StageResult:
    """One earlier retrieval stage: its rows as spans per query, and its recall."""

    name: str
    depth: int
    """Rows per query this stage returned (a hybrid leg's ``n``, a reranker's ``n``)."""
    recall: MetricStats
    """Recall of the whole list: what later stages can reach at most."""
    recall_at_k: MetricStats
    """Recall of the first ``k`` rows, as if this stage alone had answered."""
    retrieved: tuple[tuple[SpanTuple, ...], ...] = field(default=(), repr=False)
    """Per query (in query order), the stage's spans in rank order (not in JSON)."""
    ceiling: MetricStats | None = None
    """The best recall any ``k`` of this stage's rows reach together: what a
    reranker choosing ``k`` from them could reach at most (``C_k`` over its rows)."""

    def to_json(self) -> dict[str, Any]:
        stats = {"recall": self.recall, "recall_at_k": self.recall_at_k}
        if self.ceiling is not None:
            stats["ceiling"] = self.ceiling
        return {"depth": self.depth, "metrics": _stats_json(stats)}

    @classmethod
    def from_json(cls, name: str, data: dict[str, Any]) -> StageResult:
        stats = _stats_from_json(data["metrics"])
        return cls(
            name,
            int(data["depth"]),
            stats["recall"],
            stats["recall_at_k"],
            ceiling=stats.get("ceiling"),
        )


@dataclass
class EvalResult:
    """Metrics of one configuration over one query set, with per-query detail."""

    label: str
    config: dict[str, Any]
    corpus_hash: str
    queries_hash: str
    metrics: dict[str, MetricStats]
    groups: dict[str, dict[str, MetricStats]]
    queries: list[QueryRecord]
    chunks: dict[str, float]
    timings: dict[str, float]
    chunk_spans: list[SpanTuple] = field(default_factory=list, repr=False)
    corpus: Corpus | None = field(default=None, repr=False, compare=False)
    stages: dict[str, StageResult] = field(default_factory=dict)
    graph: dict[str, Any] = field(default_factory=dict)
    """A relationship evaluation's graph and extraction counts (else empty)."""
    loss: dict[str, MetricStats] = field(default_factory=dict)
    """Where recall is lost (docs/metrics.md): ``chunking`` (1 - ceiling), ``search``
    (ceiling - recall at ``k``), and for an approximate store ``approximation``
    (exact search's recall - the store's), ``exact_recall``, ``store_recall``."""
    budget: dict[str, float] = field(default_factory=dict)
    """With a token budget: ``budget``, ``over_budget`` (share of queries whose first
    chunk alone exceeded it: they score 0) and ``mean_units`` sent per query."""
    unplaced: tuple[UnplacedQuery, ...] = ()
    """Queries left out because their excerpts can no longer be placed in the
    (edited) corpus: only a baseline comparison evaluates without them."""
    noise: dict[str, Any] = field(default_factory=dict)
    """What was repeated and what it cost (engine/repeats.py): ``noisy``,
    ``repeats``, ``sampled``, ``requests``, ``rebuild_seconds``,
    ``mean_variance``; empty when nothing was."""
    unscored: tuple[str, ...] = ()
    """Questions no metric scored: no excerpts, and no judge to score them
    (docs/formats.md); computed from ``queries`` when they are held, read from
    JSON otherwise."""
    probe: Any = field(default=None, repr=False, compare=False)
    """What asks a user's retriever again (engine/reask.py ``Probe``:
    ``repeated()``, ``confirm(ids)``); None when the result was not produced by
    one, or was read back from JSON."""

    def __post_init__(self) -> None:
        if (
            not self.unscored
            and self.queries
            and "context_relevance" not in self.metrics
        ):  # with a judge, a question without excerpts is scored by it
            self.unscored = tuple(
                q.id
                for q in self.queries
                if not q.excerpts and all(math.isnan(q.metric(m)) for m in self.metrics)
            )

    @property
    def scored_of(self) -> str:
        """``scored 5 of 6 questions`` when some were left out, else ``""``."""
        if not self.unplaced:
            return ""
        total = len(self.queries) + len(self.unplaced)
        return f"scored {len(self.queries)} of {plural(total, 'question')}"

    def mean(self, metric: str, group: str | None = None) -> float:
        """Mean of ``metric`` overall, or for one group (source document)."""
        return self._stats(metric, group).mean

    def std(self, metric: str, group: str | None = None) -> float:
        """Population standard deviation of ``metric``."""
        return self._stats(metric, group).std

    def _stats(self, metric: str, group: str | None) -> MetricStats:
        if metric not in self.metrics:
            hint = (
                " (judged metrics need a judge: judge='llm:MODEL' or a registered "
                "name; docs/judged.md#the-two-measures)"
                if metric in JUDGED_METRICS
                else ""
            )
            raise UnknownName(
                f"unknown metric {metric!r}; this result has "
                f"{', '.join(self.metrics)}{hint}"
            )
        if group is None:
            return self.metrics[metric]
        if group not in self.groups:
            raise UnknownName(
                f"no queries for group {group!r}; groups: {', '.join(self.groups)}"
            )
        return self.groups[group][metric]

    def values(self, metric: str, group: str | None = None) -> npt.NDArray[np.float64]:
        """Per-query values of ``metric`` (in query order), optionally for one group."""
        self._stats(metric, group)
        return np.array(
            [q.metric(metric) for q in self.queries if group in (None, q.doc_id)],
            dtype=np.float64,
        )

    def only(self, query_id: str) -> EvalResult:
        """This result restricted to one query (a per-question test item): its
        metrics are that query's values, its query hash covers that query only
        (a query added to the set leaves the other items' baselines comparable)
        and its chunk figures are what that query retrieved. ``KeyError`` when
        the result has no such query (e.g. one left out as unplaced)."""
        record = next((q for q in self.queries if q.id == query_id), None)
        if record is None:
            raise KeyError(query_id)

        def stats(metric: str) -> MetricStats:
            value = record.metric(metric)
            if math.isnan(value):
                return MetricStats(math.nan, math.nan, 0)
            return MetricStats(value, 0.0, 1)

        metrics = {m: stats(m) for m in self.metrics}
        blob = json.dumps(
            [record.id, record.question, record.doc_id, record.excerpts],
            separators=(",", ":"),
        )
        return dataclasses.replace(
            self,
            queries=[record],
            metrics=metrics,
            groups={record.doc_id: dict(metrics)},
            queries_hash=hashlib.sha256(blob.encode()).hexdigest(),
            stages={},
            loss={},
            # What this query retrieved, not the whole run's chunks: another
            # query's change leaves this item's baseline file as it is.
            chunks={
                "count": len(record.retrieved),
                "mean_units": record.retrieved_units / max(1, len(record.retrieved)),
            },
            # The other queries' placement is the other items' concern.
            unplaced=(),
            unscored=(),  # this query's, from its record
        )

    def text(self, span: SpanTuple) -> str:
        """The corpus text of a span (needs the corpus, absent after ``from_json``)."""
        if self.corpus is None:
            raise ValueError("this result carries no corpus")
        doc, start, end = span
        return self.corpus[doc].text[start:end]

    def describe(self, *, measured: bool = True) -> str:
        """The configuration in one line: ``recursive:200:0 k=5 token all-MiniLM…``.

        ``measured``: also what this run measured about it (a whole retriever's
        results per query, a degraded LLM chunking); False gives a label that
        stays the same from run to run (history series)."""
        c = self.config
        parts = [str(c.get("chunker", self.label))]
        if c.get("k") is not None:
            parts.append(f"k={c['k']}")
        scored = self.chunks.get("results_per_query") if measured else None
        if scored is not None:  # a whole retriever (score()): what it returned
            parts.append(f"{scored:.1f} results/query")
        if c.get("budget") is not None:
            parts.append(f"budget={c['budget']}")
        parts.append(str(c.get("unit")))
        parts += [str(c[key]) for key in ("embedder", "store") if c.get(key)]
        degraded = degraded_text(self.chunks) if measured else None
        if degraded:
            parts.append(f"[{degraded}]")
        if measured and self.unplaced:
            parts.append(f"[{self.scored_of}]")
        return " ".join(parts)

    def to_json(self, *, details: bool = True) -> dict[str, Any]:
        """The documented JSON form; ``details=False`` drops the per-query lists."""
        data: dict[str, Any] = {
            "chunkeval_result": RESULT_SCHEMA,
            "label": self.label,
            "config": self.config,
            "corpus_hash": self.corpus_hash,
            "queries_hash": self.queries_hash,
            "metrics": _stats_json(self.metrics),
            "groups": {g: _stats_json(s) for g, s in self.groups.items()},
            "chunks": self.chunks,
            "timings": self.timings,
        }
        if details:
            data["queries"] = [q.to_json() for q in self.queries]
            data["chunk_spans"] = [list(s) for s in self.chunk_spans]
        if self.stages:
            data["stages"] = {n: s.to_json() for n, s in self.stages.items()}
        if self.loss:
            data["loss"] = _stats_json(self.loss)
        if self.budget:
            data["budget"] = self.budget
        if self.graph:
            data["graph"] = self.graph
        if self.unplaced:
            data["unplaced"] = [u.to_json() for u in self.unplaced]
        if self.noise:
            data["noise"] = self.noise
        if self.unscored:
            data["unscored"] = list(self.unscored)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EvalResult:
        version = data.get("chunkeval_result")
        if version != RESULT_SCHEMA:
            raise ValueError(
                f"result schema {version!r} is not supported (expected {RESULT_SCHEMA})"
            )
        return cls(
            label=data["label"],
            config=dict(data["config"]),
            corpus_hash=data["corpus_hash"],
            queries_hash=data["queries_hash"],
            metrics=_stats_from_json(data["metrics"]),
            groups={g: _stats_from_json(s) for g, s in data["groups"].items()},
            queries=[QueryRecord.from_json(q) for q in data.get("queries", [])],
            chunks=dict(data["chunks"]),
            timings=dict(data["timings"]),
            chunk_spans=[
                (s[0], int(s[1]), int(s[2])) for s in data.get("chunk_spans", [])
            ],
            stages={
                n: StageResult.from_json(n, s)
                for n, s in data.get("stages", {}).items()
            },
            graph=dict(data.get("graph", {})),
            loss=_stats_from_json(data.get("loss", {})),
            budget=dict(data.get("budget", {})),
            unplaced=tuple(
                UnplacedQuery.from_json(u) for u in data.get("unplaced", [])
            ),
            noise=dict(data.get("noise", {})),
            unscored=tuple(str(i) for i in data.get("unscored", ())),
        )
