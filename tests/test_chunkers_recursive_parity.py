"""RecursiveTokenChunker gives exactly LangChain's chunks, at their true offsets."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_chunkeval.chunkers import DEFAULT_SEPARATORS, RecursiveTokenChunker
from pytest_chunkeval.tokenizers.base import get_tokenizer

text_splitters = pytest.importorskip("langchain_text_splitters")

ENCODING = get_tokenizer().encoding  # type: ignore[attr-defined]


def corpora_dir() -> Path | None:
    """The bundled general benchmark's corpora (package data, else shared/)."""
    here = Path(__file__).resolve().parent
    for candidate in (
        here.parent / "pytest_chunkeval" / "data" / "general" / "corpora",
        here.parent.parent / "shared" / "datasets" / "general" / "corpora",
    ):
        if len(list(candidate.glob("*.md"))) == 5:
            return candidate
    return None


def read_corpora() -> dict[str, str]:
    found = corpora_dir()
    if found is None:
        pytest.skip("the general benchmark corpora are not available")
    return {p.stem: p.read_bytes().decode("utf-8") for p in sorted(found.glob("*.md"))}


def langchain_chunks(
    text: str, size: int, overlap: int, separators: Sequence[str] = DEFAULT_SEPARATORS
) -> list[str]:
    splitter = text_splitters.RecursiveCharacterTextSplitter(
        chunk_size=size,
        chunk_overlap=overlap,
        separators=list(separators),
        keep_separator=True,
        is_separator_regex=False,
        length_function=lambda t: len(ENCODING.encode_ordinary(t)),
    )
    chunks: list[str] = splitter.split_text(text)
    return chunks


def assert_parity(
    text: str, size: int, overlap: int, separators: Sequence[str] = DEFAULT_SEPARATORS
) -> Any:
    chunker = RecursiveTokenChunker(size, overlap, separators=separators)
    spans = chunker.chunk_spans(text)
    ours = [text[s:e] for s, e in spans.tolist()]
    expected = langchain_chunks(text, size, overlap, separators)
    assert ours == expected, f"size={size} overlap={overlap} seps={separators!r}"
    assert spans.dtype.name == "int64"
    assert spans.shape == (len(expected), 2)
    if len(spans):
        assert (spans[:, 1] > spans[:, 0]).all()
        assert (spans[1:, 0] >= spans[:-1, 0]).all(), "chunks out of document order"
    assert chunker.chunk_texts(text) == expected
    return spans


# Sizes chosen so the whole corpus pass stays a few seconds: every setting the report
# uses with 200/400/800, plus a small size that exercises deep recursion.
CORPUS_SETTINGS = [(50, 0), (200, 0), (250, 125), (400, 200), (800, 400)]


@pytest.mark.parametrize(("size", "overlap"), CORPUS_SETTINGS)
def test_parity_on_the_general_corpora(size: int, overlap: int) -> None:
    chunker = RecursiveTokenChunker(size, overlap)
    tokenizer = get_tokenizer()
    for name, text in read_corpora().items():
        spans = assert_parity(text, size, overlap)
        assert len(spans) > 0, name
        # counted from the document's one tokenization (an evaluation's way)
        derived = chunker.spans_from_tokens(text, tokenizer.token_bounds(text))
        assert derived.tolist() == spans.tolist(), name


