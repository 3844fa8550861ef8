"""The docs' screenshot of the HTML report's question explorer (docs/img/explorer.png).

    .venv/bin/python benchmarks/explorer_screenshot.py [--out docs/img/explorer.png]

Builds the report of the bundled benchmark (472 questions) under three chunkers with
the hashing embedder (seconds; the picture is about the explorer, not the numbers),
opens in headless Chromium one question that the first chunker partly retrieves and
the second retrieves whole, side by side, and crops the page to the explorer. Prints
the file size of the report and the time the explorer took to be ready.
"""

from __future__ import annotations

import argparse
import re
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs/img/explorer.png")
    args = parser.parse_args()
    if BROWSER is None:
        print("no chromium on PATH (apt-get install chromium)", file=sys.stderr)
        return 1
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
            and qa.recall is not None
            and 0 < qa.recall < 1
            and qb.recall == 1.0
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
        write_png(args.out, image[top : top + SHOWN])
        print(
            f"report {page.stat().st_size / 1e6:.2f} MB, explorer ready in "
            f"{found.group(1)} ms; question {query.id}; wrote {args.out}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
