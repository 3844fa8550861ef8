"""Kamradt's semantic chunker and the report's size-bounded variant, as spans.

``KamradtSemanticChunker`` follows Greg Kamradt's "5 levels of text splitting"
notebook:

1. Split the document into sentences with the project's sentence splitter
   (:func:`~pytest_chunkeval.chunkers.sentence.sentence_spans`: a sentence ends at
   ``.``, ``?`` or ``!`` followed by whitespace, as Kamradt's ``(?<=[.?!])\\s+``, and
   also at a blank line).
2. Embed, for each sentence, the window of it and ``buffer`` sentences on each side
   (``buffer=1`` as in the notebook). The window is the document's own text from the
   first to the last sentence, not the sentences re-joined with spaces.
3. The distance between consecutive windows is ``1 - cosine``; cut after every
   sentence whose distance to the next exceeds the 95th percentile of all distances
   (``numpy.percentile``, linear interpolation, as in the notebook).

``KamradtModifiedChunker(max_tokens)`` keeps steps 1-3 but replaces the percentile
by a binary search over the cut threshold: it uses the largest threshold (fewest
cuts, always at the largest distances) for which no chunk exceeds ``max_tokens``
tokens. A sentence that alone exceeds ``max_tokens`` is first split into pieces by
``RecursiveTokenChunker(max_tokens, 0)`` and those pieces take part as sentences of
their own, so the bound always holds (a single piece the recursive splitter cannot
cut below the size, such as one enormous token, is the only exception). When the
whole document fits, it is one chunk and nothing is embedded. This is
docs/chunkers.md#kamradt-modified-max-or-mean as written and the default
(``target="max"``, spec ``kamradt-modified:SIZE``).

``KamradtModifiedChunker(size, target="mean")`` (spec ``kamradt-modified:SIZE:mean``)
is the behaviour of the report's own code (chunking_evaluation's
``KamradtModifiedChunker(avg_chunk_size=size)``), which aims at an *average* chunk
size instead of a bound:

1. the units are the pieces of ``RecursiveTokenChunker(piece_tokens, 0)`` (50
   tokens, the reference's ``min_chunk_size``) over the whole document, not
   sentences;
2. each window spans ``buffer`` units on each side (3, as the reference);
3. with ``total`` the sum of the pieces' token counts, the document is cut after the
   ``total // size`` units whose window distances are the largest, so there are
   ``total // size + 1`` chunks. The reference finds that threshold by bisection
   on ``[0, 1]`` to 1e-6 and, depending on which side of the next distance the
   bisection stops, makes one cut more or not (and cuts every distance above 1);
   here the threshold is taken exactly from the sorted distances, and distances
   tied at it are left uncut (never more cuts than asked). A document under
   ``size`` tokens is one chunk and nothing is embedded.

The reference joins pieces and windows with single spaces; here windows and chunks
are the document's own text, as everywhere in this module.

Chunks are spans from their first sentence's start to their last sentence's end:
the whitespace between sentences of one chunk is kept as it is in the document.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.chunkers._doc_counts import DocumentCounter
from pytest_chunkeval.chunkers.base import chunker_identity, spec_name
from pytest_chunkeval.chunkers.recursive import RecursiveTokenChunker, piece_splitter
from pytest_chunkeval.chunkers.sentence import sentence_spans
from pytest_chunkeval.config.defaults import DEFAULT_EMBEDDER
from pytest_chunkeval.core.spans import IntArray, as_bounds
from pytest_chunkeval.embedders.base import Embedder, embedder_cache_identity
from pytest_chunkeval.embedders.cache import EmbeddingCache, default_cache_dir
from pytest_chunkeval.embedders.registry import EMBEDDERS, get_embedder
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.tokenizers.base import DEFAULT_ENCODING, Tokenizer, get_tokenizer

DEFAULT_PERCENTILE = 95.0
DEFAULT_BUFFER = 1
# The report code's settings for its average-size mode.
MEAN_BUFFER = 3
DEFAULT_PIECE_TOKENS = 50
KamradtTarget = Literal["max", "mean"]
TARGETS: tuple[KamradtTarget, ...] = ("max", "mean")


def resolve_embedding(
    embedder: Any, cache: EmbeddingCache | str | Path | None
) -> tuple[Embedder, EmbeddingCache, str]:
    """The embedder, the cache, and the suffix a chunker's name gets for them.

    ``embedder`` is anything
    :func:`~pytest_chunkeval.embedders.registry.get_embedder` takes (None:
    :data:`DEFAULT_EMBEDDER`); the suffix is ``""``
    for the default embedder, else ``"@" + identity``, so chunkers that embed with
    different models never share a name. ``cache`` defaults to the project's cache
    directory (``default_cache_dir()``).
    """
    resolved = get_embedder(embedder)
    is_default = embedder is None or (
        isinstance(embedder, str)
        and EMBEDDERS.label(embedder) == EMBEDDERS.label(DEFAULT_EMBEDDER)
    )
    if cache is None:
        cache = EmbeddingCache(default_cache_dir())
    elif not isinstance(cache, EmbeddingCache):
        cache = EmbeddingCache(cache)
    return resolved, cache, "" if is_default else f"@{resolved.identity}"


def embedder_part(embedder: Embedder) -> str | None:
    """What a chunker's cache identity says of its embedder: the embedder's
    cache identity, read now; None (the chunks never cached) for an embedder
    computed every time (a user's function without ``cache_version``)."""
    identity = embedder_cache_identity(embedder)
    return None if identity is None else f"embedder={identity}"


def window_texts(text: str, units: IntArray, buffer: int) -> list[str]:
    """For each unit, the document text from ``buffer`` units before it to
    ``buffer`` units after it (clipped at the ends)."""
    n = units.shape[0]
    idx = np.arange(n)
    first = units[np.maximum(idx - buffer, 0), 0].tolist()
    last = units[np.minimum(idx + buffer, n - 1), 1].tolist()
    return [text[s:e] for s, e in zip(first, last, strict=True)]


def consecutive_distances(vectors: Any) -> npt.NDArray[np.float64]:
    """``1 - cos(v[i], v[i + 1])`` for unit vectors (a zero vector has cosine 0)."""
    vecs = np.asarray(vectors, dtype=np.float64)
    if vecs.shape[0] < 2:
        return np.zeros(0, dtype=np.float64)
    cosines: npt.NDArray[np.float64] = np.einsum("ij,ij->i", vecs[:-1], vecs[1:])
    return 1.0 - cosines


def join_units(units: IntArray, cut_after: Any) -> IntArray:
    """Chunks of consecutive units, cut after each unit index in ``cut_after``
    (sorted): each chunk runs from its first unit's start to its last unit's end."""
    n = units.shape[0]
    if n == 0:
        return units
    cuts = np.asarray(cut_after, dtype=np.int64)
    firsts = np.concatenate(([0], cuts + 1))
    lasts = np.concatenate((cuts, [n - 1]))
    return np.stack([units[firsts, 0], units[lasts, 1]], axis=1).astype(np.int64)


class EmbeddingChunker:
    """Base of the chunkers that embed. They embed through ``cache``; one built
    without an explicit cache adopts the cache of the evaluation that runs it (the
    plugin's ``chunkeval_cache_dir``), so its vectors land where the others do."""

    embedder: Embedder
    cache: EmbeddingCache
    _cache_given: bool = False

    def _set_embedding(
        self, embedder: Any, cache: EmbeddingCache | str | Path | None
    ) -> None:
        """Resolve and keep the embedder and cache."""
        self.embedder, self.cache, suffix = resolve_embedding(embedder, cache)
        self._cache_given = cache is not None
        self._default_embedder = self.embedder if not suffix else None

    @property
    def embedder_suffix(self) -> str:
        """What a name says of the embedder: nothing for the default one, else
        its identity (read now: an embedder set after construction is named)."""
        return "" if self.embedder is self._default_embedder else self.embedder.identity

    def adopt_cache(self, cache: EmbeddingCache) -> None:
        """Embed through ``cache`` from now on, unless a cache was given explicitly."""
        if not self._cache_given:
            self.cache = cache


class _WindowEmbedding(EmbeddingChunker):
    """Shared by both Kamradt chunkers: embed sentence windows, return distances."""

    buffer: int

    def distances(self, text: str, units: IntArray) -> npt.NDArray[np.float64]:
        """Cosine distance between the windows of consecutive units."""
        windows = window_texts(text, units, self.buffer)
        return consecutive_distances(self.cache.embed(self.embedder, windows))


def _check_buffer(buffer: int) -> int:
    if buffer < 0:
        raise ConfigError(f"buffer must be >= 0, got {buffer}")
    return int(buffer)


class KamradtSemanticChunker(_WindowEmbedding):
    """Sentences grouped by cutting where consecutive sentence windows are far apart
    (distance above the ``percentile``-th percentile of the document's distances)."""

    def __init__(
        self,
        percentile: float = DEFAULT_PERCENTILE,
        *,
        buffer: int = DEFAULT_BUFFER,
        embedder: Any = None,
        cache: EmbeddingCache | str | Path | None = None,
    ) -> None:
        if not (math.isfinite(percentile) and 0 <= percentile <= 100):
            raise ConfigError(f"percentile must be in [0, 100], got {percentile}")
        self.percentile = float(percentile)
        self.buffer = _check_buffer(buffer)
        self._set_embedding(embedder, cache)

    @property
    def name(self) -> str:
        """The canonical spec of the parameters as they are now."""
        args = "" if self.percentile == DEFAULT_PERCENTILE else f"{self.percentile:g}"
        options = {} if self.buffer == DEFAULT_BUFFER else {"buffer": self.buffer}
        return spec_name(
            "kamradt", args, options=options, embedder=self.embedder_suffix
        )

    def __repr__(self) -> str:
        return (
            f"KamradtSemanticChunker({self.percentile:g}, buffer={self.buffer}, "
            f"embedder={self.embedder.identity!r})"
        )

    @property
    def cache_identity(self) -> str | None:
        """What determines the chunks (the chunking cache's key): the settings
        and the embedder's identity."""
        return chunker_identity(
            self, None, f"{self.percentile!r}", embedder_part(self.embedder)
        )

    def chunk_spans(self, text: str) -> IntArray:
        units = sentence_spans(text)
        if units.shape[0] <= 1:
            return units
        distances = self.distances(text, units)
        threshold = np.percentile(distances, self.percentile)
        return join_units(units, np.flatnonzero(distances > threshold))


class KamradtModifiedChunker(_WindowEmbedding):
    """Kamradt's chunker with the cut threshold found by search (see the module
    docstring). ``target="max"`` (default,
    docs/chunkers.md#kamradt-modified-max-or-mean): no chunk exceeds ``max_tokens``
    tokens. ``target="mean"`` (the report's code): ``max_tokens`` is the target
    *average* size, over ``piece_tokens``-token pieces with windows of ``buffer``
    (default 3) pieces on each side."""

    def __init__(
        self,
        max_tokens: int,
        *,
        target: KamradtTarget = "max",
        buffer: int | None = None,
        piece_tokens: int = DEFAULT_PIECE_TOKENS,
        embedder: Any = None,
        cache: EmbeddingCache | str | Path | None = None,
        encoding: str | Tokenizer = DEFAULT_ENCODING,
    ) -> None:
        if max_tokens < 1:
            raise ConfigError(f"max_tokens must be >= 1, got {max_tokens}")
        if target not in TARGETS:
            raise ConfigError(f"target must be 'max' or 'mean', got {target!r}")
        if piece_tokens < 1:
            raise ConfigError(f"piece_tokens must be >= 1, got {piece_tokens}")
        self.max_tokens = int(max_tokens)
        self.target: KamradtTarget = target
        default_buffer = MEAN_BUFFER if target == "mean" else DEFAULT_BUFFER
        self.buffer = _check_buffer(default_buffer if buffer is None else buffer)
        self.piece_tokens = int(piece_tokens)
        self.tokenizer = get_tokenizer(encoding)
        self._set_embedding(embedder, cache)

    @property
    def _splitter(self) -> RecursiveTokenChunker:
        # "max": cuts sentences too long to fit; "mean": makes all the units.
        mean = self.target == "mean"
        return piece_splitter(
            self.piece_tokens if mean else self.max_tokens, self.tokenizer
        )

    @property
    def name(self) -> str:
        """The canonical spec of the parameters as they are now."""
        mean = self.target == "mean"
        args = str(self.max_tokens) + (":mean" if mean else "")
        options: dict[str, int] = {}
        if self.buffer != (MEAN_BUFFER if mean else DEFAULT_BUFFER):
            options["buffer"] = self.buffer
        if mean and self.piece_tokens != DEFAULT_PIECE_TOKENS:
            options["pieces"] = self.piece_tokens
        return spec_name(
            "kamradt-modified",
            args,
            self.tokenizer,
            options=options,
            embedder=self.embedder_suffix,
        )

    def __repr__(self) -> str:
        return (
            f"KamradtModifiedChunker({self.max_tokens}, target={self.target!r}, "
            f"buffer={self.buffer}, embedder={self.embedder.identity!r})"
        )

    def units(self, text: str, counter: DocumentCounter | None = None) -> IntArray:
        """The units grouped into chunks. ``"max"``: sentences, with any sentence
        over ``max_tokens`` tokens replaced by its ``RecursiveTokenChunker(max_tokens,
        0)`` pieces. ``"mean"``: the ``RecursiveTokenChunker(piece_tokens, 0)``
        pieces of the document. ``counter`` counts pieces of ``text`` (from its
        tokens: ``chunkers/_doc_counts.py``)."""
        if counter is None:
            counter = DocumentCounter(self.tokenizer, text, None)
        if self.target == "mean":
            return self._splitter.spans_counted(counter)
        sentences = sentence_spans(text)
        counts = counter.counts(sentences[:, 0], sentences[:, 1]).tolist()
        if max(counts, default=0) <= self.max_tokens:
            return sentences
        out: list[tuple[int, int]] = []
        for (start, end), n_tokens in zip(sentences.tolist(), counts, strict=True):
            if n_tokens <= self.max_tokens:
                out.append((start, end))
                continue
            out += self._splitter.spans_counted(counter, start, end).tolist()
        return as_bounds(out)

    @property
    def cache_identity(self) -> str | None:
        """What determines the chunks (the chunking cache's key): the settings,
        the tokenizer's and the embedder's identities."""
        return chunker_identity(self, self.tokenizer, embedder_part(self.embedder))

    def chunk_spans(self, text: str) -> IntArray:
        return self._chunks(DocumentCounter(self.tokenizer, text, None))

    def spans_from_tokens(self, text: str, tokens: IntArray) -> IntArray:
        """The spans of :meth:`chunk_spans`, counting pieces from ``tokens``, the
        ``(n, 2)`` token bounds of ``text`` (``chunkers/_doc_counts.py``)."""
        return self._chunks(DocumentCounter(self.tokenizer, text, tokens))

    def _chunks(self, counter: DocumentCounter) -> IntArray:
        text = counter.text
        units = self.units(text, counter)
        if units.shape[0] <= 1:
            return units
        if self.target == "mean":
            return self._mean_chunks(text, units, counter)
        return self._max_chunks(text, units, counter)

    def _mean_chunks(
        self, text: str, units: IntArray, counter: DocumentCounter
    ) -> IntArray:
        """Cut after the ``total_tokens // max_tokens`` largest window distances."""
        total = int(counter.counts(units[:, 0], units[:, 1]).sum())
        n_cuts = total // self.max_tokens
        if n_cuts == 0:  # under one chunk's worth: skip embedding altogether
            return join_units(units, [])
        distances = self.distances(text, units)
        if n_cuts >= distances.shape[0]:
            return join_units(units, np.arange(distances.shape[0]))
        # Cut where distance > the (n_cuts + 1)-th largest: at most n_cuts cuts.
        threshold = np.sort(distances)[::-1][n_cuts]
        return join_units(units, np.flatnonzero(distances > threshold))

    def _max_chunks(
        self, text: str, units: IntArray, counter: DocumentCounter
    ) -> IntArray:
        """The fewest cuts, at the largest distances, with no chunk over the size."""
        known: dict[tuple[int, int], int] = {}

        def fits(chunks: IntArray) -> bool:
            keys = [(s, e) for s, e in chunks.tolist()]
            todo = np.asarray([k for k in keys if k not in known], dtype=np.int64)
            if todo.size:
                counts = counter.counts(todo[:, 0], todo[:, 1]).tolist()
                pairs = [(s, e) for s, e in todo.tolist()]
                known.update(zip(pairs, counts, strict=True))
            return max(known[k] for k in keys) <= self.max_tokens

        whole = join_units(units, [])
        if fits(whole):  # no cut needed: skip embedding altogether
            return whole
        distances = self.distances(text, units)
        # Cutting where distance > t: every candidate t is "cut everywhere" or a
        # distinct distance; the largest distance itself means no cut (too long).
        levels = np.unique(distances)
        thresholds = [-math.inf, *levels[:-1].tolist()]
        lo, hi = 0, len(thresholds) - 1  # thresholds[lo] fits (or nothing does)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if fits(join_units(units, np.flatnonzero(distances > thresholds[mid]))):
                lo = mid
            else:
                hi = mid - 1
        return join_units(units, np.flatnonzero(distances > thresholds[lo]))


__all__ = [
    "DEFAULT_PIECE_TOKENS",
    "MEAN_BUFFER",
    "TARGETS",
    "KamradtModifiedChunker",
    "KamradtSemanticChunker",
    "KamradtTarget",
    "consecutive_distances",
    "join_units",
    "resolve_embedding",
    "window_texts",
]
