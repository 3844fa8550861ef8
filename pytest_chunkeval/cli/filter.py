"""``chunkeval filter``: drop near-duplicate questions and questions with poor
excerpts (``chunkeval generate`` runs the same filters at its end)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_chunkeval.cli.common import (
    CACHE_SETTING,
    add_command,
    check_outputs,
    settings,
)
from pytest_chunkeval.config.option import argparse_type
from pytest_chunkeval.config.options import add_options
from pytest_chunkeval.errors import ConfigError


def _threshold(text: str) -> float | str | None:
    """A cosine threshold, ``off`` (None), or ``default`` (the embedder's)."""
    word = text.strip().lower()
    if word in ("off", "none"):
        return None
    if word == "default":
        return "default"
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not -1 <= value <= 1:
        raise ConfigError(
            f"{text!r}: expected a cosine similarity in [-1, 1], 'off' or 'default'"
        )
    return value


def _say(message: str) -> None:
    print(message, flush=True)


def add_filter_options(p: argparse.ArgumentParser, *, title: str) -> None:
    """The filters' flags (shared with ``chunkeval generate``)."""
    g = p.add_argument_group(title)
    add_options(g.add_argument, ["embedder", "cache_dir"], where="cli")
    g.add_argument(
        "--duplicate-threshold",
        type=argparse_type(_threshold),
        default="default",
        metavar="COS|off|default",
        help="drop a question whose cosine with an earlier kept one is above this "
        "(default: calibrated per embedder, see docs/generate.md)",
    )
    g.add_argument(
        "--excerpt-threshold",
        type=argparse_type(_threshold),
        default="default",
        metavar="COS|off|default",
        help="drop a question whose cosine with any of its excerpts is below this "
        "(default: calibrated per embedder)",
    )


def run_filters(
    queries: Any,
    args: argparse.Namespace,
    out: Path,
    *,
    dry_run: bool,
) -> int:
    """Filter ``queries`` into ``out`` as the flags say; the exit code."""
    from pytest_chunkeval.config.defaults import DEFAULT_EMBEDDER
    from pytest_chunkeval.engine.cache_dir import open_cache
    from pytest_chunkeval.generation.filters import filter_queries, format_report

    config = settings(args)
    cache = open_cache(config.cache_dir, CACHE_SETTING)
    result = filter_queries(
        queries,
        embedder=config.embedder or DEFAULT_EMBEDDER,
        duplicate_threshold=args.duplicate_threshold,
        excerpt_threshold=args.excerpt_threshold,
        cache=cache.embeddings,
        progress=True if getattr(args, "progress", False) else None,
    )
    _say(format_report(result))
    if dry_run:
        _say(f"dry run: {out} not written")
    else:
        result.kept.save(out)
        _say(f"wrote {len(result.kept)} queries to {out}")
    return 0


def run_filter(args: argparse.Namespace) -> int:
    """Run ``chunkeval filter``."""
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet, read_queries

    source = Path(args.queries)
    if args.out:
        out = Path(args.out)
    else:  # a reference .csv is filtered into JSONL
        suffix = source.suffix if source.suffix.lower() == ".json" else ".jsonl"
        out = source.with_name(f"{source.stem}.filtered{suffix}")
    if out.suffix.lower() not in (".jsonl", ".json"):
        raise ConfigError(f"--out {out}: use a .jsonl or .json file name")
    if not args.dry_run:
        check_outputs({"--out": out})
    if args.corpus:
        queries = QuerySet.load(source, Corpus.from_paths(args.corpus))
    elif source.suffix.lower() == ".csv":
        raise ConfigError(
            f"{source}: a reference CSV names documents by stem; give --corpus to "
            "read it"
        )
    else:
        queries = read_queries(source)
    return run_filters(queries, args, out, dry_run=args.dry_run)


def register(subparsers: Any) -> None:
    """Add ``filter`` to ``chunkeval``'s subcommands."""
    flt = add_command(
        subparsers,
        "filter",
        help="drop near-duplicate questions and questions with poor excerpts",
        description="Embed the questions and excerpts of a query set, print the "
        "similarity distributions, and write the queries both filters keep.",
        examples="""
        chunkeval filter queries.jsonl
        chunkeval filter queries.jsonl --out queries.filtered.jsonl --dry-run
        chunkeval filter questions_df.csv --corpus corpora/ --duplicate-threshold off
        """,
    )
    flt.add_argument("queries", metavar="FILE", help="query set (.jsonl or .json)")
    flt.add_argument(
        "--out",
        default=None,
        metavar="FILE",
        help="filtered set (default: FILE-STEM.filtered.jsonl; may be FILE itself)",
    )
    flt.add_argument(
        "--corpus",
        nargs="+",
        default=None,
        metavar="PATH",
        help="validate the excerpts against this corpus first (required for a "
        "reference .csv; default: not validated)",
    )
    flt.add_argument(
        "--dry-run", action="store_true", help="report only, write nothing"
    )
    flt.add_argument(
        "--progress",
        action="store_true",
        help="show progress bars even when stderr is not a terminal",
    )
    add_filter_options(flt, title="filters")
    flt.set_defaults(func=run_filter)
