"""The HTML report (``--chunkeval-html``): one self-contained file with a sortable
table and SVG charts."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.core.metric_names import format_percent
from pytest_chunkeval.core.metrics import METRICS
from pytest_chunkeval.engine.labels import unscored_text
from pytest_chunkeval.reporting.escape import breakable, esc
from pytest_chunkeval.reporting.explorer import (
    explorer_blob,
    explorer_css,
    explorer_section,
    with_baseline,
)
from pytest_chunkeval.reporting.gate_report import (
    GATE_CSS,
    baseline_html,
    changes_html,
    status_cells_html,
)
from pytest_chunkeval.reporting.history import commits, runs
from pytest_chunkeval.reporting.markdown import latest_two
from pytest_chunkeval.reporting.md_table import result_rows
from pytest_chunkeval.reporting.rows import ResultRow, table_metrics, worst_first
from pytest_chunkeval.reporting.svg import (
    BAR_METRICS,
    bars_svg,
    history_svg,
    legend_html,
    pareto_svg,
    scatter_svg,
    series_colors,
)

if TYPE_CHECKING:
    from pytest_chunkeval.reporting.rows import ReportEntry


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1f24;
margin:24px auto;max-width:1368px;padding:0 16px;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;
border-bottom:1px solid #d8dee4;padding-bottom:4px}
.meta,.note{color:#57606a}
table{border-collapse:collapse;width:100%;font-size:13px;
font-variant-numeric:tabular-nums}
th,td{padding:4px 6px;border-bottom:1px solid #eaeef2;text-align:right;
white-space:nowrap}.table-wrap{overflow-x:auto}
td:nth-child(-n+2){white-space:normal;overflow-wrap:break-word}
th:nth-child(-n+2),td:nth-child(-n+2){text-align:left}
th{cursor:pointer;background:#f6f8fa;user-select:none}
th.sorted-asc::after{content:" \\25B2"}th.sorted-desc::after{content:" \\25BC"}
td.test{max-width:300px}td:nth-child(2){min-width:15em}
th{white-space:normal}td .sd{display:block;font-size:11px;color:#57606a}
.plots{display:grid;gap:12px;
grid-template-columns:repeat(auto-fill,minmax(min(100%,420px),1fr))}
.plots figure{margin:0;min-width:0}.plots figure.wide{grid-column:1/-1}
svg.plot{width:100%;height:auto;background:#fff;border:1px solid #eaeef2}
svg .grid{stroke:#eaeef2;stroke-width:1}svg .frame{stroke:#57606a}
svg text{font-size:11px;fill:#57606a}svg text.title{font-size:13px;fill:#1b1f24;
font-weight:600}svg text.axis{font-size:12px}svg text.point-label{fill:#1b1f24}
.legend{list-style:none;padding:0;margin:4px 0;display:flex;flex-wrap:wrap;
gap:4px 14px;font-size:12px}
.swatch{display:inline-block;width:10px;height:10px;margin-right:5px;
border-radius:2px}
svg .front{fill:none;stroke:#57606a;stroke-width:1.5;stroke-dasharray:5 4}
svg circle.on-front{stroke:#1b1f24;stroke-width:1.5}
"""

_JS = """
(function () {
  "use strict";
  function key(cell) {
    var v = cell.getAttribute("data-v");
    return v === null ? cell.textContent : parseFloat(v);
  }
  document.querySelectorAll("table.sortable").forEach(function (table) {
    var heads = table.querySelectorAll("thead th");
    heads.forEach(function (th, col) {
      th.addEventListener("click", function () {
        var asc = !th.classList.contains("sorted-asc");
        heads.forEach(function (h) {
          h.classList.remove("sorted-asc", "sorted-desc");
        });
        th.classList.add(asc ? "sorted-asc" : "sorted-desc");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          var c = (typeof x === "number" && typeof y === "number")
            ? (isNaN(x) ? -1 : isNaN(y) ? 1 : x - y)
            : String(x).localeCompare(String(y));
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  var plots = document.querySelectorAll("svg.plot");
  var drawn = 0;
  plots.forEach(function (svg) {
    var marks = svg.querySelectorAll(".mark");
    var ok = marks.length > 0;
    marks.forEach(function (m) {
      var box = m.getBBox();
      if (!(box.width > 0 || box.height > 0)) { ok = false; }
    });
    if (ok) { drawn += 1; }
  });
  // point labels whose drawn boxes overlap another's (should be none)
  var overprints = 0;
  plots.forEach(function (svg) {
    var boxes = Array.prototype.map.call(
      svg.querySelectorAll("text.point-label"), function (t) { return t.getBBox(); });
    boxes.forEach(function (a, i) {
      boxes.slice(i + 1).forEach(function (b) {
        if (a.x < b.x + b.width && b.x < a.x + a.width &&
            a.y < b.y + b.height && b.y < a.y + a.height) { overprints += 1; }
      });
    });
  });
  var status = document.createElement("div");
  status.id = "chunkeval-status";
  status.hidden = true;
  status.setAttribute("data-plots", String(plots.length));
  status.setAttribute("data-drawn", String(drawn));
  status.setAttribute("data-overprints", String(overprints));
  document.body.appendChild(status);
})();
"""


