"""Calibrating a judge against ground truth, on the user's own corpus.

On questions that have excerpts, every sentence of every retrieved chunk (the
sentences :mod:`~pytest_chunkeval.judging.relevance` counts) gets two labels: the
judge's (it overlaps a judged span) and the ground truth's (it shares a character
with an excerpt, at the copy of its text the metrics scored: docs/concepts.md).
Over all those sentences: the judge's precision and recall against the ground
truth, and Cohen's kappa (agreement beyond chance,
``(p_o - p_e) / (1 - p_e)``). Per question, ``context_relevance`` is correlated
(Pearson) with its ground-truth counterpart: the same ratio with the excerpts in
place of the judged spans. Disagreements are listed for review.

This is not the 0.70 of the RAGAS paper: there, humans chose the better of two
contexts and the figure is the judge's agreement with those pairwise
preferences. Here each sentence is compared with the excerpts. See
``docs/judged.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pytest_chunkeval.chunkers.sentence import sentence_spans
from pytest_chunkeval.core.absent import present
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet

RAGAS_NOTE = (
    "not comparable with the RAGAS paper's 0.70 for context relevance: that is the "
    "judge's agreement with human pairwise preferences between two contexts, not "
    "sentence-level agreement with ground-truth excerpts"
)

Spans = Sequence[Sequence[Any]]  # (doc_id, start, end) triples


@dataclass(frozen=True)
class Disagreement:
    """A sentence the judge and the ground truth label differently."""

    id: str
    question: str
    sentence: str
    judge: bool  # True: the judge found it relevant (and no excerpt touches it)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "sentence": self.sentence,
            "judged_relevant": self.judge,
        }


@dataclass(frozen=True)
class Calibration:
    """A judge measured against the excerpts (see the module docstring)."""

    judge: str
    configuration: str
    questions: int
    unusable: int
    counts: dict[str, int]  # tp, fp, fn, tn over sentences
    precision: float
    recall: float
    kappa: float
    correlation: float
    disagreements: tuple[Disagreement, ...] = field(default=(), repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "configuration": self.configuration,
            "questions": self.questions,
            "unusable": self.unusable,
            "sentences": dict(self.counts),
            "precision": present(self.precision),
            "recall": present(self.recall),
            "kappa": present(self.kappa),
            "correlation": present(self.correlation),
            "note": RAGAS_NOTE,
            "disagreements": [d.to_json() for d in self.disagreements],
        }


def cohen_kappa(a: Sequence[bool], b: Sequence[bool]) -> float:
    """Cohen's kappa of two binary labelings (NaN when chance agreement is 1)."""
    x, y = np.asarray(a, bool), np.asarray(b, bool)
    n = x.size
    if n == 0:
        return math.nan
    observed = float(np.mean(x == y))
    px, py = float(x.mean()), float(y.mean())
    expected = px * py + (1 - px) * (1 - py)
    return math.nan if expected == 1 else (observed - expected) / (1 - expected)


def _overlaps(spans: Spans, doc: str, start: int, end: int) -> bool:
    return any(d == doc and s < end and start < e for d, s, e in spans)


def sentence_labels(
    retrieved: Spans, judged: Spans, truth: Spans, texts: dict[str, str]
) -> list[tuple[str, bool, bool]]:
    """``(sentence text, judge label, ground-truth label)`` for each sentence of
    each retrieved chunk, in rank order."""
    out = []
    for doc, start, end in retrieved:
        chunk = texts[doc][start:end]
        for a, b in sentence_spans(chunk).tolist():
            s, e = start + a, start + b
            out.append(
                (chunk[a:b], _overlaps(judged, doc, s, e), _overlaps(truth, doc, s, e))
            )
    return out


