"""The Markdown report (``--chunkeval-md``), the history table and the GitHub job
summary."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.core.metric_names import format_percent, header
from pytest_chunkeval.engine.labels import unscored_text
from pytest_chunkeval.reporting.history import append_lines, commits, runs
from pytest_chunkeval.reporting.md_table import md_table, result_rows
from pytest_chunkeval.reporting.rows import ResultRow, table_metrics, worst_first

if TYPE_CHECKING:
    from pytest_chunkeval.reporting.rows import ReportEntry

GITHUB_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"


def markdown_report(
    entries: Iterable[ReportEntry],
    *,
    title: str = "chunkeval results",
    verdict: str = "",
) -> str:
    """A Markdown table of the session's results (percent, mean ± std), opened
    by the session's one-line ``verdict`` when given. When the entries carry
    them: the test outcome and baseline verdict as columns (regressions first),
    then the gated metrics against the baseline and the questions that flipped."""
    from pytest_chunkeval.reporting.gate_report import (
        baseline_markdown,
        changes_markdown,
        verdict_markdown,
    )

    entries = worst_first(list(entries))
    headers, body = result_rows([ResultRow.from_entry(e) for e in entries])
    for cells, e in zip(body, entries, strict=True):
        cells[0] = e.tests_cell()  # the failed tests named first
    if any(e.outcome or e.verdict for e in entries):
        headers[2:2] = ["Outcome", "Baseline"]
        for cells, e in zip(body, entries, strict=True):
            cells[2:2] = [e.outcome_cell, verdict_markdown(e)]
    head = f"**{verdict}**\n\n" if verdict else ""
    table = md_table(headers, body, 4 if headers[2] == "Outcome" else 2)
    text = f"{head}## {title}\n\n{table}\n"
    unscored = unscored_text(e.result for e in entries)
    if unscored:  # docs/formats.md
        text += f"\n{unscored}\n"
    for section in (baseline_markdown(entries), changes_markdown(entries)):
        if section:
            text += f"\n{section}"
    return text


def history_markdown(
    records: Sequence[Mapping[str, Any]], *, title: str = "chunkeval history"
) -> str:
    """The latest commit's numbers per configuration, with the change since the
    previous commit that has the same configuration."""
    latest, previous = latest_two(records)
    columns = table_metrics(list(latest.values()))
    headers = ["Configuration", "Commit", *(header(m) for m in columns)]
    body = []
    for label, row in latest.items():
        before = previous.get(label)
        cells = [label, row.extra.get("commit", "")]
        for m in columns:
            now = row.means.get(m)
            cell = format_percent(now)
            old = before.means.get(m) if before else None
            if now is not None and old is not None:
                cell += f" ({format_percent(now - old, signed=True)})"
            cells.append(cell)
        body.append(cells)
    note = (
        f"{len(records)} records from {len(runs(records))} run(s) of "
        f"{len(commits(records))} commit(s); in parentheses: the change in points "
        "since the previous commit."
    )
    return f"## {title}\n\n{note}\n\n{md_table(headers, body)}\n"


def latest_two(
    records: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, ResultRow], dict[str, ResultRow]]:
    """Per configuration: its row at its latest commit, and at the commit before."""
    by_label: dict[str, dict[str, ResultRow]] = {}
    for record in records:
        row = ResultRow.from_record(record)
        per_commit = by_label.setdefault(row.label, {})
        # re-inserted so the order is that of each commit's LAST record (A, B, A:
        # the latest is A)
        per_commit.pop(row.extra["commit"], None)
        per_commit[row.extra["commit"]] = row
    latest, previous = {}, {}
    for label, per_commit in by_label.items():
        rows = list(per_commit.values())
        latest[label] = rows[-1]
        if len(rows) > 1:
            previous[label] = rows[-2]
    return latest, previous


def append_github_summary(
    markdown: str, environ: Mapping[str, str] | None = None
) -> Path | None:
    """Append to the file ``$GITHUB_STEP_SUMMARY`` names, when it is set."""
    env = os.environ if environ is None else environ
    target = env.get(GITHUB_SUMMARY_ENV)
    if not target:
        return None
    append_lines(target, markdown if markdown.endswith("\n") else markdown + "\n")
    return Path(target)
