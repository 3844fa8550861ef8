"""``chunkeval inspect`` and ``inspect_queries``: each measure against a
brute-force reference, the command, and the report sections."""

from __future__ import annotations

import itertools
import json
import random
import re

import numpy as np
import pytest

import pytest_chunkeval as chunkeval
from pytest_chunkeval.cli.main import main
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.quality.coverage import coverage_report, markdown_sections
from pytest_chunkeval.quality.duplicates import near_duplicate_pairs, shingles
from pytest_chunkeval.quality.excerpts import excerpt_report, occurrences
from pytest_chunkeval.quality.floor import bm25_available, bm25_floor
from pytest_chunkeval.quality.inspection import Inspection, inspect_queries
from pytest_chunkeval.quality.leakage import leakage, leakage_report
from pytest_chunkeval.quality.stopwords import STOP_WORDS
from pytest_chunkeval.quality.text import format_inspection
from pytest_chunkeval.reporting.html import html_report
from pytest_chunkeval.reporting.json_report import json_report
from pytest_chunkeval.tokenizers.base import get_tokenizer

VOCAB = [
    "the",
    "of",
    "what",
    "is",
    "cat",
    "dog",
    "sleeps",
    "barks",
    "red",
    "moon",
    "mars",
    "2019",
    "rate",
    "fee",
    "Fee",
]


def _brute_leakage(question: str, excerpts: list[str]) -> float:
    asked = []
    for w in re.findall(r"\w+", question.lower()):
        if w not in STOP_WORDS and w not in asked:
            asked.append(w)
    if not asked:
        return float("nan")
    pool = " ".join(excerpts).lower()
    found = [w for w in asked if re.search(rf"(?<!\w){re.escape(w)}(?!\w)", pool)]
    return len(found) / len(asked)


def test_leakage_matches_a_brute_force_count() -> None:
    rng = random.Random(7)
    for _ in range(300):
        question = " ".join(rng.choices(VOCAB, k=rng.randint(1, 8))) + "?"
        excerpts = [
            " ".join(rng.choices(VOCAB, k=rng.randint(1, 10))) + "."
            for _ in range(rng.randint(1, 3))
        ]
        got, want = leakage(question, excerpts), _brute_leakage(question, excerpts)
        assert (np.isnan(got) and np.isnan(want)) or got == pytest.approx(want)


def test_leakage_counts_words_not_substrings() -> None:
    # "cat" inside "category" is no leak; case is ignored; stop words are not counted
    assert leakage("What is the cat's Fee?", ["A category of fees."]) == 0.0
    assert leakage("What is the cat's Fee?", ["The fee of a cat."]) == 1.0
    assert np.isnan(leakage("What is it?", ["anything"]))


def _queries(corpus: Corpus, items: list[tuple[str, str, list[str]]]) -> QuerySet:
    out = []
    for qid, question, sentences in items:
        excerpts = []
        for s in sentences:
            doc = next(d for d in corpus if s in d.text)
            start = doc.text.index(s)
            excerpts.append(Excerpt(s, doc.id, start, start + len(s)))
        out.append(Query(qid, question, tuple(excerpts), excerpts[0].doc_id))
    return QuerySet(out, source="test.jsonl").validated(corpus)


def test_leakage_report_distribution_and_leakiest() -> None:
    corpus = Corpus.from_mapping({"a.md": "Cats sleep all day. Dogs bark at night."})
    queries = _queries(
        corpus,
        [
            ("q1", "Do cats sleep?", ["Cats sleep all day."]),
            ("q2", "Which animal is noisy after dark?", ["Dogs bark at night."]),
            ("q3", "When do dogs rest?", ["Dogs bark at night."]),
        ],
    )
    report = leakage_report(queries, show=2)
    want = [_brute_leakage(q.text, [e.text for e in q.excerpts]) for q in queries]
    assert report["values"] == {
        q.id: pytest.approx(v) for q, v in zip(queries, want, strict=True)
    }
    assert report["distribution"]["mean"] == pytest.approx(np.mean(want))
    assert [q["id"] for q in report["leakiest"]] == ["q1", "q3"]
    assert report["leakiest"][0]["leaked"] == ["cats", "sleep"]
    assert sum(report["histogram"]["counts"]) == 3


