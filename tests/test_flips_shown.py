"""What the reports' "What changed" shows beside a flipped question (issue 34): a
question gained shows the chunk that now holds its excerpt, with its rank; it
showed the top chunk, which can be unrelated, so a gained question read as
still missed."""

from __future__ import annotations

import dataclasses

from support.fake_results import make_result

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.gate.comparison.flips import Flip, Flips, flips
from pytest_chunkeval.gate.files.baseline import Baseline
from pytest_chunkeval.reporting.gate_report import changes_markdown
from pytest_chunkeval.reporting.rows import ReportEntry

TEXT = {"a.md": "Alpha holds the answer.", "b.md": "Beta is somewhere else."}


def _result(recall: list[float]) -> EvalResult:
    result = make_result(recall, docs=["a.md"] * len(recall))
    queries = [
        dataclasses.replace(
            q,
            retrieved=(("b.md", 0, 4), ("a.md", 0, 5)),
            first_relevant_rank=2 if r > 0 else 0,
        )
        for q, r in zip(result.queries, recall, strict=True)
    ]
    return dataclasses.replace(
        result, queries=queries, corpus=Corpus.from_mapping(TEXT)
    )


def test_a_gained_question_shows_the_chunk_holding_its_excerpt() -> None:
    baseline = Baseline.from_result(_result([1.0, 0.0]), "t")
    now = _result([0.0, 1.0])
    found = flips(baseline, now)
    assert found is not None
    [lost], [gained] = found.lost, found.gained
    assert (lost.instead, lost.rank, lost.holds) == ("Beta", 1, False)
    assert (gained.instead, gained.rank, gained.holds) == ("Alpha", 2, True)
    entry = ReportEntry(now.to_json(details=False), ("t::x",), flips=found)
    text = changes_markdown([entry])
    assert "| Change | Question | Excerpt | Retrieved now |" in text
    assert "| lost |" in text
    assert "| #1: Beta |" in text
    assert "| #2, holding the excerpt: Alpha |" in text
    assert Flips.from_json(found.to_json()) == found


def test_a_flip_of_an_earlier_report_reads_as_the_top_chunk() -> None:
    old = {
        "id": "q1",
        "question": "?",
        "doc_id": "a.md",
        "before": 0.0,
        "after": 1.0,
        "excerpt": "Alpha",
        "instead": "Beta",
    }
    flip = Flip.from_json(old)
    assert flip.shown == "#1: Beta"
