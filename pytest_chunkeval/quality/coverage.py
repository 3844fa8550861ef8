"""Coverage: which documents, and which Markdown sections, no question asks about;
which documents hold most of the questions.

A question is about the documents of its excerpts (a question without excerpts:
its ``doc_id``, when the corpus has it). A section is a Markdown ATX heading line
(``#`` to ``######``) and the text up to the next heading, outside fenced code
blocks; the text before a document's first heading is a section of its own when it
holds more than whitespace. A section is covered when an excerpt shares at least
one character with it. Documents without any heading have no sections.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from typing import Any

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.quality._stats import fraction

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
BEFORE_FIRST = "(before the first heading)"


def markdown_sections(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, title)`` of each section of ``text`` in order ([] when it has
    no heading)."""
    starts: list[tuple[int, str]] = []
    fence = ""
    pos = 0
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        opened = _FENCE.match(body)
        if fence:
            if (
                opened
                and opened.group(1)[0] == fence[0]
                and len(opened.group(1)) >= len(fence)
            ):
                fence = ""
        elif opened:
            fence = opened.group(1)
        elif (m := _HEADING.match(body)) is not None:
            starts.append((pos, (m.group(2) or "").strip() or m.group(1)))
        pos += len(line)
    if not starts:
        return []
    sections = []
    if text[: starts[0][0]].strip():
        sections.append((0, starts[0][0], BEFORE_FIRST))
    for i, (start, title) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        sections.append((start, end, title))
    return sections


def _question_documents(corpus: Corpus, queries: QuerySet) -> Counter[str]:
    """Questions per document (a question counts once per document it is about)."""
    counts: Counter[str] = Counter()
    for q in queries:
        docs = {e.doc_id for e in q.excerpts}
        if not docs and q.doc_id in corpus:
            docs = {q.doc_id}
        counts.update(docs)
    return counts


def coverage_report(
    corpus: Corpus, queries: QuerySet, *, show: int = 10
) -> dict[str, Any]:
    """Documents without a question, the documents holding most questions (with
    their share of the questions and of the corpus' characters), and the sections
    no excerpt touches (the largest first)."""
    per_doc = _question_documents(corpus, queries)
    chars = sum(len(d.text) for d in corpus)
    spans: dict[str, list[tuple[int, int]]] = {}
    for q in queries:
        for e in q.excerpts:
            if e.end > e.start:
                spans.setdefault(e.doc_id, []).append((e.start, e.end))
    total = uncovered_chars = 0
    uncovered: list[dict[str, Any]] = []
    for doc in corpus:
        sections = markdown_sections(doc.text)
        total += len(sections)
        ranges = sorted(spans.get(doc.id, []))
        starts = [s for s, _ in ranges]
        reach = _running_max([e for _, e in ranges])
        for start, end, title in sections:
            # an excerpt starting before `end` whose end passes `start` overlaps
            i = bisect.bisect_left(starts, end)
            if i and reach[i - 1] > start:
                continue
            uncovered_chars += end - start
            uncovered.append({"doc_id": doc.id, "title": title, "chars": end - start})
    uncovered.sort(key=lambda s: -s["chars"])
    n = len(queries)
    order = {d: i for i, d in enumerate(corpus.ids)}
    top = sorted(per_doc, key=lambda d: (-per_doc[d], order[d]))[:show]
    return {
        "documents": len(corpus),
        "documents_without_questions": [d.id for d in corpus if not per_doc[d.id]],
        "most_questions": [
            {
                "doc_id": d,
                "questions": per_doc[d],
                "share_of_questions": fraction(per_doc[d], n),
                "share_of_chars": fraction(len(corpus[d].text), chars),
            }
            for d in top
        ],
        "sections": total,
        "sections_without_questions": len(uncovered),
        "uncovered_share_of_chars": fraction(uncovered_chars, chars),
        "largest_uncovered": uncovered[:show],
    }


def _running_max(values: list[int]) -> list[int]:
    out: list[int] = []
    best = -1
    for v in values:
        best = max(best, v)
        out.append(best)
    return out
