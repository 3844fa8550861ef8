"""How a result's chunker and ``k`` read in tables and one-line descriptions.

Standard library only: the terminal summary renders stored JSON rows with these.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


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
