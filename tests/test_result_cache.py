"""The result cache (engine/result_cache.py): a warm evaluation reads its result
back and computes nothing; any change of an input (a character of a document or
of a question, k, the chunker, the embedder, the package's code) computes again;
a damaged entry is set aside and computed again with identical results; what
has no identity is never cached."""

from __future__ import annotations

import dataclasses
import importlib.util
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.judges import keyword_judge
from support.tiny_corpus import DOCS, docs_with, make_queries
from support.tiny_corpus import fresh_run as run

from pytest_chunkeval.chunkers import FunctionChunker, RecursiveTokenChunker
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine import evaluate as evaluate_module
from pytest_chunkeval.engine import keys, result_cache
from pytest_chunkeval.engine.cache_dir import forget_open
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.result_cache import CACHED, result_store
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.run.outputs import SummaryRow
from pytest_chunkeval.run.summary import render_summary
from pytest_chunkeval.stores.exact import ExactIndex
from pytest_chunkeval.tokenizers.base import TiktokenTokenizer
from pytest_chunkeval.util.verified import CacheWarning

CALLS: Counter[str] = Counter()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts tokenizations, chunkings, embeddings, exact searches and scorings."""
    CALLS.clear()

    def wrap(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        def spy(*args: Any, **kw: Any) -> Any:
            CALLS[label] += 1
            return original(*args, **kw)

        monkeypatch.setattr(owner, name, spy)

    wrap(TiktokenTokenizer, "token_bounds", "tokenize")
    wrap(TiktokenTokenizer, "encode_array", "tokenize")
    wrap(RecursiveTokenChunker, "chunk_spans", "chunk")
    wrap(RecursiveTokenChunker, "spans_from_tokens", "chunk")
    wrap(EmbeddingCache, "embed", "embed")
    wrap(ExactIndex, "search", "search")
    wrap(evaluate_module, "score_queries", "score")
    return CALLS


def same(computed: EvalResult, read: EvalResult) -> None:
    """Equal in everything the gate and the reports use; only the timings say
    the result was read back."""
    assert CACHED not in computed.timings
    assert set(read.timings) == {CACHED}
    cold, warm = computed.to_json(), read.to_json()
    cold.pop("timings"), warm.pop("timings")
    assert warm == cold
    assert read.stages == computed.stages  # with each stage's spans (not in JSON)
    assert read.queries == computed.queries
    assert read.config == computed.config
    assert read.corpus is not None
    assert read.corpus.content_hash == computed.corpus_hash


def entries(cache_dir: Path) -> list[Path]:
    return result_store(cache_dir).entries()


def test_a_warm_run_reads_the_result_and_computes_nothing(
    tmp_path: Path, counted: Counter[str]
) -> None:
    cold = run(tmp_path / "cache")
    assert counted["tokenize"]
    assert counted["chunk"]
    assert counted["search"]
    assert counted["embed"]
    assert counted["score"]
    assert len(entries(tmp_path / "cache")) == 1
    counted.clear()
    warm = run(tmp_path / "cache")
    assert counted == Counter()  # no tokenize, chunk, embed, search, score
    same(cold, warm)
    assert any(q.evidence.get("found") for q in warm.queries)  # the gate's hashes


def test_a_warm_budget_and_reranker_free_run_on_bm25_and_hybrid_read_alike(
    tmp_path: Path,
) -> None:
    pytest.importorskip("bm25s")
    for store in ("bm25", "hybrid"):
        cold = run(tmp_path / store, store=store, budget=30)
        same(cold, run(tmp_path / store, store=store, budget=30))
        assert cold.stages or store == "bm25"


@pytest.mark.skipif(
    importlib.util.find_spec("chromadb") is None, reason="chromadb is not installed"
)
def test_a_warm_run_on_chroma_reads_the_computed_result(
    tmp_path: Path, counted: Counter[str]
) -> None:
    cold = run(tmp_path / "cache", store="chroma")
    assert cold.loss  # approximate: the exact search's reference is recorded
    counted.clear()
    warm = run(tmp_path / "cache", store="chroma")
    assert counted == Counter()
    same(cold, warm)


def _question_edited(corpus: Corpus) -> QuerySet:
    first, *rest = make_queries(corpus)
    return QuerySet([dataclasses.replace(first, text=first.text + "!"), *rest])


CHANGES: dict[str, dict[str, Any]] = {
    "a character of a document": {"docs": docs_with(lambda t: t.replace("27", "28"))},
    "a character of a question": {
        "queries": _question_edited(Corpus.from_mapping(DOCS, name="tiny"))
    },
    "k": {"k": 3},
    "the chunker": {"chunker": "recursive:24:0"},
    "the embedder": {"embedder": HashingEmbedder(dim=128)},
    "the label": {"label": "mine"},
    "the copies rule": {"copies": "strict"},
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_changed_input_is_computed_again(
    tmp_path: Path, counted: Counter[str], change: str
) -> None:
    run(tmp_path / "cache")
    counted.clear()
    changed = run(tmp_path / "cache", **CHANGES[change])
    assert CACHED not in changed.timings
    assert counted["score"] >= 1
    assert len(entries(tmp_path / "cache")) == 2
    # what it computed is what an empty cache computes
    fresh = run(tmp_path / "fresh", **CHANGES[change])
    a, b = changed.to_json(), fresh.to_json()
    a.pop("timings"), b.pop("timings")
    assert a == b
    # and the change's own result is read back the next time
    same(changed, run(tmp_path / "cache", **CHANGES[change]))


def test_a_changed_package_source_is_computed_again(
    tmp_path: Path, counted: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run(tmp_path / "cache")
    monkeypatch.setattr(keys.result, "code_identity", lambda: "another version")
    counted.clear()
    again = run(tmp_path / "cache")
    assert CACHED not in again.timings
    assert counted["score"] >= 1
    assert len(entries(tmp_path / "cache")) == 2


def test_the_code_identity_hashes_the_package_sources() -> None:
    keys.code_identity.cache_clear()
    first = keys.code_identity()
    assert len(first) == 64
    assert keys.code_identity() == first  # once per process


def damage_truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def damage_bits(data: bytes) -> bytes:
    damaged = bytearray(data)
    for at in (len(data) // 3, len(data) - 2):
        damaged[at] ^= 0x10
    return bytes(damaged)


@pytest.mark.parametrize("damage", [damage_truncated, damage_bits])
def test_a_damaged_entry_is_set_aside_and_computed_again(
    tmp_path: Path, counted: Counter[str], damage: Callable[[bytes], bytes]
) -> None:
    cold = run(tmp_path / "cache")
    [entry] = entries(tmp_path / "cache")
    entry.write_bytes(damage(entry.read_bytes()))
    counted.clear()
    with pytest.warns(CacheWarning, match=entry.name):
        again = run(tmp_path / "cache")
    assert CACHED not in again.timings
    assert counted["score"] >= 1
    a, b = cold.to_json(), again.to_json()
    a.pop("timings"), b.pop("timings")
    assert a == b
    assert entry.with_name(entry.name + ".corrupt").exists()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same(cold, run(tmp_path / "cache"))


def test_an_entry_of_another_evaluation_under_this_key_is_refused(
    tmp_path: Path,
) -> None:
    # A whole, valid entry whose content is another configuration's (written
    # with its key recomputed): the configuration read back is compared.
    run(tmp_path / "cache")
    store = result_store(tmp_path / "cache")
    [entry] = store.entries()
    other = run(tmp_path / "other", k=3)
    store.put(entry.stem, result_cache.encode(other))
    with pytest.warns(CacheWarning, match="configuration is not this evaluation"):
        again = run(tmp_path / "cache")
    assert again.config["k"] == 2
    assert CACHED not in again.timings


def test_what_has_no_identity_is_never_cached(tmp_path: Path) -> None:
    unversioned = FunctionChunker(lambda text: [text], name="whole")
    run(tmp_path / "cache", unversioned)
    assert entries(tmp_path / "cache") == []
    run(tmp_path / "cache", judge=keyword_judge([]))
    assert entries(tmp_path / "cache") == []
    versioned = FunctionChunker(lambda text: [text], name="whole", cache_version="1")
    run(tmp_path / "cache", versioned)
    assert len(entries(tmp_path / "cache")) == 1


def test_a_read_only_cache_is_read_and_never_written(tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    cold = run(cache_dir)
    forget_open()
    corpus = Corpus.from_mapping(DOCS, name="tiny")
    queries = make_queries(corpus)

    def read_only(**kw: Any) -> EvalResult:
        return evaluate(
            "recursive:20:0",
            corpus,
            queries,
            store="exact",
            embedder=HashingEmbedder(),
            cache=EmbeddingCache(cache_dir, read_only=True),
            **kw,
        )

    same(cold, read_only(k=2))
    read_only(k=3)
    assert len(entries(cache_dir)) == 1


def test_the_summary_says_a_read_result_is_cached(tmp_path: Path) -> None:
    cold = run(tmp_path / "cache").to_json(details=False)
    warm = run(tmp_path / "cache").to_json(details=False)
    rows = [
        SummaryRow("cold", cold, ["t::cold"]),
        SummaryRow("warm", warm, ["t::warm"]),
    ]
    lines = render_summary(rows, verbosity=0, evaluations=2)
    [cold_line] = [line for line in lines if "t::cold" in line]
    [warm_line] = [line for line in lines if "t::warm" in line]
    assert cold_line.rstrip().endswith("s")
    assert "cached" not in cold_line
    assert warm_line.rstrip().endswith("cached")


def test_a_configuration_json_reads_back_otherwise_is_still_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a tuple in the configuration is a list in JSON: the entry is still this
    # evaluation's (compared as JSON reads it back), never set aside for it
    from pytest_chunkeval.engine.setup import EvaluationSetup

    config = EvaluationSetup.config

    def with_tuple(self: EvaluationSetup, name: str, **fields: Any) -> Any:
        return {**config(self, name, **fields), "extra": (1, 2)}

    monkeypatch.setattr(EvaluationSetup, "config", with_tuple)
    cold = run(tmp_path / "cache")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warm = run(tmp_path / "cache")
    assert set(warm.timings) == {CACHED}
    assert warm.config["extra"] == [1, 2]
    assert cold.config["extra"] == (1, 2)
