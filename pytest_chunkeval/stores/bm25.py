"""``bm25``: lexical retrieval over the chunk texts with ``bm25s`` (no embedder).

Spec: ``bm25[?lower=BOOL&stopwords=en|none&stem=LANG|none&k1=X&b=X&method=NAME]``.
Tokenization is ``bm25s``' (words of two or more word characters), then optional
lower-casing, English stop-word removal and Snowball stemming (PyStemmer). The options
are part of the store's identity, so changing one never reuses a cached search.

A chunk that shares no term with the query scores 0 and is not returned: a query whose
words are all unknown (or all stop words) retrieves fewer than ``k`` chunks.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pytest_chunkeval.config.registry import parse_options, positive_float
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.stores._base import FloatArray, IdArray, StoreError, empty_result
from pytest_chunkeval.stores._topk import TopK

BLOCK_BYTES = 4 << 20
"""Scores of one block of questions (float32, every chunk)."""
_POSITIVE = float(np.nextafter(np.float32(0), np.float32(1)))
"""The smallest positive float32: a chunk must score above 0 to be returned."""
TOKEN_PATTERN = r"(?u)\b\w\w+\b"
"""bm25s.tokenize's default pattern: words of two or more word characters."""
METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
STOPWORDS = ("en", "none")


def _bool(value: str) -> bool:
    text = value.strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def _stopwords(value: str) -> str:
    text = value.strip().lower()
    if text == "english":
        text = "en"
    if text not in STOPWORDS:
        raise ValueError(f"expected one of {', '.join(STOPWORDS)}")
    return text


def _stem(value: str) -> str:
    return value.strip().lower() or "none"


def _method(value: str) -> str:
    text = value.strip().lower()
    if text not in METHODS:
        raise ValueError(f"expected one of {', '.join(METHODS)}")
    return text


BM25_OPTIONS: dict[str, Callable[[str], Any]] = {
    "lower": _bool,
    "stopwords": _stopwords,
    "stem": _stem,
    "k1": positive_float,
    "b": float,
    "method": _method,
}


def _bm25s() -> Any:
    try:
        import bm25s
    except ImportError as exc:
        raise StoreError(
            "the bm25 store needs bm25s: pip install 'pytest-chunkeval[bm25]'"
        ) from exc
    return bm25s


