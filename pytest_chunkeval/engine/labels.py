"""How a result's chunker and ``k`` read in tables and one-line descriptions.

Standard library only: the terminal summary renders stored JSON rows with these.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

UNSCORED = "not scored: no excerpts and no judge"
"""What a question without excerpts is, in a run without a judge
(docs/formats.md)."""


def degraded_text(chunks: Mapping[str, Any]) -> str | None:
    """``"degraded: 40% of windows fell back"`` for a model-driven chunker some of
    whose windows were split by its fallback; None for any other result."""
    share = chunks.get("fallback_share") if chunks else None
    if not share:
        return None
    return f"degraded: {100 * float(share):.0f}% of windows fell back"


def k_text(config: Mapping[str, Any], chunks: Mapping[str, Any]) -> str:
    """The ``k`` of a result as tables show it: ``5``; for a whole retriever
    (``score()``) also the mean number of results scored, ``2 (2.0)``, ``all (7.3)``."""
    k = config.get("k")
    scored = chunks.get("results_per_query") if chunks else None
    if scored is None:
        return "-" if k is None else str(k)
    return f"{'all' if k is None else k} ({float(scored):.1f})"


def chunker_text(name: str, chunks: Mapping[str, Any]) -> str:
    """A result's chunker as tables show it, marked when it is degraded."""
    degraded = degraded_text(chunks)
    return f"{name} [{degraded}]" if degraded else name


def measured_text(chunks: Mapping[str, Any]) -> str:
    """What a run measured about its configuration, for a table's configuration
    cell: ``2.0 results/query`` (a whole retriever), ``[degraded: …]``."""
    parts = []
    scored = chunks.get("results_per_query") if chunks else None
    if scored is not None:
        parts.append(f"{float(scored):.1f} results/query")
    degraded = degraded_text(chunks)
    if degraded:
        parts.append(f"[{degraded}]")
    return " ".join(parts)


def unscored_text(results: Iterable[Mapping[str, Any]], shown: int = 8) -> str:
    """The questions no metric scored (no excerpts and no judge) over the results
    (``EvalResult.to_json``, with or without details), each named once per query
    set (by its file name) however many results have it: ``not scored: no
    excerpts and no judge: 1 question of queries.jsonl (q-open)``; "" when there
    is none."""
    by_set: dict[str, dict[str, None]] = {}
    for result in results:
        ids = result.get("unscored") or ()
        if ids:
            path = str((result.get("config") or {}).get("queries") or "queries")
            source = path.replace("\\", "/").rsplit("/", 1)[-1]  # the file's name
            by_set.setdefault(source, {}).update(dict.fromkeys(map(str, ids)))
    parts = []
    for source, found in by_set.items():
        ids = list(found)
        named = ", ".join(ids[:shown]) + (", ..." if len(ids) > shown else "")
        noun = "question" if len(ids) == 1 else "questions"
        parts.append(f"{len(ids)} {noun} of {source} ({named})")
    return f"{UNSCORED}: {'; '.join(parts)}" if parts else ""
