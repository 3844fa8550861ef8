"""The scoring rules' version and the ``copies`` setting (docs/concepts.md,
"Identical text"; docs/baselines.md, "Scoring rules").

``copies="any"`` (the default) scores each excerpt at the occurrence of its text
that the retriever reached best; ``"strict"`` scores the stored spans only and
refuses a retrieved text that occurs more than once. ``SCORING_RULES`` is written
into every result's configuration: a baseline recorded under other rules is
compared as a named configuration change.

This module imports neither pytest nor numpy.
"""

from __future__ import annotations

from pytest_chunkeval.config.option import MarkerValue, Option
from pytest_chunkeval.errors import ConfigError

SCORING_RULES = 3
"""Version of the scoring rules; a result without ``config["scoring_rules"]``
was scored under 1 (a boundary token shared without a shared character counted,
and only the stored span of an excerpt). Under 2, chunks of exactly equal scores
were ordered by their place in the corpus; from 3 on, by content (a hash of the
text, then the offsets: docs/baselines.md, "Ties")."""

COPIES_MODES = ("any", "strict")
DEFAULT_COPIES = "any"


def check_copies(value: object) -> str:
    """``"any"`` or ``"strict"``; else :class:`ConfigError`."""
    text = value.strip().lower() if isinstance(value, str) else ""
    if text in COPIES_MODES:
        return text
    raise ConfigError(
        "copies must be 'any' (identical text is interchangeable: an excerpt is "
        "scored at the copy of its text the retriever reached, the default) or "
        f"'strict' (the stored spans only), got {value!r}"
    )


def parse_copies(value: str) -> str:
    """``any`` or ``strict``."""
    return check_copies(value)


COPIES_OPTION = Option(
    "copies",
    "Identical text: 'any' scores each excerpt at the occurrence of its text that "
    "the retrieved chunks share most, and places a retrieved text found more than "
    "once near the question's excerpts; 'strict' scores the stored spans only and "
    "refuses such a text (for comparisons with tools that do neither).",
    parse_copies,
    metavar="MODE",
    default_text=DEFAULT_COPIES,
    default=DEFAULT_COPIES,
    marker=MarkerValue((str,), "'any' or 'strict'"),
)
