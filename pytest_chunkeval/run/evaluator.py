"""The ``chunkeval`` fixture's object (:class:`Evaluator`): what a test
evaluated, under its configuration. Its baseline comparisons and how they end
are run/comparisons.py's; the checks its marker asks for once its body passed
are run/checks.py's."""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from pytest_chunkeval.config.defaults import check_locate
from pytest_chunkeval.config.evaluation import EvaluationSpec
from pytest_chunkeval.config.options import K
from pytest_chunkeval.config.scoring import check_copies
from pytest_chunkeval.config.values import parse_budget, parse_k
from pytest_chunkeval.errors import ChunkevalError, ConfigError
from pytest_chunkeval.run import evaluations
from pytest_chunkeval.run.comparisons import BaselineComparisons
from pytest_chunkeval.run.marker import MarkerOptions

if TYPE_CHECKING:
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.outcome.outcomes import CheckOutcome
    from pytest_chunkeval.run.session import ChunkevalSession


T = TypeVar("T")


def _fail(message: str) -> NoReturn:
    raise ConfigError(message)


class Evaluator:
    """The ``chunkeval`` fixture: evaluates under the test's configuration (the
    settings with its ``@pytest.mark.chunkeval`` on top) and keeps what it
    produced, on which the marker's thresholds are checked after the test."""

    def __init__(
        self,
        session: ChunkevalSession,
        config: EvaluationSpec,
        nodeid: str,
        *,
        marker: MarkerOptions,
        path: Path | None = None,
        default_chunker: object = None,
        fail: Callable[[str], NoReturn] = _fail,
        question: str | None = None,
        group: tuple[object, ...] = (),
    ) -> None:
        self.session = session
        self.config = config
        self.nodeid = nodeid
        self.marker = marker
        session.asked.update(marker.thresholds)
        self.path = path
        """The test's file (baselines live next to it)."""
        self.default_chunker = default_chunker
        self.results: list[EvalResult] = []
        self.comparisons = BaselineComparisons(
            session,
            nodeid,
            self.results,
            path=path,
            rootdir=config.rootdir,
            marker_baseline=marker.baseline,
            gate=marker.gate,
        )
        """The test's baseline comparisons (run/comparisons.py)."""
        self._fail = fail
        self.question = question
        """``per_question``: this item's query id (run/per_question.py)."""
        self.left_out: str | None = None
        """A per-question item whose question its baseline comparison left out
        (no longer placeable): why, and the item is skipped."""
        self._group = group
        self._calls = 0

    @classmethod
    def for_test(
        cls,
        session: ChunkevalSession,
        nodeid: str,
        marker: MarkerOptions | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        chunker: object = None,
        fail: Callable[[str], NoReturn] = _fail,
        question: str | None = None,
        group: tuple[object, ...] = (),
    ) -> Evaluator:
        """The evaluator for one test (``chunker``: its ``chunkeval_chunker``;
        ``question``: a per-question item's query id, ``group``: what identifies
        its test and other parameters)."""
        run = EvaluationSpec.from_settings(
            session.settings, marker.overrides if marker else None
        )
        return cls(
            session,
            run,
            nodeid,
            marker=marker or MarkerOptions(),
            path=None if path is None else Path(path),
            default_chunker=chunker,
            fail=fail,
            question=question,
            group=group,
        )

    def _shared(
        self, signature: tuple[object, ...], compute: Callable[[], EvalResult]
    ) -> EvalResult:
        """``compute()``, or for a per-question item the result the test's first
        item got from the same call (run/per_question.py)."""
        __tracebackhide__ = True
        if self.question is None:
            return self._or_fail(compute)
        self._calls += 1
        from pytest_chunkeval.run.shared import component_signature

        key = (self.config, *(component_signature(v) for v in signature))
        return self._or_fail(
            lambda: self.session.shared_call(
                self._group, self._calls, key, self.nodeid, compute
            )
        )

    def __repr__(self) -> str:
        return f"<chunkeval evaluator for {self.nodeid}>"

    def _or_fail(self, make: Callable[[], T]) -> T:
        __tracebackhide__ = True
        try:
            return make()
        except ChunkevalError as exc:
            message = str(exc)
        # Outside the except block: the failure needs no chained traceback.
        self._fail(message)

    @property
    def corpus(self) -> Corpus:
        """The corpus this test evaluates on."""
        return self._or_fail(lambda: self.session.datasets.corpus(self.config))

    @property
    def queries(self) -> QuerySet:
        """The query set this test evaluates with."""
        return self._or_fail(lambda: self.session.datasets.queries(self.config))

    def evaluate(
        self,
        chunker: object = None,
        *,
        k: K | None = None,
        budget: int | None = None,
        label: str | None = None,
    ) -> EvalResult:
        """Chunk the corpus with ``chunker`` (a spec string such as
        ``"recursive:200:0"``, a chunker object, or a function ``str -> list[str]``;
        default: this test's ``chunkeval_chunker``), embed, index, retrieve ``k``
        chunks per query (with ``budget``: the ranks whose summed length fits it)
        and score. Memoized per session by configuration."""
        __tracebackhide__ = True
        if chunker is None:
            if self.default_chunker is None:
                self._fail(
                    f"{self.nodeid}: chunkeval.evaluate() needs a chunker: pass a "
                    "spec such as 'recursive:200:0' or a chunker object, or use the "
                    "chunkeval_chunker fixture"
                )
            chunker = self.default_chunker
        if k is not None:
            k = parse_k(k)
        if budget is not None:
            budget = parse_budget(budget)
        chosen = chunker
        lenient = self.comparisons.has_baseline()
        result = self._shared(
            ("evaluate", chosen, k, budget, label, lenient),
            functools.partial(  # no frame of its own, unlike a lambda
                evaluations.evaluate,
                self.session,
                self.config,
                chosen,
                nodeid=self.nodeid,
                k=k,
                budget=budget,
                label=label,
                lenient=lenient,
            ),
        )
        self.results.append(result)
        return result

    def score(
        self,
        retriever: object,
        *,
        k: int | None = None,
        label: str | None = None,
        locate: str | None = None,
        copies: str | None = None,
        factory: bool = False,
        noisy: bool = False,
    ) -> EvalResult:
        """Score a whole retriever: a callable ``question -> results`` (texts,
        ``(doc_id, text)`` pairs, ``(doc_id, start, end)`` spans or LangChain
        documents), an object with ``.retrieve``/``.invoke``, or a mapping query
        id -> results. ``label`` names it in the summary and reports; results
        under one label share a summary row (across xdist workers too).
        ``locate`` (``exact``/``normalized``) overrides ``chunkeval_locate``,
        ``copies`` (``any``/``strict``) ``chunkeval_copies``; ``k``: only the
        first ``k`` results of each answer count (default: this test's ``k`` when
        one is configured, else all), recorded in the configuration.

        Every question is asked twice, and more when an answer differs
        (docs/baselines.md, "Repeats"). ``factory=True``: ``retriever`` is a
        function that builds a fresh retriever for each ask (for noise that shows
        only between processes); ``noisy=True`` declares it noisy (repeated
        without the test)."""
        __tracebackhide__ = True
        run = self.config
        if k is not None:
            if isinstance(k, bool) or not isinstance(k, int) or k < 1:
                self._fail(
                    f"{self.nodeid}: chunkeval.score(k={k!r}): k must be a "
                    "positive whole number of results"
                )
            run = dataclasses.replace(run, k=k, k_set=True)
        if locate is not None:
            run = dataclasses.replace(
                run, locate=self._or_fail(lambda: check_locate(locate))
            )
        if copies is not None:
            run = dataclasses.replace(
                run, copies=self._or_fail(lambda: check_copies(copies))
            )
        lenient = self.comparisons.has_baseline()
        result = self._shared(
            (
                "score",
                retriever,
                label,
                run.locate,
                run.copies,
                run.score_k,
                lenient,
                factory,
                noisy,
            ),
            functools.partial(  # no frame of its own, unlike a lambda
                evaluations.score,
                self.session,
                run,
                retriever,
                nodeid=self.nodeid,
                label=label,
                lenient=lenient,
                factory=factory,
                noisy=noisy,
            ),
        )
        self.results.append(result)
        return result

    def relationships(
        self,
        chunker: object = None,
        *,
        extractor: object,
        k: int | None = None,
        label: str | None = None,
    ) -> EvalResult:
        """Graph-RAG: extract relationships from ``chunker``'s chunks with
        ``extractor`` (``"llm:MODEL"``, a registered name, an extractor object or
        a function), retrieve the top ``k`` per question (default: this test's
        ``k``) and score them against gold relationships from the excerpts:
        ``rel_recall``, ``rel_precision`` and ``evidence_*``. Markers, helpers
        and baselines work on the result. Memoized per session."""
        __tracebackhide__ = True
        if chunker is None:
            if self.default_chunker is None:
                self._fail(
                    f"{self.nodeid}: chunkeval.relationships() needs a chunker: pass "
                    "a spec such as 'recursive:200:0' or a chunker object"
                )
            chunker = self.default_chunker
        depth = self.config.k if k is None else k
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            self._fail(
                f"{self.nodeid}: chunkeval.relationships(k={depth!r}): k must be a "
                "positive whole number of relationships (k='min' is defined for "
                "chunks only)"
            )
        chosen = chunker
        result = self._shared(
            ("relationships", chosen, extractor, depth, label),
            functools.partial(  # no frame of its own, unlike a lambda
                evaluations.relationships,
                self.session,
                self.config,
                chosen,
                extractor,
                nodeid=self.nodeid,
                k=depth,
                label=label,
            ),
        )
        self.results.append(result)
        return result

    def check_baseline(
        self,
        result: EvalResult,
        *,
        name: str | None = None,
        tolerance: str | Mapping[str, Any] | None = None,
        mode: str | None = None,
        confidence: str | float | None = None,
        gate_by: str | None = None,
    ) -> CheckOutcome:
        """Compare ``result`` with this test's baseline file (``--chunkeval-update``
        writes it instead). ``name`` tells apart several baselines of one test
        (default: ``<test>.json``, then ``<test>.2.json``...); ``tolerance``
        (``"recall:-2%"`` or ``{"recall": "-2%", "iou": -0.002}``), ``mode``
        (``paired``/``mean``), ``confidence`` and ``gate_by`` (``document``,
        ``tag``, both or ``set``) override the session's for this check.
        Raises an ``AssertionError`` (a ``BaselineError``) whose text says what
        changed and the command that records the new numbers."""
        __tracebackhide__ = True
        from pytest_chunkeval.gate.files.baseline import BaselineError

        if self.question is not None and self.marker.per_question:
            # Each item would compare (and write) the whole set's result again
            # under its own id: as many copies of one baseline as questions.
            raise ConfigError(
                f"{self.nodeid}: check_baseline() in a per-question item compares "
                "the whole query set in every item; mark the test "
                "@pytest.mark.chunkeval(per_question=True, baseline=True), which "
                "compares each item's question with its own baseline"
            )
        try:  # a bad tolerance=, mode=, confidence= or gate_by= names this call
            self.session.baselines.gate.override(
                tolerance=tolerance, mode=mode, confidence=confidence, gate_by=gate_by
            )
        except ConfigError as exc:
            raise ConfigError(f"check_baseline: {exc}") from None
        failure: BaselineError | ConfigError | None = None
        try:
            outcome = self.comparisons.check(
                result,
                name=name,
                tolerance=tolerance,
                mode=mode,
                confidence=confidence,
                gate_by=gate_by,
            )
        except (BaselineError, ConfigError) as exc:  # ConfigError: a bad name=
            failure = exc
        if failure is not None:
            # Raised here, without the store's frames: the report shows the test's
            # line and the explanation.
            raise failure.with_traceback(None) from None
        return outcome

    def leave_out(self, reason: str) -> None:
        """A per-question item's question is left out of its baseline
        comparison (run/per_question.py): its results were used as one."""
        self.left_out = reason
        self.comparisons.compared += self.results
