"""Text about a generation run: the summary after it and the plan of a dry run."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.generation.answers import REASONS
from pytest_chunkeval.generation.prompts import build_messages
from pytest_chunkeval.generation.settings import ATTEMPTS_PER_QUERY
from pytest_chunkeval.generation.windows import attempt_rng, choose_window
from pytest_chunkeval.llm.pricing import estimate_cost, price_for

if TYPE_CHECKING:
    from pytest_chunkeval.generation.generate import GenerationStats
    from pytest_chunkeval.generation.settings import GenerationSettings


def format_summary(
    stats: GenerationStats,
    model: str,
    out: str | os.PathLike[str],
    *,
    price: tuple[float, float] | None = None,
) -> str:
    """The end-of-run report: counts, rejections by reason, tokens and cost."""
    lines = [
        f"{stats.total} of {stats.target} queries in {os.fspath(out)} "
        f"({stats.accepted} new, {stats.existing} from an earlier run); "
        f"stopped: {stats.stopped}"
    ]
    rejected = sum(stats.rejected.values())
    parts = [f"{stats.rejected[r]} {r}" for r in REASONS if stats.rejected[r]]
    detail = f": {', '.join(parts)}" if parts else ""
    lines.append(
        f"attempts: {stats.attempts} (accepted {stats.accepted}, "
        f"rejected {rejected}{detail})"
    )
    if stats.approximate_excerpts:
        lines.append(f"approximate excerpts: {stats.approximate_excerpts}")
    per_1m = price if price is not None else price_for(model)
    cost = estimate_cost(model, stats.prompt_tokens, stats.completion_tokens, per_1m)
    if cost is None or per_1m is None:
        cost_text = (
            f"estimated cost: unknown (no price known for model {model!r}; pass "
            "--price-per-1k)"
        )
    else:
        source = "--price-per-1k" if price is not None else model
        cost_text = (
            f"estimated cost: ${cost:.4f} ({source}: ${per_1m[0]:g} input / "
            f"${per_1m[1]:g} output per 1M tokens)"
        )
    cached = f" ({stats.cached} answers from the cache)" if stats.cached else ""
    lines.append(
        f"tokens: {stats.prompt_tokens:,} prompt + {stats.completion_tokens:,} "
        f"completion in {stats.requests} requests{cached}; {cost_text}"
    )
    return "\n".join(lines)


def dry_run_plan(
    corpus: Corpus,
    settings: GenerationSettings,
    *,
    existing: int = 0,
    samples: int = 20,
    price: tuple[float, float] | None = None,
) -> str:
    """What a run would send, without calling the model: the first prompt and a
    token / cost estimate from ``samples`` windows (cl100k_base counts)."""
    from pytest_chunkeval.tokenizers.base import get_tokenizer

    seed = settings.seed if settings.seed is not None else 0
    tokenizer = get_tokenizer()
    counts: list[int] = []
    first: list[dict[str, str]] | None = None
    for attempt in range(samples):
        rng = attempt_rng(seed, attempt)
        window = choose_window(rng, corpus, settings.window_chars)
        text = corpus[window.doc_id].text[window.start : window.end]
        messages = build_messages(
            window.doc_id, text, (), max_references=settings.max_references
        )
        first = first or messages
        counts.append(sum(tokenizer.count(m["content"]) for m in messages))
    assert first is not None
    per_attempt = sum(counts) / len(counts)
    # A question is ~20 tokens; the prompt grows to max_previous of them.
    with_previous = per_attempt + 20 * settings.max_previous
    remaining = max(0, settings.n - existing)
    low = remaining * per_attempt
    lines = [
        f"dry run: {remaining} queries to generate with {settings.model!r} "
        f"(at least {remaining} requests, at most "
        f"{settings.max_attempts or ATTEMPTS_PER_QUERY * remaining})",
        f"prompt: ~{per_attempt:.0f} tokens per request (~{with_previous:.0f} with "
        f"{settings.max_previous} earlier questions)",
    ]
    cost = estimate_cost(settings.model, int(low), remaining * 150, price)
    lines.append(
        "estimated minimum cost: "
        + (
            f"${cost:.4f} (one accepted answer per request, ~150 output tokens each)"
            if cost is not None
            else f"unknown (no price for {settings.model!r}; pass --price-per-1k)"
        )
    )
    lines.append("first prompt:")
    for m in first:
        lines.append(f"--- {m['role']}")
        lines.append(m["content"])
    return "\n".join(lines)
