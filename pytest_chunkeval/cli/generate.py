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
    check_outputs,
)
from pytest_chunkeval.cli.filter import run_filters
from pytest_chunkeval.cli.generate_options import add_generate_options
from pytest_chunkeval.errors import ConfigError, UnavailableError

EXIT_INCOMPLETE = EXIT_FAILED
"""The target count was not reached (re-run the same command to resume)."""


def _answers(directory: str) -> Any:
    """The LLM answer cache in the cache directory, checked as ``eval`` checks it."""
    from pytest_chunkeval.engine.cache_dir import open_cache

    return open_cache(directory, CACHE_SETTING).answers()


def _say(message: str) -> None:
    print(message, flush=True)


def run_generate(args: argparse.Namespace) -> int:
    """Run ``chunkeval generate`` (see docs/generate.md)."""
    from pytest_chunkeval.cli.common import settings as common_settings
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.generation.chat import openai_client
    from pytest_chunkeval.generation.generate import QueryGenerator
    from pytest_chunkeval.generation.summary import dry_run_plan
    from pytest_chunkeval.llm.client import base_url_of

    out = Path(args.out)
    if out.suffix.lower() != ".jsonl":
        raise ConfigError(
            f"--out {out}: generation appends to a JSONL file; use a .jsonl name"
        )
    settings = _generation_settings(args)
    filtered_out = (
        Path(args.filtered_out)
        if args.filtered_out
        else out.with_name(f"{out.stem}.filtered{out.suffix}")
    )
    if not args.no_filter and filtered_out.resolve() == out.resolve():
        raise ConfigError("--filtered-out must differ from --out (the raw log)")
    if not args.dry_run:
        filtering = {} if args.no_filter else {"--filtered-out": filtered_out}
        check_outputs({"--out": out, **filtering})
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
    if not _generated(generator, settings.model, out, args.price_per_1k):
        return EXIT_INCOMPLETE
    if args.no_filter:
        return 0
    return _filter(out, filtered_out, args)


def _generation_settings(args: argparse.Namespace) -> Any:
    """The ``GenerationSettings`` the options ask for."""
    from pytest_chunkeval.generation.harder import load_style_examples
    from pytest_chunkeval.generation.settings import GenerationSettings

    try:
        style = load_style_examples(args.style_examples) if args.style_examples else ()
        return GenerationSettings(
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


def _generated(
    generator: Any, model: str, out: Path, price: tuple[float, float] | None
) -> bool:
    """Run ``generator`` (``model`` into ``out``); say what it did however it
    ended (the seed that resumes it, the last rejection of an incomplete run).
    Whether the target was reached."""
    from pytest_chunkeval.generation.summary import format_summary

    try:
        stats = generator.run()
    finally:
        if generator.stats.stopped != "not started":
            _say(format_summary(generator.stats, model, out, price=price))
            _say(f"seed {generator.seed} (re-run the same command to resume)")
            last = generator.last_rejection
            if last is not None and not generator.stats.complete:
                _say(f"last rejection ({last.reason}): {last.detail}")
    return bool(stats.complete)


def _filter(out: Path, filtered_out: Path, args: argparse.Namespace) -> int:
    """Filter the complete set ``out`` into ``filtered_out``."""
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
    add_generate_options(gen)
    gen.set_defaults(func=run_generate)
