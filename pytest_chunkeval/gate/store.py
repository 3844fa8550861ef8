"""The session's baselines: check a result against its file (or write it in
update mode), record outcomes, find unused files, merge xdist workers' records."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.gate.check import Located, check_baseline
from pytest_chunkeval.gate.files.baseline import BaselineUnwritable
from pytest_chunkeval.gate.files.corpus_table import table_path
from pytest_chunkeval.gate.files.legacy import SpecAliases
from pytest_chunkeval.gate.files.lookup import BaselineLookup
from pytest_chunkeval.gate.files.names import BaselineNames
from pytest_chunkeval.gate.files.owners import unused_files
from pytest_chunkeval.gate.files.paths import BaselineLayout, NodeRef, absolute
from pytest_chunkeval.gate.outcome.checking import BaselineRegression
from pytest_chunkeval.gate.outcome.outcomes import FAILED, CheckOutcome
from pytest_chunkeval.gate.outcome.session_summary import summary_lines
from pytest_chunkeval.gate.outcome.together import decided_together
from pytest_chunkeval.gate.records import SessionRecords
from pytest_chunkeval.gate.tolerances import GateSettings
from pytest_chunkeval.gate.writing import (
    TablePlan,
    plan_update,
    remove_empty,
    unwritable_message,
)

__all__ = ["UPDATE_COMMAND", "BaselineRegression", "BaselineStore"]

if TYPE_CHECKING:
    from pytest_chunkeval.engine.results import EvalResult

UPDATE_COMMAND = "pytest --chunkeval-update"


class BaselineStore(SessionRecords):
    """One session's baselines: checks, writes (update mode only), and at the
    session's end the unused files, the items decided together and the
    summary, from what it recorded (gate/records.py).

    The plugin keeps one per process; xdist workers send :meth:`worker_payload`
    and the controller :meth:`merge_payload` s it before asking :meth:`unused`.
    """

    def __init__(
        self,
        *,
        update: bool = False,
        layout: BaselineLayout | None = None,
        gate: GateSettings | None = None,
        update_command: str = UPDATE_COMMAND,
        aliases: SpecAliases | None = None,
        staged: bool = False,
        chunkers: Sequence[str] = (),
        on_repeated: Callable[[str, EvalResult], None] | None = None,
    ) -> None:
        super().__init__()
        self.update = update
        self.staged = staged
        """Update mode writes wait for :meth:`commit` (the test passed otherwise)
        or :meth:`discard` (it failed: the old baseline stays byte-identical)."""
        self._pending: dict[
            str, list[tuple[CheckOutcome, Callable[[], None], Path]]
        ] = {}
        self.aliases: SpecAliases = aliases or {}
        """Canonical chunker spec -> spellings test ids had before (legacy.py)."""
        self.layout = layout or BaselineLayout()
        self.gate = gate or GateSettings()
        self.update_command = update_command
        self._tables: dict[Path, str] = {}
        self.names = BaselineNames(self.layout)
        self.lookup = BaselineLookup(
            self.layout,
            self.aliases,
            self.collected,
            chunkers=chunkers,
            partial=self.partial,
        )
        self.on_repeated = on_repeated
        """Told a row's result when the gate repeated it (run/session.py
        shows the repeated result in the row)."""
        self.replacing: dict[str, str] = {}
        """Node id -> the test whose baseline it took over (gate/files/lookup.py)."""

    # -- one test ---------------------------------------------------------------

    def begin(self, nodeid: str) -> None:
        """Start (or restart, e.g. on a rerun) numbering a test's unnamed baselines."""
        self.names.begin(nodeid)

    def path_for(self, test: NodeRef, name: str | None = None) -> Path:
        """The file of the test's next baseline: ``<test>.json`` for its first
        unnamed check, then ``<test>.2.json``...; ``<test>.<name>.json`` if named
        (names are checked: gate/files/names.py)."""
        return self.layout.path(test.path, test.name, self._suffix(test, name))

    def _suffix(self, test: NodeRef, name: str | None) -> str | None:
        return self.names.suffix(test, name)

    def has_baseline(self, test: NodeRef) -> bool:
        """Whether the test has a baseline to compare against: its own (under
        its name or a former one), or that of the parameter it replaced."""
        return self.lookup.has_baseline(test)

    def _names(self, test: str) -> list[str]:
        """The test's id and the ids it had before (see legacy.py)."""
        return self.lookup.names(test)

    def locate(self, test: NodeRef, name: str | None = None) -> Located:
        """Where the test's baseline (check ``name``) is: its own file, else
        the same file under a former name, else the file of the parameter it
        replaced (gate/files/lookup.py); each file seen is counted as used."""
        suffix = self._suffix(test, name)
        path = self.layout.path(test.path, test.name, suffix)
        self.touched.add(absolute(path))
        former, why = (None, "") if path.is_file() else self._elsewhere(test, suffix)
        accepted = tuple(self._names(test.name))
        if former is None:
            return Located(path, path, self._shown(path), None, why, accepted)
        self.touched.add(absolute(former))
        taken = self.replacing.get(test.nodeid)
        whose = why if taken else f"the baseline of {test.nodeid} under a former name"
        note = (
            f"{self._shown(former)}: {whose}; `{self.update_command}` moves it "
            f"to {self._shown(path)}"
        )
        accepted += (taken,) if taken else ()
        return Located(path, former, self._shown(former), former, why, accepted, note)

    def _elsewhere(self, test: NodeRef, suffix: str | None) -> tuple[Path | None, str]:
        """Where a test without a file of its own finds its baseline: a file
        under its former name, or the file of the parameter it replaced (and
        what that is, for the messages); else None and why no unused baseline
        was taken (gate/files/lookup.py)."""
        former = self.lookup.former(test, suffix)
        if former is not None:
            return former, "its former name"
        replaced = self.lookup.replaced(test)
        if replaced.test is None:
            return None, replaced.why
        path = self.layout.path(test.path, replaced.test, suffix)
        if not path.is_file():
            return None, ""
        self.replacing[test.nodeid] = replaced.test
        return path, f"the baseline of {replaced.test}, whose parameter it replaced"

    def command(self, nodeid: str) -> str:
        """The command that (re)writes this test's baselines."""
        return f"{self.update_command} {shlex.quote(nodeid)}"

    def check(
        self,
        result: EvalResult,
        test: NodeRef,
        *,
        name: str | None = None,
        tolerance: str | Mapping[str, Any] | None = None,
        mode: str | None = None,
        confidence: str | float | None = None,
        gate_by: str | None = None,
        row: str = "",
        per_question: bool = False,
    ) -> CheckOutcome:
        """Compare ``result`` with the test's baseline (or write it in update
        mode): gate/check.py's :func:`check_baseline` with this session's files.

        Raises a :class:`BaselineError` subclass when the test should fail; returns
        the outcome otherwise (``improved`` outcomes carry the update hint). The
        call's ``tolerance``/``mode``/``confidence``/``gate_by`` override the session's;
        ``row`` names the result's summary row (kept in the outcome);
        ``per_question``: a per-question item's share of a result, whose file
        shares its corpus table with the function's other items
        (gate/files/corpus_table.py).
        """
        settings = self.gate.override(
            tolerance=tolerance, mode=mode, confidence=confidence, gate_by=gate_by
        )
        return check_baseline(
            self,
            result,
            test,
            name=name,
            settings=settings,
            row=row,
            per_question=per_question,
        )

    def write(
        self,
        result: EvalResult,
        test: NodeRef,
        where: Located,
        settings: GateSettings,
        *,
        row: str = "",
        per_question: bool = False,
    ) -> CheckOutcome:
        """Update mode: write (or stage) ``result`` as the test's baseline."""
        path, shared = where.path, None
        table = table_path(self.layout, test) if per_question else None
        if table is not None:
            self.touched.add(absolute(table))
            shared = TablePlan(table, self._tables, self.notes.append)
        try:
            outcome, write, written = plan_update(
                result,
                test,
                path,
                (where.former, where.why),
                settings,
                layout=self.layout,
                shown_of=self._shown,
                table=shared,
            )
            if written is not result and row and not per_question:
                self.repeated(row, written)
            if self.staged:
                outcome = replace(outcome, row=row)
                self._pending.setdefault(test.nodeid, []).append((outcome, write, path))
                return outcome
            write()
        except OSError as exc:
            message = unwritable_message(path, exc, self._shown)
            self.record(
                CheckOutcome(test.nodeid, self._shown(path), "unwritable", message),
                row,
            )
            raise BaselineUnwritable(message, path) from None
        return self.record(outcome, row)

    def commit(self, nodeid: str) -> str | None:
        """Write the test's staged baselines (it passed otherwise); the failure
        text if one cannot be written, else None."""
        failures = []
        for outcome, write, path in self._pending.pop(nodeid, []):
            try:
                write()
            except OSError as exc:
                message = unwritable_message(path, exc, self._shown)
                self.record(
                    CheckOutcome(
                        nodeid, outcome.path, "unwritable", message, outcome.row
                    )
                )
                failures.append(message)
                continue
            self.record(outcome)
        return "\n\n".join(failures) or None

    def discard(self, nodeid: str, reason: str) -> None:
        """Drop the test's staged baselines (it failed for another ``reason``):
        their files stay as they were; the summary says so."""
        for outcome, _, _ in self._pending.pop(nodeid, []):
            message = (
                f"not recorded: {nodeid} failed ({reason}); {outcome.path} is left "
                "as it was"
            )
            self.record(
                CheckOutcome(nodeid, outcome.path, "not recorded", message, outcome.row)
            )

    def not_compared(self, test: NodeRef, reason: str, row: str = "") -> CheckOutcome:
        """A result the test asked to compare (``baseline=True``) that was not,
        because the test failed first (``reason``): its row must not read as
        compared. In update mode, nothing was recorded either."""
        shown = self._shown(self.path_for(test))
        if self.update:
            status = "not recorded"
            message = (
                f"not recorded: {test.nodeid} failed ({reason}); {shown} is left as "
                "it was"
            )
        else:
            status = "not compared"
            message = (
                f"not compared: {test.nodeid} failed before its baseline "
                f"comparison ({reason}); {shown} was not read"
            )
        return self.record(CheckOutcome(test.nodeid, shown, status, message, row))

    def repeated(self, row: str, result: EvalResult) -> None:
        """``result``, the gate's repeats of the result of ``row``: the one
        the reports show."""
        if self.on_repeated is not None:
            self.on_repeated(row, result)

    def _shown(self, path: Path) -> str:
        root = self.layout.rootdir
        if root is not None:
            try:
                return str(absolute(path).relative_to(absolute(Path(root))))
            except ValueError:
                pass
        return str(path)

    # -- session end ------------------------------------------------------------

    def unused(
        self,
        collected: Iterable[NodeRef] | None = None,
        passed: Iterable[str] | None = None,
        partial: Iterable[str | os.PathLike[str]] | None = None,
    ) -> list[Path]:
        """Baseline files no test used, among the modules this session
        collected (gate/files/owners.py says which). ``collected`` (deselected tests
        included), ``passed`` and ``partial`` (test files selected by node id)
        default to what :meth:`note_collected`, :meth:`note_passed` and
        :meth:`note_partial` recorded, merged from workers; node ids resolve
        against the layout's rootdir."""
        if collected is None:
            root = self.layout.rootdir or Path.cwd()
            collected = [NodeRef.from_nodeid(n, root) for n in sorted(self.collected)]
        return unused_files(
            self.layout,
            collected,
            touched=self.touched,
            passed=set(self.passed if passed is None else passed),
            partial=[Path(f) for f in (self.partial if partial is None else partial)],
            names=self._names,
        )

    def remove(self, paths: Iterable[Path]) -> list[Path]:
        """Delete baseline files (update mode) and the directories they leave empty."""
        removed = []
        for path in paths:
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(path)
            remove_empty(self.layout, path)
        self.removed += removed
        return removed

    def decide_items(self) -> list[CheckOutcome]:
        """At the session's end (the controller, every worker merged): each
        test function's per-question items decided together, recorded; those
        that fail the run (gate/outcome/together.py). Update mode decides
        nothing."""
        if self.update:
            return []
        together = decided_together(
            self.outcomes, self.gate, self.collected, self.command
        )
        self.outcomes += together
        return [o for o in together if o.status in FAILED]

    def summary_lines(self, unused: Sequence[Path] = ()) -> list[str]:
        """Lines for the terminal summary: counts, improvements, unused files."""
        return summary_lines(
            self.outcomes,
            removed=self.removed,
            unused=unused,
            notes=self.notes,
            shown_of=self._shown,
            update_command=self.update_command,
        )
