"""A report row's verdict, counts and label (gate/outcome/rows.py), without pytest runs:
the failed tests named first, collection order for the rest, questions counted
once from the query set however many checks compared them, a comparison that
did not run as ``not compared (reason)``, skipped tests apart from failed ones."""

from __future__ import annotations

import json

from pytest_chunkeval.gate.comparison.changes import BaselineChanges
from pytest_chunkeval.gate.comparison.flips import Flip, FlipIds, Flips
from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome
from pytest_chunkeval.gate.outcome.rows import (
    RowVerdict,
    label_tests,
    ordered_tests,
    row_headline,
    row_verdicts,
)

IDS = [f"q{i}" for i in range(6)]


def _flips(compared: list[str], lost: list[str]) -> Flips:
    listed = tuple(Flip(q, f"{q}?", "a.md", 1.0, 0.0, "", "") for q in lost)
    return Flips(
        "recall",
        len(compared),
        listed,
        (),
        len(lost),
        0,
        FlipIds(tuple(compared), tuple(lost), ()),
    )


def test_the_label_names_the_failed_tests_first() -> None:
    tests = ["t::whole", "t::q[0]", "t::q[1]", "t::q[2]"]
    assert label_tests(tests, []) == "t::whole (+3)"
    assert label_tests(tests[:1], []) == "t::whole"
    assert label_tests([], []) == "-"
    assert label_tests(tests, ["t::whole", "t::q[1]"], listed=1) == (
        "t::whole (+3 more, 1 of them failed)"
    )
    # the count is of the others: every one of them failed too
    assert label_tests(tests, tests, listed=1) == "t::whole (+3 more, all failed)"
    assert label_tests(tests, ["t::whole", "t::q[1]"]) == "t::whole, t::q[1] (+2)"


def test_tests_are_ordered_failed_first_then_as_collected() -> None:
    order = {n: i for i, n in enumerate(["t::a", "t::b", "t::c", "t::d"])}
    verdict = RowVerdict(failed=("t::c",))
    # as an xdist controller merges them: in the order workers reported
    assert ordered_tests(["t::d", "t::c", "t::b", "t::a"], verdict, order) == [
        "t::c",
        "t::a",
        "t::b",
        "t::d",
    ]


def test_a_whole_set_check_and_items_count_each_question_once() -> None:
    changes = BaselineChanges(corpus_changed=True, compared=1, total=1)
    outcomes = [
        CheckOutcome(
            "t::q[q2]", "q2.json", "regressed", row="r", flips=_flips(["q2"], ["q2"])
        ),
        CheckOutcome(
            "t::whole", "w.json", "regressed", row="r", flips=_flips(IDS, ["q2", "q3"])
        ),
        *(
            CheckOutcome(
                f"t::q[{q}]", f"{q}.json", "passed", row="r", flips=_flips([q], [])
            )
            for q in IDS
            if q != "q2"
        ),
    ]
    # through xdist payloads: the ids travel with the flips
    outcomes = [
        CheckOutcome.from_json(json.loads(json.dumps(o.to_json()))) for o in outcomes
    ]
    nodeids = ["t::whole", *(f"t::q[{q}]" for q in IDS)]
    order = {n: i for i, n in enumerate(nodeids)}
    passed = {n for n in nodeids if n not in ("t::whole", "t::q[q2]")}
    row = row_verdicts([("r", nodeids)], outcomes, passed, order=order)["r"]
    assert row.flips is not None
    assert (row.flips.compared, row.flips.lost_count) == (6, 2)
    assert [f.id for f in row.flips.lost] == ["q2", "q3"]
    assert (row.outcome, row.verdict, row.cell) == ("failed", "regressed", "REGRESSED")
    assert row.failed == ("t::whole", "t::q[q2]")  # first in collection order
    # a row of per-question items only: its changes count every item's question
    items = [
        CheckOutcome(
            f"t::q[{q}]",
            f"{q}.json",
            "passed",
            row="i",
            flips=_flips([q], []),
            changes=changes,
        )
        for q in IDS
    ]
    only = row_verdicts([("i", [o.nodeid for o in items])], items)["i"]
    assert only.changes is not None
    assert (only.changes.compared, only.changes.total) == (6, 6)


def test_not_compared_and_skipped_are_said_so() -> None:
    outcomes = [
        CheckOutcome("t::a", "a.json", "passed", row="r"),
        CheckOutcome("t::b", "b.json", "not compared", row="r"),
        CheckOutcome("t::c", "c.json", "passed", row="s"),
    ]
    verdicts = row_verdicts(
        [("r", ["t::a", "t::b"]), ("s", ["t::c", "t::d"])],
        outcomes,
        passed={"t::a", "t::c"},
        skipped={"t::d"},
    )
    r, s = verdicts["r"], verdicts["s"]
    assert (r.verdict, r.cell, r.failed) == (
        "not compared",
        "not compared (test failed first)",
        ("t::b",),
    )
    assert (s.outcome, s.outcome_cell(2), s.skipped, s.failed) == (
        "passed",
        "passed (1 skipped)",
        ("t::d",),
        (),
    )
    # the verdict line counts the rows, as the tables show them
    assert row_headline(verdicts.values()) == (
        "0 regressions, 0 improvements, 1 ok, 1 not compared"
    )
