"""Is a user's retriever noisy? Ask again (docs/baselines.md, "Repeats").

A whole retriever scored with ``score()`` may call a remote service, sample, or
search an approximate index of its own: nothing outside it can say whether its
answers repeat. So every question is asked twice (:func:`ask`); if any answer
differs, the retriever is noisy and the questions (a fixed sample of at most
200, engine/repeats.py) are asked until each has ``r`` answers, whose scores'
mean is the question's value. Nothing caches its answers.

Noise that shows only between processes (an index built once per process, a
hash seed) cannot be seen by asking one object again: with ``factory=True`` the
retriever given is a function that builds a fresh one for every ask; with
``noisy=True`` the user declares it noisy and it is repeated without the test.

A result keeps a :class:`Probe` for the gate: :meth:`Probe.repeated` measures a
retriever the baseline found noisy although this run did not, and
:meth:`Probe.confirm` asks a seemingly deterministic retriever's changed
questions again before it is reported ``regressed``.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.engine.locating import LocatedResults, locate_results
from pytest_chunkeval.engine.repeats import retriever_repeats, sample

if TYPE_CHECKING:
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.engine.results import EvalResult


class Asker:
    """Asks a retriever (``factory``: a fresh one per ask) some or all of
    ``queries``, locating its answers as :func:`locate_results` does; counts
    the questions asked (``requests``)."""

    def __init__(
        self,
        retriever: Any,
        corpus: Corpus,
        queries: QuerySet,
        *,
        k: int | None = None,
        locate: str = "exact",
        copies: str = "any",
        factory: bool = False,
    ) -> None:
        if factory and not callable(retriever):
            raise TypeError(
                "score(factory=True) takes a function that builds a retriever, got "
                f"{type(retriever).__name__}"
            )
        self.retriever = retriever
        self.corpus = corpus
        self.queries = queries
        self.k = k
        self.locate = locate
        self.copies = copies
        self.factory = factory
        self.requests = 0

    @property
    def fixed(self) -> bool:
        """A mapping of results answers the same every time."""
        return not self.factory and isinstance(self.retriever, Mapping)

    def ask(self, positions: Sequence[int] | None = None) -> LocatedResults:
        """The answers to the questions at ``positions`` (all when None)."""
        from pytest_chunkeval.data.queries import QuerySet

        queries = self.queries
        if positions is not None:
            queries = QuerySet([queries[i] for i in positions])
        retriever = self.retriever() if self.factory else self.retriever
        self.requests += len(queries)
        return locate_results(
            retriever,
            self.corpus,
            queries,
            k=self.k,
            locate=self.locate,
            copies=self.copies,
        )


@dataclass(frozen=True)
class Answers:
    """Every answer a retriever gave: ``asks[0]`` for every question, then each
    repeat (at the positions not ``sampled``, the first answer again)."""

    asks: tuple[LocatedResults, ...]
    sampled: tuple[int, ...] = ()
    """The positions repeated; empty: each question asked once."""
    noisy: bool = False
    """Answers differed between asks (or the retriever was declared noisy)."""
    repeats: int = 1
    requests: int = 0
    """Questions asked beyond the first ask of each."""

    @property
    def first(self) -> LocatedResults:
        return self.asks[0]

    def digest(self) -> str:
        """Equal digests, equal results (for one corpus and query set)."""
        h = hashlib.sha256(repr((self.sampled, self.noisy, self.repeats)).encode())
        for located in self.asks:
            h.update(located.digest().encode())
        return h.hexdigest()

    def noise(self) -> dict[str, Any]:
        """What the repeats found and cost (``EvalResult.noise``, without the
        parts engine/repeats.py adds)."""
        if not self.sampled:
            return {}
        return {
            "noisy": ["retriever"] if self.noisy else [],
            "repeats": self.repeats,
            "requests": self.requests,
        }


def _merged(
    first: LocatedResults, positions: Sequence[int], part: LocatedResults
) -> LocatedResults:
    """``first`` with the answers at ``positions`` replaced by ``part``'s."""
    per_query = list(first.per_query)
    pools = None if first.candidates is None else list(first.candidates)
    for j, i in enumerate(positions):
        per_query[i] = part.per_query[j]
        if pools is not None and part.candidates is not None:
            pools[i] = part.candidates[j]
    return dataclasses.replace(
        first,
        per_query=tuple(per_query),
        candidates=None if pools is None else tuple(pools),
        seconds=part.seconds,
    )


