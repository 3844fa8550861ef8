"""What every report shows: one row per evaluated configuration (or history
record), with the cell formatting the reports share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.core.absent import present
from pytest_chunkeval.core.metric_names import (
    JUDGED,
    PRESENCE,
    RANK,
    format_mean_std,
    names,
    unit_label,
)
from pytest_chunkeval.engine.labels import chunker_text, k_text, measured_text
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.gate.comparison.verdicts import severity
from pytest_chunkeval.reporting.explorer import explorer_piece
from pytest_chunkeval.reporting.history import commit_key, record_chunks

if TYPE_CHECKING:
    from pytest_chunkeval.gate.comparison.changes import BaselineChanges
    from pytest_chunkeval.gate.comparison.flips import Flips
    from pytest_chunkeval.gate.comparison.verdicts import GatedMetric, NoiseNote
    from pytest_chunkeval.gate.outcome.rows import RowVerdict

REPORT_SCHEMA = 1
TABLE_METRICS = names(PRESENCE)
RANK_COLUMNS = names(RANK)
"""docs/metrics.md columns: shown when some row measured them (results from before them,
and relationship results, keep the narrower table)."""
RELATIONSHIP_COLUMNS = (
    "rel_recall",
    "rel_precision",
    "evidence_recall",
    "evidence_iou",
)

"""Columns added when a report holds relationship results (Graph-RAG)."""
JUDGED_COLUMNS = names(JUDGED)
"""docs/judged.md#the-two-measures columns: shown when some row was judged."""


def table_metrics(rows: Sequence[ResultRow]) -> tuple[str, ...]:
    """The metric columns of a report table for ``rows``: the chunk metrics, the
    rank ones (docs/metrics.md) some row measured, and the relationship ones when some
    row has them."""
    rank = tuple(
        m
        for m in RANK_COLUMNS + JUDGED_COLUMNS
        if any(r.means.get(m) is not None for r in rows)
    )
    rel = (
        RELATIONSHIP_COLUMNS
        if any(r.means.get("rel_recall") is not None for r in rows)
        else ()
    )
    return TABLE_METRICS + rank + rel


@dataclass(frozen=True)
class ReportEntry:
    """One result of the session (its JSON form) and the tests that produced it."""

    result: Mapping[str, Any]
    nodeids: Sequence[str] = ()
    outcome: str = ""
    """The tests' outcome ("passed" / "failed"; "" when unknown)."""
    verdict: str = ""
    """The baseline verdict (gate/comparison/verdicts.py; "" when no baseline
    was checked)."""
    gated: tuple[GatedMetric, ...] = ()
    """Per gated metric: the baseline, the change and its confidence interval."""
    flips: Flips | None = None
    """The questions retrieved before and missed now, and the reverse."""
    explorer: Mapping[str, Any] | None = None
    """What the HTML report's question explorer shows of this result
    (:func:`~pytest_chunkeval.reporting.explorer.explorer_piece`); None: nothing."""
    changes: BaselineChanges | None = None
    """What differs from the baseline besides the metrics (None: nothing)."""
    reason: str = ""
    """Why a ``not compared`` verdict was not (gate/outcome/rows.py)."""
    failed: tuple[str, ...] = ()
    """The tests that failed or gave the failing verdict (named first)."""
    skipped: tuple[str, ...] = ()
    """The tests pytest skipped."""
    noise: tuple[NoiseNote, ...] = ()
    """The questions whose change float drift explains (gate/comparison/drift.py)."""
    others: tuple[str, ...] = ()
    """The row's other tests' verdicts that its own does not say
    (gate/outcome/rows.py ``RowVerdict.others``)."""

    @classmethod
    def of_row(
        cls,
        result: Mapping[str, Any],
        nodeids: Sequence[str],
        verdict: RowVerdict,
        explorer: Mapping[str, Any] | None = None,
    ) -> ReportEntry:
        """A session's row: its result, tests and :class:`RowVerdict`."""
        return cls(
            result,
            tuple(nodeids),
            verdict.outcome,
            verdict.verdict,
            verdict.gated,
            verdict.flips,
            explorer,
            verdict.changes,
            verdict.reason,
            verdict.failed,
            verdict.skipped,
            verdict.noise,
            verdict.others,
        )

    @property
    def row_verdict(self) -> RowVerdict:
        from pytest_chunkeval.gate.outcome.rows import RowVerdict

        return RowVerdict(
            self.outcome,
            self.verdict,
            self.gated,
            self.flips,
            self.changes,
            self.reason,
            self.failed,
            self.skipped,
            self.noise,
            self.others,
        )

    @property
    def baseline_cell(self) -> str:
        """``REGRESSED``, ``not compared (unreadable baseline)``, ``-``."""
        return self.row_verdict.cell

    @property
    def outcome_cell(self) -> str:
        """``passed``, ``failed (1 skipped)``, ``-``."""
        return self.row_verdict.outcome_cell(len(self.nodeids))

    def tests_cell(self, listed: int = 3) -> str:
        """The tests, the failed ones named first (gate/outcome/rows.py)."""
        from pytest_chunkeval.gate.outcome.rows import label_tests

        return label_tests(self.nodeids, self.failed, listed=listed)

    @classmethod
    def of(
        cls,
        result: EvalResult,
        nodeids: Sequence[str] = (),
        *,
        details: bool = False,
        explore: bool = False,
    ) -> ReportEntry:
        """``explore``: also the explorer's piece (needs ``result.corpus``)."""
        piece = explorer_piece(result) if explore else None
        return cls(result.to_json(details=details), tuple(nodeids), explorer=piece)


