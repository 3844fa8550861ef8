"""Baselines through the plugin, end to end with pytester: create, pass, regress,
update, improve; configuration drift; corrupt files; unused files; the marker; and
the same lifecycle under pytest-xdist.

The inner projects use the ``paragraphs`` chunker their conftest registers: one
chunk per paragraph, except that ``CHUNKEVAL_TEST_KEEP=Pets`` reduces every other
document to its heading. With ``k=50`` every chunk is retrieved, so recall is
exactly the share of excerpts the chunks still contain: 100% for all six queries,
or 33% (the two pets questions) when only Pets is kept. The chunker's name, and so
the configuration, is the same either way: that is a metric regression, not drift.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.baseline_project import (
    BASELINE,
    BASELINE_CONFTEST,
    BASELINE_INI,
    KEEP,
    TEST_RAG,
    baseline_file,
)
from support.plugin_project import (
    DIST,
    MODES,
    run,
    summary_section,
    write_project,
)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv(KEEP, raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    write_project(pytester.path, BASELINE_INI, conftest=BASELINE_CONFTEST)
    return pytester.path


# ------------------------------------------------------------------ lifecycle


@pytest.mark.compat_smoke
def test_lifecycle(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_rag=TEST_RAG)
    baseline = project / BASELINE

    # No baseline yet: the test fails with the command that creates it.
    missing = run(pytester)
    missing.assert_outcomes(failed=1)
    missing.stdout.fnmatch_lines(
        [
            f"E * no baseline for test_rag.py::test_rag: {BASELINE} does not exist. "
            "Create it with:",
            "E *   pytest --chunkeval-update test_rag.py::test_rag",
        ]
    )
    assert "baselines: 1 missing" in summary_section(missing)
    assert not baseline.exists()

    # --chunkeval-update writes it.
    created = run(pytester, "--chunkeval-update")
    created.assert_outcomes(passed=1)
    assert f"created {BASELINE}" in summary_section(created)
    data = json.loads(baseline.read_text())
    assert data["chunkeval_baseline"] == 5
    assert data["test"] == "test_rag"
    assert data["config"]["chunker"] == "paragraphs"
    assert data["metrics"]["recall"]["mean"] == 1.0
    assert sorted(data["queries"]) == [
        "q-audit",
        "q-bark",
        "q-margin",
        "q-mars",
        "q-parrot",
        "q-tides",
    ]
    recorded = baseline.read_bytes()

    # The same run passes.
    passed = run(pytester)
    passed.assert_outcomes(passed=1)
    assert "baselines: 1 ok" in summary_section(passed)

    # Worse retrieval under the same configuration: the paired gate fails the test.
    monkeypatch.setenv(KEEP, "Pets")
    regressed = run(pytester)
    regressed.assert_outcomes(failed=1)
    regressed.stdout.fnmatch_lines(
        [
            "E * chunkeval baseline regression in test_rag.py::test_rag",
            "E *   recall got worse: mean delta -66.67 points, CI [[]*[]], beyond the "
            "tolerance -1pp (-1.00 points)",
            f"E * baseline: {BASELINE}",
            "E * changes over 6 questions: the mean change against the tolerance "
            "plus z 1.64 SEs of noise (no noise found: SE 0); sampling view: "
            "bootstrap CI of the mean delta (10000 resamples, seed 0), 95% "
            "confidence*",
            "E * recall *100.00*33.33*-66.67*REGRESSED",
            "E * queries whose recall got worse the most (4 of 6 queries changed):",
            "E *   q-margin *100.00 → 0.00  What was the operating margin?",
            "E * If the new numbers are intended, update the baseline:",
            "E *   pytest --chunkeval-update test_rag.py::test_rag",
        ]
    )
    assert "baselines: 1 regressed" in summary_section(regressed)
    assert baseline.read_bytes() == recorded  # never rewritten without the flag

    # Accepting the worse numbers: the summary says what moved.
    updated = run(pytester, "--chunkeval-update")
    updated.assert_outcomes(passed=1)
    assert f"updated {BASELINE}: recall 100.00 -> 33.33" in summary_section(updated)
    assert json.loads(baseline.read_text())["metrics"]["recall"]["mean"] == 0.333333

    # Better than the baseline: passes, with the hint to record it.
    monkeypatch.delenv(KEEP)
    improved = run(pytester)
    improved.assert_outcomes(passed=1)
    summary = summary_section(improved)
    assert "baselines: 1 improved" in summary
    assert re.search(
        r"test_rag\.py::test_rag: recall improved: mean delta \+66\.67 points, "
        r"CI \[\+\d+\.\d\d, \+\d+\.\d\d\]\. Record the new baseline with: "
        r"pytest --chunkeval-update test_rag\.py::test_rag",
        summary,
    ), summary

    # Record it, and the next run passes; an unchanged file is not rewritten.
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    assert baseline.read_bytes() == recorded
    unchanged = run(pytester, "--chunkeval-update")
    assert "baselines: 1 unchanged" in summary_section(unchanged)
    run(pytester).assert_outcomes(passed=1)


def test_call_tolerance_mode_and_confidence(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_calls="""
        import pytest

        def test_loose(chunkeval):
            chunkeval.check_baseline(
                chunkeval.evaluate("paragraphs"), tolerance={"recall": "-70pp"}
            )

        def test_mean(chunkeval):
            chunkeval.check_baseline(
                chunkeval.evaluate("paragraphs"), mode="mean", confidence="99%"
            )

        def test_bad_value(chunkeval):
            with pytest.raises(ValueError, match="check_baseline: bad gate mode"):
                chunkeval.check_baseline(chunkeval.evaluate("paragraphs"), mode="x")
        """
    )
    run(pytester, "--chunkeval-update").assert_outcomes(passed=3)
    monkeypatch.setenv(KEEP, "Pets")
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_mean _*",
            "E * recall got worse: 100.00 -> 33.33, beyond the tolerance -1pp*",
            "E * means compared against the tolerance (mode 'mean')",
            "E * metric  baseline    now   delta  99% CI  tolerance    verdict",
        ]
    )
    # The session's tolerance comes from ini; a flag replaces it.
    assert run(pytester, "--chunkeval-tolerance=recall:-70pp").ret == 0


def test_a_configuration_change_is_compared_and_named(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_rag="""
        import os

        def test_rag(chunkeval):
            spec = os.environ.get("SPEC", "recursive:30:0")
            chunkeval.check_baseline(chunkeval.evaluate(spec))
        """
    )
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    recorded = (project / BASELINE).read_bytes()

    # Another chunker and an added question: judged on the shared questions.
    monkeypatch.setenv("SPEC", "paragraphs")
    with (project / "queries.jsonl").open("a") as fh:
        record = {
            "id": "q-jupiter",
            "question": "Which is the largest planet?",
            "doc_id": "space.md",
            "excerpts": [
                {"text": "Jupiter is the largest planet of the solar system."}
            ],
        }
        fh.write(json.dumps(record) + "\n")
    changed = run(pytester)
    changed.assert_outcomes(passed=1)
    summary = summary_section(changed)
    assert (
        "test_rag.py::test_rag: passed against its baseline across changes "
        "(recall +0.00 points, CI [+0.00, +0.00]: within tolerance):\n"
        "    chunker: recursive:30:0 -> paragraphs\n"
        "    questions added: 1 (q-jupiter)\n"
        "    compared on the 6 questions both runs have\n"
        "    record the new baseline with: pytest --chunkeval-update "
        "test_rag.py::test_rag" in summary
    ), summary
    assert (project / BASELINE).read_bytes() == recorded

    updated = run(pytester, "--chunkeval-update")
    updated.assert_outcomes(passed=1)
    assert "chunker: recursive:30:0 -> paragraphs" in summary_section(updated)
    assert "questions added: 1 (q-jupiter)" in summary_section(updated)
    assert "q-jupiter" in json.loads((project / BASELINE).read_text())["queries"]
    assert "across changes" not in summary_section(run(pytester))

    # Another unit: the numbers are other quantities, so that alone is refused.
    refused = run(pytester, "--chunkeval-unit", "token")
    refused.assert_outcomes(failed=1)
    refused.stdout.fnmatch_lines(
        [
            f"E * baseline {BASELINE}: the numbers cannot be compared: unit: char "
            "-> token (another unit of measurement, so other quantities)",
            "E * If the change is intended, re-record the baseline:",
            "E *   pytest --chunkeval-update test_rag.py::test_rag",
        ]
    )
    assert "baselines: 1 mismatch" in summary_section(refused)


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "invalid JSON at line 1 column 2"),
        (
            '{"chunkeval_baseline": 99}',
            "not a baseline this version can read: it is schema version 99, "
            "this pytest-chunkeval reads versions 1, 2, 3, 4, 5, 6",
        ),
    ],
)
def test_corrupt_file(
    pytester: pytest.Pytester, project: Path, content: str, problem: str
) -> None:
    pytester.makepyfile(test_rag=TEST_RAG)
    path = project / BASELINE
    path.parent.mkdir(parents=True)
    path.write_text(content)
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"E * baseline {path} is unreadable: {problem}",
            "E * It is left untouched; regenerate it with:",
            "E *   pytest --chunkeval-update test_rag.py::test_rag",
        ]
    )
    assert path.read_text() == content
    assert "baselines: 1 corrupt" in summary_section(result)

    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    assert json.loads(path.read_text())["chunkeval_baseline"] == 5
    run(pytester).assert_outcomes(passed=1)


# --------------------------------------------------------------------- unused


def test_unused_baselines(pytester: pytest.Pytester, project: Path) -> None:
    two = """
    def test_a(chunkeval):
        chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))

    def test_b(chunkeval):
        chunkeval.check_baseline(chunkeval.evaluate("recursive:30:0"))
    """
    pytester.makepyfile(test_rag=two)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=2)
    file_b = project / "__chunkeval__" / "test_rag" / "test_b.json"
    assert file_b.is_file()

    # A deselected test keeps its baseline: it may use it again.
    deselected = run(pytester, "-k", "test_a", "--chunkeval-fail-unused")
    assert deselected.ret == 0
    assert "unused" not in summary_section(deselected)

    # test_b is gone: its file is listed, the run still passes...
    pytester.makepyfile(test_rag=two.split("def test_b")[0])
    listed = run(pytester)
    listed.assert_outcomes(passed=1)
    assert listed.ret == 0
    summary = summary_section(listed)
    assert (
        "1 unused baseline(s) (no test used them; `pytest --chunkeval-update` "
        "removes them):\n  __chunkeval__/test_rag/test_b.json" in summary
    )

    # ...unless unused baselines are failures (flag or ini), as syrupy does.
    failing = run(pytester, "--chunkeval-fail-unused")
    failing.assert_outcomes(passed=1)
    assert failing.ret == pytest.ExitCode.TESTS_FAILED
    assert "unused baselines fail this run" in summary_section(failing)
    (project / "pytest.ini").write_text(BASELINE_INI + "chunkeval_fail_unused = true\n")
    assert run(pytester).ret == pytest.ExitCode.TESTS_FAILED

    # A run that uses no chunkeval fixture at all still finds them.
    pytester.makepyfile(test_rag="def test_a():\n    pass\n")
    plain = run(pytester)
    assert plain.ret == pytest.ExitCode.TESTS_FAILED
    assert "test_rag/test_a.json" in summary_section(plain)

    # --chunkeval-update deletes them, and the folders they leave empty.
    removed = run(pytester, "--chunkeval-update")
    assert removed.ret == 0
    assert "removed 2 unused baseline(s):" in summary_section(removed)
    assert not (project / "__chunkeval__").exists()
    assert run(pytester).ret == 0


def test_update_by_node_id_keeps_the_siblings(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        test_rag="""
        import pytest

        def test_a(chunkeval):
            chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))

        @pytest.mark.parametrize("spec", ["recursive:30:0", "recursive:60:0"])
        def test_c(chunkeval, spec):
            chunkeval.check_baseline(chunkeval.evaluate(spec))
        """
    )
    run(pytester, "--chunkeval-update").assert_outcomes(passed=3)
    folder = project / "__chunkeval__" / "test_rag"
    stale = folder / "test_gone.json"  # a test that no longer exists
    stale.write_text((folder / "test_a.json").read_text())
    target = folder / baseline_file("test_c[recursive:60:0]")
    target.unlink()
    siblings = sorted(p.name for p in folder.iterdir())
    assert siblings == [
        "test_a.json",
        baseline_file("test_c[recursive:30:0]"),
        "test_gone.json",
    ]

    # The failure prints the command that updates that one test; running it
    # collects only that test, and the module's other files are not "unused".
    missing = run(pytester, "test_rag.py::test_c[recursive:60:0]")
    missing.assert_outcomes(failed=1)
    command = "pytest --chunkeval-update 'test_rag.py::test_c[recursive:60:0]'"
    assert f"E         {command}\n" in missing.stdout.str()
    one = run(pytester, "--chunkeval-update", "test_rag.py::test_c[recursive:60:0]")
    one.assert_outcomes(passed=1)
    summary = summary_section(one)
    assert "baselines: 1 created" in summary
    assert "removed" not in summary
    assert "unused" not in summary
    assert target.is_file()
    assert sorted(p.name for p in folder.iterdir()) == sorted([*siblings, target.name])

    # Nor do they fail a node-id run under --chunkeval-fail-unused.
    strict = run(pytester, "--chunkeval-fail-unused", "test_rag.py::test_a")
    strict.assert_outcomes(passed=1)
    assert strict.ret == 0
    assert "unused" not in summary_section(strict)

    # The whole module collected: the truly unused file goes, the others stay.
    whole = run(pytester, "--chunkeval-update", "test_rag.py")
    whole.assert_outcomes(passed=3)
    assert "removed 1 unused baseline(s):\n  __chunkeval__/test_rag/test_gone.json" in (
        summary_section(whole)
    )
    assert not stale.exists()
    assert sorted(p.name for p in folder.iterdir()) == [
        "test_a.json",
        baseline_file("test_c[recursive:30:0]"),
        baseline_file("test_c[recursive:60:0]"),
    ]


def test_baseline_dir_setting(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makepyfile(test_rag=TEST_RAG)
    result = run(pytester, "--chunkeval-update", "--chunkeval-baseline-dir=snapshots")
    result.assert_outcomes(passed=1)
    assert (project / "snapshots" / "test_rag" / "test_rag.json").is_file()
    assert not (project / "__chunkeval__").exists()
    (project / "pytest.ini").write_text(
        BASELINE_INI + "chunkeval_baseline_dir = snapshots\n"
    )
    run(pytester).assert_outcomes(passed=1)


# --------------------------------------------------------------------- marker


def test_marker_checks_every_result(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makepyfile(
        test_marked="""
        import pytest

        @pytest.mark.chunkeval(baseline=True)
        def test_two(chunkeval):
            chunkeval.evaluate("paragraphs")
            chunkeval.evaluate("recursive:30:0")
            chunkeval.evaluate("paragraphs")  # the same result: checked once

        @pytest.mark.chunkeval(baseline=True)
        def test_named_and_marked(chunkeval):
            chunkeval.check_baseline(chunkeval.evaluate("paragraphs"), name="finance")
            chunkeval.evaluate("recursive:30:0")

        @pytest.mark.chunkeval(baseline=True)
        def test_nothing(chunkeval):
            pass
        """
    )
    first = run(pytester)
    first.assert_outcomes(failed=3)
    first.stdout.fnmatch_lines(
        [
            "*no baseline for test_marked.py::test_two: "
            "__chunkeval__/test_marked/test_two.json does not exist*",
            "*no baseline for test_marked.py::test_two: "
            "__chunkeval__/test_marked/test_two.2.json does not exist*",
        ]
    )
    first.stdout.fnmatch_lines(
        ["*test_nothing: @pytest.mark.chunkeval(baseline=True) *produced no chunkeval*"]
    )
    run(pytester, "--chunkeval-update").assert_outcomes(passed=2, failed=1)
    folder = project / "__chunkeval__" / "test_marked"
    assert sorted(p.name for p in folder.iterdir()) == [
        "test_named_and_marked.finance.json",
        "test_named_and_marked.json",
        "test_two.2.json",
        "test_two.json",
    ]
    assert json.loads((folder / "test_two.2.json").read_text())["config"][
        "chunker"
    ] == ("recursive:30:0")
    again = run(pytester, "-k", "not nothing")
    again.assert_outcomes(passed=2)
    assert "baselines: 4 ok" in summary_section(again)


UPDATE_ONLY_PASSING = """
import os

