"""What the commands tell a first-hour user and a hostile tester: each
command says what is true, in one line, and the advice it gives can be followed
where it runs (the command line's way in the CLI, the plugin's in pytest)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.cli_project import eval_args, write_project

from pytest_chunkeval.cli.main import main


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """Two documents and two questions (tests/support/cli_project.py)."""
    return write_project(tmp_path)


def _without_excerpts(project: Path) -> Path:
    """The project's questions with their excerpts removed."""
    lines = (project / "queries.jsonl").read_text(encoding="utf-8").splitlines()
    bare = [lines[0]]
    for line in lines[1:]:
        record = json.loads(line)
        record.pop("excerpts", None)
        bare.append(json.dumps(record))
    path = project / "bare.jsonl"
    path.write_text("\n".join(bare) + "\n", encoding="utf-8")
    return path


def test_eval_without_excerpts_names_the_cli_judge_command(
    project: Path, capsys: Any
) -> None:
    bare = _without_excerpts(project)
    args = eval_args(project, "--chunker", "recursive:20:0")
    args[args.index("--queries") + 1] = str(bare)
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "chunkeval_judge setting" not in err  # the plugin's way, not the CLI's
    assert "judge=" not in err
    assert "has excerpts: the command line scores against excerpts" in err
    assert f"chunkeval judge --queries {bare} --judge llm:MODEL --out FILE" in err


def test_the_plugin_advice_is_back_after_a_command(project: Path) -> None:
    from pytest_chunkeval.util.judge_advice import PLUGIN_JUDGE_ADVICE, judge_advice

    bare = _without_excerpts(project)
    args = eval_args(project, "--chunker", "recursive:20:0")
    args[args.index("--queries") + 1] = str(bare)
    assert main(args) == 2
    assert judge_advice("q.jsonl") == PLUGIN_JUDGE_ADVICE
    assert "chunkeval_judge setting" in judge_advice("q.jsonl")


def test_comparison_block_says_the_rows_verdict_when_nothing_moved() -> None:
    """3 of 25 questions left out (more than 10%): the check fails "not compared",
    while the 22 compared questions did not move. The one line of the "against the
    baseline" block said ``ok`` beside the row's ``not compared (...)``."""
    from pytest_chunkeval.gate.comparison.verdicts import GatedMetric
    from pytest_chunkeval.gate.outcome.rows import RowVerdict
    from pytest_chunkeval.run.outputs import SummaryRow
    from pytest_chunkeval.run.summary import against_baseline

    reason = "3 of 25 questions left out, more than 10%"
    gated = tuple(
        GatedMetric(m, 0.76, 0.76, 0.0, 0.0, 0.0, "ok", 0.95)
        for m in ("recall", "precision", "iou")
    )
    rows = [
        SummaryRow("a", {"label": "rag"}, ["t.py::test_left_out"]),
        SummaryRow("b", {"label": "rag"}, ["t.py::test_fine"]),
    ]
    verdicts = {
        "a": RowVerdict("failed", "not compared", gated, reason=reason),
        "b": RowVerdict("passed", "ok", gated),
    }
    lines = against_baseline(rows, verdicts)
    left_out = next(line for line in lines if "test_left_out" in line)
    fine = next(line for line in lines if "test_fine" in line)
    assert f"not compared ({reason})" in left_out
    assert " ok " not in left_out
    assert "recall, precision, iou  ok" in fine


def _inspect_args(project: Path, queries: Path, *extra: str) -> list[str]:
    args = eval_args(project, *extra)
    args[0] = "inspect"
    args[args.index("--queries") + 1] = str(queries)
    return args


def test_inspect_of_questions_without_excerpts_says_so(
    project: Path, capsys: Any
) -> None:
    """It said "holds no query ... (a query file with only its header line loads
    none)" of a set of two questions, and ``None of 0 questions must move``."""
    bare = _without_excerpts(project)
    html = project / "inspect.html"
    args = _inspect_args(
        project, bare, "--chunker", "recursive:20:0", "--chunker", "fixed:8:0"
    )
    assert main([*args, "--html", str(html)]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert "2 questions (0 with excerpts, 0 excerpts)" in out
    assert "holds no query" not in out
    assert "None of" not in out
    assert "minimum detectable effect: none (0 questions with excerpts" in out
    assert "configurations: not compared (no question has excerpts)" in out
    assert "questions with leakage \n" not in out + "\n"
    assert "2 question(s) without excerpts or content words" in out
    assert "Not compared: no question has excerpts" in html.read_text()


def test_inspect_checks_a_single_chunker(project: Path, capsys: Any) -> None:
    """One ``--chunker`` was dropped unread: a typo passed with exit 0."""
    queries = project / "queries.jsonl"
    assert main(_inspect_args(project, queries, "--chunker", "nosuch:1")) == 2
    err = capsys.readouterr().err
    assert err.startswith("chunkeval inspect: error: unknown chunker 'nosuch:1'")
    assert len(err.strip().splitlines()) == 1
    assert main(_inspect_args(project, queries, "--chunker", "recursive:20:0")) == 0
    out = capsys.readouterr().out
    assert "configurations: not compared (one configuration given" in out


def test_output_piped_to_a_reader_that_went_away(tmp_path: Path) -> None:
    """``chunkeval cache info | head -3`` printed a BrokenPipeError traceback."""
    import os
    import subprocess
    import sys

    code = "import sys; from pytest_chunkeval.cli import main; sys.exit(main())"
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, "cache", "info", "--cache-dir", str(tmp_path)],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            check=False,
            timeout=120,
        )
    finally:
        os.close(write)
    assert "Traceback" not in done.stderr
    assert "BrokenPipeError" not in done.stderr
    assert done.stderr == ""
    assert done.returncode == 141