EDGE_TEXTS = {
    "empty": "",
    "blank": "  \n\n \t \n  ",
    "only_separators": "\n\n\n.\n?!. . \n\n!!??..  \n \n\n",
    "giant_word": "supercalifragilistic" * 60,
    "giant_word_in_text": "Short start.\n\n" + "x" * 700 + "\n\nShort end.",
    "emoji": "Launch 🚀🚀🚀 today! 👩‍👩‍👧‍👦 family.\n\n" * 8 + "🎉" * 120,
    "cjk": "日本語のテキストです。これは文です。\n\n中文文本，没有空格的句子很长。"
    * 12,
    "mixed_unicode": "Ünïcödé façade — naïve café. Ωμέγα! Привет, мир?\n" * 20,
    "repeated_paragraphs": "The same paragraph, again and again.\n\n" * 40,
    "special_token_text": "Before <|endoftext|> after.\n\n<|endoftext|>" * 10
    + " <|fim_prefix|>x<|endofprompt|>",
    # every special token of cl100k present: no free separator for batch counting
    "all_special_tokens": "<|endoftext|><|fim_prefix|><|fim_middle|><|fim_suffix|>"
    "<|endofprompt|> text. " * 10,
    "lone_surrogates": "Hello \ud800 world.\n\nAgain \udfff here. " * 5,
    "crlf": "Line one.\r\nLine two!\r\n\r\nPara two? Yes.\r\n" * 15,
    "tabs_and_spaces": "a\t\tb  c   d.\n \n  e\tf.  " * 30,
    "numbers": "Revenue 1,234,567.89 in 2023; 98765432109876543210 units.\n" * 15,
}


@pytest.mark.parametrize("name", sorted(EDGE_TEXTS))
@pytest.mark.parametrize(
    ("size", "overlap"),
    [(1, 0), (3, 1), (5, 5), (10, 0), (25, 10), (50, 0), (200, 100)],
)
def test_parity_on_edge_cases(name: str, size: int, overlap: int) -> None:
    assert_parity(EDGE_TEXTS[name], size, overlap)


@pytest.mark.parametrize(
    "separators",
    [
        ["\n\n", "\n"],  # no "": unsplittable pieces come out whole
        ["\n\n", "", " "],  # "" before the end stops the recursion
        [" "],
        ["zzz", "qqq"],  # nothing found: the last separator is used as is
        ["\n\n", "\n", " ", ""],  # LangChain's default
    ],
)
@pytest.mark.parametrize(("size", "overlap"), [(5, 0), (20, 10), (60, 0)])
def test_parity_with_other_separators(
    separators: list[str], size: int, overlap: int
) -> None:
    text = EDGE_TEXTS["giant_word_in_text"] + EDGE_TEXTS["mixed_unicode"]
    assert_parity(text, size, overlap, separators)


def test_repeated_paragraphs_keep_their_own_positions() -> None:
    paragraph = "The same paragraph, again and again."
    text = (paragraph + "\n\n") * 5
    spans = RecursiveTokenChunker(10, 0).chunk_spans(text)
    step = len(paragraph) + 2
    assert spans.tolist() == [[i * step, i * step + len(paragraph)] for i in range(5)]


_ALPHABET = st.sampled_from(
    [
        "a",
        "b",
        "word",
        "Zebra",
        " ",
        "  ",
        "\n",
        "\n\n",
        ".",
        "?",
        "!",
        ". ",
        "\t",
        "é",
        "日本",
        "🚀",
        "👩\u200d👧",
        "12",
        "345",
        "'s",
        "<|endoftext|>",
        "\r\n",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    parts=st.lists(_ALPHABET, max_size=120),
    size=st.integers(1, 40),
    overlap_share=st.floats(0, 1),
)
def test_parity_on_random_texts(
    parts: list[str], size: int, overlap_share: float
) -> None:
    assert_parity("".join(parts), size, int(size * overlap_share))


def test_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="chunk_size must be > 0"):
        RecursiveTokenChunker(0)
    with pytest.raises(ValueError, match="chunk_overlap must be >= 0"):
        RecursiveTokenChunker(10, -1)
    with pytest.raises(ValueError, match=r"chunk_overlap \(11\) must not exceed"):
        RecursiveTokenChunker(10, 11)
    with pytest.raises(ValueError, match="separators must not be empty"):
        RecursiveTokenChunker(10, 0, separators=[])


def test_names_identify_the_settings() -> None:
    assert RecursiveTokenChunker(200).name == "recursive:200:0"
    assert RecursiveTokenChunker(400, 200).name == "recursive:400:200"
    custom = RecursiveTokenChunker(400, 200, separators=["\n\n", " "]).name
    assert custom.startswith("recursive:400:200?separators=")
    other = RecursiveTokenChunker(400, 200, separators=["\n", " "]).name
    assert other != custom


# -- the two speed devices must never change a count --------------------------------

