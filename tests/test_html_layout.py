"""The HTML report's layout at 1400 x 900 in headless Chromium. No sideways
scrolling, a distinct colour per configuration (an 8-colour palette, any two at
least 20 apart in CIEDE2000), no overlapping point labels, equal history series
kept apart, and the explorer open on a question when the page loads.

The page is measured by a script added to a copy of it: it writes what it found
into the DOM, which ``--dump-dom`` returns.
"""

from __future__ import annotations

import copy
import dataclasses
import html
import itertools
import json
import math
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from support.browser import BROWSER, chromium
from support.plugin_project import write_project

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.gate.comparison.flips import Flip, Flips
from pytest_chunkeval.reporting.colors import PALETTE, config_colors
from pytest_chunkeval.reporting.git_info import GitInfo
from pytest_chunkeval.reporting.history import history_record
from pytest_chunkeval.reporting.html import html_report
from pytest_chunkeval.reporting.rows import ReportEntry

WIDTH, HEIGHT = 1400, 900
CONFIGS = (
    ("recursive:30:0", "exact"),
    ("recursive:30:0", "bm25"),  # the same chunker: close points, one label each
    ("fixed:40:0", "exact"),
    ("recursive:60:0", "exact"),
    ("fixed:80:10", "exact"),
)

MEASURE = """
<script>
window.addEventListener("load", function () { setTimeout(function () {
  var doc = document.documentElement, out = {};
  out.page = [doc.scrollWidth, doc.clientWidth];
  out.wraps = Array.prototype.map.call(document.querySelectorAll(".table-wrap"),
    function (w) { return [w.scrollWidth, w.clientWidth]; });
  out.legend = Array.prototype.map.call(
    document.querySelectorAll("#plots .legend, .plots .legend"), function (ul) {
      return Array.prototype.map.call(ul.querySelectorAll("li"), function (li) {
        return [li.textContent, li.querySelector(".swatch").style.background];
      });
    });
  out.history = Array.prototype.map.call(
    document.querySelectorAll("svg.plot-history"), function (svg) {
      return Array.prototype.map.call(svg.querySelectorAll("polyline.line"),
        function (p) { return p.getAttribute("points"); });
    });
  var labels = [];
  document.querySelectorAll("svg.plot").forEach(function (svg) {
    var boxes = Array.prototype.map.call(svg.querySelectorAll("text.point-label"),
      function (t) { var b = t.getBBox(); return [b.x, b.y, b.width, b.height,
                                                   t.textContent]; });
    labels.push(boxes);
  });
  out.labels = labels;
  var h3 = document.querySelector("#ex-detail h3.ex-question");
  out.opened = h3 ? h3.textContent : null;
  var pre = document.createElement("pre");
  pre.id = "measured";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}, 300); });
</script>
"""

pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no chromium on PATH (apt-get install chromium): HTML report not rendered",
)


def _srgb_to_lab(colour: str) -> tuple[float, float, float]:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(int(colour[i : i + 2], 16) / 255) for i in (1, 3, 5))
    x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047
    y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b
    z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 216 / 24389 else (24389 / 27 * t + 16) / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def delta_e2000(first: str, second: str) -> float:
    """CIEDE2000 colour difference of two ``#rrggbb`` colours (Sharma et al.)."""
    (l1, a1, b1), (l2, a2, b2) = _srgb_to_lab(first), _srgb_to_lab(second)
    c_bar = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_bar**7 / (c_bar**7 + 25**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360
    h2p = math.degrees(math.atan2(b2, a2p)) % 360
    dh = 0.0 if c1p * c2p == 0 else h2p - h1p
    dh -= 360 if dh > 180 else (-360 if dh < -180 else 0)
    d_l, d_c = l2 - l1, c2p - c1p
    d_h = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh) / 2)
    l_bar, cp_bar = (l1 + l2) / 2, (c1p + c2p) / 2
    if c1p * c2p == 0:
        h_bar = h1p + h2p
    elif abs(h1p - h2p) <= 180:
        h_bar = (h1p + h2p) / 2
    else:
        h_bar = (h1p + h2p + (360 if h1p + h2p < 360 else -360)) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(h_bar - 30))
        + 0.24 * math.cos(math.radians(2 * h_bar))
        + 0.32 * math.cos(math.radians(3 * h_bar + 6))
        - 0.20 * math.cos(math.radians(4 * h_bar - 63))
    )
    theta = 30 * math.exp(-(((h_bar - 275) / 25) ** 2))
    r_c = 2 * math.sqrt(cp_bar**7 / (cp_bar**7 + 25**7))
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / math.sqrt(20 + (l_bar - 50) ** 2)
    s_c, s_h = 1 + 0.045 * cp_bar, 1 + 0.015 * cp_bar * t
    r_t = -math.sin(math.radians(2 * theta)) * r_c
    return math.sqrt(
        (d_l / s_l) ** 2
        + (d_c / s_c) ** 2
        + (d_h / s_h) ** 2
        + r_t * (d_c / s_c) * (d_h / s_h)
    )


