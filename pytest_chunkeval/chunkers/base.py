"""The ``Chunker`` protocol, validation, and the adapter for plain functions.

A chunker turns one document into character spans ``[start, end)``: spans, not
strings, so that repeated text keeps its true position (see SPEC section 2). Anything
that returns strings (a LangChain splitter, chonkie, a user's function) is adapted by
:func:`as_chunker`, which locates each piece in the document by position.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from pytest_chunkeval.config.specs import Spec, format_spec, parse
from pytest_chunkeval.core.locate import locate, preview
from pytest_chunkeval.core.spans import IntArray, as_bounds
from pytest_chunkeval.errors import ConfigError, DataError
from pytest_chunkeval.tokenizers.base import (
    DEFAULT_ENCODING,
    Tokenizer,
    tokenizer_identity,
)


class ChunkerError(DataError):
    """A chunker produced something that is not a valid chunking of a document."""


@runtime_checkable
class Chunker(Protocol):
    """Splits a document into chunks, given as character spans."""

    @property
    def name(self) -> str:
        """Stable identity: the spec string when there is one (``"recursive:200:0"``),
        of the chunker as it is when read (a built-in chunker's parameters may be
        set after construction: docs/chunkers.md)."""
        ...

    def chunk_spans(self, text: str) -> IntArray:
        """``(n, 2)`` int64 ``[start, end)`` of each chunk, in document order,
        each non-empty."""
        ...


def validate_chunks(text: str, bounds: IntArray, *, chunker: str, doc_id: str) -> None:
    """Raise :class:`ChunkerError` unless every span is a non-empty part of ``text``.

    The message names the chunker, the document and the first bad chunk's index.
    """
    arr = np.asarray(bounds)
    if arr.size == 0:
        return
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ChunkerError(
            f"chunker {chunker!r} on document {doc_id!r}: expected an (n, 2) array of "
            f"[start, end) offsets, got shape {arr.shape}"
        )
    starts, ends = arr[:, 0], arr[:, 1]
    bad = np.flatnonzero((starts < 0) | (ends <= starts) | (ends > len(text)))
    if bad.size:
        i = int(bad[0])
        start, end = int(starts[i]), int(ends[i])
        why = "is empty" if end == start else "is not inside the document"
        if end < start:
            why = "ends before it starts"
        raise ChunkerError(
            f"chunker {chunker!r} on document {doc_id!r}: chunk #{i} ({start}, {end}) "
            f"{why} (document length {len(text)})"
        )


def check_size_overlap(size: int, overlap: int, *, overlap_may_equal: bool) -> None:
    """``ValueError`` unless ``size > 0`` and ``0 <= overlap <= size``. The rules
    differ at ``overlap == size``: fixed windows must reject it (their stride
    ``size - overlap`` would be 0 and never advance), the recursive splitter
    accepts it as LangChain does (``overlap_may_equal``)."""
    if size <= 0:
        raise ConfigError(f"chunk_size must be > 0, got {size}")
    if overlap < 0:
        raise ConfigError(f"chunk_overlap must be >= 0, got {overlap}")
    if overlap > size or (overlap == size and not overlap_may_equal):
        bound = "not exceed" if overlap_may_equal else "be smaller than"
        raise ConfigError(f"chunk_overlap ({overlap}) must {bound} chunk_size ({size})")


def spec_name(
    kind: str,
    args: str,
    tokenizer: Tokenizer | None = None,
    separators: Sequence[str] | None = None,
    default_separators: Sequence[str] | None = None,
    *,
    options: Mapping[str, object] | None = None,
    embedder: str = "",
) -> str:
    """A chunker's name: its canonical spec (``recursive:200:0``), with the settings
    that differ from the defaults as options (``?tokenizer=o200k_base``,
    ``?separators=<hash>``, ``?buffer=2``) and ``@EMBEDDER``, so that differently
    configured chunkers never share a name and every name parses as a spec."""
    opts = {k: str(v) for k, v in (options or {}).items()}
    if tokenizer is not None and tokenizer.name != DEFAULT_ENCODING:
        opts["tokenizer"] = tokenizer.name
    if separators is not None and tuple(separators) != tuple(default_separators or ()):
        digest = hashlib.sha1(repr(tuple(separators)).encode("utf-8")).hexdigest()[:8]
        opts["separators"] = digest
    spec = parse(f"{kind}:{args}" if args else kind)
    name = format_spec(Spec(spec.name, spec.args, tuple(sorted(opts.items()))))
    # The embedder's identity, not its spec: identities are free text (a
    # user's identity= included), so it is appended as written.
    return f"{name}@{embedder}" if embedder else name


def chunker_identity(
    chunker: Any, tokenizer: Tokenizer | None, *extra: str | None
) -> str | None:
    """A chunker's ``cache_identity``: what determines its chunks of a document,
    as the chunking cache keys them (``engine/chunking_cache.py``). Its class
    (module and name: a subclass gets its own), its name, the identity of the
    tokenizer its sizes count in, and ``extra`` (an embedder's identity, a prompt
    version...). None, never cached, when the tokenizer or an ``extra`` part
    (an embedder computed every time) has no identity.

    A chunker without a ``cache_identity`` attribute (or with None) is never
    cached: its output may depend on more than its name says. Nor is a class
    defined outside this package (a user's subclass of a built-in chunker: its
    code is not the package's) unless it declares a ``cache_version``, which then
    is part of the identity."""
    kind = type(chunker)
    parts = [f"{kind.__module__}.{kind.__qualname__}", str(chunker.name)]
    if not kind.__module__.startswith("pytest_chunkeval."):
        version = getattr(chunker, "cache_version", None)
        if not isinstance(version, str) or not version:
            return None
        parts.append(f"version={version}")
    if tokenizer is not None:
        tokens = tokenizer_identity(tokenizer)
        if tokens is None:
            return None
        parts.append(f"tokens={tokens}")
    if any(part is None for part in extra):
        return None
    return "|".join([*parts, *(part for part in extra if part is not None)])


def cache_identity(chunker: Any) -> str | None:
    """What the caches key a chunker's output on: its ``cache_identity``, else,
    for an object that declares a ``cache_version``, its class, name and that
    version; None (never cached) for anything else."""
    identity = getattr(chunker, "cache_identity", None)
    if isinstance(identity, str) and identity:
        return identity
    if identity is None and not hasattr(type(chunker), "cache_identity"):
        version = getattr(chunker, "cache_version", None)
        if isinstance(version, str) and version:
            kind = type(chunker)
            name = f"{kind.__module__}.{kind.__qualname__}"
            return f"{name}|{chunker.name}|version={version}"
    return None


def chunk_texts(chunker: Chunker, text: str) -> list[str]:
    """The text of each chunk: ``text[start:end]``."""
    return [text[int(s) : int(e)] for s, e in chunker.chunk_spans(text)]


# ---------------------------------------------------------------------------
# Adapting functions and foreign splitters


def _splitter_name(obj: Any) -> str:
    """Class name of a splitter object, with its size/overlap when it keeps them."""
    base = type(obj).__qualname__
    # LangChain splitters keep their settings on these attributes; two splitters
    # with different settings must not share a name (it keys caches).
    size = getattr(obj, "_chunk_size", None)
    overlap = getattr(obj, "_chunk_overlap", None)
    if isinstance(size, int) and isinstance(overlap, int):
        return f"{base}:{size}:{overlap}"
    return base


def _default_name(fn: Any) -> str:
    """A readable name for an adapted callable: its ``__qualname__``."""
    if isinstance(fn, functools.partial):
        return f"partial({_default_name(fn.func)})"
    owner = getattr(fn, "__self__", None)  # a bound method such as sp.split_text
    if owner is not None and hasattr(owner, "split_text"):
        return _splitter_name(owner)
    qualname = getattr(fn, "__qualname__", None)
    if isinstance(qualname, str):
        return qualname
    return type(fn).__qualname__


def _piece_bounds(value: Any) -> tuple[int, int] | None:
    """``(start, end)`` if ``value`` is a span-like item rather than a text."""
    if isinstance(value, str):
        return None
    for lo, hi in (("start", "end"), ("start_index", "end_index")):
        start, end = getattr(value, lo, None), getattr(value, hi, None)
        if isinstance(start, (int, np.integer)) and isinstance(end, (int, np.integer)):
            return int(start), int(end)
    if (
        isinstance(value, (tuple, list, np.ndarray))
        and len(value) == 2
        and all(isinstance(v, (int, np.integer)) for v in value)
    ):
        return int(value[0]), int(value[1])
    return None


def _piece_text(value: Any) -> str | None:
    """The text of a text-like item: a ``str``, or ``.text`` / ``.page_content``."""
    if isinstance(value, str):
        return value
    for attr in ("text", "page_content"):
        inner = getattr(value, attr, None)
        if isinstance(inner, str):
            return inner
    return None


def pieces_to_spans(text: str, pieces: Sequence[Any], *, chunker: str) -> IntArray:
    """Turn a chunker's output (texts or span-like items) into ``(n, 2)`` bounds.

    Texts are located in order: each at or after the previous piece's start + 1, so
    overlapping pieces and repeated paragraphs resolve by position, never to the
    first occurrence in the document. Exact match first, then the stripped piece,
    then a whitespace-insensitive match, then without the U+FFFD that a decoded token
    window has where it cut a character. Blank pieces are dropped. Span-like items
    (``(start, end)``, ``.start/.end``, ``.start_index/.end_index``) are taken as is
    and sorted into document order.
    """
    spans: list[tuple[int, int]] = []
    as_given = True
    search_from = 0
    for i, piece in enumerate(pieces):
        bounds = _piece_bounds(piece)
        if bounds is not None:
            spans.append(bounds)
            continue
        as_given = False
        piece_text = _piece_text(piece)
        if piece_text is None:
            raise ChunkerError(
                f"chunker {chunker!r}: piece #{i} is a {type(piece).__name__}; "
                "expected a str, a (start, end) pair, or an object with .start/.end "
                "or .text"
            )
        if not piece_text.replace("\ufffd", " ").strip():
            # nothing to locate or retrieve: blank, or only the halves of characters
            # that a decoded token window cut
            continue
        found = locate(text, piece_text, search_from)
        if found is None and "\ufffd" in piece_text:
            # a decoded token window cut inside a character ends in U+FFFD
            trimmed = piece_text.strip("\ufffd")
            found = locate(text, trimmed, search_from)
        if found is None:
            raise ChunkerError(
                f"chunker {chunker!r}: piece #{i} {preview(piece_text)} was not found "
                f"in the document at or after offset {search_from} (pieces must be in "
                "document order and copied from the text)"
            )
        spans.append(found)
        search_from = found[0] + 1
    bounds_arr = as_bounds(spans)
    if as_given and bounds_arr.shape[0] > 1:
        order = np.lexsort((bounds_arr[:, 1], bounds_arr[:, 0]))
        bounds_arr = bounds_arr[order]
    return bounds_arr


def check_pieces(pieces: Any, chunker: str) -> Any:
    """``pieces`` if it is a list of pieces; a bare text (iterated it would give one
    chunk per character), ``None`` or a non-iterable is a :class:`ChunkerError`."""
    if isinstance(pieces, (str, bytes)):
        raise ChunkerError(
            f"chunker {chunker!r} returned a single {type(pieces).__name__} "
            f"{preview(str(pieces))} instead of a list of chunks; return a list "
            "(e.g. [text]) of texts or (start, end) pairs"
        )
    if pieces is None or not hasattr(pieces, "__iter__"):
        raise ChunkerError(
            f"chunker {chunker!r} returned {type(pieces).__name__} ({pieces!r:.60}) "
            "instead of a list of chunks (texts or (start, end) pairs)"
        )
    return pieces


class FunctionChunker:
    """A :class:`Chunker` around a function returning texts or spans.

    Its chunkings are cached only when it has a ``cache_version``: the one given,
    else the ``cache_version`` attribute of ``source`` (the function, splitter or
    object :func:`as_chunker` adapted) read when used, so that a version set or
    changed later counts. It is the promise that name and version determine the
    chunks. Without one, every run chunks again."""

    def __init__(
        self,
        fn: Callable[[str], Sequence[Any]],
        name: str,
        cache_version: str | None = None,
        *,
        source: Any = None,
    ) -> None:
        self._fn = fn
        self._source = fn if source is None else source
        self.name = name
        self._cache_version = cache_version

    @property
    def cache_version(self) -> str | None:
        """The version given, else the source's ``cache_version`` as it is now."""
        if self._cache_version is not None:
            return self._cache_version
        version = getattr(self._source, "cache_version", None)
        return version if isinstance(version, str) and version else None

    @cache_version.setter
    def cache_version(self, version: str | None) -> None:
        self._cache_version = version

    @property
    def cache_identity(self) -> str | None:
        """The chunking cache's key: name and version; None without a version."""
        version = self.cache_version
        if not isinstance(version, str) or not version:
            return None
        return chunker_identity(self, None, f"version={version}")

    def chunk_spans(self, text: str) -> IntArray:
        pieces = check_pieces(self._fn(text), self.name)
        if isinstance(pieces, np.ndarray) and pieces.ndim == 2:
            return as_bounds(pieces)
        return pieces_to_spans(text, list(pieces), chunker=self.name)

    def __repr__(self) -> str:
        return f"FunctionChunker({self.name!r})"


class _RenamedChunker:
    """An existing chunker under another name."""

    def __init__(self, inner: Chunker, name: str) -> None:
        self._inner = inner
        self.name = name

    @property
    def cache_identity(self) -> str | None:
        """The inner chunker's: a name changes no chunk."""
        return cache_identity(self._inner)

    def chunk_spans(self, text: str) -> IntArray:
        return self._inner.chunk_spans(text)

    def __repr__(self) -> str:
        return f"{self._inner!r} as {self.name!r}"


def as_chunker(fn: Any, name: str | None = None) -> Chunker:
    """Adapt ``fn`` to a :class:`Chunker`.

    Accepts a chunker (returned as is unless renamed), an object with
    ``chunk_spans`` (a name is taken from ``.name`` or its class), an object with
    ``split_text`` (LangChain splitters), or a callable ``str -> list`` of strings,
    ``(start, end)`` pairs, :class:`~pytest_chunkeval.core.spans.Span` tuples or objects
    with ``.start/.end`` (or ``.start_index/.end_index``, ``.text``). The name
    defaults to the function's ``__qualname__``; give one when two differently
    configured functions share it, since the name keys caches and test ids.
    Chunks of a function are cached across runs only if it carries a
    ``cache_version`` string (``fn.cache_version = "2"``): change it whenever the
    function's output changes.
    """
    if isinstance(fn, Chunker):
        return fn if name is None or name == fn.name else _RenamedChunker(fn, name)
    if callable(getattr(fn, "chunk_spans", None)):
        own = getattr(fn, "name", None)
        label = name or (own if isinstance(own, str) else type(fn).__qualname__)
        return FunctionChunker(fn.chunk_spans, label, source=fn)
    split_text = getattr(fn, "split_text", None)
    if callable(split_text):
        return FunctionChunker(split_text, name or _splitter_name(fn), source=fn)
    if not callable(fn):
        raise TypeError(
            f"not a chunker: {fn!r}; give a spec string ('recursive:200:0'), an "
            "object with chunk_spans(text) or split_text(text), or a function "
            "str -> list[str] | list[(start, end)]"
        )
    return FunctionChunker(fn, name or _default_name(fn))
