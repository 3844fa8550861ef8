"""Brute-force references with Python sets for the vectorized metric core
(docs/metrics.md): a span's characters or tokens, the per-question metrics, and the
ranking metrics (best cover by trying every combination)."""

from __future__ import annotations

import itertools
import math

from pytest_chunkeval.tokenizers.base import get_tokenizer

ALPHABET = "ab é🎉日\n. "
"""Characters the generated texts draw from: ASCII, an accent, an emoji, CJK,
a newline, a full stop and a space."""

Span = tuple[str, int, int]


Chars = set[tuple[str, int]]


def char_set(span: Span) -> Chars:
    doc, a, b = span
    return {(doc, c) for c in range(a, b)}


def units_of(chars: Chars, texts: dict[str, str], unit: str) -> set[tuple[str, int]]:
    """The units of a set of characters: the characters, or every token holding
    one of them."""
    if unit == "char":
        return set(chars)
    out = set()
    for doc in {d for d, _ in chars}:
        mine = {c for d, c in chars if d == doc}
        bounds = get_tokenizer().token_bounds(texts[doc]).tolist()
        out |= {(doc, i) for i, (s, e) in enumerate(bounds) if mine & set(range(s, e))}
    return out


def unit_set(span: Span, texts: dict[str, str], unit: str) -> set[tuple[str, int]]:
    return units_of(char_set(span), texts, unit)


def shared_units(
    span: Span, te_chars: Chars, texts: dict[str, str], unit: str
) -> set[tuple[str, int]]:
    """units(E ∩ R): the units of the characters a span shares with the excerpts."""
    return units_of(char_set(span) & te_chars, texts, unit)


def brute_force_metrics(
    texts: dict[str, str],
    unit: str,
    excerpts: list[list[Span]],
    retrieved: list[list[Span]],
    chunks: list[Span],
) -> list[dict[str, float]]:
    out = []
    for exs, rets in zip(excerpts, retrieved, strict=True):
        te_chars: Chars = set().union(*(char_set(e) for e in exs))
        te = units_of(te_chars, texts, unit)
        hits = [shared_units(r, te_chars, texts, unit) for r in rets]
        tp_units: set[tuple[str, int]] = set().union(*hits)
        tr = sum(len(unit_set(r, texts, unit)) for r in rets)
        tp = len(tp_units)
        omega = [c for c in chunks if char_set(c) & te_chars]
        omega_units: set[tuple[str, int]] = set().union(
            *(unit_set(c, texts, unit) for c in omega)
        )
        omega_shared: set[tuple[str, int]] = set().union(
            *(shared_units(c, te_chars, texts, unit) for c in omega)
        )
        union = len(omega_units | te)
        first = next((i + 1 for i, h in enumerate(hits) if h), 0)
        out.append(
            {
                "recall": tp / len(te) if te else 0.0,
                "precision": tp / tr if tr else 0.0,
                "iou": tp / (len(te) + tr - tp) if len(te) + tr - tp else 0.0,
                "f1": 2 * tp / (len(te) + tr) if len(te) + tr else 0.0,
                "precision_omega": len(omega_shared) / union if union else 0.0,
                "te": len(te),
                "tr": tr,
                "tp": tp,
                "first": first,
                "omega": len(omega),
                "coverage": [
                    len(unit_set(e, texts, unit) & tp_units)
                    / len(unit_set(e, texts, unit))
                    if unit_set(e, texts, unit)
                    else 0.0
                    for e in exs
                ],
            }
        )
    return out


Units = set[tuple[str, int]]


def best_cover(sets: list[Units], j: int) -> int:
    """Largest union of any j sets: brute force over the maximal sets."""
    distinct = {frozenset(s) for s in sets if s}
    maximal = [s for s in distinct if not any(s < t for t in distinct)]
    j = min(j, len(maximal))
    return max(
        (
            len(frozenset().union(*combo))
            for combo in itertools.combinations(maximal, j)
        ),
        default=0,
    )


def brute_force_ranking(texts, unit, excerpts, retrieved, chunks, k, budget):
    out = []
    for exs, rets in zip(excerpts, retrieved, strict=True):
        te_chars: Chars = set().union(*(char_set(e) for e in exs))
        te: Units = units_of(te_chars, texts, unit)
        d = min(k, len(chunks))
        top = [shared_units(r, te_chars, texts, unit) for r in rets[:d]]
        gains, seen = [], set()
        for s in top:
            gains.append(len(s - seen))
            seen |= s
        first = next((i + 1 for i, s in enumerate(top) if s), 0)
        candidates = [shared_units(c, te_chars, texts, unit) for c in chunks]
        cover = [best_cover(candidates, j) for j in range(d + 1)]
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
        idcg = sum(
            (cover[j] - cover[j - 1]) / math.log2(j + 1) for j in range(1, d + 1)
        )
        kept, used = [], 0
        for r in rets:
            size = len(unit_set(r, texts, unit))
            if budget is not None and used + size > budget:
                break
            used += size
            kept.append(r)
        tp_units: Units = set().union(
            *(shared_units(r, te_chars, texts, unit) for r in kept)
        )
        tp = len(tp_units)
        out.append(
            {
                "mrr": 1 / first if first else 0.0,
                "ndcg": dcg / idcg if idcg else 0.0,
                "ceiling": cover[d] / len(te),
                "complete": float(tp == len(te)),
                "recall": tp / len(te),
                "depth_recall": len(seen) / len(te),
                "retrieved_units": used,
                "over_budget": bool(rets) and not kept,
                "overlaps": first > 0,
            }
        )
    return out
