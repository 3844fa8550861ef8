"""The gate's text: the method line, the table of metric verdicts, and the
failure / improvement messages a test shows."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from pytest_chunkeval.core.absent import present
from pytest_chunkeval.core.locate import clip
from pytest_chunkeval.core.metric_names import (
    column_digits,
    format_change,
    format_interval,
)
from pytest_chunkeval.core.metric_names import format_points as _pts
from pytest_chunkeval.gate.comparison.verdicts import GroupDrop, groups_line
from pytest_chunkeval.util.text import plural

if TYPE_CHECKING:
    from pytest_chunkeval.gate.comparison.compare import GateReport, MetricCheck


def _ci(check: MetricCheck) -> str:
    return format_interval(check.low, check.high)


def method_line(report: GateReport) -> str:
    """How the verdict was reached, in one line."""
    s = report.settings
    if s.mode == "mean":
        return "means compared against the tolerance (mode 'mean')"
    joint = (
        f", simultaneous over {len(report.checks)} metrics"
        if len(report.checks) > 1
        else ""
    )
    interval = (
        f"bootstrap CI of the mean delta ({s.samples} resamples, seed {s.seed}), "
        f"{100 * s.confidence:g}% confidence{joint}"
    )
    if s.mode == "paired":
        return f"paired over {plural(report.n, 'query', 'queries')}: {interval}"
    explained = len(report.noise)
    drift = (
        f"; float drift explains {explained} change{'' if explained == 1 else 's'}"
        if explained
        else ""
    )
    z = f"z {_z(report):.2f}" if report.checks else "z -"
    measured = "; ".join(report.repeats) or "no noise found: SE 0"
    return (
        f"changes over {plural(report.n, 'question')}: the mean change against the "
        f"tolerance plus {z} SEs of noise ({measured}){drift}; "
        f"sampling view: {interval}"
    )


def _z(report: GateReport) -> float:
    from pytest_chunkeval.gate.comparison.noise import z_value

    compared = len(report.checks) - len(report.not_compared)
    return z_value(report.settings.confidence, compared)


def _tolerance(check: MetricCheck) -> str:
    if check.tolerance.relative:
        return f"{check.tolerance} ({_pts(-check.allowed, True)})"
    return str(check.tolerance)


def _hides(check: MetricCheck) -> str:
    """The largest drop the measured noise could hide, in points; "-" without
    noise (the tolerance alone)."""
    if math.isnan(check.se) or check.se == 0:
        return "-"
    return _pts(-check.hides, True)


def _detectable(check: MetricCheck) -> str:
    return "-" if math.isnan(check.mde) else _pts(-check.mde, True)


def report_table(report: GateReport) -> str:
    """One row per gated metric, in points (percent); changes signed. In
    ``changes`` mode: the noise of the change (its SE, and the largest drop it
    could hide), then the sampling view (the interval and the smallest drop
    this set can tell)."""
    from pytest_chunkeval.util.text import format_rows

    changes = report.settings.mode == "changes"
    ci_head = f"{100 * report.settings.confidence:g}% CI"
    headers = ["metric", "baseline", "now", "delta"]
    headers += ["SE", "could hide", ci_head, "detectable"] if changes else [ci_head]
    headers += ["tolerance", "verdict"]
    rows = []
    digits = column_digits((c.before, c.after, c.delta) for c in report.checks)
    for c in report.checks:
        row = [c.metric, *format_change(c.before, c.after, c.delta, digits)]
        if changes:
            row += [_pts(present(c.se)), _hides(c), _ci(c), _detectable(c)]
        else:
            row.append(_ci(c))
        verdict = "REGRESSED" if c.own == "regressed" else c.own
        row += [_tolerance(c), f"{verdict} ({c.reason})" if c.reason else verdict]
        rows.append(row)
        by = report.settings.group_kinds  # the groups that decided, a row each
        decided = [g for g in c.groups if c.whole and g.kind in by]
        rows += [_group_row(c, g, changes) for g in decided]
    return format_rows(headers, rows)


def _group_row(check: MetricCheck, group: GroupDrop, changes: bool) -> list[str]:
    """A document's (tag's) row under its metric's where it decided the check
    (``chunkeval_gate_by``): its change against its own tolerance."""
    noise = [_pts(group.se), "-", "", ""] if changes else [""]
    return [
        f"{check.metric} of {group.kind} {group.group}",
        "",
        "",
        _pts(group.delta, True),
        *noise,
        f"{_pts(-group.allowed, True)}pp",
        "REGRESSED",
    ]


def sampling_line(report: GateReport) -> str:
    """The sampling view in one line (``changes`` mode): what the set can tell,
    never used to forgive a real drop."""
    m = report.mde_questions
    if report.settings.mode != "changes" or not report.checks or m is None:
        return ""
    drops = ", ".join(
        f"{c.metric} {_pts(c.mde)}" for c in report.checks if not math.isnan(c.mde)
    )
    return (
        f"sampling view: the bootstrap interval could tell a drop only once {m} of "
        f"{plural(report.n, 'question')} moved the same way ({drops} points); "
        "information "
        "only, the verdict counts every change"
    )


def _verdict_line(check: MetricCheck, report: GateReport | None = None) -> str:
    if check.low is not None and check.high is not None:
        where = f"mean delta {_pts(check.delta, True)} points, CI {_ci(check)}"
    else:
        before, after, _ = format_change(check.before, check.after, check.delta)
        where = f"{before} -> {after}"
    noise = not math.isnan(check.se) and check.se > 0
    if noise:
        where += (
            f", SE {_pts(check.se)} points (a drop up to {_pts(-check.hides, True)} "
            "points could hide in the measured noise)"
        )
    by = report.settings.group_kinds if report is not None else ("document",)
    counts = [(k, sum(1 for g in check.groups if g.kind == k)) for k in by]
    failing = " and ".join(f"{n} {kind}(s)" for kind, n in counts if n)
    if check.whole and failing:
        return (
            f"{check.metric}: {failing} beyond their own tolerance "
            f"(chunkeval_gate_by = {', '.join(by)}); the whole set: {where}, "
            + _WHOLE[check.whole].format(check.tolerance)
        )
    if check.status == "regressed":
        return (
            f"{check.metric} got worse: {where}, beyond the tolerance "
            f"{check.tolerance}"
            + (f" ({_pts(-check.allowed, True)} points)" if check.allowed else "")
            + (" and the noise" if noise else "")
        )
    if check.status == "noisy":
        measured = "; ".join(report.repeats) if report is not None else ""
        return (
            f"{check.metric} noisy: {where}, beyond the tolerance {check.tolerance} "
            "but within the noise" + (f" ({measured})" if measured else "")
        )
    return f"{check.metric} improved: {where}"


_WHOLE = {
    "ok": "within the tolerance {}",
    "noisy": "beyond the tolerance {} but within the noise",
    "improved": "improved beyond the tolerance {}",
}
"""The whole set's own verdict where a group decided the check."""


