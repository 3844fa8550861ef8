"""Every Python block of the docs (``docs/*.md``, ``docs/reference/*.md``) and the
README runs here, so an example that no longer works as written fails a test.

Heavy components are substituted while a block runs: the ``sentence-transformers``
embedder is the ``hashing`` one and the ``chroma`` store is ``exact`` (the same code
paths, no model, no database). A block is either a snippet (executed with the
stand-ins below for the names the page assumes: ``corpus``, ``queries``, ``text``,
``my_chunker``...) or, when it defines tests, a test file run by pytest in a small
project configured with the same ``hashing`` embedder and ``exact`` store.

A comment right above a block says how it runs, when the default does not fit::

    <!-- docs-test: skip: REASON -->   never run, for the reason given
    <!-- docs-test: slow -->           run under the ``slow`` marker (real components)
    <!-- docs-test: pytest -->         a test file, whatever it holds
    <!-- docs-test: snippet -->        a snippet, whatever it holds

A block generated from a file (``<!-- include: FILE -->``) is that file, which runs
(or is imported) where it lives.
"""

from __future__ import annotations

import inspect
import json
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.plugin_project import DOCS, FAST, write_project

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [*ROOT.glob("docs/*.md"), *ROOT.glob("docs/reference/*.md"), ROOT / "README.md"]
)
_BLOCK = re.compile(
    r"(?:<!--\s*(?:docs-test:\s*(?P<mark>[^\n]*?)|include:\s*(?P<include>\S+)[^\n]*?)"
    r"\s*-->\s*\n\s*\n?)?"
    r"^```(?:python|py)\n(?P<code>.*?)^```",
    re.S | re.M,
)


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    code: str
    mark: str

    @property
    def kind(self) -> str:
        if self.mark.startswith("skip"):
            return "skip"
        if self.mark in ("pytest", "snippet"):
            return self.mark
        if re.search(r"^\s*(@pytest\.mark|def test_)", self.code, re.M):
            return "pytest"
        return "snippet"

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def blocks() -> list[Block]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in _BLOCK.finditer(text):
            line = text[: match.start("code")].count("\n")
            mark = (match.group("mark") or "").strip()
            if match.group("include"):  # a copy of a file that runs where it is
                mark = f"skip: a copy of {match.group('include')}, run in its project"
            found.append(
                Block(str(page.relative_to(ROOT)), line, match.group("code"), mark)
            )
    return found


BLOCKS = blocks()


def _param(block: Block) -> Any:
    marks = []
    if block.kind == "skip":
        reason = block.mark.partition(":")[2].strip()
        marks.append(pytest.mark.skip(reason=reason or "NO REASON GIVEN"))
    if block.mark == "slow":
        marks.append(pytest.mark.slow)
    return pytest.param(block, id=block.id, marks=marks)


def test_the_blocks_are_found() -> None:
    pages = {b.page for b in BLOCKS}
    assert "README.md" in pages
    assert "docs/reference/configuration.md" in pages
    assert len(BLOCKS) >= 30


def test_every_skipped_block_says_why() -> None:
    unexplained = [
        b.id
        for b in BLOCKS
        if b.kind == "skip" and not b.mark.partition(":")[2].strip()
    ]
    assert unexplained == []


# -- the substitutions and stand-ins --------------------------------------------


@pytest.fixture
def light_components(request: pytest.FixtureRequest) -> Iterator[None]:
    """``sentence-transformers`` embeds with ``hashing``, ``chroma`` is ``exact``
    (a ``slow`` block keeps the real Chroma), and a ``keywords`` judge is
    registered, while a block runs."""
    from pytest_chunkeval.embedders.hashing import HashingEmbedder
    from pytest_chunkeval.embedders.registry import EMBEDDERS
    from pytest_chunkeval.judging.judge import CallableJudge
    from pytest_chunkeval.judging.specs import JUDGES
    from pytest_chunkeval.stores import STORES

    restore = [r.snapshot() for r in (EMBEDDERS, STORES, JUDGES)]
    EMBEDDERS.register("sentence-transformers", lambda rest: HashingEmbedder())
    if request.node.get_closest_marker("slow") is None:
        STORES.register("chroma", lambda rest: STORES.create("exact"))
    judge = CallableJudge(keyword_judge, name="keywords", version="1")
    JUDGES.register("keywords", lambda rest: judge, "keywords")
    try:
        yield
    finally:
        for undo in restore:
            undo()


