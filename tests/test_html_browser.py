"""The HTML report in a real headless browser (Debian's chromium): it loads without
console errors, its script runs, and the plots are drawn (a screenshot test).

Skipped, with the reason shown, where no chromium is installed
(``apt-get install chromium``).
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from support.baseline_project import BASELINE_CONFTEST, BASELINE_INI, KEEP
from support.browser import BROWSER, chromium
from support.fake_results import make_result
from support.png import read_png

from pytest_chunkeval.engine.results import EvalResult, QueryRecord
from pytest_chunkeval.gate.comparison.flips import Flip, Flips
from pytest_chunkeval.reporting.git_info import GitInfo
from pytest_chunkeval.reporting.history import history_record
from pytest_chunkeval.reporting.html import html_report
from pytest_chunkeval.reporting.rows import ReportEntry

pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no chromium on PATH (apt-get install chromium): HTML report not rendered",
)
WIDTH, HEIGHT = 1200, 2600


def _page(tmp_path: Path) -> Path:
    entries = []
    for i, chunker in enumerate(("recursive:200:0", "fixed:400:0", "cluster:200")):
        values = [min(1.0, 0.2 + 0.2 * i + 0.1 * (q % 4)) for q in range(20)]
        result = make_result(values, config={"chunker": chunker})
        entries.append(ReportEntry.of(result, [f"tests/test_rag.py::test[{chunker}]"]))
    history = []
    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    for c in range(6):
        for chunker, base in (("recursive:200:0", 0.4), ("fixed:400:0", 0.6)):
            result = make_result(
                [base + 0.03 * c, base, base - 0.05 * (c % 2)],
                config={"chunker": chunker},
            )
            history.append(
                history_record(
                    result,
                    git=GitInfo(f"{c:x}" * 40, "main", False),
                    timestamp=t0 + timedelta(days=c),
                )
            )
    path = tmp_path / "report.html"
    path.write_text(html_report(entries, history, title="browser test"))
    return path


def test_page_loads_without_errors_and_its_script_runs(tmp_path: Path) -> None:
    page = _page(tmp_path)
    proc = chromium(
        tmp_path,
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=5000",
        "--dump-dom",
        page.as_uri(),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [
        line
        for line in proc.stderr.splitlines()
        if "CONSOLE" in line or "Uncaught" in line
    ]
    assert not console, "\n".join(console)
    dom = proc.stdout
    # The script adds this element last; it counts plots whose marks have a size.
    assert 'id="chunkeval-status"' in dom, dom[-2000:]
    match = re.search(r'data-plots="(\d+)" data-drawn="(\d+)"', dom)
    assert match is not None
    assert match.group(1) == match.group(2)
    assert int(match.group(1)) == 2 + 2 + 5  # bars, scatters, history


def test_screenshot_shows_the_plots(tmp_path: Path) -> None:
    page = _page(tmp_path)
    shot = tmp_path / "shot.png"
    proc = chromium(
        tmp_path,
        f"--screenshot={shot}",
        f"--window-size={WIDTH},{HEIGHT}",
        "--virtual-time-budget=5000",
        page.as_uri(),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    image = read_png(shot).astype(np.int32)
    assert image.shape[:2] == (HEIGHT, WIDTH)
    # Plot marks are saturated colours; text, grid lines and background are grey.
    saturation = image.max(axis=2) - image.min(axis=2)
    coloured = saturation > 80
    assert coloured.sum() > 20_000
    rows = np.flatnonzero(coloured.sum(axis=1) > 20)
    # Bars, scatters and history lines spread colour down most of the page.
    bands = {int(y) // 200 for y in rows}
    assert len(bands) >= 6, sorted(bands)
    assert (image > 250).all(axis=2).mean() > 0.5  # and the page is not a blank error


def test_a_budget_sweep_draws_its_pareto_front(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A chunk-size sweep at one budget through the plugin: the HTML report plots
    recall against units sent, with the front, and the browser draws it."""
    from support.plugin_project import run, write_project

    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    pytester.makepyfile(
        test_sweep="""
        import pytest

        @pytest.mark.parametrize("size", [10, 20, 40, 80])
        @pytest.mark.chunkeval(budget=60, k=3)
        def test_size(chunkeval, size):
            chunkeval.evaluate(f"recursive:{size}:0")
        """
    )
    run(pytester, "--chunkeval-html=report.html").assert_outcomes(passed=4)
    page = pytester.path / "report.html"
    text = page.read_text(encoding="utf-8")
    assert text.count('class="plot plot-pareto"') == 1
    assert 'class="front"' in text
    assert 'id="loss"' in text
    assert "Chunking (1 - ceiling)" in text
    proc = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    match = re.search(r'data-plots="(\d+)" data-drawn="(\d+)"', proc.stdout)
    assert match is not None
    assert match.group(1) == match.group(2)  # every plot, the front's too, drawn
    pareto = re.search(r'<svg class="plot plot-pareto".*?</svg>', proc.stdout, re.S)
    assert pareto is not None
    assert pareto.group(0).count('class="mark') == 4  # one point per chunk size