def group_lines(report: GateReport) -> list[str]:
    """The documents whose change is beyond their own tolerance, per metric
    (gate/comparison/groups.py): named whatever the verdict."""
    return [line for c in report.checks if (line := groups_line(c.metric, c.groups))]


def noise_lines(report: GateReport, limit: int = 10) -> list[str]:
    """The questions whose change float drift explains (not counted)."""
    if not report.noise:
        return []
    items = list(report.noise)
    shown = ", ".join(items[:limit])
    more = f", and {len(items) - limit} more" if len(items) > limit else ""
    return [
        f"changes float drift explains, not counted ({len(items)}: a near tie in "
        f"the baseline swapped within the embedder's ε): {shown}{more}"
    ]


def lost_line(report: GateReport, limit: int = 10) -> list[str]:
    """The questions lost (retrieved before, missed now, a real change)."""
    n = len(report.lost)
    if not n:
        return []
    shown = ", ".join(report.lost[:limit]) + (", ..." if n > limit else "")
    return [
        f"{n} of {report.n} question{'' if report.n == 1 else 's'} lost "
        f"(retrieved before, missed now): {shown}"
    ]


def _and(names: list[str]) -> str:
    return (
        " and ".join(names)
        if len(names) < 3
        else ", ".join(names[:-1]) + (f" and {names[-1]}")
    )


