"""The query set's inspection (``chunkeval inspect``) as a section of the HTML
report: one block per measure, from the inspection's JSON form."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_chunkeval.quality.text import pct, quantiles
from pytest_chunkeval.reporting.escape import esc
from pytest_chunkeval.util.text import plural


def _table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return (
        f'<div class="table-wrap"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )


def _p(text: str) -> str:
    return f"<p>{esc(text)}</p>"


def _leakage(d: Mapping[str, Any]) -> str:
    edges, counts = d["histogram"]["edges"], d["histogram"]["counts"]
    bins = [(f"{edges[i]:.1f}-{edges[i + 1]:.1f}", c) for i, c in enumerate(counts)]
    leaky = [
        (pct(q["leakage"]), q["id"], q["question"], " ".join(q["leaked"]))
        for q in d["leakiest"]
    ]
    return (
        "<h3>Lexical leakage</h3>"
        + _p(
            "Share of a question's content words found in its excerpts: "
            + quantiles(d["distribution"], percent=True)
        )
        + _table(["Leakage", "Questions"], bins)
        + _table(["Leakage", "Id", "Question", "Leaked words"], leaky)
    )


def _bm25(d: Mapping[str, Any]) -> str:
    if "unavailable" in d:
        return "<h3>BM25 floor</h3>" + _p(f"Not measured: {d['unavailable']}")
    rows = [(f"k = {k}", pct(v)) for k, v in d["found"].items()]
    return (
        "<h3>BM25 floor</h3>"
        + _p(
            f"Questions with recall > 0 with {d['store']} over {d['chunker']} "
            f"({d['questions']} questions with excerpts)."
        )
        + _table(["Depth", "Questions found"], rows)
    )


def _excerpts(d: Mapping[str, Any]) -> str:
    rep = d["repeated_in_corpus"]
    per = [(n, c) for n, c in d["per_question"].items()]
    lengths = quantiles(d["length"])
    return (
        "<h3>Excerpts</h3>"
        + _p(f"{d['count']} excerpts; length in {d['tokenizer']} tokens: {lengths}")
        + _table(["Excerpts per question", "Questions"], per)
        + _p(
            f"Excerpt texts occurring more than once in the corpus: {rep['texts']} "
            f"({plural(rep['excerpts'], 'excerpt')} of "
            f"{plural(rep['questions'], 'question')}); texts that are excerpts of "
            f"several questions: {d['shared_by_questions']['texts']}."
        )
    )


def _coverage(d: Mapping[str, Any]) -> str:
    missing = d["documents_without_questions"]
    docs = [
        (
            doc["doc_id"],
            doc["questions"],
            pct(doc["share_of_questions"]),
            pct(doc["share_of_chars"]),
        )
        for doc in d["most_questions"]
    ]
    sections = [(s["doc_id"], s["title"], s["chars"]) for s in d["largest_uncovered"]]
    return (
        "<h3>Coverage</h3>"
        + _p(
            f"{len(missing)} of {d['documents']} documents without a question"
            + (f": {', '.join(missing)}" if missing else ".")
        )
        + _table(["Document", "Questions", "Share of questions", "Share of text"], docs)
        + (
            _p(
                f"Markdown sections without a question: "
                f"{d['sections_without_questions']} of {d['sections']} "
                f"({pct(d['uncovered_share_of_chars'])} of the text)."
            )
            + _table(["Document", "Section", "Characters"], sections)
            if d["sections"]
            else ""
        )
    )


def _duplicates(d: Mapping[str, Any]) -> str:
    rows = [
        (f"{p['similarity']:.2f}", p["a"], p["question_a"], p["b"], p["question_b"])
        for p in d["most_similar"]
    ]
    return (
        "<h3>Near-duplicate questions</h3>"
        + _p(
            f"Word 3-gram Jaccard >= {d['threshold']}: {d['pairs']} pair(s), "
            f"{d['questions']} question(s)."
        )
        + (
            _table(["Similarity", "Id", "Question", "Id", "Question"], rows)
            if rows
            else ""
        )
    )


def _detectable(d: Mapping[str, Any]) -> str:
    points = ", ".join(
        f"{m} {v:.1f} points" for m, v in (d.get("points") or {}).items()
    )
    if points:
        at = "the first configuration's" if d.get("at_mean") == "run" else "1"
        points += f" at a mean of {at}"
    return "<h3>Minimum detectable effect</h3>" + _p(
        f"{d['questions']} of {d['n']} questions must move in one direction before "
        f"a drop can be told from sampling noise ({pct(d['confidence'])} confidence, "
        f"{d['metrics']} gated metric(s))" + (f"; {points}." if points else ".")
    )


def _separability(d: Mapping[str, Any]) -> str:
    if "unavailable" in d:
        return "<h3>Configurations</h3>" + _p(f"Not compared: {d['unavailable']}")
    rows = []
    for p in d["pairs"]:
        for m, v in p["metrics"].items():
            rows.append(
                (
                    p["a"],
                    p["b"],
                    m,
                    f"{100 * v['delta']:+.1f}",
                    f"[{100 * v['low']:+.1f}, {100 * v['high']:+.1f}]",
                    f"{v['detectable_points']:.1f}",
                    "cannot tell apart" if p["indistinguishable"] else "told apart",
                )
            )
    return "<h3>Configurations</h3>" + _table(
        ["A", "B", "Metric", "B - A (points)", "Interval", "MDE (points)", "Set"], rows
    )


_PARTS = (
    ("detectable", _detectable),
    ("leakage", _leakage),
    ("bm25", _bm25),
    ("excerpts", _excerpts),
    ("coverage", _coverage),
    ("duplicates", _duplicates),
    ("separability", _separability),
)


def inspection_html(data: Mapping[str, Any]) -> str:
    """One inspection (``Inspection.to_json()``) as a ``<section>``."""
    size = data["size"]
    parts = [
        f'<section class="inspection"><h2>Query set: {esc(data["queries"])}</h2>',
        _p(
            f"{size['questions']} questions ({size['with_excerpts']} with excerpts, "
            f"{size['excerpts']} excerpts) on corpus {data['corpus']} "
            f"({size['documents']} documents). See docs/query-quality.md."
        ),
    ]
    for name, render in _PARTS:
        if data.get(name) is not None:
            parts.append(render(data[name]))
    parts.append("</section>")
    return "".join(parts)
