"""Metrics as data end to end (docs/architecture.md, "A metric"): each chunk
metric of the table has one formula, read by name; a question's record holds
every metric by name in ``scores`` (the old attributes still read, with a
deprecation warning, for one release); the result's JSON keeps its schema."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from pytest_chunkeval.core.metric_names import (
    PRESENCE,
    RANK,
    RELATIONSHIP,
    names,
)
from pytest_chunkeval.core.metrics import METRICS, QuerySpans, score_queries
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.engine.query_record import QueryRecord
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.reporting.table import CHUNK_COLUMNS

TEXT = "Dogs bark at the mailman. Cats sleep all day. Fish swim in schools."


def _result() -> tuple[Corpus, QuerySet]:
    corpus = Corpus.from_mapping({"doc.md": TEXT})
    start = TEXT.index("Cats")
    excerpt = Excerpt("Cats sleep all day.", "doc.md", start, start + 19)
    return corpus, QuerySet([Query("q", "Do cats sleep?", (excerpt,), "doc.md")])


def test_every_chunk_metric_of_the_table_has_one_formula() -> None:
    units = UnitMap(["d"], [TEXT], "char")
    excerpts = QuerySpans.from_lists([[("d", 26, 45)]], units)
    retrieved = QuerySpans.from_lists([[("d", 0, 25), ("d", 26, 45)]], units)
    scores = score_queries(units, excerpts, retrieved, 1)
    assert list(scores.values) == [*names(PRESENCE), *names(RANK)] == list(METRICS)
    assert scores.metric("recall")[0] == 1.0
    assert scores.metric("mrr")[0] == 0.5
    with pytest.raises(KeyError, match="unknown metric 'rel_recall'"):
        scores.metric("rel_recall")
    # the tables offer every chunk metric of the table, not a list of their own
    assert set(CHUNK_COLUMNS) == set(METRICS)


def test_a_record_holds_every_metric_by_name() -> None:
    corpus, queries = _result()
    record = score({"q": ["Cats sleep all day."]}, corpus, queries).queries[0]
    assert set(record.scores) == set(METRICS)
    assert record.scores["recall"] == record.metric("recall") == 1.0
    assert record.scores["precision_omega"] is None  # no chunking: absent
    assert np.isnan(record.metric("precision_omega"))
    assert not any(f.name in METRICS for f in dataclasses.fields(QueryRecord))


def test_the_old_attributes_read_with_a_deprecation_warning() -> None:
    corpus, queries = _result()
    record = score({"q": ["Cats sleep all day."]}, corpus, queries).queries[0]
    with pytest.warns(DeprecationWarning, match=r"record\.scores\['recall'\]"):
        assert record.recall == 1.0  # type: ignore[attr-defined]
    with pytest.raises(AttributeError, match="no attribute 'recal'"):
        record.recal  # type: ignore[attr-defined]  # noqa: B018


def test_the_json_keeps_its_schema_and_reads_old_records() -> None:
    corpus, queries = _result()
    result = score({"q": ["Cats sleep all day."]}, corpus, queries)
    data = result.queries[0].to_json()
    assert [m for m in data if m in METRICS] == list(METRICS)  # top-level keys
    assert "scores" not in data  # only metrics beyond the chunk metrics go there
    again = QueryRecord.from_json(json.loads(json.dumps(data)))
    assert again == result.queries[0]
    # a record written before the rank metrics existed: absent, never 0
    old = {k: v for k, v in data.items() if k not in names(RANK)}
    read = QueryRecord.from_json(old)
    assert read.scores["mrr"] is None
    assert read.scores["recall"] == 1.0
    # a relationship record: its metrics under "scores", the chunk ones null
    rel = dataclasses.replace(
        again,
        scores={**dict.fromkeys(METRICS), **dict.fromkeys(names(RELATIONSHIP), 0.5)},
    )
    written = rel.to_json()
    assert written["recall"] is None
    assert written["scores"] == dict.fromkeys(names(RELATIONSHIP), 0.5)
    assert QueryRecord.from_json(written) == rel


def test_every_judged_metric_of_the_table_has_its_formula() -> None:
    from pytest_chunkeval.core.metric_names import JUDGED
    from pytest_chunkeval.judging.relevance import Relevance
    from pytest_chunkeval.judging.score import ABSENT

    fields = {f.name for f in dataclasses.fields(Relevance)}
    assert set(names(JUDGED)) <= fields
    assert set(ABSENT.scores) == set(names(JUDGED))
