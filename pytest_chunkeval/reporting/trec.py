"""TREC run and qrels files of a result, for the IR tools (trec_eval, ranx,
ir_measures): their significance tests and fusion methods on our rankings.

- **docno** ``doc_id:start-end``, a retrieved chunk's character span (whitespace,
  ``%`` and ``#`` in a document id are written ``%XX``); a span retrieved again
  lower in the same ranking gets ``#2``, ``#3``... so that no rank is lost;
- **run**: ``qid Q0 docno rank score tag``, scores strictly decreasing with rank
  (``n + 1 - rank``): trec_eval re-sorts by score and breaks ties by docno, so
  equal scores would reorder the ranking;
- **qrels** per run, from the spans that run scored (the excerpts, or the copies
  of their text chosen for it, ``docs/concepts.md``): every retrieved chunk, and
  every chunk of the chunking that shares a character with a scored excerpt.
  Binary: 1 when the chunk shares a character with one; graded: the units
  (tokens or characters) of the excerpts it covers, ``|units(E ∩ R)|``.

With these, ir_measures' ``RR`` (ranx's ``mrr``) equals each question's ``mrr``
(``docs/query-quality.md``). Questions without excerpts are left out of both.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pytest_chunkeval.core.units import UnitMap
from pytest_chunkeval.engine.results import EvalResult, QueryRecord

SpanTuple = tuple[str, int, int]
_UNSAFE = re.compile(r"[\s%#]")


def _quote(text: str) -> str:
    return _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), text)


def docno(span: Sequence[Any], repeat: int = 1) -> str:
    """``doc_id:start-end`` (``#repeat`` from the second time in a ranking)."""
    doc, start, end = span
    name = f"{_quote(str(doc))}:{int(start)}-{int(end)}"
    return name if repeat == 1 else f"{name}#{repeat}"


def run_tag(result: EvalResult) -> str:
    """A run tag: the configuration in one line (chunker, ``k``, unit, embedder,
    store) without whitespace, so that runs of one file differing only in their
    store or embedder keep apart; a label that is not the chunker's leads."""
    text = result.describe(measured=False)
    if result.label != result.config.get("chunker", result.label):
        text = f"{result.label} {text}"
    return re.sub(r"\s+", "_", text.strip()) or "chunkeval"


def _scored(record: QueryRecord) -> tuple[SpanTuple, ...]:
    return record.scored_excerpts


def _covered_units(
    units: UnitMap | None, span: Sequence[Any], excerpts: Sequence[SpanTuple]
) -> int:
    """``|units(E ∩ R)|``: the units of the characters ``span`` shares with
    ``excerpts`` (characters without a unit map)."""
    doc, start, end = span
    shared = sorted(
        (max(s, start), min(e, end))
        for d, s, e in excerpts
        if d == doc and s < end and start < e
    )
    if not shared:
        return 0
    if units is None:
        merged: list[list[int]] = []
        for s, e in shared:
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        return sum(e - s for s, e in merged)
    index = units.doc_indices([doc] * len(shared))
    lo, hi = units.to_units(
        index,
        np.array([s for s, _ in shared], np.int64),
        np.array([e for _, e in shared], np.int64),
    )
    covered: set[int] = set()
    for a, b in zip(lo.tolist(), hi.tolist(), strict=True):
        covered.update(range(a, b))
    return len(covered)


class _Chunks:
    """The chunks of a chunking by document, sorted by start, to find those that
    share a character with a span."""

    def __init__(self, spans: Iterable[SpanTuple]) -> None:
        self.by_doc: dict[str, list[tuple[int, int]]] = {}
        for doc, start, end in spans:
            self.by_doc.setdefault(doc, []).append((int(start), int(end)))
        self.starts: dict[str, list[int]] = {}
        self.longest: dict[str, int] = {}
        for doc, rows in self.by_doc.items():
            rows.sort()
            self.starts[doc] = [s for s, _ in rows]
            self.longest[doc] = max(e - s for s, e in rows)

    def overlapping(self, span: SpanTuple) -> list[SpanTuple]:
        doc, start, end = span
        rows = self.by_doc.get(doc)
        if not rows:
            return []
        first = bisect_left(self.starts[doc], start - self.longest[doc])
        last = bisect_left(self.starts[doc], end)
        return [(doc, s, e) for s, e in rows[first:last] if e > start]


def trec_piece(result: EvalResult, units: UnitMap | None = None) -> dict[str, Any]:
    """What the run and qrels files of ``result`` hold, as JSON-ready lists:
    ``{"tag", "run": [[qid, docno, rank, score]], "qrels": [[qid, docno,
    binary, graded]]}``. ``units``: the result's unit axis (needed for graded
    relevance in the token unit; by default made from ``result.corpus``)."""
    if units is None and result.config.get("unit") == "token":
        if result.corpus is None:
            raise ValueError("graded qrels in the token unit need the result's corpus")
        from pytest_chunkeval.engine.chunking import unit_map
        from pytest_chunkeval.tokenizers.base import get_tokenizer

        tokenizer = get_tokenizer(result.config.get("tokenizer"))
        units = unit_map(result.corpus, "token", tokenizer)
    chunks = _Chunks(result.chunk_spans)
    run: list[list[Any]] = []
    qrels: list[list[Any]] = []
    for record in result.queries:
        scored = _scored(record)
        if not record.excerpts:
            continue
        qid = _quote(record.id)
        seen: dict[tuple[str, int, int], int] = {}
        judged: dict[str, tuple[int, int]] = {}
        n = len(record.retrieved)
        for rank, span in enumerate(record.retrieved, 1):
            key = (span[0], int(span[1]), int(span[2]))
            seen[key] = seen.get(key, 0) + 1
            name = docno(key, seen[key])
            run.append([qid, name, rank, n + 1 - rank])
            graded = _covered_units(units, key, scored)
            judged[name] = (int(graded > 0), graded)
        for excerpt in scored:
            for chunk in chunks.overlapping(excerpt):
                name = docno(chunk)
                if name not in judged:
                    judged[name] = (1, _covered_units(units, chunk, scored))
        qrels += [[qid, name, b, g] for name, (b, g) in judged.items()]
    return {
        "tag": run_tag(result),
        "name": result.label,
        "run": run,
        "qrels": qrels,
    }


def run_text(piece: Mapping[str, Any]) -> str:
    """The TREC run file of a :func:`trec_piece`."""
    tag = piece["tag"]
    return "".join(
        f"{qid} Q0 {name} {rank} {score} {tag}\n"
        for qid, name, rank, score in piece["run"]
    )


def qrels_text(piece: Mapping[str, Any], *, graded: bool = False) -> str:
    """The qrels file of a :func:`trec_piece` (binary, or units covered)."""
    column = 3 if graded else 2
    return "".join(f"{row[0]} 0 {row[1]} {row[column]}\n" for row in piece["qrels"])


def _named(path: Path, name: str) -> Path:
    return path.with_name(f"{path.stem}.{name}{path.suffix}")


def write_trec(
    pieces: Sequence[Mapping[str, Any]],
    run: str | os.PathLike[str] | None = None,
    qrels: str | os.PathLike[str] | None = None,
) -> list[str]:
    """Write the run and qrels files of :func:`trec_piece` s, atomically: one
    piece at the paths given; several, one file per run with its tag before the
    suffix (``run.recursive_200_0.trec``). Beside each qrels file, its graded
    variant (``<stem>.graded<suffix>``). Returns one line per file written."""
    from pytest_chunkeval.util.files import atomic_write_text

    written: list[str] = []
    seen: dict[str, int] = {}
    # A file is named after its run's label; runs sharing a label (another store
    # or embedder) after their whole tag.
    names = [str(p.get("name", p["tag"])) for p in pieces]
    for piece, name in zip(pieces, names, strict=True):
        if names.count(name) > 1:
            name = str(piece["tag"])
        tag = re.sub(r"[^\w.=+-]+", "_", name).strip("_") or "run"
        seen[tag] = seen.get(tag, 0) + 1
        tag = tag if seen[tag] == 1 else f"{tag}-{seen[tag]}"
        files: list[tuple[str, Path, str]] = []
        if run is not None:
            path = Path(run) if len(pieces) == 1 else _named(Path(run), tag)
            files.append(("run", path, run_text(piece)))
        if qrels is not None:
            path = Path(qrels) if len(pieces) == 1 else _named(Path(qrels), tag)
            files.append(("qrels", path, qrels_text(piece)))
            graded = qrels_text(piece, graded=True)
            files.append(("graded qrels", _named(path, "graded"), graded))
        for kind, path, text in files:
            atomic_write_text(path, text)
            written.append(f"TREC {kind}: {path}")
    return written