_TEXT_PIECES = st.text(
    alphabet=st.sampled_from(
        [
            *"aZs09 \n\r\t\f\v.,;:'\"-()[]!?<|>_/\\",
            *("é", "ß", "日", "🚀", "\u0301", "٣", "²", "\u00a0", "\u2028", "\u3000"),
            *("’", "—", "\ud800"),
        ]
    ),
    max_size=80,
)


@settings(max_examples=1000, deadline=None)
@given(piece=_TEXT_PIECES)
def test_piece_lower_bound_never_exceeds_the_token_count(piece: str) -> None:
    from pytest_chunkeval.chunkers.recursive import piece_lower_bound

    assert piece_lower_bound(piece) <= len(ENCODING.encode_ordinary(piece))


def test_piece_lower_bound_on_the_corpora() -> None:
    from pytest_chunkeval.chunkers.recursive import piece_lower_bound

    pieces = [
        piece
        for text in read_corpora().values()
        for sep in ("\n\n", "\n", ".", ", ")
        for piece in text.split(sep)
    ]
    bounds = [piece_lower_bound(p) for p in pieces]
    counts = [len(ENCODING.encode_ordinary(p)) for p in pieces]
    assert all(b <= c for b, c in zip(bounds, counts, strict=True))
    assert sum(bounds) > 0.6 * sum(counts)  # tight enough to be worth computing


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(_TEXT_PIECES, max_size=12))
def test_joined_counts_equal_separate_counts(pieces: list[str]) -> None:
    from pytest_chunkeval.chunkers._counting import piece_counter

    text = "".join(pieces)
    expected = [len(ENCODING.encode_ordinary(p)) for p in pieces]
    assert piece_counter(get_tokenizer(), text)(pieces) == expected


def test_joined_counts_without_a_free_special_token() -> None:
    from pytest_chunkeval.chunkers._counting import JoinedCounter

    text = EDGE_TEXTS["all_special_tokens"]
    counter = JoinedCounter(get_tokenizer(), text)
    assert counter.delimiter not in text
    assert not counter.delimiter.startswith("<|")
    pieces = [text[i : i + 9] for i in range(0, len(text), 9)]
    expected = [len(ENCODING.encode_ordinary(p)) for p in pieces]
    assert counter(pieces) == expected
    joined = counter.delimiter.join(pieces)
    assert counter.count_joined(joined, len(pieces)).tolist() == expected


def test_pieces_holding_the_delimiter_are_still_counted_right() -> None:
    from pytest_chunkeval.chunkers._counting import piece_counter

    pieces = ["a <|endoftext|> b", "c", "d <|endoftext|>", "e f", "g"]
    expected = [len(ENCODING.encode_ordinary(p)) for p in pieces]
    # the text given does not contain the delimiter, but the pieces do
    assert piece_counter(get_tokenizer(), "abc")(pieces) == expected


class WordTokenizer:
    """A tokenizer that is not tiktoken: runs of non-space, and runs of space."""

    name = "words"

    def count(self, text: str) -> int:
        import re

        return len(re.findall(r"\S+|\s+", text))

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        return [self.count(t) for t in texts]

    def token_bounds(self, text: str) -> Any:  # pragma: no cover - unused here
        raise NotImplementedError


@pytest.mark.parametrize(("size", "overlap"), [(3, 0), (8, 4), (40, 10)])
def test_parity_with_another_tokenizer(size: int, overlap: int) -> None:
    tokenizer = WordTokenizer()
    text = EDGE_TEXTS["mixed_unicode"] + EDGE_TEXTS["giant_word_in_text"] * 2
    splitter = text_splitters.RecursiveCharacterTextSplitter(
        chunk_size=size,
        chunk_overlap=overlap,
        separators=list(DEFAULT_SEPARATORS),
        keep_separator=True,
        length_function=tokenizer.count,
    )
    chunker = RecursiveTokenChunker(size, overlap, encoding=tokenizer)
    assert chunker.name == f"recursive:{size}:{overlap}?tokenizer=words"
    assert chunker.chunk_texts(text) == splitter.split_text(text)
