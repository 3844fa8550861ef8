"""Our rank metrics against peers' tools on the bundled benchmark (docs/concepts.md,
"Identical text"; "Units").

Run: .venv/bin/python benchmarks/peer_check.py [--k 10] [--skip-bm25s]

1. ir_measures (pytrec_eval's RR) on our own per-question runs, token unit,
   exact (hashing embedder) and bm25 stores, recursive 200/0 and fixed 400/200,
   run scores strictly decreasing with rank, binary relevance "the chunk shares a
   character with an excerpt": with ``copies="strict"`` and qrels from the stored
   spans, and with the default ``copies="any"`` and qrels from each run's chosen
   spans. Prints the questions whose mrr differs (0 expected, both ways).
2. Our bm25 store against bm25s's own top-k on the same chunks, the latter scored
   through ``score()``: mean recall and mrr (recursive 200/0, token unit).
"""

from __future__ import annotations

import argparse

import numpy as np

from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.embedders.cache import EmbeddingCache, default_cache_dir
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.engine.score import score


def _shares(
    span: tuple[str, int, int], spans: tuple[tuple[str, int, int], ...]
) -> bool:
    doc, start, end = span
    return any(d == doc and max(start, s) < min(end, e) for d, s, e in spans)


def peer_mrr(result: EvalResult, k: int) -> dict[str, float]:
    """ir_measures' RR@k of each question of ``result``, relevance from the spans
    it scored (stored, or chosen with copies)."""
    import ir_measures
    from ir_measures import Qrel, ScoredDoc

    qrels, run = [], []
    for q in result.queries:
        scored = q.scored_excerpts
        for rank, span in enumerate(q.retrieved[:k]):
            doc = ":".join(map(str, span))
            run.append(ScoredDoc(q.id, doc, float(k - rank)))  # strictly decreasing
            if _shares(span, scored):
                qrels.append(Qrel(q.id, doc, 1))
        qrels.append(Qrel(q.id, "-none-", 0))  # every question is judged
    values = {
        m.query_id: m.value
        for m in ir_measures.iter_calc([ir_measures.RR @ k], qrels, run)
    }
    return {q.id: float(values.get(q.id, 0.0)) for q in result.queries}


def agreement(corpus, queries, cache, k: int) -> None:
    print(f"## ir_measures RR@{k} vs our mrr (token unit, {len(queries)} questions)")
    for chunker in ("recursive:200:0", "fixed:400:200"):
        for store in ("exact", "bm25"):
            for copies in ("strict", "any"):
                r = evaluate(
                    chunker,
                    corpus,
                    queries,
                    embedder="hashing",
                    store=store,
                    k=k,
                    cache=cache,
                    copies=copies,
                )
                theirs = peer_mrr(r, k)
                ours = {q.id: float(q.scores["mrr"] or 0.0) for q in r.queries}
                differ = [i for i in ours if abs(ours[i] - theirs[i]) > 1e-12]
                chosen = sum(1 for q in r.queries if q.chosen)
                print(
                    f"{chunker:>16} {store:>5} copies={copies:<6} mrr ours "
                    f"{np.mean(list(ours.values())):.4f} ir_measures "
                    f"{np.mean(list(theirs.values())):.4f}; questions differing: "
                    f"{len(differ)} {differ[:5]}; scored at a copy: {chosen}"
                )


def bm25s_ranking(corpus, queries, cache, k: int) -> None:
    import bm25s

    from pytest_chunkeval.chunkers import get_chunker
    from pytest_chunkeval.engine.chunking import Chunking

    chunker = "recursive:200:0"
    ours = evaluate(chunker, corpus, queries, store="bm25", k=k, cache=cache)
    chunking = Chunking(get_chunker(chunker), corpus)
    texts, spans = chunking.texts(), chunking.spans()
    retriever = bm25s.BM25()
    retriever.index(
        bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False
    )
    ids, _ = retriever.retrieve(
        bm25s.tokenize(
            [q.text for q in queries],
            stopwords="en",
            return_ids=False,
            show_progress=False,
        ),
        k=k,
        show_progress=False,
    )
    answers = {
        q.id: [spans[i] for i in row]
        for q, row in zip(queries, ids.tolist(), strict=True)
    }
    theirs = score(answers, corpus, queries, k=k)
    print(f"## our bm25 store vs bm25s's own top {k} ({chunker}, token unit)")
    for metric in ("recall", "mrr"):
        a, b = ours.mean(metric), theirs.mean(metric)
        print(
            f"{metric:>7}: ours {100 * a:.2f}  bm25s {100 * b:.2f}  ({100 * (a - b):+.2f} points)"
        )
    print(f"store: {ours.config['store']}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--skip-bm25s", action="store_true")
    args = parser.parse_args()
    corpus, queries = load_benchmark("general")
    cache = EmbeddingCache(default_cache_dir())
    agreement(corpus, queries, cache, args.k)
    if not args.skip_bm25s:
        bm25s_ranking(corpus, queries, cache, args.k)


if __name__ == "__main__":
    main()
