"""Judged spans as ground truth: the union over configurations becomes excerpts."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_chunkeval.core.metrics import JUDGED_METRICS
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.judging.judge import Judgment, merge_spans
from pytest_chunkeval.judging.run import Judging

GENERATOR = "chunkeval judge"


@dataclass
class Promoted:
    """The written query set and what it took."""

    query_set: QuerySet
    nothing_relevant: list[tuple[str, str]]
    """Questions judged in some configuration, with nothing relevant in any."""
    judging: Judging
    configurations: list[str]
    unjudged: list[tuple[str, str]] = field(default_factory=list)
    """Questions no configuration could judge: every answer was unusable."""

    def summary(self, out: str | os.PathLike[str]) -> str:
        s = self.judging.stats
        unjudged = f", {len(self.unjudged)} unusable answers" if self.unjudged else ""
        return (
            f"{len(self.query_set)} questions with judged excerpts in "
            f"{os.fspath(out)} ({len(self.nothing_relevant)} left out: nothing "
            f"relevant{unjudged}); {len(self.configurations)} configuration(s); "
            f"{s.summary()}"
        )

    def why_empty(self) -> str:
        """Why no question has judged excerpts (for an empty query set)."""
        if self.unjudged and not self.nothing_relevant:
            rejected = self.judging.stats.rejected
            reasons = ", ".join(f"{n} {r}" for r, n in sorted(rejected.items()))
            return (
                f"nothing could be judged: the judge {self.judging.judge.identity} "
                f"gave no usable answer for any of the {len(self.unjudged)} "
                f"question(s)" + (f" ({reasons})" if reasons else "")
            )
        dropped = self.judging.stats.dropped_sentences
        quoted = (
            f" ({dropped} sentence(s) the judge returned are not in their context "
            "and were dropped: a judge quotes the context verbatim)"
            if dropped
            else ""
        )
        return (
            f"no question has judged excerpts: {len(self.nothing_relevant)} with "
            f"nothing relevant retrieved{quoted}, {len(self.unjudged)} with unusable "
            "answers"
        )


def promote(
    corpus: Corpus,
    queries: QuerySet,
    chunkers: Sequence[str],
    judging: Judging,
    *,
    dry_run: bool = False,
    echo: Callable[[str], None] = lambda message: None,
    **evaluate_options: Any,
) -> Promoted | None:
    """Judge every question's context under each chunker and unite the judged
    spans (see :mod:`pytest_chunkeval.cli.judge`). With ``dry_run``, print what
    would be sent (the contexts are built, nothing is judged) and return None."""
    from pytest_chunkeval.engine.evaluate import evaluate

    if dry_run:
        recorder = _Recorder(judging)
        for chunker in chunkers:
            evaluate(chunker, corpus, queries, judge=recorder, **evaluate_options)
        items = recorder.items
        plan = judging.plan(items)
        echo(
            f"dry run: {len(set(items))} contexts to judge; "
            + (str(plan) if plan is not None else "a callable judge costs nothing")
        )
        return None
    judged: dict[str, list[tuple[str, int, int]]] = {q.id: [] for q in queries}
    usable: set[str] = set()  # questions with a usable judgment somewhere
    labels: list[str] = []
    for chunker in chunkers:
        result = evaluate(chunker, corpus, queries, judge=judging, **evaluate_options)
        labels.append(result.describe())
        for record in result.queries:
            if any(record.scores.get(m) is not None for m in JUDGED_METRICS):
                usable.add(record.id)  # judged (an unusable answer scores None)
            judged[record.id].extend(
                (d, int(s), int(e)) for d, s, e in record.details.get("judged", ())
            )
    out: list[Query] = []
    nothing: list[tuple[str, str]] = []
    unjudged: list[tuple[str, str]] = []
    for q in queries:
        spans = judged[q.id]
        if not spans:
            (nothing if q.id in usable else unjudged).append((q.id, q.text))
            continue
        by_doc: dict[str, list[tuple[int, int]]] = {}
        for d, s, e in spans:
            by_doc.setdefault(d, []).append((s, e))
        excerpts = tuple(
            Excerpt(corpus[d].text[s:e], d, s, e)
            for d in sorted(by_doc)
            for s, e in merge_spans(by_doc[d])
        )
        doc_id = q.doc_id or excerpts[0].doc_id
        metadata = {**q.metadata, "judged_by": judging.judge.identity}
        out.append(Query(q.id, q.text, excerpts, doc_id, metadata))
    metadata = {
        "generator": GENERATOR,
        "judge": judging.judge.identity,
        "prompt_version": judging.prompt_version,
        "configurations": labels,
        "corpus_hash": corpus.content_hash,
        "nothing_relevant": [qid for qid, _ in nothing],
        "unjudged": [qid for qid, _ in unjudged],
    }
    return Promoted(QuerySet(out, metadata), nothing, judging, labels, unjudged)


class _Recorder(Judging):
    """Collects the contexts an evaluation would have judged; judges none."""

    def __init__(self, judging: Judging) -> None:
        super().__init__(judging.judge)
        self.items: list[tuple[str, str]] = []

    def judge_all(self, items: Sequence[tuple[str, str]]) -> list[Judgment | None]:
        self.items.extend(items)
        return [None] * len(items)