def _differ(a: LocatedResults, b: LocatedResults) -> bool:
    return a.per_query != b.per_query or a.candidates != b.candidates


def ask(asker: Asker, repeats: int | None = None, *, noisy: bool = False) -> Answers:
    """Every question asked twice; when an answer differs (or ``noisy``: declared
    so), the sample asked until each of its questions has ``r`` answers
    (``repeats``, default engine/repeats.py ``retriever_repeats``)."""
    first = asker.ask()
    if asker.fixed:
        return Answers((first,))
    before = asker.requests
    second = asker.ask()
    if not (noisy or _differ(first, second)):
        # both asks kept: a later repeat (engine/reask.py Probe) continues them
        return Answers((first, second), requests=asker.requests - before)
    return repeat(asker, (first, second), repeats, before=before, noisy=noisy)


def repeat(
    asker: Asker,
    asks: Sequence[LocatedResults],
    repeats: int | None = None,
    *,
    before: int,
    noisy: bool = False,
) -> Answers:
    """``asks`` (the first of every question, then any repeat already made)
    continued until the sample has ``r`` answers each."""
    r = retriever_repeats(len(asker.queries), repeats)
    positions = sample([q.id for q in asker.queries])
    made = list(asks)
    while len(made) < r:
        made.append(_merged(made[0], positions, asker.ask(positions)))
    found = noisy or any(_differ(made[0], other) for other in made[1:])
    return Answers(
        tuple(made[:r]) if r > 1 else tuple(made[:1]),
        tuple(positions) if r > 1 else (),
        found,
        r,
        asker.requests - before,
    )


class Probe:
    """What the gate asks of a result's retriever (docs/baselines.md,
    "Repeats"): ``rescore`` turns :class:`Answers` into a result as the
    evaluation did."""

    def __init__(
        self,
        asker: Asker,
        answers: Answers,
        rescore: Callable[[Answers], EvalResult],
        repeats: int | None = None,
    ) -> None:
        self.asker = asker
        self.answers = answers
        self.rescore = rescore
        self.repeats = repeats
        self._start = asker.requests - answers.requests
        """Questions asked when the first ask ended."""
        self._repeated: EvalResult | None = None
        self._confirmed: dict[str, bool] = {}

    def repeated(self) -> EvalResult:
        """The result with repeats (the same sample as any run's): the
        evaluation's own when it made them, else the retriever asked again."""
        if self._repeated is None:
            answers = self.answers
            if not answers.sampled and not self.asker.fixed:
                # the cost: every ask beyond the first, confirmations included
                answers = repeat(
                    self.asker, answers.asks, self.repeats, before=self._start
                )
            self._repeated = self.rescore(answers)
            self._repeated.probe = self
        return self._repeated

    def repeated_like(self, result: EvalResult) -> EvalResult:
        """:meth:`repeated`, restricted to ``result``'s question when it is a
        per-question item's share (``EvalResult.only``)."""
        full = self.repeated()
        if len(result.queries) == 1 and len(full.queries) > 1:
            return full.only(result.queries[0].id)
        return full

    def confirm(self, ids: Sequence[str]) -> bool:
        """Ask the questions ``ids`` ``r`` more times: whether any answer differs
        from the first (then the retriever is noisy)."""
        return bool(self.unstable(ids))

    def unstable(self, ids: Sequence[str]) -> dict[str, str]:
        """Question id -> ``"unstable"`` for each of ``ids`` whose answer
        differed when asked ``r`` more times; a mapping of fixed results never
        does."""
        if self.asker.fixed:
            return {}
        index = {q.id: i for i, q in enumerate(self.asker.queries)}
        todo = [i for i in ids if i in index and i not in self._confirmed]
        if todo:
            positions = [index[i] for i in todo]
            first = self.answers.first
            r = retriever_repeats(len(self.asker.queries), self.repeats)
            for _ in range(r):
                part = self.asker.ask(positions)
                for j, qid in enumerate(todo):
                    i = positions[j]
                    same = part.per_query[j] == first.per_query[i] and (
                        part.candidates is None
                        or first.candidates is None
                        or part.candidates[j] == first.candidates[i]
                    )
                    self._confirmed[qid] = self._confirmed.get(qid, False) or not same
        return {i: "unstable" for i in ids if self._confirmed.get(i)}
