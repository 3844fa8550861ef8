"""The README's sample failure is the output of a real run of the README's own
first test (its query file, its ``pyproject.toml``, its test file), with the
default components it describes: all-MiniLM-L6-v2 and Chroma. Times are the only
thing allowed to differ."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.project_runs import (
    failure_and_section,
    model_missing,
    normalized,
    run_pytest,
    user_env,
)
from support.readme_project import README, write_first_test


def readme_sample(text: str) -> tuple[list[str], list[str]]:
    """The sample's failure lines and its chunkeval section (split at ``...``)."""
    start = text.index("## What a failure looks like")
    block = text[text.index("```text\n", start) + 8 :]
    block = block[: block.index("```")]
    failure, _, section = block.partition("\n...\n")
    return failure.splitlines(), section.strip("\n").splitlines()


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
    done = run_pytest(tmp_path, env=user_env(tmp_path / "cache"), timeout=600)
    if model_missing(done.stdout):
        pytest.skip("all-MiniLM-L6-v2 is not available offline here")
    assert done.returncode == 1, done.stdout[-3000:]  # the sample fails, on purpose
    real_failure, real_section = failure_and_section(done.stdout)
    failure, section = readme_sample(README.read_text(encoding="utf-8"))
    shown = "\n".join([*real_failure, "...", *real_section])
    assert normalized(failure) == normalized(real_failure), shown
    assert normalized(section) == normalized(real_section), shown
