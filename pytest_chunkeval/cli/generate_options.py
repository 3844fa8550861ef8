"""The options of ``chunkeval generate`` (docs/generate.md), each group by what it
sets, and their argument types."""

from __future__ import annotations

from typing import Any

from pytest_chunkeval.cli.common import (
    add_price_option,
    non_negative_int,
    positive_int,
)
from pytest_chunkeval.cli.filter import add_filter_options
from pytest_chunkeval.config.option import argparse_type
from pytest_chunkeval.errors import ConfigError


def _similarity(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 1:
        raise ConfigError(f"{text!r}: expected a similarity in (0, 1], e.g. 0.9")
    return value


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0 <= value <= 1:
        raise ConfigError(f"{text!r}: expected a share in [0, 1], e.g. 0.5")
    return value


def add_generate_options(gen: Any) -> None:
    """Add ``generate``'s options to its parser, in the order ``--help`` lists them."""
    _add_inputs(gen)
    _add_sampling(gen)
    _add_harder(gen)
    _add_requests(gen)
    _add_run(gen)
    add_filter_options(gen, title="filters (run when the target count is reached)")


def _add_inputs(gen: Any) -> None:
    """The corpus, the output file, the count wanted and the model."""
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
    gen.add_argument("--n", type=positive_int, required=True, help="queries wanted")
    gen.add_argument("--model", required=True, help="chat model name")
    gen.add_argument(
        "--base-url",
        default=None,
        metavar="URL",
        help="OpenAI-compatible API root (default: $OPENAI_BASE_URL, else OpenAI)",
    )


def _add_sampling(gen: Any) -> None:
    """How windows are drawn and answers accepted."""
    gen.add_argument(
        "--seed",
        type=non_negative_int,
        default=None,
        help="seed of the window sequence (default: random, recorded in the file)",
    )
    gen.add_argument(
        "--max-attempts",
        type=positive_int,
        default=None,
        metavar="N",
        help="stop after N requests in this run (default: 5 per missing query)",
    )
    gen.add_argument(
        "--window-chars",
        type=positive_int,
        default=4000,
        metavar="N",
        help="characters of the corpus window each question is asked about",
    )
    gen.add_argument(
        "--max-unusable",
        type=positive_int,
        default=5,
        metavar="N",
        help="stop after N answers in a row that cannot be read: a wrong model or "
        "an endpoint that is not a chat API",
    )
    gen.add_argument(
        "--approximate",
        type=argparse_type(_similarity),
        default=None,
        metavar="SIMILARITY",
        help="accept a non-verbatim reference whose fuzzy match in the window "
        "reaches this similarity (e.g. 0.9); marked approximate (default: off)",
    )


def _add_harder(gen: Any) -> None:
    """Harder, more realistic questions (docs/query-quality.md)."""
    harder = gen.add_argument_group(
        "harder, more realistic questions (docs/query-quality.md)"
    )
    harder.add_argument(
        "--max-leakage",
        type=argparse_type(_share),
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


def _add_requests(gen: Any) -> None:
    """How the chat API is asked."""
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
        type=non_negative_int,
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


def _add_run(gen: Any) -> None:
    """What this run does: start again, plan only, show progress, filter."""
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
