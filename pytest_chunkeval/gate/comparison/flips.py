"""The questions that flipped between a baseline and the current run: retrieved
before and missed now, and the reverse, for the reports' "what changed" section.

A question counts as *retrieved* when some retrieved chunk holds part of its
excerpts (recall above zero: a hit at ``k``), *missed* when none does. A question
lost whose change float drift explains
(:mod:`~pytest_chunkeval.gate.comparison.drift`) is listed apart, as ``noisy``:
``lost`` holds counted changes only. The gate's verdict is the metrics'
(:mod:`~pytest_chunkeval.gate.comparison.compare`): a flipped question can
stay within tolerance, and a run can regress without any question flipping (each
one retrieved a little less).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.core.locate import clip

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult, QueryRecord
    from pytest_chunkeval.gate.files.baseline import Baseline

FLIP_METRICS = ("recall", "rel_recall")
"""What decides retrieved / missed: recall, or a relationship result's own."""
MAX_LISTED = 20
"""Flips kept per direction (the counts say how many there were)."""
TEXT_WIDTH = 160
"""Characters kept of an excerpt and of the chunk retrieved instead."""


@dataclass(frozen=True)
class Flip:
    """One question that changed sides."""

    id: str
    question: str
    doc_id: str
    before: float
    """The flip metric's value in the baseline (recall, 0-1)."""
    after: float
    excerpt: str
    """The question's excerpt text, shortened ("" without the corpus)."""
    instead: str
    """A chunk the current run retrieved, shortened ("" when none or unknown):
    its top-ranked one, or for a question gained the first that holds part of
    its excerpt (:attr:`holds`)."""
    why: str = ""
    """The kind of noise that explains the change ("" when it is real)."""
    rank: int = 1
    """The rank of :attr:`instead` in the current run (1-based)."""
    holds: bool = False
    """Whether :attr:`instead` holds part of the excerpt (a question gained);
    False for the top chunk of a question lost, and in reports of earlier
    versions, which showed the top chunk for every flip."""

    @property
    def shown(self) -> str:
        """:attr:`instead` as the reports show it: ``#1: TEXT``, ``#3, holding
        the excerpt: TEXT``; "" when there is none."""
        if not self.instead:
            return ""
        where = f"#{self.rank}, holding the excerpt" if self.holds else f"#{self.rank}"
        return f"{where}: {self.instead}"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "doc_id": self.doc_id,
            "before": self.before,
            "after": self.after,
            "excerpt": self.excerpt,
            "instead": self.instead,
            "why": self.why,
            "rank": self.rank,
            "holds": self.holds,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Flip:
        return cls(
            str(data["id"]),
            str(data["question"]),
            str(data["doc_id"]),
            float(data["before"]),
            float(data["after"]),
            str(data.get("excerpt", "")),
            str(data.get("instead", "")),
            str(data.get("why", "")),
            int(data.get("rank", 1)),
            bool(data.get("holds", False)),
        )


@dataclass(frozen=True)
class Flips:
    """The flips of one comparison: ``lost`` (retrieved before, missed now, a
    real change), ``noisy`` (the same, explained by noise) and ``gained`` (the
    reverse), at most :data:`MAX_LISTED` each, in query order."""

    metric: str
    compared: int
    """Questions both runs scored."""
    lost: tuple[Flip, ...] = ()
    gained: tuple[Flip, ...] = ()
    lost_count: int = 0
    gained_count: int = 0
    ids: FlipIds | None = field(default=None, compare=False)
    """Every question compared, lost and gained, by id: what lets the checks of
    one report row be counted once (a whole-set check and per-question items
    compare the same questions). None when unknown (a report read back)."""
    noisy: tuple[Flip, ...] = ()
    noisy_count: int = 0

    def __bool__(self) -> bool:
        return bool(self.lost_count or self.gained_count or self.noisy_count)

    def to_json(self, *, ids: bool = True) -> dict[str, Any]:
        """``ids``: with :attr:`ids` (what xdist workers send; a report's rows
        are merged already and leave them out)."""
        data: dict[str, Any] = {
            "metric": self.metric,
            "compared": self.compared,
            "lost": [f.to_json() for f in self.lost],
            "gained": [f.to_json() for f in self.gained],
            "noisy": [f.to_json() for f in self.noisy],
            "lost_count": self.lost_count,
            "gained_count": self.gained_count,
            "noisy_count": self.noisy_count,
        }
        if ids and self.ids is not None:
            data["ids"] = {
                "compared": list(self.ids.compared),
                "lost": list(self.ids.lost),
                "gained": list(self.ids.gained),
                "noisy": list(self.ids.noisy),
            }
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Flips:
        lost = tuple(Flip.from_json(f) for f in data.get("lost", []))
        gained = tuple(Flip.from_json(f) for f in data.get("gained", []))
        noisy = tuple(Flip.from_json(f) for f in data.get("noisy", []))
        ids = data.get("ids")
        return cls(
            str(data["metric"]),
            int(data.get("compared", 0)),
            lost,
            gained,
            int(data.get("lost_count", len(lost))),
            int(data.get("gained_count", len(gained))),
            None
            if ids is None
            else FlipIds(
                tuple(map(str, ids.get("compared", ()))),
                tuple(map(str, ids.get("lost", ()))),
                tuple(map(str, ids.get("gained", ()))),
                tuple(map(str, ids.get("noisy", ()))),
            ),
            noisy,
            int(data.get("noisy_count", len(noisy))),
        )


