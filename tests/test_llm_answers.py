"""The shared LLM answer cache and batch runner (pytest_chunkeval.llm)."""

from __future__ import annotations

import json
import multiprocessing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.openai_server import OpenAIServer, ScriptedResponse

from pytest_chunkeval.cli.main import main as cli_main
from pytest_chunkeval.llm.answers import (
    AnswerCache,
    AnswerCacheWarning,
    AnswerKey,
    hash_input,
)
from pytest_chunkeval.llm.batch import (
    BatchResult,
    BatchStats,
    outcome_of,
    plan_batch,
    run_batch,
)
from pytest_chunkeval.llm.chat import (
    API_ERROR,
    MALFORMED,
    CallableModel,
    ChatModel,
    LLMError,
    Messages,
)
from pytest_chunkeval.util.verified import HEADER_SIZE, seal

KEY = "sk-test-answers-0123456789"


def key(text: str, role: str = "judge", identity: str = "fn@1") -> AnswerKey:
    return AnswerKey(role, identity, "1", hash_input(text))


def test_roundtrip_and_key_parts(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path / "cache")
    assert cache.get(key("a")) is None
    cache.put(key("a"), {"spans": [[0, 3]]})
    entry = cache.get(key("a"))
    assert entry is not None
    assert entry.value == {"spans": [[0, 3]]}
    # every part of the key matters
    assert cache.get(key("b")) is None
    assert cache.get(key("a", role="generate")) is None
    assert cache.get(key("a", identity="fn@2")) is None
    assert cache.get(AnswerKey("judge", "fn@1", "2", hash_input("a"))) is None
    assert (cache.stats.hits, cache.stats.misses, cache.stats.writes) == (1, 5, 1)
    # the cache root is marked like .pytest_cache
    assert (tmp_path / "cache" / ".gitignore").read_text().endswith("*\n")
    assert (tmp_path / "cache" / "CACHEDIR.TAG").exists()


def test_bad_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="role"):
        AnswerKey("Judge!", "fn@1", "1", hash_input("a"))
    with pytest.raises(ValueError, match="hash_input"):
        AnswerKey("judge", "fn@1", "1", "not a digest")
    with pytest.raises(ValueError, match="identity"):
        AnswerKey("judge", " ", "1", hash_input("a"))


def tamper(path: Path, change: Any, *, reseal: bool) -> None:
    """Edit the record of an entry, its header kept (its checksum then fails)
    or ``reseal``-ed (a whole entry of another content under this name)."""
    data = path.read_bytes()
    record = json.loads(data[HEADER_SIZE:])
    change(record)
    payload = json.dumps(record).encode()
    digest = path.name.removesuffix(".ans")
    head = seal(data[:8], digest, [payload]) if reseal else data[:HEADER_SIZE]
    path.write_bytes(head + payload)


@pytest.mark.parametrize(
    ("change", "reseal"),
    [
        (lambda r: r.update(value={"spans": [[0, 99]]}), False),  # edited by hand
        (lambda r: r.update(identity="fn@2"), True),  # entry of another key
        (lambda r: r.update(format="chunkeval-answer/1"), True),
        (lambda r: r.pop("value"), True),
    ],
)
def test_an_entry_that_fails_its_check_is_never_trusted(
    tmp_path: Path, change: Any, reseal: bool
) -> None:
    cache = AnswerCache(tmp_path)
    path = cache.put(key("a"), {"spans": [[0, 3]]})
    tamper(path, change, reseal=reseal)
    with pytest.warns(AnswerCacheWarning, match=str(path.name)):
        assert cache.get(key("a")) is None
    assert not path.exists()
    assert path.with_name(path.name + ".corrupt").exists()
    assert cache.stats.corrupt == 1
    # recomputed and stored again: trusted again
    cache.put(key("a"), {"spans": [[0, 3]]})
    assert cache.get(key("a")) is not None


def test_a_copied_entry_under_another_key_is_refused(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    source = cache.put(key("a"), "answer of a")
    target = cache.path(key("b"))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())
    with pytest.warns(AnswerCacheWarning, match="checksum mismatch"):
        assert cache.get(key("b")) is None


@pytest.mark.parametrize("garbage", [b"", b"{not json", b"\xff\xfe", b"[1, 2]"])
def test_garbage_is_a_miss_with_a_warning(tmp_path: Path, garbage: bytes) -> None:
    cache = AnswerCache(tmp_path)
    path = cache.path(key("a"))
    path.parent.mkdir(parents=True)
    path.write_bytes(garbage)
    with pytest.warns(AnswerCacheWarning):
        assert cache.get(key("a")) is None


def test_values_must_be_json(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="JSON"):
        AnswerCache(tmp_path).put(key("a"), {1, 2})
    assert not list(tmp_path.rglob("*.json"))


