"""Our mrr against a peer's (ir_measures, pytrec_eval's RR) on our own runs, with
binary relevance "the chunk shares a character with an excerpt" (docs/concepts.md,
"Units" and "Identical text"): stored spans with ``copies="strict"``, each run's
chosen spans with ``copies="any"``. Token unit, where a boundary token used to make
a chunk relevant without a shared character."""

from __future__ import annotations

import pytest

from pytest_chunkeval.data.corpus import Corpus, Document
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult

ir_measures = pytest.importorskip("ir_measures")

SENTENCES = [
    "The answer is here . More text follows.",
    "Thank you.",
    "| Basic plan | 10 users | $9 |",
    "Refunds are paid within 14 days of the request.",
    "Cats sleep most of the day; they hunt at dawn.",
]
DOC = " ".join(SENTENCES[i % len(SENTENCES)] for i in (0, 1, 2, 3, 1, 2, 4, 3, 1, 0))


def _queries(corpus: Corpus) -> QuerySet:
    text = corpus["d.md"].text
    out = []
    for i, needle in enumerate(
        [
            "The answer is here ",
            "Thank you.",
            "| Basic plan | 10 users | $9 |",
            "Refunds",
        ]
    ):
        start = text.rindex(needle) if i % 2 else text.index(needle)
        ex = Excerpt(needle, "d.md", start, start + len(needle))
        out.append(Query(f"q{i}", f"{needle} ?", (ex,), "d.md"))
    return QuerySet(out)


def _peer_mrr(result: EvalResult, k: int) -> dict[str, float]:
    qrels, run = [], []
    for q in result.queries:
        for rank, (doc, s, e) in enumerate(q.retrieved[:k]):
            name = f"{doc}:{s}:{e}"
            run.append(ir_measures.ScoredDoc(q.id, name, float(k - rank)))
            if any(d == doc and max(s, a) < min(e, b) for d, a, b in q.scored_excerpts):
                qrels.append(ir_measures.Qrel(q.id, name, 1))
        qrels.append(ir_measures.Qrel(q.id, "-none-", 0))
    found = {
        m.query_id: m.value
        for m in ir_measures.iter_calc([ir_measures.RR @ k], qrels, run)
    }
    return {q.id: float(found.get(q.id, 0.0)) for q in result.queries}


@pytest.mark.parametrize("copies", ["strict", "any"])
@pytest.mark.parametrize("chunker", ["fixed:7:0", "fixed:12:5", "recursive:9:0"])
def test_every_question_s_mrr_agrees_with_ir_measures(tmp_path, copies, chunker):
    corpus = Corpus([Document("d.md", DOC)])
    result = evaluate(
        chunker,
        corpus,
        _queries(corpus),
        embedder="hashing",
        store="exact",
        k=4,
        cache=tmp_path,
        copies=copies,
    )
    theirs = _peer_mrr(result, 4)
    ours = {q.id: float(q.scores["mrr"] or 0.0) for q in result.queries}
    assert ours == pytest.approx(theirs, abs=1e-12)