def _worst_rows(check: MetricCheck) -> list[str]:
    rows = [
        [clip(q.id, 32), f"{_pts(q.before)} → {_pts(q.after)}", clip(q.question, 90)]
        for q in check.worst
    ]
    width = [max(len(r[i]) for r in rows) for i in range(2)]
    return [f"  {r[0].ljust(width[0])}  {r[1].rjust(width[1])}  {r[2]}" for r in rows]


def changes_block(report: GateReport) -> list[str]:
    """``what changed since the baseline:`` and its lines (empty: nothing)."""
    if not report.changes.any:
        return []
    lines = ["what changed since the baseline:"]
    for line in report.changes.lines():
        lines += [f"  {part}" for part in line.splitlines()]
    return lines


def edited_sources(report: GateReport) -> list[str]:
    """Which queries that got worse come from edited or added documents."""
    edited = report.changes.edited_documents
    if not edited:
        return []
    worse: dict[str, str] = {}
    for check in report.regressed or report.checks:
        for qid, doc in check.worse:
            worse.setdefault(qid, doc)
    from_edited = {q: d for q, d in worse.items() if d in edited}
    if not worse:
        return []
    docs = ", ".join(sorted(set(from_edited.values())))
    if not from_edited:
        return [
            f"none of the {len(worse)} queries that got worse comes from an edited "
            "document"
            if len(worse) > 1
            else "the query that got worse does not come from an edited document"
        ]
    ids = list(from_edited)
    shown = ", ".join(ids[:8]) + (", ..." if len(ids) > 8 else "")
    return [
        (
            f"{len(from_edited)} of the {len(worse)} queries that got worse come "
            "from edited documents"
            if len(worse) > 1
            else "the query that got worse comes from an edited document"
        )
        + f" ({docs}): {shown}"
    ]


def format_failure(report: GateReport, *, test: str, path: str, command: str) -> str:
    """The text of a failed gate: what changed, verdict, table, worst queries,
    update command."""
    lines = [f"chunkeval baseline regression in {test}"]
    lines += [f"  {line}" for line in changes_block(report)]
    lines += [f"  {_verdict_line(c, report)}" for c in report.regressed]
    lines += [f"  {line}" for line in lost_line(report) + noise_lines(report)]
    lines += [f"  {line}" for line in group_lines(report)]
    lines += [f"  {line}" for line in edited_sources(report)]
    lines += [f"baseline: {path}", method_line(report)]
    lines += [line for line in [sampling_line(report)] if line]
    lines += ["", report_table(report)]
    for check in report.regressed:
        if check.by_group and len(check.by_group) > 1:
            parts = ", ".join(f"{g} {_pts(d, True)}" for g, d in check.by_group.items())
            lines += ["", f"{check.metric} delta by document (points): {parts}"]
    # Metrics whose worst queries read the same (often precision and IoU, which
    # both fall to 0 on a miss) share one block instead of repeating it.
    blocks: dict[tuple[str, ...], list[str]] = {}
    for check in report.regressed:
        if check.worst:
            changed = f"{check.changed} of {plural(check.n, 'query', 'queries')}"
            block = (changed, *_worst_rows(check))
            blocks.setdefault(block, []).append(check.metric)
    for (counts, *rows), metrics in blocks.items():
        lines += [
            "",
            f"queries whose {_and(metrics)} got worse the most ({counts} changed):",
            *rows,
        ]
    lines += [
        "",
        "If the new numbers are intended, update the baseline:",
        f"  {command}",
    ]
    return "\n".join(lines)


