"""``chunkeval judge``: promote judged context relevance to ground truth.

For each ``--chunker`` configuration, every question's retrieved context is judged
(``--judge llm:MODEL`` or a registered callable); the judged spans, united over the
configurations, become the question's excerpts in ``--out``: a regular query set,
so later runs on it are LLM-free token metrics. Questions for which nothing
relevant was found in any configuration are left out of the set and listed (in the
output's header and on stdout).

Resumable: every judgment is stored in the shared answer cache as it arrives, so
running the same command again after an interruption judges only what is left.
The output is written atomically at the end.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_chunkeval.cli.common import (
    CACHE_SETTING,
    add_command,
    add_data_options,
    add_price_option,
    check_outputs,
    load_data,
    non_negative_int,
    settings,
)
from pytest_chunkeval.cli.eval import DEFAULT_CHUNKER
from pytest_chunkeval.config.options import add_options
from pytest_chunkeval.errors import CheckFailed, ConfigError

EXAMPLES = """
chunkeval judge --benchmark general --judge llm:gpt-4o-mini --out judged.jsonl \\
    --chunker recursive:200:0 --chunker cluster:200 --dry-run
chunkeval judge --corpus docs/ --queries questions.jsonl --judge llm:gpt-4o-mini \\
    --out judged.jsonl --concurrency 8
chunkeval judge --benchmark general --judge llm:gpt-4o-mini --calibrate \\
    --json calibration.json
