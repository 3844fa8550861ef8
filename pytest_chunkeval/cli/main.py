"""The ``chunkeval`` command: ``eval``, ``cache``, ``generate``, ``filter``.

Errors go to stderr with exit code 2; heavy modules load only for the subcommand run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

EXIT_USAGE = 2


class CommandError(Exception):
    """A failure the user can fix; printed without a traceback."""


def _budget_value(text: str) -> int:
    from pytest_chunkeval.config.options import parse_budget

    return parse_budget(text)


def _k_value(text: str) -> int | str:
    from pytest_chunkeval.config.defaults import check_k

    try:
        return check_k(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_data_options(p: argparse.ArgumentParser) -> None:
    src = p.add_argument_group("data (a bundled benchmark, or your corpus + queries)")
    src.add_argument("--benchmark", help="bundled benchmark name, e.g. 'general'")
    src.add_argument("--corpus", nargs="+", metavar="PATH", help="files, dirs, globs")
    src.add_argument("--queries", metavar="FILE", help="query set (.jsonl/.json/.csv)")


def _load_data(args: argparse.Namespace) -> tuple[Any, Any]:
    from pytest_chunkeval.data.benchmarks import load_benchmark
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet

    if args.benchmark and (args.corpus or args.queries):
        raise CommandError("give --benchmark, or --corpus with --queries, not both")
    if args.benchmark:
        return load_benchmark(args.benchmark)
    if not (args.corpus and args.queries):
        raise CommandError("give --benchmark NAME, or --corpus PATH... --queries FILE")
    corpus = Corpus.from_paths(args.corpus)
    return corpus, QuerySet.load(args.queries, corpus)


def cmd_eval(args: argparse.Namespace) -> int:
    from pytest_chunkeval.engine.cache import EmbeddingCache, default_cache_dir
    from pytest_chunkeval.engine.evaluate import evaluate
    from pytest_chunkeval.reporting.table import loss_lines, results_table
    from pytest_chunkeval.util.files import atomic_write_text

    corpus, queries = _load_data(args)
    cache = EmbeddingCache(args.cache_dir or default_cache_dir())
    results = []
    started = time.perf_counter()
    from pytest_chunkeval.config.defaults import DEFAULT_STORE

    stores: list[str] = args.store or [DEFAULT_STORE]
    budgets: list[int | None] = args.budget or [None]
    for chunker in args.chunker or ["recursive:200:0"]:
        for k in args.k or [5]:
            for budget in budgets:
                for store in stores:
                    results.append(
                        evaluate(
                            chunker,
                            corpus,
                            queries,
                            embedder=args.embedder,
                            store=store,
                            rerank=args.rerank,
                            k=k,
                            budget=budget,
                            unit=args.unit,
                            tokenizer=args.tokenizer,
                            cache=cache,
                            progress=True if args.progress else None,
                        )
                    )
    embedders = {str(r.config["embedder"]) for r in results if r.config["embedder"]}
    print(
        f"{corpus.name}: {len(corpus)} documents, {len(queries)} queries; "
        f"embedder {', '.join(sorted(embedders)) or 'none'}, "
        f"store {', '.join(stores)}"
        + (f", rerank {args.rerank}" if args.rerank else "")
        + f", unit {args.unit}"
    )
    print(results_table(results, args.metric))
    if args.loss:
        print("where recall is lost (points of recall):")
        for line in loss_lines(results):
            print(line)
    if len(stores) > 1 or args.rerank or any(r.stages for r in results):
        for line in _stage_lines(results):
            print(line)
    print(
        f"{len(results)} evaluation(s) in {time.perf_counter() - started:.1f} s; "
        f"{cache.stats}"
    )
    if args.json:
        payload = [r.to_json() for r in results]
        atomic_write_text(args.json, json.dumps(payload, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0


def _stage_lines(results: list[Any]) -> list[str]:
    """Per result, the store and the recall of each retrieval stage."""
    lines = []
    for r in results:
        parts = [f"recall {100 * r.mean('recall'):.1f}"]
        for name, stage in r.stages.items():
            parts.append(
                f"{name} {100 * stage.recall_at_k.mean:.1f} "
                f"(in top {stage.depth}: {100 * stage.recall.mean:.1f})"
            )
        store = r.config.get("store")
        rerank = " + rerank" if r.config.get("rerank") else ""
        lines.append(f"  {r.label} k={r.config.get('k')} {store}{rerank}: ")
        lines[-1] += "; ".join(parts)
    return lines


def cmd_cache(args: argparse.Namespace) -> int:
    from pytest_chunkeval.engine.cache import EmbeddingCache, default_cache_dir
    from pytest_chunkeval.engine.search_cache import SearchCache
    from pytest_chunkeval.llm.answers import AnswerCache

    cache = EmbeddingCache(args.cache_dir or default_cache_dir())
    searches = SearchCache(cache.directory)
    answers = AnswerCache(cache.directory)
    if args.action == "clear":
        if args.role is not None:
            removed = answers.clear(args.role, args.identity)
            print(f"removed {removed} cached {args.role} answers from {answers.root}")
            return 0
        removed = cache.clear(args.identity)
        # retrieval results depend on the vectors: they go with them
        dropped = searches.clear()
        print(
            f"removed {removed} cache entries and {dropped} stored search results "
            f"from {cache.directory}"
        )
        return 0
    info = cache.info()
    print(f"embedding cache at {cache.directory}")
    if not info:
        print("  (empty)")
    print(f"  stored search results: {len(searches.entries())}")
    for identity, entry in sorted(info.items()):
        corrupt = f", {entry['corrupt']} corrupt set aside" if entry["corrupt"] else ""
        print(
            f"  {identity}: {entry['entries']} vectors (dim {entry['dimension']}), "
            f"{entry['bytes'] / 1e6:.1f} MB in {entry['files']} file(s){corrupt}"
        )
    _print_answers(answers)
    return 0


def _print_answers(answers: Any) -> None:
    """The LLM answer cache, per role and answerer (``chunkeval cache info``)."""
    info = answers.info()
    print(f"LLM answers at {answers.root}")
    if not info:
        print("  (none)")
    for role, entry in sorted(info.items()):
        corrupt = f", {entry['corrupt']} corrupt set aside" if entry["corrupt"] else ""
        print(
            f"  {role}: {entry['entries']} answers, "
            f"{entry['bytes'] / 1e6:.1f} MB{corrupt}"
        )
        for identity, count in sorted(entry["identities"].items()):
            print(f"    {identity}: {count}")


def build_parser() -> argparse.ArgumentParser:
    from pytest_chunkeval.config.defaults import (
        DEFAULT_EMBEDDER,
        DEFAULT_STORE,
        DEFAULT_UNIT,
        UNITS,
    )
    from pytest_chunkeval.config.specs import SPEC_GRAMMAR, spec_argument

    parser = argparse.ArgumentParser(
        prog="chunkeval",
        description="Token-level retrieval evaluation of chunkers and retrievers.",
        epilog=SPEC_GRAMMAR,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ev = sub.add_parser(
        "eval",
        help="evaluate chunkers on a corpus and query set",
        epilog=SPEC_GRAMMAR,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_data_options(ev)
    ev.add_argument(
        "--chunker",
        action="append",
        type=spec_argument("chunker"),
        metavar="SPEC",
        help="chunker spec, repeatable (default recursive:200:0)",
    )
    ev.add_argument(
        "--embedder",
        default=DEFAULT_EMBEDDER,
        type=spec_argument("embedder"),
        metavar="SPEC",
    )
    ev.add_argument(
        "--store",
        action="append",
        type=spec_argument("store"),
        metavar="SPEC",
        help=f"store spec, repeatable (default {DEFAULT_STORE}): exact, chroma, "
        "bm25 (no embedder), hybrid (dense + bm25 fused)",
    )
    ev.add_argument(
        "--rerank",
        default=None,
        type=spec_argument("reranker"),
        metavar="SPEC",
        help="re-score each store's top n with a cross-encoder and keep k "
        "(cross-encoder:NAME_OR_PATH?n=20)",
    )
    ev.add_argument(
        "--k", action="append", type=_k_value, metavar="N|min", help="repeatable"
    )
    from pytest_chunkeval.reporting.table import CHUNK_COLUMNS

    ev.add_argument(
        "--budget",
        action="append",
        type=_budget_value,
        metavar="B",
        help="token budget per query, repeatable: score the ranks whose summed "
        "length fits B (whole chunks), so chunkers of different sizes compare at "
        "equal context",
    )
    ev.add_argument(
        "--metric",
        action="append",
        choices=CHUNK_COLUMNS,
        metavar="NAME",
        help="a column of the table, repeatable (default recall, precision, "
        f"precision_omega, iou); one of {', '.join(CHUNK_COLUMNS)}",
    )
    ev.add_argument(
        "--loss",
        action="store_true",
        help="print where recall is lost: chunking (1 - ceiling), search "
        "(ceiling - recall), approximate index (exact - store)",
    )
    ev.add_argument("--unit", choices=UNITS, default=DEFAULT_UNIT)
    ev.add_argument(
        "--tokenizer", default=None, type=spec_argument("tokenizer"), metavar="SPEC"
    )
    ev.add_argument("--cache-dir", type=Path, default=None)
    ev.add_argument("--json", type=Path, metavar="OUT", help="write all results")
    ev.add_argument("--progress", action="store_true", help="always show progress")
    ev.set_defaults(func=cmd_eval)

    ca = sub.add_parser(
        "cache", help="show or clear the caches (vectors, searches, LLM answers)"
    )
    ca.add_argument("action", choices=("info", "clear"))
    ca.add_argument("--cache-dir", type=Path, default=None)
    ca.add_argument(
        "--identity",
        default=None,
        help="clear one embedder only (with --role: one model or callable)",
    )
    ca.add_argument(
        "--role",
        default=None,
        help="clear the cached LLM answers of one role (judge, generate...)",
    )
    ca.set_defaults(func=cmd_cache)

    for register in _extra_commands():
        register(sub)
    return parser


def _extra_commands() -> list[Callable[[Any], None]]:
    """Subcommands defined in their own modules (generate, filter, report,
    relationships, judge)."""
    from pytest_chunkeval.cli import generate as cli_generate
    from pytest_chunkeval.cli import judge as cli_judge
    from pytest_chunkeval.cli import relationships as cli_relationships
    from pytest_chunkeval.cli import report as cli_report

    return [
        cli_generate.register,
        cli_report.register,
        cli_relationships.register,
        cli_judge.register,
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
        return result
    except KeyboardInterrupt:
        print("chunkeval: interrupted", file=sys.stderr)
        return 130
    except (CommandError, ValueError, KeyError, OSError, RuntimeError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"chunkeval {args.command}: error: {message}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
