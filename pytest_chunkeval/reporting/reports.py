"""Session reports: JSON, a Markdown table, and one self-contained HTML page.

Everything here is text from plain data: results in their JSON form
(``EvalResult.to_json``, what xdist workers send) and history records (see
``history.py``). The HTML page draws its plots as inline SVG built here, so it needs
no network, no CDN and no JavaScript to show them; a small inline script only makes
the table sortable and marks the page as drawn (``#chunkeval-status``) for tests.
"""

from __future__ import annotations

import html
import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_chunkeval.core.metrics import METRICS
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.reporting.history import append_lines, commit_key, commits
from pytest_chunkeval.reporting.table import HEADERS

REPORT_SCHEMA = 1
GITHUB_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
TABLE_METRICS = ("recall", "precision", "iou", "f1", "precision_omega")
BAR_METRICS = ("recall", "iou")
PALETTE = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


@dataclass(frozen=True)
class ReportEntry:
    """One result of the session (its JSON form) and the tests that produced it."""

    result: Mapping[str, Any]
    nodeids: Sequence[str] = ()

    @classmethod
    def of(
        cls, result: EvalResult, nodeids: Sequence[str] = (), *, details: bool = False
    ) -> ReportEntry:
        return cls(result.to_json(details=details), tuple(nodeids))


@dataclass(frozen=True)
class _Row:
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

    @classmethod
    def from_entry(cls, entry: ReportEntry) -> _Row:
        result = EvalResult.from_json(dict(entry.result))
        return cls(
            label=series_label(result.describe(), result.config),
            chunker=str(result.config.get("chunker", result.label)),
            k=str(result.config.get("k", "")),
            unit=str(result.config.get("unit", "")),
            tests=tuple(entry.nodeids),
            means={m: _num(s.mean) for m, s in result.metrics.items()},
            stds={m: _num(s.std) for m, s in result.metrics.items()},
            groups={
                g: {m: _num(s.mean) for m, s in stats.items()}
                for g, stats in result.groups.items()
            },
            chunk_size=_num(result.chunks.get("mean_units")),
            n=max((s.n for s in result.metrics.values()), default=0),
        )

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> _Row:
        config = record.get("config") or {}
        metrics = record.get("metrics") or {}
        return cls(
            label=series_label(
                str(record.get("configuration") or record.get("label", "?")), config
            ),
            chunker=str(config.get("chunker", record.get("label", "?"))),
            k=str(config.get("k", "")),
            unit=str(config.get("unit", "")),
            tests=(str(record["test"]),) if record.get("test") else (),
            means={m: _num(v.get("mean")) for m, v in metrics.items()},
            stds={m: _num(v.get("std")) for m, v in metrics.items()},
            groups=record.get("groups") or {},
            chunk_size=_num((record.get("chunks") or {}).get("mean_units")),
            n=int(record.get("n") or 0),
            extra={"commit": commit_key(record)},
        )


def series_label(configuration: str, config: Mapping[str, Any]) -> str:
    """One series per configuration AND dataset: the same chunker measured on two
    corpora must not become one line of the history plots."""
    corpus = config.get("corpus")
    return f"{configuration} on {corpus}" if corpus else configuration


def _num(value: Any) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) else value


