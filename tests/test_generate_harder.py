"""Harder generation (``--max-leakage``, ``--style-examples``, ``--multi-excerpt``)
and the answer cache, against the local OpenAI-compatible server with scripted
leaky and non-leaky answers."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from support.openai_server import OpenAIServer

from pytest_chunkeval.cli.main import main
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import read_queries
from pytest_chunkeval.generation import prompts
from pytest_chunkeval.generation.generate import generate_queries
from pytest_chunkeval.generation.harder import load_style_examples, style_digest
from pytest_chunkeval.llm.answers import AnswerCache
from pytest_chunkeval.quality.leakage import leakage

KEY = "sk-harder-test"
TOPICS = ["backups", "billing", "caching", "deployment", "encryption", "failover"]
TEXT = (
    "# Ops guide\n\n"
    + "\n".join(
        f"Rule {i} of the ops guide says that {TOPICS[i % 6]} must be checked every "
        f"{i + 2} days by the on-call engineer."
        for i in range(30)
    )
    + "\n"
)


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        yield srv


@pytest.fixture
def client(server: OpenAIServer) -> Iterator[Any]:
    with openai.OpenAI(api_key=KEY, base_url=server.base_url, max_retries=0) as c:
        yield c


def _lines(request: Any) -> list[str]:
    user = request["messages"][-1]["content"]
    passage = user.split("<passage>\n", 1)[1].rsplit("\n</passage>", 1)[0]
    return [ln for ln in passage.splitlines() if ln.startswith("Rule ")]


def _answer(question: str, *refs: str) -> str:
    return json.dumps(
        {"pledge": prompts.PLEDGE, "question": question, "references": list(refs)}
    )


class Alternating:
    """Leaky and non-leaky answers in turn, about the passage's first rule."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, request: Any) -> str:
        self.calls += 1
        line = _lines(request)[0]
        n, topic = line.split()[1], line.split()[8]
        if self.calls % 2:  # copies the rule's words
            return _answer(f"How often must {topic} be checked per rule {n}?", line)
        return _answer(f"What interval applies to item {n}?", line)


def test_leaky_questions_are_rejected_and_counted(
    server: OpenAIServer, client: Any, tmp_path: Path
) -> None:
    server.chat_handler = Alternating()
    corpus = Corpus.from_mapping({"ops.md": TEXT})
    out = tmp_path / "q.jsonl"
    stats = generate_queries(
        corpus,
        out,
        model="m",
        n=3,
        seed=1,
        client=client,
        window_chars=300,
        max_leakage=0.5,
    )
    assert stats.accepted == 3
    assert stats.rejected["leaky"] == 3
    assert stats.attempts == 6
    queries = read_queries(out)
    for q in queries:
        assert leakage(q.text, [e.text for e in q.excerpts]) <= 0.5
    assert all(q.text.startswith("What interval") for q in queries)
    assert queries.metadata["max_leakage"] == 0.5


def test_without_the_option_leaky_questions_are_kept(
    server: OpenAIServer, client: Any, tmp_path: Path
) -> None:
    server.chat_handler = Alternating()
    corpus = Corpus.from_mapping({"ops.md": TEXT})
    stats = generate_queries(
        corpus,
        tmp_path / "q.jsonl",
        model="m",
        n=4,
        seed=1,
        client=client,
        window_chars=300,
    )
    assert stats.accepted == 4
    assert not stats.rejected


def test_cli_counts_the_leaky_with_the_other_rejections(
    server: OpenAIServer, tmp_path: Path, capsys
) -> None:
    server.chat_handler = Alternating()
    (tmp_path / "ops.md").write_text(TEXT, encoding="utf-8")
    code = main(
        [
            "generate",
            "--corpus",
            str(tmp_path / "ops.md"),
            "--out",
            str(tmp_path / "q.jsonl"),
            "--n",
            "2",
            "--model",
            "m",
            "--seed",
            "3",
            "--window-chars",
            "300",
            "--max-leakage",
            "0.5",
            "--no-filter",
            "--cache-dir",
            str(tmp_path / "cache"),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "attempts: 4 (accepted 2, rejected 2: 2 leaky)" in text


def test_style_examples_and_multi_excerpt_reach_the_prompt(
    server: OpenAIServer, client: Any, tmp_path: Path
) -> None:
    examples = tmp_path / "real.txt"
    examples.write_text("# from the support inbox\nhow do i reset my pw\n\nbilling??\n")
    style = load_style_examples(examples)
    assert style == ("how do i reset my pw", "billing??")

    def handler(request: Any) -> str:
        lines = _lines(request)
        n = lines[0].split()[1]
        if len(handler.seen) % 2 == 0:  # one reference: not enough
            handler.seen.append(request)
            return _answer(f"What interval applies to item {n}?", lines[0])
        handler.seen.append(request)
        return _answer(f"Which items share a schedule with {n}?", lines[0], lines[1])

    handler.seen = []  # type: ignore[attr-defined]
    server.chat_handler = handler
    corpus = Corpus.from_mapping({"ops.md": TEXT})
    stats = generate_queries(
        corpus,
        tmp_path / "q.jsonl",
        model="m",
        n=2,
        seed=5,
        client=client,
        window_chars=400,
        multi_excerpt=True,
        style_examples=style,
    )
    assert stats.accepted == 2
    assert stats.rejected["too few references"] == 2
    first = handler.seen[0]["messages"]
    assert prompts.MULTI_EXCERPT_RULE.strip() in first[0]["content"]
    assert prompts.STYLE_INTRO in first[1]["content"]
    assert "- how do i reset my pw" in first[1]["content"]
    queries = read_queries(tmp_path / "q.jsonl")
    assert all(len(q.excerpts) == 2 for q in queries)
    assert queries.metadata["style_examples"] == style_digest(style)
    assert queries.metadata["multi_excerpt"] is True


def test_answers_come_from_the_cache_on_a_rerun(
    server: OpenAIServer, client: Any, tmp_path: Path
) -> None:
    server.chat_handler = Alternating()
    corpus = Corpus.from_mapping({"ops.md": TEXT})
    cache = AnswerCache(tmp_path / "cache")
    options: dict[str, Any] = {
        "model": "m",
        "n": 3,
        "seed": 4,
        "client": client,
        "window_chars": 300,
        "cache": cache,
    }
    first = generate_queries(corpus, tmp_path / "a.jsonl", **options)
    asked = len(server.requests_to("chat"))
    again = generate_queries(
        corpus, tmp_path / "a.jsonl", overwrite=True, max_leakage=0.5, **options
    )
    # the same seed asks the same first prompts: the cache answers those
    assert again.cached >= 1
    assert len(server.requests_to("chat")) - asked == again.requests
    assert first.cached == 0
    assert again.rejected["leaky"] >= 1


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--max-leakage", "1.5"], "expected a share in [0, 1]"),
        (["--max-leakage", "x"], "expected a share in [0, 1]"),
        (["--style-examples", "missing.txt"], "--style-examples missing.txt"),
        (["--style-examples", "empty.txt"], "no question in the file"),
    ],
)
def test_bad_values_are_one_line_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys, flags, message
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ops.md").write_text(TEXT, encoding="utf-8")
    (tmp_path / "empty.txt").write_text("# nothing\n\n")
    args = [
        "generate",
        "--corpus",
        "ops.md",
        "--out",
        "q.jsonl",
        "--n",
        "2",
        "--model",
        "m",
        "--dry-run",
        *flags,
    ]
    try:
        code = main(args)
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1]
    assert not re.search("Traceback", "\n".join(err))
