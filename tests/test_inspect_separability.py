"""The minimum detectable effect of a query set and the configurations it cannot
tell apart, against brute-force references."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pytest_chunkeval as chunkeval
from pytest_chunkeval.cli.main import main
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.quality.separability import detectable, separability


def _brute_m(n: int, metrics: int, confidence: float) -> int:
    bound = (1 - confidence) / (2 * metrics)
    m = 1
    while (1 - m / n) ** n >= bound:
        m += 1
    return m


@pytest.mark.parametrize("n", [19, 36, 100, 472, 5000])
@pytest.mark.parametrize(("metrics", "confidence"), [(3, 0.95), (1, 0.95), (3, 0.99)])
def test_detectable_effect_matches_the_formula(n, metrics, confidence) -> None:
    names = ("recall", "precision", "iou")[:metrics]
    got = detectable(n, metrics=names, confidence=confidence)
    m = _brute_m(n, metrics, confidence)
    assert got["questions"] == m
    assert got["points"] == {name: pytest.approx(100 * m / n) for name in names}
    means = dict.fromkeys(names, 0.5)
    at_run = detectable(n, metrics=names, confidence=confidence, means=means)
    assert at_run["points"]["recall"] == pytest.approx(100 * m * 0.5 / n)


def test_the_documented_figures() -> None:
    # docs/baselines.md: 95% over three metrics, m = 5 for n from 19 to 472
    for n in (19, 36, 472):
        assert detectable(n)["questions"] == 5
    assert detectable(19)["points"]["recall"] == pytest.approx(26.3, abs=0.1)
    assert detectable(472)["points"]["recall"] == pytest.approx(1.06, abs=0.01)


def test_a_chunker_against_itself_cannot_be_told_apart(tmp_path: Path) -> None:
    corpus, queries = chunkeval.load_benchmark("general")
    subset = QuerySet(queries.queries[:60], source="first 60")
    options = {"embedder": "hashing", "store": "exact", "k": 5, "cache": tmp_path}
    got = separability(
        corpus, subset, ["recursive:200:0", "recursive:201:0", "fixed:40:0"], **options
    )
    pairs = {(p["a"], p["b"]): p for p in got["pairs"]}
    assert len(pairs) == 3
    results = {
        c: chunkeval.evaluate(c, corpus, subset, **options)
        for c in ("recursive:200:0", "recursive:201:0", "fixed:40:0")
    }
    m = _brute_m(60, 3, 0.95)
    for (a, b), pair in pairs.items():
        apart = False
        for metric, v in pair["metrics"].items():
            deltas = results[b].values(metric) - results[a].values(metric)
            assert v["delta"] == pytest.approx(float(np.mean(deltas)))
            assert v["low"] <= v["delta"] <= v["high"]
            mde = 100 * m * results[a].mean(metric) / 60
            assert v["detectable_points"] == pytest.approx(mde)
            if not (v["low"] <= 0 <= v["high"] and abs(100 * v["delta"]) < mde):
                apart = True
        assert pair["indistinguishable"] is (not apart)
    # the same chunking twice: every delta 0, the interval [0, 0]
    same = separability(
        corpus, subset, ["recursive:200:0", "recursive:200:0"], **options
    )["pairs"][0]
    assert same["indistinguishable"]
    assert all(
        v["delta"] == 0 == v["low"] == v["high"] for v in same["metrics"].values()
    )


def test_inspect_with_two_chunkers(tmp_path: Path, capsys) -> None:
    args = [
        "inspect",
        "--benchmark",
        "general",
        "--no-bm25",
        "--chunker",
        "recursive:200:0",
        "--chunker",
        "recursive:201:0",
        "--embedder",
        "hashing",
        "--store",
        "exact",
        "--cache-dir",
        str(tmp_path),
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "minimum detectable effect: 5 of 472 questions" in out
    assert "recursive:201:0 - recursive:200:0 (points): " in out
    assert "of 1 pair(s) this set cannot tell apart" in out
    assert "at the first configuration's mean" in out
