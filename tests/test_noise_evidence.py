"""The noise evidence a run records per question (engine/margins.py,
engine/search_cache.py, gate/files/questions.py): decisive and order margins, scored
search-cache entries, and the content hash that tells a question edited under
its id."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from pytest_chunkeval.engine.margins import decisive_margins, relative_gap
from pytest_chunkeval.engine.search_cache import SearchCache
from pytest_chunkeval.gate.files.questions import content_hash, valid_questions
from pytest_chunkeval.util.verified import CacheWarning


def _margins(
    scores: list[list[float]], texts: list[list[int]], depth: list[int]
) -> tuple[list[float], list[float]]:
    margin, order = decisive_margins(
        np.array(scores, dtype=np.float64),
        np.array(texts, dtype=np.int64),
        np.array(depth, dtype=np.int64),
    )
    return margin.tolist(), order.tolist()


def test_the_decisive_margin_is_against_the_first_lower_chunk_of_another_text() -> None:
    # rank 2 (text 0) is a copy of rank 1: it ties exactly and is no margin;
    # the first lower chunk of another text is rank 3 (0.5).
    margin, order = _margins([[0.9, 0.8, 0.8, 0.5]], [[1, 0, 0, 2]], [2])
    assert margin == [pytest.approx(0.3)]
    assert order == [pytest.approx(0.1)]  # the gap inside the top 2: 0.9 - 0.8


def test_no_lower_chunk_of_another_text_means_no_decisive_gap() -> None:
    margin, order = _margins([[0.9, 0.9, math.nan]], [[0, 0, -1]], [1])
    assert margin == [math.inf]
    assert order == [math.inf]


def test_gaps_are_relative_to_the_larger_score() -> None:
    assert relative_gap(0.5, 0.4) == pytest.approx(0.1)  # cosines: absolute
    assert relative_gap(20.0, 19.0) == pytest.approx(0.05)  # logits: relative


def test_a_scored_search_entry_round_trips_and_an_old_one_still_reads(
    tmp_path: Path,
) -> None:
    cache = SearchCache(tmp_path)
    ids = np.array([[3, 1, -1], [0, 2, 4]], dtype=np.int64)
    scores = np.array([[2.5, 1.25, math.nan], [0.5, 0.25, 0.125]])
    cache.put("a" * 64, ids, scores)
    found = cache.get_scored("a" * 64, 2, 3)
    assert found is not None
    assert found[0].tolist() == ids.tolist()
    assert found[1] is not None
    np.testing.assert_array_equal(found[1], scores)
    cache.put("b" * 64, ids)  # a search without scores: ids only, as before
    plain = cache.get_scored("b" * 64, 2, 3)
    assert plain is not None
    assert plain[1] is None
    got = cache.get("a" * 64, 2, 3)
    assert got is not None
    assert got.tolist() == ids.tolist()


def test_a_truncated_scored_entry_is_set_aside(tmp_path: Path) -> None:
    cache = SearchCache(tmp_path)
    cache.put("c" * 64, np.zeros((2, 2), np.int64), np.ones((2, 2)))
    (path,) = cache.entries()
    path.write_bytes(path.read_bytes()[:-4])
    with pytest.warns(CacheWarning, match="truncated"):
        assert cache.get_scored("c" * 64, 2, 2) is None


def test_the_content_hash_ignores_offsets_and_whitespace_not_words() -> None:
    base = content_hash("When?", "a.md", ["Mars has two moons."])
    assert content_hash("When?", "a.md", ["Mars  has\ntwo moons."]) == base
    assert content_hash("When?", "a.md", ["Mars has 2 moons."]) != base
    assert content_hash("When exactly?", "a.md", ["Mars has two moons."]) != base
    assert content_hash("When?", "b.md", ["Mars has two moons."]) != base


def test_a_baseline_question_record_with_a_non_finite_number_is_refused() -> None:
    assert valid_questions({"q1": {"hash": "ab", "margin": 0.01}}) == {
        "q1": {"hash": "ab", "margin": 0.01}
    }
    with pytest.raises(ValueError, match="margin"):
        valid_questions({"q1": {"hash": "ab", "margin": math.inf}})
    with pytest.raises(ValueError, match="malformed"):
        valid_questions({"q1": {"hash": 3}})


def test_a_vector_searchs_scores_round_trip_to_the_last_bit(tmp_path: Path) -> None:
    # the margins of a warm run are read from here: they must equal the cold
    # run's, computed in float64
    cache = SearchCache(tmp_path)
    scores = np.array([[0.1, 1 / 3, 0.7000000000000001]])
    cache.put("d" * 64, np.array([[0, 1, 2]], np.int64), scores)
    found = cache.get_scored("d" * 64, 1, 3)
    assert found is not None
    assert found[1] is not None
    assert found[1].tobytes() == scores.tobytes()


def _margins_rank_by_rank(
    scores: np.ndarray, texts: np.ndarray, depth: np.ndarray
) -> tuple[list[float], list[float]]:
    """docs/baselines.md's definition, one question and one rank at a time."""
    boundary, order = [], []
    for s, t, d in zip(scores.tolist(), texts.tolist(), depth.tolist(), strict=True):
        d = min(int(d), len(s))
        b = o = math.inf
        if d > 0 and not math.isnan(s[d - 1]):
            lower = [
                j
                for j in range(d, len(s))
                if t[j] >= 0 and t[j] not in t[:d] and not math.isnan(s[j])
            ]
            if lower:
                b = relative_gap(s[d - 1], s[lower[0]])
            inside = [
                relative_gap(s[i], s[i + 1])
                for i in range(d - 1)
                if t[i] != t[i + 1]
                and not math.isnan(s[i])
                and not math.isnan(s[i + 1])
            ]
            o = min([b, *inside])
        boundary.append(b)
        order.append(o)
    return boundary, order


@pytest.mark.parametrize("seed", range(5))
def test_margins_of_many_questions_at_once_are_the_rank_by_rank_ones(
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    n, m = 200, 9
    levels = np.array([-2.0, 0.1, 0.2, 0.5, 0.5000001, 3.0, 20.0])
    scores = np.sort(rng.choice(levels, size=(n, m)), axis=1)[:, ::-1].copy()
    texts = rng.integers(-1, 4, size=(n, m))  # few texts: many copies
    scores[texts < 0] = math.nan
    depth = rng.integers(-1, m + 2, size=n)
    got = decisive_margins(scores, texts, depth)
    expected = _margins_rank_by_rank(scores, texts, depth)
    assert got[0].tolist() == expected[0]
    assert got[1].tolist() == expected[1]
    assert 0 < np.isinf(got[0]).sum() < n  # both cases occur
