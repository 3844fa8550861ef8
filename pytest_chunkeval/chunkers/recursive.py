"""``RecursiveTokenChunker``: LangChain's recursive splitter, as spans, faster.

It produces exactly the chunks of LangChain's ``RecursiveCharacterTextSplitter``
(``langchain_text_splitters``) with ``keep_separator=True``,
``is_separator_regex=False`` and a token-count length function, but it tracks
character offsets through the recursion instead of building strings, so a repeated
paragraph keeps its own position.

LangChain's algorithm, which this reproduces step by step:

1. Pick the first separator that occurs in the text (``""`` always "occurs"); the
   separators after it are used to split pieces that are still too long. If none
   occurs, the last separator is used and nothing is split further.
2. Split on it, keeping each separator at the start of the piece that follows it
   (``"a\\n\\nb"`` -> ``"a"``, ``"\\n\\nb"``); ``""`` splits into characters.
3. Walk the pieces. A piece of ``chunk_size`` tokens or more is recursed into (or,
   with no separators left, emitted whole and unstripped); runs of shorter pieces are
   merged greedily: the length of a run is the SUM of its pieces' token counts, a
   chunk is closed when the next piece would exceed ``chunk_size``, and pieces are
   dropped from its front until at most ``chunk_overlap`` tokens remain (and the next
   piece fits) to start the next chunk. Each merged chunk is whitespace-stripped and
   dropped if empty.

Speed: every piece is counted once (LangChain counts most pieces two or three
times); the pieces of all nodes at one depth are counted in one tiktoken call (see
``_counting.py``); and for cl100k-style encodings a piece with at least
``chunk_size`` words or numbers is known to be too long without encoding it.
Given the document's token bounds (:meth:`RecursiveTokenChunker.spans_from_tokens`,
what an evaluation does), a piece's count comes from them and only its first and
last few characters are encoded (``_doc_counts.py``): the same counts, so the same
chunks.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence

import numpy as np

from pytest_chunkeval.chunkers._doc_counts import DocumentCounter
from pytest_chunkeval.chunkers.base import (
    check_size_overlap,
    chunker_identity,
    spec_name,
)
from pytest_chunkeval.core.spans import IntArray, as_bounds
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.tokenizers.base import (
    DEFAULT_ENCODING,
    TiktokenTokenizer,
    Tokenizer,
    get_tokenizer,
)

logger = logging.getLogger(__name__)

DEFAULT_SEPARATORS: tuple[str, ...] = ("\n\n", "\n", ".", "?", "!", " ", "")
"""The separators of Chroma's report (LangChain's default lacks ``. ? !``)."""

# A lower bound on the token count, to prove a piece too long without encoding it.
# In the encodings below every pre-tokenizer piece is at least one token, and a piece
# holds letters or digits of at most one run of them, or punctuation, or whitespace,
# never two of these. Each occurrence counted below marks the start of a different
# piece: an ASCII letter or digit after an ASCII character that is neither (a new
# run), one ASCII punctuation character between a letter or digit and whitespace (a
# punctuation piece), a line break after a letter or digit (a whitespace piece).
# Characters are first mapped to classes: "a" letter or digit, "s" space or tab,
# "n" line break, "p" punctuation, "x" any byte of a non-ASCII character.
_CLASSES = bytes(
    ord(
        "x"
        if i >= 0x80
        else "a"
        if chr(i).isalnum()
        else "n"
        if chr(i) in "\r\n"
        else "s"
        if chr(i) in " \t\f\v"
        else "p"
    )
    for i in range(256)
)
_PIECE_STARTS = (b"sa", b"pa", b"na", b"aps", b"apn", b"an")
_BOUNDED_PATTERNS = frozenset(
    {
        # cl100k_base, as tiktoken >= 0.5 writes it
        r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+"
        r"| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s",
        # cl100k_base, as older tiktoken wrote it
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
        r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
        # r50k_base, p50k_base, gpt2
        r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$"
        r"|\s+(?!\S)|\s",
        r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+",
    }
)


def _has_piece_bound(tokenizer: Tokenizer) -> bool:
    """Whether the piece-start lower bound is valid for this tokenizer."""
    if not isinstance(tokenizer, TiktokenTokenizer):
        return False
    return getattr(tokenizer.encoding, "_pat_str", None) in _BOUNDED_PATTERNS


def piece_lower_bound(text: str) -> int:
    """A number of tokens ``text`` surely has in cl100k-style encodings."""
    classes = text.encode("utf-8", "surrogatepass").translate(_CLASSES)
    return sum(classes.count(start) for start in _PIECE_STARTS)


def _proven_too_long(text: str, start: int, end: int, size: int) -> bool:
    """True if ``text[start:end]`` surely has ``size`` tokens or more."""
    # Prose has a new pre-tokenizer piece every 4-6 characters: a prefix of
    # 8 * size characters should hold the proof.
    return piece_lower_bound(text[start : min(end, start + 8 * size)]) >= size


_SPLITTERS: dict[tuple[int, int], tuple[Tokenizer, RecursiveTokenChunker]] = {}


def piece_splitter(size: int, tokenizer: Tokenizer) -> RecursiveTokenChunker:
    """``RecursiveTokenChunker(size, 0)`` in ``tokenizer``'s tokens: the pieces
    the semantic, cluster and LLM chunkers are made of, built for their
    parameters as they are when used (the last 32 kept)."""
    key = (size, id(tokenizer))
    found = _SPLITTERS.get(key)
    if found is None or found[0] is not tokenizer:
        found = (tokenizer, RecursiveTokenChunker(size, 0, encoding=tokenizer))
        _SPLITTERS[key] = found
        while len(_SPLITTERS) > 32:
            del _SPLITTERS[next(iter(_SPLITTERS))]
    return found[1]


class RecursiveTokenChunker:
    """Recursive separator-based splitting with token-count sizes (LangChain parity).

    ``chunk_size`` and ``chunk_overlap`` are in tokens of ``encoding`` (a tiktoken
    encoding name, or any :class:`~pytest_chunkeval.tokenizers.base.Tokenizer`).
    """

    def __init__(
        self,
        chunk_size: int,
        chunk_overlap: int = 0,
        separators: Sequence[str] | None = None,
        encoding: str | Tokenizer = DEFAULT_ENCODING,
    ) -> None:
        self.chunk_size = int(chunk_size)
        self.chunk_overlap = int(chunk_overlap)
        self.separators = tuple(
            DEFAULT_SEPARATORS if separators is None else separators
        )
        self.tokenizer = get_tokenizer(encoding)
        # whether the piece bound holds, for the tokenizer it was found for
        self._lower_bound: tuple[Tokenizer, bool] | None = None
        self.check()

    def check(self) -> None:
        """``ConfigError`` unless the parameters, as they are now, are valid: they
        may be set after construction, and are checked again when used."""
        check_size_overlap(self.chunk_size, self.chunk_overlap, overlap_may_equal=True)
        if not self.separators:
            raise ConfigError("separators must not be empty")

    @property
    def name(self) -> str:
        """The canonical spec of the parameters as they are now (a parameter set
        after construction renames the chunker: docs/chunkers.md)."""
        return spec_name(
            "recursive",
            f"{self.chunk_size}:{self.chunk_overlap}",
            self.tokenizer,
            self.separators,
            DEFAULT_SEPARATORS,
        )

    def __repr__(self) -> str:
        return (
            f"RecursiveTokenChunker({self.chunk_size}, {self.chunk_overlap}, "
            f"separators={list(self.separators)!r}, encoding={self.tokenizer.name!r})"
        )

    def chunk_spans(self, text: str) -> IntArray:
        """Chunk ``[start, end)`` offsets, identical to LangChain's chunk texts."""
        return self.spans_counted(DocumentCounter(self.tokenizer, text, None))

    def spans_from_tokens(self, text: str, tokens: IntArray) -> IntArray:
        """The spans of :meth:`chunk_spans`, counting pieces from ``tokens``, the
        ``(n, 2)`` token bounds of ``text`` (an evaluation tokenizes each
        document once: ``chunkers/_doc_counts.py``)."""
        return self.spans_counted(DocumentCounter(self.tokenizer, text, tokens))

    def spans_counted(
        self, counter: DocumentCounter, start: int = 0, end: int | None = None
    ) -> IntArray:
        """``chunk_spans(counter.text[start:end])`` offset by ``start``, each
        piece counted by ``counter`` (made for this chunker's tokenizer): the
        chunkers made of pieces share one counter per document."""
        self.check()
        text = counter.text
        return as_bounds(self._spans(counter, start, len(text) if end is None else end))

    def chunk_texts(self, text: str) -> list[str]:
        """The chunk texts (what LangChain's ``split_text`` returns)."""
        return [text[s:e] for s, e in self.chunk_spans(text).tolist()]

    # -- the algorithm ------------------------------------------------------------

    def _choose_separator(
        self, text: str, start: int, end: int, first: int
    ) -> tuple[str, int]:
        """Separator for ``text[start:end]`` among ``separators[first:]``, and the
        index of the separators left for too-long pieces (``-1``: none left)."""
        seps = self.separators
        for i in range(first, len(seps)):
            sep = seps[i]
            if not sep:
                return sep, -1
            if text.find(sep, start, end) >= 0:
                return sep, (i + 1 if i + 1 < len(seps) else -1)
        return seps[-1], -1

    @property
    def cache_identity(self) -> str | None:
        """What determines the chunks (the chunking cache's key): the class, size,
        overlap, separators and the tokenizer's identity; None (never cached) with
        a tokenizer that has no identity."""
        return chunker_identity(self, self.tokenizer, repr(tuple(self.separators)))

    def _spans(
        self, documented: DocumentCounter, start: int, end: int
    ) -> list[tuple[int, int]]:
        size = self.chunk_size
        text = documented.text
        # Breadth-first over the recursion so that each depth is one counting call.
        # A node is a range of the text still to split; its items are chunks
        # (start, end) or child node ids, in document order.
        node_items: list[list[tuple[int, int] | int]] = [[]]
        level: list[tuple[int, int, int, int]] = [(0, start, end, 0)]
        while level:
            layouts, counts = self._count_level(text, level, documented)
            next_level: list[tuple[int, int, int, int]] = []
            for node, bounds, base, rest in layouts:
                items = node_items[node]
                n_pieces = len(bounds) - 1
                run_from = 0
                for k in range(n_pieces):
                    if counts[base + k] < size:
                        continue
                    if run_from < k:
                        self._merge(text, bounds, counts, base, run_from, k, items)
                    run_from = k + 1
                    if rest < 0:
                        items.append((bounds[k], bounds[k + 1]))  # unsplittable
                    else:
                        child = len(node_items)
                        node_items.append([])
                        items.append(child)
                        next_level.append((child, bounds[k], bounds[k + 1], rest))
                if run_from < n_pieces:
                    self._merge(text, bounds, counts, base, run_from, n_pieces, items)
            level = next_level
        out: list[tuple[int, int]] = []
        _flatten(node_items, 0, out)
        return out

    def _count_level(
        self,
        text: str,
        level: list[tuple[int, int, int, int]],
        documented: DocumentCounter,
    ) -> tuple[list[tuple[int, list[int], int, int]], list[int]]:
        """Split each node of one depth; its pieces' token counts, in one call.

        Returns per node ``(node, bounds, first piece's index, separators left)``
        and the counts of all pieces (a piece proven too long counts as
        ``chunk_size``)."""
        size = self.chunk_size
        if self._lower_bound is None or self._lower_bound[0] is not self.tokenizer:
            self._lower_bound = (self.tokenizer, _has_piece_bound(self.tokenizer))
        derived = documented.derived  # counts from the document's tokens
        delimiter = documented.joined.delimiter
        # Text averages 4-5 characters a token: scanning a shorter piece for a proof
        # would rarely succeed and only cost time (and none is needed when counts
        # come from the document's tokens).
        bounded = self._lower_bound[1] and not derived
        proof_length = 5 * size if bounded else len(text) + 1
        layouts: list[tuple[int, list[int], int, int]] = []
        segments: list[str] = []  # per node: its pieces joined by the delimiter
        proven: list[int] = []  # pieces known to be too long without counting
        piece_starts: list[int] = []  # the pieces, when counted from tokens
        piece_ends: list[int] = []
        n_pieces = 0
        for node, start, end, first in level:
            sep, rest = self._choose_separator(text, start, end, first)
            bounds, parts, lead = _split(text, start, end, sep)
            if len(bounds) < 2:
                continue
            layouts.append((node, bounds, n_pieces, rest))
            if derived:
                piece_starts += bounds[:-1]
                piece_ends += bounds[1:]
            else:
                for k, part in enumerate(parts):
                    if len(part) >= proof_length and _proven_too_long(
                        text, bounds[k], bounds[k + 1], size
                    ):
                        proven.append(n_pieces + k)
                        parts[k] = ""  # its count is not needed: do not encode it
                segments.append(lead + (delimiter + sep).join(parts))
            n_pieces += len(bounds) - 1
        if not n_pieces:
            return layouts, []
        if derived:
            counted = documented.counts(
                np.asarray(piece_starts, dtype=np.int64),
                np.asarray(piece_ends, dtype=np.int64),
            )
            return layouts, counted.tolist()
        joined = documented.joined.count_joined(delimiter.join(segments), n_pieces)
        counts: list[int] = joined.tolist()
        for k in proven:
            counts[k] = size
        return layouts, counts

    def _merge(
        self,
        text: str,
        bounds: list[int],
        counts: list[int],
        base: int,
        lo: int,
        hi: int,
        items: list[tuple[int, int] | int],
    ) -> None:
        """Merge pieces ``lo..hi-1`` (each shorter than chunk_size) into chunks."""
        size, overlap = self.chunk_size, self.chunk_overlap
        first = lo  # the current chunk is pieces first..k-1
        total = 0
        for k in range(lo, hi):
            n = counts[base + k]
            if total + n > size:
                if total > size:  # LangChain warns here too (unreachable with these
                    # pieces, kept for fidelity)
                    logger.warning(
                        "Created a chunk of size %d, which is longer than the "
                        "specified %d",
                        total,
                        size,
                    )
                if first < k:
                    _emit_stripped(text, bounds[first], bounds[k], items)
                    while total > overlap or (total + n > size and total > 0):
                        total -= counts[base + first]
                        first += 1
            total += n
        if first < hi:
            _emit_stripped(text, bounds[first], bounds[hi], items)


