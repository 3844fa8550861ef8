"""docs/ci.md's walk-through is what the example project prints (issue 34): its
steps 1 to 7 replayed on a copy of example_project/ with the real
all-MiniLM-L6-v2 and in-process Chroma (tests/support/ci_walkthrough.py); times
are the only thing allowed to differ. Step 2 also tells whether the committed
baselines are current: `--chunkeval-update` leaves them unchanged.
example_project/README.md's summary is held by tests/test_example_project.py, its
"See it fail" failures by two more runs of the walk-through, held here."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.ci_walkthrough import (
    RETRIEVER_TEST,
    failure_lines,
    step_text,
    summary_section,
    text_blocks,
    walk_through,
)
from support.project_runs import normalized

pytestmark = pytest.mark.slow

EXAMPLE_README = Path(__file__).resolve().parents[1] / "example_project" / "README.md"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("chromadb")
    out = walk_through(tmp_path_factory.mktemp("ci_walkthrough"))
    if "cannot load sentence-transformers model" in out["1"]:
        pytest.skip("all-MiniLM-L6-v2 is not available offline here")
    return out


def _within(shown: list[str], real: list[str], output: str) -> None:
    """Every line the page shows is a line of the real output."""
    missing = [
        line
        for line in normalized(shown, cached=True)
        if line not in normalized(real, cached=True)
    ]
    assert not missing, "\n".join(["not printed:", *missing, "printed:", output])


def test_step_1_names_the_missing_baseline(runs: dict[str, str]) -> None:
    [block] = text_blocks("### 1. No baseline yet")
    real = failure_lines(runs["1"])
    assert normalized(block.splitlines(), cached=True) == normalized(
        real, cached=True
    ), runs["1"][-3000:]


def test_step_2_records_one_and_leaves_the_committed_ones(
    runs: dict[str, str],
) -> None:
    """Fails while example_project's committed baselines are stale: the update
    rewrites them (`3 updated`) instead of leaving them `unchanged`."""
    [block] = text_blocks("### 2. Record the baselines")
    _within(block.splitlines(), runs["2"].splitlines(), runs["2"][-3000:])


def test_step_3_failure_and_summary(runs: dict[str, str]) -> None:
    failure, summary = text_blocks("### 3. A merge request makes")
    real = failure_lines(runs["3"])
    assert normalized(failure.splitlines(), cached=True) == normalized(
        real, cached=True
    ), "\n".join(real)
    section = summary_section(runs["3"])
    shown = "\n".join(section)
    assert normalized(summary.splitlines(), cached=True) == normalized(
        section, cached=True
    ), shown


def test_step_4_markdown_report(runs: dict[str, str]) -> None:
    """The verdict line, the tables' rows (their columns up to the page's `…`)
    and the What changed heading and rows are the Markdown report's."""
    md = runs["md"]
    assert md, runs["3"][-3000:]
    text = step_text("### 4. What the reviewer sees")
    real_rows = [line for line in md.splitlines() if line.startswith("| ")]
    verdict = next(line for line in text.splitlines() if line.startswith("> **"))
    assert verdict[2:] in md.splitlines(), md
    rows = [line for line in text.splitlines() if line.startswith("| tests/")]
    rows += [line for line in text.splitlines() if line.startswith("| lost |")]
    assert len(rows) >= 6
    for row in rows:
        cells = row.split(" | ")
        if cells[-1] == "… |":
            cells = cells[:-1]
        prefix = " | ".join(cells)
        assert any(real.startswith(prefix) for real in real_rows), (row, md)
    flips = next(line for line in text.splitlines() if line.startswith("**tests/"))
    assert flips in md.splitlines(), md


def test_step_5_a_smaller_drop_fails_too(runs: dict[str, str]) -> None:
    [block] = text_blocks("### 5. A real drop")
    head, _, tail = block.partition("…\n")
    real = failure_lines(runs["5"])
    shown = head.splitlines()
    assert normalized(shown, cached=True) == normalized(
        real[: len(shown)], cached=True
    ), "\n".join(real)
    _within(tail.splitlines(), real, "\n".join(real))


