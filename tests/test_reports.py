"""Reports: JSON, Markdown (+ GitHub step summary), HTML text, ``chunkeval report``."""

from __future__ import annotations

import itertools
import json
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from support.fake_results import make_result

import pytest_chunkeval.cli.main
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.reporting.git_info import GitInfo
from pytest_chunkeval.reporting.history import append_history, history_record
from pytest_chunkeval.reporting.html import html_report
from pytest_chunkeval.reporting.json_report import json_report, read_json_report
from pytest_chunkeval.reporting.markdown import (
    append_github_summary,
    history_markdown,
    markdown_report,
)
from pytest_chunkeval.reporting.rows import ReportEntry

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def _entries() -> list[ReportEntry]:
    a = make_result([1.0, 0.5, 0.0, 1.0])
    b = make_result([1.0, 1.0, 0.0, 0.5], config={"chunker": "fixed:400:0", "k": 10})
    return [
        ReportEntry.of(a, ["tests/test_rag.py::test_x[recursive:200:0]"]),
        ReportEntry.of(b, ["tests/test_rag.py::test_x[fixed:400:0]", "t.py::y"]),
    ]


def _history(commits: int = 4) -> list[dict[str, object]]:
    records = []
    for i in range(commits):
        for chunker, base in (("recursive:200:0", 0.5), ("fixed:400:0", 0.7)):
            result = make_result(
                [base + 0.05 * i, base, base - 0.1 * (i % 2)],
                config={"chunker": chunker},
            )
            records.append(
                history_record(
                    result,
                    test=f"t.py::test[{chunker}]",
                    git=GitInfo(f"{i:x}" * 40, "main", i == commits - 1),
                    timestamp=T0 + timedelta(days=i),
                    run=f"run{i}",
                )
            )
    return records


def test_json_report_round_trips_to_results(tmp_path: Path) -> None:
    entries = _entries()
    text = json_report(entries)
    data = json.loads(text)
    assert data["chunkeval_report"] == 1
    assert [r["tests"] for r in data["results"]] == [list(e.nodeids) for e in entries]
    loaded = EvalResult.from_json(data["results"][1]["result"])
    assert loaded.config["chunker"] == "fixed:400:0"
    assert loaded.mean("recall") == pytest.approx(0.625)
    path = tmp_path / "r.json"
    path.write_text(text)
    assert read_json_report(path) == [
        ReportEntry(json.loads(json.dumps(dict(e.result))), tuple(e.nodeids))
        for e in entries
    ]
    path.write_text("[]")
    with pytest.raises(ValueError, match="not a chunkeval JSON report"):
        read_json_report(path)


def test_markdown_table_has_one_row_per_result() -> None:
    text = markdown_report(_entries(), title="RAG | retrieval")
    lines = text.strip().splitlines()
    assert lines[0] == "## RAG | retrieval"
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 4
    assert table[0].startswith("| Test | Configuration | Recall | Precision | IoU |")
    assert table[1].startswith("|:---|:---|---:|")
    assert "| 62.5 ± 41.5 |" in table[2]  # recall of [1, .5, 0, 1] in percent
    assert "tests/test_rag.py::test_x[fixed:400:0] (+1)" in table[3]
    assert "fixed:400:0 k=10" in table[3]
    assert all(row.count("|") == table[0].count("|") for row in table)


def test_markdown_escapes_pipes_in_cells() -> None:
    entry = ReportEntry.of(make_result([1.0], config={"chunker": "my|chunker"}))
    row = markdown_report([entry]).strip().splitlines()[-1]
    assert "my\\|chunker" in row


def test_github_step_summary_is_appended(tmp_path: Path) -> None:
    target = tmp_path / "summary.md"
    target.write_text("earlier step\n")
    env = {"GITHUB_STEP_SUMMARY": str(target)}
    assert append_github_summary("## one\n", env) == target
    append_github_summary("## two", env)
    assert target.read_text() == "earlier step\n## one\n## two\n"
    assert append_github_summary("## three\n", {}) is None


def test_history_markdown_shows_change_since_previous_commit() -> None:
    text = history_markdown(_history(3))
    assert "6 records from 3 run(s) of 3 commit(s)" in text
    row = next(line for line in text.splitlines() if "recursive:200:0" in line)
    # recall at commit 2 = mean(0.6, 0.5, 0.5); at commit 1 = mean(0.55, 0.5, 0.4)
    assert "| 2222222+ | 53.3 (+5.0) |" in row


def _record(recall: float, commit: str, corpus: str = "general") -> dict[str, object]:
    result = make_result(
        [recall] * 3, config={"chunker": "recursive:200:0", "corpus": corpus}
    )
    return history_record(result, git=GitInfo(commit * 40, "main", False), timestamp=T0)


def test_history_markdown_latest_is_the_last_recorded_commit() -> None:
    # commits A, B, then A again (a revert): A's last record is the latest row
    text = history_markdown([_record(0.5, "a"), _record(0.9, "b"), _record(0.6, "a")])
    row = next(line for line in text.splitlines() if "recursive:200:0" in line)
    assert "60.0 (-30.0)" in row


