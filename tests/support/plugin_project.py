"""A tiny project for the plugin's pytester runs: three short documents, six
questions, a ``pytest.ini`` using the fast ``hashing`` embedder and the ``exact``
store, and a ``conftest.py`` registering the embedder when the package lacks it."""

from __future__ import annotations

import itertools
import json
import textwrap
from pathlib import Path

# pytester forgets the modules an in-process run imported, and numpy refuses to be
# imported twice in one process: loaded here, it outlives every inner run.
import numpy  # noqa: F401
import pytest

DOCS = {
    "pets.md": """\
        # Pets

        Dogs bark at the mailman every morning. They were domesticated from wolves
        thousands of years ago.

        Cats sleep most of the day. They hunt at dawn and dusk, and they purr when
        they are content.

        Parrots can imitate human speech. Some parrots live for eighty years in
        captivity.
        """,
    "space.md": """\
        # Space

        The Moon orbits the Earth every twenty-seven days. Its gravity causes the
        tides of the oceans.

        Mars has two small moons, Phobos and Deimos. Its red colour comes from iron
        oxide dust.

        Jupiter is the largest planet of the solar system. Its great red spot is a
        storm older than three centuries.
        """,
    "finance.md": """\
        # Annual report

        Operating margin was 21.4% in 2023. Revenue grew by nine percent, mostly in
        the services segment.

        The auditor is Example LLP. The audit found no material weakness in internal
        controls.

        The board proposes a dividend of two euros per share, payable in May.
        """,
}

QUERIES = [
    ("q-bark", "Who do dogs bark at?", "pets.md", "Dogs bark at the mailman"),
    ("q-parrot", "How long do parrots live?", "pets.md", "Some parrots live for"),
    ("q-mars", "What are the moons of Mars?", "space.md", "Mars has two small moons"),
    ("q-tides", "What causes the tides?", "space.md", "Its gravity causes the"),
    ("q-margin", "What was the operating margin?", "finance.md", "Operating margin"),
    ("q-audit", "Who audits the accounts?", "finance.md", "The auditor is Example"),
]

PER_QUESTION_RETRIEVER = """
import pytest


def everything(question):
    return ["Dogs bark at the mailman every morning.",
            "Mars has two small moons, Phobos and Deimos.",
            "The auditor is Example LLP."]


@pytest.mark.chunkeval(per_question=True, baseline=True)
def test_question(chunkeval):
    chunkeval.score(everything, label="rag")
"""
"""A per-question test module (``test_question``, one item per question) of a
retriever whose answers do not depend on the corpus's other sentences: an
unrelated sentence appended to a document changes no item's numbers."""

# Inner runs skip hypothesis' plugin: re-importing hypothesis in every in-process run
# costs seconds (pytester drops modules an inner run imported); and LangSmith's, which
# a subprocess run would import (0.8 s of CPU).
FAST = (
    "-p",
    "no:cacheprovider",
    "-p",
    "no:hypothesispytest",
    "-p",
    "no:langsmith_plugin",
)

INI = """\
[pytest]
filterwarnings = error
chunkeval_corpus = docs
chunkeval_queries = queries.jsonl
chunkeval_embedder = hashing
chunkeval_store = exact
chunkeval_chunkers = recursive:30:0 recursive:60:0
"""


# Registers the fast test embedder through the plugin's hook when the package does
# not provide ``hashing`` itself.
CONFTEST = """\
from pytest_chunkeval.embedders.hashing import hashing_from_spec


def pytest_chunkeval_register_embedders(registry):
    if "hashing" not in registry:
        registry.register("hashing", hashing_from_spec, "hashing[:DIM]")
"""


def _sentence(text: str, start: str) -> str:
    """The whole sentence of ``text`` that begins with ``start``."""
    flat = " ".join(text.split())
    begin = flat.index(start)
    return flat[begin : flat.index(".", begin) + 1]


def write_project(
    root: Path,
    ini: str = INI,
    queries: str = "queries.jsonl",
    conftest: str = CONFTEST,
) -> None:
    """A tiny corpus, its query set, a pytest.ini and a conftest.py under ``root``."""
    docs = root / "docs"
    docs.mkdir(exist_ok=True)
    for name, text in DOCS.items():
        (docs / name).write_text(textwrap.dedent(text))
    lines = [json.dumps({"chunkeval_queries": 1})]
    for qid, question, doc, start in QUERIES:
        excerpt = _sentence(textwrap.dedent(DOCS[doc]), start)
        record = {
            "id": qid,
            "question": question,
            "doc_id": doc,
            "excerpts": [{"text": excerpt}],  # located (whitespace-insensitively)
        }
        lines.append(json.dumps(record))
    (root / queries).write_text("\n".join(lines) + "\n")
    (root / "pytest.ini").write_text(ini)
    (root / "conftest.py").write_text(conftest)


def mentions(output: str) -> list[str]:
    """Lines naming chunkeval, except pytest's header listing the plugins."""
    return [
        line
        for line in output.splitlines()
        if "chunkeval" in line and not line.startswith("plugins:")
    ]


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest(*FAST, *args)


# The same inner run under pytest-xdist: two worker processes (a subprocess run).
DIST = (*FAST, "-p", "xdist.plugin", "-p", "pytest_chunkeval.plugin", "-n", "2")

MODES = pytest.mark.parametrize(
    "dist",
    [False, pytest.param(True, marks=pytest.mark.dist)],
    ids=["one process", "xdist"],
)
"""A plugin test run in one process, then again under xdist (``dist=True``, marked
``dist``: ``make compat`` leaves these out)."""


def summary_section(result: pytest.RunResult) -> str:
    """The chunkeval part of the terminal summary."""
    out = result.stdout.str()
    assert "- chunkeval -" in out, out
    return out.split("- chunkeval -", 1)[1]


_CACHES = itertools.count(1)


def run_uncached(pytester: pytest.Pytester, dist: bool, *args: str) -> pytest.RunResult:
    """An inner run (under xdist when ``dist``) with a cache directory of its own:
    a cached search would hide a change or the noise a test looks for."""
    cache = f"--chunkeval-cache-dir=cache{next(_CACHES)}"
    if dist:
        return pytester.runpytest_subprocess(*DIST, cache, *args)
    return run(pytester, cache, *args)
