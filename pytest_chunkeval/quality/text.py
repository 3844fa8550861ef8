"""The inspection as text: what ``chunkeval inspect`` prints."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pytest_chunkeval.core.locate import preview
from pytest_chunkeval.quality.inspection import Inspection
from pytest_chunkeval.util.text import plural


def pct(value: Any) -> str:
    """``52.3%`` (``n/a`` for a missing or NaN value)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{100 * float(value):.1f}%"


def quantiles(d: Mapping[str, Any], *, percent: bool = False, digits: int = 0) -> str:
    """``mean 35, min 5, p25 23, median 32, p75 44, max 305``."""
    if not d.get("n"):
        return "(none)"
    names = ("mean", "min", "p25", "median", "p75", "p90", "max")

    def fmt(v: float) -> str:
        return pct(v) if percent else f"{v:.{digits}f}"

    return ", ".join(f"{n} {fmt(d[n])}" for n in names if n in d)


def format_inspection(inspection: Inspection) -> str:
    """Every measure in a few lines each, with its examples."""
    size = inspection.size
    lines = [
        f"{inspection.queries} on corpus {inspection.corpus}: {size['questions']} "
        f"questions ({size['with_excerpts']} with excerpts, {size['excerpts']} "
        f"excerpts), {size['documents']} documents"
    ]
    for name, render in _SECTIONS:
        part = inspection.parts.get(name)
        if part is not None:
            lines.append("")
            lines += render(part)
    lines.append("")
    lines.append(f"inspected in {inspection.seconds:.2f} s")
    return "\n".join(lines)


def _detectable(d: Mapping[str, Any]) -> list[str]:
    if d["questions"] is None:  # no question with excerpts: nothing to move
        return [
            f"minimum detectable effect: none ({d['n']} questions with excerpts: "
            "no drop can be told from sampling noise)"
        ]
    lines = [
        "minimum detectable effect: "
        f"{d['questions']} of {d['n']} questions must move in one direction "
        f"before a drop can be told from sampling noise ({pct(d['confidence'])} "
        f"confidence over {d['metrics']} gated metric(s))"
    ]
    where = (
        "at the first configuration's mean"
        if d.get("at_mean") == "run"
        else "at a mean of 1 (an upper bound; compare configurations for the real one)"
    )
    points = ", ".join(f"{m} {p:.1f}" for m, p in (d.get("points") or {}).items())
    if points:
        lines.append(f"  in points {where}: {points}")
    return lines


def _leakage(d: Mapping[str, Any]) -> list[str]:
    dist = d["distribution"]
    lines = [
        "lexical leakage (share of a question's content words found in its excerpts):",
        f"  {quantiles(dist, percent=True)}",
    ]
    if not dist.get("n"):  # nothing measured: no histogram, no shares
        return [*lines, *_not_measured(d)]
    edges, counts = d["histogram"]["edges"], d["histogram"]["counts"]
    top = max(counts, default=0) or 1
    for i, count in enumerate(counts):
        bar = "#" * math.ceil(40 * count / top) if count else ""
        lines.append(f"  {edges[i]:.1f}-{edges[i + 1]:.1f} {count:6d} {bar}")
    shares = ", ".join(f">= {t}: {pct(v)}" for t, v in d["at_least"].items())
    lines.append(f"  questions with leakage {shares}")
    lines += _not_measured(d)
    if d["leakiest"]:
        lines.append("  most leaky:")
        for q in d["leakiest"]:
            lines.append(
                f"    {pct(q['leakage']):>6} {q['id']}: {preview(q['question'], 70)}"
            )
    return lines


def _not_measured(d: Mapping[str, Any]) -> list[str]:
    n = d["not_measured"]
    return [f"  {n} question(s) without excerpts or content words"] if n else []


def _bm25(d: Mapping[str, Any]) -> list[str]:
    if "unavailable" in d:
        return [f"BM25 floor: not measured ({d['unavailable']})"]
    found = ", ".join(f"k={k}: {pct(v)}" for k, v in d["found"].items())
    return [
        f"BM25 floor ({d['store']} over {d['chunker']}): questions with recall > 0 "
        f"at {found} of {d['questions']}"
    ]


