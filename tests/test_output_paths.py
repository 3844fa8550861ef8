"""Every command checks every output path before it computes anything
(cli/common.py ``check_outputs``): a directory, a file where a parent directory
should be, or a place that takes no new file is one line and exit 2, with
nothing evaluated and no cache written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.cli_project import eval_args, write_project

from pytest_chunkeval.cli.main import main
from pytest_chunkeval.util import files


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Two documents and two questions (tests/support/cli_project.py)."""
    return write_project(tmp_path)


def _inspect_args(project: Path, *extra: str) -> list[str]:
    return ["inspect", *eval_args(project, "--no-bm25", *extra)[1:]]


@pytest.mark.parametrize(
    ("command", "flag"),
    [
        ("eval", "--json"),
        ("eval", "--trec-run"),
        ("eval", "--qrels"),
        ("inspect", "--json"),
        ("inspect", "--html"),
    ],
)
def test_an_output_that_is_a_directory_is_refused_before_computing(
    project: Path, capsys: Any, command: str, flag: str
) -> None:
    out = project / "out"
    out.mkdir()
    argv = eval_args if command == "eval" else _inspect_args
    assert main(argv(project, flag, str(out))) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"chunkeval {command}: error: {flag} {out} is a directory: give a file to "
        "write\n"
    )
    assert captured.out == ""  # nothing was computed
    assert not (project / "cache").exists()


def test_an_output_below_a_file_is_refused_before_computing(
    project: Path, capsys: Any
) -> None:
    out = project / "a.md" / "run.trec"
    assert main(eval_args(project, "--trec-run", str(out))) == 2
    assert capsys.readouterr().err == (
        f"chunkeval eval: error: --trec-run {out} cannot be written "
        f"({project / 'a.md'} is a file, not a directory): give a file to write\n"
    )
    assert not (project / "cache").exists()


def test_an_output_in_an_unwritable_place_is_refused_before_computing(
    project: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "directory_writable", lambda path: False)
    out = project / "new" / "inspection.html"
    assert main(_inspect_args(project, "--html", str(out))) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"chunkeval inspect: error: --html {out} cannot be written (no file can be "
        f"created in {project}): give a file to write\n"
    )
    assert captured.out == ""
    assert not (project / "new").exists()


def test_report_checks_both_outputs_before_reading(project: Path, capsys: Any) -> None:
    history = project / "history.jsonl"  # never read: the check comes first
    argv = ["report", str(history), "--html", str(project / "r.html")]
    assert main([*argv, "--md", str(project)]) == 2
    assert capsys.readouterr().err == (
        f"chunkeval report: error: --md {project} is a directory: give a file to "
        "write\n"
    )


def test_a_writable_output_in_a_new_directory_is_written(
    project: Path, capsys: Any
) -> None:
    out = project / "new" / "deeper" / "run.trec"
    assert main(eval_args(project, "--trec-run", str(out))) == 0
    assert f"wrote TREC run: {out}" in capsys.readouterr().out
    assert out.read_text(encoding="utf-8").strip()