def _pct(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{100 * value:.{digits}f}"


def _mean_std(row: _Row, metric: str) -> str:
    mean, std = row.means.get(metric), row.stds.get(metric)
    if mean is None:
        return "-"
    return _pct(mean) if std is None else f"{_pct(mean)} ± {_pct(std)}"


def _chunk_cell(row: _Row) -> str:
    if row.chunk_size is None:
        return "-"
    return f"{row.chunk_size:.0f} {'tok' if row.unit == 'token' else row.unit}"


# ------------------------------------------------------------------------ JSON


def json_report(entries: Iterable[ReportEntry]) -> str:
    """Every result of a session: ``{"chunkeval_report": 1, "results": [{"tests",
    "result"}]}``; each ``result`` loads with ``EvalResult.from_json``."""
    payload = {
        "chunkeval_report": REPORT_SCHEMA,
        "results": [
            {"tests": list(e.nodeids), "result": dict(e.result)} for e in entries
        ],
    }
    return json.dumps(payload, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def read_json_report(path: str | os.PathLike[str]) -> list[ReportEntry]:
    """The entries of a file written from :func:`json_report`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"results file {path} does not exist") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"results file {path}: invalid JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("chunkeval_report") != REPORT_SCHEMA:
        raise ValueError(
            f"results file {path} is not a chunkeval JSON report "
            f"(--chunkeval-json) of schema {REPORT_SCHEMA}"
        )
    return [
        ReportEntry(item["result"], tuple(item.get("tests", [])))
        for item in data.get("results", [])
    ]


# -------------------------------------------------------------------- Markdown


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = [
        "| " + " | ".join(_md_cell(h) for h in headers) + " |",
        "|" + "|".join(":---" if i < 2 else "---:" for i in range(len(headers))) + "|",
    ]
    lines += ["| " + " | ".join(_md_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def _result_rows(rows: Sequence[_Row]) -> tuple[list[str], list[list[str]]]:
    headers = [
        "Test",
        "Configuration",
        *(HEADERS[m] for m in TABLE_METRICS),
        "Chunk size",
        "Queries",
    ]
    body = [
        [
            _tests_cell(r.tests),
            r.label,
            *(_mean_std(r, m) for m in TABLE_METRICS),
            _chunk_cell(r),
            str(r.n),
        ]
        for r in rows
    ]
    return headers, body


def _tests_cell(tests: Sequence[str]) -> str:
    if not tests:
        return "-"
    return tests[0] + (f" (+{len(tests) - 1})" if len(tests) > 1 else "")


def markdown_report(
    entries: Iterable[ReportEntry], *, title: str = "chunkeval results"
) -> str:
    """A Markdown table of the session's results (percent, mean ± std)."""
    rows = [_Row.from_entry(e) for e in entries]
    headers, body = _result_rows(rows)
    return f"## {title}\n\n{_md_table(headers, body)}\n"


def history_markdown(
    records: Sequence[Mapping[str, Any]], *, title: str = "chunkeval history"
) -> str:
    """The latest commit's numbers per configuration, with the change since the
    previous commit that has the same configuration."""
    latest, previous = _latest_two(records)
    headers = ["Configuration", "Commit", *(HEADERS[m] for m in TABLE_METRICS)]
    body = []
    for label, row in latest.items():
        before = previous.get(label)
        cells = [label, row.extra.get("commit", "")]
        for m in TABLE_METRICS:
            now = row.means.get(m)
            cell = _pct(now)
            old = before.means.get(m) if before else None
            if now is not None and old is not None:
                cell += f" ({100 * (now - old):+.1f})"
            cells.append(cell)
        body.append(cells)
    n_commits = len(commits(records))
    note = (
        f"{len(records)} records over {n_commits} commit(s); in parentheses: the "
        "change in points since the previous commit."
    )
    return f"## {title}\n\n{note}\n\n{_md_table(headers, body)}\n"


def _latest_two(
    records: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, _Row], dict[str, _Row]]:
    """Per configuration: its row at its latest commit, and at the commit before."""
    by_label: dict[str, dict[str, _Row]] = {}
    for record in records:
        row = _Row.from_record(record)
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


# ------------------------------------------------------------------------ SVG


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _nice_ceiling(value: float) -> float:
    """The smallest of 1, 2, 2.5, 5 times a power of ten that is >= value."""
    if value <= 0:
        return 1.0
    power = 10.0 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= value * (1 - 1e-9):
            return float(step * power)
    return 10.0 * power  # pragma: no cover


def _ticks(top: float, count: int = 5) -> list[float]:
    return [top * i / count for i in range(count + 1)]


def _fmt_tick(value: float) -> str:
    return f"{value:.3g}"


class _Frame:
    """A plot area inside an SVG viewBox, mapping data (in percent) to pixels."""

    def __init__(
        self,
        width: int,
        height: int,
        *,
        x_top: float = 1.0,
        y_top: float = 100.0,
        left: int = 56,
        right: int = 16,
        top: int = 30,
        bottom: int = 48,
    ) -> None:
        self.width, self.height = width, height
        self.left, self.right, self.top, self.bottom = left, right, top, bottom
        self.x_top, self.y_top = x_top, y_top

    @property
    def inner_width(self) -> float:
        return self.width - self.left - self.right

    @property
    def inner_height(self) -> float:
        return self.height - self.top - self.bottom

    def x(self, value: float) -> float:
        return self.left + self.inner_width * value / self.x_top

    def y(self, value: float) -> float:
        return self.top + self.inner_height * (1 - value / self.y_top)

    def open(self, title: str, kind: str) -> list[str]:
        return [
            f'<svg class="plot plot-{kind}" viewBox="0 0 {self.width} {self.height}" '
            f'role="img" aria-label="{_esc(title)}">',
            f'<text class="title" x="{self.left}" y="18">{_esc(title)}</text>',
        ]

    def y_axis(self, label: str) -> list[str]:
        out = []
        for tick in _ticks(self.y_top):
            y = self.y(tick)
            out.append(
                f'<line class="grid" x1="{self.left}" x2="{self.width - self.right}" '
                f'y1="{y:.1f}" y2="{y:.1f}"/>'
            )
            out.append(
                f'<text class="tick" x="{self.left - 6}" y="{y + 4:.1f}" '
                f'text-anchor="end">{_fmt_tick(tick)}</text>'
            )
        mid = self.top + self.inner_height / 2
        out.append(
            f'<text class="axis" transform="translate(14 {mid:.1f}) rotate(-90)" '
            f'text-anchor="middle">{_esc(label)}</text>'
        )
        return out

    def x_axis_numeric(self, label: str) -> list[str]:
        out = []
        base = self.height - self.bottom
        for tick in _ticks(self.x_top):
            x = self.x(tick)
            out.append(
                f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{self.top}" '
                f'y2="{base}"/>'
            )
            out.append(
                f'<text class="tick" x="{x:.1f}" y="{base + 16}" '
                f'text-anchor="middle">{_fmt_tick(tick)}</text>'
            )
        out.append(self._x_label(label))
        return out

    def _x_label(self, label: str) -> str:
        x = self.left + self.inner_width / 2
        return (
            f'<text class="axis" x="{x:.1f}" y="{self.height - 6}" '
            f'text-anchor="middle">{_esc(label)}</text>'
        )

    def baseline(self) -> str:
        y = self.height - self.bottom
        return (
            f'<line class="frame" x1="{self.left}" x2="{self.width - self.right}" '
            f'y1="{y}" y2="{y}"/>'
        )


def _colors(labels: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for label in labels:
        out.setdefault(label, PALETTE[len(out) % len(PALETTE)])
    return out


def _legend(colors: Mapping[str, str]) -> str:
    items = "".join(
        f'<li><span class="swatch" style="background:{c}"></span>{_esc(label)}</li>'
        for label, c in colors.items()
    )
    return f'<ul class="legend">{items}</ul>'


def _top(values: Iterable[float | None]) -> float:
    finite = [v for v in values if v is not None]
    # metrics live in [0, 100] %: headroom above the top bar, never past 100
    return min(100.0, _nice_ceiling(100 * max(finite, default=0.0) * 1.05 or 1.0))


def bars_svg(rows: Sequence[_Row], metric: str, colors: Mapping[str, str]) -> str:
    """Grouped bars: one group per corpus, one bar per configuration."""
    groups = sorted({g for r in rows for g in r.groups})
    frame = _Frame(
        880,
        300,
        y_top=_top(r.groups.get(g, {}).get(metric) for r in rows for g in groups),
    )
    title = f"{HEADERS.get(metric, metric)} per corpus (%)"
    out = frame.open(title, "bars") + frame.y_axis(HEADERS.get(metric, metric) + " %")
    band = frame.inner_width / max(len(groups), 1)
    bar = band * 0.8 / max(len(rows), 1)
    base = frame.y(0)
    for gi, group in enumerate(groups):
        x0 = frame.left + gi * band + band * 0.1
        for ri, row in enumerate(rows):
            value = row.groups.get(group, {}).get(metric)
            if value is None:
                continue
            y = frame.y(100 * value)
            out.append(
                f'<rect class="mark" x="{x0 + ri * bar:.1f}" y="{y:.1f}" '
                f'width="{max(bar - 1, 1):.1f}" height="{max(base - y, 0):.1f}" '
                f'fill="{colors[row.label]}"><title>{_esc(row.label)} — '
                f"{_esc(group)}: {_pct(value)}%</title></rect>"
            )
        out.append(
            f'<text class="tick" x="{frame.left + (gi + 0.5) * band:.1f}" '
            f'y="{frame.height - frame.bottom + 16}" text-anchor="middle">'
            f"{_esc(_short_label(group))}</text>"
        )
    out += [frame.baseline(), "</svg>"]
    return "\n".join(out)


def _short_label(text: str, width: int = 22) -> str:
    stem = text.rsplit(".", 1)[0] if "." in text else text
    return stem if len(stem) <= width else stem[: width - 1] + "…"


def scatter_svg(rows: Sequence[_Row], x_metric: str, colors: Mapping[str, str]) -> str:
    """Recall (y) against another metric (x), one labelled point per configuration."""
    points = [
        (r, r.means.get(x_metric), r.means.get("recall"))
        for r in rows
        if r.means.get(x_metric) is not None and r.means.get("recall") is not None
    ]
    frame = _Frame(
        430,
        320,
        x_top=_top(p[1] for p in points),
        y_top=_top(p[2] for p in points),
    )
    x_name = HEADERS.get(x_metric, x_metric)
    out = frame.open(f"Recall vs {x_name} (%)", "scatter")
    out += frame.y_axis("Recall %") + frame.x_axis_numeric(f"{x_name} %")
    for row, xv, yv in points:
        assert xv is not None
        assert yv is not None
        cx, cy = frame.x(100 * xv), frame.y(100 * yv)
        out.append(
            f'<circle class="mark" cx="{cx:.1f}" cy="{cy:.1f}" r="6" '
            f'fill="{colors[row.label]}"><title>{_esc(row.label)}: recall '
            f"{_pct(yv)}%, {_esc(x_name)} {_pct(xv)}%</title></circle>"
        )
        out.append(
            f'<text class="point-label" x="{cx + 8:.1f}" y="{cy - 8:.1f}">'
            f"{_esc(_short_label(row.chunker, 28))}</text>"
        )
    out += [frame.baseline(), "</svg>"]
    return "\n".join(out)


def history_svg(
    records: Sequence[Mapping[str, Any]], metric: str, colors: Mapping[str, str]
) -> str:
    """One metric over commits (file order), one line per configuration."""
    keys = commits(records)
    index = {k: i for i, k in enumerate(keys)}
    series: dict[str, dict[int, tuple[float, Mapping[str, Any]]]] = {}
    for record in records:
        row = _Row.from_record(record)
        value = row.means.get(metric)
        if value is not None:
            series.setdefault(row.label, {})[index[commit_key(record)]] = (
                value,
                record,
            )
    frame = _Frame(
        430,
        260,
        x_top=max(len(keys) - 1, 1),
        y_top=_top(v for s in series.values() for v, _ in s.values()),
        bottom=62,
    )
    name = HEADERS.get(metric, metric)
    out = frame.open(f"{name} over commits (%)", "history") + frame.y_axis(name + " %")
    step = max(1, math.ceil(len(keys) / 12))  # at most ~12 commit labels
    base = frame.height - frame.bottom
    for i, key in enumerate(keys):
        if i % step == 0 or i == len(keys) - 1:
            x = _commit_x(frame, i, len(keys))
            out.append(
                f'<text class="tick" transform="translate({x + 4:.1f} {base + 14}) '
                f'rotate(-30)" text-anchor="end">{_esc(key)}</text>'
            )
    for label, points in series.items():
        color = colors.get(label, PALETTE[0])
        ordered = sorted(points.items())
        coords = [
            (_commit_x(frame, i, len(keys)), frame.y(100 * v)) for i, (v, _) in ordered
        ]
        if len(coords) > 1:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            out.append(
                f'<polyline class="line" points="{path}" fill="none" '
                f'stroke="{color}" stroke-width="2"/>'
            )
        for (x, y), (i, (value, record)) in zip(coords, ordered, strict=True):
            git = record.get("git") or {}
            when = str(record.get("timestamp", ""))[:19]
            out.append(
                f'<circle class="mark" cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{color}">'
                f"<title>{_esc(label)}\n{_esc(keys[i])} "
                f"{_esc(git.get('branch') or '')} {_esc(when)}: {_pct(value, 2)}%"
                "</title></circle>"
            )
    out += [frame.baseline(), "</svg>"]
    return "\n".join(out)


def _commit_x(frame: _Frame, i: int, count: int) -> float:
    if count == 1:
        return frame.left + frame.inner_width / 2
    return frame.x(i)


# ------------------------------------------------------------------------ HTML

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1b1f24;
margin:24px auto;max-width:1240px;padding:0 16px;background:#fff}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;
border-bottom:1px solid #d8dee4;padding-bottom:4px}
.meta,.note{color:#57606a}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums}
th,td{padding:4px 8px;border-bottom:1px solid #eaeef2;text-align:right;
white-space:nowrap}.table-wrap{overflow-x:auto}
td:nth-child(-n+2){white-space:normal;overflow-wrap:anywhere}
th:nth-child(-n+2),td:nth-child(-n+2){text-align:left}
th{cursor:pointer;background:#f6f8fa;user-select:none}
th.sorted-asc::after{content:" \\25B2"}th.sorted-desc::after{content:" \\25BC"}
td.test{max-width:320px}
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
  var status = document.createElement("div");
  status.id = "chunkeval-status";
  status.hidden = true;
  status.setAttribute("data-plots", String(plots.length));
  status.setAttribute("data-drawn", String(drawn));
  document.body.appendChild(status);
})();
"""


def _html_table(rows: Sequence[_Row]) -> str:
    headers, body = _result_rows(rows)
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    lines = []
    for row, cells in zip(rows, body, strict=True):
        sort_values = [
            None,
            None,
            *(row.means.get(m) for m in TABLE_METRICS),
            row.chunk_size,
            row.n,
        ]
        tds = []
        for i, (cell, value) in enumerate(zip(cells, sort_values, strict=True)):
            attrs = ' class="test"' if i == 0 else ""
            if i == 0 and row.tests:
                attrs += f' title="{_esc(chr(10).join(row.tests))}"'
            if value is not None:
                attrs += f' data-v="{value:.6g}"'
            elif i >= 2:
                attrs += ' data-v="NaN"'
            tds.append(f"<td{attrs}>{_esc(cell)}</td>")
        lines.append("<tr>" + "".join(tds) + "</tr>")
    return (
        f'<div class="table-wrap"><table class="sortable"><thead><tr>{head}</tr>'
        f"</thead><tbody>{''.join(lines)}</tbody></table></div>"
    )


def _figure(svg: str, legend: str = "", wide: bool = False) -> str:
    cls = ' class="wide"' if wide else ""
    return f"<figure{cls}>{svg}{legend}</figure>"


def html_report(
    entries: Iterable[ReportEntry] = (),
    history: Sequence[Mapping[str, Any]] = (),
    *,
    title: str = "chunkeval report",
    generated: datetime | None = None,
) -> str:
    """One self-contained HTML page: results table, per-corpus bars, recall vs
    IoU / precision, and each metric over commits (when ``history`` is given).

    Without ``entries``, the table and plots show each configuration's latest
    record in ``history``.
    """
    rows = [_Row.from_entry(e) for e in entries]
    source = "this session"
    if not rows and history:
        rows = list(_latest_two(history)[0].values())
        source = "the latest record of each configuration in the history"
    labels = [r.label for r in rows]
    labels += [_Row.from_record(r).label for r in history]
    colors = _colors(labels)
    when = (generated or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
        f'<p class="meta">Generated {_esc(when)} by pytest-chunkeval: '
        f"{len(rows)} configuration(s) from {_esc(source)}"
        + (
            f"; history of {len(history)} records over {len(commits(history))} "
            "commit(s)"
            if history
            else ""
        )
        + ". Metrics in percent (mean ± std over queries).</p>",
    ]
    if rows:
        row_colors = {r.label: colors[r.label] for r in rows}
        legend = _legend(row_colors)
        parts += [
            '<section id="results"><h2>Results</h2>',
            '<p class="note">Click a column header to sort.</p>',
            _html_table(rows),
            "</section>",
            '<section id="corpora"><h2>Per corpus</h2><div class="plots">',
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
    if history:
        history_colors = {
            label: colors[label]
            for label in dict.fromkeys(_Row.from_record(r).label for r in history)
        }
        parts += [
            '<section id="history"><h2>Over commits</h2>',
            '<p class="note">Commits in the order the history file recorded them; '
            "<code>+</code> marks a dirty work tree.</p>",
            _legend(history_colors),
            '<div class="plots">',
            *(
                _figure(history_svg(history, m, colors))
                for m in METRICS
                if any(_Row.from_record(r).means.get(m) is not None for r in history)
            ),
            "</div></section>",
        ]
    if not rows and not history:
        parts.append("<p>No results and no history to show.</p>")
    parts += [f"<script>{_JS}</script>", "</body></html>"]
    return "\n".join(parts) + "\n"
