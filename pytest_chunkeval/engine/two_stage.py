"""Two-stage answers of a whole retriever: first-stage candidates, then results."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

KEYS = ("candidates", "results")


@dataclass(frozen=True)
class TwoStage:
    """What a two-stage retriever returns for one query: its first stage's
    ``candidates`` (e.g. dense top-50) and its final ``results`` (e.g. those
    reranked, top-5), each a list of texts or spans in rank order.

    A mapping with the keys ``"candidates"`` and ``"results"`` works the same (not
    a tuple: a 3-tuple is already a span).
    """

    candidates: Sequence[Any]
    results: Sequence[Any]


def split_stages(answer: Any, where: str) -> tuple[Any | None, Any]:
    """``(candidates, results)`` of one answer, as given; ``candidates`` is None for
    a plain list. A mapping or object with only one of the two names is an error."""
    if isinstance(answer, Mapping):
        found = [key for key in KEYS if key in answer]
        if not found:
            raise TypeError(
                f"{where}: a mapping answer needs the keys 'candidates' and "
                f"'results', got {sorted(map(str, answer))}"
            )
        parts: list[Any] = [answer.get(key) for key in KEYS]
    elif any(hasattr(answer, key) for key in KEYS) and not isinstance(answer, str):
        parts = [getattr(answer, key, None) for key in KEYS]
    else:
        return None, answer
    missing = [key for key, part in zip(KEYS, parts, strict=True) if part is None]
    if missing:
        raise TypeError(f"{where}: a two-stage answer needs {missing[0]!r} too")
    return parts[0], parts[1]
