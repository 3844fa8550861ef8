"""Which part of the corpus an attempt shows the model: a seeded random window of
one document, snapped to sentence boundaries."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.generation.settings import DEFAULT_WINDOW_CHARS, GenerationError


@dataclass(frozen=True)
class Window:
    """The part of a document shown to the model: ``text[start:end]``."""

    doc_id: str
    start: int
    end: int


_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s")


def attempt_rng(seed: int, attempt: int) -> random.Random:
    """The RNG of one attempt: a function of (seed, attempt) only, so a resumed run
    continues the sequence an uninterrupted one would have drawn."""
    return random.Random(f"chunkeval-generate:{seed}:{attempt}")


def choose_window(
    rng: random.Random, corpus: Corpus, size: int = DEFAULT_WINDOW_CHARS
) -> Window:
    """A random window of about ``size`` characters.

    The document is drawn with probability proportional to its length (every
    character is equally likely to be shown); the window starts and ends at a line,
    sentence or word boundary when one is near.
    """
    docs = [d for d in corpus if d.text.strip()]
    if not docs:
        raise GenerationError(f"corpus {corpus.name!r} has no text to ask about")
    doc = rng.choices(docs, weights=[len(d.text) for d in docs])[0]
    text = doc.text
    if len(text) <= size:
        return Window(doc.id, 0, len(text))
    start = _snap_start(text, rng.randrange(len(text) - size + 1))
    end = _snap_end(text, min(len(text), start + size), start + size // 2)
    return Window(doc.id, start, end)


def _snap_start(text: str, pos: int, reach: int = 300) -> int:
    """``pos`` moved back to a line start, else a sentence start, else a word."""
    if pos <= 0:
        return 0
    lo = max(0, pos - reach)
    i = text.rfind("\n", lo, pos)
    if i >= 0:
        return i + 1
    ends = list(_SENTENCE_END.finditer(text, lo, pos))
    if ends:
        return ends[-1].end()
    i = max(text.rfind(" ", lo, pos), text.rfind("\t", lo, pos))
    return i + 1 if i >= 0 else pos


def _snap_end(text: str, pos: int, floor: int, reach: int = 300) -> int:
    """``pos`` moved back to a line end, else a sentence end, else a word end."""
    if pos >= len(text):
        return len(text)
    lo = max(floor, pos - reach)
    i = text.rfind("\n", lo, pos)
    if i >= 0:
        return i
    ends = list(_SENTENCE_END.finditer(text, lo, pos))
    if ends:
        return ends[-1].end() - 1  # keep the punctuation, drop the space
    i = text.rfind(" ", lo, pos)
    return i if i >= 0 else pos
