"""The frame of the HTML report's SVG plots: a plot area mapping data (in
percent) to viewBox pixels with its axes (:class:`Frame`), and where point labels
go so that none overlaps another (:func:`label_boxes`). The plots themselves are
``svg.py``'s."""

from __future__ import annotations

import math
from collections.abc import Sequence

from pytest_chunkeval.reporting.escape import esc

LABEL_CHAR_WIDTH = 6.2
"""Estimated width of one character of an 11px point label, in viewBox pixels."""
LABEL_HEIGHT = 12.0


def nice_ceiling(value: float) -> float:
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


class Frame:
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
            f'role="img" aria-label="{esc(title)}">',
            f'<text class="title" x="{self.left}" y="18">{esc(title)}</text>',
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
            f'text-anchor="middle">{esc(label)}</text>'
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
            f'text-anchor="middle">{esc(label)}</text>'
        )

    def baseline(self) -> str:
        y = self.height - self.bottom
        return (
            f'<line class="frame" x1="{self.left}" x2="{self.width - self.right}" '
            f'y1="{y}" y2="{y}"/>'
        )


Box = tuple[float, float, float, float]  # x0, y0, x1, y1


def overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def label_boxes(
    frame: Frame, centres: Sequence[tuple[float, float]], texts: Sequence[str]
) -> list[tuple[Box, str]]:
    """Where each point's label goes (its box and text-anchor): the first of the
    places around the point that overlaps no label placed before it, no point and
    stays inside the plot; failing all, stacked below the last free row."""
    points = [(x - 6, y - 6, x + 6, y + 6) for x, y in centres]
    placed: list[Box] = []
    out: list[tuple[Box, str]] = []
    right, bottom = frame.width - 2, frame.height - frame.bottom
    for (cx, cy), text in zip(centres, texts, strict=True):
        w, h = LABEL_CHAR_WIDTH * len(text), LABEL_HEIGHT
        candidates = [
            (cx + 8, cy - 8 - h, "start"),
            (cx + 8, cy + 4, "start"),
            (cx - 8 - w, cy - 8 - h, "end"),
            (cx - 8 - w, cy + 4, "end"),
            (cx - w / 2, cy - 10 - h, "middle"),
            (cx - w / 2, cy + 10, "middle"),
        ]
        # then further away above and below, one label height at a time
        for step in range(1, 12):
            for sign in (-1, 1):
                y = cy - h / 2 + sign * (10 + h / 2 + step * (h + 1))
                candidates.append((cx + 8, y, "start"))
                candidates.append((cx - 8 - w, y, "end"))
        chosen = None
        for x0, y0, anchor in candidates:
            box = (x0, y0, x0 + w, y0 + h)
            inside = box[0] >= 2 and box[2] <= right and box[1] >= 2
            inside = inside and box[3] <= bottom
            if inside and not any(overlaps(box, o) for o in placed + points):
                chosen = (box, anchor)
                break
        if chosen is None:  # crowded beyond the candidates: at least not on a label
            y0 = max((b[3] for b in placed), default=cy) + 1
            chosen = ((cx + 8, y0, cx + 8 + w, y0 + h), "start")
        placed.append(chosen[0])
        out.append(chosen)
    return out
