"""The plugin's state for one pytest run, without pytest.

:class:`ChunkevalSession` resolves settings into a corpus, queries, embedder and
store, memoizes results by what determines them (twenty tests asserting on one
configuration evaluate it once; a chunker or retriever object changed between two
tests is evaluated again), collects them for the terminal summary and merges
what pytest-xdist workers send. At the end, :meth:`ChunkevalSession.finish`
(controller only) handles unused baselines, the history file and the reports
(:mod:`pytest_chunkeval.run.outputs`).

Engine modules (numpy, tokenizers, registries) are imported on first use only.
"""

from __future__ import annotations

import copy
import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.config.evaluation import EvaluationSpec
from pytest_chunkeval.config.options import Settings
from pytest_chunkeval.core.metric_names import RANK, names
from pytest_chunkeval.errors import ChunkevalError
from pytest_chunkeval.run.components import Components, Register, resolve_judge
from pytest_chunkeval.run.datasets import Datasets
from pytest_chunkeval.run.outputs import (
    SessionEnd,
    SummaryRow,
    session_verdicts,
    write_outputs,
)
from pytest_chunkeval.run.shared import SharedCalls

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.engine.setup import EvaluationSetup
    from pytest_chunkeval.gate.store import BaselineStore
    from pytest_chunkeval.run.judgments import SessionJudges


@dataclass(frozen=True)
class RecordedResult:
    """A result a test produced (``reused``: taken from the memo)."""

    nodeid: str
    result: EvalResult
    reused: bool


