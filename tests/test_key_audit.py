"""The key audit (docs/performance.md, "What a cache keys on"): every input that
can change a result is declared here, and for each, changing it alone changes
the result key (engine/keys/result.py) and an evaluation on a cache warmed by the
unchanged one gives what an empty cache gives (warm = cold).

A setting added to the option table is declared in config/evaluation.py as
changing a result or not (tests/test_evaluation_spec.py); one that can is then a
field of the spec, a part of the result key (``keys.RESULT_PARTS``) and a case
here, or these tests fail."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.judges import keyword_judge
from support.rerankers import ByLength
from support.tiny_corpus import DOCS, docs_with, make_queries
from support.tiny_corpus import fresh_run as run

from pytest_chunkeval.chunkers import RecursiveTokenChunker
from pytest_chunkeval.chunkers.fixed import FixedTokenChunker
from pytest_chunkeval.config.evaluation import RESULT_SETTINGS
from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine import evaluate as evaluate_module
from pytest_chunkeval.engine import keys
from pytest_chunkeval.engine.result_cache import CACHED
from pytest_chunkeval.engine.results import EvalResult

BASE: dict[str, Any] = {"chunker": "recursive:20:0"}
"""The unchanged evaluation (``test_result_cache.run``'s defaults besides)."""


class Words:
    """A tokenizer of words, with an identity (so that it is cached)."""

    name = "words"
    identity = "test:words"

    def token_bounds(self, text: str) -> IntArray:
        found = [m.span() for m in re.finditer(r"\S+", text)]
        return np.asarray(found, dtype=np.int64).reshape(-1, 2)

    def count(self, text: str) -> int:
        return len(text.split())

    def count_batch(self, texts: list[str]) -> list[int]:
        return [self.count(t) for t in texts]


def _question_edited() -> QuerySet:
    first, *rest = make_queries(Corpus.from_mapping(DOCS, name="tiny"))
    return QuerySet([dataclasses.replace(first, text=first.text + "!"), *rest])


def _excerpt_edited() -> QuerySet:
    first, *rest = make_queries(Corpus.from_mapping(DOCS, name="tiny"))
    excerpt = first.excerpts[0]
    shorter = dataclasses.replace(excerpt, end=excerpt.end - 1, text=excerpt.text[:-1])
    return QuerySet(
        [dataclasses.replace(first, excerpts=(shorter, *first.excerpts[1:])), *rest]
    )


Change = Callable[[], dict[str, Any]]
"""The keyword arguments of ``run`` that change one input (made fresh per call)."""

SETTINGS: dict[str, Change] = {
    "embedder": lambda: {"embedder": HashingEmbedder(dim=128)},
    "store": lambda: {"store": "bm25"},
    "rerank": lambda: {"rerank": ByLength(candidates=4)},
    "k": lambda: {"k": 3},
    "budget": lambda: {"budget": 30},
    "unit": lambda: {"unit": "char"},
    "tokenizer": lambda: {"tokenizer": Words()},
    "copies": lambda: {"copies": "strict"},
}
"""A change of each result setting an evaluation of a chunker takes."""

ELSEWHERE: dict[str, str] = {
    "corpus": "the corpus text (TEXTS)",
    "benchmark": "the corpus text (TEXTS)",
    "beir": "the corpus text (TEXTS)",
    "queries": "the question and excerpt texts (TEXTS)",
    "beir_split": "the question and excerpt texts (TEXTS)",
    "locate": "placing a whole retriever's texts: score() is never cached",
    "judge": "a judged evaluation is never cached (test_a_judged_evaluation...)",
    "repeats": "re-asks a score() retriever, which is never cached; evaluate() "
    "takes none (its part of the key is the spec's value)",
}
"""The result settings audited otherwise, and how."""

TEXTS: dict[str, Change] = {
    "corpus text": lambda: {"docs": docs_with(lambda t: t.replace("27", "28"))},
    "question text": lambda: {"queries": _question_edited()},
    "excerpt text": lambda: {"queries": _excerpt_edited()},
}

COMPONENT_PARTS: dict[str, Change] = {
    "chunker size": lambda: {"chunker": RecursiveTokenChunker(24, 0)},
    "chunker overlap": lambda: {"chunker": RecursiveTokenChunker(20, 5)},
    "chunker separators": lambda: {
        "chunker": RecursiveTokenChunker(20, 0, separators=[". ", " ", ""])
    },
    "chunker tokenizer": lambda: {
        "chunker": RecursiveTokenChunker(20, 0, encoding=Words())
    },
    "chunker class": lambda: {"chunker": FixedTokenChunker(20, 0)},
    "embedder dimension": lambda: {"embedder": HashingEmbedder(dim=64)},
    "store": lambda: {"store": "hybrid"},
    "text store settings": lambda: {"store": "bm25?k1=0.5"},
    "fused store settings": lambda: {"store": "hybrid?rrf=10"},
    "vector store settings": lambda: {"store": "chroma?ef_search=1"},
    "reranker candidates": lambda: {"rerank": ByLength(candidates=6)},
    "label": lambda: {"label": "mine"},
}
"""A change of each part of a component's identity (and of the result's
label, which it records)."""


@pytest.fixture
def result_keys(monkeypatch: pytest.MonkeyPatch) -> list[str | None]:
    """The result key of every evaluation, in order."""
    found: list[str | None] = []

    def spy(*args: Any, **kw: Any) -> str | None:
        key = keys.result_key(*args, **kw)
        found.append(key)
        return key

    monkeypatch.setattr(evaluate_module, "result_key", spy)
    return found


def comparable(result: EvalResult) -> dict[str, Any]:
    """The result without what measures time (its timings, a rebuild's)."""
    data = result.to_json()
    data.pop("timings")
    data.get("noise", {}).pop("rebuild_seconds", None)
    return data


def warm_equals_cold(
    tmp_path: Path, result_keys: list[str | None], change: Change
) -> None:
    base = {**BASE}
    store = str(change().get("store", ""))
    if store.startswith(("bm25", "hybrid")) or "rerank" in change():
        pytest.importorskip("bm25s")
    if store.startswith("chroma"):
        pytest.importorskip("chromadb")
        base["store"] = "chroma"  # the same store with other settings
    run(tmp_path / "warm", **base)
    warm = run(tmp_path / "warm", **{**base, **change()})
    cold = run(tmp_path / "cold", **{**base, **change()})
    assert result_keys[0] is not None
    assert result_keys[1] != result_keys[0], "the change left the result key alone"
    assert result_keys[2] == result_keys[1]
    assert CACHED not in warm.timings
    assert comparable(warm) == comparable(cold)


def test_every_result_setting_is_audited() -> None:
    assert set(SETTINGS) | set(ELSEWHERE) == set(RESULT_SETTINGS)
    assert not set(SETTINGS) & set(ELSEWHERE)
    assert set(keys.RESULT_PARTS) == set(RESULT_SETTINGS)


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_a_changed_setting_changes_the_key(
    tmp_path: Path, result_keys: list[str | None], name: str
) -> None:
    warm_equals_cold(tmp_path, result_keys, SETTINGS[name])


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_a_changed_text_changes_the_key(
    tmp_path: Path, result_keys: list[str | None], name: str
) -> None:
    warm_equals_cold(tmp_path, result_keys, TEXTS[name])


@pytest.mark.parametrize("name", sorted(COMPONENT_PARTS))
def test_a_changed_identity_part_changes_the_key(
    tmp_path: Path, result_keys: list[str | None], name: str
) -> None:
    warm_equals_cold(tmp_path, result_keys, COMPONENT_PARTS[name])


def test_changed_code_changes_the_key(
    tmp_path: Path, result_keys: list[str | None], monkeypatch: pytest.MonkeyPatch
) -> None:
    run(tmp_path / "warm", **BASE)
    monkeypatch.setattr(keys.result, "code_identity", lambda: "another version")
    warm = run(tmp_path / "warm", **BASE)
    assert result_keys[1] != result_keys[0]
    assert CACHED not in warm.timings


def test_a_judged_evaluation_is_never_cached(
    tmp_path: Path, result_keys: list[str | None]
) -> None:
    judge = keyword_judge([])
    first = run(tmp_path / "warm", **BASE, judge=judge)
    again = run(tmp_path / "warm", **BASE, judge=judge)
    assert result_keys == [None, None]
    assert CACHED not in again.timings
    assert comparable(again) == comparable(first)


def test_a_chunker_changed_after_construction_gives_warm_equal_to_cold(
    tmp_path: Path, result_keys: list[str | None]
) -> None:
    # issue 31's case: RecursiveTokenChunker(40, 0) given chunk_size = 8 after it
    # was built (and used): warm ok at recall 96.3, cold REGRESSED at 27.9.
    chunker = RecursiveTokenChunker(40, 0)
    run(tmp_path / "warm", chunker=chunker)
    chunker.chunk_size = 8
    warm = run(tmp_path / "warm", chunker=chunker)
    cold = run(tmp_path / "cold", chunker=RecursiveTokenChunker(8, 0))
    assert result_keys[1] != result_keys[0]
    assert CACHED not in warm.timings
    assert comparable(warm) == comparable(cold)


class Upgraded(HashingEmbedder):
    """The hashing embedder's identity, its vectors as another version of the
    code computing them gives (``versions``: not in the identity baselines
    record, in every key of its vectors)."""

    versions = "upgraded"

    def embed(self, texts: Any) -> Any:
        return super().embed([text[::-1] for text in texts])


class UpgradedByLength(ByLength):
    """``ByLength``'s identity, its scores as another library version gives."""

    versions = "upgraded"

    def score(self, pairs: Any) -> Any:
        return -super().score(pairs)


VERSIONS: dict[str, tuple[Change, Change]] = {
    "embedder versions": (lambda: {}, lambda: {"embedder": Upgraded()}),
    "reranker versions": (
        lambda: {"rerank": ByLength()},
        lambda: {"rerank": UpgradedByLength()},
    ),
}


@pytest.mark.parametrize("name", sorted(VERSIONS))
def test_the_versions_computing_a_components_output_change_the_keys(
    tmp_path: Path, result_keys: list[str | None], name: str
) -> None:
    # A library upgrade under one identity: its vectors (packs) or its order
    # (rerank rows) cached by the old version are not read.
    before, after = VERSIONS[name]
    if "rerank" in before():
        pytest.importorskip("bm25s")
    run(tmp_path / "warm", **BASE, **before())
    warm = run(tmp_path / "warm", **BASE, **after())
    cold = run(tmp_path / "cold", **BASE, **after())
    assert result_keys[1] != result_keys[0]
    assert comparable(warm) == comparable(cold)
