"""Graph-RAG relationship evaluation with a callable extractor on a corpus whose
relationships are known by construction (every sentence states one)."""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.relationships_project import (
    DOC,
    FACTS,
    SENTENCES,
    TEXT,
    by_sentence,
    excerpt,
    write_cli_project,
)

from pytest_chunkeval.chunkers import as_chunker
from pytest_chunkeval.core.metrics import REL_METRICS
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.llm.answers import AnswerCache
from pytest_chunkeval.relationships.evaluate import evaluate_relationships
from pytest_chunkeval.relationships.extraction import ExtractionStats, extract_texts
from pytest_chunkeval.relationships.extractors import (
    CallableExtractor,
    Extracted,
    ExtractionError,
    TextExtraction,
    locate_relationships,
)
from pytest_chunkeval.relationships.gold import GoldError, gold_relationships
from pytest_chunkeval.relationships.graph import Relationship, RelationshipGraph
from pytest_chunkeval.relationships.normalize import normalize_name
from pytest_chunkeval.relationships.scoring import matches, relationship_scores
from pytest_chunkeval.relationships.specs import get_extractor

_FACT = re.compile(r"([A-Z]\w+) (founded|acquired|joined) ([A-Z]\w+)\.")


class Counting:
    """The extractor of the corpus: one relationship per whole sentence."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, text: str) -> list[tuple[str, str, str, str]]:
        self.texts.append(text)
        return [(m[1], m[2], m[3], m[0]) for m in _FACT.finditer(text)]


class TableEmbedder:
    """Relationship texts one-hot; questions a chosen mix: the ranking is known."""

    identity = "table@1"

    def __init__(self, questions: dict[str, dict[str, float]]) -> None:
        self.rels = [f"{s} {p} {o}" for s, p, o in FACTS]
        self.questions = questions

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.full((len(texts), len(self.rels)), 1e-3, dtype=np.float32)
        for i, text in enumerate(texts):
            if text in self.rels:
                out[i, self.rels.index(text)] = 1.0
            else:
                for rel, weight in self.questions[text].items():
                    out[i, self.rels.index(rel)] = weight
        return out / np.linalg.norm(out, axis=1, keepdims=True)


QUESTIONS = {
    "Who founded Acme?": {"Alice founded Acme": 0.9, "Carol joined Acme": 0.5},
    "Who acquired Orbit?": {"Dave founded Orbit": 0.9, "Erin acquired Orbit": 0.6},
    "What happened to Zeta?": {"Bob acquired Zeta": 0.9, "Alice founded Acme": 0.5},
}


@pytest.fixture
def corpus() -> Corpus:
    return Corpus.from_mapping({DOC: TEXT})


@pytest.fixture
def queries() -> QuerySet:
    return QuerySet(
        [
            Query("q1", "Who founded Acme?", (excerpt(SENTENCES[0]),), DOC),
            Query("q2", "Who acquired Orbit?", (excerpt(SENTENCES[4]),), DOC),
            Query(
                "q3",
                "What happened to Zeta?",
                (excerpt(SENTENCES[1]), excerpt(SENTENCES[5])),
                DOC,
            ),
        ]
    )


def run(
    corpus: Corpus,
    queries: QuerySet,
    tmp_path: Path,
    chunker: Any = None,
    extractor: Any = None,
    **kwargs: Any,
) -> Any:
    options: dict[str, Any] = {
        "k": 2,
        "embedder": TableEmbedder(QUESTIONS),
        "store": "exact",
        "unit": "char",
        "cache": tmp_path / "cache",
    }
    options.update(kwargs)
    return evaluate_relationships(
        chunker or as_chunker(by_sentence, "by-sentence"),
        corpus,
        queries,
        extractor=extractor or CallableExtractor(Counting(), name="facts"),
        **options,
    )


# ------------------------------------------------------------------ normalization


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Marie Curie", "marie  curie"),
        ("Marie-Curie.", "marie curie"),
        ("ＡＣＭＥ", "acme"),  # full-width letters (NFKC)
        ("is_located_in", "Is located in"),
        ("  Straße ", "STRASSE"),  # case folding
    ],
)
def test_normalized_names_agree(a: str, b: str) -> None:
    assert normalize_name(a) == normalize_name(b)


@pytest.mark.parametrize(("a", "b"), [("the EU", "EU"), ("Acme", "Acme Inc")])
def test_names_that_stay_apart(a: str, b: str) -> None:
    assert normalize_name(a) != normalize_name(b)


# ------------------------------------------------------------- evidence location


def test_evidence_located_exactly_and_up_to_whitespace() -> None:
    text = "Intro.  Alice founded\nAcme. Bob left."
    found = locate_relationships(
        text,
        [
            ("Alice", "founded", "Acme", "Alice founded Acme."),  # whitespace differs
            ("Bob", "left", "Acme", ["Bob left."]),
        ],
        where="chunk 1",
    )
    spans = [r.evidence for r in found.relationships]
    assert spans == [((8, 27),), ((28, 37),)]
    assert text[8:27] == "Alice founded\nAcme."
    assert found.not_verbatim == 0


def test_not_verbatim_evidence_is_dropped_and_counted() -> None:
    found = locate_relationships(
        "Alice founded Acme in 1990.",
        [
            ("Alice", "founded", "Acme", "Alice founded Acme in 1990."),
            ("Alice", "started", "Acme", "Alice started Acme."),  # reworded
            ("Acme", "founded in", "1990", ["Acme in 1990.", "Not there."]),
        ],
        where="chunk 1",
    )
    assert [r.predicate for r in found.relationships] == ["founded"]
    assert found.not_verbatim == 2


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ("Alice founded Acme", "must return a list"),
        ([("Alice", "founded", "Acme")], "expected a (subject, predicate"),
        ([("Alice", "founded", 3, "x")], "the object must be a string, got int"),
        ([("", "founded", "Acme", "x")], "the subject '' is empty"),
        ([("A", "b", "C", 42)], "evidence must be a string or a list"),
    ],
)
def test_answers_of_the_wrong_shape_are_errors(answer: Any, message: str) -> None:
    with pytest.raises(ExtractionError, match="chunk 7") as info:
        locate_relationships("text", answer, where="chunk 7")
    assert message in str(info.value)


def test_cached_value_is_checked_against_its_text() -> None:
    good = TextExtraction((Extracted("a", "b", "c", ((0, 4),)),), 1)
    assert TextExtraction.from_json(good.to_json(), 4) == good
    with pytest.raises(ValueError, match="outside the text"):
        TextExtraction.from_json(good.to_json(), 3)
    for bad in ({}, {"relationships": [["a", "b", "c", []]], "not_verbatim": 0}):
        with pytest.raises(ValueError, match=r"relationships|evidence"):
            TextExtraction.from_json(bad, 10)


# ------------------------------------------------------------------------- graph


def test_graph_merges_entities_and_keeps_every_evidence_span() -> None:
    graph = RelationshipGraph()
    graph.add("d", 100, [Extracted("Marie Curie", "won", "Nobel Prize", ((0, 10),))])
    graph.add("d", 200, [Extracted("marie curie", "Won", "nobel prize.", ((5, 9),))])
    graph.add("e", 0, [Extracted("MARIE CURIE", "won", "Nobel Prize", ((0, 10),))])
    graph.add("d", 300, [Extracted("Marie Curie", "married", "Pierre", ((0, 3),))])
    rels = graph.relationships()
    assert len(graph) == 2
    assert len(rels) == 2
    won, married = rels
    assert (won.subject, won.predicate, won.object) == (
        "Marie Curie",
        "won",
        "Nobel Prize",
    )
    assert won.evidence == (("d", 100, 110), ("d", 205, 209), ("e", 0, 10))
    assert married.subject == "Marie Curie"  # the entity's first surface form
    assert set(graph.entities) == {"marie curie", "nobel prize", "pierre"}
    assert won.text == "Marie Curie won Nobel Prize"


def test_matching_needs_subject_object_and_overlapping_evidence() -> None:
    gold = Relationship("Alice", "founded", "Acme", (("d", 0, 19),))
    assert matches(Relationship("alice", "started", "ACME", (("d", 18, 30),)), gold)
    assert not matches(Relationship("Alice", "founded", "Acme", (("d", 19, 30),)), gold)
    assert not matches(Relationship("Alice", "founded", "Acme", (("e", 0, 19),)), gold)
    assert not matches(Relationship("Acme", "founded", "Alice", (("d", 0, 19),)), gold)
    assert relationship_scores([], [gold]) == (0.0, 0.0)
    recall, precision = relationship_scores([gold], [])
    assert math.isnan(recall)
    assert math.isnan(precision)


# ----------------------------------------------------------- metrics by hand


def test_every_metric_against_a_hand_computation(
    corpus: Corpus, queries: QuerySet, tmp_path: Path
) -> None:
    result = run(corpus, queries, tmp_path)
    n = [len(s) for s in SENTENCES]  # characters of each sentence (char unit)
    # q1 retrieves Alice (gold) then Carol; q2 Dave then Erin (gold);
    # q3 Bob (gold) then Alice; q3's gold also holds Frank, not retrieved.
    hand = {
        "q1": {
            "rel_recall": 1 / 1,
            "rel_precision": 1 / 2,
            "evidence_recall": n[0] / n[0],
            "evidence_precision": n[0] / (n[0] + n[2]),
            "evidence_iou": n[0] / (n[0] + n[2]),
            "evidence_f1": 2 * n[0] / (n[0] + n[0] + n[2]),
            "evidence_precision_omega": 1.0,
        },
        "q2": {
            "rel_recall": 1 / 1,
            "rel_precision": 1 / 2,
            "evidence_recall": 1.0,
            "evidence_precision": n[4] / (n[3] + n[4]),
            "evidence_iou": n[4] / (n[3] + n[4]),
            "evidence_f1": 2 * n[4] / (n[4] + n[3] + n[4]),
            "evidence_precision_omega": 1.0,
        },
        "q3": {
            "rel_recall": 1 / 2,
            "rel_precision": 1 / 2,
            "evidence_recall": n[1] / (n[1] + n[5]),
            "evidence_precision": n[1] / (n[1] + n[0]),
            "evidence_iou": n[1] / (n[1] + n[5] + n[1] + n[0] - n[1]),
            "evidence_f1": 2 * n[1] / (n[1] + n[5] + n[1] + n[0]),
            "evidence_precision_omega": 1.0,
        },
    }
    assert tuple(result.metrics) == REL_METRICS
    for record in result.queries:
        for metric, value in hand[record.id].items():
            assert record.metric(metric) == pytest.approx(value), (record.id, metric)
    for metric in REL_METRICS:
        values = [hand[q][metric] for q in ("q1", "q2", "q3")]
        assert result.mean(metric) == pytest.approx(np.mean(values))
        assert result.std(metric) == pytest.approx(np.std(values))
    q2 = next(q for q in result.queries if q.id == "q2")
    assert q2.first_relevant_rank == 2
    assert q2.details["retrieved_relationships"] == [
        ["Dave", "founded", "Orbit", False],
        ["Erin", "acquired", "Orbit", True],
    ]
    assert result.graph["relationships"] == 6
    assert result.graph["entities"] == 9
    assert result.config["retrieves"] == "relationships"
    # The chunk metrics are not measured: absent, never zero.
    assert all(
        q.scores["recall"] is None and q.scores["iou"] is None for q in result.queries
    )
    with pytest.raises(KeyError, match="unknown metric 'recall'"):
        result.mean("recall")


def test_a_sentence_behind_two_retrieved_relationships_counts_once(
    corpus: Corpus, tmp_path: Path
) -> None:
    sentence = SENTENCES[0]

    def two_from_one(text: str) -> list[tuple[str, str, str, str]]:
        if sentence not in text:
            return []
        return [
            ("Alice", "founded", "Acme", sentence),
            ("Acme", "has", "Alice", sentence),
        ]

    queries = QuerySet([Query("q1", "Who founded Acme?", (excerpt(sentence),), DOC)])
    result = run(
        corpus,
        queries,
        tmp_path,
        extractor=CallableExtractor(two_from_one, name="two"),
        embedder="hashing",
    )
    (record,) = result.queries
    assert record.retrieved_units == len(sentence)
    assert record.metric("evidence_precision") == 1.0
    # Both are gold too (the same extractor read the excerpt): both match.
    assert record.details["gold_relationships"] == [
        ["Alice", "founded", "Acme", True],
        ["Acme", "has", "Alice", True],
    ]
    assert record.metric("rel_precision") == 1.0


def test_evidence_precision_omega_counts_graph_spans_around_the_excerpt(
    corpus: Corpus, tmp_path: Path
) -> None:
    # The excerpt is half a sentence: the only evidence span over it is the whole
    # sentence, so Ω = that sentence.
    half = "Alice founded"
    queries = QuerySet([Query("q1", "Who founded Acme?", (excerpt(half),), DOC)])
    result = run(corpus, queries, tmp_path, embedder="hashing")
    omega = result.queries[0].metric("evidence_precision_omega")
    assert omega == pytest.approx(len(half) / len(SENTENCES[0]))


# ---------------------------------------------------- chunking and the gold set


def test_a_chunker_that_cuts_evidence_apart_scores_lower(
    corpus: Corpus, queries: QuerySet, tmp_path: Path
) -> None:
    common = {"k": 10, "embedder": "hashing"}
    whole = run(corpus, queries, tmp_path, **common)
    cut = run(corpus, queries, tmp_path, chunker="fixed:6:0", **common)
    assert whole.graph["relationships"] == len(FACTS)
    assert cut.graph["relationships"] < len(FACTS)
    assert whole.mean("rel_recall") == 1.0
    assert cut.mean("rel_recall") < whole.mean("rel_recall")
    assert cut.mean("evidence_recall") < whole.mean("evidence_recall")


def test_the_gold_set_does_not_depend_on_the_chunker(
    corpus: Corpus, queries: QuerySet, tmp_path: Path
) -> None:
    golds = []
    for chunker in (None, "fixed:6:0", "fixed:20:5", "recursive:30:0"):
        result = run(corpus, queries, tmp_path, chunker=chunker, embedder="hashing")
        golds.append([q.details["gold_relationships"] for q in result.queries])
        golds[-1] = [[g[:3] for g in gold] for gold in golds[-1]]
    assert all(g == golds[0] for g in golds)
    assert golds[0] == [
        [["Alice", "founded", "Acme"]],
        [["Erin", "acquired", "Orbit"]],
        [["Bob", "acquired", "Zeta"], ["Frank", "joined", "Zeta"]],
    ]
    direct = gold_relationships(
        queries,
        corpus,
        CallableExtractor(Counting(), name="facts"),
        cache=None,
        stats=ExtractionStats(),
    )
    assert [r.evidence for r in direct[2]] == [
        ((DOC, e.start, e.end),) for e in queries[2].excerpts
    ]


def test_gold_relationships_given_in_the_query_file(
    corpus: Corpus, tmp_path: Path
) -> None:
    path = tmp_path / "q.jsonl"
    lines = [
        {"chunkeval_queries": 1, "metadata": {}},
        {
            "id": "q1",
            "question": "Who founded Acme?",
            "doc_id": DOC,
            "excerpts": [{"text": SENTENCES[0]}],
            "relationships": [
                {"subject": "alice", "predicate": "created", "object": "ACME"},
                {
                    "subject": "Carol",
                    "predicate": "joined",
                    "object": "Acme",
                    "evidence": SENTENCES[2],
                },
            ],
        },
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    queries = QuerySet.load(path, corpus)
    extractor = Counting()
    result = run(
        corpus, queries, tmp_path, extractor=CallableExtractor(extractor, name="f")
    )
    assert set(extractor.texts) == set(SENTENCES)  # chunks only: no excerpt asked
    (record,) = result.queries
    assert record.details["gold_relationships"] == [
        ["alice", "created", "ACME", True],  # no evidence given: the excerpt's
        ["Carol", "joined", "Acme", True],
    ]
    assert record.metric("rel_recall") == 1.0
    saved = tmp_path / "saved.jsonl"
    queries.save(saved)
    assert QuerySet.load(saved, corpus) == queries
    assert (
        QuerySet.load(saved, corpus).content_hash
        != QuerySet(
            [Query("q1", "Who founded Acme?", queries[0].excerpts, DOC)]
        ).content_hash
    )


def test_stated_evidence_not_in_the_document_is_an_error(
    corpus: Corpus, tmp_path: Path
) -> None:
    path = tmp_path / "q.json"
    path.write_text(
        json.dumps(
            {
                "chunkeval_queries": 1,
                "queries": [
                    {
                        "id": "q9",
                        "question": "Who?",
                        "doc_id": DOC,
                        "excerpts": [{"text": SENTENCES[0]}],
                        "relationships": [
                            {
                                "subject": "A",
                                "predicate": "b",
                                "object": "C",
                                "evidence": "Nowhere in the text.",
                            }
                        ],
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    queries = QuerySet.load(path, corpus)
    with pytest.raises(GoldError, match=r"query 'q9'.*relationship 1.*Nowhere"):
        run(corpus, queries, tmp_path)


# ------------------------------------------------------------------------ caching


def test_unchanged_rerun_extracts_nothing_and_a_new_chunker_only_new_texts(
    corpus: Corpus, queries: QuerySet, tmp_path: Path
) -> None:
    extractor = Counting()
    wrapped = CallableExtractor(extractor, name="facts", version="3")
    first = run(corpus, queries, tmp_path, extractor=wrapped)
    asked = len(extractor.texts)
    assert asked == len(SENTENCES)  # excerpts are sentences too: asked once each
    # The gold pass reads the 4 excerpts first; the chunks then need 2 more.
    assert first.graph["gold_extraction"]["extracted"] == 4
    assert first.graph["extraction"]["extracted"] == 2
    assert first.graph["extraction"]["cached"] == 4

    again = run(corpus, queries, tmp_path, extractor=wrapped)
    assert len(extractor.texts) == asked
    assert again.graph["extraction"]["cached"] == len(SENTENCES)
    assert again.graph["gold_extraction"]["cached"] == 4
    assert again.to_json()["metrics"] == first.to_json()["metrics"]

    def pairs(text: str) -> list[str]:  # keeps sentence 1, joins the others
        joined = [" ".join(SENTENCES[i : i + 2]) for i in (1, 3)]
        return [SENTENCES[0], *joined, SENTENCES[5]]

    run(
        corpus, queries, tmp_path, chunker=as_chunker(pairs, "pairs"), extractor=wrapped
    )
    new = extractor.texts[asked:]
    assert sorted(new) == sorted([" ".join(SENTENCES[1:3]), " ".join(SENTENCES[3:5])])

    bumped = CallableExtractor(extractor, name="facts", version="4")
    run(corpus, queries, tmp_path, extractor=bumped)
    assert len(extractor.texts) == asked + 2 + len(SENTENCES)  # a new identity


def test_extract_texts_asks_each_distinct_text_once(tmp_path: Path) -> None:
    extractor = Counting()
    stats = ExtractionStats()
    out = extract_texts(
        CallableExtractor(extractor, name="x"),
        [SENTENCES[0], SENTENCES[1], SENTENCES[0]],
        cache=AnswerCache(tmp_path),
        where=lambda i: f"text {i}",
        stats=stats,
    )
    assert extractor.texts == SENTENCES[:2]
    assert out[0] == out[2]
    assert out[0] != out[1]
    assert (stats.texts, stats.extracted, stats.relationships) == (2, 2, 2)


def test_get_extractor_forms() -> None:
    def mine(text: str) -> list[Any]:
        return []

    assert get_extractor(mine).identity.startswith("callable:")
    # module, qualified name and (a local function) its line: never shared;
    # without a cache_version not a cache key (computed every time)
    assert re.fullmatch(
        r"callable:test_graph\.test_get_extractor_forms\.<locals>\.mine@L\d+",
        get_extractor(mine).identity,
    )
    assert get_extractor(mine).cache_identity is None
    mine.cache_version = "7"  # type: ignore[attr-defined]
    assert get_extractor(mine).cache_identity == get_extractor(mine).identity
    assert get_extractor(mine).identity.endswith("@7")
    first = get_extractor(lambda t: [])
    second = get_extractor(lambda t: [1])  # another line: another identity
    assert first.identity != second.identity
    wrapped = CallableExtractor(mine, name="m", version=2)
    assert get_extractor(wrapped) is wrapped
    assert wrapped.identity == "callable:m@2"
    assert get_extractor("llm:gpt-4o-mini").identity == "llm:gpt-4o-mini"
    with pytest.raises(ValueError, match="unknown extractor"):
        get_extractor("nope:1")
    with pytest.raises(TypeError):
        get_extractor(42)  # type: ignore[arg-type]


# ---------------------------------------------------------------- the surfaces


def test_evaluate_relationships_is_exported_at_the_package_root() -> None:
    import pytest_chunkeval

    assert pytest_chunkeval.evaluate_relationships is evaluate_relationships
    assert pytest_chunkeval.CallableExtractor is CallableExtractor
    assert "evaluate_relationships" in pytest_chunkeval.__all__


FACTS_MODULE = """
import re

