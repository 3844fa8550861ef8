"""Spec strings for the built-in chunkers, and :func:`get_chunker`.

``fixed:SIZE[:OVERLAP]``, ``recursive:SIZE[:OVERLAP]`` and ``sentence:SIZE``, sizes
in ``cl100k_base`` tokens, OVERLAP 0 when left out (and always shown in the canonical
form: ``recursive:200`` is ``recursive:200:0``); the semantic chunkers
(``cluster:MAX``, ``kamradt``, ``kamradt-modified:SIZE[:mean]``, ``llm:MODEL``)
come from ``semantic_specs.py``. Plugins and ``conftest.py`` files add more names
to :data:`CHUNKERS` (see ``hookspecs.py``). The grammar: ``config/specs.py``.
"""

from __future__ import annotations

from typing import Any

from pytest_chunkeval.chunkers.base import Chunker, as_chunker
from pytest_chunkeval.chunkers.fixed import FixedTokenChunker
from pytest_chunkeval.chunkers.recursive import RecursiveTokenChunker
from pytest_chunkeval.chunkers.semantic_specs import TOKENIZER_OPTION, register_semantic
from pytest_chunkeval.chunkers.sentence import SentenceChunker
from pytest_chunkeval.config.registry import Param, Registry, Signature, integer

CHUNKERS: Registry[Chunker] = Registry("chunker")

_SIZE = Param("size", integer)
_OVERLAP = Param("overlap", integer, default=0, show_default=True)


def _fixed(size: int, overlap: int, *, tokenizer: str) -> Chunker:
    return FixedTokenChunker(size, overlap, encoding=tokenizer)


def _recursive(size: int, overlap: int, *, tokenizer: str) -> Chunker:
    return RecursiveTokenChunker(size, overlap, encoding=tokenizer)


def _sentence(size: int, *, tokenizer: str) -> Chunker:
    return SentenceChunker(size, encoding=tokenizer)


_TOKENS = (TOKENIZER_OPTION,)
CHUNKERS.register(
    "fixed",
    _fixed,
    "fixed:SIZE[:OVERLAP]",
    signature=Signature((_SIZE, _OVERLAP), _TOKENS),
)
CHUNKERS.register(
    "recursive",
    _recursive,
    "recursive:SIZE[:OVERLAP]",
    signature=Signature((_SIZE, _OVERLAP), _TOKENS),
)
CHUNKERS.register(
    "sentence", _sentence, "sentence:SIZE", signature=Signature((_SIZE,), _TOKENS)
)
register_semantic(CHUNKERS)


def get_chunker(spec: str | Chunker | Any) -> Chunker:
    """A chunker from a spec string (``"recursive:200:0"``), a :class:`Chunker`, a
    splitter with ``split_text``, or a function (see :func:`as_chunker`)."""
    if isinstance(spec, str):
        return CHUNKERS.create(spec)
    return as_chunker(spec)


def chunker_label(spec: str) -> str:
    """The canonical form of a chunker spec: its label, test id and baseline name."""
    return CHUNKERS.label(spec)
