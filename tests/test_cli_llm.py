"""The LLM commands report failure as failure. ``chunkeval judge`` exits 1
and says why when nothing could be judged, takes ``python:MODULE:ATTR`` like
``relationships``, and every LLM command takes ``--price-per-1k``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.cli_judge_project import judge_args, project, server  # noqa: F401  (fixtures)
from support.openai_server import OpenAIServer

from pytest_chunkeval.cli.main import build_parser

Cli = Callable[[list[str]], int]

KEYWORD_JUDGE = """
import re

def judge(question, context):
    words = {w.strip("?").lower() for w in question.split() if len(w) >= 4}
    return [s.strip() for s in re.findall(r"[^.\\n]+\\.", context)
            if words & {w.strip(",.").lower() for w in s.split()}]

judge.version = "2"
"""


def test_judge_with_only_unusable_answers_exits_1_and_writes_nothing(
    server: OpenAIServer,  # noqa: F811
    project: Path,  # noqa: F811
    chunkeval_cli: Cli,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.chat_handler = lambda request: "I would rather not say."
    assert chunkeval_cli(judge_args(project)) == 1
    captured = capsys.readouterr()
    judge = f"llm:gpt-4o-mini+server={server.base_url.rstrip('/')}"
    assert captured.err.startswith(
        f"chunkeval judge: nothing could be judged: the judge {judge} gave "
        "no usable answer for any of the 3 question(s) ("
    ), captured.err
    assert captured.err.endswith(f"; {project / 'judged.jsonl'} not written\n")
    assert "nothing relevant retrieved" not in captured.out
    assert not (project / "judged.jsonl").exists()


def test_judge_with_nothing_relevant_anywhere_exits_1(
    server: OpenAIServer,  # noqa: F811
    project: Path,  # noqa: F811
    chunkeval_cli: Cli,
    capsys: pytest.CaptureFixture[str],
) -> None:
    server.chat_handler = lambda request: "Insufficient Information"
    assert chunkeval_cli(judge_args(project)) == 1
    err = capsys.readouterr().err
    assert err == (
        "chunkeval judge: no question has judged excerpts: 3 with nothing relevant "
        f"retrieved, 0 with unusable answers; {project / 'judged.jsonl'} not "
        "written\n"
    )


def test_judge_takes_python_module_attr(
    project: Path,  # noqa: F811
    chunkeval_cli: Cli,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    (project / "keyword_judge.py").write_text(KEYWORD_JUDGE, encoding="utf-8")
    args = judge_args(project)
    args[args.index("llm:gpt-4o-mini")] = "python:keyword_judge:judge"
    assert chunkeval_cli(args) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "2 questions with judged excerpts" in out
    meta = json.loads((project / "judged.jsonl").read_text().splitlines()[0])
    assert meta["metadata"]["judge"] == "keyword_judge.judge@2"

    args[args.index("python:keyword_judge:judge")] = "python:keyword_judge:nope"
    assert chunkeval_cli([*args, "--overwrite"]) == 2
    assert "cannot load keyword_judge:nope" in capsys.readouterr().err


def test_judge_dry_run_takes_the_price_option(
    server: OpenAIServer,  # noqa: F811
    project: Path,  # noqa: F811
    chunkeval_cli: Cli,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = judge_args(project)
    args[args.index("llm:gpt-4o-mini")] = "llm:house-model"
    assert chunkeval_cli([*args, "--dry-run"]) == 0
    assert "no price for 'house-model'; pass --price-per-1k" in capsys.readouterr().out
    assert chunkeval_cli([*args, "--dry-run", "--price-per-1k", "0.001,0.002"]) == 0
    out = capsys.readouterr().out
    assert "estimated cost ~$0." in out
    assert "no price" not in out
    assert server.requests_to("chat") == []


@pytest.mark.parametrize("command", ["generate", "judge", "relationships"])
def test_every_llm_command_takes_the_same_price_option(command: str) -> None:
    parser = build_parser()
    sub: Any = next(
        a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"
    )
    options = {
        option: action
        for action in sub.choices[command]._actions
        for option in action.option_strings
    }
    price = options["--price-per-1k"]
    assert price.type("0.5,1") == price.type("0.5, 1") != price.type("1")
    assert price.metavar == "USD[,USD]"


CONFTEST_JUDGE = """
from keyword_judge import judge as keyword_judge
from pytest_chunkeval.judging.judge import CallableJudge


def pytest_chunkeval_register_judges(registry):
    judge = CallableJudge(keyword_judge, name="keywords", version="1")
    registry.register("keywords", lambda rest: judge, "keywords")
"""


def test_judge_takes_a_judge_the_projects_conftest_registers(
    project: Path,  # noqa: F811
    chunkeval_cli: Cli,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(project)
    (project / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (project / "keyword_judge.py").write_text(KEYWORD_JUDGE, encoding="utf-8")
    (project / "conftest.py").write_text(CONFTEST_JUDGE, encoding="utf-8")
    args = judge_args(project)
    args[args.index("llm:gpt-4o-mini")] = "keywords"
    assert chunkeval_cli(args) == 0, capsys.readouterr().err
    assert "2 questions with judged excerpts" in capsys.readouterr().out
    meta = json.loads((project / "judged.jsonl").read_text().splitlines()[0])
    assert meta["metadata"]["judge"] == "keywords@1"
