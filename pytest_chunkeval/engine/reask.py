"""Is a user's retriever noisy? Ask again (docs/baselines.md, "Noise is
measured, not assumed").

A whole retriever scored with ``score()`` may call a remote service, sample, or
search an approximate index of its own: nothing outside it can say whether its
answers repeat. So the questions whose values changed since the baseline are
asked again, :data:`TRIES` times each, straight to the retriever (this package
caches none of its answers), and a question whose answer differs between tries
is noisy. A retriever that is deterministic on one machine and drifts across
machines cannot be told this way: record such baselines where CI runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.engine.results import EvalResult

TRIES = 3
"""Times a changed question is asked again."""


class Reasker:
    """Asks a retriever's changed questions again (:meth:`unstable`); the first
    answers are those ``result`` (its score) holds; ``queries`` holds its
    questions (placed in its corpus)."""

    def __init__(
        self,
        retriever: Any,
        result: EvalResult,
        queries: QuerySet,
        *,
        k: int | None,
        locate: str,
        copies: str = "any",
        tries: int = TRIES,
    ) -> None:
        self.retriever = retriever
        self.corpus = result.corpus
        self.queries = {q.id: q for q in queries}
        self.first = {r.id: tuple(r.retrieved) for r in result.queries}
        self.k = k
        self.locate = locate
        self.copies = copies
        self.tries = tries
        self._verdicts: dict[str, bool] = {}
        self.asked = 0
        """Questions asked again so far (each :data:`TRIES` times at most)."""

    def unstable(self, ids: Sequence[str]) -> dict[str, str]:
        """Question id -> ``"unstable"`` for each of ``ids`` whose answer
        differed between tries; a mapping of fixed results never does."""
        if isinstance(self.retriever, Mapping):
            return {}
        out = {}
        for qid in ids:
            if qid not in self.first or qid not in self.queries:
                continue
            if qid not in self._verdicts:
                self._verdicts[qid] = self._differs(qid)
            if self._verdicts[qid]:
                out[qid] = "unstable"
        return out

    def _differs(self, qid: str) -> bool:
        from pytest_chunkeval.data.queries import QuerySet
        from pytest_chunkeval.engine.score import locate_results

        if self.corpus is None:
            return False
        one = QuerySet([self.queries[qid]])
        self.asked += 1
        for _ in range(self.tries):
            again = locate_results(
                self.retriever,
                self.corpus,
                one,
                k=self.k,
                locate=self.locate,
                copies=self.copies,
            )
            if again.per_query[0] != self.first[qid]:
                return True
        return False


def reasker(retriever: Any, result: EvalResult, queries: QuerySet, run: Any) -> Reasker:
    """A :class:`Reasker` scoring as ``run`` does (a session's run configuration:
    its ``score_k``, ``locate`` and ``copies``)."""
    return Reasker(
        retriever, result, queries, k=run.score_k, locate=run.locate, copies=run.copies
    )
