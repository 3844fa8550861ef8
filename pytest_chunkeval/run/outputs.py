"""End-of-session outputs: the history file and the JSON, Markdown and HTML
reports. A failure to write one is reported in the summary, not raised."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_chunkeval.config.options import Settings
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome
    from pytest_chunkeval.gate.outcome.rows import RowVerdict
    from pytest_chunkeval.reporting.rows import ReportEntry


@dataclass
class SummaryRow:
    """One evaluated configuration: its result (without per-query detail) and the
    tests that asserted on it."""

    key: str
    result: dict[str, Any]
    nodeids: list[str] = field(default_factory=list)
    explorer: dict[str, Any] | None = None
    """The HTML report's question explorer data (only with ``--chunkeval-html``:
    made where the corpus is, shipped with the row from an xdist worker)."""
    trec: dict[str, Any] | None = None
    """The TREC run and qrels lines (only with ``--chunkeval-trec-run`` or
    ``--chunkeval-qrels``; reporting/trec.py), made where the corpus is."""

    def to_json(self) -> dict[str, Any]:
        data = {"key": self.key, "result": self.result, "nodeids": self.nodeids}
        if self.explorer is not None:
            data["explorer"] = self.explorer
        if self.trec is not None:
            data["trec"] = self.trec
        return data

    @classmethod
    def of_result(cls, key: str, result: EvalResult, settings: Settings) -> SummaryRow:
        """The row of a result just evaluated, with what the session's reports need
        from where the corpus is (per-query detail only for the JSON report: rows
        travel from xdist workers and are kept until the session ends)."""
        row = cls(key, result.to_json(details=settings.json is not None))
        if settings.html:
            from pytest_chunkeval.reporting.explorer import explorer_piece

            # what changed since the baseline is added by the report, from the
            # flips the gate found (checked after this, by the test)
            row.explorer = explorer_piece(result)
        if settings.trec_run or settings.qrels:
            from pytest_chunkeval.reporting.trec import trec_piece

            row.trec = trec_piece(result)
        return row

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SummaryRow:
        return cls(
            str(data["key"]),
            dict(data["result"]),
            list(data["nodeids"]),
            data.get("explorer"),
            data.get("trec"),
        )


@dataclass
class SessionEnd:
    """What the end of the session did, for the terminal summary."""

    unused: list[Path] = field(default_factory=list)
    """Baseline files no test used (empty in update mode: they were deleted)."""
    fail_unused: bool = False
    """Unused baselines fail the run (``chunkeval_fail_unused``)."""
    unused_items: list[Path] = field(default_factory=list)
    """Of ``unused``, per-question items' files (their question is gone): they
    fail the run whatever ``fail_unused`` says."""
    together: list[str] = field(default_factory=list)
    """Per-question items that regressed together (gate/outcome/together.py):
    each item passed, the run fails."""
    baselines: list[str] = field(default_factory=list)
    """The baseline store's summary lines."""
    written: list[str] = field(default_factory=list)
    """One line per history append / report written."""
    errors: list[str] = field(default_factory=list)
    """Outputs that could not be written."""
    verdicts: dict[str, RowVerdict] = field(default_factory=dict)
    """Summary row key -> its test outcome and baseline verdict."""
    headline: str = ""
    """The run's verdict in one line, counting the rows of the tables by their
    Baseline cell (``1 regression, 0 improvements, 3 unchanged``)."""

    @property
    def failed(self) -> bool:
        """True when the run must fail although every test passed."""
        return (
            bool(self.errors)
            or bool(self.unused_items)
            or bool(self.together)
            or (self.fail_unused and bool(self.unused))
        )


def _attempt(end: SessionEnd, what: str, write: Callable[[], list[str]]) -> None:
    """Run one output writer; a failure is reported, not raised: the tests ran
    and their results must still be shown."""
    try:
        end.written += write()
    except (OSError, ValueError) as exc:  # ValueError: also history.HistoryError
        end.errors.append(f"could not {what}: {exc}")


def _json(
    path: str,
    entries: Sequence[ReportEntry],
    verdict: str,
    inspections: Sequence[Any] = (),
) -> list[str]:
    from pytest_chunkeval.reporting.json_report import json_report
    from pytest_chunkeval.util.files import atomic_write_text

    atomic_write_text(path, json_report(entries, inspections, verdict=verdict))
    return [f"JSON report: {path}"]


def _markdown(
    path: str, entries: Sequence[ReportEntry], environ: Mapping[str, str], verdict: str
) -> list[str]:
    from pytest_chunkeval.reporting.markdown import (
        GITHUB_SUMMARY_ENV,
        append_github_summary,
        markdown_report,
    )
    from pytest_chunkeval.util.files import atomic_write_text

    text = markdown_report(entries, verdict=verdict)
    atomic_write_text(path, text)
    lines = [f"Markdown report: {path}"]
    if append_github_summary(text, environ) is not None:
        lines.append(f"Markdown report appended to ${GITHUB_SUMMARY_ENV}")
    return lines


