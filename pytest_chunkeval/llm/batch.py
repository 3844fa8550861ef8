"""Ask many things at once, through the answer cache: what every LLM role runs.

:func:`run_batch` takes ``items``, a ``key(item) -> AnswerKey`` and a
``compute(item) -> Outcome`` (the role's own request + parsing, or a call of the
user's callable; :func:`outcome_of` turns a model's reply and a ``parse(text)`` into
one: raise ``ValueError`` in ``parse`` to reject an answer as malformed, rejected
answers are counted and not cached, so a re-run asks again). Cached answers are read
(verified) first; the rest are computed on ``concurrency`` threads, each stored in
the cache as soon as it arrives, so an interrupted run (Ctrl-C, a crash, a server
that gives up) resumes where it stopped by running again. A progress bar shows
answered / cached / rejected. After ``max_consecutive_errors`` API errors in a row
(after the client's own retries of 429/5xx) the run stops with :class:`LLMError`.

Before a paid run, :func:`plan_batch` says how many requests are still needed
(cached ones excluded), their prompt tokens (cl100k_base) and the estimated cost
(:mod:`pytest_chunkeval.llm.pricing`); ``str(plan)`` is a one-line summary.

Example (a role's code)::

    model = ChatModel("gpt-4o-mini", who="judging")   # or CallableModel(fn, ...)
    keys = [AnswerKey("judge", model.identity, PROMPT_VERSION, hash_input(x))
            for x in inputs]
    print(plan_batch(prompts, model, keys=keys, cache=cache))
    result = run_batch(range(len(prompts)), key=keys.__getitem__, cache=cache,
                       compute=lambda i: outcome_of(model(prompts[i]), parse_answer))
    result.values[i]   # the parsed (or cached) value, None if rejected
"""

from __future__ import annotations

import concurrent.futures as cf
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pytest_chunkeval.llm.answers import AnswerCache, AnswerKey
from pytest_chunkeval.llm.chat import (
    API_ERROR,
    MALFORMED,
    Answerer,
    LLMError,
    Messages,
    Rejection,
    Reply,
)
from pytest_chunkeval.llm.pricing import estimate_cost, price_for
from pytest_chunkeval.util.progress import progress_bar

T = TypeVar("T")

DEFAULT_CONCURRENCY = 4
MAX_CONSECUTIVE_ERRORS = 3
_MESSAGE_OVERHEAD_TOKENS = 4  # per message, as OpenAI counts chat formatting


@dataclass(frozen=True)
class Outcome:
    """What computing one item produced: a JSON value, or why there is none.

    ``cache=False`` keeps a value out of the answer cache (it is still returned).
    """

    value: Any = None
    rejection: Rejection | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 1
    cache: bool = True


def outcome_of(
    reply: Reply, parse: Callable[[str], Any], *, requests: int = 1
) -> Outcome:
    """The outcome of one model reply: ``parse(content)``, or why there is none
    (the model's rejection, an empty answer, a ``ValueError`` from ``parse``)."""
    value: Any = None
    rejection = reply.rejection
    if rejection is None and reply.content is None:
        rejection = Rejection(MALFORMED, "empty answer")
    if rejection is None and reply.content is not None:
        try:
            value = parse(reply.content)
        except ValueError as exc:
            rejection = Rejection(MALFORMED, str(exc))
    return Outcome(
        value=value,
        rejection=rejection,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        requests=requests,
    )


@dataclass
class BatchStats:
    """Counts of one batch; ``requests`` and tokens count only what was sent."""

    total: int = 0
    cached: int = 0
    answered: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    stopped: str = "not started"

    def cost(
        self, model: str | None, price: tuple[float, float] | None = None
    ) -> float | None:
        """USD spent, estimated (None without a known price)."""
        if model is None and price is None:
            return None
        return estimate_cost(
            model or "", self.prompt_tokens, self.completion_tokens, price
        )

    def count(self, outcome: Outcome) -> None:
        """Add one computed item: its requests, tokens, and answer or rejection."""
        self.requests += outcome.requests
        self.prompt_tokens += outcome.prompt_tokens
        self.completion_tokens += outcome.completion_tokens
        if outcome.rejection is None:
            self.answered += 1
        else:
            self.rejected[outcome.rejection.reason] += 1

    def postfix(self) -> str:
        """The progress bar's note: cached and rejected so far."""
        return f"cached {self.cached}, rejected {sum(self.rejected.values())}"


@dataclass
class BatchResult:
    """Per item (in input order): the value (None if rejected) and the rejection."""

    values: list[Any]
    rejections: list[Rejection | None]
    stats: BatchStats


def _read_cached(
    keys: Sequence[AnswerKey],
    cache: AnswerCache | None,
    stats: BatchStats,
    on_value: Callable[[int, Any], None] | None,
) -> tuple[list[Any], list[int]]:
    """The cached values (None elsewhere) and the indices still to compute."""
    values: list[Any] = [None] * len(keys)
    todo: list[int] = []
    for i, k in enumerate(keys):
        entry = cache.get(k) if cache is not None else None
        if entry is None:
            todo.append(i)
            continue
        stats.cached += 1
        values[i] = entry.value
        if on_value is not None:
            on_value(i, entry.value)
    return values, todo