"""


def register(subparsers: Any) -> None:
    """Add the ``judge`` subcommand to ``chunkeval``."""
    from pytest_chunkeval.config.option import argparse_type
    from pytest_chunkeval.config.specs import spec_argument

    p = add_command(
        subparsers,
        "judge",
        help="judge retrieved contexts with an LLM and write them as a query set",
        description="Judge which sentences of each question's retrieved context "
        "help answer it (RAGAS context relevance), for one or more chunkers, and "
        "write a query set whose excerpts are the judged sentences. Re-run the "
        "same command to resume. The API key is read from OPENAI_API_KEY and never "
        "written anywhere.",
        examples=EXAMPLES,
        grammar=True,
    )
    add_data_options(p)
    p.add_argument(
        "--judge",
        required=True,
        type=argparse_type(spec_argument("judge")),
        metavar="SPEC",
        help="llm:MODEL, python:MODULE:ATTR (a judge object, or a function "
        "(question, context) -> sentences with a .version), or a name registered "
        "with register_judge() or the conftest hook pytest_chunkeval_register_judges",
    )
    p.add_argument(
        "--out",
        metavar="FILE",
        help="query set to write (required, except with --calibrate; no default)",
    )
    cal = p.add_argument_group("calibration (docs/judged.md)")
    cal.add_argument(
        "--calibrate",
        action="store_true",
        help="measure the judge against the excerpts of the questions that have "
        "them (sentence precision, recall, Cohen's kappa, correlation) instead of "
        "writing a query set; uses the first --chunker",
    )
    cal.add_argument(
        "--json",
        type=Path,
        metavar="OUT",
        help="with --calibrate: write the figures and every disagreement as JSON "
        "(default: not written)",
    )
    cal.add_argument(
        "--show",
        type=non_negative_int,
        default=10,
        metavar="N",
        help="with --calibrate: disagreements printed",
    )
    run = p.add_argument_group("what is judged")
    add_options(
        run.add_argument,
        ["chunkers", "k", "embedder", "store", "unit", "cache_dir"],
        where="cli",
        changes={"chunkers": {"default_text": DEFAULT_CHUNKER}},
    )
    p.add_argument(
        "--concurrency", type=int, default=None, help="parallel requests (default: 4)"
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the requests still needed and their estimated cost; send none",
    )
    add_price_option(p)
    p.add_argument(
        "--progress",
        action="store_true",
        help="show progress bars even when stderr is not a terminal",
    )
    p.add_argument("--overwrite", action="store_true", help="replace --out")
    p.set_defaults(func=run_judge)


def run_judge(args: argparse.Namespace) -> int:
    """Run ``chunkeval judge``."""
    from pytest_chunkeval.config.defaults import (
        DEFAULT_EMBEDDER,
        DEFAULT_K,
        DEFAULT_STORE,
        DEFAULT_UNIT,
    )
    from pytest_chunkeval.engine.cache_dir import open_cache
    from pytest_chunkeval.judging.run import Judging
    from pytest_chunkeval.judging.specs import get_judge
    from pytest_chunkeval.llm.answers import AnswerCache
    from pytest_chunkeval.quality.promote import promote

    if args.calibrate:
        return run_calibration(args)
    if args.out is None:
        raise ConfigError("--out FILE is required (unless --calibrate)")
    out = Path(args.out)
    if out.exists() and not args.overwrite and not args.dry_run:
        raise ConfigError(f"{out} exists; pass --overwrite to replace it")
    config = settings(args)
    check_outputs({} if args.dry_run else {"--out": out})
    corpus, queries = load_data(args, config)
    cache = open_cache(config.cache_dir, CACHE_SETTING)
    judging = Judging(
        get_judge(args.judge),
        cache=AnswerCache(cache.directory, read_only=cache.read_only),
        concurrency=args.concurrency,
        progress=True if args.progress else None,
        price=args.price_per_1k,
    )
    chunkers: Sequence[str] = config.chunkers or (DEFAULT_CHUNKER,)
    promoted = promote(
        corpus,
        queries,
        chunkers,
        judging,
        embedder=config.embedder or DEFAULT_EMBEDDER,
        store=config.store or DEFAULT_STORE,
        k=config.k if config.k is not None else DEFAULT_K,
        unit=config.unit or DEFAULT_UNIT,
        cache=cache,
        dry_run=args.dry_run,
        echo=print,
    )
    if promoted is None:  # dry run
        return 0
    if not len(promoted.query_set):
        print(judging.stats.summary())
        raise CheckFailed(f"{promoted.why_empty()}; {out} not written")
    promoted.query_set.save(out)
    print(promoted.summary(out))
    for questions, what in (
        (promoted.nothing_relevant, "with nothing relevant retrieved in any "),
        (promoted.unjudged, "whose judge answers were unusable in every "),
    ):
        if questions:
            print(f"{len(questions)} question(s) {what}configuration (left out):")
            for qid, text in questions:
                print(f"  {qid}: {text}")
    return 0


def run_calibration(args: argparse.Namespace) -> int:
    """Run ``chunkeval judge --calibrate``."""
    from pytest_chunkeval.config.defaults import (
        DEFAULT_EMBEDDER,
        DEFAULT_K,
        DEFAULT_STORE,
        DEFAULT_UNIT,
    )
    from pytest_chunkeval.engine.cache_dir import open_cache
    from pytest_chunkeval.judging.run import Judging
    from pytest_chunkeval.judging.specs import get_judge
    from pytest_chunkeval.llm.answers import AnswerCache
    from pytest_chunkeval.quality.calibration import (
        calibrate_judge,
        format_calibration,
    )
    from pytest_chunkeval.util.files import atomic_write_text

    given = " and ".join(
        flag
        for flag, value in (("--out", args.out), ("--dry-run", args.dry_run))
        if value
    )
    if given:  # name only the flags the user gave
        raise ConfigError(f"--calibrate writes no query set: drop {given}")
    config = settings(args)
    check_outputs({"--json": args.json})
    corpus, queries = load_data(args, config)
    cache = open_cache(config.cache_dir, CACHE_SETTING)
    judging = Judging(
        get_judge(args.judge),
        cache=AnswerCache(cache.directory, read_only=cache.read_only),
        concurrency=args.concurrency,
        progress=True if args.progress else None,
    )
    calibration = calibrate_judge(
        judging,
        corpus,
        queries,
        chunker=(config.chunkers or (DEFAULT_CHUNKER,))[0],
        embedder=config.embedder or DEFAULT_EMBEDDER,
        store=config.store or DEFAULT_STORE,
        k=config.k if config.k is not None else DEFAULT_K,
        unit=config.unit or DEFAULT_UNIT,
        cache=cache,
    )
    print(format_calibration(calibration, show=args.show))
    print(judging.stats.summary())
    if args.json:
        text = json.dumps(calibration.to_json(), indent=1, ensure_ascii=False)
        atomic_write_text(args.json, text + "\n")
        print(f"wrote {args.json}")
    return 0
