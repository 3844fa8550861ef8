"""Context relevance from a judgment (docs/judged.md#the-two-measures), counted per
retrieved chunk.

The context shown to a judge is the retrieved chunks' texts in rank order, joined
by :data:`SEPARATOR`. A judgment's spans (relative to that context) are mapped back
to the corpus: the judged spans ``J``. Then, for retrieved chunks ``R_1..R_n``:

- ``context_relevance`` = sentences of the retrieved chunks that overlap ``J`` /
  all sentences of the retrieved chunks. Sentences are counted per chunk, so
  overlapping chunks that repeat a relevant sentence do not dilute a fully relevant
  context (it scores 1).
- ``context_relevance_tokens`` = Σ_i |units(R_i ∩ J)| / |tr|: the units of the
  characters each chunk shares with ``J`` (tokens, or characters with
  ``unit="char"``; docs/concepts.md, "Units"); ``|tr|`` is the sum of the chunks'
  lengths.

Both are 0 when nothing was retrieved. Sentences come from the same simple splitter
as the ``sentence`` chunker; :data:`SPLITTER` names it in the judgment cache key.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pytest_chunkeval.chunkers.sentence import sentence_spans
from pytest_chunkeval.core.metrics import JUDGED_METRICS
from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.judging.judge import Judgment, merge_spans

SEPARATOR = "\n\n"
SPLITTER = "sentences-1"
"""Identity of :func:`sentence_spans` as used here; bump it if the splitter changes
(a test pins its output)."""

SpanTuple = tuple[str, int, int]

CR_METRICS = JUDGED_METRICS


def build_context(texts: Sequence[str]) -> tuple[str, list[int]]:
    """The context of retrieved ``texts`` and the offset of each text in it."""
    offsets: list[int] = []
    pos = 0
    for text in texts:
        offsets.append(pos)
        pos += len(text) + len(SEPARATOR)
    return SEPARATOR.join(texts), offsets


def judged_corpus_spans(
    judgment: Judgment, retrieved: Sequence[SpanTuple], offsets: Sequence[int]
) -> list[SpanTuple]:
    """The judgment's spans as corpus spans (a span crossing chunks is cut at
    their ends; what falls on a separator belongs to no chunk)."""
    out: list[SpanTuple] = []
    for (doc, start, end), off in zip(retrieved, offsets, strict=True):
        length = end - start
        for a, b in judgment.spans:
            lo, hi = max(a, off), min(b, off + length)
            if lo < hi:
                out.append((doc, start + lo - off, start + hi - off))
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for doc, s, e in out:
        by_doc.setdefault(doc, []).append((s, e))
    return [(doc, s, e) for doc in sorted(by_doc) for s, e in merge_spans(by_doc[doc])]


@dataclass(frozen=True)
class Relevance:
    """One query's context relevance and what it counted."""

    context_relevance: float
    context_relevance_tokens: float
    sentences: int
    relevant_sentences: int


def _overlaps(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    return any(s < end and start < e for s, e in spans)


def _shared_units(
    units: UnitMap, doc: str, start: int, end: int, judged: Sequence[tuple[int, int]]
) -> int:
    """``|units(R ∩ J)|``: the units of the characters a chunk shares with the
    judged spans of its document (docs/concepts.md, "Units")."""
    pieces = [(max(start, a), min(end, b)) for a, b in judged]
    pieces = [(a, b) for a, b in pieces if a < b]
    if not pieces:
        return 0
    lo, hi = units.to_units(
        units.doc_indices([doc] * len(pieces)),
        np.array([a for a, _ in pieces], np.int64),
        np.array([b for _, b in pieces], np.int64),
    )
    merged = merge_spans(list(zip(lo.tolist(), hi.tolist(), strict=True)))
    return sum(b - a for a, b in merged)


def context_relevance(
    retrieved: Sequence[SpanTuple],
    judged: Sequence[SpanTuple],
    texts: dict[str, str],
    units: UnitMap,
) -> Relevance:
    """Both measures for one query (see the module docstring); ``texts`` maps
    document ids to their text."""
    by_doc: dict[str, list[tuple[int, int]]] = {}
    for doc, s, e in judged:
        by_doc.setdefault(doc, []).append((s, e))
    total = relevant = 0
    for doc, start, end in retrieved:
        spans = by_doc.get(doc, [])
        for a, b in sentence_spans(texts[doc][start:end]).tolist():
            total += 1
            relevant += _overlaps(spans, start + a, start + b)
    sentence_cr = relevant / total if total else 0.0
    if not retrieved:
        return Relevance(0.0, 0.0, 0, 0)
    docs = units.doc_indices([d for d, _, _ in retrieved])
    r_lo, r_hi = units.to_units(
        docs,
        np.array([s for _, s, _ in retrieved], np.int64),
        np.array([e for _, _, e in retrieved], np.int64),
    )
    inside = sum(
        _shared_units(units, doc, start, end, by_doc.get(doc, []))
        for doc, start, end in retrieved
    )
    size = int((r_hi - r_lo).sum())
    token_cr = inside / size if size else 0.0
    return Relevance(sentence_cr, token_cr, total, relevant)
