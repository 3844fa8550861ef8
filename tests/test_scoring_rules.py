"""Versioned scoring rules (docs/baselines.md, "Scoring rules"): every result
records them; a baseline recorded under other rules is compared as a named
configuration change, judged like any other; the ``copies`` setting everywhere."""

from __future__ import annotations

import pytest
from support.fake_results import make_result
from support.plugin_project import run, write_project

from pytest_chunkeval.config.evaluation import EvaluationSpec
from pytest_chunkeval.config.options import OPTIONS_BY_NAME, resolve_settings
from pytest_chunkeval.config.scoring import SCORING_RULES, check_copies, parse_copies
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.gate.comparison.changes import baseline_changes
from pytest_chunkeval.gate.comparison.compare import compare
from pytest_chunkeval.gate.files.baseline import Baseline
from pytest_chunkeval.gate.tolerances import GateSettings
from pytest_chunkeval.run.marker import MARKER_KEYWORDS

NOW = {"scoring_rules": SCORING_RULES}


def test_a_baseline_recorded_under_rules_1_is_compared_and_names_the_change():
    old = Baseline.from_result(make_result([1.0, 1.0, 0.5, 0.0]), "test_x")
    assert "scoring_rules" not in old.config  # written before the rules had a number
    now = make_result([1.0, 1.0, 0.5, 0.0], config=NOW)
    changes = baseline_changes(old, now)
    assert [str(c) for c in changes.config] == ["scoring rules: 1 -> 3"]
    assert changes.incomparable == ()
    assert "scoring rules: 1 -> 3" in changes.line()
    report = compare(old, now)  # judged like any other change
    assert report.changes == changes
    assert {c.metric for c in report.checks} >= {"recall"}
    # Recorded under the same rules: nothing to say.
    same = Baseline.from_result(make_result([1.0], config=NOW), "test_x")
    assert baseline_changes(same, make_result([1.0], config=NOW)).config == ()


def test_a_drop_under_the_new_rules_is_still_judged():
    old = Baseline.from_result(make_result([1.0] * 8), "test_x")
    now = make_result([1.0] * 6 + [0.0] * 2, config=NOW)
    report = compare(old, now, GateSettings().override(mode="mean"))
    recall = next(c for c in report.checks if c.metric == "recall")
    assert recall.status == "regressed"
    assert "scoring rules: 1 -> 3" in report.changes.line()


def test_copies_values():
    assert check_copies(" Strict ") == "strict"
    assert parse_copies("any") == "any"
    with pytest.raises(ConfigError, match="'any'"):
        check_copies("first")
    with pytest.raises(ConfigError, match="'strict'"):
        parse_copies("loose")
    assert MARKER_KEYWORDS["copies"]("strict") == "strict"
    with pytest.raises(ConfigError):
        MARKER_KEYWORDS["copies"](True)


def test_copies_from_ini_and_flag_reach_the_run_config(tmp_path):
    option = OPTIONS_BY_NAME["copies"]
    assert (option.ini, option.flag, option.cli_flag) == (
        "chunkeval_copies",
        "--chunkeval-copies",
        "--copies",
    )
    ini = {"chunkeval_copies": "strict"}
    settings = resolve_settings(tmp_path, ini, {}, environ={})
    assert EvaluationSpec.from_settings(settings).copies == "strict"
    flagged = resolve_settings(tmp_path, ini, {"chunkeval_copies": "any"}, environ={})
    run = EvaluationSpec.from_settings(flagged)
    assert run.copies == "any"
    assert EvaluationSpec.from_settings(
        resolve_settings(tmp_path, {}, {}, {})
    ).copies == ("any")
    assert run != EvaluationSpec.from_settings(settings)


# ------------------------------------------------------------------- plugin

COPIES_TEST = """
import pytest

def common_word(question):
    return [" the "]  # in every document, many times

def test_ini(chunkeval):
    chunkeval.score(common_word, label="w")

@pytest.mark.chunkeval(copies="any")
def test_marker_any(chunkeval):
    result = chunkeval.score(common_word, label="w")
    assert result.config["scoring_rules"] == 3
    assert "copies" not in result.config

def test_call_any(chunkeval):
    chunkeval.score(common_word, label="w", copies="any")
"""


def test_copies_reaches_the_plugin(pytester: pytest.Pytester, monkeypatch) -> None:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    pytester.makepyfile(test_identical_text=COPIES_TEST)
    run(pytester).assert_outcomes(passed=3)  # any: the default
    ini = (pytester.path / "pytest.ini").read_text()
    (pytester.path / "pytest.ini").write_text(ini + "chunkeval_copies = strict\n")
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(["*occurs * times in the corpus*ambiguous*"])
    (pytester.path / "pytest.ini").write_text(ini)
    result = run(pytester, "--chunkeval-copies=strict", "-k", "test_ini")
    result.assert_outcomes(failed=1, deselected=2)
    result = run(pytester, "--chunkeval-copies=first")
    result.stderr.fnmatch_lines(["*--chunkeval-copies*copies must be*"])
