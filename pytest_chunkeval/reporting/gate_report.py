"""What the Markdown and HTML reports say about the baselines: each row's status
cells, the gated metrics against the baseline (baseline, now, change and its
confidence interval) and the "what changed" section (the questions that flipped).
"""

from __future__ import annotations

from collections.abc import Sequence

from pytest_chunkeval.core.metric_names import (
    column_digits,
    format_change,
    format_interval,
    header,
)
from pytest_chunkeval.core.metric_names import format_points as _pts
from pytest_chunkeval.gate.comparison.verdicts import (
    GatedMetric,
    groups_line,
    severity,
)
from pytest_chunkeval.reporting.escape import breakable, esc
from pytest_chunkeval.reporting.md_table import md_cell, md_table
from pytest_chunkeval.reporting.rows import ReportEntry, ResultRow
from pytest_chunkeval.util.text import plural

BASELINE_NOTE = (
    "Each gated metric as baseline → now: change [{ci}], in points. The change "
    "is paired (the mean of the per-question changes) and its confidence "
    "interval a bootstrap over the questions, simultaneous over the metrics. A "
    "metric regresses when its whole interval lies beyond its tolerance, and "
    "improves when it lies above zero."
)
CHANGES_MODE_NOTE = (
    "Each gated metric as baseline → now: change [{ci}], in points: the mean of "
    "the per-question changes, nothing set to 0 but float drift's. Noise widens "
    "the margin a drop must clear, never removes a change: a metric regresses "
    "when its change lies beyond its tolerance plus z standard errors of the "
    "noise repeats measured (SE 0 when neither run found noise), and is noisy "
    "when it lies beyond the tolerance only. The interval (a bootstrap over the "
    "questions) is the sampling view: information, never a reason to pass a drop."
)
MEAN_NOTE = (
    "Each gated metric as baseline → now: change, in points: the difference of "
    "the two means (mean mode: no interval). A metric regresses when the change "
    "lies beyond its tolerance."
)
CHANGES_NOTE = (
    "Questions retrieved before and missed now, and the reverse. A question is "
    "retrieved when some retrieved chunk holds part of its excerpt. A lost "
    "question is a change unless float drift explains it; the verdict "
    "is the gated metrics': a lost question can stay within tolerance, and a "
    "regression need not lose any."
)
GATE_CSS = """
p.verdict{font-size:16px;font-weight:600;margin:8px 0}
th.status,td.status,td.outcome{text-align:left}
.status-regressed{background:#ffebe9;color:#82071e;font-weight:600}
.status-missing,.status-not-compared{background:#fff8c5;color:#7d4e00;
font-weight:600}
.status-improved{background:#dafbe1;color:#116329}
td.outcome-failed{color:#82071e;font-weight:600}
table.gate td{white-space:normal}
table.gate th:nth-child(-n+3),table.gate td:nth-child(-n+3){text-align:left}
table.flips th,table.flips td{white-space:normal;text-align:left;vertical-align:top}
table.flips td.text{max-width:360px;color:#57606a}
"""


def gated_cell(g: GatedMetric, digits: int | None = None) -> str:
    """``100.00 → 86.70: -13.30 [-27.11, -2.53] REGRESSED``; ``100.00
    (unchanged)`` when no question moved. ``digits``: its column's precision
    (:func:`gate_digits`)."""
    if g.unchanged:
        return f"{format_change(g.before, g.before, 0.0, digits)[0]} (unchanged)"
    before, after, change = format_change(g.before, g.after, g.delta, digits)
    text = f"{before} → {after}: {change}"
    if g.low is not None and g.high is not None:
        text += f" {format_interval(g.low, g.high)}"
    if g.status != "ok":
        text += f" {g.verdict}"
    if g.se:
        text += f" (SE {_pts(g.se)})"
    return text


def _level(entries: Sequence[ReportEntry]) -> str:
    levels = {g.confidence for e in entries for g in e.gated}
    return f"{100 * levels.pop():g}% CI" if len(levels) == 1 else "CI"


def _note(entries: Sequence[ReportEntry]) -> str:
    """How the changes were compared: per question (noise measured), paired
    with intervals, or means only."""
    if any(g.se is not None for e in entries for g in e.gated):
        return CHANGES_MODE_NOTE.format(ci=_level(entries))
    if any(g.low is not None for e in entries for g in e.gated):
        return BASELINE_NOTE.format(ci=_level(entries))
    return MEAN_NOTE


def _tests(entry: ReportEntry) -> str:
    return entry.tests_cell()


def in_gate_table(entry: ReportEntry) -> bool:
    """Whether a row belongs to the "against the baseline" block: it was
    compared on gated metrics, or its verdict fails the gate (a per-question
    item's flip, a missing baseline, one not compared): every check shown."""
    return bool(entry.gated) or entry.row_verdict.fails