def keyword_judge(question: str, context: str) -> list[str]:
    """The sentences of ``context`` that share a long word with ``question``."""
    words = {w.strip("?,.").lower() for w in question.split() if len(w) > 3}
    return [
        s.strip()
        for s in re.findall(r"[^.\n]+\.", context)
        if words & {w.strip(",.").lower() for w in s.split()}
    ]


PARAGRAPHS = [
    " ".join(p.split())
    for doc in DOCS.values()
    for p in textwrap.dedent(doc).split("\n\n")
    if p.strip() and not p.strip().startswith("#")
]


def retrieve(question: str) -> list[str]:
    """A whole retriever: the paragraphs sharing most words with the question."""
    words = set(question.lower().split())
    ranked = sorted(PARAGRAPHS, key=lambda p: -len(words & set(p.lower().split())))
    return ranked[:3]


class _Retriever:
    def invoke(self, question: str) -> list[str]:
        return retrieve(question)


class _VectorStore:
    def as_retriever(self, search_kwargs: dict[str, Any] | None = None) -> Any:
        return _Retriever()


class MarkdownChunker:
    """A user's chunker: runs of at most ``max_tokens`` words (about)."""

    def __init__(self, max_tokens: int = 400) -> None:
        self.name = f"markdown:{max_tokens}"
        self.max_tokens = max_tokens

    def split_text(self, text: str) -> list[str]:
        words = text.split(" ")
        size = max(1, self.max_tokens)
        return [" ".join(words[i : i + size]) for i in range(0, len(words), size)]


def my_split(text: str, size: int = 400) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def my_embed_function(texts: list[str]) -> Any:
    from pytest_chunkeval.embedders.hashing import HashingEmbedder

    return HashingEmbedder().embed(texts)


def extract_facts(text: str) -> list[tuple[str, str, str, str]]:
    """A relationship extractor: ``X is Y.`` sentences."""
    found = []
    for sentence in re.findall(r"[^.]+\.", text):
        match = re.match(r"\s*(The \w+|\w+) is (.+)\.", sentence)
        if match:
            found.append((match.group(1), "is", match.group(2), sentence.strip()))
    return found


def _namespace(root: Path) -> dict[str, Any]:
    """What snippets assume is already there."""
    import functools

    import pytest_chunkeval as chunkeval
    from pytest_chunkeval import evaluate
    from pytest_chunkeval.chunkers import RecursiveTokenChunker
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet

    corpus = Corpus.from_paths([str(root / "docs")])
    queries = QuerySet.load(root / "queries.jsonl", corpus)
    result = evaluate("recursive:30:0", corpus, queries, k=2, cache=root / "cache")
    return {
        "__name__": "docs_block",
        "chunkeval": chunkeval,
        "corpus": corpus,
        "queries": queries,
        "questions": queries,
        "result": result,
        "text": corpus[corpus.ids[0]].text,
        "functools": functools,
        "pytest": pytest,
        "np": np,
        "my_chunker": RecursiveTokenChunker(40, 0),
        "my_split": my_split,
        "my_embed_function": my_embed_function,
        "my_judge": keyword_judge,
        "dense_search": lambda question, k=50: retrieve(question),
        "rerank": lambda question, pool: list(reversed(pool)),
        "MarkdownChunker": MarkdownChunker,
        "retriever": retrieve,
        "vectorstore": _VectorStore(),
        "extract_facts": extract_facts,
    }


PRICING = (
    "# Pricing\n\nThe basic plan costs ten euros a month.\n\n"
    "The premium plan costs twenty euros a month and adds support.\n"
)
PRICING_QUERY = {
    "id": "q-premium",
    "question": "How much is the premium plan?",
    "doc_id": "pricing.md",
    "excerpts": [{"text": "The premium plan costs twenty euros a month"}],
}


def _project(root: Path) -> None:
    """The plugin's test project with a ``pricing.md`` (a group the pages name),
    its query file also under tests/ (as the configuration reference names it),
    and ``my_rag.graph`` (the relationship pages' extraction module)."""
    write_project(root)
    (root / "docs" / "pricing.md").write_text(PRICING, encoding="utf-8")
    queries = root / "queries.jsonl"
    text = queries.read_text(encoding="utf-8") + json.dumps(PRICING_QUERY) + "\n"
    queries.write_text(text, encoding="utf-8")
    (root / "tests").mkdir(exist_ok=True)
    (root / "tests" / "queries.jsonl").write_text(text, encoding="utf-8")
    package = root / "my_rag"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "graph.py").write_text(
        "import re\n\n\n" + inspect.getsource(extract_facts), encoding="utf-8"
    )


