"""What a baseline records of each question besides its metric values
(schema 3, docs/baselines.md "What is in one"): a content hash, so that a
question edited under the same id is told from the one recorded, the noise
evidence of its run (:data:`EVIDENCE_KEYS`), its tags if it has any (``tags``,
docs/baselines.md "Documents and tags"; absent: none), and where its run repeated it (a
noisy component, gate/comparison/noise.py) the variance of each metric's repeats
(``var``, denominator ``r - 1``) and ``r``; absent: asked once, variance 0.

The hash covers the question's text, its document and its excerpts' texts with
whitespace runs folded to one space, never their offsets: an edit above an
excerpt moves its offsets and changes nothing here, and an excerpt located again
up to whitespace (the document's own characters) hashes the same.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.gate.files.recording import rounded_variance

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult


def content_hash(question: str, doc_id: str, excerpts: Iterable[str]) -> str:
    """The first 12 hex digits of the SHA-256 of the question, its document and
    its excerpt texts (whitespace folded)."""
    blob = json.dumps(
        [question, doc_id, [" ".join(t.split()) for t in excerpts]],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def result_hashes(result: EvalResult, answers: bool = False) -> dict[str, str]:
    """Question id -> content hash of every question ``result`` scored; empty
    when it carries no corpus (read back from JSON), which holds the excerpt
    texts. ``answers``: the hash of its document and excerpts only, without
    its text (what pairs a reworded question with the one recorded:
    gate/comparison/reworded.py), for the questions that have excerpts."""
    if result.corpus is None:
        return {}
    out = {}
    for record in result.queries:
        try:
            texts = [result.text(span) for span in record.excerpts]
        except (KeyError, ValueError):  # a span of a document this corpus lacks
            return {}
        if not answers:
            out[record.id] = content_hash(record.question, record.doc_id, texts)
        elif texts:
            out[record.id] = content_hash("", record.doc_id, texts)
    return out


EVIDENCE_KEYS = ("found", "exact", "margin", "order", "top", "k", "eps", "ordered")
"""The noise evidence a baseline keeps per question (engine/evidence.py)."""


def question_records(result: EvalResult) -> dict[str, dict[str, Any]]:
    """What a baseline keeps per question of ``result`` besides its values: its
    content hash, its answer's (``answer``: its document and excerpts), and
    the noise evidence the run measured."""
    hashes = result_hashes(result)
    answers = result_hashes(result, answers=True)
    out: dict[str, dict[str, Any]] = {}
    for record in result.queries:
        kept = {k: record.evidence[k] for k in EVIDENCE_KEYS if k in record.evidence}
        if "order" in kept and kept["order"] == kept.get("margin"):
            del kept["order"]  # the usual case: no closer gap inside the top k
        if record.id in hashes:
            kept["hash"] = hashes[record.id]
        kept.update(repeat_record(record.repeats))
        if record.id in answers:
            kept["answer"] = answers[record.id]
        if record.tags:  # optional: a baseline without them reads as untagged
            kept["tags"] = list(record.tags)
        if kept:
            out[record.id] = kept
    return out


def repeat_record(repeats: Mapping[str, Any]) -> dict[str, Any]:
    """A question's ``var`` (metric -> sample variance) and ``r`` from its
    repeats (metric -> (mean, variance, r)); empty when asked once."""
    cells = {
        str(m): (float(v), int(r))
        for m, (_, v, r) in repeats.items()
        if int(r) > 1 and math.isfinite(float(v))
    }
    if not cells:
        return {}
    return {
        "var": {m: rounded_variance(v) for m, (v, _) in cells.items()},
        "r": max(r for _, r in cells.values()),
    }


def valid_questions(data: Any) -> dict[str, dict[str, Any]]:
    """The ``questions`` of a baseline file, checked (``ValueError`` if
    malformed): objects whose ``hash`` is a string and whose numbers are
    finite."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ValueError(f"questions: expected an object, got {data!r}")
    out = {}
    for qid, record in data.items():
        if not isinstance(record, Mapping) or not isinstance(
            record.get("hash", ""), str
        ):
            raise ValueError(f"questions: malformed record of {qid!r}: {record!r}")
        for key, value in record.items():
            if isinstance(value, float) and not math.isfinite(value):
                raise ValueError(f"questions: {qid!r} {key} is {value!r}")
        out[str(qid)] = dict(record)
    return out
