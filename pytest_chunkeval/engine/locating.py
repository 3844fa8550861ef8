"""Locating what a user's retriever returned (docs/concepts.md#the-metrics-of-one-query
without a chunking): what a callable, an object with ``.retrieve``/``.invoke`` or
a mapping answers for each question, as corpus spans (:func:`locate_results`).
Texts are placed by :class:`~pytest_chunkeval.engine.placing.Placer`."""

from __future__ import annotations

import hashlib
import json
import operator
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pytest_chunkeval.config.scoring import DEFAULT_COPIES
from pytest_chunkeval.core.locate import preview
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Query
from pytest_chunkeval.engine.copies import candidates_by_query, copies_for
from pytest_chunkeval.engine.placing import Near, Placer
from pytest_chunkeval.engine.results import SpanTuple
from pytest_chunkeval.engine.setup import EvaluationError
from pytest_chunkeval.engine.two_stage import split_stages

RetrievedItem = Any  # str | Span | (doc_id, start, end) | object with text or span
Retriever = Callable[[str], Sequence[RetrievedItem]]


def _retriever_name(retriever: Any) -> str:
    name = getattr(retriever, "__qualname__", None)
    return name if isinstance(name, str) else type(retriever).__qualname__


def _results_list(found: Any, who: str, query: Query) -> list[RetrievedItem]:
    """The retriever's answer as a list; a bare text (iterated it would be one
    result per character), ``None`` or a non-iterable is an error naming both."""
    where = f"{who} for query {query.id!r} ({preview(query.text, 50)})"
    if isinstance(found, (str, bytes)):
        raise EvaluationError(
            f"{where} returned a single {type(found).__name__} {preview(str(found))} "
            "instead of a list of results; return a list (e.g. [text]) of texts or "
            "(doc_id, start, end) spans"
        )
    if found is None or not hasattr(found, "__iter__"):
        raise EvaluationError(
            f"{where} returned {type(found).__name__} ({found!r:.60}) instead of a "
            "list of results (texts or (doc_id, start, end) spans)"
        )
    return list(found)


def _answer_lists(
    answer: Any, who: str, query: Query
) -> tuple[list[RetrievedItem] | None, list[RetrievedItem]]:
    """``(candidates, results)`` of one answer: candidates only from a two-stage
    answer (:class:`TwoStage` or a mapping with both keys), else ``None``."""
    where = f"{who} for query {query.id!r} ({preview(query.text, 50)})"
    try:
        candidates, results = split_stages(answer, where)
    except TypeError as exc:
        raise EvaluationError(str(exc)) from None
    return (
        None if candidates is None else _results_list(candidates, who, query),
        _results_list(results, who, query),
    )


def _call_retriever(retriever: Any, query: Query) -> tuple[Any, str]:
    """The retriever's raw answer for ``query`` and how to name the retriever."""
    who = _retriever_name(retriever)
    for method in ("retrieve", "invoke"):
        fn = getattr(retriever, method, None)
        if callable(fn):
            return fn(query.text), f"retriever {who}.{method}()"
    if callable(retriever):
        return retriever(query.text), f"retriever {who}()"
    raise TypeError(
        f"a retriever must be callable (query text -> list of texts or spans) or "
        f"have .retrieve()/.invoke(); got {type(retriever).__name__}"
    )


def _named_document(item: RetrievedItem) -> str | None:
    """The document a text result names: ``.doc_id`` or ``metadata["doc_id"]``."""
    named = getattr(item, "doc_id", None)
    if named is None:
        metadata = getattr(item, "metadata", None)
        if isinstance(metadata, Mapping):
            named = metadata.get("doc_id")
    return None if named is None else str(named)


def _locate_item(
    item: RetrievedItem,
    query: Query,
    corpus: Corpus,
    rank: int,
    placer: Placer,
    near: Near | None = None,
) -> SpanTuple:
    where = f"query {query.id!r} ({preview(query.text, 50)}), result #{rank + 1}"
    if isinstance(item, tuple) and len(item) == 3 and isinstance(item[0], str):
        doc_id, start, end = item[0], _offset(item[1], where), _offset(item[2], where)
    elif all(hasattr(item, a) for a in ("doc_id", "start", "end")):
        doc_id = item.doc_id
        start, end = _offset(item.start, where), _offset(item.end, where)
    elif (
        isinstance(item, tuple)
        and len(item) == 2
        and all(isinstance(x, str) for x in item)
    ):
        return placer.place(item[1], item[0], where, near)  # (doc_id, text)
    else:
        text = getattr(item, "page_content", getattr(item, "text", item))
        if not isinstance(text, str):
            raise EvaluationError(
                f"{where}: expected a text, a (doc_id, text) pair, a (doc_id, "
                "start, end) span or an object with .page_content/.text, got "
                f"{type(item).__name__}"
            )
        return placer.place(text, _named_document(item), where, near)
    if doc_id not in corpus:
        raise EvaluationError(f"{where}: document {doc_id!r} is not in the corpus")
    n = len(corpus[doc_id].text)
    if not 0 <= start < end <= n:
        raise EvaluationError(
            f"{where}: span ({start}, {end}) is not inside {doc_id!r} (length {n})"
        )
    return (doc_id, start, end)


