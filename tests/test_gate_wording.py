"""How the gate's messages and the reports word what they show (issue 34): a
change agrees with the two values it is the difference of; counts of one have
their noun in the singular; documents are called documents; a cut text ends at
a word; a question left out names why in full."""

from __future__ import annotations

import pytest

from pytest_chunkeval.config.tolerances import Tolerance
from pytest_chunkeval.core.locate import clip
from pytest_chunkeval.core.metric_names import format_change, format_pair
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.gate.comparison.changes import BaselineChanges, format_unplaced
from pytest_chunkeval.gate.comparison.report import (
    ChangedQuery,
    GateReport,
    MetricCheck,
)
from pytest_chunkeval.gate.comparison.verdicts import GatedMetric
from pytest_chunkeval.gate.files.documents import DocumentChange
from pytest_chunkeval.gate.outcome.messages import format_failure
from pytest_chunkeval.gate.tolerances import GateSettings
from pytest_chunkeval.reporting.gate_report import gated_cell


@pytest.mark.parametrize(
    ("before", "after", "delta", "shown"),
    [
        (0.07096, 0.07104, None, ("7.096", "7.104", "+0.008")),  # was 7.10 7.10 +0.01
        (0.5, 0.4, None, ("50.00", "40.00", "-10.00")),
        (0.1, 0.1, 0.0, ("10.00", "10.00", "+0.00")),
        (0.071049, 0.071051, None, ("7.105", "7.105", "+0.000")),
        (None, 0.3, None, ("-", "30.00", "-")),
    ],
)
def test_a_change_is_the_difference_of_the_values_shown(
    before: float | None,
    after: float | None,
    delta: float | None,
    shown: tuple[str, str, str],
) -> None:
    assert format_change(before, after, delta) == shown


def test_two_values_that_differ_never_read_the_same() -> None:
    assert format_pair(0.07096, 0.07104) == ("7.096", "7.104")  # was 7.10 -> 7.10
    assert format_pair(0.0917, 0.2743) == ("9.17", "27.43")
    assert format_pair(0.5, 0.5) == ("50.00", "50.00")


def test_the_reports_cell_shows_a_change_its_values_add_up_to() -> None:
    g = GatedMetric("recall", 0.07096, 0.07104, 0.00008, None, None, "ok", 0.95)
    assert gated_cell(g) == "7.096 → 7.104: +0.008"


def _report(n: int = 1) -> GateReport:
    check = MetricCheck(
        "recall",
        Tolerance(0.02),
        before=0.9,
        after=0.4,
        delta=-0.5,
        allowed=0.02,
        status="regressed",
        n=n,
        worst=(ChangedQuery("q1", "Who audits?", "a.md", 1.0, 0.0),),
        by_group={"a.md": -0.5, "b.md": 0.0},
        changed=1,
        worse=(("q1", "a.md"),),
    )
    changes = BaselineChanges(
        corpus_changed=True,
        documents=(DocumentChange("a.md", "edited", 100, 90, 3, 2),),
        added=("q2",),
        compared=n,
        total=n + 1,
    )
    return GateReport((check,), GateSettings().override(mode="mean"), n, changes)


def test_counts_of_one_read_in_the_singular() -> None:
    text = format_failure(
        _report(), test="t.py::test_rag", path="b.json", command="pytest --u"
    )
    assert "1 questions" not in text
    assert "1 queries" not in text
    assert "none of the 1" not in text
    assert "the query that got worse comes from an edited document (a.md): q1" in text
    assert "compared on the 1 question both runs have" in text
    assert "(1 of 1 query changed)" in text
    assert "recall delta by document (points): a.md -50.00, b.md +0.00" in text
    many = format_failure(
        _report(6), test="t.py::test_rag", path="b.json", command="pytest --u"
    )
    assert "compared on the 6 questions both runs have" in many
    assert "(1 of 6 queries changed)" in many


def test_a_cut_text_ends_at_a_word() -> None:
    assert clip("hello world foo", 12) == "hello world…"
    assert clip("hello world foo", 11) == "hello…"
    assert clip("abcdefghijklmnopqrstuvwxyz", 10) == "abcdefghi…"  # one long word
    assert clip("short", 10) == "short"


