"""``chunkeval inspect``: what a query set can tell (docs/query-quality.md)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from pytest_chunkeval.cli.common import (
    CACHE_SETTING,
    add_command,
    add_data_options,
    check_outputs,
    load_data,
    non_negative_int,
    settings,
)
from pytest_chunkeval.config.options import add_options

EXAMPLES = """
chunkeval inspect --benchmark general
chunkeval inspect --corpus docs/ --queries queries.jsonl --json inspection.json
chunkeval inspect --benchmark general --chunker recursive:200:0 \\
    --chunker recursive:400:0 --embedder hashing --store exact
"""


def register(subparsers: Any) -> None:
    """Add ``inspect`` to ``chunkeval``'s subcommands."""
    p = add_command(
        subparsers,
        "inspect",
        help="how much a query set can tell: leakage, BM25 floor, coverage...",
        description="Inspect a query set on its corpus: its size and minimum "
        "detectable effect, lexical leakage of the questions into their excerpts, "
        "the share of questions plain BM25 already finds, excerpt lengths and "
        "repeated excerpt texts, documents and Markdown sections no question asks "
        "about, near-duplicate questions, and with several --chunker the pairs "
        "of configurations the set cannot tell apart.",
        examples=EXAMPLES,
        grammar=True,
    )
    add_data_options(p)
    run = p.add_argument_group("configurations compared (two or more --chunker)")
    add_options(
        run.add_argument,
        ["chunkers", "k", "embedder", "store", "unit", "tokenizer", "cache_dir"],
        where="cli",
        changes={"chunkers": {"default_text": "none (no comparison)"}},
    )
    out = p.add_argument_group("output")
    out.add_argument(
        "--show",
        type=non_negative_int,
        default=10,
        metavar="N",
        help="examples kept per list (leakiest questions, duplicates...)",
    )
    out.add_argument("--no-bm25", action="store_true", help="skip the BM25 floor")
    out.add_argument(
        "--json",
        type=Path,
        metavar="OUT",
        help="write the inspection as JSON (default: not written)",
    )
    out.add_argument(
        "--html",
        type=Path,
        metavar="OUT",
        help="write the inspection as an HTML page (default: not written)",
    )
    out.add_argument(
        "--progress",
        action="store_true",
        help="show progress bars even when stderr is not a terminal",
    )
    p.set_defaults(func=run_inspect)


def run_inspect(args: argparse.Namespace) -> int:
    """Run ``chunkeval inspect``."""
    from pytest_chunkeval.config.defaults import DEFAULT_UNIT
    from pytest_chunkeval.engine.cache_dir import open_cache
    from pytest_chunkeval.quality.inspection import inspect_queries
    from pytest_chunkeval.quality.text import format_inspection
    from pytest_chunkeval.util.files import atomic_write_text

    config = settings(args, ["k"])
    check_outputs({"--json": args.json, "--html": args.html})
    corpus, queries = load_data(args, config)
    ks = args.chunkeval_k or []
    inspection = inspect_queries(
        corpus,
        queries,
        chunkers=config.chunkers,
        embedder=config.embedder,
        store=config.store,
        k=ks[0] if ks else None,
        unit=config.unit or DEFAULT_UNIT,
        tokenizer=config.tokenizer,
        cache=open_cache(config.cache_dir, CACHE_SETTING),
        bm25=not args.no_bm25,
        show=args.show,
        progress=True if args.progress else None,
    )
    print(format_inspection(inspection))
    if args.json:
        text = json.dumps(inspection.to_json(), indent=1, ensure_ascii=False)
        atomic_write_text(args.json, text + "\n")
        print(f"wrote {args.json}")
    if args.html:
        from pytest_chunkeval.reporting.html import html_report

        page = html_report(
            inspections=[inspection.to_json()], title="chunkeval inspect"
        )
        atomic_write_text(args.html, page)
        print(f"wrote {args.html}")
    return 0