def _html(
    path: str,
    entries: Sequence[ReportEntry],
    history: str | None,
    verdict: str,
    inspections: Sequence[Any] = (),
    rootdir: str | None = None,
) -> list[str]:
    from pytest_chunkeval.reporting.history import read_history
    from pytest_chunkeval.reporting.html import html_report
    from pytest_chunkeval.util.files import atomic_write_text

    records = (
        read_history(history, rootdir=rootdir)
        if history and Path(history).exists()
        else []
    )
    page = html_report(entries, records, verdict=verdict, inspections=inspections)
    atomic_write_text(path, page)
    return [f"HTML report: {path}"]


def session_verdicts(
    rows: Sequence[SummaryRow],
    end: SessionEnd,
    outcomes: Sequence[CheckOutcome],
    passed: Collection[str] | None,
    *,
    skipped: Collection[str] = (),
    order: Mapping[str, int] | None = None,
) -> None:
    """Fill ``end.verdicts`` (per row: test outcome, baseline verdict, gated
    metrics, flipped questions) and ``end.headline`` from the baseline checks,
    and put each row's tests in the order every report lists them (the failed
    ones first, then collection ``order``); ``passed``: the node ids whose every
    phase passed (None: unknown), ``skipped``: those pytest skipped."""
    from pytest_chunkeval.gate.outcome.rows import (
        ordered_tests,
        row_headline,
        row_verdicts,
    )

    end.verdicts = row_verdicts(
        ((r.key, r.nodeids) for r in rows), outcomes, passed, skipped, order
    )
    for row in rows:
        row.nodeids[:] = ordered_tests(row.nodeids, end.verdicts[row.key], order or {})
    end.headline = row_headline(end.verdicts.values())


def write_outputs(
    s: Settings,
    rows: Sequence[SummaryRow],
    end: SessionEnd,
    environ: Mapping[str, str],
    inspections: Sequence[Mapping[str, Any]] = (),
) -> None:
    """Append the history and write the configured reports (rows carry
    ``end.verdicts``, see :func:`session_verdicts`; ``inspections``: query-set
    inspections for the JSON and HTML reports); failures go to ``end.errors``."""
    if s.history:
        _attempt(
            end,
            f"append to the history file {s.history}",
            lambda: _history(s, rows),
        )
    if s.trec_run or s.qrels:
        from pytest_chunkeval.reporting.trec import write_trec

        pieces = [r.trec for r in rows if r.trec is not None]
        _attempt(
            end,
            "write the TREC files",
            lambda: write_trec(pieces, s.trec_run, s.qrels),
        )
    if not (s.json or s.md or s.html):
        return
    from pytest_chunkeval.gate.outcome.rows import RowVerdict
    from pytest_chunkeval.reporting.rows import ReportEntry

    entries = [
        ReportEntry.of_row(
            r.result, r.nodeids, end.verdicts.get(r.key, RowVerdict()), r.explorer
        )
        for r in rows
    ]
    verdict = end.headline
    if s.json:
        path = s.json
        _attempt(
            end,
            f"write the JSON report {path}",
            lambda: _json(path, entries, verdict, inspections),
        )
    if s.md:
        path = s.md
        _attempt(
            end,
            f"write the Markdown report {path}",
            lambda: _markdown(path, entries, environ, verdict),
        )
    if s.html:
        path = s.html
        _attempt(
            end,
            f"write the HTML report {path}",
            lambda: _html(path, entries, s.history, verdict, inspections, s.rootdir),
        )


def _history(settings: Settings, rows: Sequence[SummaryRow]) -> list[str]:
    from datetime import datetime, timezone

    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.reporting.git_info import git_info
    from pytest_chunkeval.reporting.history import (
        append_history,
        history_record,
        new_run_id,
    )

    assert settings.history is not None
    git = git_info(settings.rootdir, ignore=own_outputs(settings))
    now = datetime.now(timezone.utc)  # one timestamp and id: the records of one run
    run = new_run_id()
    records = [
        history_record(
            EvalResult.from_json(row.result),
            test=row.nodeids[0] if row.nodeids else None,
            git=git,
            timestamp=now,
            run=run,
            rootdir=settings.rootdir,
        )
        for row in rows
    ]
    if not records:
        return []
    # a repaired torn line is reported in the summary, not as a warning (which
    # a filterwarnings=error configuration would turn into a crash here)
    notes: list[str] = []
    count = append_history(settings.history, records, note=notes.append)
    return [
        *notes,
        f"history: {count} record(s) appended to {settings.history}",
    ]


def own_outputs(settings: Settings) -> Callable[[Path], bool]:
    """Whether a changed file is one this plugin writes (history, reports, and
    under ``--chunkeval-update`` the baselines): such a change does not make the
    work tree dirty, or a committed history file would mark every second run on
    a clean commit as ``dirty``."""
    from pytest_chunkeval.gate.files.paths import BASELINE_DIRNAME

    root = Path(settings.rootdir)
    files = {
        (root / p).resolve()
        for p in (
            settings.history,
            settings.json,
            settings.md,
            settings.html,
            settings.trec_run,
            settings.qrels,
        )
        if p
    }
    folder = (root / settings.baseline_dir).resolve() if settings.baseline_dir else None

    def ignore(path: Path) -> bool:
        path = path.resolve()
        if path in files:
            return True
        if not settings.update:
            return False
        return BASELINE_DIRNAME in path.parts or (
            folder is not None and path.is_relative_to(folder)
        )

    return ignore