def format_incomplete(report: GateReport, *, test: str, path: str, command: str) -> str:
    """A comparison that cannot pass: too many questions left out, or a gated
    metric whose values this run could not use (a broken judge)."""
    lines = [f"chunkeval baseline comparison incomplete in {test}: {report.incomplete}"]
    lines += [f"  {line}" for line in changes_block(report)]
    compared = [c for c in report.checks if c.status != "not compared"]
    if compared:
        verdicts = "; ".join(f"{c.metric} {c.status}" for c in compared)
        on = plural(report.n, "question")
        lines.append(f"  on the {on} compared: {verdicts}")
    lines += [f"  {line}" for line in lost_line(report) + noise_lines(report)]
    rows = report.changes.not_compared_rows()
    if rows:
        lines += ["  baseline questions not compared:", *(f"    {r}" for r in rows)]
    lines += [
        f"baseline: {path}",
        "",
        "Every baseline question is compared or this check fails (a share may "
        "be allowed: chunkeval_max_left_out), as does a gated metric whose values "
        "cannot be used: fix the query set where an excerpt is gone (or the "
        "judge), then record the new baseline, whose diff shows the questions it "
        "drops:",
        f"  {command}",
    ]
    return "\n".join(lines)


def format_not_compared(report: GateReport, *, test: str, command: str) -> str:
    """Gated metrics the comparison left out: said, never silently passed."""
    names = ", ".join(f"{c.metric} ({c.reason})" for c in report.not_compared)
    return f"{test}: not compared: {names}. Record them with: {command}"


def format_improvement(report: GateReport, *, test: str, command: str) -> str:
    """A passing run that improved beyond noise: what improved, how to record it."""
    parts = "; ".join(_verdict_line(c, report) for c in report.improved)
    return f"{test}: {parts}. Record the new baseline with: {command}"


def format_noisy(report: GateReport, *, test: str) -> str:
    """A drop beyond the tolerance but within the measured noise: passes, named
    with its SE and the repeats."""
    parts = "; ".join(_verdict_line(c, report) for c in report.noisy)
    lines = [f"{test}: {parts}"]
    lines += [f"    {line}" for line in noise_lines(report)]
    return "\n".join(lines)


def _within(check: MetricCheck) -> str:
    if check.low is not None and check.high is not None:
        return f"{check.metric} {_pts(check.delta, True)} points, CI {_ci(check)}"
    before, after, _ = format_change(check.before, check.after, check.delta)
    return f"{check.metric} {before} -> {after}"


def format_pass(report: GateReport, *, test: str, command: str, note: str = "") -> str:
    """The summary text of a passing check ("" when there is nothing to say):
    what improved, what changed since the baseline and the paired verdict over
    it, metrics not compared, a former file name."""
    messages = []
    if report.noisy:
        messages.append(format_noisy(report, test=test))
    elif report.noise:
        messages.append(f"{test}: {noise_lines(report)[0]}")
    if report.improved:
        messages.append(format_improvement(report, test=test, command=command))
    if report.lost:
        messages.append(f"{test}: {lost_line(report)[0]}")
    messages += [f"{test}: {line}" for line in group_lines(report)]
    if report.changes.any:
        verdict = "; ".join(_within(c) for c in report.checks if c.status == "ok")
        head = f"{test}: passed against its baseline across changes"
        if verdict:
            head += f" ({verdict}: within tolerance)"
        lines = [head + ":"]
        lines += [f"  {line}" for line in changes_block(report)[1:]]
        if report.changes.unplaced:
            lines.append(
                "    fix or remove those questions in the query set, then record "
                f"the new baseline with: {command}"
            )
        elif not report.improved:
            lines.append(f"    record the new baseline with: {command}")
        messages.append("\n".join(lines))
    if report.not_compared:
        messages.append(format_not_compared(report, test=test, command=command))
    if note:
        messages.append(note)
    return "\n  ".join(messages)
