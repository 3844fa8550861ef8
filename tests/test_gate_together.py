"""Per-question items decided together by the rule they were checked under
(gate/outcome/together.py; docs/baselines.md, "Per-question baselines"): its
mode, tolerance and ``chunkeval_gate_by``, not always the ``changes`` rule
and the session's tolerance; items of one function checked under different
rules are decided under each, the worst verdict standing."""

from __future__ import annotations

from dataclasses import replace

from pytest_chunkeval.gate.comparison.verdicts import GatedMetric
from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome
from pytest_chunkeval.gate.outcome.together import decided_together
from pytest_chunkeval.gate.tolerances import GateSettings, SetRule

FUNCTION = "t.py::test_q"
QUESTIONS = [f"q{i}" for i in range(6)]
COLLECTED = [f"{FUNCTION}[{q}]" for q in QUESTIONS]
CHANGES = SetRule("changes", 0.95, "recall:-1pp")
PAIRED = SetRule("paired", 0.95, "recall:-1pp")
WIDER = SetRule("changes", 0.95, "recall:-2pp")
SESSION = GateSettings.from_options(tolerance="recall:-1pp")


def _items(rules: list[SetRule]) -> list[CheckOutcome]:
    """Six items, the first two 5 points worse (-1.67 points together)."""
    return [
        CheckOutcome(
            f"{FUNCTION}[{q}]",
            f"{q}.json",
            "ok",
            row="rag",
            question=q,
            values=(
                GatedMetric(
                    "recall",
                    1.0,
                    0.95 if i < 2 else 1.0,
                    -0.05 if i < 2 else 0.0,
                    None,
                    None,
                    "ok",
                    0.95,
                    se=0.0,
                    tolerance="-10pp",
                    allowed=0.1,
                    n=1,
                ),
            ),
            rule=rules[i % len(rules)],
        )
        for i, q in enumerate(QUESTIONS)
    ]


def _decided(rules: list[SetRule]) -> CheckOutcome:
    (outcome,) = decided_together(
        _items(rules), SESSION, COLLECTED, lambda n: f"pytest --chunkeval-update {n}"
    )
    return outcome


def test_items_are_decided_by_their_own_rule() -> None:
    changes = _decided([CHANGES])
    assert changes.status == "regressed"
    assert "recall -1.67 points (tolerance -1pp, SE 0.00): regressed" in (
        changes.message
    )
    # the bootstrap cannot tell two questions of six: ok (before: the
    # changes rule, regressed)
    paired = _decided([PAIRED])
    assert paired.status == "ok", paired.message
    (recall,) = paired.gated
    assert recall.high == 0.0
    assert recall.low is not None
    assert recall.low < -0.01
    assert "paired, 95% CI [" in paired.message
    # the items' tolerance, not the session's (before: -1pp, regressed)
    wider = _decided([WIDER])
    assert wider.status == "ok", wider.message
    assert "(tolerance -2pp, SE 0.00): ok" in wider.message


def test_items_checked_under_different_rules_are_decided_under_each() -> None:
    outcome = _decided([PAIRED, CHANGES])
    assert outcome.status == "regressed"  # the worst: the changes rule's
    assert "decided under each of the 2 rules its items were checked under" in (
        outcome.message
    )
    assert "paired mode, recall:-1pp, 95% confidence: recall -1.67 points" in (
        outcome.message
    )
    assert "changes mode, recall:-1pp, 95% confidence: recall -1.67 points" in (
        outcome.message
    )
    (recall,) = outcome.gated  # the row shows the deciding rule's numbers
    assert recall.se == 0.0
    assert recall.status == "regressed"


def test_the_rule_reaches_the_controller_from_an_xdist_worker() -> None:
    item = _items([WIDER])[0]
    again = CheckOutcome.from_json(item.to_json())
    assert again.rule == WIDER
    assert again.rule.settings().gated()[0][1].allowed(1.0) == 0.02


def _thirty(rule: SetRule) -> list[CheckOutcome]:
    """Thirty items: the 15 of big.md 40 points worse (the set -20 points),
    every other one of them tagged billing."""
    items = []
    for i in range(30):
        big = i < 15
        value = GatedMetric(
            "recall",
            1.0,
            0.6 if big else 1.0,
            -0.4 if big else 0.0,
            None,
            None,
            "ok",
            0.95,
            se=0.0,
            tolerance="-10pp",
            allowed=0.1,
            n=1,
        )
        items.append(
            CheckOutcome(
                f"{FUNCTION}[q{i}]",
                f"q{i}.json",
                "ok",
                row="rag",
                question=f"q{i}",
                values=(value,),
                rule=rule,
                document="big.md" if big else "other.md",
                tags=("billing",) if big and i % 2 == 0 else (),
            )
        )
    return items


def test_items_are_decided_together_by_their_documents_and_tags() -> None:
    collected = [f"{FUNCTION}[q{i}]" for i in range(30)]
    rule = SetRule("changes", 0.95, "recall:-25pp")

    def decided(gate_by: str) -> CheckOutcome:
        (outcome,) = decided_together(
            _thirty(replace(rule, gate_by=gate_by)), SESSION, collected, str
        )
        return outcome

    named = decided("set")  # the set -20 points, within -25pp: ok, groups named
    assert named.status == "ok"
    assert (
        "recall of documents beyond their own tolerance: big.md -40.00 points "
        "over 15 questions (its own tolerance -26.67)" in named.message
    ), named.message
    assert "recall of tags beyond their own tolerance: billing -40.00" in (
        named.message
    )
    # gate_by = document (before: the items' rule had no gate_by; ok)
    by_document = decided("document")
    assert by_document.status == "regressed"
    (recall,) = by_document.gated
    assert recall.verdict == "REGRESSED (document big.md)"
    assert "(tolerance -25pp, SE 0.00): regressed (document big.md)" in (
        by_document.message
    )
    assert "together a document or tag of their questions dropped" in (
        by_document.message
    )
    (recall,) = decided("document, tag").gated
    assert recall.verdict == "REGRESSED (document big.md; tag billing)"
    again = CheckOutcome.from_json(_thirty(rule)[0].to_json())
    assert (again.document, again.tags) == ("big.md", ("billing",))


def test_a_rule_records_only_what_is_gated() -> None:
    # A marker's tolerance turns every other metric off: the same rule as the
    # session's naming the same metrics, so its items are not "decided under
    # each of 2 rules".
    session = GateSettings.from_options("recall:-1pp")
    marked = session.override(tolerance={"precision": None, "iou": None})
    assert marked.rule() == session.rule() == CHANGES
    assert marked.rule().settings().gated() == session.gated()
