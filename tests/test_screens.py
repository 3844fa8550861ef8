"""What the screens show: the eval table's columns for every differing
axis, progress that names its phase and starts on a line of its own, a
retriever's baseline, Markdown that keeps corpus text inert."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.cli_project import eval_args, project  # noqa: F401  (fixture)
from support.plugin_project import PER_QUESTION_RETRIEVER, run, write_project

from pytest_chunkeval.cli.main import main
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.reporting.md_table import md_table
from pytest_chunkeval.reporting.rows import ResultRow
from pytest_chunkeval.util import progress
from pytest_chunkeval.util.progress import progress_phase


def test_eval_with_two_stores_has_a_store_column(
    project: Path,  # noqa: F811
    capsys: Any,
) -> None:
    pytest.importorskip("bm25s")
    args = [
        *eval_args(project, "--chunker", "recursive:20:0", cache=project / "cache"),
        "--store",
        "bm25",
    ]
    assert main(args) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(line for line in lines if line.startswith("Chunking"))
    assert header.split()[4:6] == ["Embedder", "Store"]
    rows = lines[lines.index(header) + 2 : lines.index(header) + 4]
    assert [row.split()[5] for row in rows] == ["exact", "bm25"]
    assert rows[1].split()[4] == "-"  # bm25 embeds nothing


def test_eval_with_one_store_has_no_store_column(
    project: Path,  # noqa: F811
    capsys: Any,
) -> None:
    assert (
        main(eval_args(project, "--chunker", "recursive:20:0", cache=project / "cache"))
        == 0
    )
    out = capsys.readouterr().out
    assert "Store" not in out
    assert "Embedder" not in out


class _Embedder:
    identity = "test:phase"

    def embed(self, texts: list[str]) -> Any:
        return np.ones((len(texts), 4), dtype=np.float32)


def test_progress_lines_name_their_phase_innermost_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines: list[str] = []
    monkeypatch.setattr(progress, "INTERVAL_SECONDS", 0.0)
    monkeypatch.setattr(progress, "_line_writer", lines.append)
    with (
        progress_phase("configuration 2 of 5"),
        progress_phase("chunks and questions of recursive:200:0"),
    ):
        EmbeddingCache(tmp_path, batch_size=2).embed(_Embedder(), ["a", "b", "c"])
    assert lines
    assert all(
        line.startswith(
            "embedding (test:phase) chunks and questions of recursive:200:0, "
            "configuration 2 of 5: "
        )
        for line in lines
    ), lines
    assert progress.phase_text() == ""


PROGRESS_TEST = """
import numpy as np
from pytest_chunkeval.util import progress


class Embedder:
    identity = "test:progress"

    def embed(self, texts):
        return np.ones((len(texts), 4), dtype=np.float32)


def test_first():
    pass


def test_embeds(chunkeval, monkeypatch):
    monkeypatch.setattr(progress, "INTERVAL_SECONDS", 0.0)
    chunkeval.evaluate("recursive:30:0")
"""


@pytest.fixture
def plugin_project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    return pytester.path


def test_under_pytest_q_progress_starts_on_a_line_of_its_own(
    pytester: pytest.Pytester, plugin_project: Path
) -> None:
    pytester.makepyfile(test_phase_lines=PROGRESS_TEST)
    result = run(pytester, "-q")
    result.assert_outcomes(passed=2)
    lines = result.stdout.lines
    first = next(i for i, line in enumerate(lines) if "embedding (" in line)
    # the questions are embedded first (their vectors key the search cache), the
    # chunks only when a search is not cached
    assert lines[first].startswith(
        "embedding (hashing:256) questions of recursive:30:0: "
    ), lines[first]
    assert lines[first - 1] == "."  # the first test's dot, on its own line


RETRIEVER_TEST = """
def everything(question):
    return ["Dogs bark at the mailman every morning.",
            "Mars has two small moons, Phobos and Deimos.",
            "The auditor is Example LLP."]


def test_retriever(chunkeval):
    chunkeval.check_baseline(chunkeval.score(everything, label="three"))