def test_history_keeps_datasets_apart() -> None:
    text = history_markdown([_record(0.5, "a", "docs"), _record(0.9, "b", "general")])
    rows = [line for line in text.splitlines() if "recursive:200:0" in line]
    assert len(rows) == 2
    assert any("on docs" in r and "50.0 |" in r for r in rows)


def _svgs(page: str) -> list[str]:
    return re.findall(r"<svg class=\"plot plot-(\w+)\"", page)


def test_html_is_self_contained_with_every_plot() -> None:
    page = html_report(_entries(), _history(), title="RAG report", generated=T0)
    assert page.startswith("<!DOCTYPE html>")
    assert "http://" not in page
    assert "https://" not in page
    assert not re.search(r"<(link|img|iframe)\b|\bsrc=", page)
    assert "<title>RAG report</title>" in page
    kinds = _svgs(page)
    assert kinds.count("bars") == 2  # recall and IoU per document
    assert kinds.count("scatter") == 2  # recall vs IoU, recall vs precision
    assert kinds.count("history") == 5  # one per metric
    assert page.count('<rect class="mark"') == 2 * 2 * 2  # metrics x corpora x rows
    assert "Generated 2025-01-01T00:00:00+00:00" in page
    assert 'id="history"' in page
    assert "3333333+" in page  # the dirty last commit


def test_html_escapes_user_text() -> None:
    evil = make_result([1.0], config={"chunker": "<script>alert(1)</script>"})
    page = html_report([ReportEntry.of(evil, ["t.py::x[<b>]"])], generated=T0)
    assert "<script>alert(1)" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("<script>") == 1  # only ours


def test_html_from_history_alone_uses_latest_records() -> None:
    page = html_report((), _history(3), generated=T0)
    assert "from the latest record of each configuration" in page
    assert len(re.findall(r"<tr><td", page)) == 2
    assert _svgs(page).count("history") == 5


def test_html_without_anything_says_so() -> None:
    page = html_report(generated=T0)
    assert "No results and no history to show." in page
    assert not _svgs(page)


# ------------------------------------------------------------------ CLI


def test_cli_report_writes_html_and_markdown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "history.jsonl"
    append_history(history, _history())
    html_out, md_out = tmp_path / "out" / "r.html", tmp_path / "r.md"
    code = pytest_chunkeval.cli.main.main(
        [
            "report",
            str(history),
            "--html",
            str(html_out),
            "--md",
            str(md_out),
            "--title",
            "nightly",
        ]
    )
    assert code == 0
    assert _svgs(html_out.read_text()).count("history") == 5
    assert "<title>nightly</title>" in html_out.read_text()
    assert md_out.read_text().startswith("## nightly")
    assert f"wrote {html_out}" in capsys.readouterr().out


def test_cli_report_with_session_results(tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    append_history(history, _history(2))
    results = tmp_path / "results.json"
    results.write_text(json_report(_entries()))
    out = tmp_path / "r.html"
    argv = ["report", str(history), "--results", str(results), "--html", str(out)]
    assert pytest_chunkeval.cli.main.main(argv) == 0
    assert "from this session" in out.read_text()


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        (None, ["--html", "x.html"], "history.jsonl does not exist"),
        ("", [], "nothing to write: give --html OUT and/or --md OUT"),
        ("", ["--html", "x.html"], "holds no records yet"),
        ('{"chunkeval_history": 1}\n{bad\n\n', ["--md", "x.md"], "history.jsonl:2"),
    ],
)
def test_cli_report_errors(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: str | None,
    extra: list[str],
    message: str,
) -> None:
    history = tmp_path / "history.jsonl"
    if content is not None:
        history.write_text(content)
    argv = [
        "report",
        str(history),
        *(str(tmp_path / e) if "." in e else e for e in extra),
    ]
    assert pytest_chunkeval.cli.main.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("chunkeval report: error: ")
    assert message in err


def test_bar_labels_of_ten_documents_do_not_overlap() -> None:
    """Ten documents with long names: each tick label fits its band (they ran into
    each other at 22 characters each), the whole name kept on hover."""
    from pytest_chunkeval.reporting.svg import LABEL_CHAR_WIDTH

    docs = [f"engineering-handbook-chapter-{i:02d}.md" for i in range(10)]
    result = make_result([0.5] * 10, docs=docs)
    page = html_report([ReportEntry.of(result, ["t.py::x"])], generated=T0)
    svg = page[page.index('<svg class="plot plot-bars"') :]
    svg = svg[: svg.index("</svg>")]
    assert "per document (%)" in svg
    ticks = re.findall(
        r'<text class="tick" x="([\d.]+)"[^>]*text-anchor="middle">'
        r"<title>([^<]*)</title>([^<]*)</text>",
        svg,
    )
    assert [t[1] for t in ticks] == docs
    boxes = sorted(
        (
            float(x) - LABEL_CHAR_WIDTH * len(t) / 2,
            float(x) + LABEL_CHAR_WIDTH * len(t) / 2,
        )
        for x, _, t in ticks
    )
    assert all(a[1] < b[0] for a, b in itertools.pairwise(boxes)), boxes
