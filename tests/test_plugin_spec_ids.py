"""Test ids are canonical specs, and baselines stored under a former id are found
and moved (pytester runs of a small project)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.plugin_project import INI, run, write_project

from pytest_chunkeval.gate.files.paths import sanitize_name

TEST_IDS = """
def test_x(chunkeval, chunkeval_chunker):
    chunkeval.check_baseline(chunkeval.evaluate(chunkeval_chunker))
"""

MODULE_DIR = Path("__chunkeval__", "test_ids")
CANONICAL = MODULE_DIR / f"{sanitize_name('test_x[recursive:30:0]')}.json"
# as an older release named the file of the former id test_x[recursive:30]
FORMER = MODULE_DIR / "test_x[recursive_30].json"


def _ini(chunkers: str) -> str:
    return INI.replace(
        "chunkeval_chunkers = recursive:30:0 recursive:60:0",
        f"chunkeval_chunkers = {chunkers}\nchunkeval_unit = char",
    )


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    write_project(pytester.path, _ini("recursive:30"))
    pytester.makepyfile(test_ids=TEST_IDS)
    return pytester.path


def test_ids_are_canonical_and_spellings_of_one_chunker_are_one_test(
    pytester: pytest.Pytester, project: Path
) -> None:
    (project / "pytest.ini").write_text(
        _ini("recursive:30 recursive:30:0 fixed:40 recursive:60:00")
    )
    result = run(pytester, "-v", "--chunkeval-update")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "test_ids.py::test_x[[]recursive:30:0[]] PASSED*",
            "test_ids.py::test_x[[]fixed:40:0[]] PASSED*",
            "test_ids.py::test_x[[]recursive:60:0[]] PASSED*",
        ]
    )
    names = sorted(p.name for p in (project / MODULE_DIR).iterdir())
    assert names == [
        f"{sanitize_name(f'test_x[{spec}]')}.json"
        for spec in ("fixed:40:0", "recursive:30:0", "recursive:60:0")
    ]


def _as_former(project: Path) -> None:
    """Make the canonical baseline look like one an older version wrote under the
    id ``test_x[recursive:30]``."""
    data = json.loads((project / CANONICAL).read_text())
    data["test"] = "test_x[recursive:30]"
    (project / FORMER).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    (project / CANONICAL).unlink()


def test_a_baseline_under_its_former_id_is_found_then_moved_on_update(
    pytester: pytest.Pytester, project: Path
) -> None:
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    _as_former(project)

    # A check finds it under the former name: not missing, not unused.
    result = run(pytester, "-rA")
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "missing" not in out, out
    assert "unused" not in out, out
    result.stdout.fnmatch_lines(
        ["*test_x[[]recursive_30[]].json*former name*--chunkeval-update*"]
    )
    assert (project / FORMER).is_file()
    assert not (project / CANONICAL).exists()

    # --chunkeval-update moves it to the canonical name, as that test.
    result = run(pytester, "--chunkeval-update")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*moved*test_x[[]recursive_30[]].json*"])
    assert not (project / FORMER).exists()
    moved = json.loads((project / CANONICAL).read_text())
    assert moved["test"] == "test_x[recursive:30:0]"

    # Afterwards: an ordinary passing check, nothing unused.
    result = run(pytester)
    result.assert_outcomes(passed=1)
    assert "unused" not in result.stdout.str()


def test_a_former_baseline_is_compared_not_ignored(
    pytester: pytest.Pytester, project: Path
) -> None:
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    _as_former(project)
    data = json.loads((project / FORMER).read_text())
    data["config"]["k"] = 3  # recorded under another configuration
    (project / FORMER).write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    result = run(pytester)
    result.stdout.fnmatch_lines(
        [
            "*test_x[[]recursive:30:0[]]: * across changes*",
            "*k: 3 -> *",
            "*test_x[[]recursive_30[]].json: the baseline of * under a former name*",
        ]
    )