def _html_table(rows: Sequence[ResultRow], entries: Sequence[ReportEntry] = ()) -> str:
    headers, body = result_rows(rows)
    for cells, entry in zip(body, entries, strict=False):
        cells[0] = entry.tests_cell()  # the failed tests named first
    status = any(e.outcome or e.verdict for e in entries)
    if status:
        headers[2:2] = ["Outcome", "Baseline"]
    head = "".join(
        f'<th class="status">{esc(h)}</th>'
        if status and i in (2, 3)
        else f"<th>{esc(h)}</th>"
        for i, h in enumerate(headers)
    )
    lines = []
    for i_row, (row, cells) in enumerate(zip(rows, body, strict=True)):
        sort_values = [
            None,
            None,
            *(row.means.get(m) for m in table_metrics(rows)),
            row.chunk_size,
            row.n,
        ]
        tds = []
        for i, (cell, value) in enumerate(zip(cells, sort_values, strict=True)):
            attrs = ' class="test"' if i == 0 else ""
            if i == 0 and row.tests:
                attrs += f' title="{esc(chr(10).join(row.tests))}"'
            if value is not None:
                attrs += f' data-v="{value:.6g}"'
            elif i >= 2:
                attrs += ' data-v="NaN"'
            shown = breakable(cell) if i < 2 else _stacked(cell)
            tds.append(f"<td{attrs}>{shown}</td>")
        if status:
            tds[2:2] = status_cells_html(entries[i_row])
        lines.append("<tr>" + "".join(tds) + "</tr>")
    return (
        f'<div class="table-wrap"><table class="sortable"><thead><tr>{head}</tr>'
        f"</thead><tbody>{''.join(lines)}</tbody></table></div>"
    )


def _stacked(cell: str) -> str:
    """A ``mean ± std`` cell as the mean over its spread (a narrow column: the
    table fits a 1400 px window without scrolling sideways)."""
    mean, sep, spread = cell.partition(" ± ")
    if not sep:
        return esc(cell)
    return f'{esc(mean)}<span class="sd">± {esc(spread)}</span>'


_LOSS_PARTS = (
    ("chunking", "Chunking (1 - ceiling)"),
    ("search", "Embedding + search (ceiling - recall)"),
    ("approximation", "Approximate index (exact - store)"),
)


def _loss_section(rows: Sequence[ResultRow]) -> str:
    """Where recall is lost, per configuration, in points of recall
    (docs/metrics.md)."""
    parts = [p for p in _LOSS_PARTS if any(r.loss.get(p[0]) is not None for r in rows)]
    head = "".join(
        f"<th>{esc(h)}</th>"
        for h in ["Configuration", "Recall", *(p[1] for p in parts)]
    )
    body = []
    for r in rows:
        cells = [r.label, format_percent(r.means.get("recall"))]
        cells += [format_percent(r.loss.get(key)) for key, _ in parts]
        body.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
    return (
        '<section id="loss"><h2>Where recall is lost</h2>'
        '<p class="note">Points of recall: what the chunking could not reach at '
        "this depth, what embedding and search missed of what it could, and for an "
        "approximate index what exact search on the same vectors found and it did "
        "not (signed).</p>"
        f'<div class="table-wrap"><table class="sortable"><thead><tr>{head}</tr>'
        f"</thead><tbody>{''.join(body)}</tbody></table></div></section>"
    )


def _explorer(
    entries: Sequence[ReportEntry], rows: Sequence[ResultRow], colors: Mapping[str, str]
) -> str:
    """The question explorer, for the entries that carry its data."""
    pieces: list[tuple[str, str, Mapping[str, Any]]] = []
    seen: dict[str, int] = {}
    for entry, row in zip(entries, rows, strict=True):
        if entry.explorer is None:
            continue
        # two rows may share a label (e.g. one callable in two tests): tell apart
        n = seen[row.label] = seen.get(row.label, 0) + 1
        label = row.shown if n == 1 else f"{row.shown} ({n})"
        piece = entry.explorer
        if (
            entry.flips is not None
        ):  # what changed since the baseline (gate/comparison/flips.py)
            flipped = entry.flips.lost + entry.flips.gained
            piece = with_baseline(piece, {f.id: f.before for f in flipped})
        pieces.append((label, colors[row.label], piece))
    return explorer_section(explorer_blob(pieces)) if pieces else ""


def _unscored(entries: Sequence[ReportEntry]) -> list[str]:
    """The questions no metric scored, named once (docs/formats.md)."""
    text = unscored_text(e.result for e in entries)
    return [f'<p class="note" id="unscored">{esc(text)}</p>'] if text else []


def _figure(svg: str, legend: str = "", wide: bool = False) -> str:
    cls = ' class="wide"' if wide else ""
    return f"<figure{cls}>{svg}{legend}</figure>"


