"""The example app's retrieval suite (what `make demo` runs) passes on the embedded
defaults: real MiniLM embeddings, in-process Chroma, committed baselines."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from support.ci_walkthrough import summary_section, text_blocks
from support.project_runs import normalized, run_pytest, user_env

EXAMPLE = Path(__file__).resolve().parents[1] / "example_project"


def _baselines() -> dict[str, bytes]:
    return {
        p.relative_to(EXAMPLE).as_posix(): p.read_bytes()
        for p in sorted((EXAMPLE / "tests" / "__chunkeval__").rglob("*.json"))
    }


@pytest.mark.slow
def test_example_project_suite_passes(tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("chromadb")
    # the README's width, as a terminal outside CI
    env = user_env(tmp_path / "cache", columns=80)
    report = tmp_path / "report.html"
    committed = _baselines()
    assert committed
    for run in ("cold", "warm"):
        proc = run_pytest(EXAMPLE, f"--chunkeval-html={report}", env=env)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
        assert "baselines:" in proc.stdout
        assert " passed" in proc.stdout
        assert report.stat().st_size > 10_000
        # warm: results read back from the result cache (engine/result_cache.py),
        # compared with the same committed baselines
        assert (" cached" in proc.stdout) == (run == "warm"), proc.stdout[-4000:]
    assert _baselines() == committed
    # example_project/README.md shows the warm run's summary, times aside
    shown = normalized(_readme_summary(), cached=True)
    real = normalized(summary_section(proc.stdout), cached=True)
    assert shown == real, "\n".join(["README:", *shown, "printed:", *real])


def _readme_summary() -> list[str]:
    """The terminal summary example_project/README.md shows ("Run it")."""
    text = (EXAMPLE / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```\w*\n(.*?)^```", text, re.M | re.S)
    (block,) = [b for b in blocks if "- chunkeval -" in b]
    return block.splitlines()


PARAGRAPH = (
    "\n## Document history\n\nThis chapter was last reviewed in March 2026 by the "
    "People Operations team. Send corrections to the handbook owners.\n"
)


@pytest.mark.slow
def test_a_paragraph_appended_to_every_chapter_is_ok(tmp_path):
    # A doc edit that answers nothing: every baseline compares `ok` under the
    # default gate (mode changes, -1pp), the edits named (issue 21).
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("chromadb")
    project = tmp_path / "example"
    shutil.copytree(
        EXAMPLE, project, ignore=shutil.ignore_patterns(".chunkeval", "__pycache__")
    )
    for chapter in sorted((project / "handbook").glob("*.md")):
        with chapter.open("a") as fh:
            fh.write(PARAGRAPH)
    env = user_env(tmp_path / "cache")
    proc = run_pytest(project, "tests/test_baseline.py", env=env)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "baselines: 4 ok" in proc.stdout
    assert "verdict: 0 regressions, 0 improvements, 4 ok" in proc.stdout
    assert "documents edited: expenses.md (+2 sentences / +" in proc.stdout
    # docs/ci.md step 7 shows these lines of this run, one after the other
    block = text_blocks("### 7. The docs or the configuration change")[2]
    shown = normalized(block.splitlines())
    printed = normalized(proc.stdout.splitlines())
    at = [i for i, line in enumerate(printed) if line == shown[0]]
    where = "\n".join(["shown:", *shown, "printed:", *printed])
    assert at, where
    assert printed[at[0] : at[0] + len(shown)] == shown, where
    assert len(shown) == 5
