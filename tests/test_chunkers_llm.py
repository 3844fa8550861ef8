"""LLMSemanticChunker against the local OpenAI-compatible server, real client."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from support.llm_chunking import DOC, KEY, every_third, paragraph, window_ids
from support.openai_server import OpenAIServer

from pytest_chunkeval.chunkers import Chunker
from pytest_chunkeval.chunkers.llm import (
    LLMChunkerFallbackWarning,
    LLMRequestError,
    LLMSemanticChunker,
    parse_split_after,
)
from pytest_chunkeval.chunkers.semantic import join_units
from pytest_chunkeval.chunkers.semantic_specs import register_semantic
from pytest_chunkeval.config.registry import Registry, UnknownSpec
from pytest_chunkeval.tokenizers.base import get_tokenizer


@pytest.fixture
def server():
    with OpenAIServer(api_key=KEY) as srv:
        yield srv


def make(server: OpenAIServer, **kwargs: Any) -> LLMSemanticChunker:
    return LLMSemanticChunker(
        "test-model", api_key=KEY, base_url=server.base_url, max_retries=0, **kwargs
    )


def test_pieces_are_one_paragraph_each(server):
    pieces = make(server).splitter.chunk_spans(DOC)
    assert pieces.shape[0] == 12
    assert max(get_tokenizer().count_batch([DOC[s:e] for s, e in pieces])) <= 50


def test_windows_follow_the_last_split(server):
    server.chat_handler = every_third
    chunker = make(server, window_tokens=100)
    spans = chunker.chunk_spans(DOC)
    pieces = chunker.splitter.chunk_spans(DOC)
    assert np.array_equal(spans, join_units(pieces, [2, 5, 8]))
    assert [DOC[s:e] for s, e in spans.tolist()][1] == DOC[pieces[3, 0] : pieces[5, 1]]
    windows = [window_ids(r.json) for r in server.requests_to("chat")]
    # ~47-token pieces, windows close once past 100 tokens: 3 pieces each; each
    # window starts right after the previous window's last split.
    assert windows == [[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12]]
    last = server.requests_to("chat")[-1].json
    assert "end of the document" in last["messages"][1]["content"]
    assert last["model"] == "test-model"
    assert last["max_tokens"] == 200
    first = server.requests_to("chat")[0].json["messages"]
    assert first[0]["role"] == "system"
    assert "<start_chunk_X>" in first[0]["content"]
    assert f"<start_chunk_1>{paragraph(0)}<end_chunk_1>" in first[1]["content"]


def test_chunks_from_the_documents_tokens_ask_and_cut_the_same(server):
    # pieces and window sizes counted from the document's one tokenization
    # (chunkers/_doc_counts.py, an evaluation's way): the same windows asked,
    # the same chunks
    server.chat_handler = every_third
    text = DOC.replace("\n\n", " \n\n", 5)  # pieces that end in whitespace too
    chunker = make(server, window_tokens=100)
    direct = chunker.chunk_spans(text)
    asked = [r.json["messages"] for r in server.requests_to("chat")]
    derived = chunker.spans_from_tokens(text, get_tokenizer().token_bounds(text))
    assert derived.tolist() == direct.tolist()
    assert [r.json["messages"] for r in server.requests_to("chat")][
        len(asked) :
    ] == asked


def test_an_early_split_makes_the_next_window_start_there(server):
    answers = iter(["split_after: 1", "split_after: 3", "split_after:"])
    server.chat_handler = lambda request: next(answers)
    chunker = make(server, window_tokens=100)
    spans = chunker.chunk_spans("\n\n".join(paragraph(i) for i in range(6)))
    windows = [window_ids(r.json) for r in server.requests_to("chat")]
    assert windows == [[1, 2, 3], [2, 3, 4], [4, 5, 6]]
    assert spans.shape[0] == 3


def test_the_final_window_may_keep_everything_together(server):
    server.enqueue_chat("split_after:")
    text = "\n\n".join(paragraph(i) for i in range(3))
    spans = make(server).chunk_spans(text)
    assert spans.tolist() == [[0, len(text)]]
    assert len(server.requests_to("chat")) == 1


def test_short_documents_ask_nothing(server):
    chunker = make(server)
    assert chunker.chunk_spans("").shape == (0, 2)
    assert chunker.chunk_spans("  A single piece.  ").tolist() == [[2, 17]]
    assert server.requests == []


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        ("I would split after the third chunk.", "no 'split_after:' line"),
        ("split_after: 3, 2", "not in ascending order"),
        ("split_after: 2, 40", "[40] are not in this text"),
        ("split_after: none", "at least one chunk"),
    ],
)
def test_an_invalid_answer_is_retried_with_the_reason(server, bad, reason):
    server.enqueue_chat(bad)
    server.chat_handler = every_third
    chunker = make(server, window_tokens=100)
    spans = chunker.chunk_spans(DOC)
    assert spans.shape[0] == 4  # same result as without the bad answer
    requests = server.requests_to("chat")
    assert len(requests) == 5
    retry = requests[1].json["messages"]
    assert retry[2] == {"role": "assistant", "content": bad}
    assert reason in retry[3]["content"]
    assert window_ids(requests[1].json) == [1, 2, 3]


def test_unreadable_and_truncated_responses_are_retried(server):
    server.enqueue_raw("chat", 200, b"{not json")
    server.enqueue_chat("split_after: 1, 2", finish_reason="length")
    server.chat_handler = every_third
    spans = make(server, window_tokens=100).chunk_spans(DOC)
    assert spans.shape[0] == 4
    assert len(server.requests_to("chat")) == 6


def test_falls_back_to_token_runs_and_says_so(server):
    server.chat_handler = lambda request: "Let me think about it."
    chunker = make(server, window_tokens=100, max_attempts=2, fallback_tokens=80)
    with pytest.warns(LLMChunkerFallbackWarning) as caught:
        spans = chunker.chunk_spans(DOC)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 6  # windows of pieces 1-3, 3-5, ... (2 per run of 80)
    assert messages[0].startswith(
        "llm:test-model?attempts=2&window=100: no valid answer for the"
    )
    assert "pieces 1-3 (characters 0-" in messages[0]
    assert "after 2 attempt(s)" in messages[0]
    assert "no 'split_after:' line" in messages[0]
    assert "'Let me think about it.'" in messages[0]
    assert "runs of at most 80 tokens" in messages[0]
    # Every ~47-token piece alone: two never fit in 80 tokens.
    pieces = chunker.splitter.chunk_spans(DOC)
    assert np.array_equal(spans, pieces)
    assert len(server.requests_to("chat")) == 2 * len(messages)


def test_fallback_for_one_window_only(server):
    server.enqueue_chat("nonsense")
    server.enqueue_chat("more nonsense")
    server.chat_handler = every_third
    chunker = make(server, window_tokens=100, max_attempts=2, fallback_tokens=1000)
    with pytest.warns(LLMChunkerFallbackWarning, match=r"pieces 1-3 \(characters 0-"):
        spans = chunker.chunk_spans(DOC)
    # The failed window is one run (no cut fits inside 1000 tokens), closed at its
    # end; the next windows are answered.
    pieces = chunker.splitter.chunk_spans(DOC)
    assert np.array_equal(spans, join_units(pieces, [2, 5, 8]))


def test_http_errors_raise_with_model_and_url(server):
    server.enqueue_error("chat", 404, "The model does not exist")
    chunker = make(server)
    with pytest.raises(LLMRequestError, match="HTTP 404") as info:
        chunker.chunk_spans(DOC)
    assert "llm:test-model" in str(info.value)
    assert server.base_url in str(info.value)


def test_key_and_url_from_the_environment(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    server.chat_handler = every_third
    chunker = LLMSemanticChunker("test-model", max_retries=0, window_tokens=100)
    assert chunker.chunk_spans(DOC).shape[0] == 4
    auth = server.requests_to("chat")[0].headers["authorization"]
    assert auth == f"Bearer {KEY}"
    assert KEY not in repr(chunker)
    assert KEY not in chunker.name


def test_a_missing_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    chunker = LLMSemanticChunker("test-model")
    with pytest.raises(RuntimeError, match="OPENAI_API_KEY"):
        chunker.chunk_spans(DOC)


def test_a_keyless_local_server_needs_no_key(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.api_key = None
    server.enqueue_chat("split_after: 1")
    chunker = LLMSemanticChunker("test-model", base_url=server.base_url)
    chunker.chunk_spans(DOC)
    assert server.requests[0].headers["authorization"] == "Bearer no-key"


def test_parse_split_after():
    assert parse_split_after("split_after: 3, 5") == [3, 5]
    assert parse_split_after("Sure.\nSplit_After: [2, 4]\nthanks") == [2, 4]
    assert parse_split_after("split_after:") == []
    with pytest.raises(ValueError, match="split_after"):
        parse_split_after("3, 5")


def test_names_and_spec_strings():
    registry: Registry[Chunker] = Registry("chunker")
    register_semantic(registry)
    chunker = registry.create("llm:gpt-4o-mini")
    assert isinstance(chunker, LLMSemanticChunker)
    assert chunker.name == "llm:gpt-4o-mini"
    tuned = registry.create("llm:my-model:latest?window=300&attempts=2")
    assert isinstance(tuned, LLMSemanticChunker)
    assert (tuned.model, tuned.window_tokens, tuned.max_attempts) == (
        "my-model:latest",
        300,
        2,
    )
    assert tuned.name == "llm:my-model:latest?attempts=2&window=300"
    with pytest.raises(UnknownSpec, match="unknown option 'temperature'"):
        registry.create("llm:gpt-4o?temperature=1")
    with pytest.raises(UnknownSpec, match="empty argument"):
        registry.create("llm:")
    with pytest.raises(ValueError, match="max_attempts"):
        LLMSemanticChunker("m", max_attempts=0)
