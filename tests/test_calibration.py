"""Judge calibration (``calibrate_judge``, ``chunkeval judge --calibrate``):
sentence labels, precision, recall and Cohen's kappa against brute-force
references, cached judgments, and the command."""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path

import pytest

import pytest_chunkeval as chunkeval
from pytest_chunkeval.cli.main import main
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.quality.calibration import (
    RAGAS_NOTE,
    cohen_kappa,
    pearson,
    sentence_labels,
)


def _kappa_reference(a: list[bool], b: list[bool]) -> float:
    n = len(a)
    table = dict.fromkeys(itertools.product((False, True), repeat=2), 0)
    for x, y in zip(a, b, strict=True):
        table[(x, y)] += 1
    observed = (table[(True, True)] + table[(False, False)]) / n
    expected = sum(
        (sum(table[(c, y)] for y in (False, True)) / n)
        * (sum(table[(x, c)] for x in (False, True)) / n)
        for c in (False, True)
    )
    return (observed - expected) / (1 - expected)


def test_kappa_matches_the_contingency_table() -> None:
    rng = random.Random(11)
    for _ in range(200):
        n = rng.randint(2, 40)
        a = [rng.random() < 0.4 for _ in range(n)]
        b = [x if rng.random() < 0.7 else not x for x in a]
        if len(set(a)) == 1 and len(set(b)) == 1 and a[0] == b[0]:
            continue  # chance agreement 1: undefined
        assert cohen_kappa(a, b) == pytest.approx(_kappa_reference(a, b))
    assert cohen_kappa([True, False], [True, False]) == 1.0
    assert cohen_kappa([True, True, False, False], [False, False, True, True]) == -1.0
    assert math.isnan(cohen_kappa([True], [True]))
    assert math.isnan(cohen_kappa([], []))


def test_pearson() -> None:
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert math.isnan(pearson([1, 1], [2, 3]))
    assert math.isnan(pearson([1], [1]))


TEXT = (
    "Cats sleep most of the day. Cats hunt at dawn. Dogs bark at night. "
    "Dogs fetch sticks. Fish swim in schools. Fish breathe through gills."
)


def test_sentence_labels() -> None:
    texts = {"a": TEXT}
    start = TEXT.index("Dogs bark")
    retrieved = [("a", 0, TEXT.index("Fish swim"))]
    judged = [("a", 0, 10)]  # inside the first sentence
    truth = [("a", start, start + 5)]
    labels = sentence_labels(retrieved, judged, truth, texts)
    assert labels == [
        ("Cats sleep most of the day.", True, False),
        ("Cats hunt at dawn.", False, False),
        ("Dogs bark at night.", False, True),
        ("Dogs fetch sticks.", False, False),
    ]


def _dataset() -> tuple[Corpus, QuerySet]:
    corpus = Corpus.from_mapping({"a.md": TEXT})

    def q(qid: str, question: str, sentence: str) -> Query:
        s = TEXT.index(sentence)
        return Query(
            qid, question, (Excerpt(sentence, "a.md", s, s + len(sentence)),), "a.md"
        )

    queries = QuerySet(
        [
            q("q1", "When do cats hunt?", "Cats hunt at dawn."),
            q("q2", "What do dogs fetch?", "Dogs fetch sticks."),
            q("q3", "How do fish breathe?", "Fish breathe through gills."),
            Query("q4", "A question without excerpts", (), ""),
        ]
    )
    return corpus, queries.validated(corpus)


CALLS: list[str] = []


def keyword_judge(question: str, context: str) -> list[str]:
    """The keyword judge of docs/judged.md."""
    CALLS.append(question)
    words = {w.lower().strip("?") for w in question.split() if len(w) > 3}
    return [s for s in context.split(". ") if words & set(s.lower().split())]


chunkeval.register_judge("test-keywords", keyword_judge, version="1")


