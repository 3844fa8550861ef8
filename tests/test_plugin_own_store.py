"""A store of one's own is one module and one registration, and the plugin
treats it by what it declares (docs/stores.md "What a store declares"), as it
treats the built-in ones: the baseline records its ``portable_name``, its loss
against exact search is measured, and ``xdist_safe = False`` refuses ``-n``
with the store's own reason."""

from __future__ import annotations

import json

import pytest
from support.plugin_project import CONFTEST, DIST, INI, run, write_project

TEAM_STORE = """

import numpy as np
import pytest


class WorstFirst:
    def __init__(self, vectors):
        self.vectors = vectors

    def search(self, queries, k):
        order = np.argsort(queries @ self.vectors.T, axis=1, kind="stable")
        return order[:, :k]  # the least similar first: an index that loses


class TeamStore:
    name = "team+http://10.1.2.3:7000?m=4"
    portable_name = "team?m=4"
    xdist_safe = False
    xdist_reason = "the team index is one file: run it without -n"
    cache_version = "1"

    def index(self, key, vectors):
        return WorstFirst(vectors)


@pytest.hookimpl(optionalhook=True)
def pytest_chunkeval_register_stores(registry):
    registry.register("team", lambda rest: TeamStore(), "team")
"""

TEST = """
def test_rag(chunkeval, chunkeval_chunker):
    chunkeval.check_baseline(chunkeval.evaluate())
"""


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(pytester.path / "cache"))
    ini = INI.replace("chunkeval_store = exact", "chunkeval_store = team")
    ini = ini.replace("recursive:30:0 recursive:60:0", "recursive:30:0")
    write_project(pytester.path, ini, conftest=CONFTEST + TEAM_STORE)
    pytester.makepyfile(test_rag=TEST)
    return pytester


def test_the_baseline_records_its_portable_name_and_its_loss_is_measured(project):
    result = run(project, "--chunkeval-update", "--chunkeval-json=report.json")
    result.assert_outcomes(passed=1)
    baselines = [p for p in project.path.rglob("*.json") if "__chunkeval__" in p.parts]
    assert baselines
    for path in baselines:
        text = path.read_text()
        assert "team?m=4" in text
        assert "10.1.2.3" not in text
    # measured against exact search on the same vectors: the worst-first index
    # loses every question exact search answers
    report = json.loads((project.path / "report.json").read_text())
    loss = report["results"][0]["result"]["loss"]
    assert loss["exact_recall"]["mean"] == 1.0
    assert loss["approximation"]["mean"] == 1.0


def test_a_store_declaring_itself_unsafe_is_refused_under_xdist(
    project, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # -p loads them
    result = project.runpytest_subprocess(*DIST)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*team: the team index is one file: run it without -n*"]
    )