def _brute_pairs(texts: list[str], threshold: float) -> set[tuple[int, int]]:
    sets = [shingles(t) for t in texts]
    out = set()
    for i, j in itertools.combinations(range(len(texts)), 2):
        union = len(sets[i] | sets[j])
        if union and len(sets[i] & sets[j]) / union >= threshold - 1e-9:
            out.add((i, j))
    return out


@pytest.mark.parametrize("threshold", [0.8, 0.5, 1.0, 0.34])
def test_near_duplicates_match_all_pairs(threshold: float) -> None:
    rng = random.Random(threshold)
    base = [" ".join(rng.choices(VOCAB, k=rng.randint(2, 12))) for _ in range(60)]
    texts = list(base)
    for t in base[:40]:  # near copies: one word changed, dropped or added
        words = t.split()
        i = rng.randrange(len(words))
        choice = rng.randrange(3)
        if choice == 0:
            words[i] = rng.choice(VOCAB)
        elif choice == 1 and len(words) > 1:
            del words[i]
        else:
            words.insert(i, rng.choice(VOCAB))
        texts.append(" ".join(words))
    texts += ["", "cat", "cat", "the the"]
    got = near_duplicate_pairs(texts, threshold)
    assert {(a, b) for a, b, _ in got} == _brute_pairs(texts, threshold)
    assert all(a < b for a, b, _ in got)
    assert [s for *_, s in got] == sorted((s for *_, s in got), reverse=True)


def test_near_duplicates_refuse_a_bad_threshold() -> None:
    with pytest.raises(ValueError, match="threshold"):
        near_duplicate_pairs(["a"], 0)


def test_occurrences_count_overlapping_copies() -> None:
    corpus = Corpus.from_mapping({"a": "aaaa ab ab", "b": "ab"})
    for text in ("aa", "ab", "a", "zz"):
        want = sum(len(re.findall(f"(?={re.escape(text)})", d.text)) for d in corpus)
        assert occurrences(corpus, text) == want


def test_excerpt_report_counts() -> None:
    row = "| total | 42 |"
    corpus = Corpus.from_mapping(
        {"a.md": f"Intro text here.\n{row}\nMore.\n{row}\n", "b.md": "Other. More."}
    )
    queries = _queries(
        corpus,
        [
            ("q1", "What is the total?", [row]),
            ("q2", "What is the intro?", ["Intro text here.", "Other."]),
            ("q3", "Where is the table total?", [row]),
        ],
    )
    tokenizer = get_tokenizer()
    report = excerpt_report(corpus, queries, tokenizer)
    assert report["count"] == 4
    assert report["per_question"] == {"1": 2, "2": 1}
    assert report["several"] == 1
    assert report["length_chars"]["max"] == len("Intro text here.")
    assert report["length_chars"]["min"] == len("Other.")
    counts = [tokenizer.count(e.text) for q in queries for e in q.excerpts]
    assert report["length"]["max"] == max(counts)
    assert report["length"]["mean"] == pytest.approx(sum(counts) / len(counts))
    rep = report["repeated_in_corpus"]
    assert (rep["excerpts"], rep["texts"], rep["questions"]) == (2, 1, 2)
    assert rep["most"] == [{"text": row, "occurrences": 2}]
    assert report["shared_by_questions"] == {"texts": 1, "questions": 2}

    # The repeated texts are listed under the line that counts them, not under
    # the next one ("texts shared by several questions").
    size = {"questions": 3, "with_excerpts": 3, "excerpts": 4, "documents": 2}
    text = format_inspection(Inspection("c", "q", size, {"excerpts": report}))
    lines = text.splitlines()
    repeated = next(i for i, s in enumerate(lines) if "more than once" in s)
    shared = next(i for i, s in enumerate(lines) if "shared by several" in s)
    listed = next(i for i, s in enumerate(lines) if s.strip().startswith("x2 "))
    assert repeated < listed < shared