"""


def test_a_retrievers_baseline_records_results_per_question(
    pytester: pytest.Pytester, plugin_project: Path
) -> None:
    pytester.makepyfile(test_retriever_rows=RETRIEVER_TEST)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    (baseline,) = plugin_project.glob("**/__chunkeval__/**/*.json")
    chunks = json.loads(baseline.read_text())["chunks"]
    assert chunks["results_per_question"] == 3.0
    assert "count" not in chunks  # 6 questions x 3 results is no chunk count
    run(pytester).assert_outcomes(passed=1)


def test_a_retrievers_history_records_results_per_question_and_old_lines_read(
    pytester: pytest.Pytester, plugin_project: Path
) -> None:
    pytester.makepyfile(test_retriever_rows=RETRIEVER_TEST)
    history = plugin_project / "history.jsonl"
    args = ("--chunkeval-update", f"--chunkeval-history={history}")
    run(pytester, *args).assert_outcomes(passed=1)
    (line,) = history.read_text(encoding="utf-8").splitlines()
    record = json.loads(line)
    assert record["chunks"]["results_per_question"] == 3.0
    assert "count" not in record["chunks"]  # 6 questions x 3 results
    assert "results_per_query" not in record["chunks"]
    # a line written before: the count and the in-memory name
    old = {**record, "run": "old", "timestamp": "2025-01-01T00:00:00+00:00"}
    old["chunks"] = {
        "count": 18.0,
        "mean_units": record["chunks"]["mean_units"],
        "results_per_query": 3.0,
    }
    history.write_text(json.dumps(old) + "\n" + line + "\n", encoding="utf-8")
    html, md = plugin_project / "report.html", plugin_project / "report.md"
    assert main(["report", str(history), "--html", str(html), "--md", str(md)]) == 0
    assert "2 records from 2 run(s)" in md.read_text(encoding="utf-8")
    for kept in map(json.loads, history.read_text(encoding="utf-8").splitlines()):
        row = ResultRow.from_record(kept)
        assert (row.k, row.note) == ("all (3.0)", "3.0 results/query")


@pytest.mark.parametrize(
    ("untrusted", "live"),
    [
        ("see ![img](http://evil.example/x.png) here", "]("),
        ("[click](javascript:alert(1))", "]("),
        ("visit https://evil.example/now", "https://"),
        ("visit www.evil.example", "www."),
        ("<img src=x onerror=alert(1)>", "<img"),
    ],
)
def test_markdown_keeps_link_and_image_syntax_inert(untrusted: str, live: str) -> None:
    table = md_table(["Question", "Recall"], [[untrusted, "50.0"]])
    row = table.splitlines()[2]
    assert live not in row
    assert row.count("|") - row.count("\\|") == 3  # still one row of two cells


def test_per_question_items_that_passed_across_a_doc_edit_share_one_block(
    pytester: pytest.Pytester, plugin_project: Path
) -> None:
    pytester.makepyfile(test_items=PER_QUESTION_RETRIEVER)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=6)
    finance = plugin_project / "docs" / "finance.md"
    finance.write_text(finance.read_text() + "\nThe board meets every quarter.\n")
    result = run(pytester)
    result.assert_outcomes(passed=6)
    out = result.stdout.str()
    assert out.count("passed against") == 1
    result.stdout.fnmatch_lines(
        [
            "baselines: 6 ok",
            "  test_items.py::test_question (6 items): passed against their "
            "baselines across the same changes (recall +0.00 points*within "
            "tolerance):",
            "    documents edited: finance.md (+1 sentence / +32 chars)",
            "    record the new baselines with: pytest --chunkeval-update "
            "test_items.py::test_question",
        ]
    )


def test_grouping_keeps_other_lines_and_single_items_as_they_are() -> None:
    from pytest_chunkeval.run.grouped_lines import group_passed_items

    one = (
        "  t.py::test[a]: passed against its baseline across changes:\n"
        "    documents edited: x.md\n"
        "    record the new baseline with: pytest --chunkeval-update 't.py::test[a]'"
    )
    other = "  t.py::test[b]: recall 50.00 -> 40.00 REGRESSED"
    lines = ["baselines: 1 ok, 1 regressed", one, other]
    assert group_passed_items(lines) == lines
