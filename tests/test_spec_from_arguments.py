"""Each entry point (``evaluate``, ``score``, ``evaluate_relationships``) builds
its evaluation spec from its own arguments, and a result records the spec
(config/evaluation.py ``EvaluationSpec.recorded``): what the keys are derived
from is what the baseline says (docs/performance.md, "What a cache keys on")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_chunkeval.config.evaluation import EvaluationSpec
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import Excerpt, Query, QuerySet
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.engine.setup import EvaluationSetup
from pytest_chunkeval.relationships.evaluate import evaluate_relationships

TEXT = (
    "Cats sleep most of the day. Dogs bark at strangers. "
    "Parrots live eighty years. Mars has two small moons."
)


def data() -> tuple[Corpus, QuerySet]:
    corpus = Corpus.from_mapping({"a.md": TEXT}, name="tiny")
    asked = {"q1": ("Do dogs bark?", "Dogs bark"), "q2": ("Moons?", "two small")}
    queries = []
    for qid, (question, words) in asked.items():
        start = TEXT.index(words)
        excerpt = Excerpt(words, "a.md", start, start + len(words))
        queries.append(Query(qid, question, (excerpt,), "a.md"))
    return corpus, QuerySet(queries)


@pytest.fixture
def specs(monkeypatch: pytest.MonkeyPatch) -> list[EvaluationSpec]:
    """The spec of every configuration a result recorded."""
    seen: list[EvaluationSpec] = []
    recorded = EvaluationSetup.config

    def config(self: EvaluationSetup, name: str, **fields: Any) -> dict[str, Any]:
        seen.append(self.spec)
        return recorded(self, name, **fields)

    monkeypatch.setattr(EvaluationSetup, "config", config)
    return seen


def test_score_builds_its_spec_from_its_arguments(
    specs: list[EvaluationSpec], tmp_path: Path
) -> None:
    corpus, queries = data()

    def retriever(question: str) -> list[str]:
        return ["Dogs bark at strangers.", "Cats sleep most of the day."]

    result = score(
        retriever,
        corpus,
        queries,
        k=1,
        locate="normalized",
        repeats=3,
        cache=tmp_path / "cache",
    )
    spec = specs[-1]
    assert (spec.k, spec.score_k, spec.locate, spec.repeats) == (1, 1, "normalized", 3)
    assert result.config["k"] == 1
    assert score(retriever, corpus, queries, cache=tmp_path).config["k"] is None


def test_relationships_build_their_spec_from_their_arguments(
    specs: list[EvaluationSpec], tmp_path: Path
) -> None:
    corpus, queries = data()

    def extractor(text: str) -> list[tuple[str, str, str, str]]:
        sentences = [s.strip() for s in text.split(".") if s.strip()]
        return [(s.split()[0], "says", s.split()[-1], s) for s in sentences]

    result = evaluate_relationships(
        "recursive:8:0",
        corpus,
        queries,
        extractor=extractor,
        k=2,
        embedder=HashingEmbedder(),
        store="exact",
        cache=tmp_path / "cache",
        log=None,
    )
    assert specs[-1].k == 2
    assert result.config["k"] == 2


def test_evaluate_records_its_spec_as_before(
    specs: list[EvaluationSpec], tmp_path: Path
) -> None:
    corpus, queries = data()
    result = evaluate(
        "recursive:8:0",
        corpus,
        queries,
        k=2,
        budget=30,
        copies="strict",
        embedder=HashingEmbedder(),
        store="exact",
        cache=tmp_path / "cache",
    )
    spec = specs[-1]
    assert (spec.k, spec.budget, spec.copies) == (2, 30, "strict")
    # the configuration a baseline keeps: the same keys as before the spec
    assert sorted(result.config) == [
        "budget",
        "chunker",
        "copies",
        "corpus",
        "embedder",
        "embedder_identity",
        "k",
        "queries",
        "scoring_rules",
        "store",
        "tokenizer",
        "unit",
    ]
    assert (result.config["k"], result.config["budget"]) == (2, 30)
