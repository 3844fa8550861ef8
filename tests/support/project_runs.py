"""Run pytest in a project on disk as a user would, and read what it printed: the
one "run pytest in a copied project" block of the tests that hold the docs'
sample outputs to real runs (test_docs_in_step, test_readme_sample,
test_example_project, support.ci_walkthrough).

Plain Python (no pytest): a test skips itself when ``model_missing(output)``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

MODEL_MISSING = "cannot load sentence-transformers model"
"""What a run prints when all-MiniLM-L6-v2 is not available offline."""

_TIME = re.compile(r"\b\d+\.\d+s\b")
_TIME_OR_CACHED = re.compile(r"\b\d+\.\d+s\b|\bcached\b")


def user_env(cache: Path, *, columns: int | None = None) -> dict[str, str]:
    """This process's environment as a terminal outside CI: without ``CI``,
    ``BUILD_NUMBER`` and ``GITHUB_STEP_SUMMARY`` (they change what the plugin
    prints and writes), the embedding cache in ``cache``, and ``COLUMNS`` (the
    docs' width) when given."""
    drop = ("CI", "BUILD_NUMBER", "GITHUB_STEP_SUMMARY")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["CHUNKEVAL_CACHE_DIR"] = str(cache)
    if columns is not None:
        env["COLUMNS"] = str(columns)
    return env


def run_pytest(
    project: Path, *args: str, env: Mapping[str, str], timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    """``python -m pytest -p no:cacheprovider ARGS`` in ``project``, its output
    captured as text (never raises on a failing run)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=project,
        env=dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def model_missing(output: str) -> bool:
    """Whether the run could not load all-MiniLM-L6-v2 (not installed offline)."""
    return MODEL_MISSING in output


def normalized(lines: list[str], *, cached: bool = False) -> list[str]:
    """Lines without their timings (``15.37s``, ``in 7.47s``) and padding; with
    ``cached``, the time column's ``cached`` (a result read back from the result
    cache) counts as a timing too."""
    pattern = _TIME_OR_CACHED if cached else _TIME
    return [" ".join(pattern.sub("Ts", line).split()) for line in lines]


def failure_and_section(output: str) -> tuple[list[str], list[str]]:
    """A run's (or a sample's) failure lines (``E ...``) and its chunkeval section,
    from its ``- chunkeval -`` rule to its ``configurations evaluated`` line."""
    lines = output.splitlines()
    failure = [line for line in lines if line.startswith("E ")]
    start = next(i for i, line in enumerate(lines) if "- chunkeval -" in line)
    end = next(i for i, line in enumerate(lines) if "configurations evaluated" in line)
    return failure, lines[start : end + 1]
