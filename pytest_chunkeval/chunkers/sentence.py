"""``SentenceChunker``: whole sentences packed up to a token budget.

Sentences come from a deliberately simple splitter (:func:`sentence_spans`): a
sentence ends after ``.``, ``!`` or ``?`` (a run of them, then any closing quotes or
brackets) when whitespace follows, and at every paragraph break (a blank line). Each
sentence is its span with surrounding whitespace left out. Abbreviations such as
"Dr." end a sentence too; that costs a little packing, never text.
"""

from __future__ import annotations

import re

import numpy as np

from pytest_chunkeval.chunkers.base import chunker_identity, spec_name
from pytest_chunkeval.core.spans import IntArray, as_bounds
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.tokenizers.base import DEFAULT_ENCODING, Tokenizer, get_tokenizer

# Ends of sentences and paragraph breaks. The look-behind makes a run of ".!?" a
# single candidate, so a long run of dots costs linear time, not quadratic.
_SENTENCE_END = re.compile(r"""(?<![.!?])[.!?]+["'”’)\]]*(?=\s)|\n\s*\n""")


def sentence_spans(text: str) -> IntArray:
    """``(n, 2)`` character ``[start, end)`` of each sentence, whitespace excluded."""
    spans: list[tuple[int, int]] = []
    start = 0
    cuts = [m.end() for m in _SENTENCE_END.finditer(text)]
    cuts.append(len(text))
    for cut in cuts:
        piece = text[start:cut]
        stripped = piece.lstrip()
        if stripped:
            lead = len(piece) - len(stripped)
            trail = len(stripped) - len(stripped.rstrip())
            spans.append((start + lead, cut - trail))
        start = cut
    return as_bounds(spans)


class SentenceChunker:
    """Consecutive whole sentences, as many as fit in ``max_tokens`` tokens.

    A chunk's size is the number of the document's tokens it touches (the document
    is tokenized once, as the metrics do). A sentence longer than ``max_tokens`` is
    cut into windows of ``max_tokens`` tokens, each its own chunk. Chunks span from
    their first sentence's start to their last sentence's end, so the whitespace
    between sentences of one chunk belongs to it and nothing is re-joined.
    """

    def __init__(self, max_tokens: int, encoding: str | Tokenizer = DEFAULT_ENCODING):
        self.max_tokens = int(max_tokens)
        self.tokenizer = get_tokenizer(encoding)
        self.check()

    def check(self) -> None:
        """``ConfigError`` unless the parameters, as they are now, are valid: they
        may be set after construction, and are checked again when used."""
        if self.max_tokens <= 0:
            raise ConfigError(f"max_tokens must be > 0, got {self.max_tokens}")

    @property
    def name(self) -> str:
        """The canonical spec of the parameters as they are now."""
        return spec_name("sentence", str(self.max_tokens), self.tokenizer)

    def __repr__(self) -> str:
        return f"SentenceChunker({self.max_tokens}, encoding={self.tokenizer.name!r})"

    @property
    def cache_identity(self) -> str | None:
        """What determines the chunks (the chunking cache's key)."""
        return chunker_identity(self, self.tokenizer)

    def chunk_spans(self, text: str) -> IntArray:
        """Character ``[start, end)`` of each chunk of whole sentences."""
        self.check()
        if not sentence_spans(text).shape[0]:
            return np.zeros((0, 2), dtype=np.int64)
        return self.spans_from_tokens(text, self.tokenizer.token_bounds(text))

    def spans_from_tokens(self, text: str, tokens: IntArray) -> IntArray:
        """The chunks given ``tokens``, the ``(n, 2)`` token bounds of ``text``
        (an evaluation that has them, cached, does not tokenize again)."""
        self.check()
        sentences = sentence_spans(text)
        if sentences.shape[0] == 0:
            return np.zeros((0, 2), dtype=np.int64)
        tok_starts = np.ascontiguousarray(tokens[:, 0])
        tok_ends = np.ascontiguousarray(tokens[:, 1])
        # tokens lo[i]..hi[i]-1 are those that intersect sentence i
        lo = np.searchsorted(tok_ends, sentences[:, 0], side="right").tolist()
        hi = np.searchsorted(tok_starts, sentences[:, 1], side="left").tolist()
        starts, ends = sentences[:, 0].tolist(), sentences[:, 1].tolist()
        budget = self.max_tokens
        out: list[tuple[int, int]] = []
        first = -1  # first sentence of the chunk being packed, -1 for none
        for i in range(len(starts)):
            if hi[i] - lo[i] > budget:
                if first >= 0:
                    out.append((starts[first], ends[i - 1]))
                    first = -1
                for w in range(lo[i], hi[i], budget):
                    last = min(w + budget, hi[i]) - 1
                    out.append(
                        (
                            max(starts[i], int(tok_starts[w])),
                            min(ends[i], int(tok_ends[last])),
                        )
                    )
            elif first < 0:
                first = i
            elif hi[i] - lo[first] > budget:
                out.append((starts[first], ends[i - 1]))
                first = i
        if first >= 0:
            out.append((starts[first], ends[-1]))
        return as_bounds(out)
