"""The history file: records, concurrent appends, reading, git information."""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from support.fake_results import make_result

from pytest_chunkeval.reporting.git_info import GitInfo, git_info
from pytest_chunkeval.reporting.history import (
    HistoryError,
    HistoryWarning,
    append_history,
    commit_key,
    commits,
    history_record,
    read_history,
    run_key,
    runs,
)

WHEN = datetime(2025, 5, 1, 12, 0, tzinfo=timezone.utc)


def _record() -> dict[str, Any]:
    result = make_result([1.0, 0.5, 0.0])
    return history_record(
        result,
        test="tests/test_rag.py::test_x",
        git=GitInfo("a" * 40, "main", False),
        timestamp=WHEN,
        run="5d1c09e2a7f4",
    )


def test_record_holds_git_config_hashes_and_means() -> None:
    record = _record()
    assert record["chunkeval_history"] == 1
    assert record["timestamp"] == "2025-05-01T12:00:00+00:00"
    assert record["git"] == {"commit": "a" * 40, "branch": "main", "dirty": False}
    assert record["config"]["chunker"] == "recursive:200:0"
    assert record["corpus_hash"] == "c" * 64
    assert record["queries_hash"] == "q" * 64
    assert record["metrics"]["recall"] == {"mean": 0.5, "std": 0.408248}
    assert record["groups"]["a.md"]["recall"] == 0.5
    assert record["n"] == 3
    assert record["configuration"] == "recursive:200:0 k=5 token hashing exact"
    json.dumps(record)  # serializable as is


def test_append_and_read_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "history.jsonl"
    assert append_history(path, [_record(), _record()]) == 2
    append_history(path, [_record()])
    lines = path.read_text().splitlines()
    assert len(lines) == 3
    sorted_start = '{"chunkeval_history":1,"chunks"'  # keys are sorted
    assert all(line.startswith(sorted_start) for line in lines)
    records = read_history(path)
    assert records == [json.loads(line) for line in lines]


def _append_many(path: str, worker: int, count: int) -> None:
    big = "x" * 20_000  # larger than a pipe buffer: interleaving would show
    for i in range(count):
        append_history(
            path, [{"chunkeval_history": 1, "w": worker, "i": i, "pad": big}]
        )


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=_append_many, args=(str(path), w, 40)) for w in range(4)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    records = read_history(path)
    assert len(records) == 160
    assert sorted((r["w"], r["i"]) for r in records) == [
        (w, i) for w in range(4) for i in range(40)
    ]


def test_torn_last_line_is_skipped_but_a_bad_middle_line_is_an_error(
    tmp_path: Path,
) -> None:
    path = tmp_path / "history.jsonl"
    append_history(path, [_record()])
    with path.open("a") as fh:
        fh.write('{"chunkeval_history": 1, "tim')
    assert len(read_history(path)) == 1
    with path.open("a") as fh:
        fh.write("\n")
    append_history(path, [_record()])
    with pytest.raises(HistoryError, match=rf"{path}:2: not valid JSON"):
        read_history(path)


def test_next_append_repairs_a_torn_last_line(tmp_path: Path) -> None:
    # A run killed mid-append leaves a torn line; the next run's append must not
    # bury it mid-file, where every later read would fail.
    path = tmp_path / "history.jsonl"
    append_history(path, [_record()])
    whole = path.read_bytes()
    with path.open("ab") as fh:
        fh.write('{"chunkeval_history":1,"label":"café'.encode()[:-1])
    assert len(read_history(path)) == 1  # a cut character too: still readable
    with pytest.warns(HistoryWarning, match=rf"{path}: cut an incomplete last line"):
        assert append_history(path, [_record(), _record()]) == 2
    assert read_history(path) == [_record()] * 3
    assert path.read_bytes() == whole * 3
    # Told to a callback instead of warned, when one is given.
    with path.open("a") as fh:
        fh.write('{"chunkeval_h')
    notes: list[str] = []
    append_history(path, [_record()], note=notes.append)
    assert len(notes) == 1
    assert "incomplete last line (13 bytes" in notes[0]
    assert len(read_history(path)) == 4


def test_complete_last_line_without_newline_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    append_history(path, [_record()])
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # e.g. edited by hand
    assert len(read_history(path)) == 1
    append_history(path, [_record()])  # no warning (warnings are errors here)
    assert len(read_history(path)) == 2
    assert len(path.read_text().splitlines()) == 2


