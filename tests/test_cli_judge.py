"""``chunkeval judge`` against the local OpenAI-compatible server, then an LLM-free
``chunkeval eval`` of what it wrote."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.openai_server import OpenAIServer

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet, read_queries

KEY = "sk-test-cli-judge-0123456789"

DOCS = {
    "animals.md": (
        "Cats sleep most of the day. They hunt at dawn and dusk.\n\n"
        "Dogs were domesticated from wolves. Dogs bark at strangers.\n\n"
        "Parrots can imitate human speech. Some parrots live eighty years."
    ),
    "space.md": (
        "The Moon orbits the Earth every 27 days.\n\n"
        "Mars has two small moons, Phobos and Deimos.\n\n"
        "Jupiter is the largest planet of the solar system."
    ),
}
QUESTIONS = [
    {"id": "parrots", "question": "How long do parrots live?"},
    {"id": "mars", "question": "Which moons does Mars have?"},
    {"id": "tax", "question": "What is the VAT rate in Norway?"},
]


def judge_by_keyword(request: Any) -> str:
    """A model that copies the context's sentences sharing a long word with the
    question (and says Insufficient Information when there are none)."""
    user = request["messages"][-1]["content"]
    question = user.split("Question: ", 1)[1].split("\n", 1)[0]
    context = user.split("<context>\n", 1)[1].rsplit("\n</context>", 1)[0]
    words = {w.strip("?").lower() for w in question.split() if len(w) >= 4}
    sentences = re.findall(r"[^.\n]+\.", context)
    found = [
        s.strip()
        for s in sentences
        if words & {w.strip(",.").lower() for w in s.split()}
    ]
    if not found:
        return "Insufficient Information"
    return json.dumps({"sentences": found})


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        yield srv


@pytest.fixture
def project(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, encoding="utf-8")
    lines = [json.dumps({"chunkeval_queries": 1, "metadata": {}})]
    lines += [json.dumps(q) for q in QUESTIONS]
    (tmp_path / "questions.jsonl").write_text("\n".join(lines) + "\n")
    return tmp_path


def judge_args(project: Path) -> list[str]:
    return [
        "judge",
        "--corpus",
        str(project / "docs"),
        "--queries",
        str(project / "questions.jsonl"),
        "--chunker",
        "recursive:20:0",
        "--chunker",
        "fixed:12:0",
        "--embedder",
        "hashing",
        "--store",
        "exact",
        "--k",
        "2",
        "--judge",
        "llm:gpt-4o-mini",
        "--cache-dir",
        str(project / "cache"),
        "--out",
        str(project / "judged.jsonl"),
    ]


def test_judge_writes_a_query_set_that_eval_scores_without_any_llm(
    server: OpenAIServer,
    project: Path,
    chunkeval_cli: Callable[[list[str]], int],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    server.chat_handler = judge_by_keyword
    assert chunkeval_cli([*judge_args(project), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "dry run:" in out
    assert "to 'gpt-4o-mini'" in out
    assert "estimated cost ~$" in out
    assert server.requests_to("chat") == []

    assert chunkeval_cli(judge_args(project)) == 0
    out = capsys.readouterr().out
    sent = len(server.requests_to("chat"))
    assert 0 < sent <= 6  # 3 questions x 2 chunkers, repeats judged once
    assert "2 questions with judged excerpts" in out
    assert "tax: What is the VAT rate in Norway?" in out  # nothing relevant: flagged

    corpus = Corpus.from_paths([str(project / "docs")])
    judged = QuerySet.load(project / "judged.jsonl", corpus)
    assert [q.id for q in judged] == ["parrots", "mars"]
    by_id = {q.id: [e.text for e in q.excerpts] for q in judged}
    assert "Some parrots live eighty years." in by_id["parrots"]
    assert any("Phobos and Deimos" in t for t in by_id["mars"])
    meta = read_queries(project / "judged.jsonl").metadata
    assert meta["judge"] == f"llm:gpt-4o-mini+server={server.base_url.rstrip('/')}"
    assert meta["nothing_relevant"] == ["tax"]
    assert len(meta["configurations"]) == 2

    # resumable: running again sends nothing (every judgment is cached)
    written = (project / "judged.jsonl").read_text()
    server.clear_requests()
    assert chunkeval_cli([*judge_args(project), "--overwrite"]) == 0
    assert server.requests_to("chat") == []
    assert (project / "judged.jsonl").read_text() == written

    # LLM-free: no key, no server, span metrics from the judged excerpts
    monkeypatch.delenv("OPENAI_API_KEY")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    server.clear_requests()
    args = [
        "eval",
        "--corpus",
        str(project / "docs"),
        "--queries",
        str(project / "judged.jsonl"),
        "--chunker",
        "recursive:20:0",
        "--embedder",
        "hashing",
        "--store",
        "exact",
        "--cache-dir",
        str(project / "cache"),
        "--json",
        str(project / "result.json"),
    ]
    assert chunkeval_cli(args) == 0
    assert server.requests == []
    result = json.loads((project / "result.json").read_text())[0]
    assert result["metrics"]["recall"]["n"] == 2
    assert result["metrics"]["recall"]["mean"] > 0.5
    # the key is in no file written
    for path in project.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path


def test_judge_refuses_to_overwrite(
    project: Path,
    chunkeval_cli: Callable[[list[str]], int],
    capsys: pytest.CaptureFixture[str],
) -> None:
    (project / "judged.jsonl").write_text("keep me")
    assert chunkeval_cli(judge_args(project)) == 2
    assert "--overwrite" in capsys.readouterr().err
    assert (project / "judged.jsonl").read_text() == "keep me"
