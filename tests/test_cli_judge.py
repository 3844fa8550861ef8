"""``chunkeval judge`` against the local OpenAI-compatible server, then an LLM-free
``chunkeval eval`` of what it wrote."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from support.cli_judge_project import KEY, judge_args, project, server
from support.judges import judge_by_keyword
from support.openai_server import OpenAIServer

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet, read_queries

__all__ = ["project", "server"]  # fixtures


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
