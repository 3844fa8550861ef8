"""The history file names the query file relative to the rootdir (issue 34: it
stored the runner's absolute path), and lines written before with an absolute
path still read, relative too when the rootdir is given."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.plugin_project import run, write_project

from pytest_chunkeval.reporting.history import read_history, relative_config

TEST = """
def test_whole(chunkeval):
    chunkeval.evaluate("recursive:30:0")
"""


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def test_the_history_file_names_the_query_file_relative_to_the_rootdir(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_project(pytester.path)
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(pytester.path / "cache"))
    pytester.makepyfile(test_it=TEST)
    history = pytester.path / "hist.jsonl"
    run(pytester, f"--chunkeval-history={history}").assert_outcomes(passed=1)
    [first] = _lines(history)
    assert first["config"]["queries"] == "queries.jsonl"
    # an older version's line: the same record with the absolute path
    old = {
        **first,
        "config": {
            **first["config"],
            "queries": str(pytester.path / "queries.jsonl"),
        },
        "run": "0ld0ld0ld0ld",
    }
    history.write_text(json.dumps(old) + "\n")
    html = pytester.path / "report.html"
    done = run(pytester, f"--chunkeval-history={history}", f"--chunkeval-html={html}")
    done.assert_outcomes(passed=1)
    assert "ERROR" not in done.stdout.str()
    written = _lines(history)
    assert len(written) == 2
    assert written[1]["config"]["queries"] == "queries.jsonl"
    assert html.exists()
    as_given = read_history(history)
    assert as_given[0]["config"]["queries"] == str(pytester.path / "queries.jsonl")
    relative = read_history(history, rootdir=pytester.path)
    assert [r["config"]["queries"] for r in relative] == ["queries.jsonl"] * 2


def test_a_path_outside_the_rootdir_is_kept_as_given(tmp_path: Path) -> None:
    config = {"queries": "/elsewhere/q.jsonl", "chunker": "x"}
    assert relative_config(config, tmp_path / "root") == config
    inside = {"queries": str(tmp_path / "root" / "sub" / "q.jsonl")}
    assert relative_config(inside, tmp_path / "root") == {"queries": "sub/q.jsonl"}
    assert relative_config({"queries": "q.jsonl"}, tmp_path) == {"queries": "q.jsonl"}
    assert relative_config(inside, None) == inside