def _split(
    text: str, start: int, end: int, sep: str
) -> tuple[list[int], list[str], str]:
    """Pieces of ``text[start:end]`` split on ``sep`` as LangChain splits them.

    Each separator stays at the start of the piece after it; an empty leading piece
    is dropped; ``""`` splits into characters. Returns the boundaries (piece ``k`` is
    ``text[bounds[k]:bounds[k + 1]]``) and, without building each piece, the parts
    between separators and the prefix such that piece ``k`` is ``parts[k]`` with
    ``sep`` in front, except the first which has ``lead`` in front.
    """
    if start >= end:
        return [start], [], ""
    if not sep:
        parts = list(text[start:end])
        return list(range(start, end + 1)), parts, ""
    parts = text[start:end].split(sep)
    step = len(sep)
    lengths = [step + len(part) for part in parts]
    lead = ""
    if parts[0]:
        lengths[0] -= step
    else:  # the text starts with the separator: no empty piece before it
        del parts[0], lengths[0]
        lead = sep
    return list(itertools.accumulate(lengths, initial=start)), parts, lead


def _emit_stripped(
    text: str, start: int, end: int, items: list[tuple[int, int] | int]
) -> None:
    """Append ``text[start:end]`` without surrounding whitespace, unless blank."""
    piece = text[start:end]
    stripped = piece.lstrip()
    if not stripped:
        return
    lead = len(piece) - len(stripped)
    trail = len(stripped) - len(stripped.rstrip())
    items.append((start + lead, end - trail))


def _flatten(
    node_items: list[list[tuple[int, int] | int]], node: int, out: list[tuple[int, int]]
) -> None:
    for item in node_items[node]:
        if isinstance(item, int):
            _flatten(node_items, item, out)
        else:
            out.append(item)
