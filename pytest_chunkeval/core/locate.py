"""Find a piece of text inside a document: exact first, then whitespace-insensitive.

Used wherever text must become a span: excerpts of a query set whose offsets no
longer match, pieces returned by a user's chunker, chunk texts returned by a user's
retriever.
"""

from __future__ import annotations

import re

_WS = re.compile(r"\s+")


def _whitespace_pattern(needle: str) -> re.Pattern[str] | None:
    words = needle.split()
    if not words:
        return None
    return re.compile(r"\s*".join(re.escape(w) for w in words))


def find_exact(text: str, needle: str, start: int = 0) -> tuple[int, int] | None:
    """First exact occurrence of ``needle`` at or after ``start``."""
    i = text.find(needle, start)
    return None if i < 0 or not needle else (i, i + len(needle))


def find_normalized(text: str, needle: str, start: int = 0) -> tuple[int, int] | None:
    """First occurrence ignoring differences in whitespace (runs, kind, presence).

    The span returned starts at the first and ends after the last non-space
    character of the match.
    """
    pattern = _whitespace_pattern(needle)
    if pattern is None:
        return None
    m = pattern.search(text, start)
    return None if m is None else (m.start(), m.end())


def locate(
    text: str, needle: str, start: int = 0, *, hint: int | None = None
) -> tuple[int, int] | None:
    """Span of ``needle`` in ``text`` at or after ``start``, or ``None``.

    ``hint`` is where the caller expects the match (e.g. a stored start offset); among
    exact matches the one nearest to it wins, so a repeated sentence keeps its place.
    Falls back to the stripped needle, then to a whitespace-insensitive match.
    """
    if hint is not None and needle:
        before = text.rfind(needle, start, hint + len(needle))
        after = text.find(needle, max(start, hint))
        candidates = [i for i in (before, after) if i >= 0]
        if candidates:
            i = min(candidates, key=lambda c: abs(c - hint))
            return (i, i + len(needle))
    found = find_exact(text, needle, start)
    if found is None:
        stripped = needle.strip()
        if stripped and stripped != needle:
            found = find_exact(text, stripped, start)
    if found is None:
        found = find_normalized(text, needle, start)
    return found


def normalize_whitespace(text: str) -> str:
    """Collapse every run of whitespace to one space and strip the ends."""
    return _WS.sub(" ", text).strip()


def clip(text: str, width: int) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to at most
    ``width`` characters with an ellipsis when longer: at the end of a word,
    unless that would drop more than half of them (``not found (no…``, never
    ``not found (no sp…``)."""
    flat = normalize_whitespace(text)
    if len(flat) <= width:
        return flat
    cut = flat[: width - 1]
    if flat[width - 1] != " ":  # the cut falls inside a word: end before it
        space = cut.rfind(" ")
        if space >= width // 2:
            cut = cut[:space]
    return cut.rstrip() + "…"


def preview(text: str, width: int = 60) -> str:
    """A one-line, shortened rendering of ``text`` for error messages."""
    return repr(clip(text, width))
