"""Where a run's code came from, for the history file
(:mod:`~pytest_chunkeval.reporting.history`, docs/baselines.md "History"): the
commit, the branch (from CI's variables on a detached HEAD) and whether the
work tree holds tracked changes, from one ``git status`` call that never
blocks a run (a timeout; without git, the fields it could not learn are
``None``)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GIT_TIMEOUT_SECONDS = 3.0
# CI systems check out a detached HEAD; their variables still name the branch.
BRANCH_ENV = ("GITHUB_HEAD_REF", "GITHUB_REF_NAME", "CI_COMMIT_REF_NAME")


@dataclass(frozen=True)
class GitInfo:
    """Where the code under test came from; fields are ``None`` outside git."""

    commit: str | None = None
    branch: str | None = None
    dirty: bool | None = None

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "branch": self.branch, "dirty": self.dirty}


def git_info(
    cwd: str | os.PathLike[str] | None = None,
    *,
    timeout: float = GIT_TIMEOUT_SECONDS,
    environ: Mapping[str, str] | None = None,
    ignore: Callable[[Path], bool] | None = None,
) -> GitInfo:
    """Commit, branch and dirty flag of the work tree at ``cwd``, from one
    ``git status --porcelain=v2 --branch`` call. Without git, outside a
    repository, or when git hangs: the fields it could not learn are ``None``.
    Tracked changes make a tree dirty; untracked files do not, and neither do
    changed files for which ``ignore(absolute path)`` is true (the plugin's own
    outputs: a committed history file that every run appends to is not a change
    to the code under test)."""
    env = os.environ if environ is None else environ
    status = [
        "status",
        "--porcelain=v2",
        "--branch",
        "--untracked-files=no",
        "--no-renames",
    ]
    proc = _git([*status, "-z"], cwd, env, timeout)
    if proc is None:
        return GitInfo(branch=_env_branch(env))
    commit = branch = None
    dirty = False
    top: Path | None = None
    for line in proc.stdout.split("\0"):
        if line.startswith("# branch.oid "):
            value = line.removeprefix("# branch.oid ").strip()
            commit = None if value == "(initial)" else value
        elif line.startswith("# branch.head "):
            value = line.removeprefix("# branch.head ").strip()
            branch = None if value == "(detached)" else value
        elif line and not line.startswith("#") and not dirty:
            path = _changed_path(line)
            if ignore is None or path is None:
                dirty = True
                continue
            if top is None:
                top = _toplevel(cwd, env, timeout)
            dirty = top is None or not ignore(top / path)
    return GitInfo(commit, branch or _env_branch(env), dirty)


# Fields before the path in `git status --porcelain=v2` entries: ordinary (1),
# unmerged (u). Renames (2) are off (--no-renames).
_PATH_FIELD = {"1": 8, "u": 10}


def _changed_path(entry: str) -> str | None:
    fields = _PATH_FIELD.get(entry[:1])
    if fields is None:
        return None
    parts = entry.split(" ", fields)
    return parts[fields] if len(parts) > fields else None


def _toplevel(
    cwd: str | os.PathLike[str] | None, env: Mapping[str, str], timeout: float
) -> Path | None:
    proc = _git(["rev-parse", "--show-toplevel"], cwd, env, timeout)
    return None if proc is None else Path(proc.stdout.strip())


def _git(
    args: list[str],
    cwd: str | os.PathLike[str] | None,
    env: Mapping[str, str],
    timeout: float,
) -> subprocess.CompletedProcess[str] | None:
    """One git command, read-only (no optional locks) in the C locale; None when git
    is missing, times out or fails."""
    try:
        proc = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={**env, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc if proc.returncode == 0 else None


def _env_branch(env: Mapping[str, str]) -> str | None:
    for name in BRANCH_ENV:
        if env.get(name):
            return env[name]
    return None
