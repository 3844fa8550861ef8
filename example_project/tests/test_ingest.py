"""Plain unit tests of the splitter (no retrieval involved)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from handbook_rag import chunk_documents, load_handbook, split_markdown

HANDBOOK = Path(__file__).resolve().parent.parent / "handbook"


@pytest.fixture(scope="module")
def documents():
    return load_handbook(HANDBOOK)


def test_chunks_are_spans_of_the_chapter(documents):
    for chunk in chunk_documents(documents):
        doc = next(d for d in documents if d.id == chunk.doc_id)
        assert doc.text[chunk.start : chunk.end] == chunk.text
        assert chunk.text == chunk.text.strip()


def test_a_chunk_never_crosses_a_heading(documents):
    for chunk in chunk_documents(documents):
        # A heading line is "#" to "######" and a space ("#ask-people" is not one).
        assert not re.search(r"\n#{1,6} ", chunk.text), (chunk.doc_id, chunk.section)


def test_long_paragraphs_are_split_at_sentences():
    text = "# T\n\n" + " ".join(f"Sentence number {i} is here." for i in range(40))
    spans = split_markdown(text, max_chars=200)
    assert len(spans) > 1
    assert all(text[a:b].endswith(".") or text[a:b] == "# T" for a, b in spans)
    assert all(b - a <= 200 for a, b in spans)