def test_delta_e2000_matches_published_pairs() -> None:
    # Sharma, Wu, Dalal (2005), pairs 1 and 17, here from Lab through sRGB is not
    # exact: check the formula on a pair of sRGB colours with a known value
    # instead, and symmetry and identity.
    assert delta_e2000("#ffffff", "#ffffff") == 0
    assert delta_e2000("#ff0000", "#0000ff") == pytest.approx(52.88, abs=0.05)
    assert delta_e2000("#1a8af9", "#f9731a") == delta_e2000("#f9731a", "#1a8af9")


def test_the_palette_has_eight_colours_at_least_20_apart() -> None:
    assert len(PALETTE) == len(set(PALETTE)) == 8
    closest = min(delta_e2000(a, b) for a, b in itertools.combinations(PALETTE, 2))
    assert closest >= 20, closest


def test_colours_come_from_the_hash_with_probing_and_the_set_alone() -> None:
    labels = [f"recursive:{n}:0 k=5 token hashing:256@1 exact" for n in range(8)]
    colours = config_colors(labels)
    assert sorted(colours.values()) == sorted(PALETTE)  # eight labels, eight slots
    assert config_colors(list(reversed(labels))) == colours  # order does not matter
    for n in range(1, 8):  # any subset: distinct, and the same colour again
        again = config_colors(labels[:n])
        assert len(set(again.values())) == n
        assert again == config_colors(labels[:n])


def _results(root: Path) -> list[EvalResult]:
    pytest.importorskip("bm25s")  # one configuration is the bm25 store
    write_project(root)
    corpus = Corpus.from_paths([str(root / "docs")])
    queries = QuerySet.load(root / "queries.jsonl", corpus)
    return [
        evaluate(
            chunker,
            corpus,
            queries,
            embedder=HashingEmbedder(),
            store=store,
            k=2,
            cache=root / "cache",
            progress=False,
        )
        for chunker, store in CONFIGS
    ]


def _history(results: list[EvalResult]) -> list[dict[str, Any]]:
    """Three runs of every configuration; the last two configurations' records
    hold equal numbers (two lines that would be drawn on top of each other)."""
    records = []
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    for run in range(3):
        git = GitInfo(f"{run + 1:x}" * 40, "main", False)
        when = t0 + timedelta(days=run)
        batch = [
            history_record(r, git=git, timestamp=when, run=f"run-{run}")
            for r in results
        ]
        twin = copy.deepcopy(batch[-2])
        batch[-1]["metrics"] = twin["metrics"]
        batch[-1]["groups"] = twin["groups"]
        records += batch
    return records


def _page(folder: Path, changed: bool) -> tuple[Path, list[EvalResult]]:
    results = _results(folder)
    entries = [
        ReportEntry.of(
            r,
            [f"tests/test_retrieval_quality.py::test_chunker_baseline[{c}-{s}]"],
            explore=True,
        )
        for r, (c, s) in zip(results, CONFIGS, strict=True)
    ]
    entries = [dataclasses.replace(e, outcome="passed", verdict="ok") for e in entries]
    if changed:  # the third configuration missed a question before
        query = next(q for q in results[2].queries if q.scores["recall"])
        flip = Flip(
            query.id, query.question, query.doc_id, 0.0, query.scores["recall"], "", ""
        )
        flips = Flips("recall", len(results[2].queries), gained=(flip,), gained_count=1)
        entries[2] = dataclasses.replace(entries[2], flips=flips)
    page = folder / "report.html"
    page.write_text(html_report(entries, _history(results), title="faults"))
    return page, results


