"""The pytest plugin under faults, without raw tracebacks (a full disk under the
cache, a history line of the wrong shape). The CLI's cases are in
``test_cli_faults.py``."""

from __future__ import annotations

import errno
import json
import os
import sys
from pathlib import Path

import pytest
from support.full_disk import UNSHARE
from support.plugin_project import FAST, run, write_project

TWO_TESTS = """
def test_a(chunkeval):
    chunkeval.evaluate("recursive:30:0")

def test_b(chunkeval):
    chunkeval.evaluate("recursive:60:0")
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    return pytester.path


def _full_run(how: str, pytester: pytest.Pytester, cache: Path) -> str:
    """The output of a run whose cache disk is full (both tests passed)."""
    pytester.makepyfile(test_full=TWO_TESTS)
    args = [*FAST, "-W", "default::UserWarning", f"--chunkeval-cache-dir={cache}"]
    if how == "tmpfs":
        command = " ".join(f"'{a}'" for a in (sys.executable, "-m", "pytest", *args))
        script = (
            f"mount -t tmpfs -o size=64k tmpfs '{cache}' && "
            f"(head -c 1M /dev/zero > '{cache}/filler' 2>/dev/null; true) && "
            f"cd '{pytester.path}' && {command}"
        )
        result = pytester.run("unshare", "-m", "sh", "-c", script)
    else:
        real_replace = os.replace

        def replace(src: object, dst: object, **kwargs: object) -> None:
            if str(dst).startswith(str(cache)):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))
            real_replace(src, dst, **kwargs)  # type: ignore[arg-type]

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(os, "replace", replace)
            result = run(pytester, *args[len(FAST) :])
    result.assert_outcomes(passed=2)
    return result.stdout.str()


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
def test_a_full_disk_under_the_cache_warns_and_the_tests_run_uncached(
    how: str, pytester: pytest.Pytester, project: Path
) -> None:
    cache = project / "cache"
    cache.mkdir()
    output = _full_run(how, pytester, cache)
    # the chunkings are the first entries stored; one warning for the directory
    assert f"chunkeval cache: cannot store token bounds in {cache} (No space" in output
    assert output.count("chunkeval cache: cannot store") == 1
    # The plugin's settings, not the CLI's flag.
    assert "or set chunkeval_cache_dir / --chunkeval-cache-dir (or " in output
    assert " --cache-dir" not in output
    assert "Traceback" not in output
    assert "Errno 28" not in output


def test_a_history_line_of_the_wrong_shape_is_one_line_and_reports_are_written(
    pytester: pytest.Pytester, project: Path
) -> None:
    history = project / "history.jsonl"
    record = {"chunkeval_history": 1, "config": "x"}
    history.write_text(json.dumps(record) + "\n")
    pytester.makepyfile(test_h=TWO_TESTS)
    result = run(
        pytester,
        f"--chunkeval-history={history}",
        "--chunkeval-html=report.html",
        "--chunkeval-json=report.json",
    )
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            f"ERROR: could not write the HTML report *report.html: {history}:1: not a "
            "chunkeval history record ('config' is str, not an object); fix or "
            "delete that line*"
        ]
    )
    assert (project / "report.json").is_file()
    assert "Traceback" not in result.stdout.str()
    assert "AttributeError" not in result.stdout.str() + result.stderr.str()
