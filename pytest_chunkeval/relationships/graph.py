"""The relationship graph: relationships of many texts merged by normalized names.

Entities are merged across chunks by :func:`~.normalize.normalize_name`; an entity
is shown under the first surface form met (in corpus order). A relationship is one
normalized ``(subject, predicate, object)``, kept once with every evidence span it
was extracted from, in corpus coordinates.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from pytest_chunkeval.relationships.extractors import Extracted
from pytest_chunkeval.relationships.normalize import normalize_name

SpanTuple = tuple[str, int, int]


@dataclass(frozen=True)
class Relationship:
    """A relationship of the graph: display names, normalized key, evidence spans."""

    subject: str
    predicate: str
    object: str
    evidence: tuple[SpanTuple, ...]  # (doc_id, start, end), sorted, distinct

    @property
    def key(self) -> tuple[str, str, str]:
        return (
            normalize_name(self.subject),
            normalize_name(self.predicate),
            normalize_name(self.object),
        )

    @property
    def text(self) -> str:
        """What is embedded for retrieval: ``subject predicate object``."""
        return f"{self.subject} {self.predicate} {self.object}"

    def to_json(self) -> dict[str, Any]:
        return {
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "evidence": [list(s) for s in self.evidence],
        }


class RelationshipGraph:
    """Relationships merged by normalized names, in order of first appearance."""

    def __init__(self) -> None:
        self.entities: dict[str, str] = {}  # normalized name -> display name
        self._predicates: dict[str, str] = {}
        self._evidence: dict[tuple[str, str, str], set[SpanTuple]] = {}

    def add(self, doc_id: str, offset: int, extracted: Iterable[Extracted]) -> None:
        """Add relationships extracted from a text that starts at ``offset`` of
        document ``doc_id`` (their evidence spans are relative to that text)."""
        for rel in extracted:
            key = rel.key
            self.entities.setdefault(key[0], rel.subject.strip())
            self.entities.setdefault(key[2], rel.object.strip())
            self._predicates.setdefault(key[1], rel.predicate.strip())
            spans = self._evidence.setdefault(key, set())
            spans.update((doc_id, offset + s, offset + e) for s, e in rel.evidence)

    def relationships(self) -> list[Relationship]:
        """Every relationship once, in order of first appearance."""
        return [
            Relationship(
                self.entities[s],
                self._predicates[p],
                self.entities[o],
                tuple(sorted(spans)),
            )
            for (s, p, o), spans in self._evidence.items()
        ]

    def __len__(self) -> int:
        return len(self._evidence)
