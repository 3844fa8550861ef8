"""Spec strings for the built-in chunkers, and :func:`get_chunker`.

``fixed:SIZE[:OVERLAP]``, ``recursive:SIZE[:OVERLAP]`` and ``sentence:SIZE``, sizes
in ``cl100k_base`` tokens, OVERLAP 0 when left out; the semantic chunkers
(``cluster:MAX``, ``kamradt``, ``kamradt-modified:SIZE[:mean]``, ``llm:MODEL``)
come from ``semantic_specs.py``. Plugins and ``conftest.py`` files add more names
to :data:`CHUNKERS` (see ``hookspecs.py``).
"""

from __future__ import annotations

from typing import Any

from pytest_chunkeval.chunkers.base import Chunker, as_chunker
from pytest_chunkeval.chunkers.fixed import FixedTokenChunker
from pytest_chunkeval.chunkers.recursive import RecursiveTokenChunker
from pytest_chunkeval.chunkers.semantic_specs import register_semantic
from pytest_chunkeval.chunkers.sentence import SentenceChunker
from pytest_chunkeval.config.registry import Registry

CHUNKERS: Registry[Chunker] = Registry("chunker")


def parse_int_args(rest: str, names: tuple[str, ...], required: int) -> list[int]:
    """The ``:``-separated integers of a spec's arguments, with clear errors.

    ``names`` names each argument in order (``("SIZE", "OVERLAP")``); the first
    ``required`` must be present, missing later ones are 0.
    """
    parts = rest.split(":") if rest.strip() else []
    if not required <= len(parts) <= len(names):
        wanted = ":".join(names[:required])
        if len(names) > required:
            wanted += "".join(f"[:{n}]" for n in names[required:])
        raise ValueError(f"expected {wanted}, got {len(parts)} argument(s)")
    values: list[int] = []
    for name, part in zip(names, parts, strict=False):
        try:
            values.append(int(part.strip()))
        except ValueError:
            raise ValueError(f"{name} must be an integer, got {part!r}") from None
    return values + [0] * (len(names) - len(values))


def _fixed(rest: str) -> Chunker:
    size, overlap = parse_int_args(rest, ("SIZE", "OVERLAP"), 1)
    return FixedTokenChunker(size, overlap)


def _recursive(rest: str) -> Chunker:
    size, overlap = parse_int_args(rest, ("SIZE", "OVERLAP"), 1)
    return RecursiveTokenChunker(size, overlap)


def _sentence(rest: str) -> Chunker:
    (size,) = parse_int_args(rest, ("SIZE",), 1)
    return SentenceChunker(size)


CHUNKERS.register("fixed", _fixed, "fixed:SIZE[:OVERLAP]")
CHUNKERS.register("recursive", _recursive, "recursive:SIZE[:OVERLAP]")
CHUNKERS.register("sentence", _sentence, "sentence:SIZE")
register_semantic(CHUNKERS)


def get_chunker(spec: str | Chunker | Any) -> Chunker:
    """A chunker from a spec string (``"recursive:200:0"``), a :class:`Chunker`, a
    splitter with ``split_text``, or a function (see :func:`as_chunker`)."""
    if isinstance(spec, str):
        return CHUNKERS.create(spec)
    return as_chunker(spec)
