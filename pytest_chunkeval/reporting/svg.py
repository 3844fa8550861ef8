"""Inline SVG charts for the HTML report: bars per metric, a metric against chunk
size, and the history over commits. No plotting library."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pytest_chunkeval.core.locate import clip
from pytest_chunkeval.core.metric_names import format_percent as pct
from pytest_chunkeval.core.metric_names import header
from pytest_chunkeval.reporting.colors import config_color, config_colors
from pytest_chunkeval.reporting.escape import esc
from pytest_chunkeval.reporting.history import run_key, runs
from pytest_chunkeval.reporting.plot_frame import (
    LABEL_CHAR_WIDTH,
    Frame,
    label_boxes,
    nice_ceiling,
)
from pytest_chunkeval.reporting.rows import ResultRow

BAR_METRICS = ("recall", "iou")


def series_colors(labels: Iterable[str]) -> dict[str, str]:
    """A colour per configuration label (reporting/colors.py)."""
    return config_colors(labels)


def legend_html(colors: Mapping[str, str]) -> str:
    items = "".join(
        f'<li><span class="swatch" style="background:{c}"></span>{esc(label)}</li>'
        for label, c in colors.items()
    )
    return f'<ul class="legend">{items}</ul>'


def _top(values: Iterable[float | None]) -> float:
    finite = [v for v in values if v is not None]
    # metrics live in [0, 100] %: headroom above the top bar, never past 100
    return min(100.0, nice_ceiling(100 * max(finite, default=0.0) * 1.05 or 1.0))


def bars_svg(rows: Sequence[ResultRow], metric: str, colors: Mapping[str, str]) -> str:
    """Grouped bars: one group per document, one bar per configuration."""
    groups = sorted({g for r in rows for g in r.groups})
    frame = Frame(
        880,
        300,
        y_top=_top(r.groups.get(g, {}).get(metric) for r in rows for g in groups),
    )
    title = f"{header(metric)} per document (%)"
    out = frame.open(title, "bars") + frame.y_axis(header(metric) + " %")
    band = frame.inner_width / max(len(groups), 1)
    fit = max(3, min(22, int((band - 4) / LABEL_CHAR_WIDTH)))
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
                f'fill="{colors[row.label]}"><title>{esc(row.label)} — '
                f"{esc(group)}: {pct(value)}%</title></rect>"
            )
        # A name as wide as its band at most, so ten documents' names do not
        # run into each other; the whole name shows on hover.
        out.append(
            f'<text class="tick" x="{frame.left + (gi + 0.5) * band:.1f}" '
            f'y="{frame.height - frame.bottom + 16}" text-anchor="middle">'
            f"<title>{esc(group)}</title>"
            f"{esc(_short_label(group, fit))}</text>"
        )
    out += [frame.baseline(), "</svg>"]
    return "\n".join(out)


def _point_labels(
    frame: Frame, centres: Sequence[tuple[float, float]], texts: Sequence[str]
) -> list[str]:
    out = []
    places = label_boxes(frame, centres, texts)
    for (box, anchor), text in zip(places, texts, strict=True):
        x = {"start": box[0], "end": box[2], "middle": (box[0] + box[2]) / 2}[anchor]
        out.append(
            f'<text class="point-label" x="{x:.1f}" y="{box[3] - 2:.1f}" '
            f'text-anchor="{anchor}">{esc(text)}</text>'
        )
    return out


def _short_label(text: str, width: int = 22) -> str:
    stem = text.rsplit(".", 1)[0] if "." in text else text
    return clip(stem, width)


def point_texts(rows: Sequence[ResultRow]) -> list[str]:
    """A plot label per row: its chunker, and where two rows share one, the words
    of their configurations that tell them apart (``recursive:200:0 bm25``)."""
    texts = [_short_label(row.chunker, 28) for row in rows]
    for text in set(texts):
        alike = [i for i, t in enumerate(texts) if t == text]
        if len(alike) < 2:
            continue
        words = [rows[i].label.split() for i in alike]
        common = set.intersection(*(set(w) for w in words))
        for i, own in zip(alike, words, strict=True):
            apart = " ".join(w for w in own if w not in common)
            texts[i] = clip(f"{_short_label(rows[i].chunker, 20)} {apart}".strip(), 36)
    return texts


def scatter_svg(
    rows: Sequence[ResultRow], x_metric: str, colors: Mapping[str, str]
) -> str:
    """Recall (y) against another metric (x), one labelled point per configuration."""
    points = [
        (r, r.means.get(x_metric), r.means.get("recall"))
        for r in rows
        if r.means.get(x_metric) is not None and r.means.get("recall") is not None
    ]
    frame = Frame(
        430,
        320,
        x_top=_top(p[1] for p in points),
        y_top=_top(p[2] for p in points),
    )
    x_name = header(x_metric)
    out = frame.open(f"Recall vs {x_name} (%)", "scatter")
    out += frame.y_axis("Recall %") + frame.x_axis_numeric(f"{x_name} %")
    centres = []
    for row, xv, yv in points:
        assert xv is not None
        assert yv is not None
        cx, cy = frame.x(100 * xv), frame.y(100 * yv)
        centres.append((cx, cy))
        out.append(
            f'<circle class="mark" cx="{cx:.1f}" cy="{cy:.1f}" r="6" '
            f'fill="{colors[row.label]}"><title>{esc(row.label)}: recall '
            f"{pct(yv)}%, {esc(x_name)} {pct(xv)}%</title></circle>"
        )
    texts = point_texts([row for row, _, _ in points])
    out += _point_labels(frame, centres, texts)
    out += [frame.baseline(), "</svg>"]
    return "\n".join(out)


def history_svg(
    records: Sequence[Mapping[str, Any]], metric: str, colors: Mapping[str, str]
) -> str:
    """One metric over runs, one line per configuration: every run is a point,
    the runs of one commit side by side under one commit label."""
    keys = runs(records)
    index = {k: i for i, k in enumerate(keys)}
    series: dict[str, dict[int, tuple[float, Mapping[str, Any]]]] = {}
    for record in records:
        row = ResultRow.from_record(record)
        value = row.means.get(metric)
        if value is not None:
            series.setdefault(row.label, {})[index[run_key(record)]] = (
                value,
                record,
            )
    frame = Frame(
        430,
        260,
        x_top=max(len(keys) - 1, 1),
        y_top=_top(v for s in series.values() for v, _ in s.values()),
        bottom=62,
    )
    name = header(metric)
    out = frame.open(f"{name} over commits (%)", "history") + frame.y_axis(name + " %")
    # a commit label under the first run of each commit (at most ~12 labels)
    firsts = [i for i, key in enumerate(keys) if i == 0 or keys[i - 1][0] != key[0]]
    step = max(1, math.ceil(len(firsts) / 12))
    base = frame.height - frame.bottom
    for n, i in enumerate(firsts):
        if n % step == 0 or n == len(firsts) - 1:
            x = _commit_x(frame, i, len(keys))
            out.append(
                f'<text class="tick" transform="translate({x + 4:.1f} {base + 14}) '
                f'rotate(-30)" text-anchor="end">{esc(keys[i][0])}</text>'
            )
    placed = _dodged(
        {
            label: [
                (i, _commit_x(frame, i, len(keys)), frame.y(100 * v))
                for i, (v, _) in sorted(points.items())
            ]
            for label, points in series.items()
        }
    )
    for label, points in series.items():
        color = colors.get(label) or config_color(label)
        ordered = sorted(points.items())
        coords = placed[label]
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
                f"<title>{esc(label)}\n{esc(keys[i])} "
                f"{esc(git.get('branch') or '')} {esc(when)}: {pct(value, 2)}%"
                "</title></circle>"
            )
    out += [frame.baseline(), "</svg>"]
    return "\n".join(out)


DODGE = 4.0  # pixels between the points of series equal at one run


def _dodged(
    series: Mapping[str, Sequence[tuple[int, float, float]]],
) -> dict[str, list[tuple[float, float]]]:
    """Each series' ``(x, y)`` points, those several series share spread ``DODGE``
    pixels apart: a line hidden under an equal one reads as one missing."""
    sharing: dict[tuple[int, float], list[str]] = {}
    for label, points in series.items():
        for i, _, y in points:
            sharing.setdefault((i, round(y, 1)), []).append(label)
    out: dict[str, list[tuple[float, float]]] = {}
    for label, points in series.items():
        out[label] = []
        for i, x, y in points:
            group = sharing[(i, round(y, 1))]
            offset = (group.index(label) - (len(group) - 1) / 2) * DODGE
            out[label].append((x, y + offset))
    return out


def _commit_x(frame: Frame, i: int, count: int) -> float:
    if count == 1:
        return frame.left + frame.inner_width / 2
    return frame.x(i)


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both axes (fewer units sent,
    more recall), in order of units sent."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -points[i][1]))
    front, best = [], -math.inf
    for i in order:
        if points[i][1] > best:
            front.append(i)
            best = points[i][1]
    return front


def pareto_svg(rows: Sequence[ResultRow], colors: Mapping[str, str]) -> str:
    """Recall (y) against the units sent to the LLM per query (x), one point per
    configuration, the Pareto front drawn through the ones nothing beats."""
    points = [
        (r, r.sent, r.means.get("recall"))
        for r in rows
        if r.sent is not None and r.means.get("recall") is not None
    ]
    x_top = nice_ceiling(max((p[1] or 0.0 for p in points), default=1.0) * 1.05)
    frame = Frame(
        880, 340, x_top=x_top, y_top=_top(p[2] for p in points), left=64, right=150
    )
    title = "Recall against tokens sent to the LLM per query (Pareto front)"
    out = frame.open(title, "pareto")
    out += frame.y_axis("Recall %") + frame.x_axis_numeric("units sent per query")
    coords = [(float(x or 0.0), 100 * float(y or 0.0)) for _, x, y in points]
    front = pareto_front(coords)
    if len(front) > 1:
        path = " ".join(
            f"{frame.x(coords[i][0]):.1f},{frame.y(coords[i][1]):.1f}" for i in front
        )
        out.append(f'<polyline class="front" points="{path}"/>')
    on_front = set(front)
    for i, (row, xv, yv) in enumerate(points):
        cx, cy = frame.x(coords[i][0]), frame.y(coords[i][1])
        budget = f", budget {row.budget}" if row.budget is not None else ""
        out.append(
            f'<circle class="mark{" on-front" if i in on_front else ""}" '
            f'cx="{cx:.1f}" cy="{cy:.1f}" r="6" fill="{colors[row.label]}">'
            f"<title>{esc(row.label)}: recall {pct(yv)}%, "
            f"{float(xv or 0):.0f} units sent per query{budget}</title></circle>"
        )
    centres = [(frame.x(x), frame.y(y)) for x, y in coords]
    texts = point_texts([row for row, _, _ in points])
    out += _point_labels(frame, centres, texts)
    out += [frame.baseline(), "</svg>"]
    return "\n".join(out)
