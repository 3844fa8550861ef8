"""pytest's rootdir rule and the plugin's path flags: ``--chunkeval-history PATH``
(a space, not ``=``) with an existing path outside the project moves the rootdir and
hides the project's configuration; the error says so."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.plugin_project import run, write_project

from pytest_chunkeval.config.rootdir import space_form_note

FLAGS = {"--chunkeval-history", "--chunkeval-json"}


@pytest.fixture
def elsewhere(pytester: pytest.Pytester) -> Path:
    """An existing history file outside the project."""
    folder = pytester.path.parent / f"{pytester.path.name}-elsewhere"
    folder.mkdir()
    history = folder / "history.jsonl"
    history.write_text("")
    return history


def test_a_path_flag_with_a_space_explains_the_ignored_configuration(
    pytester: pytest.Pytester, elsewhere: Path
) -> None:
    write_project(pytester.path)
    pytester.makepyfile(test_rag="def test_rag(chunkeval_chunker): pass")

    result = run(pytester, "--chunkeval-history", str(elsewhere))
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        [
            "*uses chunkeval_chunker but no chunker is configured*",
            "Note: pytest found no configuration file (rootdir: *). "
            f"'--chunkeval-history {elsewhere}' has a space where pytest expects "
            f"'=': *Write --chunkeval-history={elsewhere}.",
        ]
    )

    run(pytester, f"--chunkeval-history={elsewhere}").assert_outcomes(passed=2)


def test_the_note_needs_a_missing_configuration_and_an_existing_path(
    tmp_path: Path,
) -> None:
    (tmp_path / "h.jsonl").write_text("")

    def note(*args: str, found: bool = False) -> str:
        return space_form_note(
            args, FLAGS, config_found=found, rootdir=Path("/"), cwd=tmp_path
        )

    assert "Write --chunkeval-history=h.jsonl." in note(
        "--chunkeval-history", "h.jsonl"
    )
    assert note("--chunkeval-history", "h.jsonl", found=True) == ""
    assert note("--chunkeval-history=h.jsonl") == ""
    assert note("--chunkeval-history", "missing.jsonl") == ""  # pytest ignores it
    assert note("--chunkeval-k", "h.jsonl") == ""  # not a path flag
    assert note("--chunkeval-history") == ""
