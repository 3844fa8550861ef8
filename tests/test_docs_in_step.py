"""docs/ci.md and docs/quickstart.md say what a run prints and writes (issue 34):
the baseline file names they show are the ones the plugin writes, and the
quickstart's sample output has the columns and footer a run shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_chunkeval.gate.files.paths import sanitize_name

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_ci_md_names_the_hash_suffix_of_a_baseline_file() -> None:
    """ci.md said `<test id>.json`, while a parametrized test's file carries a
    hash of its id: `test_chunker[recursive_200_0]-05420394.json`."""
    text = " ".join((DOCS / "ci.md").read_text(encoding="utf-8").split())
    shown = re.search(r"parametrized `([^`]+)`.*?file: `([^`]+)`", text)
    assert shown is not None
    test_id, file_name = shown.groups()
    assert file_name == sanitize_name(test_id) + ".json"
    assert file_name != test_id + ".json"


def _normalized(lines: list[str]) -> list[str]:
    """Lines without their timings (``15.37s``, ``in 7.47s``) and padding."""
    return [" ".join(re.sub(r"\b\d+\.\d+s\b", "Ts", line).split()) for line in lines]


def _shown(block: str) -> tuple[list[str], list[str]]:
    """A console block's failure lines (``E ...``) and its chunkeval section."""
    lines = block.splitlines()
    failure = [line for line in lines if line.startswith("E ")]
    start = next(i for i, line in enumerate(lines) if "- chunkeval -" in line)
    end = next(i for i, line in enumerate(lines) if "configurations evaluated" in line)
    return failure, lines[start : end + 1]


def test_the_quickstart_table_has_the_columns_of_its_outcome() -> None:
    """quickstart.md's failing run showed the table without the outcome and
    baseline columns a run with a failed test prints."""
    from support.quickstart_project import QUICKSTART, console_blocks

    text = QUICKSTART.read_text(encoding="utf-8")
    [failing] = console_blocks(text, "### 5. Run it: it fails")
    [passing] = console_blocks(text, "### 6. Make it pass")
    head = _shown(failing)[1][1].split()
    assert head[2:5] == ["outcome", "baseline", "k"], head
    assert "outcome" not in _shown(passing)[1][1].split()


@pytest.mark.slow
def test_the_quickstart_output_is_a_real_run(tmp_path: Path) -> None:
    """Its samples are what its project prints (tests/support/quickstart_project.py:
    its pages, and its query file, configuration and test from the page), with
    all-MiniLM-L6-v2 and Chroma; times are the only thing allowed to differ. Step 5
    runs it with ``k=1``, step 6 with ``k=3``: two projects, one embedding cache."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("chromadb")
    from support.quickstart_project import QUICKSTART, console_blocks, write_quickstart

    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")}
    env.pop("GITHUB_STEP_SUMMARY", None)
    env["CHUNKEVAL_CACHE_DIR"] = str(tmp_path / "cache")
    text = QUICKSTART.read_text(encoding="utf-8")
    for k, heading in ((1, "### 5."), (3, "### 6.")):
        project = tmp_path / f"k{k}"
        project.mkdir()
        write_quickstart(project, k=k)
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        if "cannot load sentence-transformers model" in done.stdout:
            pytest.skip("all-MiniLM-L6-v2 is not available offline here")
        section = next(
            h for h in re.findall(r"^### .*$", text, re.M) if h.startswith(heading)
        )
        [block] = console_blocks(text, section)
        real = _shown(done.stdout)
        shown = "\n".join([heading, *real[0], "...", *real[1]])
        assert done.returncode == (1 if k == 1 else 0), done.stdout[-3000:]
        assert _normalized(_shown(block)[0]) == _normalized(real[0]), shown
        assert _normalized(_shown(block)[1]) == _normalized(real[1]), shown
