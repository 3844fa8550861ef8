"""A question with ``"excerpts": []`` is scored only by a judge; without one the
run names it once, in the terminal summary and every report (issue 34: such
questions were left out of every mean silently)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.plugin_project import run, write_project

from pytest_chunkeval.engine.labels import unscored_text
from pytest_chunkeval.engine.results import EvalResult

TEST = """
def test_whole(chunkeval, chunkeval_chunker):
    chunkeval.evaluate()
"""
LINE = "not scored: no excerpts and no judge: 1 question of queries.jsonl (q-open)"


def _with_open_question(root: Path) -> None:
    write_project(root)
    queries = root / "queries.jsonl"
    record = {
        "id": "q-open",
        "question": "What is the company's mission?",
        "doc_id": "finance.md",
        "excerpts": [],
    }
    queries.write_text(queries.read_text() + json.dumps(record) + "\n")


def test_a_question_without_excerpts_is_named_once_in_every_output(
    pytester: pytest.Pytester,
) -> None:
    _with_open_question(pytester.path)
    pytester.makepyfile(test_it=TEST)
    out = {kind: pytester.path / f"report.{kind}" for kind in ("md", "html", "json")}
    done = run(pytester, *(f"--chunkeval-{k}={p}" for k, p in out.items()))
    done.assert_outcomes(passed=2)  # two chunkers, two rows: one line
    text = done.stdout.str()
    assert text.count("not scored") == 1, text
    assert LINE in text.splitlines(), text
    assert out["md"].read_text().count(LINE) == 1
    assert out["html"].read_text().count(LINE) == 1
    data = json.loads(out["json"].read_text())
    assert "q-open" in json.dumps(data)
    assert '"unscored": ["q-open"]' in json.dumps(data)


def test_quiet_runs_name_it_too(pytester: pytest.Pytester) -> None:
    _with_open_question(pytester.path)
    pytester.makepyfile(test_it=TEST)
    done = run(pytester, "-qq")
    assert LINE in done.stdout.str().splitlines()


def test_a_judge_scores_it(tmp_path: Path) -> None:
    import pytest_chunkeval as chunkeval
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.data.query_types import Excerpt, Query

    text = "Fish swim in schools. Cats hunt at dawn."
    corpus = Corpus.from_mapping({"a.md": text})
    s = text.index("Cats")
    cats = Excerpt(text[s:], "a.md", s, len(text))
    queries = QuerySet(
        [
            Query("q1", "When do cats hunt?", (cats,), "a.md"),
            Query("q-open", "Do fish swim?", (), "a.md"),
        ]
    ).validated(corpus)
    options = {"embedder": "hashing", "store": "exact", "k": 1, "cache": tmp_path}
    plain = chunkeval.evaluate("sentence:8", corpus, queries, **options)
    assert plain.unscored == ("q-open",)
    assert EvalResult.from_json(plain.to_json(details=False)).unscored == ("q-open",)
    assert plain.only("q1").unscored == ()
    chunkeval.register_judge(
        "test-all-fish", lambda q, c: [c.split(". ")[0]], version="1"
    )
    judged = chunkeval.evaluate(
        "sentence:8", corpus, queries, judge="test-all-fish", **options
    )
    assert judged.unscored == ()
    assert unscored_text([judged.to_json(details=False)]) == ""


def test_chunkeval_eval_names_it_once(tmp_path: Path, capsys: Any) -> None:
    from support.cli_project import eval_args
    from support.cli_project import write_project as write_cli_project

    from pytest_chunkeval.cli.main import main

    write_cli_project(tmp_path)
    queries = tmp_path / "queries.jsonl"
    record = {"id": "q-open", "question": "Why?", "doc_id": "a.md", "excerpts": []}
    queries.write_text(queries.read_text() + json.dumps(record) + "\n")
    argv = eval_args(tmp_path, "--chunker", "recursive:20:0", "--chunker", "fixed:8:0")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.count("not scored") == 1, out
    assert (
        "not scored: no excerpts and no judge: 1 question of queries.jsonl (q-open)"
        in out
    )


def test_its_own_item_says_why_it_fails(pytester: pytest.Pytester) -> None:
    """A per-question item of such a question read 'recall undefined < 0.5'."""
    _with_open_question(pytester.path)
    pytester.makepyfile(
        test_items="""
import pytest


@pytest.mark.chunkeval(per_question=True, min_question_recall=0.5)
def test_q(chunkeval):
    chunkeval.evaluate("recursive:30:0")
"""
    )
    done = run(pytester)
    done.assert_outcomes(passed=6, failed=1)
    done.stdout.fnmatch_lines(
        [
            "question q-open *: recall undefined < 0.5 "
            "(not scored: no excerpts and no judge)"
        ]
    )