def run_batch(
    items: Sequence[T],
    *,
    key: Callable[[T], AnswerKey],
    compute: Callable[[T], Outcome],
    cache: AnswerCache | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
    progress: bool | None = None,
    desc: str = "answers",
    on_value: Callable[[int, Any], None] | None = None,
    max_consecutive_errors: int = MAX_CONSECUTIVE_ERRORS,
    stats: BatchStats | None = None,
) -> BatchResult:
    """Values for ``items``: cached ones read, the rest computed and stored.

    ``on_value(index, value)`` is called in the calling thread for every value
    (cached or new) as it becomes known; ``stats`` may be passed in to stay
    readable when the run is interrupted.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be >= 1, got {concurrency}")
    stats = stats if stats is not None else BatchStats()
    stats.total += len(items)
    rejections: list[Rejection | None] = [None] * len(items)
    keys = [key(item) for item in items]
    values, todo = _read_cached(keys, cache, stats, on_value)
    if not todo:
        stats.stopped = "complete"
        return BatchResult(values, rejections, stats)

    def work(i: int) -> Outcome:
        outcome = compute(items[i])
        if outcome.rejection is None and outcome.cache and cache is not None:
            cache.put(keys[i], outcome.value)
        return outcome

    bar = progress_bar(
        len(items),
        progress=progress,
        initial=len(items) - len(todo),
        desc=desc,
        unit="q",
        dynamic_ncols=True,
    )
    consecutive = 0
    stats.stopped = "interrupted"
    pool = cf.ThreadPoolExecutor(max_workers=concurrency)
    try:
        futures = {pool.submit(work, i): i for i in todo}
        for future in cf.as_completed(futures):
            i = futures[future]
            outcome = future.result()  # a role's exception (LLMError) ends the run
            stats.count(outcome)
            rejection = outcome.rejection
            if rejection is None:
                consecutive = 0
                values[i] = outcome.value
                if on_value is not None:
                    on_value(i, outcome.value)
            else:
                rejections[i] = rejection
                consecutive = consecutive + 1 if rejection.reason == API_ERROR else 0
                if consecutive >= max_consecutive_errors:
                    stats.stopped = "api errors"
                    raise LLMError(
                        f"{consecutive} requests in a row failed after retries; "
                        f"last: {rejection.detail}. Answers so far are "
                        "cached: run again to resume"
                    )
            if bar is not None:
                bar.update(1)
                bar.set_postfix_str(stats.postfix(), refresh=False)
        stats.stopped = "complete"
    finally:
        # On an error or Ctrl-C: drop what has not started and let the requests
        # in flight finish (their answers are cached), so no thread outlives us.
        pool.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()
    return BatchResult(values, rejections, stats)


@dataclass(frozen=True)
class CostPlan:
    """What a batch would send: requests still needed and their estimated cost."""

    model: str
    requests: int
    cached: int
    prompt_tokens: int
    completion_tokens: int
    price: tuple[float, float] | None

    @property
    def usd(self) -> float | None:
        return estimate_cost(
            self.model, self.prompt_tokens, self.completion_tokens, self.price
        )

    def __str__(self) -> str:
        usd = self.usd
        cost = (
            f"~${usd:.4f}"
            if usd is not None
            else f"unknown (no price for {self.model!r}; pass --price-per-1k)"
        )
        return (
            f"{self.requests} requests to {self.model!r} ({self.cached} answers "
            f"cached), ~{self.prompt_tokens:,} prompt + ~{self.completion_tokens:,} "
            f"completion tokens, estimated cost {cost}"
        )


def count_prompt_tokens(messages: Messages) -> int:
    """Prompt tokens of ``messages`` (cl100k_base, plus per-message formatting)."""
    from pytest_chunkeval.tokenizers.base import get_tokenizer

    tokenizer = get_tokenizer()
    return sum(
        tokenizer.count(m.get("content", "")) + _MESSAGE_OVERHEAD_TOKENS
        for m in messages
    )


def plan_batch(
    prompts: Sequence[Messages],
    model: Answerer | str,
    *,
    keys: Sequence[AnswerKey] | None = None,
    cache: AnswerCache | None = None,
    completion_tokens: int = 150,
    price: tuple[float, float] | None = None,
) -> CostPlan:
    """The cost of asking the prompts not yet cached (``completion_tokens`` is the
    expected answer length per request). Sends nothing."""
    name = model if isinstance(model, str) else getattr(model, "model", None)
    if name is None:  # a callable costs nothing
        name, price = getattr(model, "identity", repr(model)), (0.0, 0.0)
    needed = [
        i
        for i in range(len(prompts))
        if keys is None or cache is None or not cache.path(keys[i]).exists()
    ]
    prompt_tokens = sum(count_prompt_tokens(prompts[i]) for i in needed)
    return CostPlan(
        model=str(name),
        requests=len(needed),
        cached=len(prompts) - len(needed),
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens * len(needed),
        price=price if price is not None else price_for(str(name)),
    )
