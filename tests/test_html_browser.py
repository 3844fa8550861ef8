"""The HTML report in a real headless browser (Debian's chromium): it loads without
console errors, its script runs, and the plots are drawn (a screenshot test).

Skipped, with the reason shown, where no chromium is installed
(``apt-get install chromium``).
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from support.fake_results import make_result

from pytest_chunkeval.reporting.history import GitInfo, history_record
from pytest_chunkeval.reporting.html import html_report
from pytest_chunkeval.reporting.rows import ReportEntry

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
BROWSER = next((b for b in map(shutil.which, BROWSERS) if b), None)
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


def _chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert BROWSER is not None
    profile = tmp_path / "profile"
    command = [
        BROWSER,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
        *args,
    ]
    env = {**os.environ, "HOME": str(tmp_path)}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=120, env=env, check=False
    )


def _read_png(path: Path) -> npt.NDArray[np.uint8]:
    """Decode an 8-bit RGB/RGBA non-interlaced PNG (what chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, color, _, _, interlace = struct.unpack(
                ">IIBBBBB", body
            )
            assert depth == 8
            assert color in (2, 6)
            assert interlace == 0
        elif kind == b"IDAT":
            idat += body
    bpp = 3 if color == 2 else 4
    stride = width * bpp
    raw = zlib.decompress(idat)
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(
            np.int32
        )
        if kind == 0:
            row = line
        elif kind == 2:
            row = (line + prev) & 255
        elif kind == 1:  # Sub: a running sum per channel
            pixels = line.reshape(width, bpp)
            row = (np.cumsum(pixels, axis=0) & 255).reshape(-1)
        else:  # Average / Paeth depend on the left pixel: decode byte by byte
            cur = [0] * stride
            above = prev.tolist()
            scan = line.tolist()
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                b = above[i]
                if kind == 3:
                    cur[i] = (scan[i] + ((a + b) >> 1)) & 255
                else:
                    c = above[i - bpp] if i >= bpp else 0
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                    cur[i] = (scan[i] + pred) & 255
            row = np.array(cur, dtype=np.int32)
        out[y] = row
        prev = row
    return out.reshape(height, width, bpp)[:, :, :3]


def test_page_loads_without_errors_and_its_script_runs(tmp_path: Path) -> None:
    page = _page(tmp_path)
    proc = _chromium(
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
    proc = _chromium(
        tmp_path,
        f"--screenshot={shot}",
        f"--window-size={WIDTH},{HEIGHT}",
        "--virtual-time-budget=5000",
        page.as_uri(),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    image = _read_png(shot).astype(np.int32)
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
    proc = _chromium(
        tmp_path, "--virtual-time-budget=5000", "--dump-dom", page.as_uri()
    )
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
    from support.plugin_project import run, write_project
    from test_plugin_baseline import BASELINE_CONFTEST, BASELINE_INI, KEEP
    from test_plugin_verdicts import VERDICT_TESTS

    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv(KEEP, raising=False)
    write_project(pytester.path, BASELINE_INI, conftest=BASELINE_CONFTEST)
    pytester.makepyfile(test_rag=VERDICT_TESTS)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=3)
    monkeypatch.setenv(KEEP, "Pets")
    run(pytester, "--chunkeval-html=report.html").assert_outcomes(passed=2, failed=1)
    page = pytester.path / "report.html"

    proc = _chromium(
        tmp_path, "--virtual-time-budget=5000", "--dump-dom", page.as_uri()
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = proc.stdout
    assert 'id="chunkeval-status"' in dom  # the script ran to its end
    verdict = re.search(r'<p class="verdict" id="verdict">([^<]*)</p>', dom)
    assert verdict is not None
    assert verdict.group(1) == "1 regression, 0 improvements, 1 unchanged"
    results = re.search(r'<section id="results">.*?<tbody>(.*?)</tbody>', dom, re.S)
    assert results is not None
    rows = re.findall(r"<tr>(.*?)</tr>", results.group(1), re.S)
    assert len(rows) == 3
    assert 'title="test_rag.py::test_rag"' in rows[0]
    assert '<td class="status status-regressed" data-v="0">REGRESSED</td>' in rows[0]
    assert '<td class="outcome-failed">failed</td>' in rows[0]
    assert all("REGRESSED" not in r for r in rows[1:])
    gate = re.search(r'<section id="baseline">.*?<tbody>(.*?)</tbody>', dom, re.S)
    assert gate is not None
    first = re.findall(r"<td[^>]*>([^<]*)</td>", gate.group(1).split("</tr>")[0])
    assert first[0] == "test_rag.py::test_rag"
    assert first[2:6] == ["recall", "100.00", "33.33", "-66.67"]
    assert re.fullmatch(r"\[-\d+\.\d\d, -\d+\.\d\d\]", first[6])
    assert first[7] == "REGRESSED"
    changes = dom.split('<section id="changes">', 1)[1].split("</section>", 1)[0]
    assert "4 of 6 questions retrieved before and missed now" in changes
    for question in ("What are the moons of Mars?", "Who audits the accounts?"):
        assert f"<td>{question} (q-" in changes

    # Drawn: the regressed status cell stands out in colour.
    shot = tmp_path / "shot.png"
    proc = _chromium(
        tmp_path,
        f"--screenshot={shot}",
        f"--window-size={WIDTH},1000",
        "--virtual-time-budget=5000",
        page.as_uri(),
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    image = _read_png(shot).astype(np.int32)
    red = abs(image - np.array([0xFF, 0xEB, 0xE9])).sum(axis=2) <= 6
    ys = np.flatnonzero(red.sum(axis=1) > 40)
    assert ys.size > 10, "no regressed status cell drawn"
    # Two red cells, each a band of rows (its text's lines cut it into pieces):
    # the results table's status cell near the top, then the gate table's.
    bands = np.split(ys, np.flatnonzero(np.diff(ys) > 20) + 1)
    assert len(bands) == 2, [(int(b[0]), int(b[-1])) for b in bands]
    assert bands[0][0] < 400
