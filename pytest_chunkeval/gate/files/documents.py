"""What a baseline records of each document: enough to say, on a later run, which
documents were added, removed or edited, and by how much (never the text).

Each document is ``{"chars": 412, "hash": "9f86d081884c7d65", "sentences": 6}``:
the first 16 hex digits of the SHA-256 of its text, its length in characters and
its number of sentences (a plain count of ``.``, ``!`` or ``?`` followed by a space
or the end: an edit's size in words a reviewer reads, not a linguistic count).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_chunkeval.data.corpus import Corpus

_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")


def text_hash(text: str) -> str:
    """The first 16 hex digits of the SHA-256 of ``text`` as UTF-8."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def count_sentences(text: str) -> int:
    """Sentence ends in ``text`` (see the module docstring)."""
    return len(_SENTENCE_END.findall(text))


def document_records(corpus: Corpus | None) -> dict[str, dict[str, Any]]:
    """Per document id: its hash, length and sentence count (empty without a
    corpus, e.g. a result read back from JSON)."""
    if corpus is None:
        return {}
    return {
        doc.id: {
            "chars": len(doc.text),
            "hash": text_hash(doc.text),
            "sentences": count_sentences(doc.text),
        }
        for doc in corpus
    }


def valid_records(data: Any) -> dict[str, dict[str, Any]]:
    """The ``documents`` of a baseline file, checked (``ValueError`` if malformed)."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ValueError(f"documents: expected an object, got {data!r}")
    out = {}
    for doc_id, record in data.items():
        if not (
            isinstance(record, Mapping)
            and isinstance(record.get("hash"), str)
            and _count(record.get("chars"))
            and _count(record.get("sentences", 0))
        ):
            raise ValueError(f"documents: malformed record of {doc_id!r}: {record!r}")
        out[str(doc_id)] = dict(record)
    return out


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass(frozen=True)
class DocumentChange:
    """A document added, removed or edited since the baseline, with its size
    before and after (None on the side where it does not exist)."""

    doc_id: str
    status: str  # "added" | "removed" | "edited"
    chars_before: int | None = None
    chars_after: int | None = None
    sentences_before: int | None = None
    sentences_after: int | None = None

    @property
    def size(self) -> str:
        """``+1 sentence / +87 chars``; ``412 chars`` for an added or removed one."""
        if self.status != "edited":
            chars = self.chars_after if self.status == "added" else self.chars_before
            return f"{chars} chars"
        parts = []
        if self.sentences_before is not None and self.sentences_after is not None:
            moved = self.sentences_after - self.sentences_before
            if moved:
                parts.append(f"{moved:+d} sentence{'' if abs(moved) == 1 else 's'}")
        chars = (self.chars_after or 0) - (self.chars_before or 0)
        parts.append(f"{chars:+d} chars" if chars else "same length")
        return " / ".join(parts)

    def __str__(self) -> str:
        return f"{self.doc_id} ({self.size})"


def document_changes(
    before: Mapping[str, Mapping[str, Any]], after: Mapping[str, Mapping[str, Any]]
) -> tuple[DocumentChange, ...]:
    """Documents added, removed or edited between two sets of records."""
    out = []
    for doc_id in sorted({*before, *after}):
        old, new = before.get(doc_id), after.get(doc_id)
        if old is not None and new is not None and old.get("hash") == new.get("hash"):
            continue
        status = "added" if old is None else "removed" if new is None else "edited"
        out.append(
            DocumentChange(
                doc_id,
                status,
                chars_before=record_int(old, "chars"),
                chars_after=record_int(new, "chars"),
                sentences_before=record_int(old, "sentences"),
                sentences_after=record_int(new, "sentences"),
            )
        )
    return tuple(out)


def record_int(record: Mapping[str, Any] | None, key: str) -> int | None:
    """An integer field of a document record (None: absent or not one)."""
    if record is None or not isinstance(record.get(key), int):
        return None
    return int(record[key])