def _standins_source() -> str:
    """This module's stand-ins as a module a test file can import."""
    names = [
        keyword_judge,
        retrieve,
        _Retriever,
        _VectorStore,
        MarkdownChunker,
        my_split,
        my_embed_function,
        extract_facts,
    ]
    body = "\n\n".join(inspect.getsource(n) for n in names)
    return (
        "import re\nimport textwrap\nfrom typing import Any\n\n"
        f"PARAGRAPHS = {PARAGRAPHS!r}\n\n{body}\n"
        "vectorstore = _VectorStore()\nmy_chunker = 'recursive:40:0'\n"
        "my_judge = keyword_judge\n"
    )


NOT_WORKING = (
    "NameError",
    "TypeError",
    "AttributeError",
    "ImportError",
    "ModuleNotFoundError",
    "KeyError",
    "SyntaxError",
    "ValueError",
    "ConfigError",
    "DataError",
    "UnknownSpec",
    "fixture '",
)
"""What a failed test of a page's example must not show: its code does not work
(a failed threshold on the tiny project is the example working)."""

_PRELUDE = (
    "import functools\n"
    "import pytest\n"
    "from pytest_chunkeval import assert_recall_at_least\n"
    "from pytest_chunkeval.assertions import assert_iou_at_least\n"
    "from test_docs_blocks_standins import *  # noqa: F403\n\n"
)


OPTIONAL_MODULES = (
    "bm25s",
    "Stemmer",
    "sentence_transformers",
    "torch",
    "transformers",
    "chromadb",
    "langchain_text_splitters",
)
"""What the optional extras bring: the torch-free compat runs lack them."""


def _skip_without_extra(exc: BaseException) -> None:
    """Skip when ``exc`` comes from a missing optional extra (anything else is the
    page's own error)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ModuleNotFoundError) and seen.name in OPTIONAL_MODULES:
            pytest.skip(f"needs {seen.name} (an optional extra)")
        seen = seen.__cause__ or seen.__context__


@pytest.mark.parametrize(
    "block", [_param(b) for b in BLOCKS if b.kind != "pytest"], ids=lambda b: b.id
)
def test_snippet_runs(
    block: Block,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    light_components: None,
) -> None:
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.syspath_prepend(str(tmp_path))  # my_rag
    try:
        namespace = _namespace(tmp_path)
        exec(compile(block.code, block.id, "exec"), namespace)
    except Exception as exc:
        _skip_without_extra(exc)
        if not isinstance(exc, AssertionError):
            raise
        # a threshold the tiny project misses is the example working
        if type(exc).__name__ == "UnknownGroup" or " is below " not in str(exc):
            raise


@pytest.mark.parametrize(
    "block", [_param(b) for b in BLOCKS if b.kind == "pytest"], ids=lambda b: b.id
)
def test_test_file_runs(
    block: Block,
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    light_components: None,
) -> None:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    _project(pytester.path)
    pytester.makepyfile(test_docs_blocks_standins=_standins_source())
    conftest = pytester.path / "conftest.py"
    conftest.write_text(
        conftest.read_text(encoding="utf-8") + "\n\nimport pytest as _pytest\n"
        "from test_docs_blocks_standins import retrieve as _retrieve\n\n\n"
        "@_pytest.fixture\ndef retriever():\n    return _retrieve\n\n\n"
        "@_pytest.fixture\ndef my_retriever():\n    return _retrieve\n",
        encoding="utf-8",
    )
    pytester.makepyfile(test_block=_PRELUDE + block.code)
    # baselines recorded first: a page's baseline test then compares with them
    result = pytester.runpytest(*FAST, "--chunkeval-update")
    output = result.stdout.str()
    missing = re.search(rf"No module named '({'|'.join(OPTIONAL_MODULES)})'", output)
    if missing:
        pytest.skip(f"needs {missing.group(1)} (an optional extra)")
    outcomes = result.parseoutcomes()
    assert outcomes.get("errors", 0) == 0, output[-3000:]
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) >= 1, output[-3000:]
    # a threshold the tiny project misses is the example working; anything else
    # (a name, an argument, a fixture the page's code gets wrong) is not
    broken = [w for w in NOT_WORKING if w in output]
    assert broken == [], output[-3000:]
