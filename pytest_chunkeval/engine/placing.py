"""Placing a retrieved text in the corpus: the one rule for texts a retriever
returns (docs/concepts.md, "Placing a retriever's text").

The text is searched in the document the retriever named (a ``(doc_id, text)``
pair, a ``.doc_id`` attribute or ``metadata["doc_id"]``), else in every document,
in stages: verbatim, then stripped of surrounding whitespace, then with whitespace
ignored, then (``locate="normalized"`` only) normalized
(:mod:`~pytest_chunkeval.core.normalize`). The first stage that finds it decides.
Exactly one occurrence is the text's span. Of several, identical text being
interchangeable (``copies="any"``), the one sharing the most characters with the
question's excerpt candidates is taken; ties: the one overlapping a stored excerpt
span, then document order (a text near no candidate goes to its first
occurrence). ``copies="strict"`` refuses several as ambiguous, with the
candidates listed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from pytest_chunkeval.config.defaults import check_locate
from pytest_chunkeval.config.scoring import DEFAULT_COPIES, check_copies
from pytest_chunkeval.core.locate import preview
from pytest_chunkeval.engine.setup import EvaluationError

if TYPE_CHECKING:
    from pytest_chunkeval.core.normalize import FoldedText
    from pytest_chunkeval.data.corpus import Corpus

SpanTuple = tuple[str, int, int]
Near = tuple[Sequence[SpanTuple], Sequence[SpanTuple]]
"""A question's excerpt candidates (every occurrence of each excerpt's text) and
its stored excerpt spans."""
_SHOWN = 5  # candidates listed in an ambiguity error


class PlacementError(EvaluationError):
    """A retrieved text is not in the corpus, or is there more than once."""


def _exact(text: str, needle: str) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    if not needle:
        return found
    i = text.find(needle)
    while i >= 0:
        found.append((i, i + len(needle)))
        i = text.find(needle, i + 1)
    return found


def _whitespace(
    text: str,
    needle: str,
    windows: Sequence[tuple[int, int, int, int | None]] | None = None,
) -> list[tuple[int, int]]:
    """Matches of ``needle`` with whitespace ignored, in the whole text or only
    inside ``windows`` (normalized matches' windows: a whitespace-insensitive
    match is also a normalized one, so it lies in one of them)."""
    words = needle.split()
    if not words:
        return []
    if windows is None:
        # Every word must be in the text verbatim: checked longest (rarest)
        # first, this skips the regex scan of a document that cannot match.
        if any(w not in text for w in sorted(set(words), key=len, reverse=True)):
            return []
        windows = [(0, 0, 0, None)]
    pattern: re.Pattern[str] | None = None
    found: set[tuple[int, int]] = set()
    for _, _, lo, hi in windows:
        end = len(text) if hi is None else hi
        if end - lo < len(text) and not all(w in text[lo:end] for w in words):
            continue  # a small window without every word: no regex needed
        if pattern is None:
            pattern = re.compile(r"\s*".join(re.escape(w) for w in words))
        found.update((m.start(), m.end()) for m in pattern.finditer(text, lo, end))
    return sorted(found)


class Placer:
    """Places retrieved texts in one corpus (``locate``: ``exact`` or
    ``normalized``). Memoizes by text and named document (a chunk is often
    retrieved for many questions); a document's normalized form is built once."""

    def __init__(
        self, corpus: Corpus, locate: str = "exact", copies: str = DEFAULT_COPIES
    ) -> None:
        self.corpus = corpus
        self.locate = check_locate(locate)
        self.copies = check_copies(copies)
        self._folded: dict[str, FoldedText] = {}
        self._memo: dict[tuple[str | None, str], list[SpanTuple] | str] = {}
        self._stage: dict[tuple[str | None, str], str] = {}

    def _folded_text(self, doc_id: str) -> FoldedText:
        from pytest_chunkeval.core.normalize import fold

        folded = self._folded.get(doc_id)
        if folded is None:
            folded = self._folded[doc_id] = fold(self.corpus[doc_id].text)
        return folded

    def place(
        self,
        text: str,
        doc_id: str | None,
        where: str,
        near: Near | None = None,
    ) -> SpanTuple:
        """The span of ``text`` (in ``doc_id`` when the retriever named it);
        :class:`PlacementError` naming ``where`` when it is absent, or (strict)
        ambiguous. ``near``: the question's excerpt candidates and stored spans,
        which decide among several occurrences."""
        key = (doc_id, text)
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._search(text, doc_id)
        if isinstance(found, str):
            raise PlacementError(f"{where}: {found}")
        if len(found) == 1:
            return found[0]
        if self.copies == "strict":
            how = self._stage.get(key, "verbatim")
            raise PlacementError(
                f"{where}: {self._ambiguous(text, doc_id, how, found)}"
            )
        return nearest(found, near)

    def _search(self, text: str, doc_id: str | None) -> list[SpanTuple] | str:
        if doc_id is not None and doc_id not in self.corpus:
            return (
                f"the retriever named document {doc_id!r}, which is not in the "
                f"corpus (text {preview(text)})"
            )
        scope = [doc_id] if doc_id is not None else list(self.corpus.ids)
        windows: dict[str, list[tuple[int, int, int, int | None]]] = {}
        if self.locate == "normalized":
            from pytest_chunkeval.core.normalize import fold_needle

            folded = fold_needle(text)
            if folded:  # else (punctuation only) nothing matches normalized
                windows = {d: self._folded_text(d).find_windows(folded) for d in scope}
                # Any earlier stage's match is also a normalized match: documents
                # without one need no other search.
                scope = [d for d in scope if windows[d]]
        stages: list[tuple[str, Callable[[str], list[tuple[int, int]]]]] = [
            ("verbatim", lambda d: _exact(self.corpus[d].text, text)),
            (
                "stripped",
                lambda d: (
                    _exact(self.corpus[d].text, text.strip())
                    if text.strip() != text
                    else []
                ),
            ),
            (
                "with whitespace ignored",
                lambda d: _whitespace(self.corpus[d].text, text, windows.get(d)),
            ),
        ]
        if self.locate == "normalized":
            stages.append(("normalized", lambda d: [w[:2] for w in windows.get(d, [])]))
        for how, find in stages:
            candidates = [(d, s, e) for d in scope for s, e in find(d)]
            if candidates:
                self._stage[(doc_id, text)] = how
                return candidates
        tried = ", nor ".join(how for how, _ in stages[1:] if how != "stripped")
        where = f"document {doc_id!r}" if doc_id is not None else "the corpus"
        hint = (
            ""
            if self.locate == "normalized"
            else "; if the retriever lower-cases or cleans its text, set "
            "chunkeval_locate = normalized (or score(..., locate='normalized'))"
        )
        return (
            f"retrieved text {preview(text)} was not found in {where} "
            f"(not verbatim, nor {tried}){hint}"
        )

    def _ambiguous(
        self, text: str, doc_id: str | None, how: str, candidates: list[SpanTuple]
    ) -> str:
        listed = ", ".join(f"{d} [{s}:{e}]" for d, s, e in candidates[:_SHOWN])
        more = (
            f" and {len(candidates) - _SHOWN} more" if len(candidates) > _SHOWN else ""
        )
        where = f"document {doc_id!r}" if doc_id is not None else "the corpus"
        fix = (
            "return (doc_id, start, end) spans"
            if doc_id is not None
            else "name its document (a (doc_id, text) pair, a .doc_id attribute or "
            "metadata['doc_id']) or return (doc_id, start, end) spans"
        )
        return (
            f"retrieved text {preview(text)} occurs {len(candidates)} times in "
            f"{where} ({how}): {listed}{more}. Which one was retrieved is ambiguous: "
            f"{fix}"
        )


def _shared(span: SpanTuple, spans: Sequence[SpanTuple]) -> int:
    """Characters of ``span`` inside the union of ``spans``."""
    doc, start, end = span
    pieces = sorted(
        (max(s, start), min(e, end)) for d, s, e in spans if d == doc and s < end
    )
    total, reach = 0, start
    for a, b in pieces:
        a = max(a, reach)
        if b > a:
            total += b - a
            reach = b
    return total


def nearest(found: Sequence[SpanTuple], near: Near | None) -> SpanTuple:
    """Of several occurrences (in document order), the one sharing the most
    characters with the question's candidates; ties: the one overlapping a
    stored span, then the first."""
    if near is None:
        return found[0]
    candidates, stored = near
    return min(
        found,
        key=lambda span: (
            -_shared(span, candidates),
            0 if _shared(span, stored) > 0 else 1,
        ),
    )
