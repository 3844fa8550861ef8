"""The CLI under faults, without raw tracebacks. Each case gives the product's
one-line message and exit code (0 ok, 1 a failed check, 2 a user error), or the
plugin's behaviour (warn and run uncached) where that is what the plugin does.

A full disk is a small tmpfs mounted inside ``unshare -m`` (where this machine
permits it) and a patched write raising ENOSPC, with the same assertions.
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.cli_project import eval_args, project
from support.full_disk import UNSHARE

from pytest_chunkeval.cli.main import main

__all__ = ["project"]  # a fixture

# The chunkings are the first entries a run stores (then the token bounds, the
# vectors...): the first to find the disk full names it, once for the directory.
FULL_WARNING = (
    "chunkeval eval: warning: chunkeval cache: cannot store token bounds in {cache} "
    "(No space left on device): cached entries are used, new ones are not stored"
)


def _eval_args(project: Path, cache: Path) -> list[str]:
    return eval_args(project, "--chunker", "recursive:20:0", cache=cache)


def _full_disk(
    how: str, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> tuple[int, str, str]:
    """``chunkeval eval`` on a cache whose disk is full: (exit code, out, err)."""
    cache = project / "cache"
    cache.mkdir()
    if how == "tmpfs":
        code = (
            "import sys; from pytest_chunkeval.cli.main import main; "
            "sys.exit(main(sys.argv[1:]))"
        )
        argv = " ".join(f"'{a}'" for a in _eval_args(project, cache))
        script = (
            f"mount -t tmpfs -o size=64k tmpfs '{cache}' && "
            f"(head -c 1M /dev/zero > '{cache}/filler' 2>/dev/null; true) && "
            f"'{sys.executable}' -c '{code}' {argv}"
        )
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run(
            ["unshare", "-m", "sh", "-c", script],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        return done.returncode, done.stdout, done.stderr
    real_replace = os.replace

    def replace(src: Any, dst: Any, **kwargs: Any) -> None:
        if str(dst).startswith(str(cache)):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
        real_replace(src, dst, **kwargs)

    monkeypatch.setattr(os, "replace", replace)
    rc = main(_eval_args(project, cache))
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


@pytest.mark.parametrize(
    "how",
    [
        pytest.param(
            "tmpfs",
            marks=pytest.mark.skipif(not UNSHARE, reason="unshare -m not permitted"),
        ),
        "patched",
    ],
)
def test_a_full_disk_under_the_cache_warns_once_and_runs_uncached(
    how: str, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    rc, out, err = _full_disk(how, project, monkeypatch, capsys)
    assert rc == 0, err
    assert "Traceback" not in err
    assert err.count("warning:") == 1, err
    assert err.startswith(FULL_WARNING.format(cache=project / "cache")), err
    # The CLI's flag, not the plugin's settings.
    assert "or set --cache-dir (or CHUNKEVAL_CACHE_DIR) to a writable" in err, err
    assert "chunkeval_cache_dir" not in err
    assert "recursive" in out
    assert "1 evaluation(s)" in out


@pytest.mark.parametrize("where", ["proc", "file"])
def test_an_unusable_cache_dir_is_one_line_and_exit_2(
    where: str, project: Path, capsys: Any
) -> None:
    cache = Path("/proc/chunkeval-x") if where == "proc" else project / "a.md"
    assert main(_eval_args(project, cache)) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"chunkeval eval: error: the cache directory {cache} ")
    assert err.endswith(
        "; set --cache-dir (or CHUNKEVAL_CACHE_DIR) to a writable directory\n"
    )
    assert err.count("\n") == 1


def test_a_read_only_cache_warns_and_runs_uncached(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from pytest_chunkeval.util import files

    cache = project / "cache"
    cache.mkdir()
    monkeypatch.setattr(files, "directory_writable", lambda path: False)
    assert main(_eval_args(project, cache)) == 0
    err = capsys.readouterr().err
    assert err == (
        f"chunkeval eval: warning: chunkeval cache: {cache} is read-only: cached "
        "entries are used, new ones are not stored (set --cache-dir (or "
        "CHUNKEVAL_CACHE_DIR) to a writable directory to keep them)\n"
    )
    assert list(cache.iterdir()) == []


def test_cache_clear_on_a_read_only_cache_is_one_line(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    cache = project / "cache"
    assert main(_eval_args(project, cache)) == 0
    capsys.readouterr()

    def refuse(self: Path, *args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))

    monkeypatch.setattr(Path, "unlink", refuse)
    assert main(["cache", "clear", "--cache-dir", str(cache)]) == 2
    assert capsys.readouterr().err == (
        f"chunkeval cache: error: cannot clear the cache in {cache}: "
        "Read-only file system\n"
    )


def test_json_into_a_directory_is_refused_before_evaluating(
    project: Path, capsys: Any
) -> None:
    assert main(eval_args(project, "--json", str(project))) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"chunkeval eval: error: --json {project} is a directory: give a file to "
        "write\n"
    )
    assert captured.out == ""  # nothing was evaluated


def test_rerank_on_a_folder_that_is_not_a_model_is_one_line(
    project: Path, capsys: Any
) -> None:
    pytest.importorskip("sentence_transformers")
    folder = project / "not-a-model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    assert main(eval_args(project, "--rerank", f"cross-encoder:{folder}")) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"chunkeval eval: error: cannot load cross-encoder '{folder}' "
    ), err
    assert err.count("\n") == 1


def test_a_history_line_of_the_wrong_shape_is_named(project: Path, capsys: Any) -> None:
    history = project / "history.jsonl"
    record = {"chunkeval_history": 1, "config": "x", "metrics": {}}
    history.write_text(json.dumps(record) + "\n")
    out = project / "report.html"
    assert main(["report", str(history), "--html", str(out)]) == 2
    assert capsys.readouterr().err == (
        f"chunkeval report: error: {history}:1: not a chunkeval history record "
        "('config' is str, not an object); fix or delete that line\n"
    )


@pytest.mark.parametrize(
    "command",
    [
        ["eval"],
        ["judge", "--judge", "llm:m", "--dry-run", "--out", "judged.jsonl"],
        ["relationships", "--extractor", "llm:m"],
        ["inspect"],
    ],
    ids=lambda c: c[0],
)
def test_every_command_checks_its_cache_dir(
    command: list[str],
    project: Path,
    capsys: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(project)
    data = ["--corpus", "a.md", "b.md", "--queries", "queries.jsonl"]
    assert main([*command, *data, "--cache-dir", "/proc/chunkeval-x"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"chunkeval {command[0]}: error: the cache directory /proc/chunkeval-x "
        "cannot be used (No such file or directory); set --cache-dir (or "
        "CHUNKEVAL_CACHE_DIR) to a writable directory\n"
    )


def test_cache_info_on_a_file_is_one_line(project: Path, capsys: Any) -> None:
    assert main(["cache", "info", "--cache-dir", str(project / "a.md")]) == 2
    assert capsys.readouterr().err == (
        f"chunkeval cache: error: the cache directory {project / 'a.md'} is a file\n"
    )


def test_a_query_whose_document_is_not_in_the_file_given_names_that_file(
    project: Path, capsys: Any
) -> None:
    # one file as the corpus: its name is its folder's, the message the file's
    args = eval_args(project)
    args[args.index("--corpus") + 2 : args.index("--queries")] = []
    assert main(args) == 2
    given = project / "a.md"
    err = capsys.readouterr().err
    assert f"cannot be placed in corpus {given}:" in err
    assert (
        f"query 'q2' ('What does the Moon have?'): document 'b.md' is not in the "
        f"corpus {given} (by id, file name or stem); documents: 'a.md'" in err
    )
    assert f"corpus {project.name!r}" not in err
