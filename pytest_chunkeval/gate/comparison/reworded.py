"""Questions reworded under a new id, paired with the one a baseline recorded
(docs/baselines.md, "The question set is part of the baseline").

A reference CSV set (``questions_df.csv``) has no ids: each question's id is a
hash of its text, so rewording a question gives it a new id, and a comparison by
id used to count it as one question removed and one added, never compared (8 of
40 regressed questions reworded passed ``ok``). A baseline records each
question's ``answer``, the hash of its document and excerpt texts
(gate/files/questions.py): a baseline question no longer in the set whose answer is
that of exactly one new question, and of no other baseline question no longer in
the set, is the same question reworded. :func:`paired` gives the baseline under
the new ids, so the gate compares it; its record keeps ``reworded_from`` (its
old id), which the changes name. Any query-set format is paired alike.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.gate.files.questions import result_hashes

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.files.baseline import Baseline

REWORDED_KEY = "reworded_from"
"""The key of a paired question's record naming the id the baseline has."""


def reworded_pairs(baseline: Baseline, result: EvalResult) -> dict[str, str]:
    """Old id -> new id of the questions reworded under a new id, paired by
    their answers (each answer unique on both sides)."""
    current = {q.id for q in result.queries} | {u.id for u in result.unplaced}
    gone = {
        qid: answer
        for qid in baseline.queries
        if qid not in current
        and isinstance(answer := baseline.questions.get(qid, {}).get("answer"), str)
    }
    if not gone:
        return {}
    new = {
        qid: answer
        for qid, answer in result_hashes(result, answers=True).items()
        if qid not in baseline.queries
    }
    seen_gone, seen_new = Counter(gone.values()), Counter(new.values())
    by_answer = {a: qid for qid, a in new.items() if seen_new[a] == 1}
    return {
        old: by_answer[a]
        for old, a in gone.items()
        if seen_gone[a] == 1 and a in by_answer
    }


def paired(baseline: Baseline, result: EvalResult) -> Baseline:
    """``baseline`` with each reworded question under its new id (its content
    hash dropped: the rewording is what changed, not an edit to leave out)."""
    pairs = reworded_pairs(baseline, result)
    if not pairs:
        return baseline
    queries = dict(baseline.queries)
    questions: dict[str, Mapping[str, Any]] = dict(baseline.questions)
    for old, new in pairs.items():
        queries[new] = queries.pop(old)
        record = {k: v for k, v in questions.pop(old, {}).items() if k != "hash"}
        questions[new] = {**record, REWORDED_KEY: old}
    return replace(baseline, queries=queries, questions=questions)


def reworded_of(baseline: Baseline) -> tuple[tuple[str, str], ...]:
    """(old id, new id) of the questions :func:`paired` renamed, by old id."""
    return tuple(
        sorted(
            (str(record[REWORDED_KEY]), qid)
            for qid, record in baseline.questions.items()
            if REWORDED_KEY in record
        )
    )