def calibrate(
    result: Any, texts: dict[str, str], *, judge: str = "", show: int | None = None
) -> Calibration:
    """The calibration of a judged :class:`EvalResult` (``evaluate(..., judge=)``):
    its records' retrieved spans, judged spans and excerpts. ``show``: how many
    disagreements to keep (None: all)."""
    judge_labels: list[bool] = []
    truth_labels: list[bool] = []
    judged_cr: list[float] = []
    truth_cr: list[float] = []
    disagreements: list[Disagreement] = []
    questions = unusable = 0
    for record in result.queries:
        if not record.excerpts:
            continue
        cr = record.scores.get("context_relevance")
        if cr is None:
            unusable += 1
            continue
        questions += 1
        # the ground truth is what the metrics scored: the copy of each
        # excerpt's text the retriever reached (docs/concepts.md), not only the
        # stored span
        truth = record.scored_excerpts
        labels = sentence_labels(
            record.retrieved, record.details.get("judged", []), truth, texts
        )
        for sentence, by_judge, by_truth in labels:
            judge_labels.append(by_judge)
            truth_labels.append(by_truth)
            if by_judge != by_truth:
                disagreements.append(
                    Disagreement(record.id, record.question, sentence, by_judge)
                )
        if labels:
            judged_cr.append(float(cr))
            truth_cr.append(sum(t for _, _, t in labels) / len(labels))
    j, t = np.asarray(judge_labels, bool), np.asarray(truth_labels, bool)
    tp, fp = int((j & t).sum()), int((j & ~t).sum())
    fn, tn = int((~j & t).sum()), int((~j & ~t).sum())
    config = result.config
    return Calibration(
        judge=judge or str(config.get("judge", "")),
        configuration=f"{config.get('chunker')} k={config.get('k')}",
        questions=questions,
        unusable=unusable,
        counts={"tp": tp, "fp": fp, "fn": fn, "tn": tn},
        precision=tp / (tp + fp) if tp + fp else math.nan,
        recall=tp / (tp + fn) if tp + fn else math.nan,
        kappa=cohen_kappa(judge_labels, truth_labels),
        correlation=pearson(judged_cr, truth_cr),
        disagreements=tuple(disagreements if show is None else disagreements[:show]),
    )


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's r (NaN with fewer than two points or a constant side)."""
    a, b = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if a.size < 2 or a.std() == 0 or b.std() == 0:
        return math.nan
    return float(np.corrcoef(a, b)[0, 1])


def calibrate_judge(
    judge: Any,
    corpus: Corpus,
    queries: QuerySet,
    *,
    chunker: Any = "recursive:200:0",
    show: int | None = None,
    **evaluate_options: Any,
) -> Calibration:
    """Evaluate ``chunker`` on the questions of ``queries`` that have excerpts,
    judging each retrieved context with ``judge`` (a spec, a judge or a
    :class:`~pytest_chunkeval.judging.run.Judging`; judgments are cached as in
    any judged run), and measure the judge against the excerpts.
    ``evaluate_options``: ``embedder``, ``store``, ``k``, ``unit``, ``cache``..."""
    from pytest_chunkeval.engine.evaluate import evaluate
    from pytest_chunkeval.errors import DataError

    asked = QuerySet(
        [q for q in queries if q.excerpts], queries.metadata, source=queries.source
    )
    if not len(asked):
        raise DataError(
            f"{queries.source or 'the query set'}: no question has excerpts; "
            "calibrating a judge needs ground truth"
        )
    result = evaluate(chunker, corpus, asked, judge=judge, **evaluate_options)
    texts = {d.id: d.text for d in corpus}
    return calibrate(result, texts, show=show)


def format_calibration(c: Calibration, *, show: int = 10) -> str:
    """The figures, the note on RAGAS' 0.70, and the first disagreements."""

    def f(x: float) -> str:
        return "n/a" if math.isnan(x) else f"{x:.3f}"

    n = c.counts
    lines = [
        f"judge {c.judge} against the excerpts, {c.configuration}: {c.questions} "
        f"questions ({c.unusable} with an unusable judgment left out), "
        f"{sum(n.values())} sentences",
        f"  sentence precision {f(c.precision)}, recall {f(c.recall)}, "
        f"Cohen's kappa {f(c.kappa)} (tp {n['tp']}, fp {n['fp']}, fn {n['fn']}, "
        f"tn {n['tn']})",
        f"  correlation of context_relevance with its ground-truth counterpart: "
        f"{f(c.correlation)} (Pearson, over questions)",
        f"  {RAGAS_NOTE}",
    ]
    if c.disagreements:
        lines.append(f"  disagreements ({n['fp'] + n['fn']}; first {show}):")
        from pytest_chunkeval.core.locate import preview

        for d in c.disagreements[:show]:
            which = "judge only" if d.judge else "excerpt only"
            lines.append(f"    [{which}] {d.id}: {preview(d.sentence, 70)}")
    return "\n".join(lines)
