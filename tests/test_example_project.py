"""The example app's retrieval suite (what `make demo` runs) passes on the embedded
defaults: real MiniLM embeddings, in-process Chroma, committed baselines. (A
paragraph appended to every chapter, docs/ci.md's step 7, is replayed by
tests/test_docs_ci_in_step.py.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.ci_walkthrough import summary_section
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
