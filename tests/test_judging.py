"""Context relevance judging (SPEC §10): judgments, metrics, memory, LLM judges."""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.openai_server import OpenAIServer, ScriptedResponse

from pytest_chunkeval.chunkers.sentence import sentence_spans
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.judging.judge import (
    INSUFFICIENT,
    CallableJudge,
    JudgeError,
    Judgment,
    LLMJudge,
    build_messages,
    judgment_from_sentences,
    parse_judgment,
)
from pytest_chunkeval.judging.relevance import (
    build_context,
    context_relevance,
    judged_corpus_spans,
)
from pytest_chunkeval.judging.run import Judging
from pytest_chunkeval.judging.specs import get_judge, register_judge
from pytest_chunkeval.judging.store import JudgmentFile, JudgmentFileWarning
from pytest_chunkeval.llm.answers import AnswerCache
from pytest_chunkeval.llm.chat import API_ERROR, MALFORMED, LLMError

KEY = "sk-test-judging-0123456789"

CONTEXT = (
    "Backups run nightly at 02:00 UTC. They are kept for 30 days.\n\n"
    "The office has a  coffee machine.  Nobody cleans it."
)


# --------------------------------------------------------------- judgments


def test_sentences_are_placed_verbatim_or_up_to_whitespace() -> None:
    j = judgment_from_sentences(
        CONTEXT,
        [
            "Backups run nightly at 02:00 UTC.",
            "The office has a coffee machine.",  # one space where the text has two
            "Backups run every hour.",  # not in the context
        ],
    )
    assert [CONTEXT[a:b] for a, b in j.spans] == [
        "Backups run nightly at 02:00 UTC.",
        "The office has a  coffee machine.",
    ]
    assert j.dropped == 1
    assert not j.insufficient


@pytest.mark.parametrize(
    ("answer", "sentences"),
    [
        ('{"sentences": ["a.", "b."]}', ["a.", "b."]),
        ('```json\n{"sentences": ["a."]}\n```', ["a."]),
        ("Insufficient Information", []),
        ('"Insufficient Information."', []),
        ('{"sentences": []}', []),
        ('{"sentences": ["Insufficient Information"]}', []),
        ("<think>hmm</think>\n" + '{"sentences": ["a."]}', ["a."]),
        ('["a."]', ["a."]),
    ],
)
def test_parse_judgment(answer: str, sentences: list[str]) -> None:
    assert parse_judgment(answer) == sentences


