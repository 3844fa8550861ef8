"""The terminal summary: one row per evaluated configuration, then what the end
of the session did (baselines, history, reports).

Pure text: ``plugin.py`` writes these lines under ``write_sep("-", "chunkeval")``.
Rows come from ``EvalResult.to_json(details=False)`` (what xdist workers send).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_chunkeval.core.metric_names import (
    JUDGED,
    PRESENCE,
    column_digits,
    format_change,
    format_interval,
    format_percent,
    names,
    short_label,
    unit_label,
)
from pytest_chunkeval.core.metric_names import format_points as _pts
from pytest_chunkeval.engine.labels import chunker_text, k_text, unscored_text
from pytest_chunkeval.gate.comparison.verdicts import (
    GatedMetric,
    groups_line,
    severity,
    verdict_text,
    worst,
)
from pytest_chunkeval.gate.outcome.rows import RowVerdict, label_tests
from pytest_chunkeval.run.grouped_lines import group_passed_items
from pytest_chunkeval.run.outputs import SessionEnd, SummaryRow
from pytest_chunkeval.util.text import format_rows

# (header, metric) in table order; means are printed in percent.
METRIC_COLUMNS = tuple((short_label(m), m) for m in names(PRESENCE))
JUDGED_COLUMNS = tuple((short_label(m), m) for m in names(JUDGED))
"""Shown when a row was judged (docs/judged.md#the-two-measures)."""
SHORT_COLUMNS = METRIC_COLUMNS[:3]
# The columns of relationship results (chunkeval.relationships): named apart.
RELATIONSHIP_COLUMNS = tuple(
    (short_label(m), m)
    for m in ("rel_recall", "rel_precision", "evidence_recall", "evidence_iou")
)
MAX_TEST_WIDTH = 70


def _mean(result: Mapping[str, Any], metric: str) -> Any:
    return result.get("metrics", {}).get(metric, {}).get("mean")


def _test_cell(row: SummaryRow, verdict: RowVerdict | None = None) -> str:
    """The row's first failed test (else its first), shortened, and how many
    others: ``t.py::test_whole (+7 more, 4 of them failed)`` (gate/outcome/rows.py)."""
    if not row.nodeids:
        return "?"
    failed = verdict.failed if verdict is not None else ()
    shown = [
        n if len(n) <= MAX_TEST_WIDTH else "..." + n[-(MAX_TEST_WIDTH - 3) :]
        for n in row.nodeids
    ]
    short = {s for s, n in zip(shown, row.nodeids, strict=True) if n in failed}
    return label_tests(shown, short, listed=1)


def _chunk_cell(result: Mapping[str, Any]) -> str:
    chunks = result.get("chunks", {})
    size = chunks.get("mean_units")
    if not chunks.get("count") or size is None:
        return "-"
    unit = str(result.get("config", {}).get("unit", ""))
    return f"{float(size):.0f} {unit_label(unit)}"


def _time_cell(result: Mapping[str, Any]) -> str:
    timings = result.get("timings", {})
    if "cached" in timings:  # read back from the result cache (engine/result_cache.py)
        return "cached"
    return f"{sum(float(t) for t in timings.values()):.2f}s"


def _table(
    header: Sequence[str], rows: Sequence[Sequence[str]], text_columns: int
) -> list[str]:
    return format_rows(header, rows, text_columns=text_columns, rule=False).split("\n")


def footer(evaluations: int, reused: int, cached: int = 0) -> str:
    """``2 configurations evaluated, 18 results reused``; with ``cached`` of the
    evaluations read back from the result cache (their time cell says ``cached``,
    engine/result_cache.py), ``2 configurations evaluated (2 read back from the
    result cache), 0 results reused``: ``reused`` counts the tests that took a
    result another test of this session evaluated (docs/performance.md)."""
    configs = "configuration" if evaluations == 1 else "configurations"
    results = "result" if reused == 1 else "results"
    read = f" ({cached} read back from the result cache)" if cached else ""
    return f"{evaluations} {configs} evaluated{read}, {reused} {results} reused"


def render_summary(
    rows: Sequence[SummaryRow],
    *,
    verbosity: int = 0,
    evaluations: int = 0,
    reused: int = 0,
    cached: int = 0,
    extra: Sequence[str] = (),
    verdicts: Mapping[str, RowVerdict] | None = None,
) -> list[str]:
    """The summary lines (empty when nothing was evaluated).

    ``verbosity`` as pytest's: 0 the full table (test id, chunker, k, metric means
    in %, mean chunk size, time); -1 (``-q``) test id and k with recall, precision and
    IoU; -2 and below only the footer line. ``extra``: metric columns the run
    asked for beyond the default ones (e.g. ``ndcg`` named by a marker threshold).
    ``verdicts`` (row key -> its test outcome and baseline verdict): when a row
    checked a baseline or failed, the tables show both, and the full one is
    followed by each gated metric against its baseline, regressions first.
    """
    if not rows:
        return []
    verdicts = verdicts or {}
    status = any(v.verdict or v.outcome == "failed" for v in verdicts.values())
    lines: list[str] = []
    chunk_rows = [r for r in rows if not _is_relationships(r)]
    rel_rows = [r for r in rows if _is_relationships(r)]
    judged = any("context_relevance" in r.result.get("metrics", {}) for r in chunk_rows)
    chunk_columns = [
        *METRIC_COLUMNS,
        *((short_label(m), m) for m in extra),
        *(JUDGED_COLUMNS if judged else ()),
    ]
    for group, columns, short in (
        (chunk_rows, chunk_columns, SHORT_COLUMNS),
        (rel_rows, list(RELATIONSHIP_COLUMNS), RELATIONSHIP_COLUMNS[:3]),
    ):
        if not group:
            continue
        if verbosity >= 0:
            lines += _full_table(group, columns, verdicts if status else None)
        elif verbosity == -1:
            # k tells apart the rows of a k sweep, which share their test id.
            shown = _STATUS if status else []
            header = ["test", *shown, "k", *(h for h, _ in short)]
            body = [
                [
                    _test_cell(r, verdicts.get(r.key)),
                    *(_status_cells(verdicts.get(r.key), r) if status else []),
                    k_text(r.result.get("config", {}), r.result.get("chunks") or {}),
                    *(format_percent(_mean(r.result, m)) for _, m in short),
                ]
                for r in group
            ]
            lines += _table(header, body, 1 + len(shown))
    if verbosity >= 0:
        lines.append(
            "metric means in %; chunk: mean chunk size"
            + ("; CR: judged context relevance (sentences, tokens)" if judged else "")
        )
    if verbosity >= 0:
        lines += against_baseline(rows, verdicts)
    unscored = unscored_text(r.result for r in rows)
    if unscored:  # named once, whatever the verbosity (docs/formats.md)
        lines.append(unscored)
    lines.append(footer(evaluations, reused, cached))
    return lines


_STATUS = ["outcome", "baseline"]


def _status_cells(verdict: RowVerdict | None, row: SummaryRow) -> list[str]:
    if verdict is None:
        return ["-", "-"]
    return [verdict.outcome_cell(len(row.nodeids)), verdict.cell]


def _in_block(verdict: RowVerdict) -> bool:
    """A row of the "against the baseline" block: compared on gated metrics,
    or a verdict that fails the gate (every check shown)."""
    return bool(verdict.gated) or verdict.fails


def against_baseline(
    rows: Sequence[SummaryRow], verdicts: Mapping[str, RowVerdict]
) -> list[str]:
    """Each gated metric of each compared row: baseline, now, change in points
    and its confidence interval, regressions first; a row where no question
    moved in one line (its baseline is the table's value). Opened by a line per
    row where more than the metrics changed (configuration, documents,
    questions). Empty when no row was compared."""
    checked = [
        (r, verdicts[r.key]) for r in rows if _in_block(verdicts.get(r.key, _NONE))
    ]
    if not checked:
        return []
    checked.sort(key=lambda rv: severity(rv[1].verdict, rv[1].outcome))
    levels = {g.confidence for _, v in checked for g in v.gated}
    ci = f"{100 * levels.pop():g}% CI" if len(levels) == 1 else "CI"
    header = ["test", "metric", "verdict", "baseline", "now", "change", "SE", ci]
    body = []
    digits = column_digits(
        (g.before, g.after, g.delta) for _, v in checked for g in v.gated
    )
    unmoved = format_change(0.0, 0.0, 0.0, digits)[2]
    for row, v in checked:
        if not v.gated:  # a failing verdict without gated metrics
            flips = v.flips if v.verdict == "regressed" else None
            note = (
                "" if flips is None else f"{flips.lost_count} of {flips.compared} lost"
            )
            body.append([_test_cell(row, v), "-", v.cell, "", "", note, "", ""])
            continue
        if all(g.unchanged for g in v.gated):  # one line: nothing moved
            names = ", ".join(g.metric for g in v.gated)
            # the row's verdict: a check can fail unmoved (too many questions
            # left out), and the line stands for the row, not its metrics
            said = (
                v.cell if v.verdict else verdict_text(worst(g.status for g in v.gated))
            )
            body.append([_test_cell(row, v), names, said, "", "", unmoved, "", ""])
            continue
        body += [
            [
                _test_cell(row, v) if i == 0 else "",
                g.metric,
                g.verdict,
                *format_change(g.before, g.after, g.delta, digits),
                "-" if g.se is None else _pts(g.se),
                format_interval(g.low, g.high),
            ]
            for i, g in enumerate(v.gated)
        ]
    # What changed comes first, then the verdict on it (issue 13).
    changed = [
        f"{_test_cell(row, v)}: {v.changes.line()}"
        for row, v in checked
        if v.changes is not None and v.changes.any
    ]
    how = _how([g for _, v in checked for g in v.gated])
    # documents beyond their own tolerance, named whatever the verdict
    groups = [
        f"{_test_cell(row, v)}: {line}"
        for row, v in checked
        for g in v.gated
        if (line := groups_line(g.metric, g.groups))
    ]
    return [
        f"against the baseline{how}:",
        *changed,
        *_table(header, body, 3),
        *groups,
    ]


_NONE = RowVerdict()

_HOW = {
    "changes": "the mean of the questions' changes, against the tolerance plus z "
    "SEs of noise; the CI is information only",
    "paired": "paired, query by query: decided by the bootstrap CI",
    "mean": "the difference of the means",
}
"""What a gated row's change is and what decided it, per gate mode
(docs/baselines.md, "What a verdict means")."""


def _how(gated: Sequence[GatedMetric]) -> str:
    """The block's opening words: what the change is under the mode that
    decided it (a mode has an SE only in ``changes``, an interval outside
    ``mean``)."""
    modes = {
        "changes" if g.se is not None else "paired" if g.low is not None else "mean"
        for g in gated
        if g.status != "not compared"
    }
    if not modes:
        return ""
    if len(modes) > 1:
        return " (points; each row's change as its test's gate mode decides it)"
    return f" (points; the change is {_HOW[modes.pop()]})"


def _is_relationships(row: SummaryRow) -> bool:
    return "rel_recall" in row.result.get("metrics", {})


def _full_table(
    rows: Sequence[SummaryRow],
    columns: Sequence[tuple[str, str]],
    verdicts: Mapping[str, RowVerdict] | None = None,
) -> list[str]:
    status = verdicts is not None
    header = [
        "test",
        "chunker",
        *(_STATUS if status else []),
        "k",
        *(h for h, _ in columns),
        "chunk",
        "time",
    ]
    body = []
    for row in rows:
        result = row.result
        config = result.get("config", {})
        verdict = verdicts.get(row.key) if verdicts is not None else None
        body.append(
            [
                _test_cell(row, verdict),
                chunker_text(
                    str(config.get("chunker") or result.get("label", "")),
                    result.get("chunks") or {},
                ),
                *(_status_cells(verdict, row) if verdicts is not None else []),
                k_text(config, result.get("chunks") or {}),
                *(format_percent(_mean(result, m)) for _, m in columns),
                _chunk_cell(result),
                _time_cell(result),
            ]
        )
    return _table(header, body, 4 if status else 2)


FAIL_UNUSED_HINT = (
    "unused baselines fail this run (chunkeval_fail_unused / "
    "--chunkeval-fail-unused): delete them, or run pytest --chunkeval-update"
)


UNUSED_ITEMS_HINT = (
    "{n} per-question baseline(s) above fail this run: their question is gone "
    'from the query set (docs/baselines.md, "The question set is part of the '
    'baseline"); fix the query set, or run pytest --chunkeval-update to delete '
    "them"
)


def render_end(end: SessionEnd | None) -> list[str]:
    """The session's verdict line (the table's rows by their baseline cell, as
    every report opens with), the baseline files by status with improvements
    and unused files, then the outputs written and any that could not be."""
    if end is None:
        return []
    lines = [f"verdict: {end.headline}"] if end.headline else []
    lines += group_passed_items(end.baselines)
    lines += [f"FAILED {message}" for message in end.together]
    if end.fail_unused and end.unused:
        lines.append(FAIL_UNUSED_HINT)
    elif end.unused_items:
        lines.append(UNUSED_ITEMS_HINT.format(n=len(end.unused_items)))
    lines += end.written
    lines += [f"ERROR: {e}" for e in end.errors]
    return lines