def test_judge_whose_function_raises(
    project: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--judge python:MODULE:ATTR`` whose function raises: a raw traceback, exit
    1; now one line naming the judge, the error and the question, exit 2."""
    (project / "raising_judge.py").write_text(
        "def judge(question, context):\n"
        "    raise RuntimeError('boom')\n"
        "judge.version = '1'\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(project))
    bare = _without_excerpts(project)
    args = eval_args(project, "--chunker", "recursive:20:0")
    args[0] = "judge"
    args[args.index("--queries") + 1] = str(bare)
    out = project / "judged.jsonl"
    argv = [*args, "--judge", "python:raising_judge:judge", "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("chunkeval judge: error: judge raising_judge.judge@1 raised")
    questions = ("'Do dogs bark?'", "'What does the Moon have?'")  # either first
    assert any(f"RuntimeError: boom (on the question {q})" in err for q in questions)
    assert not out.exists()


def test_report_on_a_history_never_written_says_how_to_write_one(
    tmp_path: Path, capsys: Any
) -> None:
    """The README's ``chunkeval report .chunkeval/history.jsonl --html ...`` on a
    fresh project: the history is written only when asked for."""
    missing = tmp_path / ".chunkeval" / "history.jsonl"
    assert main(["report", str(missing), "--md", str(tmp_path / "r.md")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"history file {missing} does not exist" in err
    assert "--chunkeval-history FILE (or the chunkeval_history setting)" in err


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--dry-run"], "drop --dry-run"),
        (["--out", "x.jsonl"], "drop --out"),
        (["--out", "x.jsonl", "--dry-run"], "drop --out and --dry-run"),
    ],
)
def test_judge_calibrate_names_only_the_flags_given(
    project: Path, capsys: Any, flags: list[str], named: str
) -> None:
    args = eval_args(project, "--chunker", "recursive:20:0")
    args[0] = "judge"
    argv = [*args, "--judge", "llm:gpt-4o-mini", "--calibrate", *flags]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"--calibrate writes no query set: {named}")


def test_docs_comparison_blocks_use_the_verdict_vocabulary() -> None:
    """docs/ci.md showed ``recall, precision, iou  unchanged`` where the summary
    prints the verdict (``ok``) and the change (``+0.00``) of a row where no
    question moved."""
    from pytest_chunkeval.gate.comparison.verdicts import STATUS_VERDICTS

    shown = {str(v).partition(" (")[0] for v in STATUS_VERDICTS.values()}
    shown |= {"REGRESSED"}
    docs = Path(__file__).resolve().parent.parent / "docs"
    one_liners = [
        line
        for page in sorted(docs.glob("*.md"))
        for line in page.read_text(encoding="utf-8").splitlines()
        if "recall, precision, iou  " in line
    ]
    assert one_liners  # the samples exist
    for line in one_liners:
        verdict = line.split("recall, precision, iou", 1)[1].split()[0]
        assert verdict in shown, line


def test_judge_quoting_nothing_of_the_context_says_so(
    project: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A judge whose every sentence is not in the context: "2 with nothing
    relevant retrieved" blamed retrieval; now the dropped sentences are named."""
    (project / "elsewhere_judge.py").write_text(
        "def judge(question, context):\n"
        "    return ['A sentence that is in no context at all.']\n"
        "judge.version = '1'\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(project))
    args = eval_args(project, "--chunker", "recursive:20:0")
    args[0] = "judge"
    args[args.index("--queries") + 1] = str(_without_excerpts(project))
    out = project / "judged.jsonl"
    argv = [*args, "--judge", "python:elsewhere_judge:judge", "--out", str(out)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert "no question has judged excerpts: 2 with nothing relevant retrieved" in err
    assert "(2 sentence(s) the judge returned are not in their context" in err
    assert not out.exists()
