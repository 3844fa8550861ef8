"""``chunkeval relationships``: which chunking gives the best retrieved relationships
(Graph-RAG, docs/relationships.md#the-method)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from pytest_chunkeval.cli.common import (
    CACHE_SETTING,
    add_command,
    add_data_options,
    add_price_option,
    check_outputs,
    load_data,
    positive_int,
    settings,
)
from pytest_chunkeval.cli.eval import DEFAULT_CHUNKER
from pytest_chunkeval.config.options import add_options

EXAMPLES = """
chunkeval relationships --benchmark general --extractor llm:gpt-4o-mini \\
    --chunker recursive:200:0 --chunker cluster:200
chunkeval relationships --corpus docs/ --queries queries.jsonl \\
    --extractor python:my_project.graph:extract --k 10 --json rel.json
"""


def register(subparsers: Any) -> None:
    """Add the ``relationships`` subcommand to ``chunkeval``'s subparsers."""
    p = add_command(
        subparsers,
        "relationships",
        help="Graph-RAG: score the relationships extracted from each chunking",
        description=(
            "Extract (subject, predicate, object) relationships with verbatim "
            "evidence from every chunk, merge them into a graph, retrieve the top k "
            "per question and score them against gold relationships extracted from "
            "the questions' excerpts (or given in the query file): rel_recall, "
            "rel_precision and the span metrics of the evidence (evidence_*). An "
            "LLM extractor costs one request per distinct chunk text plus one per "
            "excerpt; answers are cached, and the estimate is printed first."
        ),
        examples=EXAMPLES,
        grammar=True,
    )
    add_data_options(p)
    p.add_argument(
        "--extractor",
        required=True,
        metavar="SPEC",
        help="llm:MODEL (OPENAI_API_KEY / OPENAI_BASE_URL) or python:MODULE:ATTR",
    )
    p.add_argument(
        "--k",
        type=positive_int,
        default=5,
        metavar="N",
        help="relationships retrieved per question",
    )
    run = p.add_argument_group("what is evaluated")
    add_options(
        run.add_argument,
        ["chunkers", "embedder", "store", "unit", "tokenizer", "cache_dir"],
        where="cli",
        changes={"chunkers": {"default_text": DEFAULT_CHUNKER}},
    )
    out = p.add_argument_group("output")
    out.add_argument(
        "--json",
        type=Path,
        metavar="OUT",
        help="write every result to this JSON file (default: not written)",
    )
    add_price_option(out)
    out.add_argument(
        "--progress",
        action="store_true",
        help="show progress bars even when stderr is not a terminal",
    )
    p.set_defaults(func=run_relationships)


def run_relationships(args: argparse.Namespace) -> int:
    """Run ``chunkeval relationships``."""
    from pytest_chunkeval.config.defaults import (
        DEFAULT_EMBEDDER,
        DEFAULT_STORE,
        DEFAULT_UNIT,
    )
    from pytest_chunkeval.engine.cache_dir import open_cache
    from pytest_chunkeval.engine.setup import EvaluationSetup
    from pytest_chunkeval.relationships.evaluate import evaluate_relationships
    from pytest_chunkeval.relationships.specs import get_extractor
    from pytest_chunkeval.reporting.table import results_table
    from pytest_chunkeval.util.files import atomic_write_text
    from pytest_chunkeval.util.json_text import outline_json

    config = settings(args)
    check_outputs({"--json": args.json})
    corpus, queries = load_data(args, config)
    embedder = config.embedder or DEFAULT_EMBEDDER
    store = config.store or DEFAULT_STORE
    unit = config.unit or DEFAULT_UNIT
    cache = open_cache(config.cache_dir, CACHE_SETTING)
    extractor = get_extractor(args.extractor)
    started = time.perf_counter()
    # One setup for every chunker: an extractor computed every time (a function
    # without a cache_version) is asked each text once in this run.
    setup = EvaluationSetup.resolve(
        corpus,
        queries,
        embedder=embedder,
        store=store,
        unit=unit,
        tokenizer=config.tokenizer,
        cache=cache,
    )
    results = []
    for chunker in config.chunkers or (DEFAULT_CHUNKER,):
        results.append(
            evaluate_relationships(
                chunker,
                corpus,
                queries,
                extractor=extractor,
                k=args.k,
                setup=setup,
                progress=True if args.progress else None,
                log=lambda line: print(line, file=sys.stderr, flush=True),
                price=args.price_per_1k,
            )
        )
    print(
        f"{corpus.name}: {len(corpus)} documents, {len(queries)} queries; "
        f"extractor {extractor.identity}, embedder {embedder}, "
        f"store {store}, unit {unit}, k={args.k} relationships"
    )
    print(results_table(results))
    for r in results:
        ex = r.graph["extraction"]
        print(
            f"{r.label}: {r.graph['relationships']} relationships, "
            f"{r.graph['entities']} entities from {ex['texts']} chunk texts "
            f"({ex['cached']} cached, {ex['reused']} asked earlier in this run, "
            f"{ex['not_verbatim']} dropped: evidence not "
            f"verbatim); {r.graph['questions_without_gold']} questions without "
            "gold relationships"
        )
    print(f"{len(results)} evaluation(s) in {time.perf_counter() - started:.1f} s")
    if args.json:
        payload = [r.to_json() for r in results]
        atomic_write_text(args.json, outline_json(payload) + "\n")
        print(f"wrote {args.json}")
    return 0
