"""SentenceChunker and the simple sentence splitter."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pytest_chunkeval.chunkers import SentenceChunker, sentence_spans
from pytest_chunkeval.tokenizers.base import get_tokenizer

TOKENIZER = get_tokenizer()


def sentences(text: str) -> list[str]:
    return [text[s:e] for s, e in sentence_spans(text).tolist()]


def test_sentence_ends_and_paragraph_breaks() -> None:
    text = (
        "  Hello world. How are you?  Fine!\n\nA heading\n\nNo end here\n"
        'still the same. "Quoted!" (Aside.) Done...  Wait?!\nLast one'
    )
    assert sentences(text) == [
        "Hello world.",
        "How are you?",
        "Fine!",
        "A heading",
        "No end here\nstill the same.",
        '"Quoted!"',
        "(Aside.)",
        "Done...",
        "Wait?!",
        "Last one",
    ]


def test_no_split_without_following_whitespace() -> None:
    assert sentences("Version 3.14 is out.Really e.g.this") == [
        "Version 3.14 is out.Really e.g.this"
    ]


def test_blank_and_empty_texts() -> None:
    assert sentence_spans("").shape == (0, 2)
    assert sentence_spans(" \n\n \t").shape == (0, 2)


def _tokens_touched(text: str, start: int, end: int) -> int:
    bounds = TOKENIZER.token_bounds(text)
    return int(((bounds[:, 1] > start) & (bounds[:, 0] < end)).sum())


TEXT = (
    "Short one. Another short sentence here! A question follows?\n\n"
    + "This sentence is rather long and keeps going with many words, " * 12
    + "until it ends.\n\nThe end. Really the end."
) * 3


@pytest.mark.parametrize("budget", [5, 12, 40, 200])
def test_chunks_pack_whole_sentences_within_budget(budget: int) -> None:
    spans = SentenceChunker(budget).chunk_spans(TEXT)
    sents = sentence_spans(TEXT)
    sent_starts = set(sents[:, 0].tolist())
    sent_ends = set(sents[:, 1].tolist())
    assert (spans[1:, 0] >= spans[:-1, 1]).all(), "chunks overlap or are out of order"
    for s, e in spans.tolist():
        assert e > s
        assert _tokens_touched(TEXT, s, e) <= budget
        whole = s in sent_starts and e in sent_ends
        # only a too-long sentence is cut, and its windows stay inside it
        if not whole:
            inside = [(a, b) for a, b in sents.tolist() if a <= s and e <= b]
            assert inside, (s, e)
            a, b = inside[0]
            assert _tokens_touched(TEXT, a, b) > budget
    # every character of every sentence is in some chunk
    covered = np.zeros(len(TEXT), dtype=bool)
    for s, e in spans.tolist():
        covered[s:e] = True
    for a, b in sents.tolist():
        assert covered[a:b].all()


def test_greedy_packing_is_maximal() -> None:
    spans = SentenceChunker(40).chunk_spans(TEXT).tolist()
    sents = sentence_spans(TEXT).tolist()
    end_of = dict(sents)  # sentence start -> its end
    checked = 0
    for (s, e), (s2, _) in itertools.pairwise(spans):
        if s in end_of and s2 in end_of and e in end_of.values():
            # the next chunk's first sentence did not fit in this chunk
            assert _tokens_touched(TEXT, s, end_of[s2]) > 40
            checked += 1
    assert checked >= 3


def test_long_sentence_is_cut_into_token_windows() -> None:
    text = "word " * 100 + "end."
    spans = SentenceChunker(30).chunk_spans(text)
    assert len(spans) == 4  # 101 tokens in windows of 30
    assert spans[0, 0] == 0
    assert spans[-1, 1] == len(text)
    for s, e in spans.tolist():
        assert _tokens_touched(text, s, e) <= 30


def test_name_and_validation() -> None:
    assert SentenceChunker(100).name == "sentence:100"
    with pytest.raises(ValueError, match="max_tokens must be > 0"):
        SentenceChunker(0)


LONG_DOTS = "Contents" + "." * 50_000 + "x and more. End"


def test_long_runs_of_dots_are_one_sentence() -> None:
    assert sentences(LONG_DOTS) == ["Contents" + "." * 50_000 + "x and more.", "End"]


@pytest.mark.perf
def test_long_runs_of_dots_take_linear_time() -> None:
    import time

    began = time.perf_counter()
    sentences(LONG_DOTS)
    assert time.perf_counter() - began < 1.0
