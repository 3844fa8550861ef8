"""The HTML report's question explorer: its data (small, deduplicated, escaped)
and how a session's results reach it. The browser side: test_html_browser.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from support.hostile import DOCS, QUESTIONS, hostile_dataset

from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.reporting.explorer import (
    CHUNK_CHARS,
    CONTEXT,
    explorer_blob,
    explorer_piece,
    script_json,
    status,
    with_baseline,
)
from pytest_chunkeval.reporting.html import html_report
from pytest_chunkeval.reporting.rows import ReportEntry
from pytest_chunkeval.run.outputs import SummaryRow


def _evaluate(chunker: str, tmp_path: Path) -> EvalResult:
    corpus, queries = hostile_dataset()
    return evaluate(
        chunker,
        corpus,
        queries,
        embedder=HashingEmbedder(),
        store="exact",
        k=2,
        cache=tmp_path / "cache",
        progress=False,
    )


def test_status_rule() -> None:
    assert [status(r) for r in (1.0, 0.999999999999, 0.5, 0.0, None)] == [
        0,
        0,
        1,
        2,
        3,
    ]


def test_piece_keeps_text_around_excerpts_and_of_retrieved_chunks(
    tmp_path: Path,
) -> None:
    result = _evaluate("fixed:60:0", tmp_path)
    piece = explorer_piece(result)
    assert piece is not None
    assert [q[0] for q in piece["questions"]] == ["q1", "q2", "q3", "q4"]
    segments = piece["texts"]
    for query in result.queries:
        for doc, start, end in query.excerpts:
            lo, hi = max(0, start - CONTEXT), min(len(DOCS[doc]), end + CONTEXT)
            assert any(
                s <= lo and s + len(t) >= hi and DOCS[doc][s : s + len(t)] == t
                for s, t in segments[doc]
            ), (query.id, doc)
        for doc, start, end in query.retrieved:
            shown = min(end, start + CHUNK_CHARS)
            assert any(s <= start and s + len(t) >= shown for s, t in segments[doc])
    # segments of a document are disjoint and far smaller than the documents
    for parts in segments.values():
        ends = [s + len(t) for s, t in parts]
        assert all(e < s for e, (s, _) in zip(ends, parts[1:], strict=False))
    kept = sum(len(t) for parts in segments.values() for _, t in parts)
    assert kept < sum(map(len, DOCS.values()))
    row = piece["rows"][0]
    assert row[0] == status(result.queries[0].scores["recall"])
    assert len(row[4]) == 3 * len(result.queries[0].retrieved)


def test_no_piece_without_a_corpus(tmp_path: Path) -> None:
    result = _evaluate("fixed:60:0", tmp_path)
    assert explorer_piece(EvalResult.from_json(result.to_json())) is None


def test_blob_stores_text_and_questions_once(tmp_path: Path) -> None:
    results = [_evaluate(c, tmp_path) for c in ("fixed:60:0", "recursive:40:0")]
    pieces = [explorer_piece(r) for r in results]
    assert all(p is not None for p in pieces)
    blob = explorer_blob(
        [(f"c{i}", "#123456", p) for i, p in enumerate(pieces) if p is not None]
    )
    assert blob["docs"] == list(DOCS)
    assert len(blob["questions"]) == 4
    assert [len(c["rows"]) for c in blob["configs"]] == [4, 4]
    text = json.dumps(blob)
    assert text.count("What colour is Mars?") == 1
    assert text.count("Cats sleep all day.") == 1  # one window, both configurations
    for d, start, segment in blob["texts"]:
        doc = DOCS[blob["docs"][d]]
        assert doc[start : start + len(segment)] == segment
    # rows point at questions and documents by index
    q1 = blob["questions"][0]
    assert q1[:3] == ["q1", QUESTIONS[0][1], 0]
    for config in blob["configs"]:
        for row in config["rows"]:
            assert 0 <= row[0] < 4
            assert all(isinstance(x, int) for x in row[5])


def test_flipped_questions_carry_their_baseline_recall(tmp_path: Path) -> None:
    from pytest_chunkeval.gate.comparison.flips import Flip, Flips

    result = _evaluate("fixed:60:0", tmp_path)
    piece = explorer_piece(result)
    assert piece is not None
    assert all(row[5] is None for row in piece["rows"])
    changed = with_baseline(piece, {"q2": 0.5})
    assert [row[5] for row in changed["rows"]] == [None, 0.5, None, None]
    assert piece["rows"][1][5] is None  # a copy
    q3 = result.queries[2]
    flips = Flips(
        "recall",
        4,
        lost=(Flip("q3", q3.question, "b.md", 0.75, 0, "", ""),),
        lost_count=1,
    )
    entry = ReportEntry(
        result.to_json(details=False), ("t.py::x",), explorer=piece, flips=flips
    )
    blob = _blob(html_report([entry]))
    assert [row[6] for row in blob["configs"][0]["rows"]] == [None, None, 0.75, None]


def test_script_json_cannot_close_its_script_element() -> None:
    value = {"q": "</script><script>alert(1)</script><!-- <SCRIPT \u2028"}
    text = script_json(value)
    assert "<" not in text
    assert "\u2028" not in text
    assert json.loads(text) == value


def test_report_embeds_one_data_blob_and_no_hostile_markup(tmp_path: Path) -> None:
    result = _evaluate("fixed:60:0", tmp_path)
    page = html_report([ReportEntry.of(result, ["t.py::x"], explore=True)])
    assert page.count('<script type="application/json"') == 1
    blob = _blob(page)
    assert blob["questions"][0][1] == QUESTIONS[0][1]
    assert "<script>document" not in page
    assert "<img" not in page
    assert "<!--" not in page
    assert "http://" not in page
    assert "https://" not in page
    # without the data: no explorer
    bare = html_report([ReportEntry.of(result, ["t.py::x"])])
    assert 'id="explorer"' not in bare


def _blob(page: str) -> dict[str, Any]:
    found = re.search(
        r'<script type="application/json" id="chunkeval-explorer-data">(.*?)'
        r"</script>",
        page,
        re.S,
    )
    assert found is not None
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_summary_rows_carry_the_piece_through_json(tmp_path: Path) -> None:
    result = _evaluate("fixed:60:0", tmp_path)
    piece = explorer_piece(result)
    row = SummaryRow("k", result.to_json(details=False), ["t.py::x"], piece)
    again = SummaryRow.from_json(json.loads(json.dumps(row.to_json())))
    assert again.explorer == json.loads(json.dumps(piece))
    plain = SummaryRow("k", result.to_json(details=False))
    assert "explorer" not in plain.to_json()


def test_plugin_html_report_has_the_explorer(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.plugin_project import run, write_project

    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    pytester.makepyfile(
        test_two="""
        import pytest

        @pytest.mark.parametrize("size", [10, 40])
        def test_size(chunkeval, size):
            chunkeval.evaluate(f"recursive:{size}:0")
        """
    )
    run(pytester, "--chunkeval-html=report.html").assert_outcomes(passed=2)
    blob = _blob((pytester.path / "report.html").read_text(encoding="utf-8"))
    assert len(blob["configs"]) == 2
    assert blob["questions"]
    assert {len(c["rows"]) for c in blob["configs"]} == {len(blob["questions"])}


def test_piece_past_its_text_budget_cuts_chunk_text_not_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pytest_chunkeval.reporting.explorer as explorer

    result = _evaluate("fixed:200:0", tmp_path)
    full = explorer_piece(result)
    assert full is not None
    size = sum(len(t) for parts in full["texts"].values() for _, t in parts)
    monkeypatch.setattr(explorer, "TEXT_BUDGET", size - 1)
    cut = explorer_piece(result)
    assert cut is not None
    kept = sum(len(t) for parts in cut["texts"].values() for _, t in parts)
    assert kept < size
    for query in result.queries:  # every excerpt keeps its context
        for doc, start, end in query.excerpts:
            lo, hi = max(0, start - CONTEXT), min(len(DOCS[doc]), end + CONTEXT)
            assert any(s <= lo and s + len(t) >= hi for s, t in cut["texts"][doc])
    assert cut["rows"] == full["rows"]


def test_cli_report_adds_the_explorer_from_a_json_report_and_its_corpus(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from pytest_chunkeval.cli.main import main
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.data.query_types import Excerpt, Query
    from pytest_chunkeval.reporting.json_report import json_report

    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("a.md", "b.md"):
        (folder / name).write_text(DOCS[name], encoding="utf-8")
    corpus = Corpus.from_paths([folder])
    queries = []
    for qid, question, doc, sentence in QUESTIONS[:3]:
        (doc_id,) = [d for d in corpus.ids if d.endswith(doc)]
        start = corpus[doc_id].text.index(sentence)
        excerpt = Excerpt(sentence, doc_id, start, start + len(sentence))
        queries.append(Query(qid, question, (excerpt,), doc_id))
    result = evaluate(
        "fixed:60:0",
        corpus,
        QuerySet(queries).validated(corpus),
        embedder=HashingEmbedder(),
        store="exact",
        k=2,
        cache=tmp_path / "cache",
        progress=False,
    )
    results = tmp_path / "results.json"
    results.write_text(json_report([ReportEntry.of(result, ["t.py::x"], details=True)]))
    history = tmp_path / "history.jsonl"
    history.write_text("")
    out = tmp_path / "r.html"
    argv = ["report", str(history), "--results", str(results), "--html", str(out)]
    assert main([*argv, "--corpus", str(folder)]) == 0
    blob = _blob(out.read_text(encoding="utf-8"))
    assert [q[0] for q in blob["questions"]] == ["q1", "q2", "q3"]
    assert any("Cats sleep all day." in t for _, _, t in blob["texts"])
    # another corpus: refused, saying why
    other = tmp_path / "other"
    other.mkdir()
    (other / "a.md").write_text("something else", encoding="utf-8")
    assert main([*argv, "--corpus", str(other)]) != 0
    assert "not on this one" in capsys.readouterr().err
    assert main([*argv, "--corpus", str(folder), "--benchmark", "general"]) != 0
    assert "not both" in capsys.readouterr().err
