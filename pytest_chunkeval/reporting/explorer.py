"""The per-question explorer of the HTML report: its data, built small.

Each configuration's result gives a *piece* (:func:`explorer_piece`, made where the
corpus is at hand: it holds the document text the page needs); the report merges
the pieces into one compact blob (:func:`explorer_blob`) that ``explorer.js``
renders on demand. Document text is kept only around each excerpt (``CONTEXT``
characters either side) and for the retrieved chunks (up to ``CHUNK_CHARS`` each,
less past ``TEXT_BUDGET``), merged per document, and stored once however many
configurations need it; questions are stored once per query set; a configuration
holds numbers only (offsets, metrics, statuses).

Blob (``EXPLORER_SCHEMA``)::

    {"v": 1, "context": 240,
     "docs": [doc_id, ...],                               # index d
     "texts": [[d, start, text], ...],                    # disjoint, by d then start
     "questions": [[id, question, d, [d, s, e, ...]], ...],  # excerpts, flat
     "configs": [{"label", "color",
                  "rows": [[question, status, recall, precision, iou,
                            [d, s, e, ...],   # retrieved, rank order, flat
                            before,           # baseline recall or null
                            chosen], ...]}]}  # scored excerpt spans, flat, when
                                              # they differ from the stored ones

``status``: 0 hit (every excerpt unit retrieved), 1 partial, 2 miss, 3 not
measured (no excerpts).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult, SpanTuple

EXPLORER_SCHEMA = 1
CONTEXT = 240
"""Characters of document text shown on each side of an excerpt."""
CHUNK_CHARS = 1500
"""Characters of a retrieved chunk's text kept (its start; long chunks are cut)."""
TEXT_BUDGET = 4_000_000
"""Characters of document text one configuration may add to the page: beyond it,
retrieved chunks keep 300 characters, then none (the page shows the gap); the
excerpts keep their context."""
STATUSES = ("hit", "partial", "miss", "n/a")
_FULL = 1 - 1e-9


def status(recall: float | None) -> int:
    """The index in ``STATUSES`` of a question's recall."""
    if recall is None:
        return 3
    if recall >= _FULL:
        return 0
    return 1 if recall > 0 else 2


