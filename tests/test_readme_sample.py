"""The README's sample failure is the output of a real run of the README's own
first test (its query file, its ``pyproject.toml``, its test file), with the
default components it describes: all-MiniLM-L6-v2 and Chroma. Times are the only
thing allowed to differ."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.readme_project import README, write_first_test


def _normalized(lines: list[str]) -> list[str]:
    """Lines without their timings (``15.37s``) and column padding."""
    return [" ".join(re.sub(r"\b\d+\.\d+s\b", "Ts", line).split()) for line in lines]


def readme_sample(text: str) -> tuple[list[str], list[str]]:
    """The sample's failure lines and its chunkeval section (split at ``...``)."""
    start = text.index("## What a failure looks like")
    block = text[text.index("```text\n", start) + 8 :]
    block = block[: block.index("```")]
    failure, _, section = block.partition("\n...\n")
    return failure.splitlines(), section.strip("\n").splitlines()


def run_output(output: str) -> tuple[list[str], list[str]]:
    """A run's failure lines (``E   ...``) and its chunkeval section."""
    lines = output.splitlines()
    failure = [line for line in lines if line.startswith("E ")]
    start = next(i for i, line in enumerate(lines) if "- chunkeval -" in line)
    end = next(i for i, line in enumerate(lines) if "configurations evaluated" in line)
    return failure, lines[start : end + 1]


def test_the_sample_is_split_into_failure_and_table() -> None:
    failure, section = readme_sample(README.read_text(encoding="utf-8"))
    assert failure[0].startswith("E       AssertionError: recall mean ")
    assert "chunkeval" in section[0]
    assert section[-1].endswith("configurations evaluated, 0 results reused")


@pytest.mark.slow
def test_the_readme_sample_is_what_its_first_test_prints(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("chromadb")
    write_first_test(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")}
    env.pop("GITHUB_STEP_SUMMARY", None)
    env["CHUNKEVAL_CACHE_DIR"] = str(tmp_path / "cache")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if "cannot load sentence-transformers model" in done.stdout:
        pytest.skip("all-MiniLM-L6-v2 is not available offline here")
    assert done.returncode == 1, done.stdout[-3000:]  # the sample fails, on purpose
    real_failure, real_section = run_output(done.stdout)
    failure, section = readme_sample(README.read_text(encoding="utf-8"))
    shown = "\n".join([*real_failure, "...", *real_section])
    assert _normalized(failure) == _normalized(real_failure), shown
    assert _normalized(section) == _normalized(real_section), shown