def test_calibration_against_a_brute_force_count(tmp_path: Path) -> None:
    corpus, queries = _dataset()
    options = {"embedder": "hashing", "store": "exact", "k": 2, "cache": tmp_path}
    cal = chunkeval.calibrate_judge(
        "test-keywords", corpus, queries, chunker="sentence:8", **options
    )
    result = chunkeval.evaluate(
        "sentence:8",
        corpus,
        QuerySet(queries.queries[:3]),
        judge="test-keywords",
        **options,
    )
    labels = [
        (j, t)
        for r in result.queries
        for _, j, t in sentence_labels(
            r.retrieved, r.details["judged"], r.excerpts, {"a.md": TEXT}
        )
    ]
    tp = sum(j and t for j, t in labels)
    fp = sum(j and not t for j, t in labels)
    fn = sum(t and not j for j, t in labels)
    assert cal.counts == {
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": len(labels) - tp - fp - fn,
    }
    assert cal.questions == 3  # q4 has no excerpt
    assert cal.precision == pytest.approx(tp / (tp + fp))
    assert cal.recall == pytest.approx(tp / (tp + fn))
    assert cal.kappa == pytest.approx(
        _kappa_reference([j for j, _ in labels], [t for _, t in labels])
    )
    assert len(cal.disagreements) == fp + fn
    assert cal.to_json()["note"] == RAGAS_NOTE


def test_judgments_are_cached(tmp_path: Path) -> None:
    corpus, queries = _dataset()
    options = {"embedder": "hashing", "store": "exact", "k": 2, "cache": tmp_path}
    CALLS.clear()
    first = chunkeval.calibrate_judge("test-keywords", corpus, queries, **options)
    asked = len(CALLS)
    assert asked == 3
    again = chunkeval.calibrate_judge("test-keywords", corpus, queries, **options)
    assert len(CALLS) == asked  # every judgment came from the answer cache
    assert again.counts == first.counts


def test_cli_judge_calibrate(tmp_path: Path, capsys) -> None:
    _corpus, queries = _dataset()
    (tmp_path / "a.md").write_text(TEXT, encoding="utf-8")
    queries.save(tmp_path / "q.jsonl")
    out = tmp_path / "cal.json"
    base = [
        "judge",
        "--corpus",
        str(tmp_path / "a.md"),
        "--queries",
        str(tmp_path / "q.jsonl"),
        "--judge",
        "test-keywords",
        "--embedder",
        "hashing",
        "--store",
        "exact",
        "--cache-dir",
        str(tmp_path / "c"),
    ]
    assert main([*base, "--calibrate", "--json", str(out), "--show", "1"]) == 0
    text = capsys.readouterr().out
    assert "Cohen's kappa" in text
    assert "pairwise preferences" in text
    data = json.loads(out.read_text())
    assert data["questions"] == 3
    assert "kappa" in data
    assert main([*base, "--calibrate", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "--calibrate writes no query set" in capsys.readouterr().err
    assert main(base) == 2
    assert "--out FILE is required" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main([*base, "--calibrate", "--show", "-2"])
    assert exc.value.code == 2


def test_the_ground_truth_is_the_copy_the_metrics_scored(tmp_path: Path) -> None:
    """An excerpt whose text is also in another document: the retriever reached
    that copy, recall counts it (docs/concepts.md), and so does the calibration.
    It took the stored span as the only truth: the judge's correct label was a
    false positive (issue 34: 6 of 13,105 labels differed on the benchmark)."""
    a = "Fish swim in schools. Cats hunt at dawn. Birds sing loudly."
    b = "Cats hunt at dawn. Dogs bark at night."
    corpus = Corpus.from_mapping({"a.md": a, "b.md": b})
    s = a.index("Cats hunt")
    excerpt = Excerpt("Cats hunt at dawn.", "a.md", s, s + len("Cats hunt at dawn."))
    queries = QuerySet([Query("q1", "When do cats hunt?", (excerpt,), "a.md")])
    options = {"embedder": "hashing", "store": "exact", "k": 1, "cache": tmp_path}
    result = chunkeval.evaluate(
        "sentence:8", corpus, queries, judge="test-keywords", **options
    )
    [record] = result.queries
    assert record.retrieved == (("b.md", 0, len("Cats hunt at dawn.")),)
    assert record.scores["recall"] == 1.0  # the copy in b.md counts
    cal = chunkeval.calibrate_judge(
        "test-keywords", corpus, queries, chunker="sentence:8", **options
    )
    assert cal.counts == {"tp": 1, "fp": 0, "fn": 0, "tn": 0}
    assert cal.disagreements == ()