def test_foreign_lines_and_missing_files_are_errors(tmp_path: Path) -> None:
    path = tmp_path / "history.jsonl"
    path.write_text('{"something": "else"}\n')
    with pytest.raises(HistoryError, match=r":1: not a chunkeval history record"):
        read_history(path)
    with pytest.raises(HistoryError, match="does not exist"):
        read_history(tmp_path / "nope.jsonl")


def test_commit_keys_in_order_of_first_appearance() -> None:
    a = {"git": {"commit": "1" * 40, "dirty": False}}
    b = {"git": {"commit": "2" * 40, "dirty": True}}
    none = {"git": {"commit": None}}
    assert commit_key(b) == "2222222+"
    assert commits([a, b, a, none]) == ["1111111", "2222222+", "no-git"]


def test_every_run_is_a_point_and_a_commits_runs_stay_together() -> None:
    def record(commit: str, run: str) -> dict[str, Any]:
        return {"git": {"commit": commit * 40, "dirty": False}, "run": run}

    a1, b1, a2 = record("1", "r1"), record("2", "r2"), record("1", "r3")
    # two runs of commit 1 are two points, grouped before commit 2's run
    assert runs([a1, b1, a2, a1]) == [
        ("1111111", "r1"),
        ("1111111", "r3"),
        ("2222222", "r2"),
    ]
    # records written before run ids: one run's records share a timestamp
    old = {"git": {"commit": "3" * 40}, "timestamp": "2025-01-01T00:00:00+00:00"}
    assert run_key(old) == ("3333333", "2025-01-01T00:00:00+00:00")


def test_history_plot_draws_each_run_of_a_commit() -> None:
    from pytest_chunkeval.reporting.svg import history_svg

    base = history_record(make_result([1.0]), git=GitInfo("1" * 40, "main", False))
    records = [{**base, "run": "r1"}, {**base, "run": "r2"}]
    svg = history_svg(records, "recall", {})
    assert svg.count('<circle class="mark"') == 2
    assert svg.count(">1111111</text>") == 1  # one commit label for its two runs


# ------------------------------------------------------------------ git

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@e", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@needs_git
def test_git_info_commit_branch_and_dirty(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "feature")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT", "CI_"))}
    env.pop("GITHUB_HEAD_REF", None)
    env.pop("GITHUB_REF_NAME", None)
    initial = git_info(repo, environ=env)
    assert initial == GitInfo(None, "feature", False)
    (repo / "a.txt").write_text("one\n")
    _git(repo, "add", "a.txt")
    _git(repo, "commit", "-q", "-m", "one")
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout.strip()
    assert git_info(repo, environ=env) == GitInfo(head, "feature", False)
    (repo / "untracked.txt").write_text("x")
    assert git_info(repo, environ=env).dirty is False
    (repo / "a.txt").write_text("two\n")
    assert git_info(repo, environ=env).dirty is True
    (repo / "a.txt").write_text("one\n")
    _git(repo, "checkout", "-q", "--detach")
    detached = git_info(repo, environ={**env, "GITHUB_REF_NAME": "release"})
    assert detached.branch == "release"
    assert detached.commit == head
    # the plugin's own outputs (history, reports) do not make a tree dirty
    (repo / "a.txt").write_text("one\n")
    (repo / "history.jsonl").write_text("{}\n")
    _git(repo, "add", "history.jsonl")
    _git(repo, "commit", "-q", "-m", "history")
    (repo / "history.jsonl").write_text("{}\n{}\n")
    assert git_info(repo, environ=env).dirty is True
    own = (repo / "history.jsonl").resolve()
    assert (
        git_info(repo, environ=env, ignore=lambda p: p.resolve() == own).dirty is False
    )
    (repo / "a.txt").write_text("three\n")
    assert (
        git_info(repo, environ=env, ignore=lambda p: p.resolve() == own).dirty is True
    )


def test_git_absent_or_outside_a_repository(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path / "empty-bin"), "GITHUB_REF_NAME": "ci-branch"}
    assert git_info(tmp_path, environ=env) == GitInfo(None, "ci-branch", None)
    if shutil.which("git"):
        outside = git_info(tmp_path, environ={**os.environ, "GIT_DIR": "/nonexistent"})
        assert outside.commit is None
        assert outside.dirty is None


def test_a_hanging_git_is_given_up_on(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text("#!/bin/sh\nsleep 10\n")
    fake.chmod(0o755)
    info = git_info(tmp_path, timeout=0.3, environ={"PATH": str(bin_dir)})
    assert info == GitInfo()
