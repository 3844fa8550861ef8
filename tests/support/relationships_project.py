"""A one-document corpus of six facts for the relationship tests, and the files a
``chunkeval relationships`` run reads: the document and a query set with one
question per fact, whose excerpt is the fact's sentence."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pytest_chunkeval.data.query_types import Excerpt

FACTS = [
    ("Alice", "founded", "Acme"),
    ("Bob", "acquired", "Zeta"),
    ("Carol", "joined", "Acme"),
    ("Dave", "founded", "Orbit"),
    ("Erin", "acquired", "Orbit"),
    ("Frank", "joined", "Zeta"),
]
SENTENCES = [f"{s} {p} {o}." for s, p, o in FACTS]
TEXT = " ".join(SENTENCES)
DOC = "people.md"


def write_cli_project(folder: Path) -> None:
    """``people.md`` and ``q.jsonl`` (a question per fact) in ``folder``."""
    (folder / DOC).write_text(TEXT, encoding="utf-8")
    lines = [{"chunkeval_queries": 1, "metadata": {}}] + [
        {
            "id": f"q{i}",
            "question": f"Who {p} {o}?",
            "doc_id": DOC,
            "excerpts": [{"text": sentence}],
        }
        for i, ((_, p, o), sentence) in enumerate(zip(FACTS, SENTENCES, strict=True))
    ]
    (folder / "q.jsonl").write_text(
        "".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8"
    )


def excerpt(sentence: str) -> Excerpt:
    start = TEXT.index(sentence)
    return Excerpt(sentence, DOC, start, start + len(sentence))


def by_sentence(text: str) -> list[str]:
    return re.findall(r"[A-Z][^.]*\.", text)