def _excerpts(d: Mapping[str, Any]) -> list[str]:
    per = ", ".join(f"{n}: {c}" for n, c in d["per_question"].items())
    rep = d["repeated_in_corpus"]
    shared = d["shared_by_questions"]
    lines = [
        f"excerpts: {d['count']}; length in tokens ({d['tokenizer']}): "
        f"{quantiles(d['length'])}",
        f"  in characters: {quantiles(d['length_chars'])}",
        f"  excerpts per question: {per} ({d['several']} questions with several)",
        f"  texts occurring more than once in the corpus: {rep['texts']} "
        f"({plural(rep['excerpts'], 'excerpt')} of "
        f"{plural(rep['questions'], 'question')}; any copy counts as retrieved)",
    ]
    # The most repeated texts belong under the line that counts them.
    lines += [
        f"    x{item['occurrences']} {preview(item['text'], 70)}"
        for item in rep["most"][:5]
    ]
    lines.append(
        f"  texts shared by several questions: {shared['texts']} "
        f"({plural(shared['questions'], 'question')})"
    )
    return lines


def _coverage(d: Mapping[str, Any]) -> list[str]:
    missing = d["documents_without_questions"]
    lines = [
        f"coverage: {len(missing)} of {d['documents']} documents without a question"
        + (
            f" ({', '.join(missing[:10])}{' ...' if len(missing) > 10 else ''})"
            if missing
            else ""
        )
    ]
    if d["sections"]:
        lines.append(
            f"  Markdown sections: {d['sections_without_questions']} of "
            f"{d['sections']} without a question "
            f"({pct(d['uncovered_share_of_chars'])} of the corpus' characters)"
        )
        for s in d["largest_uncovered"][:5]:
            lines.append(f"    {s['chars']:>8} chars  {s['doc_id']}: {s['title']}")
    lines.append("  documents holding most questions:")
    for doc in d["most_questions"]:
        lines.append(
            f"    {doc['questions']:5d} ({pct(doc['share_of_questions'])} of the "
            f"questions, {pct(doc['share_of_chars'])} of the text) {doc['doc_id']}"
        )
    return lines


def _duplicates(d: Mapping[str, Any]) -> list[str]:
    lines = [
        f"near-duplicate questions (word 3-gram Jaccard >= {d['threshold']}): "
        f"{d['pairs']} pair(s), {d['questions']} question(s)"
    ]
    for p in d["most_similar"][:5]:
        lines.append(
            f"    {p['similarity']:.2f} {p['a']} ~ {p['b']}: "
            f"{preview(p['question_a'], 60)}"
        )
    return lines


def _separability(d: Mapping[str, Any]) -> list[str]:
    if "unavailable" in d:
        return [f"configurations: not compared ({d['unavailable']})"]
    pairs = d["pairs"]
    apart = [p for p in pairs if p["indistinguishable"]]
    lines = [
        f"configurations ({len(d['configurations'])}): {len(apart)} of {len(pairs)} "
        "pair(s) this set cannot tell apart (every paired interval contains zero "
        "and every difference is below the detectable effect)"
    ]
    for p in pairs:
        mark = "cannot tell apart" if p["indistinguishable"] else "told apart"
        deltas = ", ".join(
            f"{m} {100 * v['delta']:+.1f} [{100 * v['low']:+.1f}, "
            f"{100 * v['high']:+.1f}] (MDE {v['detectable_points']:.1f})"
            for m, v in p["metrics"].items()
        )
        lines.append(f"  {p['b']} - {p['a']} (points): {mark}: {deltas}")
    return lines


_SECTIONS = (
    ("detectable", _detectable),
    ("leakage", _leakage),
    ("bm25", _bm25),
    ("excerpts", _excerpts),
    ("coverage", _coverage),
    ("duplicates", _duplicates),
    ("separability", _separability),
)