import pytest

@pytest.mark.chunkeval(min_recall=0.8)
def test_threshold(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))

def test_plain(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))

def test_asserts(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))
    assert os.environ.get("CHUNKEVAL_TEST_KEEP") is None, "only Pets kept"
"""


@MODES
def test_update_records_only_tests_that_passed_otherwise(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    pytester.makepyfile(test_upd=UPDATE_ONLY_PASSING)

    def update() -> pytest.RunResult:
        if not dist:
            return run(pytester, "--chunkeval-update")
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
        return pytester.runpytest_subprocess(*DIST, "--chunkeval-update")

    update().assert_outcomes(passed=3)
    folder = project / "__chunkeval__" / "test_upd"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert sorted(before) == [
        "test_asserts.json",
        "test_plain.json",
        "test_threshold.json",
    ]

    # Recall falls to 33%: test_threshold misses min_recall=0.8 and test_asserts
    # fails its own assertion, so neither records the regression.
    monkeypatch.setenv(KEEP, "Pets")
    result = update()
    result.assert_outcomes(passed=1, failed=2)
    after = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert after["test_threshold.json"] == before["test_threshold.json"]
    assert after["test_asserts.json"] == before["test_asserts.json"]
    assert after["test_plain.json"] != before["test_plain.json"]
    assert json.loads(after["test_plain.json"])["metrics"]["recall"]["mean"] < 0.34
    summary = summary_section(result)
    assert "baselines: 1 updated, 2 not recorded" in summary, summary
    shown = "__chunkeval__/test_upd"
    assert (
        "not recorded: test_upd.py::test_threshold failed (min_recall=0.8 not met); "
        f"{shown}/test_threshold.json is left as it was"
    ) in summary, summary
    assert (
        "not recorded: test_upd.py::test_asserts failed (AssertionError: only Pets kept"
    ) in summary, summary
    assert f"updated {shown}/test_plain.json: recall 100.00 -> 33.33" in summary

    # Without --chunkeval-update: the reports open with the session's verdict and
    # carry each row's test outcome and baseline verdict.
    monkeypatch.delenv(KEEP)
    args = ("--chunkeval-md=report.md", "--chunkeval-json=report.json")
    if dist:
        checked = pytester.runpytest_subprocess(*DIST, *args)
    else:
        checked = run(pytester, *args)
    checked.assert_outcomes(passed=3)  # test_plain improved: 33.33 -> 100
    markdown = (project / "report.md").read_text()
    # One row (three tests of one configuration), counted once: as the table.
    assert markdown.startswith("**0 regressions, 1 improvement, 0 ok**\n\n"), markdown
    assert "| Outcome | Baseline |" in markdown, markdown
    items = json.loads((project / "report.json").read_text())["results"]
    assert [(i["outcome"], i["verdict"]) for i in items] == [("passed", "improved")]


def test_marker_and_option_values_are_checked(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chunkeval(baseline="yes")
        def test_a(chunkeval):
            pass
        """
    )
    result = run(pytester)
    result.stdout.fnmatch_lines(
        ["*@pytest.mark.chunkeval(baseline='yes'): baseline must be True or False*"]
    )
    bad_flag = run(pytester, "--chunkeval-tolerance=recall:+1%")
    assert bad_flag.ret == pytest.ExitCode.USAGE_ERROR
    bad_flag.stderr.fnmatch_lines(["*argument --chunkeval-tolerance: *"])
    pytester.makeini("[pytest]\nchunkeval_gate_confidence = 150%\n")
    bad_ini = run(pytester)
    assert bad_ini.ret == pytest.ExitCode.USAGE_ERROR
    bad_ini.stderr.fnmatch_lines(
        ["ERROR: chunkeval: chunkeval_gate_confidence: confidence '150%' must be*"]
    )