@dataclass(frozen=True)
class FlipIds:
    """The ids behind a :class:`Flips`' counts, in query order."""

    compared: tuple[str, ...] = ()
    lost: tuple[str, ...] = ()
    gained: tuple[str, ...] = ()
    noisy: tuple[str, ...] = ()


def flips(
    baseline: Baseline,
    result: EvalResult,
    *,
    noise: Mapping[str, str] | None = None,
    left_out: Collection[str] = (),
    limit: int = MAX_LISTED,
) -> Flips | None:
    """The questions of ``result`` that flipped against ``baseline``, on the
    questions both hold a value for; None when neither side has a flip metric.
    ``noise``: question id -> the kind of noise that explains its change (a lost
    question it explains is listed as ``noisy``); ``left_out``: questions the
    comparison left out (edited under the same id), not compared here either."""
    metric = next(
        (
            m
            for m in FLIP_METRICS
            if m in result.metrics and any(m in v for v in baseline.queries.values())
        ),
        None,
    )
    if metric is None:
        return None
    noise = noise or {}
    lost: list[Flip] = []
    gained: list[Flip] = []
    noisy: list[Flip] = []
    compared: list[str] = []
    for record in result.queries:
        if record.id in left_out:
            continue
        before = _value(baseline.queries.get(record.id, {}).get(metric))
        after = _value(record.metric(metric))
        if before is None or after is None:
            continue
        compared.append(record.id)
        if (before > 0) == (after > 0):
            continue
        why = noise.get(record.id, "")
        side = gained if before == 0 else noisy if why else lost
        side.append(_flip(record, result, before, after, why))
    return Flips(
        metric,
        len(compared),
        tuple(lost[:limit]),
        tuple(gained[:limit]),
        len(lost),
        len(gained),
        FlipIds(
            tuple(compared),
            tuple(f.id for f in lost),
            tuple(f.id for f in gained),
            tuple(f.id for f in noisy),
        ),
        tuple(noisy[:limit]),
        len(noisy),
    )


def _value(value: float | None) -> float | None:
    if value is None or math.isnan(value):
        return None
    return float(value)


def _flip(
    record: QueryRecord, result: EvalResult, before: float, after: float, why: str
) -> Flip:
    # a question gained: the chunk that now holds its excerpt, not the top one
    # (which can be unrelated, and read as if the question were still missed)
    rank = record.first_relevant_rank if before == 0 and after > 0 else 0
    return Flip(
        record.id,
        record.question,
        record.doc_id,
        before,
        after,
        _texts(result, record.excerpts),
        _texts(result, record.retrieved[max(rank, 1) - 1 : max(rank, 1)]),
        why,
        max(rank, 1),
        rank > 0,
    )


def _texts(result: EvalResult, spans: Sequence[tuple[str, int, int]]) -> str:
    """The spans' text on one line, shortened; "" without the corpus."""
    if result.corpus is None or not spans:
        return ""
    try:
        parts = [result.text(span) for span in spans]
    except (KeyError, ValueError):  # a span of a document this corpus lacks
        return ""
    return clip(" … ".join(parts), TEXT_WIDTH)


def merged(parts: Sequence[Flips]) -> Flips | None:
    """The flips of one report row checked by several comparisons (a whole-set
    check and the items of a per-question test, one question each): every
    question counted once, whichever checks compared it, so the counts are
    the query set's (:func:`_union`); the listed flips joined (a question listed
    twice kept once) up to :data:`MAX_LISTED` per direction. None when there
    are none."""
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    if all(p.ids is not None for p in parts):
        return _union(parts)

    def join(lists: Sequence[tuple[Flip, ...]]) -> tuple[tuple[Flip, ...], int]:
        seen: dict[str, Flip] = {}
        repeated = 0
        for listed in lists:
            for flip in listed:
                if flip.id in seen:
                    repeated += 1
                else:
                    seen[flip.id] = flip
        return tuple(seen.values())[:MAX_LISTED], repeated

    lost, lost_repeated = join([p.lost for p in parts])
    gained, gained_repeated = join([p.gained for p in parts])
    noisy, noisy_repeated = join([p.noisy for p in parts])
    return Flips(
        parts[0].metric,
        sum(p.compared for p in parts),
        lost,
        gained,
        sum(p.lost_count for p in parts) - lost_repeated,
        sum(p.gained_count for p in parts) - gained_repeated,
        noisy=noisy,
        noisy_count=sum(p.noisy_count for p in parts) - noisy_repeated,
    )


def _union(parts: Sequence[Flips]) -> Flips:
    """:func:`merged` of parts that know their ids: a question compared by two
    checks counts once, and so does a question two checks found lost."""

    def ids(pick: str) -> tuple[str, ...]:
        return tuple(
            dict.fromkeys(i for p in parts if p.ids for i in getattr(p.ids, pick))
        )

    def listed(pick: str) -> tuple[Flip, ...]:
        seen: dict[str, Flip] = {}
        for part in parts:
            for flip in getattr(part, pick):
                seen.setdefault(flip.id, flip)
        return tuple(seen.values())[:MAX_LISTED]

    union = FlipIds(ids("compared"), ids("lost"), ids("gained"), ids("noisy"))
    return Flips(
        parts[0].metric,
        len(union.compared),
        listed("lost"),
        listed("gained"),
        len(union.lost),
        len(union.gained),
        union,
        listed("noisy"),
        len(union.noisy),
    )
