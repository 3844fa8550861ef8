"""``chunkeval generate``: build a query set for a corpus with an LLM, then filter
it (the filters are ``chunkeval filter``'s). Heavy modules (openai, the embedder)
load only when the command runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_chunkeval.cli.common import (
    CACHE_SETTING,
    EXIT_FAILED,
    add_command,
    add_price_option,
)
from pytest_chunkeval.cli.filter import add_filter_options, run_filters
from pytest_chunkeval.errors import ConfigError, UnavailableError

EXIT_INCOMPLETE = EXIT_FAILED
"""The target count was not reached (re-run the same command to resume)."""


def _similarity(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a similarity in (0, 1], e.g. 0.9"
        )
    return value


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected a share in [0, 1], e.g. 0.5"
        )
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected an integer >= 1")
    return value


def _non_negative_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected an integer >= 0")
    return value


def _answers(directory: str) -> Any:
    """The LLM answer cache in the cache directory, checked as ``eval`` checks it."""
    from pytest_chunkeval.engine.cache_dir import open_cache
    from pytest_chunkeval.llm.answers import AnswerCache

    cache = open_cache(directory, CACHE_SETTING)
    return AnswerCache(cache.directory, read_only=cache.read_only)


def _say(message: str) -> None:
    print(message, flush=True)


def run_generate(args: argparse.Namespace) -> int:
    """Run ``chunkeval generate`` (see docs/generate.md)."""
    from pytest_chunkeval.cli.common import settings as common_settings
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.generation.chat import openai_client
    from pytest_chunkeval.generation.generate import QueryGenerator
    from pytest_chunkeval.generation.harder import load_style_examples
    from pytest_chunkeval.generation.settings import GenerationSettings
    from pytest_chunkeval.generation.summary import dry_run_plan, format_summary
    from pytest_chunkeval.llm.client import base_url_of

    out = Path(args.out)
    if out.suffix.lower() != ".jsonl":
        raise ConfigError(
            f"--out {out}: generation appends to a JSONL file; use a .jsonl name"
        )
    try:
        style = load_style_examples(args.style_examples) if args.style_examples else ()
        settings = GenerationSettings(
            model=args.model,
            n=args.n,
            seed=args.seed,
            window_chars=args.window_chars,
            max_attempts=args.max_attempts,
            max_unusable=args.max_unusable,
            approximate=args.approximate,
            temperature=args.temperature,
            json_mode=args.json_mode,
            max_leakage=args.max_leakage,
            multi_excerpt=args.multi_excerpt,
            style_examples=style,
        )
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    filtered_out = (
        Path(args.filtered_out)
        if args.filtered_out
        else out.with_name(f"{out.stem}.filtered{out.suffix}")
    )
    if not args.no_filter and filtered_out.resolve() == out.resolve():
        raise ConfigError("--filtered-out must differ from --out (the raw log)")
    corpus = Corpus.from_paths(args.corpus)
    if args.dry_run:
        _say(dry_run_plan(corpus, settings, price=args.price_per_1k))
        return 0
    url = base_url_of(args.base_url)
    client = openai_client(
        base_url=args.base_url, max_retries=args.max_retries, timeout=args.timeout
    )
    generator = QueryGenerator(
        corpus,
        out,
        settings,
        client=client,
        overwrite=args.overwrite,
        progress=True if args.progress else None,
        echo=_say,
        cache=_answers(common_settings(args).cache_dir),
    )
    chars = sum(len(d.text) for d in corpus)
    _say(
        f"generating {settings.n} queries for {corpus.name!r} ({len(corpus)} "
        f"documents, {chars:,} characters) with {settings.model!r} at {url} "
        f"into {out}"
    )
    try:
        stats = generator.run()
    finally:
        if generator.stats.stopped != "not started":
            _say(
                format_summary(
                    generator.stats, settings.model, out, price=args.price_per_1k
                )
            )
            _say(f"seed {generator.seed} (re-run the same command to resume)")
            last = generator.last_rejection
            if last is not None and not generator.stats.complete:
                _say(f"last rejection ({last.reason}): {last.detail}")
    if not stats.complete:
        return EXIT_INCOMPLETE
    if args.no_filter:
        return 0
    from pytest_chunkeval.data.queries import read_queries
    from pytest_chunkeval.embedders.base import EmbedderUnavailable

    _say(f"filtering {out} -> {filtered_out}")
    try:
        return run_filters(read_queries(out), args, filtered_out, dry_run=False)
    except EmbedderUnavailable as exc:
        raise UnavailableError(
            f"{out} is complete, but the filters cannot run: {exc}. Give another "
            "--embedder (e.g. openai:text-embedding-3-large) or install the missing "
            f"package, then run: chunkeval filter {out} --out {filtered_out}"
        ) from None


def register(subparsers: Any) -> None:
    """Add ``generate`` to ``chunkeval``'s subcommands."""
    gen = add_command(
        subparsers,
        "generate",
        help="generate a query set for a corpus with an OpenAI-compatible LLM",
        description="Generate questions with verbatim excerpts from random windows "
        "of the corpus, appending each accepted one to --out (re-run the same "
        "command to resume), then filter them into --filtered-out. The API key is "
        "read from OPENAI_API_KEY and never written anywhere.",
        examples="""
        chunkeval generate --corpus docs/ --out queries.jsonl --n 200 \\
            --model gpt-4o-mini --dry-run
        chunkeval generate --corpus docs/ --out queries.jsonl --n 200 \\
            --model gpt-4o-mini --price-per-1k 0.00015,0.0006
        chunkeval generate --corpus docs/*.md --out q.jsonl --n 50 --model llama3 \\
            --base-url http://localhost:11434/v1 --json-mode
        """,
    )
    gen.add_argument(
        "--corpus",
        nargs="+",
        required=True,
        metavar="PATH",
        help="corpus files, directories or glob patterns",
    )
    gen.add_argument(
        "--out", required=True, metavar="FILE", help="JSONL log of accepted queries"
    )
    gen.add_argument("--n", type=_positive_int, required=True, help="queries wanted")
    gen.add_argument("--model", required=True, help="chat model name")
    gen.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help="OpenAI-compatible API root (default: $OPENAI_BASE_URL, else OpenAI)",
    )
    gen.add_argument(
        "--seed",
        type=_non_negative_int,
        default=None,
        help="seed of the window sequence (default: random, recorded in the file)",
    )
    gen.add_argument(
        "--max-attempts",
        type=_positive_int,
        default=None,
        metavar="N",
        help="stop after N requests in this run (default: 5 per missing query)",
    )
    gen.add_argument(
        "--window-chars",
        type=_positive_int,
        default=4000,
        metavar="N",
        help="characters of the corpus window each question is asked about",
    )
    gen.add_argument(
        "--max-unusable",
        type=_positive_int,
        default=5,
        metavar="N",
        help="stop after N answers in a row that cannot be read: a wrong model or "
        "an endpoint that is not a chat API",
    )
    gen.add_argument(
        "--approximate",
        type=_similarity,
        default=None,
        metavar="SIMILARITY",
        help="accept a non-verbatim reference whose fuzzy match in the window "
        "reaches this similarity (e.g. 0.9); marked approximate (default: off)",
    )
    harder = gen.add_argument_group(
        "harder, more realistic questions (docs/query-quality.md)"
    )
    harder.add_argument(
        "--max-leakage",
        type=_share,
        default=None,
        metavar="X",
        help="reject a question when more than this share of its content words "
        "appear in its excerpts, e.g. 0.5 (default: off)",
    )
    harder.add_argument(
        "--style-examples",
        default=None,
        metavar="FILE",
        help="real users' questions (one a line, or a query set) whose style, not "
        "content, the questions imitate (default: none)",
    )
    harder.add_argument(
        "--multi-excerpt",
        action="store_true",
        help="ask for questions whose answer needs two or more passages of the "
        "window (answers with one reference are rejected)",
    )
    gen.add_argument(
        "--temperature",
        type=float,
        default=None,
        help="sampling temperature (default: the server's)",
    )
    gen.add_argument(
        "--json-mode",
        action="store_true",
        help='send response_format={"type": "json_object"} (if the server has it)',
    )
    gen.add_argument(
        "--max-retries",
        type=_non_negative_int,
        default=5,
        help="client retries with backoff on 429/5xx/timeouts",
    )
    gen.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="timeout of one request",
    )
    add_price_option(gen)
    gen.add_argument(
        "--overwrite", action="store_true", help="start --out again from scratch"
    )
    gen.add_argument(
        "--dry-run",
        action="store_true",
        help="print the first prompt and a token/cost estimate; call nothing",
    )
    gen.add_argument(
        "--progress",
        action="store_true",
        help="show progress bars even when stderr is not a terminal",
    )
    gen.add_argument(
        "--no-filter", action="store_true", help="do not run the filters at the end"
    )
    gen.add_argument(
        "--filtered-out",
        default=None,
        metavar="FILE",
        help="where the filtered set goes (default: OUT-STEM.filtered.jsonl)",
    )
    add_filter_options(gen, title="filters (run when the target count is reached)")
    gen.set_defaults(func=run_generate)