MARKDOWN = """Preface line.

# Title

Intro.

## Install

```sh
# not a heading
pip install x
```

## Use

Call it.
### Details
Fine print.
"""


def test_markdown_sections_skip_fenced_code() -> None:
    sections = markdown_sections(MARKDOWN)
    assert [t for *_, t in sections] == [
        "(before the first heading)",
        "Title",
        "Install",
        "Use",
        "Details",
    ]
    assert sections[0][0] == 0
    assert sections[-1][1] == len(MARKDOWN)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(sections))
    assert markdown_sections("no heading\nhere") == []


def test_coverage_matches_a_character_level_reference() -> None:
    rng = random.Random(3)
    docs = {"guide.md": MARKDOWN, "plain.txt": "Just text. " * 20, "empty.md": "# T\n"}
    corpus = Corpus.from_mapping(docs)
    items = []
    for n in range(12):
        doc = rng.choice(["guide.md", "plain.txt"])
        text = docs[doc]
        start = rng.randrange(len(text) - 5)
        end = rng.randint(start + 1, min(len(text), start + 30))
        items.append(
            Query(f"q{n}", f"Q {n}?", (Excerpt(text[start:end], doc, start, end),), doc)
        )
    queries = QuerySet(items).validated(corpus)
    report = coverage_report(corpus, queries, show=100)
    # reference: mark every excerpt character, then look at each section
    marked = {d: np.zeros(len(t), bool) for d, t in docs.items()}
    for q in queries:
        for e in q.excerpts:
            marked[e.doc_id][e.start : e.end] = True
    uncovered = [
        (d, title)
        for d, text in docs.items()
        for start, end, title in markdown_sections(text)
        if not marked[d][start:end].any()
    ]
    assert sorted(
        (s["doc_id"], s["title"]) for s in report["largest_uncovered"]
    ) == sorted(uncovered)
    assert report["sections"] == sum(len(markdown_sections(t)) for t in docs.values())
    asked = {e.doc_id for q in queries for e in q.excerpts}
    assert report["documents_without_questions"] == [d for d in docs if d not in asked]
    counts = {d["doc_id"]: d["questions"] for d in report["most_questions"]}
    assert counts == {d: sum(q.doc_id == d for q in queries) for d in asked}


@pytest.mark.skipif(not bm25_available(), reason="needs the bm25 extra")
def test_bm25_floor_is_the_share_with_recall_above_zero() -> None:
    corpus, queries = chunkeval.load_benchmark("general")
    subset = QuerySet(queries.queries[:40], source="first 40")
    floor = bm25_floor(corpus, subset)
    for k in (1, 5):
        result = chunkeval.evaluate(
            "recursive:200:0", corpus, subset, store="bm25", k=k
        )
        assert floor["found"][str(k)] == pytest.approx(
            np.mean(result.values("recall") > 0)
        )


def test_docs_bm25_floor_is_the_commands(pytestconfig: pytest.Config) -> None:
    """docs/query-quality.md's BM25 floor row is what `chunkeval inspect --benchmark
    general` prints (it showed an older run's 62.5% / 88.8%)."""
    if not bm25_available():
        pytest.skip("the bm25 extra is not installed")
    corpus, queries = chunkeval.load_benchmark("general")
    found = bm25_floor(corpus, queries)["found"]
    doc = (pytestconfig.rootpath / "docs" / "query-quality.md").read_text("utf-8")
    row = next(s for s in doc.splitlines() if s.startswith("| BM25 floor (recall"))
    assert row == (
        f"| BM25 floor (recall > 0) | k = 1: {100 * found['1']:.1f}%, "
        f"k = 5: {100 * found['5']:.1f}% |"
    )


