"""The plugin's baseline projects for pytester runs (docs/baselines.md): the tiny
project of ``support.plugin_project`` with a ``paragraphs`` chunker (one chunk per
paragraph; with ``$CHUNKEVAL_TEST_KEEP`` set to document names, the others keep
their heading alone: a drop on demand), ``k`` 50, characters, a 1-point recall
tolerance; and a project whose baseline a first run recorded (``repo``)."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from support.plugin_project import CONFTEST, INI, run, write_project

KEEP = "CHUNKEVAL_TEST_KEEP"

BASELINE_INI = (
    INI.replace("chunkeval_chunkers = recursive:30:0 recursive:60:0\n", "")
    + "chunkeval_k = 50\nchunkeval_unit = char\nchunkeval_tolerance = recall:-1pp\n"
)

BASELINE_CONFTEST = (
    CONFTEST
    + """

import os

from pytest_chunkeval.chunkers import as_chunker


def _paragraphs(text):
    paragraphs = [p for p in text.split("\\n\\n") if p.strip()]
    keep = os.environ.get("CHUNKEVAL_TEST_KEEP")
    if keep and paragraphs[0].strip() not in [f"# {k}" for k in keep.split(",")]:
        return paragraphs[:1]
    return paragraphs


def pytest_chunkeval_register_chunkers(registry):
    registry.register(
        "paragraphs", lambda rest: as_chunker(_paragraphs, "paragraphs"), "paragraphs"
    )
"""
)

TEST_RAG = """
def test_rag(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))
"""

BASELINE = Path("__chunkeval__", "test_rag", "test_rag.json")


def baseline_file(test: str) -> str:
    """The baseline file name of a test id (a hash is added when sanitized)."""
    from pytest_chunkeval.gate.files.paths import sanitize_name

    return f"{sanitize_name(test)}.json"


# Worded so that the hashing embedder ranks the right paragraph first.
QUESTIONS = {
    "q-bark": "Which animals bark at the mailman every morning?",
    "q-parrot": "Which parrots can live for eighty years in captivity?",
    "q-mars": "Which small moons does Mars have?",
    "q-tides": "Whose gravity causes the tides of the oceans?",
    "q-margin": "What was the operating margin in 2023?",
    "q-audit": "Which auditor found no material weakness?",
}

TEST_RAG_BY_SPEC = """
import os

def test_rag(chunkeval):
    spec = os.environ.get("SPEC", "paragraphs")
    chunkeval.check_baseline(chunkeval.evaluate(spec))
"""


def reword_questions(root: Path) -> None:
    """The project's questions worded as QUESTIONS says."""
    queries = root / "queries.jsonl"
    header, *records = [json.loads(line) for line in queries.read_text().splitlines()]
    for record in records:
        record["question"] = QUESTIONS[record["id"]]
    queries.write_text("".join(json.dumps(r) + "\n" for r in [header, *records]))


@pytest.fixture
def repo(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose baseline a first run recorded (every question at recall
    100, which the assertions below rely on)."""
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.delenv(KEEP, raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.delenv("SPEC", raising=False)
    ini = BASELINE_INI.replace("chunkeval_k = 50", "chunkeval_k = 1")
    write_project(pytester.path, ini, conftest=BASELINE_CONFTEST)
    reword_questions(pytester.path)
    pytester.makepyfile(test_rag=TEST_RAG_BY_SPEC)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    data = json.loads((pytester.path / BASELINE).read_text())
    assert data["metrics"]["recall"]["mean"] == 1.0
    assert sorted(data["documents"]) == ["finance.md", "pets.md", "space.md"]
    return pytester.path


VERDICT_TESTS = """
def test_steady(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("recursive:60:0"))

def test_rag(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))

def test_new(chunkeval):
    chunkeval.evaluate("recursive:30:0")
"""


def write_query_format(root: Path, fmt: str) -> dict[str, str]:
    """The project's query set in ``fmt``; its query ids by question."""
    records = [
        json.loads(line)
        for line in (root / "queries.jsonl").read_text().splitlines()[1:]
    ]
    if fmt == "jsonl":
        return {r["question"]: r["id"] for r in records}
    (root / "queries.jsonl").unlink()
    name = f"queries.{fmt}"
    if fmt == "json":
        doc = {"chunkeval_queries": 1, "queries": records}
        (root / name).write_text(json.dumps(doc, indent=1))
        ids = {r["question"]: r["id"] for r in records}
    else:  # the reference implementation's questions_df.csv
        from pytest_chunkeval.data.query_types import stable_query_id

        with (root / name).open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["question", "references", "corpus_id"])
            for r in records:
                text = (root / "docs" / r["doc_id"]).read_text()
                words = r["excerpts"][0]["text"].split()
                found = re.search(r"\s+".join(map(re.escape, words)), text)
                assert found is not None
                ref = {
                    "content": found.group(),
                    "start_index": found.start(),
                    "end_index": found.end(),
                }
                stem = Path(r["doc_id"]).stem
                writer.writerow([r["question"], json.dumps([ref]), stem])
        ids = {
            r["question"]: stable_query_id(Path(r["doc_id"]).stem, r["question"])
            for r in records
        }
    ini = (root / "pytest.ini").read_text().replace("queries.jsonl", name)
    (root / "pytest.ini").write_text(ini)
    return ids