@pytest.mark.parametrize(
    "answer",
    [
        "The backups run nightly.",
        '{"relevant": ["a."]}',
        '{"sentences": [1, 2]}',
        '{"sentences": "a.", "x": }',
    ],
)
def test_malformed_judgments_are_rejected(answer: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        parse_judgment(answer)


def test_prompt_is_the_ragas_prompt() -> None:
    user = build_messages("When do backups run?", CONTEXT)[-1]["content"]
    assert "extract relevant sentences from the provided context" in user
    assert INSUFFICIENT in user
    assert "not allowed to make any changes" in user
    assert CONTEXT in user


def test_stored_judgments_are_checked_against_the_context() -> None:
    good = {"spans": [[0, 33]], "dropped": 0}
    assert Judgment.from_json(good, CONTEXT).spans == ((0, 33),)
    for bad in (
        {"spans": [[0, 10_000]]},
        {"spans": [[5, 3]]},
        {"spans": [[10, 20], [0, 5]]},
        {"spans": [["0", 3]]},
        {"spans": [[0, 3]], "dropped": -1},
        [],
    ):
        with pytest.raises(ValueError, match=r"."):
            Judgment.from_json(bad, CONTEXT)


# ----------------------------------------------------------------- metrics


def test_splitter_output_is_pinned() -> None:
    # SPLITTER ("sentences-1") names this behaviour in the judgment key: if this
    # test must change, bump SPLITTER too.
    text = 'He said "Go!" Then left.  Dr. Who? Yes...\n\nNew para'
    assert [text[a:b] for a, b in sentence_spans(text).tolist()] == [
        'He said "Go!"',
        "Then left.",
        "Dr.",
        "Who?",
        "Yes...",
        "New para",
    ]


DOC = (
    "Alpha one. Alpha two. Alpha three. "  # 0..35
    "Beta one. Beta two. Beta three."
)


def units() -> UnitMap:
    return UnitMap(["d"], [DOC], "char", None)


def test_context_relevance_counts_sentences_per_retrieved_chunk() -> None:
    texts = {"d": DOC}
    chunk_a = ("d", 0, 35)  # three alpha sentences (and the trailing space)
    chunk_ab = ("d", 11, 45)  # overlaps: "Alpha two. Alpha three. Beta one."
    retrieved = [chunk_a, chunk_ab]
    context, offsets = build_context([DOC[s:e] for _, s, e in retrieved])
    judgment = judgment_from_sentences(context, ["Alpha two.", "Alpha three."])
    judged = judged_corpus_spans(judgment, retrieved, offsets)
    # both copies of the judged sentences map to the same corpus spans, merged
    assert judged == [("d", 11, 21), ("d", 22, 34)]
    r = context_relevance(retrieved, judged, texts, units())
    # chunk_a: 2 of 3 relevant; chunk_ab: 2 of 3 relevant
    assert (r.sentences, r.relevant_sentences) == (6, 4)
    assert r.context_relevance == pytest.approx(4 / 6)
    # units: |R_a ∩ J| = 10 + 12, |R_ab ∩ J| = 10 + 12; |tr| = 35 + 34
    assert r.context_relevance_tokens == pytest.approx(44 / 69)


def test_a_fully_relevant_overlapping_context_scores_one() -> None:
    retrieved = [("d", 0, 21), ("d", 11, 21)]
    context, offsets = build_context([DOC[s:e] for _, s, e in retrieved])
    judgment = judgment_from_sentences(context, ["Alpha one.", "Alpha two."])
    judged = judged_corpus_spans(judgment, retrieved, offsets)
    r = context_relevance(retrieved, judged, {"d": DOC}, units())
    assert r.context_relevance == 1.0
    assert r.context_relevance_tokens == pytest.approx(30 / 31)  # not the space between


def test_nothing_relevant_or_nothing_retrieved_scores_zero() -> None:
    r = context_relevance([("d", 0, 21)], [], {"d": DOC}, units())
    assert (r.context_relevance, r.context_relevance_tokens) == (0.0, 0.0)
    r = context_relevance([], [], {"d": DOC}, units())
    assert (r.context_relevance, r.context_relevance_tokens) == (0.0, 0.0)


# ------------------------------------------------------------------ memory


def counting_judge(calls: list[str], version: str = "1") -> CallableJudge:
    def judge(question: str, context: str) -> list[str]:
        calls.append(question)
        word = question.split()[-1].rstrip("?")
        return [s for s in context.split(". ") if word in s.lower()]

    return CallableJudge(judge, name="counting", version=version)


ITEMS = [
    ("About backups?", CONTEXT),
    ("About coffee?", CONTEXT),
    ("About backups?", CONTEXT),  # a repeat is judged once
]


def test_judging_is_cached_and_committed(tmp_path: Path) -> None:
    calls: list[str] = []
    cache = AnswerCache(tmp_path / "cache")
    committed = JudgmentFile(tmp_path / "judgments.json")
    judging = Judging(
        counting_judge(calls), cache=cache, committed=committed, record=True
    )
    first = judging.judge_all(ITEMS)
    assert calls == ["About backups?", "About coffee?"]
    assert first[0] == first[2]
    assert first[0] is not None
    assert [CONTEXT[a:b] for a, b in first[0].spans] == [
        "Backups run nightly at 02:00 UTC"
    ]
    assert judging.stats.judged == 2
    committed.save()
    text = (tmp_path / "judgments.json").read_text()
    assert text.count("\n") == 7  # 5 lines of frame + one line per judgment
    assert '"question": "About coffee?"' in text

    # a fresh clone: no cache, the committed file only -> no call, same judgments
    calls.clear()
    fresh = Judging(
        counting_judge(calls),
        cache=AnswerCache(tmp_path / "other-cache"),
        committed=JudgmentFile(tmp_path / "judgments.json"),
    )
    assert fresh.judge_all(ITEMS) == first
    assert calls == []
    assert fresh.stats.committed == 2

    # the cache alone also answers; a new version judges again
    calls.clear()
    assert Judging(counting_judge(calls), cache=cache).judge_all(ITEMS) == first
    assert calls == []
    Judging(counting_judge(calls, version="2"), cache=cache).judge_all(ITEMS)
    assert len(calls) == 2


def test_a_committed_judgment_that_does_not_fit_is_judged_again(
    tmp_path: Path,
) -> None:
    calls: list[str] = []
    path = tmp_path / "judgments.json"
    committed = JudgmentFile(path)
    Judging(counting_judge(calls), committed=committed, record=True).judge_all(ITEMS)
    committed.save()
    path.write_text(
        path.read_text().replace("Backups run nightly", "Backups run daily")
    )
    calls.clear()
    judging = Judging(counting_judge(calls), committed=JudgmentFile(path))
    with pytest.warns(JudgmentFileWarning, match="not the context's text"):
        judging.judge_all(ITEMS)
    assert calls == ["About backups?"]


def test_two_writers_of_the_judgments_file_keep_both_records(tmp_path: Path) -> None:
    # Two runs read the file, each judges its own question, both save: the file
    # is merged under a lock, not the last writer's.
    path = tmp_path / "judgments.json"
    first, second = JudgmentFile(path), JudgmentFile(path)
    Judging(counting_judge([]), committed=first, record=True).judge_all(ITEMS[:1])
    Judging(counting_judge([]), committed=second, record=True).judge_all(ITEMS[1:2])
    first.save()
    second.save()
    saved = JudgmentFile(path)
    assert len(saved) == 2
    assert saved.entries == {**first.entries, **second.entries}
    assert (first.added, second.added) == (1, 1)


def test_a_judgment_both_writers_recorded_is_counted_once(tmp_path: Path) -> None:
    # Each save counts what it adds to the file on disk, so the "recorded N new
    # judgment(s)" lines of two runs at once add up to the file's new entries.
    path = tmp_path / "judgments.json"
    first, second = JudgmentFile(path), JudgmentFile(path)
    Judging(counting_judge([]), committed=first, record=True).judge_all(ITEMS[:2])
    Judging(counting_judge([]), committed=second, record=True).judge_all(ITEMS[1:2])
    first.save()
    second.save()
    assert len(JudgmentFile(path)) == 2
    assert (first.added, second.added) == (2, 0)


def test_callable_judges_are_checked() -> None:
    bad = CallableJudge(lambda q, c: "one string", name="bad", version="1")  # type: ignore[arg-type,return-value]
    with pytest.raises(JudgeError, match="bad@1 returned str"):
        Judging(bad).judge_all(ITEMS[:1])
    worse = CallableJudge(lambda q, c: [1], name="worse", version="1")  # type: ignore[list-item]
    with pytest.raises(JudgeError, match="int among its sentences"):
        Judging(worse).judge_all(ITEMS[:1])
    with pytest.raises(JudgeError, match="register_judge"):
        get_judge(lambda q, c: [])
    with pytest.raises(JudgeError, match="version"):
        CallableJudge(lambda q, c: [], name="x", version="")


def test_a_python_judge_function_without_version_is_judged_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = types.ModuleType("user_judge")
    monkeypatch.setitem(sys.modules, "user_judge", module)
    cache = AnswerCache(tmp_path / "cache")

    def judged(word: str) -> list[Any]:
        def judge(question: str, context: str) -> list[str]:  # edited: ``word``
            return [s for s in context.split(". ") if word in s.lower()]

        module.judge = judge  # type: ignore[attr-defined]
        found = Judging(get_judge("python:user_judge:judge"), cache=cache)
        return [j.spans if j else None for j in found.judge_all(ITEMS[:1])]

    backups = judged("backups")
    assert judged("coffee") != backups  # the edit shows on a warm cache
    assert get_judge("python:user_judge:judge").identity == "user_judge.judge"
    assert not list((tmp_path / "cache").rglob("*.ans"))
    module.judge.version = "2"  # type: ignore[attr-defined]
    versioned = get_judge("python:user_judge:judge")
    assert versioned.identity == "user_judge.judge@2"
    Judging(versioned, cache=cache).judge_all(ITEMS[:1])
    assert list((tmp_path / "cache").rglob("*.ans"))


def test_a_python_judge_function_without_version_uses_no_committed_judgment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A committed entry is keyed by the judge's identity, which for a function
    # without a version is its name alone: an entry recorded by an earlier body
    # would be reused (and kept by --chunkeval-update) after the body changed.
    module = types.ModuleType("user_judge")
    monkeypatch.setitem(sys.modules, "user_judge", module)
    path = tmp_path / "judgments.json"

    def judged(word: str, *, record: bool) -> tuple[Judging, list[Any]]:
        def judge(question: str, context: str) -> list[str]:  # edited: ``word``
            return [s for s in context.split(". ") if word in s.lower()]

        module.judge = judge  # type: ignore[attr-defined]
        committed = JudgmentFile(path)
        found = Judging(
            get_judge("python:user_judge:judge"), committed=committed, record=record
        )
        spans = [j.spans if j else None for j in found.judge_all(ITEMS[:1])]
        if record:
            committed.save()
        return found, spans

    _, backups = judged("backups", record=True)
    recorded = JudgmentFile(path).entries
    # an entry of the same identity from an earlier body, as a file committed
    # before this rule holds
    old = JudgmentFile(path)
    key = Judging(get_judge("python:user_judge:judge")).key(*ITEMS[0])
    assert backups[0] is not None
    old.record(key, ITEMS[0][0], ITEMS[0][1], Judgment(backups[0]))
    old.save()
    judging, coffee = judged("coffee", record=False)
    assert coffee != backups  # the edited body's answer, not the committed one
    assert judging.stats.committed == 0
    assert judging.stats.judged == 1
    assert "judged every time: a judge without a version" in judging.stats.summary()
    assert recorded == {}  # --chunkeval-update records nothing for it


def test_registered_and_llm_specs() -> None:
    judge = register_judge("keyword-test", lambda q, c: [], version="3")
    assert get_judge("keyword-test") is judge
    assert judge.identity == "keyword-test@3"
    llm = get_judge("llm:gpt-4o-mini")
    assert isinstance(llm, LLMJudge)
    assert llm.identity == "llm:gpt-4o-mini"
    with pytest.raises(ValueError, match="llm:MODEL"):
        get_judge("llm:")


# -------------------------------------------------------- against a server


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        yield srv


def question_of(request: Any) -> str:
    user = request["messages"][-1]["content"]
    return user.split("Question: ", 1)[1].split("\n", 1)[0]


def test_llm_judge_answers_of_every_kind(server: OpenAIServer, tmp_path: Path) -> None:
    answers = {
        "q1?": json.dumps({"sentences": ["Backups run nightly at 02:00 UTC."]}),
        "q2?": "Insufficient Information",
        "q3?": json.dumps(
            {"sentences": ["They are kept for 30 days.", "Backups are encrypted."]}
        ),
        "q4?": "I think the backups run at night.",  # malformed
        "q5?": ScriptedResponse(500, {"error": {"message": "boom"}}),
    }
    server.chat_handler = lambda request: answers[question_of(request)]
    judge = LLMJudge("gpt-4o-mini", max_retries=0)
    cache = AnswerCache(tmp_path / "cache")
    judging = Judging(judge, cache=cache, concurrency=2)
    items = [(q, CONTEXT) for q in answers]
    plan = judging.plan(items)
    assert plan is not None
    assert plan.requests == 5
    assert plan.usd is not None
    got = judging.judge_all(items)
    assert got[0] is not None
    assert [CONTEXT[a:b] for a, b in got[0].spans] == [
        "Backups run nightly at 02:00 UTC."
    ]
    assert got[1] == Judgment((), 0)
    assert got[1].insufficient
    assert got[2] is not None
    assert got[2].dropped == 1
    assert len(got[2].spans) == 1
    assert got[3] is None
    assert got[4] is None
    stats = judging.stats
    assert stats.rejected == {MALFORMED: 1, API_ERROR: 1}
    assert stats.dropped_sentences == 1
    assert stats.insufficient == 1
    assert "2 unusable answers" in stats.summary()
    # a re-run asks only the two that failed
    server.clear_requests()
    Judging(judge, cache=cache).judge_all(items)
    assert sorted(question_of(r.json) for r in server.requests_to("chat")) == [
        "q4?",
        "q5?",
    ]
    # the key is in no file written
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace")


def test_llm_judge_retries_429_and_500(server: OpenAIServer, tmp_path: Path) -> None:
    server.enqueue_error("chat", 429, headers={"retry-after-ms": "10"})
    server.enqueue_error("chat", 500)
    server.chat_handler = lambda request: '{"sentences": ["Nobody cleans it."]}'
    judging = Judging(LLMJudge("test-model", max_retries=3), concurrency=1)
    got = judging.judge_all([("q?", CONTEXT)])
    assert got[0] is not None
    assert CONTEXT[slice(*got[0].spans[0])] == "Nobody cleans it."
    assert len(server.requests_to("chat")) == 3


def test_an_interrupted_judging_run_resumes(
    server: OpenAIServer, tmp_path: Path
) -> None:
    # Ctrl-C arrives while the third context is being judged.
    server.chat_handler = lambda request: '{"sentences": []}'
    judge = LLMJudge("test-model", max_retries=0)
    original = judge.compute
    count = {"n": 0}

    def interrupting(question: str, context: str) -> Any:
        count["n"] += 1
        if count["n"] == 3:
            raise KeyboardInterrupt
        return original(question, context)

    judge.compute = interrupting  # type: ignore[method-assign]
    cache = AnswerCache(tmp_path / "cache")
    items = [(f"q{i}?", CONTEXT) for i in range(5)]
    with pytest.raises(KeyboardInterrupt):
        Judging(judge, cache=cache, concurrency=1).judge_all(items)
    # what was answered is kept: the two before Ctrl-C, and the one in flight
    kept = cache.info()["judge"]["entries"]
    assert kept in (2, 3)
    server.clear_requests()
    resumed = Judging(LLMJudge("test-model", max_retries=0), cache=cache)
    assert all(j is not None for j in resumed.judge_all(items))
    assert resumed.stats.cached == kept
    assert len(server.requests_to("chat")) == 5 - kept


def test_a_wrong_key_stops_judging(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    with pytest.raises(LLMError, match="401"):
        Judging(LLMJudge("test-model", max_retries=0)).judge_all([("q?", CONTEXT)])
