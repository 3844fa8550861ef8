"""docs/ci.md and docs/quickstart.md say what a run prints and writes (issue 34):
the baseline file names they show are the ones the plugin writes, and the
quickstart's sample output has the columns and footer a run shows."""

from __future__ import annotations

import re
from pathlib import Path

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
