"""The ``chunkeval`` command: its parser and how its errors end.

Each subcommand lives in its own module (``cli/eval.py``, ``cli/cache.py``...)
with a ``register(subparsers)`` function; heavy modules load only inside the
subcommand that runs, so ``chunkeval --help`` imports no numpy.

Exit codes: 0 success; 1 a failed check (regression, threshold) or unfinished work;
2 a usage or data error, printed as one line; 130 interrupted; 141 the reader of
the output went away (``chunkeval cache info | head -3``), as a shell shows a
command that SIGPIPE ended. Any other exception is a bug in chunkeval and keeps
its traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from pytest_chunkeval.cli.common import (
    CACHE_SETTING,
    EXIT_FAILED,
    EXIT_USAGE,
    JUDGE_ADVICE,
    HelpFormatter,
    epilog,
)
from pytest_chunkeval.errors import CheckFailed, ChunkevalError, ChunkevalWarning
from pytest_chunkeval.util.judge_advice import advice_named
from pytest_chunkeval.util.unwritable import setting_named

__all__ = ["COMMANDS", "EXIT_FAILED", "EXIT_USAGE", "build_parser", "main"]

COMMANDS = (
    "eval",
    "inspect",
    "cache",
    "generate",
    "filter",
    "report",
    "relationships",
    "judge",
)
"""Subcommand modules of ``pytest_chunkeval.cli``, in ``--help`` order."""

EXAMPLES = """
chunkeval eval --benchmark general --chunker recursive:200:0 --k 5
chunkeval generate --corpus docs/ --out queries.jsonl --n 200 --model gpt-4o-mini
chunkeval report .chunkeval/history.jsonl --html report.html
chunkeval cache info
"""


def build_parser() -> argparse.ArgumentParser:
    """The ``chunkeval`` parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="chunkeval",
        description="Token-level retrieval evaluation of chunkers and retrievers. "
        "Run `chunkeval COMMAND --help` for a command's options.",
        epilog=epilog(EXAMPLES, grammar=True),
        formatter_class=HelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"pytest_chunkeval.cli.{name}").register(sub)
    return parser


def _one_line(exc: BaseException) -> str:
    # str() of a KeyError quotes its message
    text = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
    return str(text)


_WITHOUT_PROJECT_NAMES = frozenset({"cache", "report"})
"""Commands that resolve no spec string: the project's conftest is not imported."""


def _project_names(args: argparse.Namespace) -> AbstractContextManager[None]:
    """The names the project's conftest registers, while a command that resolves
    spec strings runs (cli/registrations.py)."""
    if args.command in _WITHOUT_PROJECT_NAMES:
        return nullcontext()
    from pytest_chunkeval.cli.common import project
    from pytest_chunkeval.cli.registrations import project_registrations

    return project_registrations(project(args))


def _warning_printer(command: str) -> Any:
    """``warnings.showwarning`` printing the package's warnings as one line
    (``chunkeval eval: warning: ...``), any other warning as Python does."""
    default = warnings.showwarning

    def show(message: Any, category: Any, *args: Any, **kwargs: Any) -> None:
        if issubclass(category, ChunkevalWarning):
            print(f"chunkeval {command}: warning: {message}", file=sys.stderr)
        else:
            default(message, category, *args, **kwargs)

    return show


EXIT_PIPE = 141
"""The output's reader went away (128 + SIGPIPE, what a shell shows)."""


def _drop_stdout() -> None:
    """Point stdout at the null device: what is left to print, and the flush
    at exit, go nowhere instead of raising BrokenPipeError again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor
        pass
    finally:
        os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``chunkeval`` with ``argv`` (default ``sys.argv[1:]``); the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            # the package's warnings are part of a command's output: printed
            # (once per place) as one line, whatever the caller's filters say
            warnings.simplefilter("default", ChunkevalWarning)
            warnings.showwarning = _warning_printer(args.command)
            with (
                _project_names(args),
                setting_named(CACHE_SETTING),
                advice_named(JUDGE_ADVICE),
            ):
                code: int = args.func(args)
            sys.stdout.flush()  # a closed pipe fails here, not in Python's exit
        return code
    except BrokenPipeError:
        _drop_stdout()
        return EXIT_PIPE
    except KeyboardInterrupt:
        print("chunkeval: interrupted", file=sys.stderr)
        return 130
    except CheckFailed as exc:
        print(f"chunkeval {args.command}: {_one_line(exc)}", file=sys.stderr)
        return EXIT_FAILED
    except ChunkevalError as exc:
        print(f"chunkeval {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
