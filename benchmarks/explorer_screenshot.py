"""The docs' screenshots of the HTML report: its question explorer
(docs/img/explorer.png) and a regression (docs/img/html-regression.png, with
``--regression``).

    .venv/bin/python benchmarks/explorer_screenshot.py [--out docs/img/explorer.png]
    .venv/bin/python benchmarks/explorer_screenshot.py --regression \
        [--out docs/img/html-regression.png]

Builds the report of the bundled benchmark (472 questions) under three chunkers with
the hashing embedder (seconds; the picture is about the explorer, not the numbers),
opens in headless Chromium one question that the first chunker partly retrieves and
the second retrieves whole, side by side, and crops the page to the explorer. Prints
the file size of the report and the time the explorer took to be ready.

``--regression`` runs the example project's ``tests/test_baseline.py`` for real
(MiniLM, Chroma), on a copy whose app packs 120-character passages instead of 600:
the regression docs/ci.md shows. Its ``--chunkeval-html`` report is shot at
1400x900, the window the report's layout is made for.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the browser and PNG helpers of the tests

from support.browser import BROWSER, chromium  # noqa: E402
from support.png import read_png, write_png  # noqa: E402

from pytest_chunkeval.data.benchmarks import load_benchmark  # noqa: E402
from pytest_chunkeval.embedders.hashing import HashingEmbedder  # noqa: E402
from pytest_chunkeval.engine.evaluate import evaluate  # noqa: E402
from pytest_chunkeval.reporting.html import html_report  # noqa: E402
from pytest_chunkeval.reporting.rows import ReportEntry  # noqa: E402

CHUNKERS = ("recursive:200:0", "fixed:400:0", "sentence:300")
WIDTH, HEIGHT, SHOWN = 1280, 7000, 980
EXAMPLE = ROOT / "example_project"
PASSAGES = ("DEFAULT_MAX_CHARS = 600", "DEFAULT_MAX_CHARS = 120")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--regression", action="store_true", help="the regression of docs/ci.md"
    )
    args = parser.parse_args()
    if BROWSER is None:
        print("no chromium on PATH (apt-get install chromium)", file=sys.stderr)
        return 1
    if args.regression:
        return regression(args.out or ROOT / "docs/img/html-regression.png")
    return explorer(args.out or ROOT / "docs/img/explorer.png")


def explorer(out: Path) -> int:
    """The explorer of the bundled benchmark's report, cropped to its section."""
    corpus, queries = load_benchmark("general")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
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
            for chunker in CHUNKERS
        ]
        page = folder / "report.html"
        entries = [
            ReportEntry.of(r, [f"tests/test_rag.py::test_chunker[{c}]"], explore=True)
            for r, c in zip(results, CHUNKERS, strict=True)
        ]
        page.write_text(html_report(entries, title="general"), encoding="utf-8")
        a, b = results[0].queries, results[1].queries
        query = next(
            qa
            for qa, qb in zip(a, b, strict=True)
            if len(qa.excerpts) == 1
            and qa.scores["recall"] is not None
            and 0 < qa.scores["recall"] < 1
            and qb.scores["recall"] == 1.0
            and len(qa.question) < 90
        )
        url = f"{page.as_uri()}#a=0&b=1&q={query.id}"
        size = f"--window-size={WIDTH},{HEIGHT}"
        dom = chromium(folder, size, "--dump-dom", url).stdout
        found = re.search(r'data-ready-ms="(\d+)" data-top="(\d+)"', dom)
        if found is None:
            print("the explorer did not render", file=sys.stderr)
            return 1
        shot = folder / "shot.png"
        chromium(
            folder, size, "--virtual-time-budget=2000", f"--screenshot={shot}", url
        )
        image = read_png(shot)
        top = max(0, int(found.group(2)) - 100)  # with the section's heading
        write_png(out, image[top : top + SHOWN])
        print(
            f"report {page.stat().st_size / 1e6:.2f} MB, explorer ready in "
            f"{found.group(1)} ms; question {query.id}; wrote {out}"
        )
    return 0


def regression(out: Path) -> int:
    """The HTML report of the example project's regression, at 1400x900."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        project = folder / "example"
        shutil.copytree(
            EXAMPLE, project, ignore=shutil.ignore_patterns(".chunkeval", "__pycache__")
        )
        ingest = project / "handbook_rag" / "ingest.py"
        text = ingest.read_text(encoding="utf-8")
        assert PASSAGES[0] in text, f"{ingest}: {PASSAGES[0]!r} not found"
        ingest.write_text(text.replace(*PASSAGES), encoding="utf-8")
        page = folder / "report.html"
        env = {**os.environ, "CHUNKEVAL_CACHE_DIR": str(folder / "cache")}
        env.pop("GITHUB_STEP_SUMMARY", None)
        run = subprocess.run(
            [
                *(sys.executable, "-m", "pytest", "-p", "no:cacheprovider"),
                *("tests/test_baseline.py", f"--chunkeval-html={page}"),
            ],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        verdict = re.search(r"^verdict: .*$", run.stdout, re.MULTILINE)
        if run.returncode != 1 or verdict is None or not page.exists():
            print(run.stdout[-3000:] + run.stderr[-2000:], file=sys.stderr)
            print("expected one failing test (the regression)", file=sys.stderr)
            return 1
        shot = folder / "shot.png"
        chromium(
            folder,
            "--window-size=1400,900",
            "--virtual-time-budget=2000",
            f"--screenshot={shot}",
            page.as_uri(),
        )
        write_png(out, read_png(shot))
        print(f"{verdict.group(0)}; wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
