"""``chunkeval eval``: evaluate chunkers on a corpus and a query set."""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from pytest_chunkeval.cli.common import (
    CACHE_SETTING,
    add_command,
    add_data_options,
    check_outputs,
    load_data,
    settings,
)
from pytest_chunkeval.config.options import add_options
from pytest_chunkeval.util.collector import collector_paused

DEFAULT_CHUNKER = "recursive:200:0"

EXAMPLES = """
chunkeval eval --benchmark general --chunker recursive:200:0 --k 5
chunkeval eval --corpus docs/ --queries queries.jsonl \\
    --chunker recursive:200:0 --chunker fixed:400:0 --k 1 --k min --json out.json
chunkeval eval --benchmark general --embedder hashing --store exact --store bm25
chunkeval eval --benchmark general --budget 800 --metric recall --metric ndcg \\
    --chunker recursive:100:0 --chunker recursive:400:0 --loss
"""


def register(subparsers: Any) -> None:
    """Add ``eval`` to ``chunkeval``'s subcommands."""
    from pytest_chunkeval.reporting.table import CHUNK_COLUMNS

    p = add_command(
        subparsers,
        "eval",
        help="evaluate chunkers on a corpus and query set",
        description="Chunk the corpus with each --chunker, embed (cached), retrieve "
        "--k chunks per question and print recall, precision, PrecisionΩ and IoU "
        "(--metric adds F1, MRR, nDCG...), one row per chunker and k. Settings "
        "come from the project's pytest configuration (its chunkeval_* ini "
        "values, found as pytest finds them from the current directory); a flag "
        "overrides its ini value. The flags are the pytest plugin's "
        "(--chunkeval-NAME there), with the same defaults.",
        examples=EXAMPLES,
        grammar=True,
    )
    add_data_options(p)
    run = p.add_argument_group("what is evaluated")
    add_options(
        run.add_argument,
        ["chunkers", "k", "budget", "embedder", "store"],
        where="cli",
        changes={
            "chunkers": {"default_text": DEFAULT_CHUNKER},
            "k": {"multiple": True},
            "budget": {"multiple": True},
            "store": {"multiple": True},
        },
    )
    add_options(
        run.add_argument,
        ["rerank", "unit", "tokenizer", "copies", "cache_dir"],
        where="cli",
    )
    out = p.add_argument_group("output")
    out.add_argument(
        "--metric",
        action="append",
        choices=CHUNK_COLUMNS,
        metavar="NAME",
        help="a column of the table, repeatable (default: recall, precision, "
        f"precision_omega, iou); one of {', '.join(CHUNK_COLUMNS)}",
    )
    out.add_argument(
        "--loss",
        action="store_true",
        help="print where recall is lost: chunking (1 - ceiling), search "
        "(ceiling - recall), approximate index (exact - store)",
    )
    out.add_argument(
        "--json",
        type=Path,
        metavar="OUT",
        help="write every result (with per-query detail) to this JSON file "
        "(default: not written)",
    )
    add_options(out.add_argument, ["trec_run", "qrels"], where="cli")
    out.add_argument(
        "--progress",
        action="store_true",
        help="show progress bars even when stderr is not a terminal",
    )
    p.set_defaults(func=run_eval)