def gate_table(
    entries: Sequence[ReportEntry],
) -> tuple[list[str], list[tuple[ReportEntry, list[GatedMetric | None]]]]:
    """The gated metrics (in order of first use) and, per row of the block
    (:func:`in_gate_table`), its :class:`GatedMetric` of each (None where the
    row does not gate it)."""
    metrics = list(dict.fromkeys(g.metric for e in entries for g in e.gated))
    rows = []
    for entry in entries:
        if in_gate_table(entry):
            by_name = {g.metric: g for g in entry.gated}
            rows.append((entry, [by_name.get(m) for m in metrics]))
    return metrics, rows


def gate_digits(
    rows: Sequence[tuple[ReportEntry, list[GatedMetric | None]]],
) -> list[int]:
    """Per metric column of :func:`gate_table`, its one precision."""
    columns = zip(*(gated for _, gated in rows), strict=True)
    return [
        column_digits((g.before, g.after, g.delta) for g in column if g is not None)
        for column in columns
    ]


def changed_rows(entries: Sequence[ReportEntry]) -> list[tuple[str, str]]:
    """Per compared row where more than the metrics changed, or whose noise
    was measured: its tests and configuration, and what changed in one line
    (``changed since the baseline: chunker: a -> b; ...``), then the noise
    (:func:`noise_line`)."""
    out = []
    for entry in entries:
        if not entry.gated:
            continue
        who = f"{_tests(entry)} ({ResultRow.from_entry(entry).shown})"
        if entry.changes is not None and entry.changes.any:
            out.append((who, entry.changes.line()))
        noise = noise_line(entry.gated)
        if noise:
            out.append((who, noise))
        out += [
            (who, line)
            for g in entry.gated
            if (line := groups_line(g.metric, g.groups))
        ]
    return out


def noise_line(gated: Sequence[GatedMetric]) -> str:
    """The noise repeats measured, in one line: each metric's SE and the
    largest drop it could hide, and what measured it ("" without noise)."""
    noisy = [g for g in gated if g.se]
    if not noisy:
        return ""
    parts = ", ".join(
        f"{g.metric} SE {_pts(g.se)}"
        + (f" (a drop up to {_pts(-g.hides, True)} could hide)" if g.hides else "")
        for g in noisy
    )
    return f"noise measured: {parts}, in points" + (
        f"; {noisy[0].repeats}" if noisy[0].repeats else ""
    )


def _gate_headers(metrics: Sequence[str]) -> list[str]:
    return ["Test", "Configuration", "Verdict", *(header(m) for m in metrics)]


# -- Markdown ---------------------------------------------------------------------


def verdict_markdown(entry: ReportEntry) -> str:
    """The Baseline cell of the Markdown table: failing verdicts in bold."""
    text = entry.baseline_cell
    return f"**{text}**" if entry.row_verdict.fails else text


def _md_text(text: str) -> str:
    """A list item from untrusted text (ids, specs, document names) that shows
    as typed: no tag, entity or code span. Unlike a table cell, ``->`` and ``|``
    stay as they are (neither can start anything outside a table)."""
    text = " ".join(text.splitlines())
    text = text.replace("&", "&amp;").replace("<", "&lt;")
    return text.replace("\\", "\\\\").replace("`", "\\`")


def baseline_markdown(entries: Sequence[ReportEntry]) -> str:
    """The "Against the baseline" section ("" when no row was compared): one
    line per compared row, one column per gated metric, regressions in bold."""
    metrics, rows = gate_table(entries)
    if not rows:
        return ""
    body = []
    digits = gate_digits(rows)
    for entry, gated in rows:
        cells = [
            _tests(entry),
            ResultRow.from_entry(entry).shown,
            verdict_markdown(entry),
        ]
        for g, places in zip(gated, digits, strict=True):
            text = "-" if g is None else gated_cell(g, places)
            regressed = g is not None and g.status == "regressed"
            cells.append(f"**{text}**" if regressed else text)
        body.append(cells)
    table = md_table(_gate_headers(metrics), body, 3)
    note = _note(entries)
    # What changed comes first, then the verdict on it (issue 13).
    changed = "".join(
        f"- {_md_text(who)}: {_md_text(line)}\n" for who, line in changed_rows(entries)
    )
    changed += "\n" if changed else ""
    return f"### Against the baseline\n\n{changed}{note}\n\n{table}\n"


def _counts(entry: ReportEntry) -> str:
    f = entry.flips
    assert f is not None
    return (
        f"{f.lost_count} of {plural(f.compared, 'question')} retrieved before and "
        "missed now, "
        f"{f.gained_count} missed before and retrieved now"
    )