class BM25Index:
    """A ``bm25s`` index of tokenized chunk texts."""

    content_ties = True
    """:meth:`search_texts` takes the chunks' tie keys (docs/baselines.md, "Ties")."""

    def __init__(self, store: BM25Store, texts: Sequence[str]) -> None:
        self.store = store
        self.size = len(texts)
        self._model: Any = None
        if self.size:
            bm25s = _bm25s()
            self._model = bm25s.BM25(k1=store.k1, b=store.b, method=store.method)
            # ids and vocabulary as bm25s.tokenize makes them: the index skips its
            # own pass turning strings into ids (the same scores, bitwise)
            self._model.index(store.tokenize_ids(texts), show_progress=False)

    def __len__(self) -> int:
        return self.size

    def scores(self, queries: Sequence[str]) -> FloatArray:
        """``(q, n)`` BM25 scores of every chunk for every query."""
        out = np.zeros((len(queries), self.size), dtype=np.float32)
        if self._model is None:
            return out
        for i, tokens in enumerate(self.store.tokenize(queries)):
            if tokens:  # bm25s cannot score an empty query; it matches nothing
                out[i] = self._model.get_scores(tokens)
        return out

    def search_texts(
        self, queries: Sequence[str], k: int, *, ties: IdArray | None = None
    ) -> IdArray:
        """Top-``k`` chunks by BM25 score, equal scores by the rows' tie keys
        (``ties``; the lower row without); chunks that share no term with the query
        (score 0) are left out (``-1``).

        Questions are scored a block at a time (``BLOCK_BYTES`` of scores) and
        each block goes to the threshold selection of ``stores/_topk.py``, whose
        floor leaves out every score that is not positive: memory stays at one
        block whatever the number of questions (docs/performance.md)."""
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
            raise ValueError(f"k must be an int >= 0, got {k!r}")
        queries = list(queries)
        out = empty_result(len(queries), k)
        if not queries or k == 0 or self.size == 0:
            return out
        take = min(k, self.size)
        rows = max(1, BLOCK_BYTES // (4 * self.size))
        for lo in range(0, len(queries), rows):
            block = self.scores(queries[lo : lo + rows])
            best = TopK(block.shape[0], take, ties, floor=_POSITIVE)
            best.add(block, 0)
            out[lo : lo + block.shape[0], :take] = best.result()
        return out


class BM25Store:
    """Lexical retrieval: ``bm25s`` over the chunk texts, no vectors."""

    def __init__(
        self,
        *,
        lower: bool = True,
        stopwords: str = "en",
        stem: str = "none",
        k1: float = 1.5,
        b: float = 0.75,
        method: str = "lucene",
    ) -> None:
        self.lower = lower
        self.stopwords = _stopwords(stopwords)
        self.stem = _stem(stem)
        self.k1 = float(k1)
        self.b = float(b)
        self.method = _method(method)
        if not 0 <= self.b <= 1:
            raise ConfigError(f"b must be in [0, 1], got {b}")
        self._stemmer: Any = None
        if self.stem != "none":
            self._stemmer = _load_stemmer(self.stem)

    def options(self) -> dict[str, str]:
        """Every option as its spec text (defaults included), sorted by name."""
        return {
            "b": f"{self.b:g}",
            "k1": f"{self.k1:g}",
            "lower": "true" if self.lower else "false",
            "method": self.method,
            "stem": self.stem,
            "stopwords": self.stopwords,
        }

    @property
    def name(self) -> str:
        """``bm25`` plus the options that differ from the defaults."""
        defaults = BM25Store().options()
        changed = {k: v for k, v in self.options().items() if defaults[k] != v}
        return "bm25" + _query(changed)

    @property
    def identity(self) -> str:
        """``bm25@bm25s-V?b=..&k1=..&lower=..&method=..&stem=..&stopwords=..``:
        all options (a later change of a default must not reuse old results) and
        the versions of bm25s and, when stemming, PyStemmer."""
        from pytest_chunkeval.util.versions import library_versions

        libraries = ["bm25s"] + (["PyStemmer"] if self.stem != "none" else [])
        return f"bm25@{library_versions(*libraries)}" + _query(self.options())

    def tokenize(self, texts: Sequence[str]) -> list[list[str]]:
        """The terms of each text, as the index sees them."""
        bm25s = _bm25s()
        tokens: list[list[str]] = bm25s.tokenize(
            list(texts),
            lower=self.lower,
            stopwords="en" if self.stopwords == "en" else None,
            stemmer=self._stemmer,
            return_ids=False,
            show_progress=False,
        )
        return tokens

    def tokenize_ids(self, texts: Sequence[str]) -> Any:
        """``bm25s.tokenize(texts, ..., return_ids=True)``: each text's term ids
        and the vocabulary (a term's id: its first occurrence's rank). Without a
        stemmer the same loop as bm25s's, without its per-text stop-word set and
        progress bar (docs/performance.md, "Search at the floor")."""
        bm25s = _bm25s()
        if self._stemmer is not None:
            return bm25s.tokenize(
                list(texts),
                lower=self.lower,
                stopwords="en" if self.stopwords == "en" else None,
                stemmer=self._stemmer,
                return_ids=True,
                show_progress=False,
            )
        from bm25s.stopwords import STOPWORDS_EN

        split = re.compile(TOKEN_PATTERN).findall
        stop = frozenset(STOPWORDS_EN if self.stopwords == "en" else ())
        vocab: dict[str, int] = {}
        ids: list[list[int]] = []
        for text in texts:
            words = split(text.lower() if self.lower else text)
            ids.append(
                [vocab.setdefault(w, len(vocab)) for w in words if w not in stop]
            )
        return bm25s.tokenization.Tokenized(ids=ids, vocab=vocab)

    def index_texts(self, texts: Sequence[str]) -> BM25Index:
        return BM25Index(self, list(texts))

    def __repr__(self) -> str:
        return f"BM25Store({self.name!r})"


def _query(options: dict[str, str]) -> str:
    return "?" + "&".join(f"{k}={v}" for k, v in options.items()) if options else ""


def _load_stemmer(language: str) -> Any:
    try:
        import Stemmer
    except ImportError as exc:
        raise StoreError(
            f"stem={language} needs PyStemmer: pip install 'pytest-chunkeval[bm25]'"
        ) from exc
    try:
        return Stemmer.Stemmer(language)
    except KeyError as exc:
        raise ValueError(
            f"no Snowball stemmer for {language!r}; available: "
            f"{', '.join(sorted(Stemmer.algorithms()))}"
        ) from exc


def bm25_from_spec(rest: str) -> BM25Store:
    """Factory for the spec ``bm25[?options]``."""
    name, options = parse_options(rest, BM25_OPTIONS)
    if name:
        raise ValueError(f"unexpected argument {name!r} (options go after '?')")
    return BM25Store(**options)
