"""Extraction over many texts: each distinct text once, answers in the shared cache.

Answers are stored in the LLM answer cache (:mod:`pytest_chunkeval.llm.answers`)
under role ``relations``, keyed by the extractor's identity, its prompt version and
the exact text; the value is the located relationships, evidence as spans relative
to the text. So a re-run with nothing changed asks nothing, a chunker change asks
only for chunk texts never seen, and the gold set (extracted from excerpts) is
asked once for every chunker. A cached value is checked against the text it is
for before use; one that does not fit is asked again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pytest_chunkeval.graph.extractors import (
    Extractor,
    TextExtraction,
    locate_relationships,
)
from pytest_chunkeval.graph.llm import ExtractionFailed, warn_failed
from pytest_chunkeval.llm.answers import AnswerCache, AnswerKey, hash_input
from pytest_chunkeval.util.progress import progress_bar

ROLE = "relations"


@dataclass
class ExtractionStats:
    """What one extraction pass did, cumulative over calls."""

    texts: int = 0  # distinct texts
    cached: int = 0  # answered from the cache
    extracted: int = 0  # answered by the extractor now
    failed: int = 0  # no usable answer (not cached)
    relationships: int = 0  # located relationships over the distinct texts
    not_verbatim: int = 0  # dropped: evidence not found in the text

    def to_json(self) -> dict[str, int]:
        return dict(vars(self))


def answer_key(extractor: Extractor, text: str) -> AnswerKey:
    """The cache key of ``extractor``'s answer for ``text``."""
    version = str(getattr(extractor, "prompt_version", "-"))
    return AnswerKey(ROLE, extractor.identity, version, hash_input(text))


def extract_texts(
    extractor: Extractor,
    texts: Sequence[str],
    *,
    cache: AnswerCache | None,
    where: Callable[[int], str],
    stats: ExtractionStats | None = None,
    progress: bool | None = None,
    log: Callable[[str], None] | None = None,
) -> list[TextExtraction]:
    """The extraction of every text (in order; repeated texts asked once).

    ``where(i)`` names text ``i`` in errors. ``log`` receives the cost estimate of
    an extractor that has one (an LLM) before its first request.
    """
    stats = stats if stats is not None else ExtractionStats()
    first: dict[str, int] = {}
    for i, text in enumerate(texts):
        first.setdefault(text, i)
    answers: dict[str, TextExtraction] = {}
    todo: list[str] = []
    for text in first:
        found = None
        if cache is not None:
            entry = cache.get(answer_key(extractor, text))
            if entry is not None:
                try:
                    found = TextExtraction.from_json(entry.value, len(text))
                except ValueError:
                    found = None  # written by something else: ask again
        if found is None:
            todo.append(text)
        else:
            answers[text] = found
    stats.texts += len(first)
    stats.cached += len(first) - len(todo)
    estimate = getattr(extractor, "estimate", None)
    if todo and log is not None and callable(estimate):
        log(f"relationship extraction: {estimate(todo)}")

    lock = threading.Lock()
    bar = progress_bar(len(todo), progress=progress, desc="extracting", unit="text")

    def run(text: str) -> None:
        at = where(first[text])
        try:
            raw = extractor.extract(text)
        except ExtractionFailed as exc:
            warn_failed(at, exc)
            with lock:
                stats.failed += 1
                answers[text] = TextExtraction(())
            return
        found = locate_relationships(text, raw, where=at)
        if cache is not None:
            cache.put(answer_key(extractor, text), found.to_json())
        with lock:
            stats.extracted += 1
            answers[text] = found
            if bar is not None:
                bar.update(1)

    try:
        workers = int(getattr(extractor, "concurrency", 1))
        if workers > 1 and len(todo) > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                futures = [pool.submit(run, t) for t in todo]
                try:
                    for future in futures:
                        future.result()
                except BaseException:
                    # The first error stops the run; answers already received
                    # are cached, so the next run resumes from there.
                    pool.shutdown(wait=True, cancel_futures=True)
                    raise
        else:
            for text in todo:
                run(text)
    finally:
        if bar is not None:
            bar.close()
    for found in answers.values():
        stats.relationships += len(found.relationships)
        stats.not_verbatim += found.not_verbatim
    return [answers[text] for text in texts]