def test_help_lists_the_baseline_options(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--help")
    result.stdout.fnmatch_lines(
        [
            "*--chunkeval-update*Write new and changed baselines*",
            "*--chunkeval-baseline-dir=DIR*",
            "*--chunkeval-tolerance=TOLERANCES*",
            "*--chunkeval-gate-mode=MODE*",
            "*--chunkeval-gate-confidence=LEVEL*",
            "*--chunkeval-fail-unused*",
            "*--chunkeval-history=FILE*",
            "*--chunkeval-json=PATH*",
            "*--chunkeval-md=PATH*",
            "*--chunkeval-html=PATH*",
        ]
    )
    for key in ("tolerance (string)", "fail_unused (bool)", "history (string)"):
        result.stdout.fnmatch_lines([f"*chunkeval_{key}*"])
    assert "chunkeval_json" not in result.stdout.str()


# ---------------------------------------------------------------------- xdist

DIST_TESTS = """
import pytest

def test_a(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))

def test_b(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"), name="again")

@pytest.mark.chunkeval(baseline=True)
def test_c(chunkeval):
    chunkeval.evaluate("recursive:30:0")

@pytest.mark.parametrize("spec", ["recursive:60:0", "fixed:40:0"])
def test_d(chunkeval, spec):
    chunkeval.check_baseline(chunkeval.evaluate(spec))
"""


SPECS = ("recursive:60:0", "fixed:40:0")


@pytest.mark.dist
def test_lifecycle_under_xdist(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(test_dist=DIST_TESTS)
    folder = project / "__chunkeval__" / "test_dist"

    # Workers write the files of the tests they run.
    created = pytester.runpytest_subprocess(
        *DIST,
        "--chunkeval-update",
        "--chunkeval-history=history.jsonl",
        "--chunkeval-json=report.json",
    )
    created.assert_outcomes(passed=5)
    created.stdout.fnmatch_lines(["*2 workers*"])
    assert "baselines: 5 created" in summary_section(created)
    assert sorted(p.name for p in folder.iterdir()) == [
        "test_a.json",
        "test_b.again.json",
        "test_c.json",
        baseline_file("test_d[fixed:40:0]"),
        baseline_file("test_d[recursive:60:0]"),
    ]
    names = ["test_a", "test_b", "test_c", *(f"test_d[{s}]" for s in SPECS)]
    # One history record per configuration, written once by the controller.
    history = (project / "history.jsonl").read_text().splitlines()
    labels = sorted(json.loads(line)["label"] for line in history)
    assert labels == ["fixed:40:0", "paragraphs", "recursive:30:0", "recursive:60:0"]
    report = json.loads((project / "report.json").read_text())
    tests = sorted(t for item in report["results"] for t in item["tests"])
    assert tests == [f"test_dist.py::{t}" for t in sorted(names)]

    # Regressions fail on the workers; a new test has no baseline; the file of a
    # test that is gone is unused, which the controller reports (a failure here).
    monkeypatch.setenv(KEEP, "Pets")
    pytester.makepyfile(
        test_dist=DIST_TESTS.replace('"fixed:40:0"', '"fixed:50:0"')
        + "\ndef test_e(chunkeval):\n"
        "    chunkeval.check_baseline(chunkeval.evaluate('recursive:30:0'))\n"
    )
    checked = pytester.runpytest_subprocess(*DIST, "--chunkeval-fail-unused")
    checked.assert_outcomes(passed=2, failed=4)
    out = checked.stdout.str()
    assert out.count("chunkeval baseline regression in test_dist.py::test_") == 2
    assert "no baseline for test_dist.py::test_e" in out
    assert "no baseline for test_dist.py::test_d[fixed:50:0]" in out
    summary = summary_section(checked)
    assert "baselines: 2 ok, 2 missing, 2 regressed" in summary
    assert "1 unused baseline(s)" in summary
    assert f"  __chunkeval__/test_dist/{baseline_file('test_d[fixed:40:0]')}" in summary
    assert "unused baselines fail this run" in summary
    assert checked.ret == pytest.ExitCode.TESTS_FAILED

    # Update mode: new files written, changed ones rewritten, unused one removed.
    updated = pytester.runpytest_subprocess(*DIST, "--chunkeval-update")
    updated.assert_outcomes(passed=6)
    summary = summary_section(updated)
    assert "removed 1 unused baseline(s):" in summary
    assert f"  __chunkeval__/test_dist/{baseline_file('test_d[fixed:40:0]')}" in summary
    assert sorted(p.name for p in folder.iterdir()) == [
        "test_a.json",
        "test_b.again.json",
        "test_c.json",
        baseline_file("test_d[fixed:50:0]"),
        baseline_file("test_d[recursive:60:0]"),
        "test_e.json",
    ]
    assert json.loads((folder / "test_a.json").read_text())["metrics"]["recall"][
        "mean"
    ] == pytest.approx(1 / 3, abs=1e-6)