_FACT = re.compile(r"([A-Z]\\w+) (founded|acquired|joined) ([A-Z]\\w+)\\.")


def extract(text):
    return [(m[1], m[2], m[3], m[0]) for m in _FACT.finditer(text)]


extract.version = "2"
"""


def test_cli_relationships_compares_chunkers(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    chunkeval_cli: Any,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "facts_cli.py").write_text(FACTS_MODULE, encoding="utf-8")
    write_cli_project(tmp_path)
    argv = [
        "relationships",
        "--corpus",
        DOC,
        "--queries",
        "q.jsonl",
        "--chunker",
        "recursive:30:0",
        "--chunker",
        "fixed:6:0",
        "--extractor",
        "python:facts_cli:extract",
        "--embedder",
        "hashing",
        "--store",
        "exact",
        "--k",
        "10",
        "--cache-dir",
        "cache",
        "--json",
        "out.json",
    ]
    assert chunkeval_cli(argv) == 0
    out = capsys.readouterr().out
    assert "extractor callable:facts_cli.extract@2" in out
    assert "Rel recall" in out
    assert "Evidence IoU" in out
    data = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    whole, cut = (d["metrics"]["rel_recall"]["mean"] for d in data)
    assert whole == 1.0
    assert cut < whole
    assert [d["config"]["chunker"] for d in data] == ["recursive:30:0", "fixed:6:0"]

    # A function without a version: asked every run, each text once per run.
    once = FACTS_MODULE.replace('extract.version = "2"', "ASKED = []")
    once = once.replace(
        "def extract(text):\n", "def extract(text):\n    ASKED.append(text)\n"
    )
    (tmp_path / "facts_once.py").write_text(once, encoding="utf-8")
    argv[argv.index("python:facts_cli:extract")] = "python:facts_once:extract"
    answers = len(list((tmp_path / "cache").rglob("*.ans")))
    assert chunkeval_cli(argv) == 0
    asked = sys.modules.pop("facts_once").ASKED
    out = capsys.readouterr().out
    assert "extractor callable:facts_once.extract," in out
    assert asked
    assert len(asked) == len(set(asked))  # the gold once for both chunkers
    assert "asked earlier in this run" in out
    assert len(list((tmp_path / "cache").rglob("*.ans"))) == answers  # none kept

    argv[argv.index("python:facts_once:extract")] = "python:facts_cli:missing"
    assert chunkeval_cli(argv) == 2
    assert "cannot load facts_cli:missing" in capsys.readouterr().err


def test_the_worked_example_in_the_docs_runs_and_prints_what_they_show(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    page = Path(__file__).parent.parent / "docs" / "relationships.md"
    text = page.read_text(encoding="utf-8")
    example = text.split("## A worked example", 1)[1]
    code = example.split("```python\n", 1)[1].split("```", 1)[0]
    shown = example.split("It prints:\n\n```text\n", 1)[1].split("```", 1)[0]
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    exec(compile(code, str(page), "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out == shown


def test_a_text_store_retrieves_relationships_without_an_embedder(
    corpus: Corpus, queries: QuerySet, tmp_path: Path
) -> None:
    pytest.importorskip("bm25s")
    result = run(corpus, queries, tmp_path, store="bm25", embedder="no-such-embedder")
    assert result.config["embedder"] is None
    # "Who founded Acme?" shares two words with "Alice founded Acme" only.
    q1 = next(q for q in result.queries if q.id == "q1")
    assert q1.details["retrieved_relationships"][0][:3] == ["Alice", "founded", "Acme"]
    assert q1.metric("rel_recall") == 1.0


def test_a_question_without_gold_relationships_is_left_out_not_zero(
    tmp_path: Path,
) -> None:
    text = TEXT + " The weather was mild that year."
    corpus = Corpus.from_mapping({DOC: text})
    weather = "The weather was mild that year."
    start = text.index(weather)
    queries = QuerySet(
        [
            Query("q1", "Who founded Acme?", (excerpt(SENTENCES[0]),), DOC),
            Query(
                "q-none",
                "How was the weather?",
                (Excerpt(weather, DOC, start, start + len(weather)),),
                DOC,
            ),
        ]
    )
    result = run(corpus, queries, tmp_path, embedder="hashing", k=len(FACTS))
    none = next(q for q in result.queries if q.id == "q-none")
    assert none.scores["rel_recall"] is None
    assert none.scores["rel_precision"] is None
    assert none.metric("evidence_recall") == 0.0  # no evidence covers it
    assert result.metrics["rel_recall"].n == 1
    assert result.metrics["evidence_recall"].n == 2
    assert result.mean("rel_recall") == 1.0
    assert result.graph["questions_without_gold"] == 1
    assert (
        json.loads(json.dumps(result.to_json()))["queries"][1]["scores"]["rel_recall"]
        is None
    )
