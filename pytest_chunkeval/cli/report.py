"""``chunkeval report HISTORY --html OUT [--md OUT]``: a report from a history file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.cli.common import add_command, check_outputs
from pytest_chunkeval.errors import ConfigError, DataError

if TYPE_CHECKING:
    from pytest_chunkeval.reporting.rows import ReportEntry


def register(subparsers: Any) -> None:
    """Add the ``report`` subcommand to ``chunkeval``'s subparsers."""
    p = add_command(
        subparsers,
        "report",
        help="HTML / Markdown report from a history file (--chunkeval-history)",
        description=(
            "Write one self-contained HTML page (results table, per-corpus bars, "
            "recall vs IoU / precision, each metric over commits) and/or a "
            "Markdown table from a chunkeval history file."
        ),
        examples="""
        chunkeval report .chunkeval/history.jsonl --html report.html
        chunkeval report history.jsonl --md summary.md --title "nightly retrieval"
        chunkeval report history.jsonl --html report.html --results results.json
        chunkeval report history.jsonl --html report.html --results results.json \\
            --benchmark general
        """,
    )
    p.add_argument(
        "history",
        type=Path,
        metavar="HISTORY",
        help="history .jsonl (written by --chunkeval-history)",
    )
    p.add_argument(
        "--html",
        type=Path,
        metavar="OUT",
        help="write the HTML page (default: not written)",
    )
    p.add_argument(
        "--md",
        type=Path,
        metavar="OUT",
        help="write a Markdown table (default: not written)",
    )
    p.add_argument(
        "--results",
        type=Path,
        metavar="JSON",
        help="also show a session's results (a --chunkeval-json file; default: none)",
    )
    p.add_argument(
        "--corpus",
        nargs="+",
        type=Path,
        metavar="PATH",
        help=(
            "the corpus the --results were measured on (files / folders, as given "
            "to chunkeval eval): the HTML page gets the question explorer "
            "(default: none, no explorer)"
        ),
    )
    p.add_argument(
        "--benchmark",
        metavar="NAME",
        help="like --corpus, a bundled benchmark's corpus (default: none)",
    )
    p.add_argument("--title", default="chunkeval report", help="page title")
    p.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    """Run ``chunkeval report``."""
    from pytest_chunkeval.reporting.history import read_history
    from pytest_chunkeval.reporting.html import html_report
    from pytest_chunkeval.reporting.json_report import read_json_report
    from pytest_chunkeval.reporting.markdown import history_markdown, markdown_report
    from pytest_chunkeval.util.files import atomic_write_text

    if args.html is None and args.md is None:
        raise ConfigError("nothing to write: give --html OUT and/or --md OUT")
    check_outputs({"--html": args.html, "--md": args.md})
    records = read_history(args.history)
    entries = read_json_report(args.results) if args.results else []
    if not records and not entries:
        raise DataError(f"history file {args.history} holds no records yet")
    if args.corpus or args.benchmark:
        entries = _explore(entries, args)
    if args.html is not None:
        atomic_write_text(args.html, html_report(entries, records, title=args.title))
        print(f"wrote {args.html}")
    if args.md is not None:
        text = (
            history_markdown(records, title=args.title)
            if records
            else markdown_report(entries, title=args.title)
        )
        atomic_write_text(args.md, text)
        print(f"wrote {args.md}")
    return 0


def _explore(entries: list[ReportEntry], args: argparse.Namespace) -> list[ReportEntry]:
    """The entries measured on the corpus named, with the explorer's data."""
    from dataclasses import replace

    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.reporting.explorer import explorer_piece

    if args.corpus and args.benchmark:
        raise ConfigError("give --corpus or --benchmark, not both")
    if not entries:
        raise ConfigError("--corpus / --benchmark need --results (a --chunkeval-json)")
    if args.benchmark:
        from pytest_chunkeval.data.benchmarks import load_benchmark

        corpus = load_benchmark(args.benchmark)[0]
    else:
        corpus = Corpus.from_paths(args.corpus)
    out, hashes = [], set()
    for entry in entries:
        result = EvalResult.from_json(dict(entry.result))
        hashes.add(result.corpus_hash[:12])
        if result.corpus_hash == corpus.content_hash:
            result.corpus = corpus
            entry = replace(entry, explorer=explorer_piece(result))
        out.append(entry)
    explored = sum(e.explorer is not None for e in out)
    if not any(e.result.get("corpus_hash") == corpus.content_hash for e in out):
        raise DataError(
            f"the results were measured on corpus {', '.join(sorted(hashes))}…, "
            f"not on this one ({corpus.content_hash[:12]}…): same files, same "
            "document ids (paths as given to chunkeval eval)?"
        )
    if explored < len(out):
        print(
            f"question explorer: {explored} of {len(out)} results (the others were "
            "measured on another corpus or carry no per-question detail)"
        )
    return out
