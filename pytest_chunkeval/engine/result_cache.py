"""Evaluation results on disk: an evaluation whose every input is unchanged reads
its ``EvalResult`` back instead of computing it (docs/performance.md, "The result
cache").

This cache is the one that could turn a change into a stale number with a green
tick, so its key is everything that determines a result and it is used only where
each of those is known (``engine/keys/result.py``, :func:`~.keys.result_key`, which
builds every cache key):

- the package's code (:func:`~.keys.code_identity`: a hash of its own source files, with
  the Python and numpy versions): any change of the code computes again;
- the result's schema and the configuration the result records (chunker name, k,
  budget, reranker, unit, tokenizer, embedder, store, scoring rules, names of the
  corpus and the query set) and its label;
- the content of the corpus and of the query set (the questions the evaluation
  scores: a lenient run without its unplaced questions is another query set);
- what determines each component's output, as the other caches key them: the
  chunker's ``cache_identity`` (the chunking cache's rule) and, when the caller
  gave the chunks, their digest; the tokenizer's identity; the embedder's
  identity; the store's (a vector store's spec, a text store's identity, a fused
  store's settings and legs); the reranker's identity and candidates.

Never cached (computed every time): a judged evaluation, a chunker, tokenizer or
store without an identity, an LLM chunking where a window fell back to the plain
split, and any ``score()`` or relationship evaluation (they do not come here). A
read-only cache is read, never written.

Entries are ``results/*/*.res`` files of the verify-on-read helper
(``util/verified.py``); the payload is the result's JSON (``to_json``) and each
earlier stage's spans (not in that JSON). Read back, the result must also match
what this run knows (configuration, corpus and query hashes, the questions in
order) or it is set aside and computed again. Its timings are replaced by
``{"cached": seconds to read it}``: a reused result does not pretend to have taken
its original time (the session summary's time column says ``cached``).
"""

from __future__ import annotations

import functools
import json
import time
from pathlib import Path
from typing import Any

from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.engine.results import EvalResult, StageResult
from pytest_chunkeval.engine.setup import EvaluationSetup
from pytest_chunkeval.util.cache_kinds import verified_store
from pytest_chunkeval.util.verified import EntryRefused, VerifiedStore

CACHED = "cached"
"""The one key of a reused result's timings."""


def result_store(cache_dir: str | Path, read_only: bool = False) -> VerifiedStore:
    """The evaluation result entries of a cache directory."""
    return verified_store(cache_dir, "results", read_only)


def encode(result: EvalResult) -> bytes:
    """An entry's payload: the result's JSON and each stage's spans."""
    stages = {name: stage.retrieved for name, stage in result.stages.items()}
    payload = {"result": result.to_json(), "stage_spans": stages}
    return json.dumps(payload, separators=(",", ":")).encode("utf-8")


def _decoder(
    setup: EvaluationSetup, config: dict[str, Any]
) -> functools.partial[EvalResult]:
    # the configuration as its JSON reads back (a tuple is a list there)
    recorded = json.loads(json.dumps(config, default=repr))
    return functools.partial(_decode, queries=setup.queries, config=recorded)


def _decode(
    payload: memoryview, *, queries: QuerySet, config: dict[str, Any]
) -> EvalResult:
    try:
        data = json.loads(bytes(payload))
        result = EvalResult.from_json(data["result"])
        spans = data["stage_spans"]
        result.stages = {
            name: _with_spans(stage, spans[name])
            for name, stage in result.stages.items()
        }
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        raise EntryRefused(f"not an evaluation result: {exc!r}") from None
    if result.config != config:
        raise EntryRefused("its configuration is not this evaluation's")
    if result.queries_hash != queries.content_hash or [
        r.id for r in result.queries
    ] != [q.id for q in queries]:
        raise EntryRefused("its questions are not this evaluation's")
    return result


def _with_spans(stage: StageResult, spans: Any) -> StageResult:
    retrieved = tuple(tuple((s[0], int(s[1]), int(s[2])) for s in q) for q in spans)
    return StageResult(
        stage.name,
        stage.depth,
        stage.recall,
        stage.recall_at_k,
        retrieved,
        stage.ceiling,
    )


def read_result(
    store: VerifiedStore, key: str, setup: EvaluationSetup, config: dict[str, Any]
) -> EvalResult | None:
    """The stored result of ``key`` (its timings ``{"cached": seconds}``, its
    corpus this evaluation's), else None."""
    started = time.perf_counter()
    result = store.get(key, _decoder(setup, config))
    if result is None:
        return None
    if result.corpus_hash != setup.corpus.content_hash:
        return None  # the key hashes it: only a forged entry gets here
    result.corpus = setup.corpus
    result.timings = {CACHED: time.perf_counter() - started}
    return result


def store_result(store: VerifiedStore, key: str, result: EvalResult) -> None:
    """Store a computed result under ``key`` (nothing in a read-only cache)."""
    if store.read_only:
        return
    try:
        payload = encode(result)
    except (TypeError, ValueError):  # a value JSON cannot hold: not cached
        return
    store.put(key, payload)
