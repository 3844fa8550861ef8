"""A ``chunkeval judge`` project (docs/judged.md): the two tiny documents, three
questions without excerpts, the local OpenAI-compatible server as the model, and
the command's arguments."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.openai_server import OpenAIServer
from support.tiny_corpus import DOCS

KEY = "sk-test-cli-judge-0123456789"

QUESTIONS = [
    {"id": "parrots", "question": "How long do parrots live?"},
    {"id": "mars", "question": "Which moons does Mars have?"},
    {"id": "tax", "question": "What is the VAT rate in Norway?"},
]


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
