"""Repeats of a noisy retriever (engine/reask.py, engine/repeats.py;
docs/baselines.md, "Repeats"): asked twice, then ``r`` times when it varies,
each question's value the mean of its repeats."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import numpy as np
import pytest

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.engine.repeats import retriever_repeats, sample
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.engine.score import score

PARAGRAPHS = [f"Paragraph {i} tells fact number {i} about topic {i}." for i in range(6)]
TEXT = "\n\n".join(PARAGRAPHS)


@pytest.fixture
def data(tmp_path):
    corpus = Corpus.from_mapping({"doc.md": TEXT}, name="facts")
    queries = []
    for i, p in enumerate(PARAGRAPHS):
        start = TEXT.index(p)
        queries.append(
            Query(
                f"q{i}",
                f"fact {i}?",
                (Excerpt(p, "doc.md", start, start + len(p)),),
                "doc.md",
            )
        )
    return corpus, QuerySet(queries), tmp_path / "cache"


def right(question: str) -> list[str]:
    return [PARAGRAPHS[int(question.split()[1].rstrip("?"))]]


def wrong(question: str) -> list[str]:
    i = int(question.split()[1].rstrip("?"))
    return [PARAGRAPHS[(i + 1) % len(PARAGRAPHS)]]


class Alternating:
    """Each question answered right, then wrong, then right...: its recall
    varies between asks."""

    def __init__(self) -> None:
        self.asked: dict[str, int] = {}

    def __call__(self, question: str) -> list[str]:
        n = self.asked[question] = self.asked.get(question, -1) + 1
        return right(question) if n % 2 == 0 else wrong(question)


def test_a_deterministic_retriever_is_asked_twice_and_not_repeated(data):
    corpus, queries, cache = data
    calls = []

    def retriever(question: str) -> list[str]:
        calls.append(question)
        return right(question)

    result = score(retriever, corpus, queries, cache=cache)
    assert len(calls) == 2 * len(queries)
    assert result.noise == {}
    assert all(not q.repeats for q in result.queries)
    assert result.mean("recall") == 1.0


def test_a_varying_retriever_is_repeated_and_each_value_is_the_mean(data):
    corpus, queries, cache = data
    retriever = Alternating()
    result = score(retriever, corpus, queries, cache=cache, repeats=4)
    # asked twice, then twice more: four answers per question
    assert sum(retriever.asked.values()) + len(queries) == 4 * len(queries)
    assert result.noise["noisy"] == ["retriever"]
    assert result.noise["repeats"] == 4
    assert result.noise["sampled"] == len(queries)
    assert result.noise["requests"] == 3 * len(queries)
    for q in result.queries:
        mean, var, r = q.repeats["recall"]
        assert (mean, r) == (0.5, 4)
        assert var == pytest.approx(1 / 3)  # [1, 0, 1, 0]: denominator r - 1
        assert q.scores["recall"] == 0.5
        assert q.retrieved  # the first repeat's
    assert result.mean("recall") == 0.5
    assert result.noise["mean_variance"]["recall"] == pytest.approx(1 / 3)
    # the default r on a set under 50 questions is 8
    assert score(Alternating(), corpus, queries, cache=cache).noise["repeats"] == 8


def test_repeats_survive_json(data):
    corpus, queries, cache = data
    result = score(Alternating(), corpus, queries, cache=cache, repeats=4)
    back = EvalResult.from_json(json.loads(json.dumps(result.to_json())))
    assert back.noise == result.noise
    assert [q.repeats for q in back.queries] == [q.repeats for q in result.queries]
    assert back.mean("recall") == result.mean("recall")
    assert back.to_json() == result.to_json()


def test_a_factory_builds_a_fresh_retriever_per_ask(data):
    corpus, queries, cache = data
    built = itertools.count()

    def make():
        # noise between processes: each instance is right or wrong throughout
        n = next(built)
        return right if n % 2 == 0 else wrong

    plain = score(make(), corpus, queries, cache=cache)
    assert plain.noise == {}  # one instance asked twice agrees with itself
    result = score(make, corpus, queries, cache=cache, factory=True, repeats=4)
    assert result.noise["noisy"] == ["retriever"]
    assert result.mean("recall") == 0.5
    with pytest.raises(TypeError, match="factory=True"):
        score({"q0": []}, corpus, queries, cache=cache, factory=True)


def test_a_declared_noisy_retriever_is_repeated_without_the_test(data):
    corpus, queries, cache = data
    calls = itertools.count()

    def retriever(question: str) -> list[str]:
        next(calls)
        return right(question)

    result = score(retriever, corpus, queries, cache=cache, noisy=True, repeats=3)
    assert next(calls) == 3 * len(queries)
    assert result.noise["noisy"] == ["retriever"]
    assert all(q.repeats["recall"] == (1.0, 0.0, 3) for q in result.queries)


def test_a_mapping_of_results_is_asked_once(data):
    corpus, queries, cache = data
    answers = {q.id: right(q.text) for q in queries}
    result = score(answers, corpus, queries, cache=cache, noisy=True)
    assert result.noise == {}


def test_the_sample_is_fixed_and_moves_little():
    ids = [f"q{i:04d}" for i in range(500)]
    chosen = sample(ids)
    assert len(chosen) == 200
    assert chosen == sample(list(ids))
    # another order of the same questions: the same questions
    reordered = list(reversed(ids))
    assert sorted(reordered[i] for i in sample(reordered)) == sorted(
        ids[i] for i in chosen
    )
    # one question added: at most one of the sample changes
    grown = [*ids, "q-new"]
    before = {ids[i] for i in chosen}
    after = {grown[i] for i in sample(grown)}
    assert len(before - after) <= 1
    assert sample(ids[:150]) == list(range(150))
    assert retriever_repeats(49) == 8
    assert retriever_repeats(50) == 4
    assert retriever_repeats(50, 6) == 6


def test_a_large_set_repeats_its_sample_only(tmp_path):
    paragraphs = [f"Statement {i} says thing {i} plainly." for i in range(240)]
    text = "\n\n".join(paragraphs)
    corpus = Corpus.from_mapping({"big.md": text}, name="big")
    queries = []
    for i, p in enumerate(paragraphs):
        start = text.index(p)
        queries.append(
            Query(
                f"s{i}",
                f"thing {i}?",
                (Excerpt(p, "big.md", start, start + len(p)),),
                "big.md",
            )
        )
    qs = QuerySet(queries)
    asked: dict[str, int] = {}

    def retriever(question: str) -> list[str]:
        n = asked[question] = asked.get(question, -1) + 1
        i = int(question.split()[1].rstrip("?"))
        return [paragraphs[i if n % 2 == 0 else (i + 1) % 240]]

    result = score(retriever, corpus, qs, cache=tmp_path / "c", repeats=4)
    repeated = [q for q in result.queries if q.repeats]
    assert len(repeated) == 200 == result.noise["sampled"]
    assert {q.id for q in repeated} == {qs[i].id for i in sample([q.id for q in qs])}
    # asked twice each, then twice more for the sample
    assert result.noise["requests"] == 240 + 2 * 200
    once = [q for q in result.queries if not q.repeats]
    assert all(q.scores["recall"] in (0.0, 1.0) for q in once)
    assert not math.isnan(result.mean("recall"))


def _vectors(n: int = 40, d: int = 8) -> np.ndarray:
    rng = np.random.default_rng(3)
    v = rng.normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_an_approximate_store_is_built_r_times_a_custom_one_once(data):
    from pytest_chunkeval.engine.evaluate import evaluate
    from pytest_chunkeval.stores.exact import ExactStore

    corpus, queries, cache = data
    built: list[int | None] = []

    class Index:
        def __init__(self, inner, seed=None):
            self.inner, self.seed = inner, seed

        def search(self, q, k):
            return self.inner.search(q, k)

        def rebuild(self, seed):
            built.append(seed)
            return Index(self.inner, seed)

    class Approximate:
        name = "approx"
        approximate = True

        def index(self, key, vectors):
            built.append(None)
            return Index(ExactStore().index(key, vectors))

    class Custom(Approximate):
        name = "custom"
        approximate = False  # the default of a store that declares nothing

    chunker = "recursive:20:0"
    options = {"embedder": "hashing", "k": 1, "cache": cache}
    result = evaluate(chunker, corpus, queries, store=Approximate(), **options)
    assert sorted(s for s in built if s is not None) == [1, 2]
    assert result.noise["repeats"] == 3
    assert result.noise["noisy"] == []
    assert isinstance(result.noise["rebuild_seconds"], float)
    assert all(q.repeats["recall"][2] == 3 for q in result.queries)
    built.clear()
    plain = evaluate(chunker, corpus, queries, store=Custom(), **options)
    assert [s for s in built if s is not None] == []
    assert plain.noise == {}


def test_an_approximate_store_without_a_rebuild_is_named():
    from pytest_chunkeval.stores._base import StoreError, is_approximate, rebuilt
    from pytest_chunkeval.stores.exact import ExactIndex, ExactStore

    class Declared:
        name = "declared"
        approximate = True

    assert is_approximate(Declared())
    assert not is_approximate(ExactStore())
    index = ExactIndex(_vectors())  # an index without rebuild(seed)
    with pytest.raises(StoreError, match="'declared' declares approximate"):
        rebuilt(Declared(), index, 1)


def test_chroma_rebuilds_in_another_order():
    pytest.importorskip("chromadb")
    from pytest_chunkeval.stores.chroma import ChromaStore
    from pytest_chunkeval.stores.exact import ExactStore

    vectors = _vectors()
    store = ChromaStore()
    assert store.approximate is True
    first = store.index("f" * 64, vectors)
    again = first.rebuild(1)
    assert again.name == first.name + "-r1"
    assert again.n == first.n
    exact = ExactStore().index("k", vectors).search(vectors[:5], 3)
    assert (again.search(vectors[:5], 3)[:, 0] == exact[:, 0]).all()
    # other HNSW settings: another collection, never the default one's
    other = ChromaStore(hnsw={"ef_search": 1}).index("f" * 64, vectors)
    assert other.name != first.name


class LaterNoise:
    """Wrong on its first two answers to each question, then right and wrong
    in turn: two asks in one run agree, further asks do not."""

    def __init__(self) -> None:
        self.asked: dict[str, int] = {}

    def __call__(self, question: str) -> list[str]:
        n = self.asked[question] = self.asked.get(question, 0) + 1
        return wrong(question) if n <= 2 or n % 2 == 0 else right(question)


def test_confirm_before_failing_repeats_a_retriever_that_looked_deterministic(
    data, monkeypatch
):
    from pytest_chunkeval.gate.check import decide
    from pytest_chunkeval.gate.comparison.repeats import changed, confirmed
    from pytest_chunkeval.gate.files.baseline import Baseline
    from pytest_chunkeval.gate.tolerances import GateSettings

    corpus, queries, cache = data
    baseline = Baseline.from_result(score(right, corpus, queries, cache=cache), "t")
    late = LaterNoise()
    now = score(late, corpus, queries, cache=cache, repeats=4)
    assert now.noise == {}  # two asks agreed
    assert now.mean("recall") == 0.0
    assert changed(baseline, now, ["recall"]) == [q.id for q in queries]
    again = confirmed(baseline, now, ["recall"])
    assert again is not None
    assert again.noise["noisy"] == ["retriever"]
    assert all(q.repeats["recall"][2] == 4 for q in again.queries)
    # the cost: the second asks, the confirmations and the repeats
    assert again.noise["requests"] == 6 + 6 * 4 + 6 * 2
    # a retriever that repeats itself is not asked to repeat
    steady = score(wrong, corpus, queries, cache=cache)
    assert confirmed(baseline, steady, ["recall"]) is None
    # the gate asks before it reports a regression: r more times, then until
    # each question has r answers (no noise forgiven: the decision's rule)
    # (the module decide() calls: pytester runs may have imported it again)
    checking = decide.__globals__["outcome_of"].__globals__
    compare_globals = checking["compare"].__globals__
    monkeypatch.setitem(compare_globals, "explain_noise", lambda *a, **k: {})
    later = LaterNoise()
    result = score(later, corpus, queries, cache=cache, repeats=4)
    decide(baseline, result, "t", "t.json", GateSettings(), "pytest")
    assert set(later.asked.values()) == {2 + 4 + 2}


def test_a_retriever_the_baseline_found_noisy_is_repeated(data):
    from pytest_chunkeval.gate.comparison.repeats import as_the_baseline_measured
    from pytest_chunkeval.gate.files.baseline import Baseline

    corpus, queries, cache = data
    noisy = score(Alternating(), corpus, queries, cache=cache, repeats=4)
    baseline = dataclasses.replace(
        Baseline.from_result(noisy, "t"), noise={"noisy": ["retriever"]}
    )
    steady = score(right, corpus, queries, cache=cache, repeats=4)
    measured = as_the_baseline_measured(baseline, steady)
    assert measured.noise["repeats"] == 4
    assert all(q.repeats["recall"] == (1.0, 0.0, 4) for q in measured.queries)
    clean = Baseline.from_result(steady, "t")
    assert as_the_baseline_measured(clean, steady) is steady


def test_an_update_records_a_retriever_the_old_baseline_found_noisy_with_repeats(
    data, tmp_path
):
    from pytest_chunkeval.gate.files.baseline import Baseline
    from pytest_chunkeval.gate.files.paths import BaselineLayout, NodeRef
    from pytest_chunkeval.gate.tolerances import GateSettings
    from pytest_chunkeval.gate.writing import plan_update

    corpus, queries, cache = data
    path = tmp_path / "t.json"
    old = Baseline.from_result(score(Alternating(), corpus, queries, cache=cache), "t")
    path.write_text(dataclasses.replace(old, noise={"noisy": ["retriever"]}).to_text())
    calls = itertools.count()

    def steady(question: str) -> list[str]:
        next(calls)
        return right(question)

    result = score(steady, corpus, queries, cache=cache, repeats=4)
    assert next(calls) == 2 * len(queries)
    recorded = []
    repeated_like = result.probe.repeated_like

    def watched(given):
        recorded.append(repeated_like(given))
        return recorded[-1]

    result.probe.repeated_like = watched
    test = NodeRef("test_x.py::t", tmp_path / "test_x.py")
    plan_update(result, test, path, (None, ""), GateSettings(),
                layout=BaselineLayout(), shown_of=str)  # fmt: skip
    # recorded from a result whose questions have 4 answers each
    (measured,) = recorded
    assert measured.noise["repeats"] == 4
    assert all(q.repeats["recall"] == (1.0, 0.0, 4) for q in measured.queries)