def test_a_regression_comes_first_with_its_status_delta_and_flips(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A run with one regression through the plugin (issue 13): in the page the
    browser built, the regressed row is the results table's first, its status
    cell says REGRESSED and is drawn in colour, the gated recall shows its change
    and interval, and the flipped questions are listed."""
    from support.baseline_project import VERDICT_TESTS
    from support.plugin_project import run, write_project

    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv(KEEP, raising=False)
    write_project(pytester.path, BASELINE_INI, conftest=BASELINE_CONFTEST)
    pytester.makepyfile(test_rag=VERDICT_TESTS)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=3)
    monkeypatch.setenv(KEEP, "Pets")
    run(pytester, "--chunkeval-html=report.html").assert_outcomes(passed=2, failed=1)
    page = pytester.path / "report.html"

    proc = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert 'id="chunkeval-status"' in dom  # the script ran to its end
    verdict = re.search(r'<p class="verdict" id="verdict">([^<]*)</p>', dom)
    assert verdict is not None
    assert verdict.group(1) == "1 regression, 0 improvements, 1 ok"
    results = re.search(r'<section id="results">.*?<tbody>(.*?)</tbody>', dom, re.S)
    assert results is not None
    rows = re.findall(r"<tr>(.*?)</tr>", results.group(1), re.S)
    assert len(rows) == 3
    assert 'title="test_rag.py::test_rag"' in rows[0]
    assert '<td class="status status-regressed" data-v="0">REGRESSED</td>' in rows[0]
    assert '<td class="outcome outcome-failed">failed</td>' in rows[0]
    assert all("REGRESSED" not in r for r in rows[1:])
    gate = re.search(r'<section id="baseline">.*?<tbody>(.*?)</tbody>', dom, re.S)
    assert gate is not None
    first_row = gate.group(1).split("</tr>")[0].replace("<wbr>", "")
    first = re.findall(r"<td[^>]*>([^<]*)</td>", first_row)
    assert first[0] == "test_rag.py::test_rag"
    assert first[2] == "REGRESSED"
    assert re.fullmatch(
        r"100\.00 → 33\.33: -66\.67 \[-\d+\.\d\d, -\d+\.\d\d\] REGRESSED", first[3]
    ), first
    changes = dom.split('<section id="changes">', 1)[1].split("</section>", 1)[0]
    assert "4 of 6 questions retrieved before and missed now" in changes
    for question in ("What are the moons of Mars?", "Who audits the accounts?"):
        assert f"<td>{question} (q-" in changes

    # Drawn: the regressed status cell stands out in colour.
    shot = tmp_path / "shot.png"
    proc = chromium(
        tmp_path,
        f"--screenshot={shot}",
        f"--window-size={WIDTH},1000",
        "--virtual-time-budget=5000",
        page.as_uri(),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    image = read_png(shot).astype(np.int32)
    red = abs(image - np.array([0xFF, 0xEB, 0xE9])).sum(axis=2) <= 6
    ys = np.flatnonzero(red.sum(axis=1) > 40)
    assert ys.size > 10, "no regressed status cell drawn"
    # Two red cells, each a band of rows (its text's lines cut it into pieces):
    # the results table's status cell near the top, then the gate table's.
    bands = np.split(ys, np.flatnonzero(np.diff(ys) > 20) + 1)
    assert len(bands) == 2, [(int(b[0]), int(b[-1])) for b in bands]
    assert bands[0][0] < 400


# -- the question explorer ----------------------------------------------------

GENERAL_CONFIGS = ("recursive:200:0", "fixed:400:0", "sentence:300")
MAX_BYTES = 5_000_000
MAX_LOAD_MS = 2000.0


@pytest.fixture(scope="module")
def general_report(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[EvalResult]]:
    """The bundled benchmark (472 questions) under three configurations, evaluated
    once. The hashing embedder: all-MiniLM-L6-v2 takes minutes cold here; the
    explorer's size and speed depend on questions, text and spans, not vectors."""
    from pytest_chunkeval.data.benchmarks import load_benchmark
    from pytest_chunkeval.embedders.hashing import HashingEmbedder
    from pytest_chunkeval.engine.evaluate import evaluate

    folder = tmp_path_factory.mktemp("general")
    corpus, queries = load_benchmark("general")
    results = [
        evaluate(
            chunker,
            corpus,
            queries,
            embedder=HashingEmbedder(),
            store="exact",
            cache=folder / "cache",
            progress=False,
        )
        for chunker in GENERAL_CONFIGS
    ]
    entries = [
        ReportEntry.of(r, [f"tests/test_rag.py::test_chunker[{c}]"], explore=True)
        for r, c in zip(results, GENERAL_CONFIGS, strict=True)
    ]
    # the first configuration's baseline missed the question the tests open
    query = _opened_question(results[0])
    flip = Flip(
        query.id, query.question, query.doc_id, 0.0, query.scores["recall"] or 0, "", ""
    )
    flips = Flips("recall", 472, gained=(flip,), gained_count=1)
    entries[0] = dataclasses.replace(entries[0], flips=flips)
    page = folder / "report.html"
    page.write_text(html_report(entries, title="general"), encoding="utf-8")
    return page, results


def _opened_question(result: EvalResult) -> QueryRecord:
    """A question with one excerpt that ``result`` partly retrieved."""
    return next(
        q
        for q in result.queries
        if len(q.excerpts) == 1
        and q.scores["recall"] is not None
        and 0 < q.scores["recall"] < 1
    )


def _console_errors(stderr: str) -> list[str]:
    return [
        line for line in stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line
    ]


def _opened(dom: str) -> str:
    """The detail pane of the explorer in a dumped DOM."""
    start = dom.find('id="ex-detail"')
    end = dom.find('<script type="application/json"', start)
    assert 0 < start < end, dom[-2000:]
    return dom[start:end]


def _explorer_dom(page: Path, tmp_path: Path) -> tuple[str, float]:
    """The page's DOM once the explorer is drawn, and the milliseconds the page
    itself measured from navigation to that point."""
    proc = chromium(
        tmp_path, "--enable-logging=stderr", "--v=0", "--dump-dom", page.as_uri()
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not _console_errors(proc.stderr)
    ready = re.search(r'id="explorer" data-ready-ms="(\d+)"', proc.stdout)
    assert ready is not None, proc.stdout[-2000:]
    return proc.stdout, float(ready.group(1))


def test_bundled_benchmark_report_is_small_and_loads(
    general_report: tuple[Path, list[EvalResult]], tmp_path: Path
) -> None:
    page, results = general_report
    assert len(results[0].queries) == 472
    size = page.stat().st_size
    dom, _ = _explorer_dom(page, tmp_path)
    print(f"\nexplorer report, 472 questions x {len(results)}: {size / 1e6:.2f} MB")
    assert size <= MAX_BYTES
    assert "472 of 472 questions (showing 100)" in dom
    assert dom.count('<tr data-q="') == 100  # rendered on demand


@pytest.mark.perf
def test_bundled_benchmark_explorer_is_ready_fast(
    general_report: tuple[Path, list[EvalResult]], tmp_path: Path
) -> None:
    page, _ = general_report
    started = time.perf_counter()
    _, ready_ms = _explorer_dom(page, tmp_path)
    wall = time.perf_counter() - started
    print(
        f"\nexplorer ready {ready_ms:.0f} ms after navigation "
        f"(whole headless chromium run {wall:.2f} s)"
    )
    assert ready_ms <= MAX_LOAD_MS


def test_explorer_opens_a_question_and_highlights_its_excerpt(
    general_report: tuple[Path, list[EvalResult]], tmp_path: Path
) -> None:
    page, results = general_report
    first = results[0]
    query = _opened_question(first)
    url = f"{page.as_uri()}#a=0&b=2&q={query.id}"
    proc = chromium(tmp_path, "--enable-logging=stderr", "--v=0", "--dump-dom", url)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert not _console_errors(proc.stderr)
    detail = _opened(proc.stdout)
    title = re.search(r'<h3 class="ex-question">(.*?)</h3>', detail)
    assert title is not None
    assert html.unescape(title.group(1)) == query.question
    assert 'class="ex-cols two"' in detail  # side by side with the third one
    change = re.search(r'<p class="ex-change better">([^<]*)</p>', detail)
    assert change is not None
    assert change.group(1).startswith("Missed before, retrieved now: recall 0.0%")
    window = re.search(
        r'<div class="ex-window"><div class="ex-where">(.*?)</div>'
        r'<div class="ex-text" data-doc="[^"]*" data-start="(\d+)" data-end="(\d+)">'
        r"(.*?)</div>",
        detail,
        re.S,
    )
    assert window is not None
    doc, start, end = query.excerpts[0]
    assert html.unescape(window.group(1)) == doc
    marks = re.findall(r'<mark class="ex (got|lost)">(.*?)</mark>', window.group(4))
    assert {kind for kind, _ in marks} == {"got", "lost"}  # partly retrieved
    marked = html.unescape("".join(text for _, text in marks))
    assert marked == first.corpus[doc].text[start:end] if first.corpus else False
    # context around it, and the window is the excerpt's neighbourhood only
    w_start, w_end = int(window.group(2)), int(window.group(3))
    assert w_start < start
    assert end < w_end
    assert w_end - w_start < 2000
    # the retrieved chunks in rank order, each with where it is
    chunks = re.search(r'<ol class="ex-chunks">(.*?)</ol>', detail, re.S)
    assert chunks is not None
    wheres = re.findall(r'<div class="ex-where">(.*?)</div>', chunks.group(1))
    expected = [f"{d} · characters {s}–{e}" for d, s, e in query.retrieved]
    assert [
        html.unescape(w).split(" · covers")[0].split(" · no excerpt")[0] for w in wheres
    ] == expected


def test_hostile_text_shows_as_text_and_runs_nothing(tmp_path: Path) -> None:
    from support.hostile import DOCS, EVIL_ID, QUESTIONS, hostile_dataset

    from pytest_chunkeval.embedders.hashing import HashingEmbedder
    from pytest_chunkeval.engine.evaluate import evaluate

    corpus, queries = hostile_dataset()
    result = evaluate(
        "fixed:60:0",
        corpus,
        queries,
        embedder=HashingEmbedder(),
        store="exact",
        k=2,
        cache=tmp_path / "cache",
        progress=False,
    )
    page = tmp_path / "hostile.html"
    page.write_text(
        html_report([ReportEntry.of(result, ["t.py::x[<b>]"], explore=True)]),
        encoding="utf-8",
    )
    for qid in ("q1", "q4"):  # the question holding the script, the evil doc id
        proc = chromium(
            tmp_path,
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=3000",
            "--dump-dom",
            f"{page.as_uri()}#q={qid}",
        )
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert not _console_errors(proc.stderr)
        dom = proc.stdout
        body = re.search(r"<body[^>]*>", dom)
        assert body is not None
        assert "data-pwned" not in body.group(0)  # no payload ran
        detail = _opened(dom)
        assert "<img" not in detail
        assert "<script" not in detail
        question = {q: text for q, text, _, _ in QUESTIONS}[qid]
        assert html.escape(question, quote=False) in detail
    # the document's markup is in the page as text
    assert html.escape(
        DOCS["a.md"][DOCS["a.md"].index("<script>") :][:60], quote=False
    ) in _opened(_dump(tmp_path, page, "q1"))
    assert html.escape(EVIL_ID, quote=False) in dom


def _dump(tmp_path: Path, page: Path, qid: str) -> str:
    proc = chromium(tmp_path, "--dump-dom", f"{page.as_uri()}#q={qid}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_explorer_filters_by_document_and_status(
    general_report: tuple[Path, list[EvalResult]], tmp_path: Path
) -> None:
    """A link holding filters (document finance.md, status differing between the
    first and second configurations) lists exactly those questions."""
    from pytest_chunkeval.reporting.explorer import status

    page, results = general_report
    text = page.read_text(encoding="utf-8")
    found = re.search(r'id="chunkeval-explorer-data">(.*?)</script>', text, re.S)
    assert found is not None
    docs = json.loads(found.group(1))["docs"]
    a, b = results[0].queries, results[1].queries
    expected = [
        qa.id
        for qa, qb in zip(a, b, strict=True)
        if qa.doc_id == "finance.md"
        and status(qa.scores["recall"]) != status(qb.scores["recall"])
    ]
    assert 0 < len(expected) < 100
    url = f"{page.as_uri()}#a=0&b=1&doc={docs.index('finance.md')}&status=diff"
    proc = chromium(tmp_path, "--dump-dom", url)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"{len(expected)} of 472 questions<" in proc.stdout
    shown = re.findall(r'<tr data-q="\d+"[^>]*><td class="ex-q">', proc.stdout)
    assert len(shown) == len(expected)
    docs_shown = re.findall(r'<td class="ex-doc">([^<]*)</td>', proc.stdout)
    assert set(docs_shown) == {"finance.md"}


def test_point_labels_of_equal_configurations_do_not_overprint(
    tmp_path: Path,
) -> None:
    """Five configurations at one point: the labels the browser draws (its own
    font metrics) overlap none of the others."""
    entries = [
        ReportEntry.of(make_result([0.5, 0.7], config={"chunker": f"fixed:{n}:0"}))
        for n in (100, 200, 300, 400, 500)
    ]
    page = tmp_path / "crowded.html"
    page.write_text(html_report(entries), encoding="utf-8")
    proc = chromium(tmp_path, "--virtual-time-budget=5000", "--dump-dom", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.count('class="point-label"') == 2 * 5  # two scatters
    found = re.search(r'data-overprints="(\d+)"', proc.stdout)
    assert found is not None
    assert found.group(1) == "0"
