"""Gold relationships of each question, independent of the chunking under test.

For a question whose query file lists ``relationships``, those are the gold set:
each one's evidence (text, or a list of texts) is located in the question's
document, preferring a match inside its excerpts; without evidence, the question's
excerpts are its evidence. For any other question, the gold set is what the same
extractor finds in each of its excerpt texts (cached like chunk answers), evidence
shifted from the excerpt to the document. Either way no chunk is involved, so
every chunker is scored against the same gold set.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_chunkeval.core.locate import locate, preview
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Query
from pytest_chunkeval.errors import DataError
from pytest_chunkeval.llm.answers import AnswerCache
from pytest_chunkeval.relationships.extraction import ExtractionStats, extract_texts
from pytest_chunkeval.relationships.extractors import Extractor, TextExtraction
from pytest_chunkeval.relationships.graph import Relationship, RelationshipGraph


class GoldError(DataError):
    """A relationship given in the query file cannot be placed in the corpus."""


def stated_relationships(query: Query) -> Sequence[Any]:
    """The relationships the query file gives for ``query`` (empty if none)."""
    return tuple(getattr(query, "relationships", ()) or ())


def _evidence_span(
    query: Query, corpus: Corpus, needle: str, where: str
) -> tuple[str, int, int]:
    for ex in query.excerpts:  # inside an excerpt first: the likeliest place
        found = locate(ex.text, needle)
        if found is not None:
            return (ex.doc_id, ex.start + found[0], ex.start + found[1])
    doc_ids = [query.doc_id, *(ex.doc_id for ex in query.excerpts)]
    for doc_id in dict.fromkeys(doc_ids):
        if doc_id in corpus:
            found = locate(corpus[doc_id].text, needle)
            if found is not None:
                return (doc_id, found[0], found[1])
    raise GoldError(
        f"{where}: evidence {preview(needle)} is not in document {query.doc_id!r} "
        "(not verbatim, nor with whitespace ignored)"
    )


def _from_file(query: Query, corpus: Corpus) -> list[Relationship]:
    graph: dict[tuple[str, str, str], Relationship] = {}
    for i, rel in enumerate(stated_relationships(query), 1):
        where = f"query {query.id!r} ({preview(query.text, 50)}), relationship {i}"
        pieces = list(rel.evidence)
        if pieces:
            spans = tuple(_evidence_span(query, corpus, p, where) for p in pieces)
        else:
            spans = tuple((e.doc_id, e.start, e.end) for e in query.excerpts)
        if not spans:
            raise GoldError(f"{where}: no evidence given and the query has no excerpts")
        new = Relationship(rel.subject, rel.predicate, rel.object, spans)
        old = graph.get(new.key)
        if old is not None:
            spans = tuple(sorted({*old.evidence, *spans}))
            new = Relationship(old.subject, old.predicate, old.object, spans)
        graph[new.key] = new
    return [
        Relationship(r.subject, r.predicate, r.object, tuple(sorted(set(r.evidence))))
        for r in graph.values()
    ]


def excerpt_texts(
    queries: QuerySet, corpus: Corpus
) -> tuple[list[tuple[int, int]], list[str]]:
    """The excerpt texts gold relationships are extracted from, with their
    ``(query, excerpt)`` positions (questions with stated relationships have none)."""
    rows: list[tuple[int, int]] = []
    texts: list[str] = []
    for qi, q in enumerate(queries):
        if not stated_relationships(q):
            for ei, ex in enumerate(q.excerpts):
                rows.append((qi, ei))
                texts.append(corpus[ex.doc_id].text[ex.start : ex.end])
    return rows, texts


def gold_relationships(
    queries: QuerySet,
    corpus: Corpus,
    extractor: Extractor,
    *,
    cache: AnswerCache | None,
    stats: ExtractionStats,
    progress: bool | None = None,
    memo: dict[str, TextExtraction] | None = None,
) -> list[list[Relationship]]:
    """The gold relationships of every question, in query order (``memo``: as
    for :func:`~pytest_chunkeval.relationships.extraction.extract_texts`)."""
    excerpt_rows, texts = excerpt_texts(queries, corpus)

    def where(i: int) -> str:
        qi, ei = excerpt_rows[i]
        q = queries[qi]
        return f"query {q.id!r} ({preview(q.text, 50)}), excerpt {ei + 1}"

    found = extract_texts(
        extractor,
        texts,
        cache=cache,
        where=where,
        stats=stats,
        progress=progress,
        memo=memo,
    )
    graphs = [RelationshipGraph() for _ in range(len(queries))]
    for (qi, ei), extraction in zip(excerpt_rows, found, strict=True):
        ex = queries[qi].excerpts[ei]
        graphs[qi].add(ex.doc_id, ex.start, extraction.relationships)
    out = []
    for qi, q in enumerate(queries):
        out.append(
            _from_file(q, corpus)
            if stated_relationships(q)
            else graphs[qi].relationships()
        )
    return out
