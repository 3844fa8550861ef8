"""``llm:MODEL`` relationship extraction against the local OpenAI-compatible server
(the real ``openai`` client): malformed answers, evidence that is not verbatim,
429/500, resume, and no request on an unchanged re-run."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.openai_server import OpenAIServer, ScriptedResponse
from support.relationships_project import (
    DOC,
    FACTS,
    SENTENCES,
    TEXT,
    by_sentence,
    excerpt,
    write_cli_project,
)

from pytest_chunkeval.chunkers import as_chunker
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Query
from pytest_chunkeval.relationships.evaluate import evaluate_relationships
from pytest_chunkeval.relationships.extraction import ExtractionFailed
from pytest_chunkeval.relationships.extractors import CallableExtractor
from pytest_chunkeval.relationships.llm import LLMExtractor, parse_answer

KEY = "sk-graph-DO-NOT-LEAK-4410"
_FACT = re.compile(r"([A-Z]\w+) (founded|acquired|joined) ([A-Z]\w+)\.")


def text_of(request: Any) -> str:
    """The text an extraction request is about."""
    user = request["messages"][1]["content"]
    return user.split("<text>\n", 1)[1].rsplit("\n</text>", 1)[0]


def answer_for(text: str) -> str:
    rels = [
        {"subject": m[1], "predicate": m[2], "object": m[3], "evidence": m[0]}
        for m in _FACT.finditer(text)
    ]
    return json.dumps({"relationships": rels})


def facts_callable(text: str) -> list[tuple[str, str, str, str]]:
    return [(m[1], m[2], m[3], m[0]) for m in _FACT.finditer(text)]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        yield srv


@pytest.fixture
def corpus() -> Corpus:
    return Corpus.from_mapping({DOC: TEXT})


@pytest.fixture
def queries() -> QuerySet:
    return QuerySet(
        [
            Query("q1", "Who founded Acme?", (excerpt(SENTENCES[0]),), DOC),
            Query(
                "q2",
                "What happened to Zeta?",
                (excerpt(SENTENCES[1]), excerpt(SENTENCES[5])),
                DOC,
            ),
        ]
    )


def run(
    corpus: Corpus, queries: QuerySet, tmp_path: Path, extractor: Any, **kw: Any
) -> Any:
    return evaluate_relationships(
        as_chunker(by_sentence, "by-sentence"),
        corpus,
        queries,
        extractor=extractor,
        k=3,
        embedder="hashing",
        store="exact",
        unit="char",
        cache=tmp_path / "cache",
        **kw,
    )


def test_llm_extraction_matches_the_callable_retries_429_500_and_caches(
    server: OpenAIServer,
    corpus: Corpus,
    queries: QuerySet,
    tmp_path: Path,
) -> None:
    server.enqueue_error("chat", 429, headers={"retry-after-ms": "5"})
    server.enqueue_error("chat", 500, headers={"retry-after-ms": "5"})
    server.chat_handler = lambda request: answer_for(text_of(request))
    lines: list[str] = []
    result = run(corpus, queries, tmp_path, "llm:gpt-4o-mini", log=lines.append)
    texts = {text_of(r.json) for r in server.requests_to("chat")}
    assert texts == set(SENTENCES)  # 3 excerpts, then the 3 chunks not seen yet
    assert len(server.requests_to("chat")) == len(SENTENCES) + 2  # + 2 retried
    request = server.requests_to("chat")[-1].json
    assert request["model"] == "gpt-4o-mini"
    assert request["response_format"] == {"type": "json_object"}
    (line,) = lines  # the estimate, printed before the paid run
    assert "relationship extraction: 6 requests to 'gpt-4o-mini'" in line
    assert "estimated cost ~$" in line

    expected = run(
        corpus,
        queries,
        tmp_path,
        CallableExtractor(facts_callable, name="facts"),
        log=None,
    )
    assert result.to_json()["metrics"] == expected.to_json()["metrics"]
    assert result.config["extractor"] == "llm:gpt-4o-mini"
    assert result.graph["extraction"]["requests"] == 3  # sentences 3, 4, 5
    assert result.graph["gold_extraction"]["requests"] == 3

    server.clear_requests()
    lines.clear()
    again = run(corpus, queries, tmp_path, "llm:gpt-4o-mini", log=lines.append)
    assert server.requests_to("chat") == []
    assert lines == []  # nothing to pay for: no estimate
    assert again.to_json()["metrics"] == result.to_json()["metrics"]
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path


def test_malformed_answers_are_sent_back_then_fail_naming_the_text(
    server: OpenAIServer, corpus: Corpus, queries: QuerySet, tmp_path: Path
) -> None:
    stubborn = {"on": True}

    def handler(request: Any) -> Any:
        text = text_of(request)
        if len(request["messages"]) == 2:  # first attempt: prose, not JSON
            return "Sure! Alice founded Acme."
        if "Orbit" in text and stubborn["on"]:
            return json.dumps({"relationships": [{"subject": "Dave"}]})
        return answer_for(text)

    server.enqueue_raw("chat", 200, b"{not json")  # a body the client cannot read
    server.chat_handler = handler
    extractor = LLMExtractor("test-model", max_attempts=3, concurrency=1)
    with pytest.raises(ExtractionFailed) as info:
        run(corpus, queries, tmp_path, extractor)
    message = str(info.value)
    assert "2 text(s) got no usable answer" in message
    assert "chunk 4 of 'by-sentence'" in message
    assert "chunk 5 of 'by-sentence'" in message
    assert 'relationship 1 has no "predicate" string' in message
    retried = [
        r.json for r in server.requests_to("chat") if len(r.json["messages"]) > 2
    ]
    assert retried
    assert (
        "That answer cannot be used: the answer is not valid JSON"
        in (retried[0]["messages"][-1]["content"])
    )

    # The failed texts were not cached: a re-run asks for them only.
    stubborn["on"] = False
    server.clear_requests()
    result = run(corpus, queries, tmp_path, extractor)
    assert {text_of(r.json) for r in server.requests_to("chat")} == {
        SENTENCES[3],
        SENTENCES[4],
    }
    assert result.graph["relationships"] == len(FACTS)


def test_evidence_that_is_not_verbatim_is_dropped_and_counted(
    server: OpenAIServer, corpus: Corpus, queries: QuerySet, tmp_path: Path
) -> None:
    def handler(request: Any) -> str:
        text = text_of(request)
        answer = json.loads(answer_for(text))
        for rel in answer["relationships"]:
            if rel["subject"] == "Carol":
                rel["evidence"] = "Carol is an employee of Acme."  # paraphrased
        return json.dumps(answer)

    server.chat_handler = handler
    result = run(corpus, queries, tmp_path, "llm:test-model", log=None)
    assert result.graph["extraction"]["not_verbatim"] == 1
    assert result.graph["relationships"] == len(FACTS) - 1
    subjects = {
        r[0] for q in result.queries for r in q.details["retrieved_relationships"]
    }
    assert "Carol" not in subjects


def test_a_server_that_keeps_failing_stops_and_a_rerun_resumes(
    server: OpenAIServer, corpus: Corpus, queries: QuerySet, tmp_path: Path
) -> None:
    down = {"on": True}

    def handler(request: Any) -> Any:
        text = text_of(request)
        if down["on"] and text != SENTENCES[0]:
            return ScriptedResponse(500, {"error": {"message": "down"}})
        return answer_for(text)

    server.chat_handler = handler
    extractor = LLMExtractor("test-model", max_retries=0, concurrency=1)
    with pytest.raises(
        ExtractionFailed, match=r"(?s)2 text.*excerpt 1: api error.*500"
    ):
        run(corpus, queries, tmp_path, extractor)
    asked = {text_of(r.json) for r in server.requests_to("chat")}
    assert SENTENCES[0] in asked

    down["on"] = False
    server.clear_requests()
    result = run(corpus, queries, tmp_path, extractor)
    again = [text_of(r.json) for r in server.requests_to("chat")]
    assert SENTENCES[0] not in again  # its answer was kept
    assert len(again) == len(SENTENCES) - 1
    assert result.mean("rel_recall") > 0


def test_parse_answer_forms() -> None:
    fenced = '```json\n{"relationships": [{"subject": "A", "predicate": "b", ' + (
        '"object": "C", "evidence": ["x", "y"]}]}\n```'
    )
    assert parse_answer(fenced) == [("A", "b", "C", ["x", "y"])]
    assert parse_answer('Here: {"relationships": []} done') == []
    for bad, why in [
        ("[]", "object with a"),
        ('{"relationships": [1]}', "is not an object"),
        (
            '{"relationships": [{"subject": "A", "predicate": "b", "object": "C"}]}',
            "evidence",
        ),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_answer(bad)


def test_cli_relationships_estimates_its_cost_at_the_given_price(
    server: OpenAIServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    chunkeval_cli: Any,
) -> None:
    monkeypatch.chdir(tmp_path)
    server.chat_handler = lambda request: answer_for(text_of(request))
    write_cli_project(tmp_path)
    argv = ["relationships", "--corpus", DOC, "--queries", "q.jsonl"]
    argv += ["--chunker", "recursive:30:0", "--extractor", "llm:house-model"]
    argv += ["--embedder", "hashing", "--store", "exact"]
    estimate = re.compile(
        r"~(?P<prompt>[\d,]+) prompt \+ ~(?P<completion>[\d,]+) completion tokens, "
        r"estimated cost (?P<cost>.*)$",
        re.MULTILINE,
    )

    def estimated(*price: str) -> tuple[int, int, str]:
        """The run's estimate (each run in a fresh cache: it pays again)."""
        cache = ["--cache-dir", f"cache-{len(list(tmp_path.glob('cache-*')))}"]
        assert chunkeval_cli([*argv, *cache, *price]) == 0
        found = estimate.search(capsys.readouterr().err)
        assert found is not None
        tokens = (
            int(found["prompt"].replace(",", "")),
            int(found["completion"].replace(",", "")),
        )
        return (*tokens, found["cost"])

    prompt, completion, cost = estimated()  # a model without a built-in price
    assert cost == "unknown (no price for 'house-model'; pass --price-per-1k)"
    assert prompt > 0
    assert completion > 0
    assert estimated("--price-per-1k", "1,2") == (
        prompt,
        completion,
        f"~${(prompt * 1 + completion * 2) / 1000:.4f}",
    )
    # One price for both sides: input and output tokens at the same rate.
    assert (
        estimated("--price-per-1k", "3")[2]
        == f"~${3 * (prompt + completion) / 1000:.4f}"
    )
    assert len(server.requests_to("chat")) > 0
