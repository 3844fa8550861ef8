"""Ingestion: read the handbook's Markdown chapters and cut them into chunks.

The chunking is our own: a chunk never crosses a heading (a question about sick
leave should not get half a chunk about parental leave), keeps whole paragraphs
together up to ``max_chars`` characters, and splits an over-long paragraph at
sentence ends. Chunks are character spans of the original file, so an answer can
cite exactly where its passage comes from.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_CHARS = 600

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t]*$", re.MULTILINE)
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Document:
    """One handbook chapter: ``id`` is its path relative to the handbook directory."""

    id: str
    title: str
    text: str


@dataclass(frozen=True)
class Chunk:
    """A passage of a chapter: ``text == document.text[start:end]``."""

    doc_id: str
    start: int
    end: int
    text: str
    section: str
    """The heading the passage sits under."""


def load_handbook(directory: str | Path) -> list[Document]:
    """Every ``*.md`` file under ``directory``, sorted by path."""
    root = Path(directory)
    paths = sorted(p for p in root.rglob("*.md") if p.is_file())
    if not paths:
        raise FileNotFoundError(f"no Markdown files under {root}")
    documents = []
    for path in paths:
        # Bytes decoded as is (no newline translation), so offsets stay valid on
        # every platform and match what the evaluation reads.
        text = path.read_bytes().decode("utf-8")
        heading = _HEADING.search(text)
        title = heading.group(2) if heading else path.stem
        documents.append(Document(path.relative_to(root).as_posix(), title, text))
    return documents


def split_markdown(
    text: str, max_chars: int = DEFAULT_MAX_CHARS
) -> list[tuple[int, int]]:
    """``(start, end)`` character spans of the chunks of one Markdown document.

    Sections (a heading and what follows, up to the next heading) are chunked
    separately; inside a section, consecutive paragraphs are packed while the chunk
    stays within ``max_chars``. A paragraph longer than that is packed sentence by
    sentence (a single sentence longer than ``max_chars`` stays whole).
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    spans: list[tuple[int, int]] = []
    for start, end in _sections(text):
        units: list[tuple[int, int]] = []
        for para in _pieces(text, start, end, _PARAGRAPH_BREAK):
            if para[1] - para[0] <= max_chars:
                units.append(para)
            else:
                units.extend(_pieces(text, *para, _SENTENCE_END))
        spans.extend(_pack(units, max_chars))
    return spans


def chunk_documents(
    documents: Iterable[Document], max_chars: int = DEFAULT_MAX_CHARS
) -> list[Chunk]:
    """All chunks of all documents, in document order."""
    chunks = []
    for doc in documents:
        headings = [(m.start(), m.group(2)) for m in _HEADING.finditer(doc.text)]
        for start, end in split_markdown(doc.text, max_chars):
            section = next(
                (title for pos, title in reversed(headings) if pos <= start),
                doc.title,
            )
            chunks.append(
                Chunk(doc.id, start, end, doc.text[start:end], section=section)
            )
    return chunks


def _sections(text: str) -> list[tuple[int, int]]:
    cuts = [0, *(m.start() for m in _HEADING.finditer(text)), len(text)]
    return [(a, b) for a, b in itertools.pairwise(cuts) if a < b]


def _pieces(
    text: str, start: int, end: int, separator: re.Pattern[str]
) -> list[tuple[int, int]]:
    """The non-blank pieces of ``text[start:end]`` between separator matches, with
    surrounding whitespace trimmed."""
    pieces = []
    pos = start
    for match in separator.finditer(text, start, end):
        pieces.append(_strip(text, pos, match.start()))
        pos = match.end()
    pieces.append(_strip(text, pos, end))
    return [(a, b) for a, b in pieces if a < b]


def _strip(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _pack(units: Sequence[tuple[int, int]], max_chars: int) -> list[tuple[int, int]]:
    chunks: list[tuple[int, int]] = []
    for start, end in units:
        if chunks and end - chunks[-1][0] <= max_chars:
            chunks[-1] = (chunks[-1][0], end)
        else:
            chunks.append((start, end))
    return chunks
