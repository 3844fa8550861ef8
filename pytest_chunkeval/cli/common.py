"""What every subcommand shares: exit codes, the help formatter, the subcommand
factory, and the settings the option table resolves. Standard library and the
``config`` package only: ``chunkeval --help`` must not import numpy."""

from __future__ import annotations

import argparse
import os
import textwrap
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pytest_chunkeval.config.option import argparse_type
from pytest_chunkeval.config.options import (
    OPTIONS,
    Settings,
    SettingsError,
    add_options,
    resolve_settings,
)
from pytest_chunkeval.config.project import Project, find_project
from pytest_chunkeval.config.values import (
    parse_non_negative_int,
    parse_path,
    parse_positive_int,
)
from pytest_chunkeval.errors import ConfigError

EXIT_OK = 0
EXIT_FAILED = 1
"""A regression, a failed threshold, an unfinished generation."""
EXIT_USAGE = 2
"""A usage or data error (argparse uses 2 too)."""
CACHE_SETTING = "--cache-dir (or CHUNKEVAL_CACHE_DIR)"
"""How a command's user chooses the cache directory (named in its errors)."""
JUDGE_ADVICE = (
    "the command line scores against excerpts: write judged ones with chunkeval "
    "judge --queries {queries} --judge llm:MODEL --out FILE (the same --corpus; "
    "docs/judged.md), then evaluate FILE"
)
"""What a command's user does with a query set without excerpts (``{queries}``):
only ``chunkeval judge`` takes a judge."""


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter that shows every option's default and keeps the
    indented lines of a description or epilog (the examples) as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines: list[str] = []
        paragraph: list[str] = []

        def flush() -> None:
            if paragraph:
                lines.append(
                    super(HelpFormatter, self)._fill_text(
                        " ".join(paragraph), width, indent
                    )
                )
                paragraph.clear()

        for line in textwrap.dedent(text).strip("\n").splitlines():
            if not line.strip():
                flush()
                lines.append("")
            elif line.startswith(" "):  # an example: verbatim
                flush()
                lines.append(indent + line)
            else:
                paragraph.append(line.strip())
        flush()
        return "\n".join(lines)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if (
            "default" in text.lower()
            or action.required
            or not action.option_strings
            or action.default is argparse.SUPPRESS
        ):
            return text
        if isinstance(action, argparse._StoreTrueAction):
            return f"{text} (default: off)"
        if action.default is None:
            return text  # the help must say it (tests/test_cli_help.py checks)
        return f"{text} (default: %(default)s)"


non_negative_int = argparse_type(parse_non_negative_int)
"""An argument type: a whole number >= 0 (a count, a seed, retries)."""
positive_int = argparse_type(parse_positive_int)
"""An argument type: a whole number >= 1 (a count of queries, attempts, results)."""


def _price(text: str) -> tuple[float, float]:
    """``--price-per-1k`` (its parser imported only when the flag is given)."""
    from pytest_chunkeval.llm.pricing import parse_price

    return parse_price(text)


def add_price_option(parser: Any) -> None:
    """``--price-per-1k``: every command that asks an LLM takes it, for its cost
    estimate (``generate``, ``judge``, ``relationships``)."""
    parser.add_argument(
        "--price-per-1k",
        type=argparse_type(_price),
        default=None,
        metavar="USD[,USD]",
        help="price per 1000 tokens (input[,output]) for the cost estimate "
        "(default: the built-in price of a known model, else no cost shown)",
    )


def epilog(examples: str, *, grammar: bool = False) -> str:
    """An epilog of examples (and the spec grammar), kept as written."""
    text = "examples:\n" + textwrap.indent(textwrap.dedent(examples).strip(), "  ")
    if grammar:
        from pytest_chunkeval.config.specs import SPEC_GRAMMAR

        text += "\n\nspec strings:\n" + textwrap.indent(SPEC_GRAMMAR, "  ")
    return text