@collector_paused  # the data read and the results written too
def run_eval(args: argparse.Namespace) -> int:
    """Run ``chunkeval eval``."""
    from pytest_chunkeval.config.defaults import (
        DEFAULT_K,
        DEFAULT_STORE,
        DEFAULT_UNIT,
    )

    config = settings(args, ["k", "budget", "store"])
    check_outputs(
        {
            "--json": args.json,
            "--trec-run": args.chunkeval_trec_run,
            "--qrels": args.chunkeval_qrels,
        }
    )
    corpus, queries = load_data(args, config)

    from pytest_chunkeval.engine.cache_dir import open_cache
    from pytest_chunkeval.engine.labels import unscored_text
    from pytest_chunkeval.reporting.table import loss_lines, results_table
    from pytest_chunkeval.util.files import atomic_write_text
    from pytest_chunkeval.util.json_text import outline_json

    unit = config.unit or DEFAULT_UNIT
    # a sweep's flags replace the project's value (settings() resolved the ini's)
    stores: list[str] = args.chunkeval_store or [config.store or DEFAULT_STORE]
    budgets: list[int | None] = args.chunkeval_budget or [config.budget]
    ks = args.chunkeval_k or [DEFAULT_K if config.k is None else config.k]
    cache = open_cache(config.cache_dir, CACHE_SETTING)
    started = time.perf_counter()
    runs = [
        (chunker, k, budget, store)
        for chunker in config.chunkers or (DEFAULT_CHUNKER,)
        for k in ks
        for budget in budgets
        for store in stores
    ]
    results = _evaluate_all(runs, corpus, queries, config, cache, args.progress)
    embedders = {str(r.config["embedder"]) for r in results if r.config["embedder"]}
    print(
        f"{corpus.name}: {len(corpus)} documents, {len(queries)} queries; "
        f"embedder {', '.join(sorted(embedders)) or 'none'}, "
        f"store {', '.join(stores)}"
        + (f", rerank {config.rerank}" if config.rerank else "")
        + f", unit {unit}"
    )
    print(results_table(results, args.metric))
    unscored = unscored_text(r.to_json(details=False) for r in results)
    if unscored:  # docs/formats.md: named once
        print(unscored)
    if args.loss:
        print("where recall is lost (points of recall):")
        for line in loss_lines(results):
            print(line)
    if len(stores) > 1 or config.rerank or any(r.stages for r in results):
        for line in _stage_lines(results):
            print(line)
    reused = sum("cached" in r.timings for r in results)  # engine/result_cache.py
    print(
        f"{len(results)} evaluation(s) in {time.perf_counter() - started:.1f} s"
        + (f" ({reused} read back from the result cache)" if reused else "")
        + f"; {cache.embeddings.stats}"
    )
    if args.chunkeval_trec_run or args.chunkeval_qrels:
        from pytest_chunkeval.reporting.trec import trec_piece, write_trec

        pieces = [trec_piece(r) for r in results]
        for line in write_trec(pieces, args.chunkeval_trec_run, args.chunkeval_qrels):
            print(f"wrote {line}")
    if args.json:
        payload = [r.to_json() for r in results]
        atomic_write_text(args.json, outline_json(payload) + "\n")
        print(f"wrote {args.json}")
    return 0


def _evaluate_all(
    runs: list[tuple[str, Any, int | None, str]],
    corpus: Any,
    queries: Any,
    config: Any,
    cache: Any,
    progress: bool,
) -> list[Any]:
    """Each ``(chunker, k, budget, store)`` of the sweep evaluated, its progress
    lines naming its place in the sweep."""
    from pytest_chunkeval.config.defaults import DEFAULT_EMBEDDER, DEFAULT_UNIT
    from pytest_chunkeval.config.scoring import DEFAULT_COPIES
    from pytest_chunkeval.engine.evaluate import evaluate
    from pytest_chunkeval.util.progress import progress_phase

    results = []
    for number, (chunker, k, budget, store) in enumerate(runs, 1):
        with progress_phase(f"configuration {number} of {len(runs)}"):
            results.append(
                evaluate(
                    chunker,
                    corpus,
                    queries,
                    embedder=config.embedder or DEFAULT_EMBEDDER,
                    store=store,
                    rerank=config.rerank,
                    k=k,
                    budget=budget,
                    unit=config.unit or DEFAULT_UNIT,
                    tokenizer=config.tokenizer,
                    cache=cache,
                    progress=True if progress else None,
                    copies=config.copies or DEFAULT_COPIES,
                )
            )
    return results


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