def html_report(
    entries: Iterable[ReportEntry] = (),
    history: Sequence[Mapping[str, Any]] = (),
    *,
    title: str = "chunkeval report",
    generated: datetime | None = None,
    verdict: str = "",
    inspections: Sequence[Mapping[str, Any]] = (),
) -> str:
    """One self-contained HTML page: the run's one-line ``verdict``, results
    table (regressions first, with each row's test outcome and baseline status),
    the gated metrics against the baseline and the questions that flipped,
    per-corpus bars, recall vs IoU / precision, and each metric over commits
    (when ``history`` is given).

    Without ``entries``, the table and plots show each configuration's latest
    record in ``history``. ``inspections``: query-set inspections
    (``Inspection.to_json()``), each a section after the results.
    """
    entries = worst_first(list(entries))
    rows = [ResultRow.from_entry(e) for e in entries]
    source = "this session"
    if not rows and history:
        rows = list(latest_two(history)[0].values())
        source = "the latest record of each configuration in the history"
    labels = [r.label for r in rows]
    labels += [ResultRow.from_record(r).label for r in history]
    colors = series_colors(labels)
    when = (generated or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    shown = f"{len(rows)} configuration(s) from {esc(source)}"
    parts = _head(title, verdict, when, shown, history)
    if rows:
        parts += _result_sections(rows, entries, colors)
    if history:
        parts += _history_section(history, colors)
    if inspections:
        from pytest_chunkeval.reporting.inspection import inspection_html

        parts += [inspection_html(i) for i in inspections]
    if not rows and not history and not inspections:
        parts.append("<p>No results and no history to show.</p>")
    parts += [f"<script>{_JS}</script>", "</body></html>"]
    return "\n".join(parts) + "\n"


def _head(
    title: str, verdict: str, when: str, shown: str, history: Sequence[Any]
) -> list[str]:
    """The page's head, its title and verdict, and the line that says what it
    shows (``shown``, HTML) and from how much history."""
    return [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{esc(title)}</title>",
        f"<style>{_CSS}{GATE_CSS}{explorer_css()}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        *([f'<p class="verdict" id="verdict">{esc(verdict)}</p>'] if verdict else []),
        f'<p class="meta">Generated {esc(when)} by pytest-chunkeval: {shown}'
        + (
            f"; history of {len(history)} records from {len(runs(history))} run(s) "
            f"of {len(commits(history))} commit(s)"
            if history
            else ""
        )
        + ". Metrics in percent (mean ± std over queries).</p>",
    ]


def _result_sections(
    rows: Sequence[ResultRow],
    entries: Sequence[ReportEntry],
    colors: Mapping[str, str],
) -> list[str]:
    """The results table, the baseline's verdicts and flips, the plots of the
    configurations and (from a session) the explorer of their questions."""
    row_colors = {r.label: colors[r.label] for r in rows}
    legend = legend_html(row_colors)
    parts = [
        '<section id="results"><h2>Results</h2>',
        '<p class="note">Click a column header to sort.</p>',
        _html_table(rows, entries),
        *_unscored(entries),
        "</section>",
        baseline_html(entries),
        changes_html(entries),
        '<section id="corpora"><h2>Per document</h2><div class="plots">',
        *(
            _figure(bars_svg(rows, m, colors), legend, wide=True)
            for m in BAR_METRICS
            if any(g.get(m) is not None for r in rows for g in r.groups.values())
        ),
        "</div></section>",
        '<section id="tradeoffs"><h2>Recall against IoU and precision</h2>',
        '<div class="plots">',
        _figure(scatter_svg(rows, "iou", colors), legend),
        _figure(scatter_svg(rows, "precision", colors), legend),
        "</div></section>",
    ]
    if sum(r.sent is not None for r in rows) > 1:
        parts += [
            '<section id="budget"><h2>Recall against context sent</h2>',
            '<p class="note">Each configuration at the units it sends the LLM '
            "per query. Points on the dashed front are the ones no other "
            "configuration beats with less context and more recall; compare "
            "chunk sizes at an equal budget, not at an equal k.</p>",
            '<div class="plots">',
            _figure(pareto_svg(rows, colors), legend, wide=True),
            "</div></section>",
        ]
    if any(r.loss for r in rows):
        parts.append(_loss_section(rows))
    if entries:  # rows from the history have no questions to explore
        parts.append(_explorer(entries, rows, colors))
    return parts


def _history_section(
    history: Sequence[Mapping[str, Any]], colors: Mapping[str, str]
) -> list[str]:
    """Each metric over the commits the history recorded."""
    history_colors = {
        label: colors[label]
        for label in dict.fromkeys(ResultRow.from_record(r).label for r in history)
    }
    return [
        '<section id="history"><h2>Over commits</h2>',
        '<p class="note">Commits in the order the history file recorded them; '
        "<code>+</code> marks a dirty work tree.</p>",
        legend_html(history_colors),
        '<div class="plots">',
        *(
            _figure(history_svg(history, m, colors))
            for m in METRICS
            if any(ResultRow.from_record(r).means.get(m) is not None for r in history)
        ),
        "</div></section>",
    ]