def _measure(tmp_path: Path, page: Path) -> dict[str, Any]:
    measured = page.with_name("measured.html")
    text = page.read_text(encoding="utf-8")
    measured.write_text(text.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    proc = chromium(
        tmp_path,
        f"--window-size={WIDTH},{HEIGHT}",
        "--virtual-time-budget=5000",
        "--dump-dom",
        measured.as_uri(),
        scrollbars=True,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    found = re.search(r'<pre id="measured">([^<]*)</pre>', proc.stdout)
    assert found is not None, proc.stdout[-2000:]
    data: dict[str, Any] = json.loads(html.unescape(found.group(1)))
    return data


@pytest.fixture(scope="module")
def changed_page(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[dict[str, Any], list[EvalResult]]:
    folder = tmp_path_factory.mktemp("changed")
    page, results = _page(folder, changed=True)
    return _measure(folder, page), results


def test_the_page_does_not_scroll_sideways_at_1400(
    changed_page: tuple[dict[str, Any], list[EvalResult]],
) -> None:
    data, _ = changed_page
    scroll, client = data["page"]
    assert WIDTH - 20 <= client < WIDTH  # the page is tall: a vertical scrollbar
    assert scroll <= client
    assert data["wraps"]
    for scroll, client in data["wraps"]:  # no table hides columns in its box
        assert scroll <= client


def test_each_configuration_has_its_own_colour(
    changed_page: tuple[dict[str, Any], list[EvalResult]],
) -> None:
    data, _ = changed_page
    legend = data["legend"][0]
    assert len(legend) == len(CONFIGS)

    def hex_of(css: str) -> str:
        r, g, b = (int(v) for v in re.findall(r"\d+", css)[:3])
        return f"#{r:02x}{g:02x}{b:02x}"

    colours = [hex_of(css) for _, css in legend]
    assert len(set(colours)) == len(CONFIGS)
    assert all(c in PALETTE for c in colours)
    closest = min(delta_e2000(a, b) for a, b in itertools.combinations(colours, 2))
    assert closest >= 20


def test_point_labels_do_not_overlap_and_tell_configurations_apart(
    changed_page: tuple[dict[str, Any], list[EvalResult]],
) -> None:
    data, _ = changed_page
    scatters = [boxes for boxes in data["labels"] if boxes]
    assert scatters
    for boxes in scatters:
        texts = [b[4] for b in boxes]
        assert len(set(texts)) == len(texts), texts  # two recursive:30:0 told apart
        for a, b in itertools.combinations(boxes, 2):
            apart = (
                a[0] + a[2] <= b[0]
                or b[0] + b[2] <= a[0]
                or a[1] + a[3] <= b[1]
                or b[1] + b[3] <= a[1]
            )
            assert apart, (a, b)


def test_equal_history_series_are_drawn_apart(
    changed_page: tuple[dict[str, Any], list[EvalResult]],
) -> None:
    data, _ = changed_page
    assert data["history"]
    for lines in data["history"]:
        assert len(lines) == len(CONFIGS)
        assert len(set(lines)) == len(lines), lines


def test_the_explorer_opens_on_the_question_that_changed(
    changed_page: tuple[dict[str, Any], list[EvalResult]],
) -> None:
    data, results = changed_page
    changed = next(q for q in results[2].queries if q.scores["recall"])
    assert data["opened"] == changed.question


def test_without_changes_the_explorer_opens_on_the_worst_question(
    tmp_path: Path,
) -> None:
    page, results = _page(tmp_path, changed=False)
    data = _measure(tmp_path, page)
    # the first configuration is shown; its question of lowest recall, first
    # listed among equals
    worst = min(
        results[0].queries,
        key=lambda q: q.scores["recall"] if q.scores["recall"] is not None else 2,
    )
    assert data["opened"] == worst.question
