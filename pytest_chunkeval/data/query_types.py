"""A query and its excerpts (the ground-truth spans), and the query set's errors."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_chunkeval.core.spans import Span
from pytest_chunkeval.errors import ChunkevalWarning, DataError

SCHEMA_VERSION = 1
"""Version of the JSON / JSONL query-set schema this package reads and writes."""


class QuerySetError(DataError):
    """A query set cannot be read, or does not match its corpus."""


class UnknownQuery(QuerySetError, KeyError):
    """``queries[query_id]`` with an id the query set does not hold."""

    def __str__(self) -> str:
        # KeyError's own __str__ would repr() the message.
        return str(self.args[0]) if self.args else ""


class QuerySetWarning(ChunkevalWarning):
    """Something in a query file was skipped (an incomplete final JSONL line)."""


@dataclass(frozen=True)
class Excerpt:
    """A ground-truth passage: its text and where it is, ``text[start:end]``.

    ``approximate`` is true when the stored text was found in the document only up
    to whitespace (the text then holds the document's own characters).
    """

    text: str
    doc_id: str
    start: int
    end: int
    approximate: bool = False

    @property
    def span(self) -> Span:
        return Span(self.doc_id, self.start, self.end)


@dataclass(frozen=True)
class StatedRelationship:
    """A gold relationship given in a query file (Graph-RAG evaluation): subject,
    predicate, object and its evidence texts (empty: the query's excerpts)."""

    subject: str
    predicate: str
    object: str
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class Query:
    """A question, its excerpts, and the document it was generated from.

    ``relationships``: gold relationships given in the file (else, a relationship
    evaluation extracts them from the excerpts).
    """

    id: str
    text: str
    excerpts: tuple[Excerpt, ...]
    doc_id: str
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    relationships: tuple[StatedRelationship, ...] = ()

    @property
    def spans(self) -> tuple[Span, ...]:
        return tuple(e.span for e in self.excerpts)

    @property
    def tags(self) -> tuple[str, ...]:
        """The question's tags: ``metadata["tags"]`` (docs/formats.md)."""
        return query_tags(self.metadata)


def query_tags(metadata: Mapping[str, Any]) -> tuple[str, ...]:
    """``metadata["tags"]`` as a sorted tuple of distinct tags: a list of
    strings, or one string as a single tag; ``()`` when absent (docs/formats.md,
    "Query sets"; the gate names tags whose drop is beyond their own tolerance,
    docs/baselines.md "Documents and tags")."""
    tags = metadata.get("tags", ())
    if isinstance(tags, str):
        tags = (tags,)
    if not isinstance(tags, (list, tuple)):
        return ()
    return tuple(sorted({t for t in tags if isinstance(t, str) and t}))


def stable_query_id(prefix: str, question: str) -> str:
    """``<prefix>-<first 8 hex digits of sha256(question as UTF-8)>``.

    The reference CSV importer uses the ``corpus_id`` as prefix and appends ``-2``,
    ``-3``... to later duplicates.
    """
    digest = hashlib.sha256(question.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{prefix}-{digest[:8]}"


@dataclass(frozen=True)
class UnplacedQuery:
    """A query whose excerpts can no longer be placed in an edited corpus: left
    out of a baseline comparison (and only there; elsewhere it is an error)."""

    id: str
    question: str
    doc_id: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {
            "id": self.id,
            "question": self.question,
            "doc_id": self.doc_id,
            "reason": self.reason,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> UnplacedQuery:
        return cls(
            str(data["id"]),
            str(data["question"]),
            str(data["doc_id"]),
            str(data.get("reason", "")),
        )