def test_a_question_left_out_says_why_in_full() -> None:
    """`not found (no sp…`: the reason was cut mid-word at 90 characters."""
    text = "Refunds are issued to the original payment method within five days."
    corpus = Corpus.from_mapping({"a.md": "Returns are free.", "b.md": "Other text."})
    kept = Query("q0", "Free?", (Excerpt("Returns are free.", "a.md", 0, 17),), "a.md")
    lost = Query("q1", "Refunds?", (Excerpt(text, "a.md", -1, -1),), "a.md")
    placed, unplaced = QuerySet([kept, lost]).placeable(corpus)
    assert [q.id for q in placed] == ["q0"]
    line = format_unplaced(unplaced)
    assert line.splitlines()[1].endswith("not found (no span))"), line


@pytest.mark.parametrize(
    ("mode", "said"),
    [
        (
            "changes",
            "the mean of the questions' changes, against the tolerance plus z SEs "
            "of noise; the CI is information only",
        ),
        ("paired", "paired, query by query: decided by the bootstrap CI"),
        ("mean", "the difference of the means"),
    ],
)
def test_the_summary_says_what_the_gate_mode_did(mode: str, said: str) -> None:
    # Before, the default mode's block opened "the change is paired, query by
    # query", which is what the paired mode does.
    from support.fake_results import make_result

    from pytest_chunkeval.gate.comparison.compare import compare
    from pytest_chunkeval.gate.comparison.report import gated_metrics
    from pytest_chunkeval.gate.files.baseline import Baseline
    from pytest_chunkeval.gate.outcome.rows import RowVerdict
    from pytest_chunkeval.run.outputs import SummaryRow
    from pytest_chunkeval.run.summary import against_baseline

    baseline = Baseline.from_result(make_result([1.0] * 10), "t")
    settings = GateSettings.from_options("recall:-1pp", mode=mode)
    report = compare(baseline, make_result([1.0] * 9 + [0.0]), settings)
    verdict = RowVerdict("failed", report.checks[0].status, gated_metrics(report))
    row = SummaryRow("k", {}, ["t.py::test_x"])
    lines = against_baseline([row], {"k": verdict})
    assert lines[0] == f"against the baseline (points; the change is {said}):"


def test_a_gate_table_shows_one_precision_per_column() -> None:
    # iou needs 3 decimals for its change to be the difference of its values
    # (9.168 -> 27.434: +18.266); before, its row read 3 decimals among rows
    # of 2 in the same columns.
    import dataclasses

    from support.fake_results import make_result

    from pytest_chunkeval.gate.outcome.messages import report_table
    from pytest_chunkeval.gate.outcome.rows import RowVerdict
    from pytest_chunkeval.reporting.gate_report import baseline_html, baseline_markdown
    from pytest_chunkeval.reporting.rows import ReportEntry
    from pytest_chunkeval.run.outputs import SummaryRow
    from pytest_chunkeval.run.summary import against_baseline

    values = {"recall": (1.0, 0.867, -0.133), "iou": (0.09168, 0.27434, 0.18266)}
    gated = tuple(
        GatedMetric(m, b, a, d, d - 0.05, d + 0.05, "ok", 0.95, se=0.0)
        for m, (b, a, d) in values.items()
    )
    summary = against_baseline(
        [SummaryRow("k", {}, ["t.py::test_x"])],
        {"k": RowVerdict("passed", "ok", gated)},
    )
    rows = [line.split() for line in summary if " ok " in line]
    assert [r[-6:-3] for r in rows] == [
        ["100.000", "86.700", "-13.300"],
        ["9.168", "27.434", "+18.266"],
    ], summary
    checks = tuple(
        MetricCheck(m, Tolerance(0.01), b, a, d, 0.01, "ok", 10, se=0.0)
        for m, (b, a, d) in values.items()
    )
    report = GateReport(checks, GateSettings(), 10)
    table = report_table(report).splitlines()
    assert table[2].split()[1:4] == ["100.000", "86.700", "-13.300"], table
    entry = dataclasses.replace(
        ReportEntry.of(make_result([1.0, 0.5])), verdict="passed", gated=gated
    )
    second = dataclasses.replace(
        entry,
        gated=(GatedMetric("iou", 0.5, 0.4, -0.1, -0.2, 0.0, "ok", 0.95, se=0.0),),
    )
    for text in (
        baseline_markdown([entry, second]),
        baseline_html([entry, second]),
    ):
        # a column per metric, each with its own precision
        assert "100.00 → 86.70: -13.30" in text
        assert "9.168 → 27.434: +18.266" in text
        assert "50.000 → 40.000: -10.000" in text  # the iou column's
