"""``chunkeval relationships``: which chunking gives the best retrieved relationships
(Graph-RAG, SPEC §11)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return int(text)


def register(subparsers: Any) -> None:
    """Add the ``relationships`` subcommand to ``chunkeval``'s subparsers."""
    from pytest_chunkeval.cli.main import _add_data_options
    from pytest_chunkeval.config.defaults import (
        DEFAULT_EMBEDDER,
        DEFAULT_STORE,
        DEFAULT_UNIT,
        UNITS,
    )

    p = subparsers.add_parser(
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
    )
    _add_data_options(p)
    p.add_argument(
        "--chunker",
        action="append",
        metavar="SPEC",
        help="chunker spec, repeatable (default recursive:200:0)",
    )
    p.add_argument(
        "--extractor",
        required=True,
        metavar="SPEC",
        help="llm:MODEL (OPENAI_API_KEY / OPENAI_BASE_URL) or python:MODULE:ATTR",
    )
    p.add_argument(
        "--k", type=_positive_int, default=5, metavar="N", help="relationships"
    )
    p.add_argument("--embedder", default=DEFAULT_EMBEDDER, metavar="SPEC")
    p.add_argument("--store", default=DEFAULT_STORE, metavar="SPEC")
    p.add_argument("--unit", choices=UNITS, default=DEFAULT_UNIT)
    p.add_argument("--tokenizer", default=None, metavar="NAME")
    p.add_argument("--cache-dir", type=Path, default=None)
    p.add_argument("--json", type=Path, metavar="OUT", help="write all results")
    p.add_argument("--progress", action="store_true", help="always show progress")
    p.set_defaults(func=cmd_relationships)


def cmd_relationships(args: argparse.Namespace) -> int:
    from pytest_chunkeval.cli.main import _load_data
    from pytest_chunkeval.engine.cache import EmbeddingCache, default_cache_dir
    from pytest_chunkeval.graph.evaluate import evaluate_relationships
    from pytest_chunkeval.graph.extractors import get_extractor
    from pytest_chunkeval.reporting.table import results_table
    from pytest_chunkeval.util.files import atomic_write_text

    corpus, queries = _load_data(args)
    cache = EmbeddingCache(args.cache_dir or default_cache_dir())
    extractor = get_extractor(args.extractor)
    started = time.perf_counter()
    results = []
    for chunker in args.chunker or ["recursive:200:0"]:
        results.append(
            evaluate_relationships(
                chunker,
                corpus,
                queries,
                extractor=extractor,
                k=args.k,
                embedder=args.embedder,
                store=args.store,
                unit=args.unit,
                tokenizer=args.tokenizer,
                cache=cache,
                progress=True if args.progress else None,
                log=lambda line: print(line, file=sys.stderr, flush=True),
            )
        )
    print(
        f"{corpus.name}: {len(corpus)} documents, {len(queries)} queries; "
        f"extractor {extractor.identity}, embedder {args.embedder}, "
        f"store {args.store}, unit {args.unit}, k={args.k} relationships"
    )
    print(results_table(results))
    for r in results:
        ex = r.graph["extraction"]
        print(
            f"{r.label}: {r.graph['relationships']} relationships, "
            f"{r.graph['entities']} entities from {ex['texts']} chunk texts "
            f"({ex['cached']} cached, {ex['not_verbatim']} dropped: evidence not "
            f"verbatim); {r.graph['questions_without_gold']} questions without "
            "gold relationships"
        )
    print(f"{len(results)} evaluation(s) in {time.perf_counter() - started:.1f} s")
    if args.json:
        payload = [r.to_json() for r in results]
        atomic_write_text(args.json, json.dumps(payload, indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0