def _offset(value: object, where: str) -> int:
    """A span offset: a plain integer (numpy's too), never a bool, a float or a
    string coerced silently."""
    if isinstance(value, (bool, np.bool_)) or not hasattr(value, "__index__"):
        raise EvaluationError(
            f"{where}: a span's offsets must be whole numbers (character offsets), "
            f"got {value!r} ({type(value).__name__})"
        )
    return operator.index(value)


@dataclass(frozen=True)
class LocatedResults:
    """What a whole retriever returned, as corpus spans per query (the first ``k``
    of each list when ``k`` is set): all that its score depends on."""

    per_query: tuple[tuple[SpanTuple, ...], ...]
    k: int | None
    seconds: float
    candidates: tuple[tuple[SpanTuple, ...], ...] | None = None
    """A two-stage retriever's first-stage rows per query (all of them)."""

    def digest(self) -> str:
        """Equal digests, equal scores (for one corpus and query set)."""
        blob = json.dumps(
            [self.k, self.per_query, self.candidates], separators=(",", ":")
        )
        return hashlib.sha256(blob.encode()).hexdigest()

    @property
    def mean_results(self) -> float:
        """Results scored per query, on average."""
        n = len(self.per_query)
        return sum(len(spans) for spans in self.per_query) / n if n else 0.0


def locate_results(
    retrieved: Mapping[str, Sequence[RetrievedItem]] | Retriever | Any,
    corpus: Corpus,
    queries: QuerySet,
    *,
    k: int | None = None,
    locate: str = "exact",
    copies: str = DEFAULT_COPIES,
) -> LocatedResults:
    """Ask the retriever every question (or read the mapping) and locate each of
    the first ``k`` results (all when ``k`` is None) in the corpus; texts are
    placed by :class:`~pytest_chunkeval.engine.placing.Placer` (``locate``:
    ``exact`` or ``normalized``)."""
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise EvaluationError(
            f"k must be a positive number of results per question (or None: all), "
            f"got {k!r}"
        )
    placer = Placer(corpus, locate, copies)
    nears = _nears(copies, corpus, queries)
    per_query: list[tuple[SpanTuple, ...]] = []
    pools: list[tuple[SpanTuple, ...] | None] = []
    began = time.perf_counter()
    for i, q in enumerate(queries):
        if isinstance(retrieved, Mapping):
            if q.id not in retrieved:
                raise EvaluationError(f"no results given for query {q.id!r}")
            answer, who = retrieved[q.id], "the results mapping"
        else:
            answer, who = _call_retriever(retrieved, q)
        candidates, items = _answer_lists(answer, who, q)
        if k is not None:
            items = items[:k]
        per_query.append(
            tuple(
                _locate_item(item, q, corpus, r, placer, nears[i])
                for r, item in enumerate(items)
            )
        )
        pools.append(
            None
            if candidates is None
            else tuple(
                _locate_item(item, q, corpus, r, placer, nears[i])
                for r, item in enumerate(candidates)
            )
        )
    staged = [p is not None for p in pools]
    if any(staged) and not all(staged):
        plain = queries[staged.index(False)].id
        raise EvaluationError(
            f"the retriever answered candidates and results for some queries but a "
            f"plain list for query {plain!r}: answer the same shape for every query"
        )
    return LocatedResults(
        tuple(per_query),
        k,
        time.perf_counter() - began,
        tuple(p or () for p in pools) if pools and all(staged) else None,
    )


def _nears(copies: str, corpus: Corpus, queries: QuerySet) -> list[Near | None]:
    """Per query, what decides among several occurrences of a retrieved text:
    its excerpts' candidates and stored spans (nothing with ``copies="strict"``)."""
    found = copies_for(copies, corpus, queries)
    if found is None:
        return [None] * len(queries)
    candidates = candidates_by_query(found, corpus, len(queries))
    return [
        (candidates[i], [e.span for e in q.excerpts]) for i, q in enumerate(queries)
    ]
