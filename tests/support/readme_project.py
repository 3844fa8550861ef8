"""The README's first test ("## A first test") as a project on disk: its query file,
its ``pyproject.toml`` and its test file, copied from the README's code blocks, and a
``docs/`` folder holding the passages the questions quote."""

from __future__ import annotations

import json
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"

FILLER = (
    "Our support team answers questions about this by email.",
    "The same rules apply to orders placed in our shops.",
)
"""A sentence after each passage of a document (its paragraphs are not bare
answers)."""

_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def first_test_blocks(text: str) -> dict[str, str]:
    """Language -> code of the fenced blocks under ``## A first test``."""
    start = text.index("## A first test")
    end = text.index("\n## ", start + 1)
    return {m.group(1): m.group(2) for m in _BLOCK.finditer(text[start:end])}


def _path_comment(code: str) -> str:
    """``# tests/test_retrieval.py`` on a block's first line: the file it is."""
    first = code.splitlines()[0]
    match = re.fullmatch(r"#\s*(\S+)", first.strip())
    if match is None:
        raise ValueError(f"the block does not open with its path: {first!r}")
    return match.group(1)


def write_first_test(root: Path, readme: Path = README) -> Path:
    """The README's first test under ``root``; returns the test file."""
    blocks = first_test_blocks(readme.read_text(encoding="utf-8"))
    toml, python, queries = blocks["toml"], blocks["python"], blocks["json"]
    (root / _path_comment(toml)).write_text(toml, encoding="utf-8")
    test_file = root / _path_comment(python)
    test_file.parent.mkdir(parents=True, exist_ok=True)
    test_file.write_text(python, encoding="utf-8")
    found = re.search(r'^chunkeval_queries\s*=\s*"([^"]+)"', toml, re.M)
    assert found is not None, "the README's pyproject.toml names no query file"
    (root / found.group(1)).write_text(queries, encoding="utf-8")
    # The documents: each question's passages, a paragraph each with a sentence
    # of its own, under a title; and a document on another subject, so that
    # retrieval has something to choose from.
    paragraphs: dict[str, list[str]] = {}
    for line in queries.splitlines()[1:]:
        record = json.loads(line)
        text = " ".join(e["text"] for e in record["excerpts"])
        own = paragraphs.setdefault(record["doc_id"], [])
        own.append(f"{text} {FILLER[len(own) % len(FILLER)]}")
    docs = root / "docs"
    docs.mkdir()
    for doc_id, texts in paragraphs.items():
        title = doc_id.removesuffix(".md").capitalize()
        body = "\n\n".join(texts)
        (docs / doc_id).write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    (docs / "gift-cards.md").write_text(
        "# Gift cards\n\nGift cards never expire and can be used for any item, "
        "online or in our shops.\n",
        encoding="utf-8",
    )
    return test_file