def _r(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def _flat(spans: Iterable[SpanTuple]) -> list[Any]:
    return [x for span in spans for x in span]


def explorer_piece(result: EvalResult) -> dict[str, Any] | None:
    """What the explorer needs of one result, or None when it carries no corpus
    (a result read back from JSON). The baseline's recall per question is added
    later, by :func:`with_baseline` (None until then)."""
    corpus = result.corpus
    if corpus is None or not result.queries:
        return None
    questions, rows = [], []
    for q in result.queries:
        questions.append([q.id, q.question, q.doc_id, _flat(q.excerpts)])
        rows.append(
            [
                status(q.scores.get("recall")),
                _r(q.scores.get("recall")),
                _r(q.scores.get("precision")),
                _r(q.scores.get("iou")),
                _flat(q.retrieved),
                None,
                _flat(q.chosen) if q.chosen else None,
            ]
        )
    texts: dict[str, list[list[Any]]] = {}
    for cap in (CHUNK_CHARS, CHUNK_CHARS // 5, 0):
        windows = _windows(result, cap)
        kept = sum(e - s for spans in windows.values() for s, e in spans)
        if kept <= TEXT_BUDGET or cap == 0:
            break
    for doc, spans in windows.items():
        text = corpus[doc].text
        texts[doc] = [[s, text[s:e]] for s, e in spans if e > s]
    return {
        "v": EXPLORER_SCHEMA,
        "corpus": result.corpus_hash,
        "queries": result.queries_hash,
        "questions": questions,
        "rows": rows,
        "texts": texts,
    }


def _windows(result: EvalResult, cap: int) -> dict[str, list[tuple[int, int]]]:
    """Per document, the merged spans to keep: each excerpt with ``CONTEXT``
    around it, the first ``cap`` characters of each retrieved chunk."""
    assert result.corpus is not None
    wanted: dict[str, list[tuple[int, int]]] = {}
    for q in result.queries:
        for doc, start, end in (*q.excerpts, *q.chosen):
            wanted.setdefault(doc, []).append((start - CONTEXT, end + CONTEXT))
        for doc, start, end in q.retrieved:
            wanted.setdefault(doc, []).append((start, min(end, start + cap)))
    return {
        doc: _merge(spans, len(result.corpus[doc].text))
        for doc, spans in wanted.items()
    }


def with_baseline(
    piece: Mapping[str, Any], before: Mapping[str, float | None]
) -> dict[str, Any]:
    """``piece`` with a baseline's recall for the questions in ``before`` (by query
    id; e.g. the questions that flipped), so the page shows what changed."""
    rows = [
        [*row[:5], _r(before[q[0]]) if q[0] in before else row[5], *row[6:]]
        for q, row in zip(piece["questions"], piece["rows"], strict=True)
    ]
    return {**piece, "rows": rows}


def _merge(intervals: Iterable[tuple[int, int]], size: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted((max(s, 0), min(e, size)) for s, e in intervals):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def explorer_blob(
    pieces: Sequence[tuple[str, str, Mapping[str, Any]]],
) -> dict[str, Any]:
    """One blob from ``(label, colour, piece)`` per configuration: documents,
    text and questions once, configurations by index."""
    docs: dict[tuple[str, str], int] = {}
    segments: dict[int, list[tuple[int, str]]] = {}
    questions: dict[tuple[str, str, str], int] = {}
    question_rows: list[list[Any]] = []
    configs = []

    def doc_index(corpus: str, doc: str) -> int:
        return docs.setdefault((corpus, doc), len(docs))

    def spans(corpus: str, flat: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        for i in range(0, len(flat), 3):
            out += [doc_index(corpus, flat[i]), flat[i + 1], flat[i + 2]]
        return out

    for label, color, piece in pieces:
        corpus, queries = str(piece["corpus"]), str(piece["queries"])
        for doc, parts in piece["texts"].items():
            segments.setdefault(doc_index(corpus, doc), []).extend(
                (int(s), str(t)) for s, t in parts
            )
        rows = []
        for (qid, text, doc, excerpts), row in zip(
            piece["questions"], piece["rows"], strict=True
        ):
            key = (corpus, queries, str(qid))
            if key not in questions:
                questions[key] = len(question_rows)
                question_rows.append(
                    [qid, text, doc_index(corpus, doc), spans(corpus, excerpts)]
                )
            chosen = row[6] if len(row) > 6 and row[6] else None
            rows.append(
                [
                    questions[key],
                    *row[:4],
                    spans(corpus, row[4]),
                    row[5],
                    None if chosen is None else spans(corpus, chosen),
                ]
            )
        configs.append({"label": label, "color": color, "rows": rows})
    return {
        "v": EXPLORER_SCHEMA,
        "context": CONTEXT,
        "docs": [doc for _, doc in docs],
        "texts": [
            [d, start, text]
            for d in sorted(segments)
            for start, text in _merge_texts(segments[d])
        ],
        "questions": question_rows,
        "configs": configs,
    }


def _merge_texts(parts: Iterable[tuple[int, str]]) -> list[tuple[int, str]]:
    """Overlapping segments of one document (from several pieces) as one."""
    out: list[tuple[int, str]] = []
    for start, text in sorted(parts, key=lambda p: (p[0], -len(p[1]))):
        if out and start <= out[-1][0] + len(out[-1][1]):
            first, kept = out[-1]
            tail = text[first + len(kept) - start :]
            out[-1] = (first, kept + tail)
        else:
            out.append((start, text))
    return out


def script_json(data: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``</script>``, ``<!--`` or
    ``<script`` can appear in it (every ``<`` is escaped)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("<", "\\u003c")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def _asset(name: str) -> str:
    folder = resources.files("pytest_chunkeval.reporting")
    return folder.joinpath(name).read_text(encoding="utf-8")


def explorer_css() -> str:
    return _asset("explorer.css")


def explorer_section(blob: Mapping[str, Any]) -> str:
    """The explorer's section: a mount point, the blob and the script."""
    count = len(blob["questions"])
    return (
        '<section id="explorer-section"><h2>Questions</h2>'
        f'<p class="note">{count} question(s). Pick one to see its excerpts in their '
        'document (highlighted: <mark class="ex got">retrieved</mark>, '
        '<mark class="ex lost">missed</mark>; <span class="rt">underlined</span>: '
        "retrieved text outside the excerpts) and the retrieved chunks in rank "
        "order. Choose a second configuration to compare side by side.</p>"
        '<div id="explorer"><noscript>The explorer needs JavaScript.</noscript>'
        "</div>"
        '<script type="application/json" id="chunkeval-explorer-data">'
        f"{script_json(blob)}</script>"
        f"<script>{_asset('explorer.js')}</script></section>"
    )