def _writer(directory: str, worker: int, n: int) -> None:
    cache = AnswerCache(directory)
    for i in range(n):
        # every worker writes every key: the same answer, racing renames
        cache.put(key(f"q{i}"), {"answer": i})
        entry = cache.get(key(f"q{(i * 7 + worker) % n}"))
        assert entry is None or entry.value == {"answer": (i * 7 + worker) % n}


def test_concurrent_processes_never_see_a_partial_entry(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 40)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    cache = AnswerCache(tmp_path)
    assert [cache.get(key(f"q{i}")).value for i in range(40)] == [  # type: ignore[union-attr]
        {"answer": i} for i in range(40)
    ]
    assert not list(tmp_path.rglob("*.tmp"))
    assert not list(tmp_path.rglob("*.corrupt"))


def test_info_and_clear_per_role(tmp_path: Path) -> None:
    cache = AnswerCache(tmp_path)
    for i in range(3):
        cache.put(key(f"j{i}", identity="llm:gpt-4o-mini"), [i])
    cache.put(key("j", identity="fn@1"), [])
    cache.put(key("g", role="generate", identity="llm:gpt-4o"), "x")
    info = cache.info()
    assert info["judge"]["entries"] == 4
    assert info["judge"]["identities"] == {"llm:gpt-4o-mini": 3, "fn@1": 1}
    assert info["generate"]["identities"] == {"llm:gpt-4o": 1}
    assert cache.clear("judge", "fn@1") == 1
    assert cache.info()["judge"]["identities"] == {"llm:gpt-4o-mini": 3}
    assert cache.clear() == 4
    assert cache.info() == {}


