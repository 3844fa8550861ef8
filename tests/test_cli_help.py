"""The ``chunkeval`` command's help (issue 18, item 5), its exit codes (issue 11:
a user error is one line and exit 2, a bug keeps its traceback), and the option
table it shares with the plugin."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pytest_chunkeval.cli import cache as cli_cache
from pytest_chunkeval.cli.common import EXIT_FAILED, EXIT_USAGE, HelpFormatter
from pytest_chunkeval.cli.main import COMMANDS, build_parser, main
from pytest_chunkeval.config.options import OPTIONS, OPTIONS_BY_NAME
from pytest_chunkeval.errors import CheckFailed, ConfigError


def _parsers(
    parser: argparse.ArgumentParser, name: str = "chunkeval"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


PARSERS = dict(_parsers(build_parser()))


def test_every_subcommand_is_walked() -> None:
    assert set(COMMANDS) <= {name.split()[1] for name in PARSERS if " " in name}
    assert {"chunkeval cache info", "chunkeval cache clear"} <= set(PARSERS)


@pytest.mark.parametrize("name", sorted(PARSERS))
def test_every_option_has_help_and_shows_its_default(name: str) -> None:
    parser = PARSERS[name]
    formatter = HelpFormatter(prog=name)
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        label = action.option_strings[0] if action.option_strings else action.dest
        text = formatter._get_help_string(action)
        assert text.strip(), f"{name} {label}: no help text"
        if action.option_strings and not action.required:
            assert "default" in text.lower(), f"{name} {label}: no default shown"


@pytest.mark.parametrize("name", sorted(n for n in PARSERS if " " in n))
def test_every_subcommand_has_a_description_and_examples(name: str) -> None:
    parser = PARSERS[name]
    assert parser.description
    assert parser.epilog
    assert parser.epilog.startswith("examples:\n")
    assert "  chunkeval " in parser.format_help().split("examples:")[1]


def test_cache_info_help_describes_info(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["cache", "info", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: chunkeval cache info")
    assert "number of vectors" in out
    assert "--identity" not in out  # that is `clear`'s
    assert "chunkeval cache info --cache-dir" not in out.split("examples:")[0]


def test_help_examples_keep_their_lines(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    out = capsys.readouterr().out
    example = "chunkeval eval --benchmark general --chunker recursive:200:0 --k 5"
    assert f"\n  {example}\n" in out


# --------------------------------------------------------------- import cost


@pytest.mark.parametrize(
    "argv", [["--help"], *([c, "--help"] for c in COMMANDS), ["cache", "info", "-h"]]
)
def test_help_imports_no_numpy(argv: list[str]) -> None:
    code = (
        "import json, sys\n"
        "from pytest_chunkeval.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "heavy = ('numpy', 'tiktoken', 'torch', 'openai', 'chromadb')\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in heavy]\n"
        "print(json.dumps(sorted(loaded)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out.splitlines()[-1]) == []


# ---------------------------------------------------------------- exit codes


def test_a_user_error_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["eval", "--corpus", str(tmp_path / "nowhere"), "--queries", "q.jsonl"])
    assert code == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert err.startswith("chunkeval eval: error: corpus path ")
    assert "does not exist" in err
    assert "Traceback" not in err


def test_a_bug_keeps_its_traceback(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def broken(args: argparse.Namespace) -> int:
        return {}["missing"]  # type: ignore[no-any-return]

    monkeypatch.setattr(cli_cache, "run_info", broken)
    with pytest.raises(KeyError, match="missing"):
        main(["cache", "info", "--cache-dir", str(tmp_path)])


def test_a_bug_exits_with_a_traceback_not_a_usage_error(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pytest_chunkeval.embedders.cache import EmbeddingCache\n"
        "def info(self):\n"
        "    raise KeyError('dimension')\n"
        "EmbeddingCache.info = info\n"
        "from pytest_chunkeval.cli import main\n"
        f"sys.exit(main(['cache', 'info', '--cache-dir', {str(tmp_path)!r}]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert proc.returncode == 1
    assert "Traceback (most recent call last)" in proc.stderr
    assert "KeyError: 'dimension'" in proc.stderr
    assert "error:" not in proc.stderr


def test_a_failed_check_exits_1(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def regressed(args: argparse.Namespace) -> int:
        raise CheckFailed("recall fell from 0.80 to 0.70")

    monkeypatch.setattr(cli_cache, "run_info", regressed)
    assert main(["cache", "info", "--cache-dir", str(tmp_path)]) == EXIT_FAILED
    assert capsys.readouterr().err == "chunkeval cache: recall fell from 0.80 to 0.70\n"


def test_a_config_error_from_a_command_is_exit_2(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def bad(args: argparse.Namespace) -> int:
        raise ConfigError("give --html OUT")

    monkeypatch.setattr(cli_cache, "run_info", bad)
    assert main(["cache", "info", "--cache-dir", str(tmp_path)]) == EXIT_USAGE
    assert capsys.readouterr().err == "chunkeval cache: error: give --html OUT\n"


# -------------------------------------------------------------- option table


def _cli_actions() -> dict[str, list[tuple[str, argparse.Action]]]:
    found: dict[str, list[tuple[str, argparse.Action]]] = {}
    for name, parser in PARSERS.items():
        for action in parser._actions:
            if action.dest.startswith("chunkeval_"):
                found.setdefault(action.dest, []).append((name, action))
    return found


def test_cli_flags_of_the_table_share_its_validation_and_help() -> None:
    actions = _cli_actions()
    assert {"chunkeval_embedder", "chunkeval_store", "chunkeval_k"} <= set(actions)
    for dest, uses in actions.items():
        option = OPTIONS_BY_NAME[dest.removeprefix("chunkeval_")]
        for where, action in uses:
            # the table's validator, adapted for argparse (config/option.py)
            assert action.type.__wrapped__ is option.parse, (where, dest)
            assert option.cli_flag in action.option_strings, (where, dest)
            assert action.default is None  # resolved once, as the plugin does
            assert action.help is not None
            assert action.help.startswith(option.describe("cli")), (where, dest)


def test_every_option_of_the_table_shows_a_default() -> None:
    for option in OPTIONS:
        assert " Default: " in option.help_text("pytest"), option.name


@pytest.mark.parametrize("flag", ["--embedder", "--store", "--tokenizer"])
def test_cli_spec_flags_are_checked_at_parse_time(
    flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "--benchmark", "general", flag, "no spaces allowed"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag} SPEC" in err or f"argument {flag}:" in err
    assert "'no spaces allowed'" in err


def test_cli_cache_defaults_to_the_pytest_rootdir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = tmp_path / "project"
    (project / "src" / "deep").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    monkeypatch.chdir(project / "src" / "deep")
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert f"embedding cache at {project / '.chunkeval' / 'cache'}\n" in out
    # the environment variable overrides it, as in pytest
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(tmp_path / "env"))
    assert main(["cache", "info"]) == 0
    assert f"embedding cache at {tmp_path / 'env'}\n" in capsys.readouterr().out
    # and a flag is relative to the current directory
    assert main(["cache", "info", "--cache-dir", "here"]) == 0
    expected = project / "src" / "deep" / "here"
    assert f"embedding cache at {expected}\n" in capsys.readouterr().out


def test_find_rootdir_follows_pytest(tmp_path: Path) -> None:
    from pytest_chunkeval.config.rootdir import find_rootdir

    inner = tmp_path / "a" / "b"
    inner.mkdir(parents=True)
    assert find_rootdir(inner) == inner.resolve()
    (tmp_path / "setup.py").write_text("")
    assert find_rootdir(inner) == tmp_path.resolve()
    (tmp_path / "a" / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    assert find_rootdir(inner) == (tmp_path / "a").resolve()
    (tmp_path / "tox.ini").write_text("[pytest]\n")
    assert find_rootdir(inner) == tmp_path.resolve()  # a pytest config wins
    (inner / "setup.cfg").write_text("[metadata]\nname = x\n")
    assert find_rootdir(inner) == tmp_path.resolve()
    (inner / "setup.cfg").write_text("[tool:pytest]\n")
    assert find_rootdir(inner) == inner.resolve()


def test_eval_help_names_the_columns_its_table_shows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`chunkeval eval --help` promised an F1 column the default table lacks, and
    did not say that the project's ini is read."""
    parser = build_parser()
    eval_parser = parser._subparsers._group_actions[0].choices["eval"]  # type: ignore[union-attr]
    description = " ".join(eval_parser.description.split())
    promised = description.split(" print ", 1)[1].split(" (--metric adds", 1)[0]
    assert "ini" in description
    args = ["eval", "--benchmark", "general", "--embedder", "hashing"]
    args += ["--store", "exact", "--cache-dir", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    header = next(s for s in out if "Recall" in s).lower().split()
    shown = [
        w for w in ("recall", "precision", "precisionω", "iou", "f1") if w in header
    ]
    named = [w.strip(" ,").lower() for w in promised.replace(" and ", ", ").split(",")]
    assert named == shown, (promised, header)