def test_step_6_the_update_names_what_moved(runs: dict[str, str]) -> None:
    block = text_blocks("### 6. An intended change")[0]
    _within(block.splitlines(), runs["6"].splitlines(), runs["6"][-3000:])


def test_step_7_an_edit_is_named_then_the_verdict_given(
    runs: dict[str, str],
) -> None:
    failure, line = text_blocks("### 7. The docs or the configuration change")[:2]
    real = failure_lines(runs["7 edit"])
    shown = failure.splitlines()
    assert normalized(shown, cached=True) == normalized(
        real[: len(shown)], cached=True
    ), "\n".join(real)
    section = runs["7 md"].split("### Against the baseline\n\n", 1)[-1]
    assert line.strip() in section.splitlines(), runs["7 md"]


def test_step_7_a_docs_edit_that_does_not_hurt_is_ok(runs: dict[str, str]) -> None:
    """A paragraph appended to every chapter answers no question: every baseline
    compares `ok` under the default gate (mode changes, -1pp), the edits named
    (issue 21); the page shows the lines that say so."""
    out = runs["7"]
    assert runs["7 exit"] == "0", out[-6000:]
    assert "baselines: 4 ok" in out
    assert "verdict: 0 regressions, 0 improvements, 4 ok" in out
    assert "documents edited: expenses.md (+2 sentences / +" in out
    block = text_blocks("### 7. The docs or the configuration change")[2]
    shown = normalized(block.splitlines())
    printed = normalized(out.splitlines())
    at = [i for i, line in enumerate(printed) if line == shown[0]]
    where = "\n".join(["shown:", *shown, "printed:", *printed])
    assert at, where
    assert printed[at[0] : at[0] + len(shown)] == shown, where
    assert len(shown) == 5


def _readme_block(marker: str) -> str:
    """The block of example_project/README.md holding ``marker``."""
    text = EXAMPLE_README.read_text(encoding="utf-8")
    blocks = re.findall(r"^```\w*\n(.*?)^```", text, re.M | re.S)
    (block,) = [b for b in blocks if marker in b]
    return block


def _shown_in_order(block: str, real: list[str]) -> None:
    """The block's first part is the start of ``real``; each part after a ``...``
    line is a run of consecutive lines of ``real``, in the block's order."""
    real = normalized(real, cached=True)
    at = 0
    parts = [part for part in block.split("\n...\n") if part.strip()]
    assert parts
    for i, part in enumerate(parts):
        shown = normalized(failure_lines(part), cached=True)
        assert shown, part
        starts = [j for j in range(at, len(real)) if real[j : j + len(shown)] == shown]
        where = "\n".join(["README:", *shown, "printed:", *real])
        assert starts, where
        assert i > 0 or starts[0] == 0, where
        at = starts[0] + len(shown)


def test_example_readme_a_small_regression_fails_only_the_baseline(
    runs: dict[str, str],
) -> None:
    out = runs["readme-700"]
    failed = [line for line in out.splitlines() if line.startswith("FAILED ")]
    assert [line.partition(" - ")[0] for line in failed] == [f"FAILED {RETRIEVER_TEST}"]
    _shown_in_order(_readme_block("BaselineRegression"), failure_lines(out))
    # "The retriever's IoU is 8.1%, above the 8% floor"
    said = re.search(r"retriever's IoU is (\d+\.\d)%", EXAMPLE_README.read_text())
    assert said is not None
    row = next(line for line in summary_section(out) if "handbook_rag" in line)
    found = re.search(r"4 \(4\.0\)\s+[\d.]+\s+[\d.]+\s+([\d.]+)", row)
    assert found is not None, row
    assert found.group(1) == said.group(1), row


def test_example_readme_a_large_regression_fails_the_thresholds(
    runs: dict[str, str],
) -> None:
    out = runs["readme-1500"]
    failed = [line for line in out.splitlines() if line.startswith("FAILED ")]
    assert failed, out[-3000:]
    assert failed[0].startswith("FAILED tests/test_retriever.py::test_retriever "), out
    _shown_in_order(_readme_block("AssertionError: precision mean"), failure_lines(out))