def test_cli_cache_info_lists_answers_per_role(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = AnswerCache(tmp_path)
    cache.put(key("j", identity="llm:gpt-4o-mini"), [1])
    assert cli_main(["cache", "info", "--cache-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "judge: 1 answers" in out
    assert "llm:gpt-4o-mini: 1" in out
    args = ["cache", "clear", "--cache-dir", str(tmp_path), "--role", "judge"]
    assert cli_main(args) == 0
    assert "removed 1 cached judge answers" in capsys.readouterr().out
    assert AnswerCache(tmp_path).info() == {}


def test_cli_cache_clear_refuses_an_unknown_role_and_an_unmatched_identity(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = AnswerCache(tmp_path)
    cache.put(key("j", identity="llm:gpt-4o-mini"), [1])
    cache.put(key("c", role="custom", identity="fn@1"), [1])
    base = ["cache", "clear", "--cache-dir", str(tmp_path)]
    assert cli_main([*base, "--role", "nosuch"]) == 2
    assert capsys.readouterr().err == (
        "chunkeval cache: error: unknown --role 'nosuch'; valid roles: chunker, "
        "custom, generate, judge, relations\n"
    )
    assert cli_main([*base, "--role", "judge", "--identity", "nosuch"]) == 2
    assert capsys.readouterr().err == (
        "chunkeval cache: error: --identity 'nosuch' matches no cached judge "
        f"answers in {cache.root}; `chunkeval cache info` lists: llm:gpt-4o-mini\n"
    )
    assert cli_main([*base, "--role", "generate", "--identity", "x"]) == 2
    assert "nothing of that kind is cached" in capsys.readouterr().err
    assert AnswerCache(tmp_path).info()["judge"]["entries"] == 1
    # a known role with nothing cached is not an error: it clears nothing
    assert cli_main([*base, "--role", "generate"]) == 0
    assert "removed 0 cached generate answers" in capsys.readouterr().out
    assert cli_main([*base, "--role", "custom", "--identity", "fn@1"]) == 0
    assert "removed 1 cached custom answers" in capsys.readouterr().out


def test_every_llm_role_is_one_cache_clear_takes() -> None:
    from pytest_chunkeval.generation import asking
    from pytest_chunkeval.judging import run
    from pytest_chunkeval.llm.answers import LLM_ROLES
    from pytest_chunkeval.relationships import extraction

    assert {asking.ROLE, run.ROLE, extraction.ROLE, "chunker"} == set(LLM_ROLES)


# ----------------------------------------------------------------------- batches


def prompts(n: int) -> list[Messages]:
    return [[{"role": "user", "content": f"say {i}"}] for i in range(n)]


def keys_for(ps: list[Messages], identity: str) -> list[AnswerKey]:
    return [AnswerKey("judge", identity, "1", hash_input(p)) for p in ps]


def run_prompts(
    ps: list[Messages],
    model: ChatModel | CallableModel,
    *,
    keys: list[AnswerKey],
    cache: AnswerCache | None = None,
    concurrency: int | None = None,
    stats: BatchStats | None = None,
) -> BatchResult:
    """A batch as a role runs it: each prompt asked of ``model`` (a request only
    for a chat model; a user's callable sends none, one thread), its answer
    parsed as a whole number."""
    sends = isinstance(model, ChatModel)
    return run_batch(
        range(len(ps)),
        key=keys.__getitem__,
        compute=lambda i: outcome_of(model(ps[i]), int, requests=int(sends)),
        cache=cache,
        concurrency=concurrency or (4 if sends else 1),
        stats=stats,
    )


def test_a_callable_batch_is_cached_and_resumed(tmp_path: Path) -> None:
    calls: list[str] = []

    def fn(messages: Messages) -> str:
        text = messages[-1]["content"]
        calls.append(text)
        if text == "say 3":
            return "nonsense"
        return text.split()[-1]

    model = CallableModel(fn, name="echo", version="1")
    ps = prompts(5)
    cache = AnswerCache(tmp_path)
    ks = keys_for(ps, model.identity)
    result = run_prompts(ps, model, keys=ks, cache=cache)
    assert result.values == [0, 1, 2, None, 4]
    assert result.rejections[3] is not None
    assert result.rejections[3].reason == MALFORMED
    assert (result.stats.answered, result.stats.cached, result.stats.requests) == (
        4,
        0,
        0,  # a callable sends no request
    )
    calls.clear()
    again = run_prompts(ps, model, keys=ks, cache=cache)
    assert again.values == result.values
    assert calls == ["say 3"]  # only the rejected one is asked again
    assert again.stats.cached == 4


def test_a_callable_returning_the_wrong_type_is_an_error() -> None:
    model = CallableModel(lambda m: 3, name="bad", version="1")  # type: ignore[arg-type,return-value]
    with pytest.raises(LLMError, match="bad@1 returned int"):
        run_prompts(prompts(1), model, keys=keys_for(prompts(1), model.identity))


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        yield srv


def test_chat_batch_retries_429_and_500_runs_concurrently_and_caches(
    server: OpenAIServer, tmp_path: Path
) -> None:
    server.enqueue_error("chat", 429, headers={"retry-after-ms": "10"})
    server.enqueue_error("chat", 500)
    server.chat_handler = lambda request: request["messages"][-1]["content"][4:]
    model = ChatModel("gpt-4o-mini", max_retries=3)
    ps = prompts(8)
    ks = keys_for(ps, model.identity)
    cache = AnswerCache(tmp_path)
    plan = plan_batch(ps, model, keys=ks, cache=cache, completion_tokens=10)
    assert plan.requests == 8
    assert plan.cached == 0
    assert plan.usd is not None
    assert "8 requests to 'gpt-4o-mini'" in str(plan)
    result = run_prompts(ps, model, keys=ks, cache=cache, concurrency=4)
    assert result.values == list(range(8))
    assert len(server.requests_to("chat")) == 10  # 8 + the two retried
    assert result.stats.requests == 8
    assert result.stats.prompt_tokens == 8
    # nothing left to pay for
    assert plan_batch(ps, model, keys=ks, cache=cache).requests == 0
    server.clear_requests()
    assert run_prompts(ps, model, keys=ks, cache=cache).values == list(range(8))
    assert server.requests_to("chat") == []
    # the key is in no file the cache wrote
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path


def test_a_server_that_keeps_failing_stops_and_the_rest_resumes(
    server: OpenAIServer, tmp_path: Path
) -> None:
    failing = {"on": True}

    def handler(request: Any) -> Any:
        text = request["messages"][-1]["content"]
        if failing["on"] and text != "say 0":
            return ScriptedResponse(503, {"error": {"message": "down"}})
        return text[4:]

    server.chat_handler = handler
    model = ChatModel("test-model", max_retries=0)
    ps = prompts(6)
    ks = keys_for(ps, model.identity)
    cache = AnswerCache(tmp_path)
    stats = BatchStats()
    with pytest.raises(LLMError, match="3 requests in a row failed"):
        run_prompts(ps, model, keys=ks, cache=cache, concurrency=1, stats=stats)
    assert stats.rejected[API_ERROR] == 3
    assert stats.stopped == "api errors"
    assert stats.answered == 1
    failing["on"] = False
    server.clear_requests()
    result = run_prompts(ps, model, keys=ks, cache=cache)
    assert result.values == list(range(6))
    assert result.stats.cached == 1
    assert len(server.requests_to("chat")) == 5


def test_a_wrong_key_stops_at_once(
    server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong")
    model = ChatModel("test-model", max_retries=0)
    with pytest.raises(LLMError, match="401"):
        run_prompts(prompts(2), model, keys=keys_for(prompts(2), model.identity))
