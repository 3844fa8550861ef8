from __future__ import annotations

import csv
import json
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import pytest

from pytest_chunkeval.data import benchmarks
from pytest_chunkeval.data.benchmarks import (
    UnknownBenchmark,
    benchmark_names,
    load_benchmark,
)
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import stable_query_id

GENERAL = Path(str(resources.files("pytest_chunkeval").joinpath("data", "general")))
DOCS = ("chatlogs", "finance", "pubmed", "state_of_the_union", "wikitexts")


def test_general_is_listed() -> None:
    assert benchmark_names() == ["general"]


def test_general_counts() -> None:
    corpus, queries = load_benchmark("general")
    assert corpus.name == "general"
    assert corpus.ids == tuple(f"{d}.md" for d in DOCS)
    assert len(queries) == 472
    assert queries.n_excerpts == 790
    assert {q.doc_id for q in queries} == set(corpus.ids)


def test_every_reference_offset_is_exact_in_the_raw_csv() -> None:
    # The SPEC's claim about the shipped file itself, checked without our loader.
    texts = {
        d: (GENERAL / "corpora" / f"{d}.md").read_bytes().decode("utf-8") for d in DOCS
    }
    n = 0
    with (GENERAL / "questions_df.csv").open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            for r in json.loads(row["references"]):
                text = texts[row["corpus_id"]]
                assert text[r["start_index"] : r["end_index"]] == r["content"]
                n += 1
    assert n == 790


def test_loaded_excerpts_are_exact_and_unmoved() -> None:
    corpus, queries = load_benchmark()
    for q in queries:
        for e in q.excerpts:
            assert not e.approximate
            assert corpus[e.doc_id].text[e.start : e.end] == e.text


def test_query_ids_follow_the_documented_rule() -> None:
    _, queries = load_benchmark()
    assert len(set(queries.ids)) == 472
    for q in queries:
        stem = q.doc_id.removesuffix(".md")
        assert q.id == stable_query_id(stem, q.text)  # no duplicate questions here


def test_cached_and_metadata_credits_the_source() -> None:
    corpus, queries = load_benchmark()
    again = load_benchmark("general")
    assert again[0] is corpus
    assert again[1] is queries
    assert queries.metadata["benchmark"] == "general"
    assert queries.metadata["corpus_hash"] == corpus.content_hash
    assert "Brandon Smith" in queries.metadata["credit"]
    assert "Chroma" in queries.metadata["credit"]


def test_license_and_credit_ship_with_the_data() -> None:
    assert "Brandon Smith" in (GENERAL / "LICENSE").read_text(encoding="utf-8")
    readme = (GENERAL / "README.md").read_text(encoding="utf-8")
    assert "Brandon Smith" in readme
    assert "Chroma" in readme
    assert "MIT" in readme


def test_unknown_benchmark_lists_available() -> None:
    with pytest.raises(UnknownBenchmark, match=r"unknown benchmark 'nope'.*general"):
        load_benchmark("nope")
    assert issubclass(UnknownBenchmark, ValueError)


def test_same_as_reading_the_files_directly() -> None:
    corpus, queries = load_benchmark()
    direct = Corpus.from_paths([GENERAL / "corpora"], name="general")
    assert direct.ids == corpus.ids
    assert direct.content_hash == corpus.content_hash
    assert direct == corpus
    loaded = QuerySet.load(GENERAL / "questions_df.csv", direct)
    assert loaded.queries == queries.queries
    assert loaded.content_hash == queries.content_hash


def test_round_trip_through_jsonl(tmp_path: Path) -> None:
    corpus, queries = load_benchmark()
    path = tmp_path / "general.jsonl"
    queries.save(path)
    back = QuerySet.load(path, corpus)
    assert back.queries == queries.queries
    assert back.metadata == queries.metadata


@pytest.mark.perf
def test_uncached_load_is_fast() -> None:
    load = benchmarks._load.__wrapped__
    load("general")  # warm the file system cache and imports
    best = min(_timed(lambda: load("general")) for _ in range(3))
    assert best < 1.0, f"loading the general benchmark took {best:.3f} s"


def _timed(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0
