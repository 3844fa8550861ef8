"""Extraction over many texts: each distinct text once, answers in the shared cache.

Runs on the shared batch runner (:func:`pytest_chunkeval.llm.batch.run_batch`):
answers are stored in the LLM answer cache under role ``relations``, keyed by the
extractor's identity, its prompt version and the exact text; the value is the
located relationships, evidence as spans relative to the text. So a re-run with
nothing changed asks nothing, a chunker change asks only for chunk texts never
seen, the gold set (extracted from excerpts) is asked once for every chunker, and
an interrupted run resumes. A cached value is checked against the text it is for
before use; one that does not fit is asked again. An extractor without a cache
identity (a function without a ``cache_version``) reads and writes no answer: it
is asked every run, each distinct text once, the answers of the run kept in
memory (``memo``) by the caller.

A text without a usable answer (the model's answers stayed malformed, or the server
failed after retries) stops the evaluation with :class:`ExtractionFailed` naming
it: scoring without it would give a number that looks complete and is not.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_chunkeval.errors import UnavailableError
from pytest_chunkeval.llm.answers import AnswerCache, AnswerKey, hash_input
from pytest_chunkeval.llm.batch import Outcome, plan_batch, run_batch
from pytest_chunkeval.relationships.extractors import (
    Extractor,
    TextExtraction,
    extractor_cache_identity,
    locate_relationships,
)

ROLE = "relations"


class ExtractionFailed(UnavailableError):
    """Some texts got no usable answer; the message names them."""


@dataclass
class ExtractionStats:
    """What extraction did, cumulative over calls."""

    texts: int = 0  # distinct texts
    cached: int = 0  # answered from the cache
    extracted: int = 0  # answered by the extractor now
    reused: int = 0  # answered earlier in this run (an extractor never cached)
    requests: int = 0  # requests sent (an LLM; 0 for a callable)
    relationships: int = 0  # located relationships over the distinct texts
    not_verbatim: int = 0  # dropped: evidence not found in the text

    def to_json(self) -> dict[str, int]:
        return dict(vars(self))


def answer_key(extractor: Extractor, text: str) -> AnswerKey:
    """The cache key of ``extractor``'s answer for ``text`` (for an extractor
    without a cache identity, never cached, a key naming it for the batch)."""
    version = str(getattr(extractor, "prompt_version", "-"))
    identity = extractor_cache_identity(extractor) or extractor.identity
    return AnswerKey(ROLE, identity, version, hash_input(text))


def _compute(extractor: Extractor, text: str, where: str) -> Outcome:
    ask = getattr(extractor, "ask", None)
    if callable(ask):  # an LLM: tokens, requests and rejections to count
        answer = ask(text)
        if answer.relationships is None:
            return Outcome(
                rejection=answer.rejection,
                prompt_tokens=answer.prompt_tokens,
                completion_tokens=answer.completion_tokens,
                requests=answer.requests,
            )
        found = locate_relationships(text, answer.relationships, where=where)
        return Outcome(
            found.to_json(),
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            requests=answer.requests,
        )
    found = locate_relationships(text, extractor.extract(text), where=where)
    return Outcome(found.to_json(), requests=0)


def cost_plan(
    extractor: Extractor,
    texts: Sequence[str],
    cache: AnswerCache,
    price: tuple[float, float] | None = None,
) -> Any:
    """What extracting ``texts`` would send (None for an extractor that is not an
    LLM): requests still needed, tokens, estimated cost (``price``: USD per 1000
    prompt and completion tokens; None: the model's built-in price, if known)."""
    messages = getattr(extractor, "messages", None)
    model = getattr(extractor, "model", None)
    if not callable(messages) or model is None:
        return None
    never = extractor_cache_identity(extractor) is None  # every text is asked
    distinct = list(dict.fromkeys(texts))
    return plan_batch(
        [messages(t) for t in distinct],
        model,
        keys=[answer_key(extractor, t) for t in distinct],
        cache=None if never else cache,
        completion_tokens=int(getattr(extractor, "expected_completion_tokens", 300)),
        price=price,
    )


def _failure(extractor: Extractor, failed: list[str], *, cached: bool) -> Exception:
    """The error naming the texts without a usable answer (at most 10)."""
    shown = "\n  ".join(failed[:10])
    more = f"\n  ... and {len(failed) - 10} more" if len(failed) > 10 else ""
    others = (
        "the others are cached: run again to retry only these"
        if cached
        else "not cached: an extractor without a cache_version is asked every run"
    )
    return ExtractionFailed(
        f"relationship extraction with {extractor.identity}: {len(failed)} "
        f"text(s) got no usable answer ({others}):\n  {shown}{more}"
    )


def extract_texts(
    extractor: Extractor,
    texts: Sequence[str],
    *,
    cache: AnswerCache | None,
    where: Callable[[int], str],
    stats: ExtractionStats | None = None,
    progress: bool | None = None,
    memo: dict[str, TextExtraction] | None = None,
) -> list[TextExtraction]:
    """The extraction of every text, in order (repeated texts asked once).
    ``where(i)`` names text ``i`` in errors. An extractor without a cache
    identity reads and writes nothing in ``cache``; ``memo`` holds the answers
    of this run (read, then given the new ones), so that no text is asked twice."""
    stats = stats if stats is not None else ExtractionStats()
    if extractor_cache_identity(extractor) is None:
        cache = None
    first: dict[str, int] = {}
    for i, text in enumerate(texts):
        first.setdefault(text, i)
    known = {t: memo[t] for t in first if memo is not None and t in memo}
    distinct = [t for t in first if t not in known]
    lock = threading.Lock()
    requests = [0]

    def compute(text: str) -> Outcome:
        outcome = _compute(extractor, text, where(first[text]))
        with lock:
            requests[0] += outcome.requests
        return outcome

    batch = run_batch(
        distinct,
        key=lambda t: answer_key(extractor, t),
        compute=compute,
        cache=cache,
        concurrency=int(getattr(extractor, "concurrency", 1)),
        progress=progress,
        desc="extracting relationships",
    )
    answers: dict[str, TextExtraction] = {}
    failed: list[str] = []
    for text, value, rejection in zip(
        distinct, batch.values, batch.rejections, strict=True
    ):
        if rejection is not None:
            failed.append(
                f"{where(first[text])}: {rejection.reason}: {rejection.detail}"
            )
            continue
        try:
            answers[text] = TextExtraction.from_json(value, len(text))
        except ValueError:
            # A cached value that does not fit this text: ask again, store anew.
            outcome = compute(text)
            if outcome.rejection is not None:
                failed.append(f"{where(first[text])}: {outcome.rejection.detail}")
                continue
            if cache is not None:
                cache.put(answer_key(extractor, text), outcome.value)
            answers[text] = TextExtraction.from_json(outcome.value, len(text))
    if failed:
        raise _failure(extractor, failed, cached=cache is not None)
    if memo is not None:
        memo.update(answers)
    answers.update(known)
    stats.texts += len(first)
    stats.cached += batch.stats.cached
    stats.extracted += len(distinct) - batch.stats.cached
    stats.reused += len(known)
    stats.requests += requests[0]
    for found in answers.values():
        stats.relationships += len(found.relationships)
        stats.not_verbatim += found.not_verbatim
    return [answers[text] for text in texts]
