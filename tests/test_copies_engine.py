"""Identical text is interchangeable, end to end (docs/concepts.md, "Identical
text"): tie order among identical chunks, a copied answer inserted in an edited
document, the chosen spans in the result, ``copies="strict"``."""

from __future__ import annotations

import pytest

from pytest_chunkeval.config.scoring import SCORING_RULES
from pytest_chunkeval.data.corpus import Corpus, Document
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.placing import PlacementError
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.engine.score import score

ROW = "| Basic plan | 10 users | $9 |\n"
DOC = "Pricing, page one.\n" + ROW + "Other rows.\nPricing, page two.\n" + ROW


def _corpus(text: str = DOC) -> Corpus:
    return Corpus([Document("pricing.md", text)])


def _queries(corpus: Corpus, sentence: str, nth: int = 0) -> QuerySet:
    text = corpus["pricing.md"].text
    start = -1
    for _ in range(nth + 1):
        start = text.index(sentence, start + 1)
    excerpt = Excerpt(sentence, "pricing.md", start, start + len(sentence))
    return QuerySet([Query("q1", "?", (excerpt,), "pricing.md")])


def _span(text: str, needle: str, nth: int = 0) -> tuple[str, int, int]:
    start = -1
    for _ in range(nth + 1):
        start = text.index(needle, start + 1)
    return ("pricing.md", start, start + len(needle))


def _metrics(result: EvalResult) -> dict[str, float | None]:
    record = result.queries[0]
    return {m: record.metric(m) for m in ("recall", "precision", "iou", "mrr")}


@pytest.mark.parametrize("copies", ["any", "strict"])
def test_tie_order_among_identical_chunks_does_not_change_the_score(copies):
    corpus = _corpus()
    queries = _queries(corpus, ROW)  # stored on the first row
    first, second = _span(DOC, ROW, 0), _span(DOC, ROW, 1)
    other = _span(DOC, "Other rows.")
    results = [
        score({"q1": ranked}, corpus, queries, unit="char", copies=copies)
        for ranked in (
            [first, other],
            [second, other],
            [first, second, other],
            [second, first, other],
        )
    ]
    if copies == "strict":  # the accident the rule removes
        assert _metrics(results[0]) != _metrics(results[1])
        return
    assert _metrics(results[0]) == _metrics(results[1])
    assert _metrics(results[2]) == _metrics(results[3])
    assert results[1].queries[0].scores["recall"] == 1.0
    assert results[1].queries[0].chosen == (second,)
    assert results[0].queries[0].chosen == ()  # scored where it is stored


ANSWER = "Refunds are paid within 14 days of the request."
PARAGRAPH = (
    "Our refund policy is simple. " + ANSWER + " Contact support to start one.\n\n"
)


def test_a_copied_answer_inserted_earlier_does_not_move_the_answer():
    before = "# Help\n\n" + PARAGRAPH
    corpus = _corpus(before)
    queries = _queries(corpus, ANSWER)
    faq = "FAQ: how fast? " + ANSWER + "\n\n"
    edited = _corpus("# Help\n\n" + faq + PARAGRAPH)
    placed = queries.validated(edited)  # re-placed in the edited document
    assert placed[0].excerpts[0].start == edited["pricing.md"].text.index(ANSWER)
    text = edited["pricing.md"].text
    paragraph = _span(text, PARAGRAPH.strip())
    for how in ([paragraph], [PARAGRAPH.strip()]):  # a span, or its text
        result = score({"q1": how}, edited, placed, unit="char")
        assert result.queries[0].scores["recall"] == 1.0
        assert result.queries[0].scores["mrr"] == 1.0
        assert result.config["scoring_rules"] == SCORING_RULES
    # Under the stored span only, the FAQ copy took the answer away.
    strict = score({"q1": [paragraph]}, edited, placed, unit="char", copies="strict")
    assert strict.queries[0].scores["recall"] == 0.0


def test_strict_refuses_a_retrieved_text_found_twice():
    corpus = _corpus()
    queries = _queries(corpus, ROW)
    with pytest.raises(PlacementError, match="occurs 2 times"):
        score({"q1": [ROW]}, corpus, queries, unit="char", copies="strict")
    # copies="any": placed at the copy the question's excerpt is at
    result = score({"q1": [ROW]}, corpus, queries, unit="char")
    assert result.queries[0].retrieved == (_span(DOC, ROW, 0),)


def test_identical_excerpts_of_a_question_are_merged():
    corpus = _corpus()
    a, b = _span(DOC, ROW, 0), _span(DOC, ROW, 1)
    excerpts = tuple(Excerpt(ROW, *span) for span in (a, b))
    queries = QuerySet([Query("q1", "?", excerpts, "pricing.md")])
    merged = score({"q1": [b]}, corpus, queries, unit="char")
    assert merged.queries[0].scores["recall"] == 1.0
    assert merged.queries[0].chosen == (b, b)
    strict = score({"q1": [b]}, corpus, queries, unit="char", copies="strict")
    assert strict.queries[0].scores["recall"] == 0.5
    assert strict.config["copies"] == "strict"
    assert "copies" not in merged.config


def test_evaluate_records_the_rules_and_the_chosen_spans_round_trip(tmp_path):
    corpus = _corpus()
    queries = _queries(corpus, ROW, nth=1)
    result = evaluate(
        "fixed:16:0",
        corpus,
        queries,
        embedder="hashing",
        store="exact",
        k=2,
        unit="char",
        cache=tmp_path,
    )
    assert result.config["scoring_rules"] == SCORING_RULES
    again = EvalResult.from_json(result.to_json())
    assert again.queries[0].chosen == result.queries[0].chosen
    assert again.queries[0].scored_excerpts == (
        result.queries[0].chosen or result.queries[0].excerpts
    )
    strict = evaluate(
        "fixed:16:0",
        corpus,
        queries,
        embedder="hashing",
        store="exact",
        k=2,
        unit="char",
        cache=tmp_path,
        copies="strict",
    )
    assert strict.queries[0].chosen == ()
    assert result.queries[0].scores["recall"] >= strict.queries[0].scores["recall"]


def test_the_copies_search_holds_one_prefilter_table_for_every_anchor_length():
    """Excerpts of 5 anchor lengths: one 4 MiB table (a bit per length), where a
    table per length held 20 MiB (docs/performance.md, "Memory")."""
    import tracemalloc

    from pytest_chunkeval.engine.copies import find_occurrences

    text = "the pump valve opens, then the valve closes. " * 20
    needles = ["pum", "valve", "opens, ", "the valve", text[3:60]]
    tracemalloc.start()
    try:
        found = find_occurrences([text, text[5:]], needles)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 6 << 20
    for needle, where in zip(needles, found, strict=True):
        assert where.tolist() == [
            [d, i]
            for d, doc in enumerate([text, text[5:]])
            for i in range(len(doc))
            if doc.startswith(needle, i)
        ]
