"""docs/ci.md and docs/quickstart.md say what a run prints and writes (issue 34):
the baseline file names they show are the ones the plugin writes, and the
quickstart's sample output has the columns and footer a run shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.project_runs import (
    failure_and_section,
    model_missing,
    normalized,
    run_pytest,
    user_env,
)

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


def test_the_quickstart_table_has_the_columns_of_its_outcome() -> None:
    """quickstart.md's failing run showed the table without the outcome and
    baseline columns a run with a failed test prints."""
    from support.quickstart_project import QUICKSTART, console_blocks

    text = QUICKSTART.read_text(encoding="utf-8")
    [failing] = console_blocks(text, "### 5. Run it: it fails")
    [passing] = console_blocks(text, "### 6. Make it pass")
    head = failure_and_section(failing)[1][1].split()
    assert head[2:5] == ["outcome", "baseline", "k"], head
    assert "outcome" not in failure_and_section(passing)[1][1].split()


@pytest.mark.slow
def test_the_quickstart_output_is_a_real_run(tmp_path: Path) -> None:
    """Its samples are what its project prints (tests/support/quickstart_project.py:
    its pages, and its query file, configuration and test from the page), with
    all-MiniLM-L6-v2 and Chroma; times are the only thing allowed to differ. Step 5
    runs it with ``k=1``, step 6 with ``k=3``: two projects, one embedding cache."""
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("chromadb")
    from support.quickstart_project import QUICKSTART, console_blocks, write_quickstart

    env = user_env(tmp_path / "cache")
    text = QUICKSTART.read_text(encoding="utf-8")
    for k, heading in ((1, "### 5."), (3, "### 6.")):
        project = tmp_path / f"k{k}"
        project.mkdir()
        write_quickstart(project, k=k)
        done = run_pytest(project, env=env)
        if model_missing(done.stdout):
            pytest.skip("all-MiniLM-L6-v2 is not available offline here")
        section = next(
            h for h in re.findall(r"^### .*$", text, re.M) if h.startswith(heading)
        )
        [block] = console_blocks(text, section)
        real = failure_and_section(done.stdout)
        doc = failure_and_section(block)
        shown = "\n".join([heading, *real[0], "...", *real[1]])
        assert done.returncode == (1 if k == 1 else 0), done.stdout[-3000:]
        assert normalized(doc[0]) == normalized(real[0]), shown
        assert normalized(doc[1]) == normalized(real[1]), shown
