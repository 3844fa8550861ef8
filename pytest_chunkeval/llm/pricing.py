"""What LLM requests cost: a price table and estimates, shared by every LLM role.

Prices are USD per 1M tokens (input, output); an estimate, not an invoice. A model
not in the table has no price unless the user gives one (``--price-per-1k``).
"""

from __future__ import annotations

from pytest_chunkeval.errors import ConfigError

# USD per 1M tokens (input, output), OpenAI list prices for standard requests
# (checked 2025-08). Models are matched by the longest prefix, so dated snapshots
# ("gpt-4o-2024-08-06") get their family's price. An estimate, not an invoice.
PRICES_PER_1M: dict[str, tuple[float, float]] = {
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "o1": (15.00, 60.00),
    "o1-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
}


def price_for(model: str) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens for a known model, else None."""
    name = model.rsplit("/", 1)[-1].lower()  # "openai/gpt-4o" on gateways
    best = ""
    for known in PRICES_PER_1M:
        if (name == known or name.startswith(known + "-")) and len(known) > len(best):
            best = known
    return PRICES_PER_1M[best] if best else None


def parse_price(text: str) -> tuple[float, float]:
    """``--price-per-1k``: ``P`` (input and output) or ``IN,OUT``, USD per 1k tokens,
    returned per 1M tokens; anything else is a :class:`ConfigError`."""
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) not in (1, 2) or any(not v >= 0 for v in values):
        raise ConfigError(
            f"price {text!r}: expected USD per 1000 tokens as P or IN,OUT "
            "(e.g. 0.00015,0.0006), each >= 0"
        )
    inp, out = values if len(values) == 2 else (values[0], values[0])
    return inp * 1000, out * 1000


def estimate_cost(
    model: str,
    prompt_tokens: int,
    completion_tokens: int,
    price: tuple[float, float] | None = None,
) -> float | None:
    """USD for the tokens at ``price`` (per 1M) or the table's; None if unknown."""
    per_1m = price if price is not None else price_for(model)
    if per_1m is None:
        return None
    return (prompt_tokens * per_1m[0] + completion_tokens * per_1m[1]) / 1e6
