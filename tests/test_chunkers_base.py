"""as_chunker, validate_chunks and the Chunker protocol."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pytest

from pytest_chunkeval.chunkers import (
    Chunker,
    ChunkerError,
    RecursiveTokenChunker,
    as_chunker,
    chunk_texts,
    validate_chunks,
)
from pytest_chunkeval.core.spans import Span


def spans_of(chunker: Chunker, text: str) -> list[list[int]]:
    result: list[list[int]] = chunker.chunk_spans(text).tolist()
    return result


def test_string_pieces_become_spans() -> None:
    text = "alpha beta.\n\ngamma delta."
    chunker = as_chunker(lambda t: t.split("\n\n"))
    assert spans_of(chunker, text) == [[0, 11], [13, 25]]
    assert chunk_texts(chunker, text) == ["alpha beta.", "gamma delta."]


def test_repeated_pieces_get_their_own_positions() -> None:
    para = "The same paragraph."
    text = "\n\n".join([para] * 4)
    chunker = as_chunker(lambda t: [para] * 4)
    starts = [s for s, _ in spans_of(chunker, text)]
    assert starts == [0, 21, 42, 63]


def test_overlapping_pieces_may_overlap() -> None:
    text = "one two three four five"
    chunker = as_chunker(lambda t: ["one two three", "three four", "four five"])
    assert spans_of(chunker, text) == [[0, 13], [8, 18], [14, 23]]


def test_overlapping_repeats_resolve_by_position() -> None:
    text = "ha ha ha ha ha"
    # windows of two words with a one-word overlap: each piece is "ha ha"
    chunker = as_chunker(lambda t: ["ha ha"] * 4)
    assert spans_of(chunker, text) == [[0, 5], [3, 8], [6, 11], [9, 14]]


def test_stripped_and_whitespace_normalized_pieces() -> None:
    text = "First   line\nof text.\n\n  Second\tpart here.  "
    chunker = as_chunker(lambda t: ["  First line of text. \n", "Second part here."])
    assert chunk_texts(chunker, text) == [
        "First   line\nof text.",
        "Second\tpart here.",
    ]


def test_piece_not_found_names_index_and_preview() -> None:
    text = "Some text that is here. And more text."
    chunker = as_chunker(
        lambda t: ["Some text", "this sentence was invented by the chunker " * 3],
        name="inventive",
    )
    with pytest.raises(ChunkerError) as info:
        chunker.chunk_spans(text)
    message = str(info.value)
    assert "'inventive'" in message
    assert "piece #1" in message
    assert "'this sentence was invented by the chunker this sentence was…'" in message
    assert "at or after offset 1" in message


def test_piece_before_the_previous_one_is_an_error() -> None:
    text = "first. second."
    chunker = as_chunker(lambda t: ["second.", "first."])
    with pytest.raises(ChunkerError, match=r"piece #1 'first\.'"):
        chunker.chunk_spans(text)


def test_blank_pieces_are_dropped() -> None:
    chunker = as_chunker(lambda t: ["", "abc", "  ", "def"])
    assert spans_of(chunker, "abc def") == [[0, 3], [4, 7]]


@dataclass
class Piece:
    start: int
    end: int


@dataclass
class ChonkieLike:
    text: str
    start_index: int
    end_index: int


def test_span_like_results() -> None:
    text = "0123456789"
    for result in (
        [(0, 4), (4, 10)],
        [[0, 4], [4, 10]],
        [Span("doc", 0, 4), Span("doc", 4, 10)],
        [Piece(0, 4), Piece(4, 10)],
        [ChonkieLike("0123", 0, 4), ChonkieLike("456789", 4, 10)],
        np.array([[0, 4], [4, 10]]),
    ):
        chunker = as_chunker(lambda t, r=result: r)
        assert spans_of(chunker, text) == [[0, 4], [4, 10]], result


def test_span_results_are_sorted_into_document_order() -> None:
    chunker = as_chunker(lambda t: [(5, 9), (0, 5)])
    assert spans_of(chunker, "0123456789") == [[0, 5], [5, 9]]


def test_text_objects_are_located() -> None:
    @dataclass
    class Doc:
        page_content: str

    chunker = as_chunker(lambda t: [Doc("abc"), Doc("def")])
    assert spans_of(chunker, "abc def") == [[0, 3], [4, 7]]


def test_unusable_piece_type_is_reported() -> None:
    chunker = as_chunker(lambda t: [3.5], name="floaty")
    with pytest.raises(ChunkerError, match=r"'floaty': piece #0 is a float"):
        chunker.chunk_spans("abc")


def test_langchain_splitter_object() -> None:
    splitters = pytest.importorskip("langchain_text_splitters")
    splitter = splitters.RecursiveCharacterTextSplitter(chunk_size=12, chunk_overlap=4)
    text = "one two three four five six seven eight nine ten " * 3
    chunker = as_chunker(splitter)
    assert chunker.name == "RecursiveCharacterTextSplitter:12:4"
    assert chunk_texts(chunker, text) == splitter.split_text(text)
    # LangChain's own start_index would send the repeats to their first occurrence
    starts = [s for s, _ in spans_of(chunker, text)]
    assert starts == sorted(starts)
    assert len(set(starts)) == len(starts)
    assert as_chunker(splitter.split_text).name == "RecursiveCharacterTextSplitter:12:4"


def my_splitter(text: str) -> list[str]:
    return text.split()


class SpanMaker:
    name = "span-maker"

    def chunk_spans(self, text: str) -> np.ndarray:
        return np.array([[0, len(text)]], dtype=np.int64)


def test_names() -> None:
    assert as_chunker(my_splitter).name == "my_splitter"
    assert as_chunker(my_splitter, name="words").name == "words"
    assert as_chunker(functools.partial(my_splitter)).name == "partial(my_splitter)"
    assert as_chunker(lambda t: [t]).name.endswith("<lambda>")


def test_chunkers_pass_through() -> None:
    recursive = RecursiveTokenChunker(50)
    assert as_chunker(recursive) is recursive
    renamed = as_chunker(recursive, name="mine")
    assert renamed.name == "mine"
    assert np.array_equal(
        renamed.chunk_spans("a b. c"), recursive.chunk_spans("a b. c")
    )
    maker = SpanMaker()
    assert isinstance(maker, Chunker)
    assert as_chunker(maker) is maker


def test_not_a_chunker() -> None:
    with pytest.raises(TypeError, match="not a chunker"):
        as_chunker(42)


def test_validate_chunks_accepts_good_bounds() -> None:
    validate_chunks("abcdef", np.array([[0, 3], [2, 6]]), chunker="c", doc_id="d")
    validate_chunks("", np.zeros((0, 2), dtype=np.int64), chunker="c", doc_id="d")


@pytest.mark.parametrize(
    ("bounds", "why"),
    [
        ([[0, 3], [3, 3]], r"chunk #1 \(3, 3\) is empty"),
        (
            [[0, 3], [4, 9]],
            r"chunk #1 \(4, 9\) is not inside the document \(document length 6\)",
        ),
        ([[-1, 2]], r"chunk #0 \(-1, 2\) is not inside"),
        ([[0, 3], [1, 2], [5, 4]], r"chunk #2 \(5, 4\) ends before it starts"),
    ],
)
def test_validate_chunks_names_chunker_doc_and_index(
    bounds: list[list[int]], why: str
) -> None:
    with pytest.raises(
        ChunkerError, match=rf"chunker 'mine' on document 'doc-7': {why}"
    ):
        validate_chunks("abcdef", np.array(bounds), chunker="mine", doc_id="doc-7")


def test_validate_chunks_rejects_bad_shape() -> None:
    with pytest.raises(ChunkerError, match=r"expected an \(n, 2\) array"):
        validate_chunks("abc", np.array([1, 2, 3]), chunker="c", doc_id="d")


def test_decoded_token_windows_with_cut_characters() -> None:
    base = pytest.importorskip("langchain_text_splitters.base")
    from pytest_chunkeval.tokenizers.base import get_tokenizer

    encoding = get_tokenizer().encoding  # type: ignore[attr-defined]
    tokenizer = base.Tokenizer(
        chunk_overlap=0,
        tokens_per_chunk=3,
        decode=encoding.decode,
        encode=encoding.encode_ordinary,
    )
    text = "Party 🎉🎉 time 𠜎 ok " * 4
    pieces = base.split_text_on_tokens(text=text, tokenizer=tokenizer)
    assert any("\ufffd" in p for p in pieces)
    spans = spans_of(as_chunker(lambda t: pieces), text)
    # windows holding only halves of characters have no text to locate: dropped
    kept = [p for p in pieces if p.replace("\ufffd", " ").strip()]
    assert len(kept) < len(pieces)
    assert len(spans) == len(kept)
    for (s, e), piece in zip(spans, kept, strict=True):
        assert piece.strip("\ufffd").strip() in text[s:e]
