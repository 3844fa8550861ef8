"""Judging many (question, context) pairs, each at most once.

Look-up order for each pair: the committed judgments file (if any), the shared
answer cache (role ``judge``), then the judge itself, through
:func:`pytest_chunkeval.llm.batch.run_batch` (concurrency, progress, retries,
resumable: each judgment is cached as it arrives). New judgments are recorded in
the committed file when ``record`` is set (the caller saves it). A judge without
a cache identity (a function without a version) is judged every time: neither
the cache nor the committed file is read or written for it (an entry recorded by
an earlier body of the function would be reused; docs/judged.md).
"""

from __future__ import annotations

import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from pytest_chunkeval.judging.judge import Judge, Judgment, LLMJudge
from pytest_chunkeval.judging.relevance import SPLITTER
from pytest_chunkeval.judging.store import JudgmentFile
from pytest_chunkeval.llm.answers import (
    AnswerCache,
    AnswerCacheWarning,
    AnswerKey,
    hash_input,
)
from pytest_chunkeval.llm.batch import BatchStats, CostPlan, plan_batch, run_batch

ROLE = "judge"


@dataclass
class JudgeStats:
    """What judging did, cumulative over calls of :meth:`Judging.judge`."""

    contexts: int = 0
    committed: int = 0
    cached: int = 0
    judged: int = 0
    calls: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    dropped_sentences: int = 0
    insufficient: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    unversioned: int = 0
    """Contexts judged by a judge without a version: nothing cached or
    committed (said once, in :meth:`summary`)."""

    def summary(self) -> str:
        """One line: where the judgments came from, and what was unusable."""
        text = (
            f"{self.contexts} contexts: {self.committed} committed, "
            f"{self.cached} cached, {self.judged} new"
        )
        extra = []
        rejected = sum(self.rejected.values())
        if rejected:
            reasons = ", ".join(f"{n} {r}" for r, n in sorted(self.rejected.items()))
            extra.append(f"{rejected} unusable answers ({reasons}), not scored")
        if self.dropped_sentences:
            extra.append(f"{self.dropped_sentences} non-verbatim sentences dropped")
        if self.insufficient:
            extra.append(f"{self.insufficient} with nothing relevant")
        if self.unversioned:
            extra.append(
                "judged every time: a judge without a version has no judgment "
                "cached or committed (docs/judged.md)"
            )
        return text + (f"; {'; '.join(extra)}" if extra else "")


class Judging:
    """A judge with its memory (see the module docstring)."""

    def __init__(
        self,
        judge: Judge,
        *,
        cache: AnswerCache | None = None,
        committed: JudgmentFile | None = None,
        record: bool = False,
        concurrency: int | None = None,
        progress: bool | None = None,
        price: tuple[float, float] | None = None,
    ) -> None:
        self.judge = judge
        self.price = price
        """USD per 1000 prompt and completion tokens for :meth:`plan` (None: the
        model's built-in price, if known)."""
        # a judge without a cache identity (a function without a version) is
        # judged every time, the committed file neither read nor recorded in: its
        # identity cannot tell an edited body from the one that recorded an entry
        # (docs/judged.md)
        self.versioned = getattr(judge, "cache_identity", judge.identity) is not None
        self.cache = cache if self.versioned else None
        self.committed = committed if self.versioned else None
        self.record = record
        self.concurrency = concurrency or (4 if isinstance(judge, LLMJudge) else 1)
        self.progress = progress
        self.stats = JudgeStats()

    @property
    def prompt_version(self) -> str:
        return f"{self.judge.prompt_version}+{SPLITTER}"

    def key(self, question: str, context: str) -> AnswerKey:
        """The cache key of one judgment."""
        return AnswerKey(
            ROLE,
            self.judge.identity,
            self.prompt_version,
            hash_input({"question": question, "context": context}),
        )

    def plan(self, items: Sequence[tuple[str, str]]) -> CostPlan | None:
        """What judging ``items`` would cost (None for a callable judge)."""
        if not isinstance(self.judge, LLMJudge):
            return None
        from pytest_chunkeval.judging.judge import build_messages

        todo = [
            (q, c)
            for q, c in dict.fromkeys(items)
            if self.committed is None or self.committed.get(self.key(q, c), c) is None
        ]
        return plan_batch(
            [build_messages(q, c) for q, c in todo],
            self.judge.model,
            keys=[self.key(q, c) for q, c in todo],
            cache=self.cache,
            completion_tokens=120,
            price=self.price,
        )

    def judge_all(self, items: Sequence[tuple[str, str]]) -> list[Judgment | None]:
        """A judgment per ``(question, context)``; None where the judge's answer was
        unusable (counted in :attr:`stats`)."""
        unique = list(dict.fromkeys(items))
        found: dict[tuple[str, str], Judgment | None] = {}
        todo: list[tuple[str, str]] = []
        for q, c in unique:
            key = self.key(q, c)
            judgment = (
                self.committed.get(key, c) if self.committed is not None else None
            )
            if judgment is None:
                todo.append((q, c))
                continue
            found[(q, c)] = judgment
            assert self.committed is not None
            if key.digest() in self.committed.recorded:
                self.stats.cached += 1  # judged earlier in this session
            else:
                self.stats.committed += 1
        if todo:
            batch = BatchStats()
            judge = self.judge
            result = run_batch(
                todo,
                key=lambda item: self.key(*item),
                compute=lambda item: judge.compute(*item),
                cache=self.cache,
                concurrency=self.concurrency,
                progress=self.progress,
                desc="judged",
                stats=batch,
            )
            self.stats.cached += batch.cached
            self.stats.judged += batch.answered
            self.stats.calls += len(todo) - batch.cached
            self.stats.rejected.update(batch.rejected)
            self.stats.prompt_tokens += batch.prompt_tokens
            self.stats.completion_tokens += batch.completion_tokens
            for item, value in zip(todo, result.values, strict=True):
                found[item] = self._judgment(item, value)
        self.stats.contexts += len(unique)
        if not self.versioned:
            self.stats.unversioned += len(unique)
        for item in unique:
            judgment = found.get(item)
            if judgment is None:
                continue
            self.stats.dropped_sentences += judgment.dropped
            self.stats.insufficient += judgment.insufficient
            if self.record and self.committed is not None:
                self.committed.record(self.key(*item), item[0], item[1], judgment)
        return [found.get(item) for item in items]

    def _judgment(self, item: tuple[str, str], value: object) -> Judgment | None:
        if value is None:
            return None
        try:
            return Judgment.from_json(value, item[1])
        except ValueError as exc:
            # A verified entry of this exact key that does not fit its context
            # cannot happen short of a hash collision; never use it.
            warnings.warn(
                f"cached judgment for {item[0]!r} does not fit its context ({exc}); "
                "ignored",
                AnswerCacheWarning,
                stacklevel=2,
            )
            return None
