"""The questions that flipped against a baseline (gate/comparison/flips.py), the
gated metrics a comparison reports (gate/comparison/verdicts.py), and how check
outcomes become a report row's verdict, without pytest runs."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from support.fake_results import make_result

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.gate.comparison.compare import compare, gated_metrics
from pytest_chunkeval.gate.comparison.flips import MAX_LISTED, Flip, Flips, flips
from pytest_chunkeval.gate.comparison.verdicts import GatedMetric, severity
from pytest_chunkeval.gate.files.baseline import Baseline
from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome
from pytest_chunkeval.gate.outcome.rows import row_verdicts
from pytest_chunkeval.gate.tolerances import GateSettings

TEXT = {"a.md": "Alpha holds the answer.", "b.md": "Beta is somewhere else."}


def _result(recall: list[float], retrieved_doc: str = "b.md") -> EvalResult:
    result = make_result(recall, docs=["a.md"] * len(recall))
    queries = [
        dataclasses.replace(q, retrieved=((retrieved_doc, 0, 4),))
        for q in result.queries
    ]
    return dataclasses.replace(
        result, queries=queries, corpus=Corpus.from_mapping(TEXT)
    )


def test_flips_both_ways_with_excerpt_and_what_came_instead() -> None:
    baseline = Baseline.from_result(_result([1.0, 0.5, 0.0, 0.0, 1.0]), "t")
    found = flips(baseline, _result([0.0, 0.25, 1.0, 0.0, 1.0]))
    assert found is not None
    assert (found.metric, found.compared) == ("recall", 5)
    # q000 lost (1 -> 0); q001 moved but stayed retrieved; q002 gained (0 -> 1).
    assert [f.id for f in found.lost] == ["q000"]
    assert [f.id for f in found.gained] == ["q002"]
    lost = found.lost[0]
    assert (lost.before, lost.after) == (1.0, 0.0)
    assert lost.excerpt == "Alpha hold"  # the excerpt span (a.md, 0, 10)
    assert lost.instead == "Beta"  # the current run's top chunk
    assert lost.question == "What is question number 0?"
    assert Flips.from_json(json.loads(json.dumps(found.to_json()))) == found


def test_flips_are_capped_counted_and_need_shared_questions() -> None:
    baseline = Baseline.from_result(_result([1.0] * 30), "t")
    found = flips(baseline, _result([0.0] * 30), limit=4)
    assert found is not None
    assert (len(found.lost), found.lost_count, found.gained_count) == (4, 30, 0)
    assert bool(found)
    # A question the baseline does not hold is not compared.
    renamed = make_result([0.0] * 3, ids=["x", "y", "z"])
    found = flips(baseline, renamed)
    assert found is not None
    assert (found.compared, bool(found)) == (0, False)
    # Without the corpus (a result read back from JSON): no text, still the flip.
    bare = dataclasses.replace(_result([0.0] * 30), corpus=None)
    found = flips(baseline, bare)
    assert found is not None
    assert (found.lost[0].excerpt, found.lost[0].instead) == ("", "")


def test_gated_metrics_carry_baseline_delta_and_interval() -> None:
    before = make_result([1.0] * 20)
    after = make_result([1.0] * 10 + [0.0] * 10)
    settings = GateSettings.from_options("recall:-1pp", "paired", "0.95")
    (recall,) = gated_metrics(
        compare(Baseline.from_result(before, "t"), after, settings)
    )
    assert (recall.metric, recall.before, recall.after) == ("recall", 1.0, 0.5)
    assert recall.delta == pytest.approx(-0.5)
    assert recall.low is not None
    assert recall.high is not None
    assert recall.low <= -0.5 <= recall.high < 0
    assert (recall.status, recall.confidence) == ("regressed", 0.95)
    assert GatedMetric.from_json(json.loads(json.dumps(recall.to_json()))) == recall
    mean = GateSettings.from_options("recall:-1pp", "mean", "0.95")
    (recall,) = gated_metrics(compare(Baseline.from_result(before, "t"), after, mean))
    assert (recall.low, recall.high, recall.status) == (None, None, "regressed")


def test_a_row_takes_the_worst_check_of_its_own_result() -> None:
    gated = (GatedMetric("recall", 1.0, 0.5, -0.5, -0.6, -0.4, "regressed", 0.95),)
    outcomes = [
        CheckOutcome("t.py::a", "a.json", "passed", row="r1"),
        CheckOutcome("t.py::a", "a.2.json", "regressed", row="r2", gated=gated),
        CheckOutcome("t.py::b", "b.json", "improved", row="r1"),
        CheckOutcome("t.py::c", "c.json", "missing"),  # no row: its test's rows
    ]
    # Outcomes travel from xdist workers as JSON.
    outcomes = [
        CheckOutcome.from_json(json.loads(json.dumps(o.to_json()))) for o in outcomes
    ]
    rows = [
        ("r1", ["t.py::a", "t.py::b"]),
        ("r2", ["t.py::a"]),
        ("r3", ["t.py::c"]),
        ("r4", ["t.py::d"]),
    ]
    verdicts = row_verdicts(rows, outcomes, passed={"t.py::b", "t.py::d"})
    assert (verdicts["r1"].outcome, verdicts["r1"].verdict) == ("failed", "improved")
    assert (verdicts["r2"].verdict, verdicts["r2"].gated) == ("regressed", gated)
    assert (verdicts["r3"].verdict, verdicts["r3"].reason) == (
        "not compared",
        "no baseline",
    )
    assert (verdicts["r4"].outcome, verdicts["r4"].verdict) == ("passed", "")
    order = sorted(
        verdicts, key=lambda k: severity(verdicts[k].verdict, verdicts[k].outcome)
    )
    assert order == ["r2", "r3", "r1", "r4"]


def test_a_row_checked_by_several_items_shows_all_their_flips() -> None:
    def flip(qid: str) -> Flip:
        return Flip(qid, f"question {qid}?", "a.md", 1.0, 0.0, "", "")

    # The items of a per-question test: one question each, all on one row.
    outcomes = [
        CheckOutcome(
            f"t.py::q[{i}]",
            f"q[{i}].json",
            "regressed" if i < 25 else "passed",
            row="r1",
            flips=Flips("recall", 1, (flip(f"q{i}"),), (), 1, 0)
            if i < 25
            else Flips("recall", 1),
        )
        for i in range(30)
    ]
    # The same question listed by two checks of the row counts once.
    outcomes.append(
        CheckOutcome(
            "t.py::whole",
            "whole.json",
            "passed",
            row="r1",
            flips=Flips("recall", 0, (flip("q0"),), (), 1, 0),
        )
    )
    merged = row_verdicts([("r1", [])], outcomes)["r1"].flips
    assert merged is not None
    assert (merged.compared, merged.lost_count, merged.gained_count) == (30, 25, 0)
    assert [f.id for f in merged.lost] == [f"q{i}" for i in range(MAX_LISTED)]


def test_the_json_report_keeps_the_gate_for_chunkeval_report(tmp_path: Path) -> None:
    """``chunkeval report --results`` re-renders a session's JSON: the gated
    metrics and flips survive the round trip, and a question holding Markdown
    syntax stays inside its cell."""
    from pytest_chunkeval.reporting.json_report import json_report, read_json_report
    from pytest_chunkeval.reporting.markdown import markdown_report
    from pytest_chunkeval.reporting.rows import ReportEntry

    before = _result([1.0, 1.0, 1.0])
    now = _result([0.0, 1.0, 1.0])
    now.queries[0] = dataclasses.replace(now.queries[0], question="A | B <b>?")
    baseline = Baseline.from_result(before, "t")
    settings = GateSettings.from_options("recall:-1pp", "paired", "0.95")
    entry = ReportEntry(
        now.to_json(details=False),
        ("t.py::t",),
        "failed",
        "regressed",
        gated_metrics(compare(baseline, now, settings)),
        flips(baseline, now),
    )
    path = tmp_path / "report.json"
    path.write_text(json_report([entry]))
    (read,) = read_json_report(path)
    assert (read.outcome, read.verdict) == ("failed", "regressed")
    assert read.gated == entry.gated
    assert read.flips == entry.flips
    markdown = markdown_report([read])
    line = next(x for x in markdown.splitlines() if x.startswith("| lost |"))
    assert line.startswith(
        r"| lost | A \| B &lt;b&gt;? (q000, a.md) | Alpha hold | #1: Beta |"
    )
    assert line.count(" | ") == 3  # four cells


def test_reports_say_how_the_change_was_compared() -> None:
    from pytest_chunkeval.reporting.gate_report import baseline_markdown
    from pytest_chunkeval.reporting.rows import ReportEntry

    entry = ReportEntry.of(make_result([1.0, 0.5]))
    paired = GatedMetric("recall", 0.75, 0.75, 0.0, 0.0, 0.0, "ok", 0.95)
    mean = GatedMetric("recall", 0.75, 0.75, 0.0, None, None, "ok", 0.95)
    shown = {
        name: baseline_markdown([dataclasses.replace(entry, verdict="passed", gated=g)])
        for name, g in (("paired", (paired,)), ("mean", (mean,)))
    }
    assert "is paired" in shown["paired"]
    assert "(unchanged)" in shown["paired"]
    assert "paired" not in shown["mean"]
    assert "difference of the two means" in shown["mean"]
    # equal means do not say no question moved
    assert "(unchanged)" not in shown["mean"]
    assert paired.unchanged
    assert not mean.unchanged