def add_command(
    subparsers: Any,
    name: str,
    *,
    help: str,
    description: str,
    examples: str,
    grammar: bool = False,
) -> argparse.ArgumentParser:
    """A subcommand parser with the shared formatter and an examples epilog
    (``grammar``: followed by the spec grammar)."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        name,
        help=help,
        description=description,
        epilog=epilog(examples, grammar=grammar),
        formatter_class=HelpFormatter,
    )
    return parser


def add_data_options(parser: argparse.ArgumentParser) -> None:
    """``--benchmark``, ``--corpus PATH...`` with ``--queries FILE``, or
    ``--beir DIR`` (``--beir-split``)."""
    data = parser.add_argument_group(
        "data (a bundled benchmark, your corpus + queries, or a BEIR folder)"
    )
    add_options(
        data.add_argument,
        ["benchmark", "corpus", "queries", "beir", "beir_split"],
        where="cli",
        changes={"corpus": {"multiple": False, "nargs": "+"}},
    )


def load_data(args: argparse.Namespace, config: Settings) -> tuple[Any, Any]:
    """The corpus and query set the flags name."""
    if args.chunkeval_benchmark and (args.chunkeval_corpus or args.chunkeval_queries):
        raise ConfigError("give --benchmark, or --corpus with --queries, not both")
    from pytest_chunkeval.data.benchmarks import load_benchmark
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet

    if config.benchmark:
        return load_benchmark(config.benchmark)
    if config.beir:
        from pytest_chunkeval.data.beir import DEFAULT_SPLIT, load_beir

        corpus, queries = load_beir(config.beir, config.beir_split or DEFAULT_SPLIT)
        counts = queries.metadata["beir"]
        print(
            f"BEIR {config.beir} ({counts['split']}): {len(queries)} of "
            f"{counts['questions']} questions, "
            f"{counts['skipped_without_relevant']} skipped (no relevant document)"
        )
        return corpus, queries
    if not (config.corpus and config.queries):
        raise ConfigError(
            "give --benchmark NAME, --corpus PATH... --queries FILE, or --beir DIR"
        )
    given = getattr(args, "chunkeval_corpus", None)  # as typed, for messages
    source = " ".join(str(p) for p in given) if given else None
    corpus = Corpus.from_paths(list(config.corpus), source=source)
    return corpus, QuerySet.load(config.queries, corpus)


def check_outputs(outputs: Mapping[str, object]) -> None:
    """Refuse, before any work, an output file a command could not write:
    ``outputs`` maps each output flag to its path (None or "" when not given).
    Every command checks its outputs here, first, so a run never computes for
    minutes to fail at its last line; one message for all of them."""
    for flag, value in outputs.items():
        if value is None or value == "":
            continue
        path = Path(os.path.expanduser(str(value)))
        problem = output_problem(path)
        if problem is not None:
            raise ConfigError(f"{flag} {path} {problem}: give a file to write")


def output_problem(path: Path) -> str | None:
    """Why the file ``path`` cannot be written (None when it can): it is a
    directory, a file stands where a parent directory should, or the nearest
    existing parent takes no new file (read-only, no permission). Missing
    parents are fine: the atomic writer creates them."""
    from pytest_chunkeval.util.files import directory_writable

    if path.is_dir():
        return "is a directory"
    parent = path.absolute().parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"cannot be written ({parent} is a file, not a directory)"
    if not directory_writable(parent):
        return f"cannot be written (no file can be created in {parent})"
    return None


def project(args: argparse.Namespace) -> Project:
    """The project the command runs in (its pytest configuration), read once."""
    found: Project | None = getattr(args, "chunkeval_project", None)
    if found is None:
        found = find_project(OPTIONS)
        args.chunkeval_project = found
    return found


def settings(args: argparse.Namespace, names: Iterable[str] = ()) -> Settings:
    """The option table's settings from the project's pytest configuration and a
    command's flags, combined as the plugin combines its own
    (``$CHUNKEVAL_CACHE_DIR``, the default cache under pytest's rootdir): flags
    override the ini values. Paths given on the command line are relative to the
    current directory, ini paths to the rootdir. ``names``: options the command
    takes several of (their flags are read by the command; their ini values are
    resolved here)."""
    where = project(args)
    skip = set(names)
    flags: dict[str, object] = {}
    for option in OPTIONS:
        value = getattr(args, option.dest, None)
        if option.name in skip or value is None:
            continue
        if option.parse is parse_path:
            value = _absolute(value)
        flags[option.dest] = value
    try:
        return resolve_settings(where.rootdir, where.ini, flags)
    except SettingsError as exc:
        if where.inifile is None or str(exc).startswith("--"):
            raise
        raise SettingsError(f"{where.inifile}: {exc}") from None


def _absolute(value: object) -> object:
    if isinstance(value, (list, tuple)):
        return [_absolute(v) for v in value]
    return os.path.abspath(os.path.expanduser(str(value)))