class ChunkevalSession:
    """State shared by every test of one pytest process.

    ``register(kind, registry)`` is called once per kind (``chunkers``,
    ``embedders``, ``stores``) before the first spec is resolved; the plugin passes
    a function calling the ``pytest_chunkeval_register_*`` hooks.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        register: Register | None = None,
        worker_id: str = "",
        distributed: bool = False,
    ) -> None:
        self.settings = settings
        self.worker_id = worker_id
        self.distributed = distributed or bool(worker_id)
        """Several processes (pytest-xdist) run the tests."""
        self.evaluations = 0
        """Evaluations actually run (memo misses)."""
        self.reused = 0
        """Results served from the memo."""
        self.cached = 0
        """Evaluations read back from the result cache (engine/result_cache.py)."""
        self.results: list[RecordedResult] = []
        self.rows: dict[str, SummaryRow] = {}
        self._row_of: dict[int, str] = {}
        """id of a recorded result (kept alive in ``results``) -> its row key."""
        self.asked: set[str] = set()
        """Metrics a marker threshold named: the terminal table shows them."""
        self._memo: dict[tuple[object, ...], EvalResult] = {}
        self.shared = SharedCalls()
        """Results the items of per-question tests share (run/per_question.py)."""
        self._errors: dict[tuple[object, ...], ChunkevalError] = {}
        self.datasets = Datasets()
        """The corpus and query sets read so far."""
        self.components = Components(
            settings, register=register, distributed=self.distributed
        )
        """Chunkers, embedders, stores and caches resolved from specs."""
        self._keep_alive: list[object] = []
        self.setups: dict[tuple[object, ...], EvaluationSetup] = {}
        """Each configuration's evaluation setup (run/evaluations.py)."""
        self._default_run: EvaluationSpec | None = None
        self._baselines: BaselineStore | None = None
        self._collected: list[str] = []
        self._partial: list[str] = []
        self._judges: SessionJudges | None = None
        self.end: SessionEnd | None = None
        """What :meth:`finish` did (controller or single process)."""

    @property
    def default_run(self) -> EvaluationSpec:
        """The configuration of the settings alone (no marker)."""
        if self._default_run is None:
            self._default_run = EvaluationSpec.from_settings(self.settings)
        return self._default_run

    @property
    def judges(self) -> SessionJudges:
        """The session's judges (docs/judged.md#the-two-measures), sharing the committed
        judgments file."""
        if self._judges is None:
            from pytest_chunkeval.run.judgments import SessionJudges

            self.components.ensure_registered()
            self._judges = SessionJudges(
                self.settings.judgments, update=self.settings.update, make=resolve_judge
            )
        return self._judges

    def judging(self, run: EvaluationSpec) -> Any:
        """The judging of ``run``'s judge (None: not judged)."""
        if not run.judge:
            return None
        return self.judges.judging(run.judge, run.cache_dir)

    # -- evaluation ---------------------------------------------------------------

    def keep_alive(self, obj: object) -> None:
        """Keep ``obj`` alive for the session (a summary row names it by id)."""
        self._keep_alive.append(obj)

    def memoized(
        self,
        key: tuple[object, ...],
        compute: Callable[[], EvalResult],
        nodeid: str,
        label: str | None,
        *,
        row: tuple[object, ...] | None = None,
    ) -> EvalResult:
        """``key`` identifies the result in this process; ``row`` (default:
        ``key``) its summary row, whose last part is ``("object", id)`` when only
        this process can tell what it is."""
        if key in self._errors:  # the same broken configuration fails fast
            raise copy.copy(self._errors[key])
        result = self._memo.get(key)
        reused = result is not None
        if result is None:
            try:
                result = compute()
            except ChunkevalError as exc:  # anything else is a bug: traceback
                # A copy: its class and message, not the traceback's frames (and
                # the data they hold) for the rest of the session.
                self._errors[key] = copy.copy(exc)
                raise
            self._memo[key] = result
            self.evaluations += 1
            # read back whole from the result cache (engine/result_cache.py CACHED)
            self.cached += "cached" in result.timings
        else:
            self.reused += 1
        if label is not None and label != result.label:
            result = dataclasses.replace(result, label=label)
        self._record(key if row is None else row, nodeid, result, reused)
        return result

    def shared_call(
        self,
        group: tuple[object, ...],
        call: int,
        signature: tuple[object, ...],
        nodeid: str,
        compute: Callable[[], EvalResult],
    ) -> EvalResult:
        """A per-question item's ``call``-th chunkeval call: ``compute()`` in the
        test's first item, the same result (and summary row) in the others."""
        known = self.shared.get(group, call, signature)
        if known is None:
            result = compute()
            self.shared.put(
                group, call, signature, result, self._row_of.get(id(result))
            )
            return result
        result, row = known
        self.reused += 1
        self.results.append(RecordedResult(nodeid, result, True))
        if row is not None and nodeid not in self.rows[row].nodeids:
            self.rows[row].nodeids.append(nodeid)
        return result

    def _record(
        self, row_key: tuple[object, ...], nodeid: str, result: EvalResult, reused: bool
    ) -> None:
        self.results.append(RecordedResult(nodeid, result, reused))
        key = repr(row_key)
        last = row_key[-1]
        if self.worker_id and isinstance(last, tuple) and last[:1] == ("object",):
            # An id names an object in this process only: equal ids on two workers
            # are different objects, so their rows must not merge.
            key = f"{key}@{self.worker_id}"
        self._row_of[id(result)] = key
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = SummaryRow.of_result(key, result, self.settings)
        if nodeid not in row.nodeids:
            row.nodeids.append(nodeid)

    # -- xdist ------------------------------------------------------------------

    def worker_payload(self) -> dict[str, Any]:
        """What a worker sends to the controller (JSON-serializable)."""
        payload: dict[str, Any] = {
            "evaluations": self.evaluations,
            "reused": self.reused,
            "cached": self.cached,
            "rows": [row.to_json() for row in self.rows.values()],
            "asked": sorted(self.asked),
        }
        if self._baselines is not None:
            payload["baselines"] = self._baselines.worker_payload()
        if self._judges is not None:
            payload["judges"] = self._judges.payload()
        return payload

    def merge_payload(self, payload: Mapping[str, Any]) -> None:
        """Add a worker's results to this (controller) session."""
        self.evaluations += int(payload.get("evaluations", 0))
        self.reused += int(payload.get("reused", 0))
        self.cached += int(payload.get("cached", 0))
        self.asked.update(payload.get("asked", []))
        if "baselines" in payload:
            self.baselines.merge_payload(payload["baselines"])
        if "judges" in payload:
            self.judges.merge(payload["judges"])
        for data in payload.get("rows", []):
            row = SummaryRow.from_json(data)
            mine = self.rows.get(row.key)
            if mine is None:
                self.rows[row.key] = row
            else:
                mine.nodeids += [n for n in row.nodeids if n not in mine.nodeids]

    def _repeated(self, key: str, result: EvalResult) -> None:
        """The gate repeated the result of row ``key`` (docs/baselines.md,
        "Repeats"): the row, and so the table, the reports and the history,
        show the mean of the repeats it decided on, not the first ask."""
        row = self.rows.get(key)
        if row is None:
            return
        fresh = SummaryRow.of_result(key, result, self.settings)
        fresh.nodeids = row.nodeids
        self.rows[key] = fresh
        self._row_of[id(result)] = key

    def row_of(self, result: EvalResult) -> str:
        """The summary row key of a result this session produced ("" for any
        other result, e.g. one read from a file)."""
        return self._row_of.get(id(result), "")

    def summary_rows(self) -> list[SummaryRow]:
        """Rows in the order tests ran (merged rows: by test id)."""
        return list(self.rows.values())

    def summary_metrics(self) -> list[str]:
        """Metrics beyond the default columns that this run asked for: named by a
        marker threshold or by a gate tolerance (the table stays narrow else)."""
        named = set(self.asked) | set(self.settings_gate_metrics())
        return [m for m in names(RANK) if m in named]

    def settings_gate_metrics(self) -> list[str]:
        from pytest_chunkeval.config.tolerances import parse_tolerances

        text = self.settings.tolerance
        if not text:
            return []
        return [m for m, tol in parse_tolerances(text).items() if tol is not None]

    # -- baselines ----------------------------------------------------------------

    @property
    def baselines(self) -> BaselineStore:
        """The session's baseline store (created on first use)."""
        if self._baselines is None:
            from pytest_chunkeval.gate.files.legacy import spec_aliases
            from pytest_chunkeval.gate.files.paths import BaselineLayout
            from pytest_chunkeval.gate.store import BaselineStore
            from pytest_chunkeval.gate.tolerances import GateSettings

            s = self.settings
            # Test ids were the chunker specs as written before they were
            # canonical: the store looks baselines up under those ids too.
            aliases = (
                spec_aliases(s.chunkers, self.components.chunker_label)
                if s.chunkers
                else {}
            )
            chunkers = [self.components.chunker_label(c) for c in s.chunkers]
            self._baselines = BaselineStore(
                aliases=aliases,
                chunkers=chunkers,
                update=s.update,
                staged=True,  # written once the test passed: BaselineComparisons.settle
                layout=BaselineLayout(
                    Path(s.baseline_dir) if s.baseline_dir else None, Path(s.rootdir)
                ),
                gate=GateSettings.from_options(
                    s.tolerance,
                    s.gate_mode,
                    s.gate_confidence,
                    s.max_left_out,
                    s.gate_by,
                ),
                on_repeated=self._repeated,
            )
            self._baselines.note_collected(self._collected)
            self._baselines.note_partial(self._partial)
        return self._baselines

    def note_collected(
        self, nodeids: Sequence[str], partial: Sequence[str] = ()
    ) -> None:
        """Node ids collected (deselected ones included), test files selected
        by node id: where a replaced chunker's baseline is (gate/files/lookup.py)."""
        self._collected = list(nodeids)
        self._partial = list(partial)
        if self._baselines is not None:
            self._baselines.note_collected(nodeids)
            self._baselines.note_partial(partial)

    def note_tests(
        self,
        collected: Sequence[str],
        passed: Sequence[str],
        partial: Sequence[str] = (),
        skipped: Sequence[str] = (),
    ) -> None:
        """The node ids this process collected (deselected ones included), those
        whose every phase passed, and the test files selected by node id (collected
        in part): what decides which baselines are unused; and the tests pytest
        skipped (the reports say so)."""
        self.baselines.note_collected(collected)
        for nodeid in passed:
            self.baselines.note_passed(nodeid)
        for nodeid in skipped:
            self.baselines.note_skipped(nodeid)
        self.baselines.note_partial(partial)

    # -- session end --------------------------------------------------------------

    def finish(self, environ: Mapping[str, str] | None = None) -> SessionEnd:
        """Once, on the controller (or the only process), after every worker's
        payload is merged: find unused baselines (deleted in update mode), append
        the history and write the reports."""
        store = self.baselines
        unused = store.unused()
        if self.settings.update:
            store.remove(unused)
            unused = []
        from pytest_chunkeval.gate.files.owners import item_files

        end = SessionEnd(
            unused=unused,
            fail_unused=self.settings.fail_unused,
            unused_items=item_files(unused),
            together=[o.message for o in store.decide_items()],
        )
        rows = self.summary_rows()
        session_verdicts(
            rows,
            end,
            store.outcomes,
            store.passed,
            skipped=store.skipped,
            order=store.order,
        )
        from pytest_chunkeval.run.inspection import session_inspections

        inspections = session_inspections(
            self.settings, self.datasets, self.default_run, end
        )
        write_outputs(
            self.settings,
            rows,
            end,
            os.environ if environ is None else environ,
            inspections,
        )
        end.baselines = store.summary_lines(unused)
        if self._judges is not None:
            end.baselines += self._judges.finish()
        self.end = end
        return end
