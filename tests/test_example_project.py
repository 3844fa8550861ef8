"""The example app's retrieval suite (what `make demo` runs) passes on the embedded
defaults: real MiniLM embeddings, in-process Chroma, committed baselines."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "example_project"


@pytest.mark.slow
def test_example_project_suite_passes(tmp_path):
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("chromadb")
    env = {**os.environ, "CHUNKEVAL_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("GITHUB_STEP_SUMMARY", None)
    report = tmp_path / "report.html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "--chunkeval-html",
            str(report),
        ],
        cwd=EXAMPLE,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "baselines:" in proc.stdout
    assert " passed" in proc.stdout
    assert report.stat().st_size > 10_000