def test_bm25_floor_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import pytest_chunkeval.quality.floor as floor

    monkeypatch.setattr(floor, "bm25_available", lambda: False)
    corpus = Corpus.from_mapping({"a": "x y"})
    got = floor.bm25_floor(corpus, QuerySet([]))
    assert "pip install 'pytest-chunkeval[bm25]'" in got["unavailable"]


def test_inspect_queries_is_public_and_round_trips() -> None:
    corpus, queries = chunkeval.load_benchmark("general")
    inspection = chunkeval.inspect_queries(corpus, queries, bm25=False, show=3)
    assert inspection.size == {
        "questions": 472,
        "with_excerpts": 472,
        "excerpts": 790,
        "documents": 5,
    }
    # the bundled benchmark's repeated excerpts (docs/concepts.md: 97 of 790)
    assert inspection.part("excerpts")["repeated_in_corpus"]["excerpts"] == 97
    assert inspection.part("excerpts")["several"] == 188
    assert inspection.part("bm25") is None
    data = json.loads(json.dumps(inspection.to_json()))
    assert Inspection.from_json(data) == inspection
    with pytest.raises(KeyError, match="measures"):
        inspection.part("nope")


def test_the_reports_carry_an_inspection_section() -> None:
    corpus = Corpus.from_mapping({"a.md": "# A\nCats sleep.\n# B\nDogs bark."})
    queries = _queries(corpus, [("q1", "Do cats sleep?", ["Cats sleep."])])
    data = inspect_queries(corpus, queries, bm25=False).to_json()
    page = html_report(inspections=[data])
    assert '<section class="inspection">' in page
    assert "Lexical leakage" in page
    assert "No results and no history" not in page
    assert json.loads(json_report([], [data]))["inspections"] == [data]
    assert "inspections" not in json.loads(json_report([]))


def test_cli_inspect_prints_and_writes(tmp_path, capsys) -> None:
    out, page = tmp_path / "i.json", tmp_path / "i.html"
    code = main(
        [
            "inspect",
            "--benchmark",
            "general",
            "--no-bm25",
            "--show",
            "2",
            "--json",
            str(out),
            "--html",
            str(page),
            "--cache-dir",
            str(tmp_path / "c"),
        ]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "lexical leakage" in text
    assert "188 questions with several" in text
    data = json.loads(out.read_text())
    assert data["chunkeval_inspection"] == 1
    assert len(data["leakage"]["leakiest"]) == 2
    assert "Query set" in page.read_text()


@pytest.mark.parametrize("flag", [["--show", "-1"], ["--show", "x"]])
def test_cli_inspect_refuses_bad_values(flag, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["inspect", "--benchmark", "general", *flag])
    assert exc.value.code == 2
    assert "expected an integer >= 0" in capsys.readouterr().err


def test_the_session_reports_carry_the_inspection(pytester: pytest.Pytester) -> None:
    from support.plugin_project import FAST, write_project

    write_project(pytester.path)
    pytester.makepyfile(
        """
        def test_eval(chunkeval):
            chunkeval.evaluate("recursive:30:0")
        """
    )
    result = pytester.runpytest_subprocess(
        *FAST,
        "--chunkeval-inspect",
        "--chunkeval-json",
        "out.json",
        "--chunkeval-html",
        "out.html",
    )
    result.assert_outcomes(passed=1)
    data = json.loads((pytester.path / "out.json").read_text())
    [inspection] = data["inspections"]
    assert inspection["size"]["questions"] == 6
    assert inspection["leakage"]["distribution"]["n"] == 6
    assert '<section class="inspection">' in (pytester.path / "out.html").read_text()
    # without the switch, no inspection
    result = pytester.runpytest_subprocess(*FAST, "--chunkeval-json", "plain.json")
    result.assert_outcomes(passed=1)
    assert "inspections" not in json.loads((pytester.path / "plain.json").read_text())
