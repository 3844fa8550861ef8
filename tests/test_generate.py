"""Query generation: parsing, placement, windows, and whole runs against the local
OpenAI-compatible server with the real ``openai`` client."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from support.openai_server import OpenAIServer, ScriptedResponse, chat_completion

import pytest_chunkeval.cli.main as cli  # the module: the package also has a main()
from pytest_chunkeval.cli import generate as cli_generate
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet, read_queries
from pytest_chunkeval.generation import prompts
from pytest_chunkeval.generation.answers import (
    COMPOUND,
    DUPLICATE,
    NOT_VERBATIM,
    TOO_MANY_REFERENCES,
    fuzzy_find,
    parse_answer,
    place_reference,
    validate_answer,
)
from pytest_chunkeval.generation.generate import QueryGenerator, generate_queries
from pytest_chunkeval.generation.settings import (
    GenerationError,
    GenerationSettings,
    ResumeMismatch,
)
from pytest_chunkeval.generation.summary import format_summary
from pytest_chunkeval.generation.windows import Window, attempt_rng, choose_window
from pytest_chunkeval.llm.chat import MALFORMED, REFUSED, Rejection
from pytest_chunkeval.llm.parse import extract_json
from pytest_chunkeval.llm.pricing import estimate_cost, parse_price, price_for

KEY = "sk-gen-DO-NOT-LEAK-7731"
MODEL = "gpt-4o-mini"
# Small windows: the test documents are shorter than the default 4000 characters.
SMALL: dict[str, Any] = {"model": MODEL, "window_chars": 400}
TOPICS = [
    "backups",
    "billing",
    "caching",
    "deployment",
    "encryption",
    "failover",
    "logging",
    "monitoring",
    "networking",
    "quotas",
    "replication",
    "sharding",
]


def guide_text(name: str, lines: int = 40) -> str:
    out = [f"# The {name} guide", ""]
    for i in range(lines):
        topic = TOPICS[i % len(TOPICS)]
        out.append(
            f"Rule {i} of the {name} guide says that {topic} must be checked "
            f"every {i + 2} days by the on-call engineer."
        )
    return "\n".join(out) + "\n"


@pytest.fixture
def corpus_dir(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    (root / "notes").mkdir(parents=True)
    (root / "ops.md").write_text(guide_text("ops"), encoding="utf-8")
    (root / "notes" / "faq.md").write_text(guide_text("faq", 25), encoding="utf-8")
    return root


@pytest.fixture
def corpus(corpus_dir: Path) -> Corpus:
    return Corpus.from_paths([corpus_dir])


@pytest.fixture
def one_doc() -> Corpus:
    return Corpus.from_mapping({"ops.md": guide_text("ops")})


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        yield srv


@pytest.fixture
def client(server: OpenAIServer) -> Iterator[Any]:
    with openai.OpenAI(api_key=KEY, base_url=server.base_url, max_retries=2) as c:
        yield c


def passage_of(request: Any) -> tuple[str, str]:
    """(doc_id, passage) of a generation request."""
    user = request["messages"][-1]["content"]
    doc = re.search(r'Passage from the document "([^"]+)"', user)
    assert doc is not None
    passage = user.split("<passage>\n", 1)[1].rsplit("\n</passage>", 1)[0]
    return doc.group(1), passage


def answer(question: str, *refs: str) -> str:
    return json.dumps(
        {"pledge": prompts.PLEDGE, "question": question, "references": list(refs)}
    )


def good_handler(request: Any) -> str:
    """A well-behaved model: the first full rule line of the passage, verbatim."""
    doc, passage = passage_of(request)
    line = next(ln for ln in passage.splitlines() if ln.startswith("Rule "))
    number = line.split()[1]
    return answer(f"How often is rule {number} of {doc} checked?", line)


def rule(n: int, name: str = "ops") -> str:
    topic = TOPICS[n % len(TOPICS)]
    return (
        f"Rule {n} of the {name} guide says that {topic} must be checked every "
        f"{n + 2} days by the on-call engineer."
    )


# --------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "content",
    [
        '{"question": "Q?", "references": ["a"]}',
        '```json\n{"question": "Q?", "references": ["a"]}\n```',
        'Sure! Here it is: {"question": "Q?", "references": ["a"]} Hope it helps.',
        '<think>hmm {not this}</think>\n{"question": "Q?", "references": ["a"]}',
    ],
)
def test_extract_json_finds_the_object(content: str) -> None:
    assert extract_json(content) == {"question": "Q?", "references": ["a"]}


def test_extract_json_rejects_text_without_json() -> None:
    with pytest.raises(ValueError, match="no JSON"):
        extract_json("no braces here")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ("{not json", MALFORMED),
        ("[1, 2]", MALFORMED),
        ('{"references": ["a"]}', MALFORMED),
        ('{"question": "Q?"}', MALFORMED),
        ('{"question": "Q?", "references": []}', MALFORMED),
        ('{"question": "Q?", "references": ["a", 3]}', MALFORMED),
        ("I'm sorry, but I can't help with that.", REFUSED),
        ('{"skip": "only numbers"}', REFUSED),
        (
            '{"question": "Q?", "references": ["a","b","c","d","e","f"]}',
            TOO_MANY_REFERENCES,
        ),
        ('{"question": "Who? And when?", "references": ["a"]}', COMPOUND),
    ],
)
def test_parse_answer_rejections(content: str, reason: str) -> None:
    result = parse_answer(content)
    assert isinstance(result, Rejection)
    assert result.reason == reason


def test_parse_answer_accepts_dict_references_and_normalizes_spacing() -> None:
    result = parse_answer(
        '{"question": "  How   often?\\n", "references": [{"content": " a b "}, "c"]}'
    )
    assert result == ("How often?", ["a b", "c"])


# ------------------------------------------------------------------- placement


def test_place_reference_prefers_the_occurrence_inside_the_window() -> None:
    text = "Same line.\nOther.\nSame line.\nEnd."
    second = text.index("Same line.", 1)
    window = Window("d", second - 1, len(text))
    assert place_reference(text, "Same line.", window) == (second, second + 10)
    # Outside the window it is still found (in the document), nearest first.
    assert place_reference(text, "Same line.", Window("d", 11, 17)) == (
        second,
        second + 10,
    )


def test_place_reference_falls_back_to_whitespace_insensitive() -> None:
    text = "Intro.\nThe cat   sat\non the mat.\nEnd."
    found = place_reference(text, "The cat sat on the mat.", Window("d", 0, len(text)))
    assert found is not None
    assert text[found[0] : found[1]] == "The cat   sat\non the mat."
    assert place_reference(text, "The dog sat.", Window("d", 0, len(text))) is None


def test_validate_rejects_the_whole_question_for_one_bad_reference(
    one_doc: Corpus,
) -> None:
    text = one_doc["ops.md"].text
    window = Window("ops.md", 0, len(text))
    ok = validate_answer(answer("Q?", rule(1), rule(2)), one_doc, window)
    assert not isinstance(ok, Rejection)
    assert [e.text for e in ok.excerpts] == [rule(1), rule(2)]
    for e in ok.excerpts:
        assert text[e.start : e.end] == e.text
        assert not e.approximate
    bad = validate_answer(
        answer("Q?", rule(1), rule(2).replace("every", "each")), one_doc, window
    )
    assert isinstance(bad, Rejection)
    assert bad.reason == NOT_VERBATIM
    assert "reference 2" in bad.detail
    assert "'ops.md'" in bad.detail


def test_validate_drops_a_repeated_reference(one_doc: Corpus) -> None:
    text = one_doc["ops.md"].text
    got = validate_answer(
        answer("Q?", rule(3), f"  {rule(3)} "),
        one_doc,
        Window("ops.md", 0, len(text)),
    )
    assert not isinstance(got, Rejection)
    assert len(got.excerpts) == 1


def test_approximate_match_is_off_by_default_and_marked_when_on(
    one_doc: Corpus,
) -> None:
    text = one_doc["ops.md"].text
    window = Window("ops.md", 0, len(text))
    typo = rule(5).replace("engineer", "enginer").replace("checked", "cheked")
    assert isinstance(validate_answer(answer("Q?", typo), one_doc, window), Rejection)
    got = validate_answer(answer("Q?", typo), one_doc, window, approximate=0.9)
    assert not isinstance(got, Rejection)
    (excerpt,) = got.excerpts
    assert excerpt.approximate
    assert excerpt.text == rule(5) == text[excerpt.start : excerpt.end]
    assert got.approximate[0]["model_text"] == typo
    assert got.approximate[0]["similarity"] >= 0.9
    # A paraphrase far from the text stays rejected even with the fallback.
    far = "Backups are verified weekly by whoever is on call."
    assert isinstance(
        validate_answer(answer("Q?", far), one_doc, window, approximate=0.9),
        Rejection,
    )


def test_fuzzy_find_is_word_aligned() -> None:
    text = guide_text("ops", 60)
    target = rule(30)
    start = text.index(target)
    typo = target.replace("the", "teh").replace(" by", "")
    found = fuzzy_find(text, typo, 0, len(text), 0.9)
    assert found is not None
    assert found[:2] == (start, start + len(target))
    assert (
        fuzzy_find(text, "Completely unrelated words here.", 0, len(text), 0.9) is None
    )


@pytest.mark.perf
def test_fuzzy_find_is_fast() -> None:
    text = guide_text("ops", 60)
    typo = rule(30).replace("the", "teh").replace(" by", "")
    began = time.perf_counter()
    assert fuzzy_find(text, typo, 0, len(text), 0.9) is not None
    assert time.perf_counter() - began < 0.5


# ---------------------------------------------------------------------- windows


def test_window_sequence_is_a_function_of_seed_and_attempt(corpus: Corpus) -> None:
    first = [choose_window(attempt_rng(7, a), corpus, 300) for a in range(20)]
    again = [choose_window(attempt_rng(7, a), corpus, 300) for a in range(20)]
    other = [choose_window(attempt_rng(8, a), corpus, 300) for a in range(20)]
    assert first == again
    assert first != other
    assert {w.doc_id for w in first} == {"ops.md", "notes/faq.md"}
    for w in first:
        text = corpus[w.doc_id].text
        assert 150 <= w.end - w.start <= 300
        # Windows start at a line start and end at a line end.
        assert w.start == 0 or text[w.start - 1] == "\n"
        assert w.end == len(text) or text[w.end] == "\n"


def test_short_document_is_shown_whole() -> None:
    small = Corpus.from_mapping({"a.md": "Just one line.", "empty.md": "  \n"})
    w = choose_window(attempt_rng(1, 0), small, 4000)
    assert w == Window("a.md", 0, len("Just one line."))
    with pytest.raises(GenerationError, match="no text"):
        choose_window(attempt_rng(1, 0), Corpus.from_mapping({"e.md": " "}), 100)


# ---------------------------------------------------------------------- pricing


def test_prices() -> None:
    assert price_for("gpt-4o-mini") == (0.15, 0.60)
    assert price_for("gpt-4o-2024-08-06") == price_for("gpt-4o")
    assert price_for("openai/gpt-4o-mini") == (0.15, 0.60)
    assert price_for("llama3.1:8b") is None
    assert estimate_cost("gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.75)
    assert estimate_cost("llama3", 10, 10) is None
    assert parse_price("0.001") == (1.0, 1.0)
    assert parse_price("0.00015,0.0006") == pytest.approx((0.15, 0.6))
    assert estimate_cost("llama3", 1000, 0, parse_price("0")) == 0
    for bad in ("x", "-1", "1,2,3", ""):
        with pytest.raises(ValueError, match="per 1000 tokens"):
            parse_price(bad)


def test_prompt_version_pins_the_prompt_text() -> None:
    # Changing the prompt text must bump PROMPT_VERSION, then update this digest.
    pinned = {1: "ecc4d63c6efe7d1014a7c14af9bb9eb6beb5aeb7d75b99bb834a041c1a9f5320"}
    assert prompts.prompt_digest() == pinned[prompts.PROMPT_VERSION]


def test_prompt_asks_for_the_report_method() -> None:
    messages = prompts.build_messages("a.md", "TEXT", ["Q1?"], max_references=5)
    system, user = messages[0]["content"], messages[1]["content"]
    assert prompts.PLEDGE in system
    assert "JSON" in system
    assert "1 to 5" in system
    assert '"and"' in system
    assert "- Q1?" in user
    assert "<passage>\nTEXT\n</passage>" in user


# ------------------------------------------------------------- runs on the server


def test_good_answers_make_a_loadable_query_set(
    server: OpenAIServer, client: Any, corpus: Corpus, tmp_path: Path
) -> None:
    server.chat_handler = good_handler
    out = tmp_path / "q.jsonl"
    stats = generate_queries(
        corpus, out, model=MODEL, n=6, seed=3, client=client, window_chars=400
    )
    assert stats.complete
    assert stats.accepted == 6
    assert stats.stopped == "complete"
    assert stats.requests == stats.attempts >= 6
    assert stats.prompt_tokens == stats.requests  # the server reports 1 per request
    qs = QuerySet.load(out, corpus)
    assert len(qs) == 6
    meta = qs.metadata
    assert meta["model"] == MODEL
    assert meta["seed"] == 3
    assert meta["prompt_version"] == prompts.PROMPT_VERSION
    assert meta["corpus_hash"] == corpus.content_hash
    assert meta["window_chars"] == 400
    for q in qs:
        start, end = q.metadata["window"]
        (excerpt,) = q.excerpts
        assert start <= excerpt.start < excerpt.end <= end
        assert corpus[q.doc_id].text[excerpt.start : excerpt.end] == excerpt.text
        assert q.id.startswith(q.doc_id.removesuffix(".md") + "-")
    attempts = [q.metadata["attempt"] for q in qs]
    assert attempts == sorted(attempts)
    assert len(set(attempts)) == 6
    # Requests asked for the model's name and listed earlier questions of the doc.
    chats = [r.json for r in server.requests_to("chat")]
    assert all(c["model"] == MODEL for c in chats)
    assert "response_format" not in chats[0]
    assert "temperature" not in chats[0]
    asked = [q.text for q in qs]
    assert any(any(a in c["messages"][1]["content"] for a in asked) for c in chats)


def test_json_mode_and_temperature_are_sent_when_asked(
    server: OpenAIServer, client: Any, one_doc: Corpus, tmp_path: Path
) -> None:
    server.chat_handler = good_handler
    generate_queries(
        one_doc,
        tmp_path / "q.jsonl",
        **SMALL,
        n=1,
        client=client,
        json_mode=True,
        temperature=0.3,
    )
    body = server.requests_to("chat")[0].json
    assert body["response_format"] == {"type": "json_object"}
    assert body["temperature"] == 0.3
    assert read_queries(tmp_path / "q.jsonl").metadata["temperature"] == 0.3


def test_progress_bar_shows_accepted_and_attempted(
    server: OpenAIServer,
    client: Any,
    one_doc: Corpus,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.enqueue_chat("{not json")
    server.chat_handler = good_handler
    # A fixed seed: with a fresh one, two attempts may draw one window, the second
    # a duplicate question ("attempted 4, rejected 2"), once in a while.
    generate_queries(
        one_doc,
        tmp_path / "q.jsonl",
        **SMALL,
        n=2,
        seed=1,
        client=client,
        progress=True,
    )
    err = capsys.readouterr().err
    assert "accepted" in err
    assert "2/2" in err
    assert "attempted 3, rejected 1" in err
    generate_queries(one_doc, tmp_path / "p.jsonl", **SMALL, n=1, client=client)
    assert capsys.readouterr().err == ""  # not a terminal: no bar


def test_scripted_failures_are_counted_and_skipped(
    server: OpenAIServer, client: Any, one_doc: Corpus, tmp_path: Path
) -> None:
    fast = {"retry-after-ms": "1"}
    server.enqueue_chat(answer("Not verbatim?", "This sentence is not in the doc."))
    server.enqueue_chat("{this is not json")
    server.enqueue_chat(answer("How often is rule 1 checked?", rule(1)))
    server.enqueue_chat(answer("How OFTEN is rule 1 checked", rule(2)))  # duplicate
    server.enqueue_error("chat", 429, "slow down", headers=fast)
    server.enqueue_chat(answer("How often is rule 2 checked?", rule(2)))
    server.enqueue_error("chat", 500, "boom", headers=fast)
    server.enqueue_chat(answer("How often is rule 3 checked?", rule(3), rule(4)))
    server.enqueue_raw("chat", 200, b"{truncated body")
    server.enqueue("chat", ScriptedResponse(200, chat_completion("I'm sorry, no.")))
    server.enqueue_chat(answer("Who checks rule 5?", rule(5)))
    out = tmp_path / "q.jsonl"
    stats = generate_queries(one_doc, out, model=MODEL, n=4, seed=1, client=client)
    assert server.pending("chat") == 0
    assert stats.accepted == 4
    assert stats.attempts == 9
    assert dict(stats.rejected) == {
        NOT_VERBATIM: 1,
        MALFORMED: 2,
        DUPLICATE: 1,
        REFUSED: 1,
    }
    # The 429 and the 500 were retried by the client: 11 HTTP requests, 9 attempts.
    assert len(server.requests_to("chat")) == 11
    qs = QuerySet.load(out, one_doc)
    assert [q.text for q in qs] == [
        "How often is rule 1 checked?",
        "How often is rule 2 checked?",
        "How often is rule 3 checked?",
        "Who checks rule 5?",
    ]
    assert [e.text for e in qs[2].excerpts] == [rule(3), rule(4)]
    summary = format_summary(stats, MODEL, out)
    assert "4 of 4 queries" in summary
    assert "1 not verbatim, 2 malformed, 1 refused, 1 duplicate" in summary
    assert "estimated cost: $" in summary


def test_a_server_that_keeps_failing_stops_the_run(
    server: OpenAIServer, one_doc: Corpus, tmp_path: Path
) -> None:
    server.chat_handler = lambda request: ScriptedResponse(
        503, {"error": {"message": "overloaded"}}, {"retry-after-ms": "1"}
    )
    client = openai.OpenAI(api_key=KEY, base_url=server.base_url, max_retries=1)
    out = tmp_path / "q.jsonl"
    with client, pytest.raises(GenerationError, match=r"3 requests in a row.*HTTP 503"):
        generate_queries(one_doc, out, model=MODEL, n=2, client=client)
    assert len(server.requests_to("chat")) == 6  # 3 attempts x (1 + 1 retry)
    assert len(read_queries(out)) == 0


def test_an_endpoint_answering_garbage_stops_the_run(
    server: OpenAIServer, client: Any, one_doc: Corpus, tmp_path: Path
) -> None:
    # Issue 12 case 11: unreadable answers used to run until the attempt cap.
    answers = iter([good_handler])
    server.chat_handler = lambda request: next(answers, lambda r: "<html>hi")(request)
    out = tmp_path / "q.jsonl"
    with pytest.raises(
        GenerationError,
        match=r"5 answers in a row from model .* could not be read .*is it the right "
        r"model, and a chat endpoint\? Stopped with 1 of 20 queries kept",
    ):
        generate_queries(one_doc, out, **SMALL, n=20, seed=1, client=client)
    assert len(server.requests_to("chat")) == 6  # not 5 x 20
    assert len(read_queries(out)) == 1  # completed work is kept
    with pytest.raises(GenerationError, match="2 answers in a row"):
        generate_queries(
            one_doc, out, **SMALL, n=20, seed=1, client=client, max_unusable=2
        )


def test_a_wrong_key_stops_at_once(
    server: OpenAIServer, one_doc: Corpus, tmp_path: Path
) -> None:
    client = openai.OpenAI(api_key="sk-wrong", base_url=server.base_url)
    with client, pytest.raises(GenerationError, match="HTTP 401"):
        generate_queries(one_doc, tmp_path / "q.jsonl", model=MODEL, n=1, client=client)
    assert len(server.requests_to("chat")) == 1


def test_attempt_cap_stops_a_model_that_never_complies(
    server: OpenAIServer, client: Any, one_doc: Corpus, tmp_path: Path
) -> None:
    server.chat_handler = lambda request: answer("Q?", "Never in the document.")
    stats = generate_queries(
        one_doc, tmp_path / "q.jsonl", model=MODEL, n=2, client=client
    )
    assert stats.stopped == "max attempts"
    assert not stats.complete
    assert stats.attempts == 10 == stats.rejected[NOT_VERBATIM]
    stats = generate_queries(
        one_doc, tmp_path / "q.jsonl", model=MODEL, n=2, client=client, max_attempts=3
    )
    assert stats.attempts == 3


def test_approximate_run_marks_excerpts(
    server: OpenAIServer, client: Any, one_doc: Corpus, tmp_path: Path
) -> None:
    def paraphrasing(request: Any) -> str:
        _, passage = passage_of(request)
        line = next(ln for ln in passage.splitlines() if ln.startswith("Rule "))
        return answer(
            f"What does {line.split()[1]} say?", line.replace(" the ", " teh ")
        )

    server.chat_handler = paraphrasing
    out = tmp_path / "q.jsonl"
    stats = generate_queries(
        one_doc,
        out,
        model=MODEL,
        n=2,
        seed=2,
        client=client,
        approximate=0.9,
        window_chars=400,
    )
    assert stats.accepted == 2
    assert stats.approximate_excerpts == 2
    raw = [json.loads(line) for line in out.read_text().splitlines()]
    assert raw[0]["metadata"]["approximate"] == 0.9
    for record in raw[1:]:
        assert record["excerpts"][0]["approximate"] is True
        assert " teh " in record["metadata"]["approximate_references"][0]["model_text"]
    assert all(e.approximate for q in QuerySet.load(out, one_doc) for e in q.excerpts)


# ------------------------------------------------------------------------ resume


def test_resume_continues_the_same_window_sequence(
    server: OpenAIServer, client: Any, corpus: Corpus, tmp_path: Path
) -> None:
    server.chat_handler = good_handler
    whole, parts = tmp_path / "whole.jsonl", tmp_path / "parts.jsonl"
    generate_queries(corpus, whole, n=5, seed=11, **SMALL, client=client)
    generate_queries(corpus, parts, n=2, seed=11, **SMALL, client=client)
    notes: list[str] = []
    stats = generate_queries(
        corpus, parts, n=5, **SMALL, client=client, echo=notes.append
    )
    assert stats.existing == 2
    assert stats.accepted == 3
    assert any("resuming" in n and "seed 11" in n for n in notes)
    a, b = read_queries(whole), read_queries(parts)
    assert [(q.id, q.metadata) for q in a] == [(q.id, q.metadata) for q in b]
    assert a.metadata == b.metadata
    # Already complete: nothing is asked.
    before = len(server.requests_to("chat"))
    stats = generate_queries(corpus, parts, n=5, **SMALL, client=client)
    assert stats.accepted == 0
    assert stats.complete
    assert len(server.requests_to("chat")) == before


def test_resume_cuts_a_torn_last_line(
    server: OpenAIServer, client: Any, corpus: Corpus, tmp_path: Path
) -> None:
    server.chat_handler = good_handler
    out = tmp_path / "q.jsonl"
    generate_queries(corpus, out, n=2, seed=5, **SMALL, client=client)
    with open(out, "a", encoding="utf-8") as fh:
        fh.write('{"id": "ops-half", "question": "Cut')
    notes: list[str] = []
    generate_queries(corpus, out, n=3, **SMALL, client=client, echo=notes.append)
    assert any("incomplete last line" in n for n in notes)
    qs = QuerySet.load(out, corpus)
    assert len(qs) == 3
    assert "ops-half" not in qs


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"model": "gpt-4o"}, "model: file has 'gpt-4o-mini', this run 'gpt-4o'"),
        ({"seed": 99}, "seed: file has 4, this run 99"),
        ({"window_chars": 500}, "window_chars"),
        ({"approximate": 0.95}, "approximate"),
    ],
)
def test_resume_with_other_settings_is_an_error(
    server: OpenAIServer,
    client: Any,
    corpus: Corpus,
    tmp_path: Path,
    change: dict[str, Any],
    message: str,
) -> None:
    server.chat_handler = good_handler
    out = tmp_path / "q.jsonl"
    generate_queries(corpus, out, model=MODEL, n=1, seed=4, client=client)
    before = out.read_bytes()
    settings: dict[str, Any] = {"model": MODEL, "n": 3, "seed": 4, **change}
    with pytest.raises(ResumeMismatch, match=re.escape(message)):
        generate_queries(corpus, out, client=client, **settings)
    assert out.read_bytes() == before


def test_resume_on_a_changed_corpus_is_an_error(
    server: OpenAIServer, client: Any, corpus_dir: Path, tmp_path: Path
) -> None:
    server.chat_handler = good_handler
    out = tmp_path / "q.jsonl"
    generate_queries(
        Corpus.from_paths([corpus_dir]), out, model=MODEL, n=1, client=client
    )
    (corpus_dir / "ops.md").write_text(guide_text("ops", 41), encoding="utf-8")
    with pytest.raises(ResumeMismatch, match="corpus changed"):
        generate_queries(
            Corpus.from_paths([corpus_dir]), out, model=MODEL, n=2, client=client
        )
    # --overwrite starts again.
    stats = generate_queries(
        Corpus.from_paths([corpus_dir]),
        out,
        model=MODEL,
        n=1,
        client=client,
        overwrite=True,
    )
    assert stats.existing == 0
    assert len(read_queries(out)) == 1


def test_a_foreign_file_is_not_resumed(
    client: Any, corpus: Corpus, tmp_path: Path
) -> None:
    out = tmp_path / "q.jsonl"
    QuerySet([], {"note": "hand-written"}).save(out)
    with pytest.raises(ResumeMismatch, match="not written by chunkeval generate"):
        generate_queries(corpus, out, model=MODEL, n=1, client=client)


def test_settings_are_checked() -> None:
    for bad in (
        {"n": 0},
        {"model": " "},
        {"approximate": 1.5},
        {"max_attempts": 0},
        {"window_chars": 10},
        {"seed": -1},
    ):
        with pytest.raises(ValueError):  # noqa: PT011  # messages checked elsewhere
            GenerationSettings(**{"model": MODEL, "n": 1, **bad})


def test_no_key_and_no_url_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, corpus: Corpus, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(GenerationError, match="OPENAI_API_KEY"):
        generate_queries(corpus, tmp_path / "q.jsonl", model=MODEL, n=1)
    assert not (tmp_path / "q.jsonl").exists()


def test_a_keyless_local_server_works(
    monkeypatch: pytest.MonkeyPatch, corpus: Corpus, tmp_path: Path
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAIServer() as local:
        local.chat_handler = good_handler
        stats = generate_queries(
            corpus, tmp_path / "q.jsonl", model="llama3", n=1, base_url=local.base_url
        )
    assert stats.accepted == 1


def test_generator_stats_are_live_when_interrupted(
    server: OpenAIServer, client: Any, corpus: Corpus, tmp_path: Path
) -> None:
    calls = 0

    def interrupting(request: Any) -> str:
        nonlocal calls
        calls += 1
        return good_handler(request)

    server.chat_handler = interrupting
    generator = QueryGenerator(
        corpus,
        tmp_path / "q.jsonl",
        GenerationSettings(model=MODEL, n=5, seed=1, window_chars=400),
        client=client,
    )
    original = generator._attempt

    def attempt(*args: Any) -> Any:
        if generator.stats.attempts == 2:
            raise KeyboardInterrupt
        return original(*args)

    generator._attempt = attempt  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        generator.run()
    assert generator.stats.stopped == "interrupted"
    assert generator.stats.accepted == len(read_queries(tmp_path / "q.jsonl")) == 2


# --------------------------------------------------------------------------- CLI


def test_cli_generate_then_filter_and_the_key_is_never_written(
    server: OpenAIServer,
    corpus_dir: Path,
    tmp_path: Path,
    chunkeval_cli: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.chat_handler = good_handler
    out_dir = tmp_path / "out"
    out = out_dir / "queries.jsonl"
    code = chunkeval_cli(
        [
            "generate",
            "--corpus",
            str(corpus_dir),
            "--out",
            str(out),
            "--n",
            "6",
            "--model",
            MODEL,
            "--seed",
            "9",
            "--window-chars",
            "400",
            "--embedder",
            "openai:text-embedding-3-small?dimensions=32",
            "--excerpt-threshold",
            "off",
            "--duplicate-threshold",
            "0.99",
            "--cache-dir",
            str(out_dir / "cache"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    text = captured.out
    assert "6 of 6 queries" in text
    assert "tokens: 6 prompt + 6 completion" in text
    assert "estimated cost: $0.0000" in text
    assert "question vs nearest other question" in text
    assert "near duplicates: removed 0 of 6" in text
    assert "kept 6 of 6" in text
    filtered = out_dir / "queries.filtered.jsonl"
    kept = QuerySet.load(filtered, Corpus.from_paths([corpus_dir]))
    assert kept.metadata["filters"]["embedder"] == (
        f"openai:text-embedding-3-small@{server.base_url}:d32"  # the server named
    )
    assert kept.metadata["model"] == MODEL
    assert len(server.requests_to("embeddings")) >= 1
    # The key went to the server in headers only, and is in no file, no output.
    assert server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    for path in out_dir.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in captured.out + captured.err


def test_cli_dry_run_calls_nothing(
    server: OpenAIServer,
    corpus_dir: Path,
    tmp_path: Path,
    chunkeval_cli: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "q.jsonl"
    code = chunkeval_cli(
        [
            "generate",
            "--corpus",
            str(corpus_dir),
            "--out",
            str(out),
            "--n",
            "10",
            "--model",
            "llama3",
            "--dry-run",
            "--price-per-1k",
            "0.001,0.002",
        ]
    )
    text = capsys.readouterr().out
    assert code == 0
    assert "dry run: 10 queries" in text
    assert "<passage>" in text
    assert "estimated minimum cost: $" in text
    assert server.requests == []
    assert not out.exists()


def test_cli_incomplete_run_exits_1_and_reports_why(
    server: OpenAIServer,
    corpus_dir: Path,
    tmp_path: Path,
    chunkeval_cli: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.chat_handler = lambda request: "I cannot help with that."
    code = chunkeval_cli(
        [
            "generate",
            *("--corpus", str(corpus_dir), "--out", str(tmp_path / "q.jsonl")),
            *("--n", "3", "--model", "my-local-model", "--max-attempts", "4"),
        ]
    )
    text = capsys.readouterr().out
    assert code == cli_generate.EXIT_INCOMPLETE
    assert "0 of 3 queries" in text
    assert "4 refused" in text
    assert "stopped after 4 attempts" in text
    assert "estimated cost: unknown (no price known for model 'my-local-model'" in text
    assert "last rejection (refused)" in text


def test_cli_errors(
    server: OpenAIServer,
    corpus_dir: Path,
    tmp_path: Path,
    chunkeval_cli: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    base = ["generate", "--corpus", str(corpus_dir), "--model", MODEL, "--n", "1"]
    assert chunkeval_cli([*base, "--out", str(tmp_path / "q.json")]) == cli.EXIT_USAGE
    assert "use a .jsonl name" in capsys.readouterr().err
    server.chat_handler = good_handler
    out = str(tmp_path / "q.jsonl")
    assert chunkeval_cli([*base, "--out", out, "--no-filter"]) == 0
    capsys.readouterr()
    code = chunkeval_cli(
        [
            "generate",
            "--corpus",
            str(corpus_dir),
            "--model",
            "gpt-4o",
            "--n",
            "2",
            "--out",
            out,
            "--no-filter",
        ]
    )
    assert code == cli.EXIT_USAGE
    assert "cannot resume" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        chunkeval_cli([*base, "--out", out, "--approximate", "1.5"])
    assert "similarity in (0, 1]" in capsys.readouterr().err


def test_importing_the_generation_modules_loads_no_heavy_dependency() -> None:
    code = (
        "import sys\n"
        "import pytest_chunkeval.generation.generate\n"
        "import pytest_chunkeval.generation.chat, pytest_chunkeval.llm.pricing\n"
        "import pytest_chunkeval.generation.filters\n"
        "import pytest_chunkeval.cli.generate, pytest_chunkeval.generation.prompts\n"
        "heavy = {'openai', 'torch', 'sentence_transformers', 'pytest', 'tqdm'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_cli_says_how_to_filter_when_the_embedder_is_unavailable(
    monkeypatch: pytest.MonkeyPatch,
    corpus_dir: Path,
    tmp_path: Path,
    chunkeval_cli: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # A keyless local chat server; the OpenAI embedder then has no key.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "q.jsonl"
    with OpenAIServer() as local:
        local.chat_handler = good_handler
        code = chunkeval_cli(
            [
                *("generate", "--corpus", str(corpus_dir), "--out", str(out)),
                *("--n", "1", "--model", "llama3", "--base-url", local.base_url),
                *("--embedder", "openai:text-embedding-3-large"),
            ]
        )
    err = capsys.readouterr().err
    assert code == cli.EXIT_USAGE
    assert f"{out} is complete, but the filters cannot run" in err
    assert f"chunkeval filter {out} --out" in err
    assert len(read_queries(out)) == 1