def _flip_rows(entry: ReportEntry) -> list[list[str]]:
    f = entry.flips
    assert f is not None
    rows = []
    for kind, flips, count in (
        ("lost", f.lost, f.lost_count),
        ("gained", f.gained, f.gained_count),
    ):
        for flip in flips:
            rows.append(
                [
                    kind,
                    f"{flip.question} ({flip.id}, {flip.doc_id})",
                    flip.excerpt or "-",
                    flip.shown or "-",
                ]
            )
        if count > len(flips):
            rows.append([kind, f"... and {count - len(flips)} more", "", ""])
    return rows


FLIP_HEADERS = ["Change", "Question", "Excerpt", "Retrieved now"]
"""The last column: the top chunk (``#1: …``) of a question lost, the chunk
holding the excerpt (``#3, holding the excerpt: …``) of one gained."""


def changes_markdown(entries: Sequence[ReportEntry]) -> str:
    """The "What changed" section ("" when no row was compared)."""
    compared = [e for e in entries if e.flips is not None]
    if not compared:
        return ""
    parts = ["### What changed", "", CHANGES_NOTE, ""]
    flipped = [e for e in compared if e.flips]
    if not flipped:
        parts += ["No question flipped.", ""]
    for entry in flipped:
        title = f"{_tests(entry)}: {_counts(entry)}"
        rows = _flip_rows(entry)
        parts += [f"**{md_cell(title)}**", "", md_table(FLIP_HEADERS, rows, 4), ""]
    return "\n".join(parts)


# -- HTML -------------------------------------------------------------------------


def status_cells_html(entry: ReportEntry) -> list[str]:
    """The Outcome and Baseline cells of a results row (``data-v`` sorts the
    worst first)."""
    outcome_class = (
        ' class="outcome outcome-failed"'
        if entry.outcome == "failed"
        else ' class="outcome"'
    )
    rank = severity(entry.verdict, entry.outcome)
    slug = entry.verdict.replace(" ", "-")
    status_class = f"status status-{slug}" if entry.verdict else "status"
    return [
        f"<td{outcome_class}>{esc(entry.outcome_cell)}</td>",
        f'<td class="{status_class}" data-v="{rank}">{esc(entry.baseline_cell)}</td>',
    ]


def _html_table(headers: Sequence[str], rows: Sequence[str], cls: str = "") -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    return (
        f'<div class="table-wrap"><table class="{cls}"><thead><tr>{head}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def baseline_html(entries: Sequence[ReportEntry]) -> str:
    """The "Against the baseline" section ("" when no row was compared)."""
    metrics, rows = gate_table(entries)
    if not rows:
        return ""
    lines = []
    digits = gate_digits(rows)
    for entry, gated in rows:
        tds = [
            f"<td>{breakable(_tests(entry))}</td>",
            f"<td>{breakable(ResultRow.from_entry(entry).shown)}</td>",
            status_cells_html(entry)[1],
        ]
        for g, places in zip(gated, digits, strict=True):
            if g is None:
                tds.append("<td>-</td>")
                continue
            slug = "" if g.status == "ok" else g.status.replace(" ", "-")
            cls = f' class="status-{slug}"' if slug else ""
            tds.append(f"<td{cls}>{esc(gated_cell(g, places))}</td>")
        lines.append("<tr>" + "".join(tds) + "</tr>")
    note = _note(entries)
    items = "".join(
        f"<li>{breakable(who)}: {esc(line)}</li>" for who, line in changed_rows(entries)
    )
    changed = f'<ul class="changed">{items}</ul>' if items else ""
    return (
        f'<section id="baseline"><h2>Against the baseline</h2>{changed}'
        f'<p class="note">{esc(note)}</p>'
        f"{_html_table(_gate_headers(metrics), lines, 'gate')}</section>"
    )


def changes_html(entries: Sequence[ReportEntry]) -> str:
    """The "What changed" section ("" when no row was compared)."""
    compared = [e for e in entries if e.flips is not None]
    if not compared:
        return ""
    parts = [
        '<section id="changes"><h2>What changed</h2>',
        f'<p class="note">{esc(CHANGES_NOTE)}</p>',
    ]
    flipped = [e for e in compared if e.flips]
    if not flipped:
        parts.append("<p>No question flipped.</p>")
    for entry in flipped:
        rows = []
        for kind, question, excerpt, instead in _flip_rows(entry):
            rows.append(
                f'<tr class="flip-{kind}"><td>{esc(kind)}</td>'
                f"<td>{esc(question)}</td>"
                f'<td class="text">{esc(excerpt)}</td>'
                f'<td class="text">{esc(instead)}</td></tr>'
            )
        parts += [
            f"<h3>{breakable(_tests(entry))}</h3>",
            f'<p class="note">{esc(_counts(entry))}</p>',
            _html_table(FLIP_HEADERS, rows, "flips"),
        ]
    parts.append("</section>")
    return "".join(parts)
