"""What changed between a baseline and the run compared with it: configuration,
documents, questions. The gate compares across these changes (paired, on the
questions both runs have) and says what they were; it refuses only what cannot be
compared at all (another unit of measurement).

:func:`baseline_changes` computes a :class:`BaselineChanges` (plain data, for the
failure text and for reports); :meth:`BaselineChanges.lines` is its text.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.core.locate import clip
from pytest_chunkeval.gate.comparison.configuration import ConfigChange, config_changes
from pytest_chunkeval.gate.comparison.reworded import reworded_of
from pytest_chunkeval.gate.files.documents import (
    DocumentChange,
    document_changes,
    document_records,
    record_int,
)
from pytest_chunkeval.gate.files.questions import result_hashes
from pytest_chunkeval.util.text import plural

__all__ = [
    "BaselineChanges",
    "ConfigChange",
    "DocumentChange",
    "baseline_changes",
    "config_changes",
    "document_changes",
    "format_unplaced",
]

if TYPE_CHECKING:
    from pytest_chunkeval.data.query_types import UnplacedQuery
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.files.baseline import Baseline


@dataclass(frozen=True)
class BaselineChanges:
    """Everything that differs between a baseline and the compared run, except
    the metrics.

    ``documents_known`` is False when the corpus changed but the baseline predates
    per-document records (schema 1): which documents changed is then unknown.
    ``edited``: questions whose content (text, document, excerpt texts) changed
    under the same id, left out of the comparison; ``hashes_known`` is False when
    the baseline predates per-question hashes (schema 1 and 2), so such edits
    cannot be told. ``compared`` questions are in both runs and compared (the
    paired comparison's), out of ``total`` in this run's query set (``unplaced``
    ones included).
    """

    config: tuple[ConfigChange, ...] = ()
    corpus_changed: bool = False
    documents: tuple[DocumentChange, ...] = ()
    documents_known: bool = True
    unplaced: tuple[UnplacedQuery, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    questions_edited: bool = False
    compared: int = 0
    total: int = 0
    incomparable: tuple[ConfigChange, ...] = ()
    edited: tuple[str, ...] = ()
    hashes_known: bool = True
    baseline_total: int = 0
    """Questions the baseline holds."""
    emptied: tuple[str, ...] = ()
    """Of ``edited``: questions whose excerpts were all deleted from the query
    set (nothing left to score them on)."""
    reworded: tuple[tuple[str, str], ...] = ()
    """(old id, new id) of questions reworded under a new id, paired by their
    excerpts and compared (gate/comparison/reworded.py)."""

    @property
    def any(self) -> bool:
        """Whether anything but the metrics changed."""
        return bool(
            self.config
            or self.corpus_changed
            or self.unplaced
            or self.added
            or self.removed
            or self.questions_edited
            or self.incomparable
            or not self.hashes_known
            or self.reworded
        )

    @property
    def edited_documents(self) -> frozenset[str]:
        """Documents whose text changed or that are new."""
        return frozenset(d.doc_id for d in self.documents if d.status != "removed")

    def of(self, status: str) -> list[DocumentChange]:
        return [d for d in self.documents if d.status == status]

    def not_compared(self) -> dict[str, tuple[str, ...]]:
        """The baseline's questions this comparison does not compare, by why
        (:data:`WHY_NOT_COMPARED`; docs/baselines.md, "The question set is part
        of the baseline"), only the reasons that apply."""
        new, emptied = set(self.added), set(self.emptied)
        found = {
            "removed": self.removed,
            "edited": tuple(i for i in self.edited if i not in emptied),
            "emptied": self.emptied,
            "not found": tuple(u.id for u in self.unplaced if u.id not in new),
        }
        return {why: ids for why, ids in found.items() if ids}

    @property
    def left_out(self) -> tuple[str, ...]:
        """The baseline's questions this comparison left out: removed from the
        query set, edited under the same id (their excerpts emptied
        included), or no longer placeable in the corpus."""
        return tuple(i for ids in self.not_compared().values() for i in ids)

    def incomplete(self, max_left_out: float) -> str:
        """Why the questions compared are too few to pass ("" when they are
        not): ``3 baseline questions: 2 removed, 1 not found in the corpus``
        (with the share allowed, when one is)."""
        left = self.left_out
        if not left or self.left_out_share() <= max_left_out + 1e-12:
            return ""
        parts = ", ".join(
            f"{len(ids)} {WHY_NOT_COMPARED[why][0]}"
            for why, ids in self.not_compared().items()
        )
        n = len(left)
        text = f"{n} baseline question{'' if n == 1 else 's'}: {parts}"
        if max_left_out > 0:
            text += f", more than {100 * max_left_out:g}%"
        return text

    def not_compared_rows(self, limit: int = 20) -> list[str]:
        """One line per question not compared and why (``q-bark: removed
        from the query set``), at most ``limit`` and a count of the rest."""
        rows = [
            f"{qid}: {WHY_NOT_COMPARED[why][1]}"
            for why, ids in self.not_compared().items()
            for qid in ids
        ]
        if len(rows) > limit:
            rows = [*rows[:limit], f"... and {len(rows) - limit} more"]
        return rows

    def left_out_share(self) -> float:
        """:attr:`left_out` over the baseline's questions."""
        return len(self.left_out) / max(self.baseline_total, 1)

    @property
    def scored(self) -> str:
        """``scored 5 of 6 questions`` when some were left out, else ``""``."""
        if not self.unplaced:
            return ""
        scored = self.total - len(self.unplaced)
        return f"scored {scored} of {plural(self.total, 'question')}"

    def lines(self) -> list[str]:
        """What changed, one line each (indented continuation lines)."""
        out = [str(c) for c in (*self.incomparable, *self.config)]
        if self.corpus_changed and not self.documents_known:
            out.append(
                "corpus: edited (the baseline predates per-document records, so "
                "which documents changed is unknown; --chunkeval-update records them)"
            )
        for status in ("edited", "added", "removed"):
            docs = self.of(status)
            if docs:
                out.append(f"documents {status}: " + ", ".join(str(d) for d in docs))
        if self.reworded:
            out.append(f"questions reworded, compared: {self._reworded()}")
        if self.added:
            out.append(f"questions added: {len(self.added)} ({_few(self.added)})")
        if self.removed:
            out.append(f"questions removed: {len(self.removed)} ({_few(self.removed)})")
        if self.edited:
            out.append(
                f"questions edited under the same ids, left out: {len(self.edited)} "
                f"({_few(self.edited)})"
            )
        elif self.questions_edited:
            out.append("questions: same ids, questions or excerpts edited")
        if not self.hashes_known:
            out.append(HASHES_ABSENT)
        if self.unplaced:
            out.append(format_unplaced(self.unplaced))
        if self.unplaced or self.added or self.removed or self.edited:
            line = f"compared on the {plural(self.compared, 'question')} both runs have"
            if self.scored:
                line = f"{self.scored}; {line}"
            out.append(line)
        return out

    def line(self) -> str:
        """What changed in one line, for a report row ("" when nothing did):
        ``changed since the baseline: chunker: a -> b; documents edited:
        finance.md (+1 sentence / +42 chars); scored 5 of 6 questions; left out:
        q-audit (finance.md)``."""
        if not self.any:
            return ""
        parts = [str(c) for c in (*self.incomparable, *self.config)]
        if self.corpus_changed and not self.documents_known:
            parts.append("corpus edited (which documents: unknown, an old baseline)")
        for status in ("edited", "added", "removed"):
            docs = self.of(status)
            if docs:
                parts.append(f"documents {status}: {_few(str(d) for d in docs)}")
        if self.edited:
            parts.append(f"questions edited (same ids), left out: {_few(self.edited)}")
        elif self.questions_edited:
            parts.append("questions edited (same ids)")
        if not self.hashes_known:
            parts.append("no per-question hashes (an old baseline)")
        if self.reworded:
            parts.append(f"questions reworded, compared: {self._reworded()}")
        if self.added:
            parts.append(f"questions added: {len(self.added)} ({_few(self.added)})")
        if self.removed:
            parts.append(
                f"questions removed: {len(self.removed)} ({_few(self.removed)})"
            )
        if self.unplaced:
            left = _few(f"{u.id} ({u.doc_id})" for u in self.unplaced)
            parts.append(f"{self.scored}; left out: {left}")
        if self.added or self.removed or self.edited:
            both = plural(self.compared, "question")
            parts.append(f"compared on the {both} both runs have")
        return "changed since the baseline: " + "; ".join(parts)

    def _reworded(self) -> str:
        """``2 (q-1a2b -> q-9f8e, ...)``."""
        pairs = [f"{old} -> {new}" for old, new in self.reworded]
        return f"{len(pairs)} ({_few(pairs)})"

    def to_json(self) -> dict[str, Any]:
        """The same facts as JSON values (for reports)."""
        return {
            "config": [
                {"key": c.key, "before": c.before, "after": c.after}
                for c in self.config
            ],
            "incomparable": [
                {"key": c.key, "before": c.before, "after": c.after}
                for c in self.incomparable
            ],
            "corpus_changed": self.corpus_changed,
            "documents_known": self.documents_known,
            "documents": [
                {
                    "doc_id": d.doc_id,
                    "status": d.status,
                    "chars_before": d.chars_before,
                    "chars_after": d.chars_after,
                    "sentences_before": d.sentences_before,
                    "sentences_after": d.sentences_after,
                    "size": d.size,
                }
                for d in self.documents
            ],
            "unplaced": [u.to_json() for u in self.unplaced],
            "added": list(self.added),
            "removed": list(self.removed),
            "questions_edited": self.questions_edited,
            "edited": list(self.edited),
            "hashes_known": self.hashes_known,
            "compared": self.compared,
            "total": self.total,
            "baseline_total": self.baseline_total,
            "emptied": list(self.emptied),
            "reworded": [list(pair) for pair in self.reworded],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BaselineChanges:
        """The inverse of :meth:`to_json` (a report read back, an xdist payload)."""
        from pytest_chunkeval.data.query_types import UnplacedQuery

        def changes(key: str) -> tuple[ConfigChange, ...]:
            return tuple(
                ConfigChange(str(c["key"]), str(c["before"]), str(c["after"]))
                for c in data.get(key, [])
            )

        return cls(
            config=changes("config"),
            corpus_changed=bool(data.get("corpus_changed", False)),
            documents=tuple(
                DocumentChange(
                    str(d["doc_id"]),
                    str(d["status"]),
                    *(record_int(d, k) for k in _SIZES),
                )
                for d in data.get("documents", [])
            ),
            documents_known=bool(data.get("documents_known", True)),
            unplaced=tuple(
                UnplacedQuery.from_json(u) for u in data.get("unplaced", [])
            ),
            added=tuple(str(i) for i in data.get("added", [])),
            removed=tuple(str(i) for i in data.get("removed", [])),
            questions_edited=bool(data.get("questions_edited", False)),
            compared=int(data.get("compared", 0)),
            total=int(data.get("total", 0)),
            incomparable=changes("incomparable"),
            edited=tuple(str(i) for i in data.get("edited", [])),
            hashes_known=bool(data.get("hashes_known", True)),
            baseline_total=int(data.get("baseline_total", 0)),
            emptied=tuple(str(i) for i in data.get("emptied", [])),
            reworded=tuple((str(a), str(b)) for a, b in data.get("reworded", [])),
        )


WHY_NOT_COMPARED: Mapping[str, tuple[str, str]] = {
    "removed": ("removed", "removed from the query set"),
    "edited": ("edited", "its text or excerpts edited under its id"),
    "emptied": ("with no excerpts left", "its excerpts emptied"),
    "not found": ("not found in the corpus", "an excerpt no longer in the corpus"),
}
"""Why a baseline question is not compared: its count's words, its row's."""
_SIZES = ("chars_before", "chars_after", "sentences_before", "sentences_after")
HASHED_SCHEMA = 3
"""The baseline schema that records per-question content hashes."""
HASHES_ABSENT = (
    "questions: the baseline predates per-question hashes (schema 1 or 2), so a "
    "question edited under its id cannot be told; --chunkeval-update records them"
)


def format_unplaced(unplaced: Sequence[UnplacedQuery]) -> str:
    """The questions left out, one indented line each."""
    n = len(unplaced)
    head = (
        f"{n} question{'' if n == 1 else 's'} can no longer be placed in the "
        "corpus (excerpt text not found), left out:"
    )
    rows = [
        f"    {u.id}  {clip(u.question, 70)!r}  ({u.doc_id}: {clip(u.reason, 90)})"
        for u in unplaced
    ]
    return "\n".join([head, *rows])


def baseline_changes(baseline: Baseline, result: EvalResult) -> BaselineChanges:
    """What differs between ``baseline`` and ``result`` besides the metrics."""
    config, incomparable = config_changes(baseline.config, result.config)
    corpus_changed = baseline.corpus_hash != result.corpus_hash
    documents: tuple[DocumentChange, ...] = ()
    known = True
    if corpus_changed:
        now = document_records(result.corpus)
        known = bool(baseline.documents) and bool(now)
        if known:
            documents = document_changes(baseline.documents, now)
    placed = [q.id for q in result.queries]
    unplaced_ids = {u.id for u in result.unplaced}
    current = {*placed, *unplaced_ids}
    before = set(baseline.queries)
    added = tuple(
        i for i in [*placed, *(u.id for u in result.unplaced)] if i not in before
    )
    removed = tuple(sorted(before - current))
    recorded = {i: q.get("hash") for i, q in baseline.questions.items()}
    hashes = result_hashes(result)
    hashes_known = baseline.schema >= HASHED_SCHEMA
    excerpts = {q.id: bool(q.excerpts) for q in result.queries}
    edited = tuple(
        i
        for i in placed
        if hashes and i in before and recorded.get(i) not in (None, hashes.get(i))
    )
    emptied = tuple(i for i in edited if not excerpts.get(i, True))
    shared = sum(1 for i in placed if i in before and i not in edited)
    if any(recorded.values()) and hashes:
        questions_edited = bool(edited)
    else:  # an old baseline: as before hashes, by the whole set's hash
        questions_edited = (
            baseline.queries_hash != result.queries_hash
            and not corpus_changed  # relocated excerpts change the hash too
            and not (added or removed or result.unplaced)
        )
    return BaselineChanges(
        config=config,
        corpus_changed=corpus_changed,
        documents=documents,
        documents_known=known,
        unplaced=tuple(u for u in result.unplaced),
        added=added,
        removed=removed,
        questions_edited=questions_edited,
        compared=shared,
        total=len(current),
        incomparable=incomparable,
        edited=edited,
        hashes_known=hashes_known,
        baseline_total=len(before),
        emptied=emptied,
        reworded=reworded_of(baseline),
    )


def _few(items: Iterable[str], n: int = 5) -> str:
    items = list(items)
    return ", ".join(items[:n]) + (", ..." if len(items) > n else "")
