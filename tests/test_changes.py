"""What a baseline comparison says changed besides the metrics
(gate/comparison/changes.py, gate/files/documents.py) and the query set's lenient
placement (QuerySet.placeable)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from support.fake_results import make_result

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import (
    Excerpt,
    Query,
    QuerySetError,
    UnplacedQuery,
)
from pytest_chunkeval.gate.comparison.changes import (
    BaselineChanges,
    DocumentChange,
    baseline_changes,
    document_changes,
)
from pytest_chunkeval.gate.comparison.compare import GateError, compare
from pytest_chunkeval.gate.files.baseline import Baseline
from pytest_chunkeval.gate.files.documents import count_sentences, document_records
from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome

CORPUS = Corpus.from_mapping(
    {
        "a.md": "Dogs bark. Cats purr.\n\nParrots talk.",
        "b.md": "The Moon orbits the Earth.",
    }
)


def _query(qid: str, doc: str, text: str) -> Query:
    start = CORPUS[doc].text.index(text)
    return Query(
        qid, f"About {text}?", (Excerpt(text, doc, start, start + len(text)),), doc
    )


QUERIES = QuerySet(
    [
        _query("q-bark", "a.md", "Dogs bark."),
        _query("q-talk", "a.md", "Parrots talk."),
        _query("q-moon", "b.md", "The Moon orbits the Earth."),
    ]
)


def test_placeable_leaves_out_what_the_edited_corpus_lost() -> None:
    edited = Corpus.from_mapping(
        {"a.md": "A new first line.\n\nDogs bark. Cats purr.", "b.md": "Gone."}
    )
    with pytest.raises(QuerySetError, match="2 excerpt"):
        QUERIES.validated(edited)
    kept, unplaced = QUERIES.placeable(edited)
    assert [q.id for q in kept] == ["q-bark"]
    assert kept["q-bark"].excerpts[0].start == len("A new first line.\n\n")
    assert [(u.id, u.doc_id) for u in unplaced] == [
        ("q-talk", "a.md"),
        ("q-moon", "b.md"),
    ]
    assert (
        unplaced[0].reason == "excerpt 1 'Parrots talk.' not found (stored span 23-36)"
    )
    # Nothing left: the error as validated() raises it.
    with pytest.raises(QuerySetError, match="3 excerpt"):
        QUERIES.placeable(Corpus.from_mapping({"a.md": "x", "b.md": "y"}))
    # A removed document leaves its questions out too.
    _, gone = QUERIES.placeable(Corpus.from_mapping({"a.md": CORPUS["a.md"].text}))
    assert [u.id for u in gone] == ["q-moon"]
    assert "has no document 'b.md'" in gone[0].reason


def test_document_records_and_the_size_of_an_edit() -> None:
    records = document_records(CORPUS)
    assert records["a.md"]["chars"] == len(CORPUS["a.md"].text)
    assert records["a.md"]["sentences"] == 3
    assert len(records["a.md"]["hash"]) == 16
    assert count_sentences("Revenue was 21.4% in 2023. Up!") == 2
    after = {
        **records,
        "a.md": {**records["a.md"], "hash": "0" * 16, "chars": 61, "sentences": 4},
        "c.md": {"hash": "1" * 16, "chars": 10, "sentences": 1},
    }
    del after["b.md"]
    changes = document_changes(records, after)
    assert [(d.doc_id, d.status, d.size) for d in changes] == [
        ("a.md", "edited", f"+1 sentence / +{61 - len(CORPUS['a.md'].text)} chars"),
        ("b.md", "removed", f"{len(CORPUS['b.md'].text)} chars"),
        ("c.md", "added", "10 chars"),
    ]
    same = DocumentChange("x", "edited", 10, 10, 2, 2)
    assert same.size == "same length"
    assert DocumentChange("x", "edited", 10, 4, 3, 1).size == "-2 sentences / -6 chars"


def test_changes_as_data_and_text() -> None:
    before = dataclasses.replace(make_result([1.0, 1.0, 0.5]), corpus=CORPUS)
    baseline = Baseline.from_result(before, "test_x")
    edited = Corpus.from_mapping(
        {"a.md": CORPUS["a.md"].text + " More.", "b.md": CORPUS["b.md"].text}
    )
    now = dataclasses.replace(
        make_result([1.0, 0.5], config={"chunker": "recursive:250:0"}),
        corpus=edited,
        corpus_hash="e" * 64,
        unplaced=(UnplacedQuery("q002", "Q?", "a.md", "excerpt 1 'x' not found"),),
    )
    changes = baseline_changes(baseline, now)
    assert [str(c) for c in changes.config] == [
        "chunker: recursive:200:0 -> recursive:250:0"
    ]
    assert [str(d) for d in changes.documents] == ["a.md (+1 sentence / +6 chars)"]
    assert changes.edited_documents == {"a.md"}
    assert (changes.compared, changes.total, changes.scored) == (
        2,
        3,
        "scored 2 of 3 questions",
    )
    assert changes.added == changes.removed == ()
    assert changes.lines()[-1] == (
        "scored 2 of 3 questions; compared on the 2 questions both runs have"
    )
    data = json.loads(json.dumps(changes.to_json()))
    assert data["documents"][0]["size"] == "+1 sentence / +6 chars"
    assert data["unplaced"][0]["id"] == "q002"
    # One line for a report row, and the same facts back from JSON (xdist
    # payloads, `chunkeval report --results`).
    assert changes.line() == (
        "changed since the baseline: chunker: recursive:200:0 -> recursive:250:0; "
        "documents edited: a.md (+1 sentence / +6 chars); scored 2 of 3 "
        "questions; left out: q002 (a.md)"
    )
    assert BaselineChanges.from_json(data) == changes
    outcome = CheckOutcome("t.py::t", "b.json", "passed", changes=changes)
    assert CheckOutcome.from_json(json.loads(json.dumps(outcome.to_json()))) == (
        outcome
    )
    assert "changes" not in CheckOutcome("t.py::t", "b.json", "passed").to_json()
    assert BaselineChanges().line() == ""
    report = compare(baseline, now)
    assert report.changes == changes
    assert report.n == 2
    recall = next(c for c in report.checks if c.metric == "recall")
    assert recall.worse == (("q001", "b.md"),)


def test_a_unit_change_cannot_be_compared() -> None:
    baseline = Baseline.from_result(make_result([1.0, 0.5]), "test_x")
    with pytest.raises(GateError, match="unit: token -> char"):
        compare(baseline, make_result([1.0, 0.5], config={"unit": "char"}))


def test_a_schema_1_file_is_read_without_document_records() -> None:
    data = Baseline.from_result(make_result([1.0]), "test_x").to_json()
    data["chunkeval_baseline"] = 1
    del data["documents"]
    old = Baseline.from_json(data, "old.json")
    assert (old.schema, dict(old.documents)) == (1, {})
    changes = baseline_changes(
        old, dataclasses.replace(make_result([1.0]), corpus=CORPUS, corpus_hash="e")
    )
    assert changes.corpus_changed
    assert not changes.documents_known
    assert "which documents changed is unknown" in changes.lines()[0]


def test_mean_mode_compares_the_means_of_the_shared_questions() -> None:
    from pytest_chunkeval.gate.tolerances import GateSettings

    baseline = Baseline.from_result(make_result([1.0, 1.0, 0.0, 0.0]), "test_x")
    # q002 and q003 (recall 0) were removed: the shared questions did not move.
    now = make_result([1.0, 1.0], ids=["q000", "q001"])
    report = compare(baseline, now, GateSettings().override(mode="mean"))
    recall = next(c for c in report.checks if c.metric == "recall")
    assert (recall.before, recall.after, recall.status) == (1.0, 1.0, "ok")
    assert report.changes.removed == ("q002", "q003")