def worst_first(entries: Sequence[ReportEntry]) -> list[ReportEntry]:
    """Regressions first, then missing and not compared baselines, then failed
    tests, then the rest, each in the session's order."""
    return sorted(entries, key=lambda e: severity(e.verdict, e.outcome))


@dataclass(frozen=True)
class ResultRow:
    """What a table line or a plot point needs, from a result or a history record."""

    label: str  # the configuration in one line
    chunker: str
    k: str
    unit: str
    tests: tuple[str, ...]
    means: Mapping[str, float | None]
    stds: Mapping[str, float | None]
    groups: Mapping[str, Mapping[str, float | None]]
    chunk_size: float | None
    n: int
    extra: Mapping[str, str] = field(default_factory=dict)
    sent: float | None = None  # units sent to the LLM per query (mean)
    budget: int | None = None
    loss: Mapping[str, float | None] = field(default_factory=dict)
    note: str = ""
    """What the run measured about the configuration (results per query of a
    whole retriever, a degraded LLM chunking): shown, never part of ``label``."""

    @property
    def shown(self) -> str:
        """The configuration cell of a table."""
        return f"{self.label} {self.note}" if self.note else self.label

    @classmethod
    def from_entry(cls, entry: ReportEntry) -> ResultRow:
        result = EvalResult.from_json(dict(entry.result))
        return cls(
            label=series_label(result.describe(measured=False), result.config),
            chunker=chunker_text(
                str(result.config.get("chunker", result.label)), result.chunks
            ),
            k=k_text(result.config, result.chunks),
            unit=str(result.config.get("unit", "")),
            tests=tuple(entry.nodeids),
            means={m: present(s.mean) for m, s in result.metrics.items()},
            stds={m: present(s.std) for m, s in result.metrics.items()},
            groups={
                g: {m: present(s.mean) for m, s in stats.items()}
                for g, stats in result.groups.items()
            },
            chunk_size=present(result.chunks.get("mean_units")),
            n=max((s.n for s in result.metrics.values()), default=0),
            note=measured_text(result.chunks),
            sent=present(result.chunks.get("sent_units")),
            budget=result.config.get("budget"),
            loss={part: present(s.mean) for part, s in result.loss.items()},
        )

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> ResultRow:
        config = record.get("config") or {}
        metrics = record.get("metrics") or {}
        chunks = record_chunks(record)
        return cls(
            label=series_label(
                str(record.get("configuration") or record.get("label", "?")), config
            ),
            chunker=chunker_text(
                str(config.get("chunker", record.get("label", "?"))), chunks
            ),
            k=k_text(config, chunks),
            unit=str(config.get("unit", "")),
            tests=(str(record["test"]),) if record.get("test") else (),
            means={m: present(v.get("mean")) for m, v in metrics.items()},
            stds={m: present(v.get("std")) for m, v in metrics.items()},
            groups=record.get("groups") or {},
            chunk_size=present(chunks.get("mean_units")),
            n=int(record.get("n") or 0),
            extra={"commit": commit_key(record)},
            note=measured_text(chunks),
        )


def series_label(configuration: str, config: Mapping[str, Any]) -> str:
    """One series per configuration AND dataset: the same chunker measured on two
    corpora must not become one line of the history plots."""
    corpus = config.get("corpus")
    return f"{configuration} on {corpus}" if corpus else configuration


def mean_std_cell(row: ResultRow, metric: str) -> str:
    return format_mean_std(row.means.get(metric), row.stds.get(metric))


def chunk_cell(row: ResultRow) -> str:
    if row.chunk_size is None:
        return "-"
    return f"{row.chunk_size:.0f} {unit_label(row.unit)}"
