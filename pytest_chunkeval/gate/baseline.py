"""Baseline snapshots: the file format, where files live, and a session's store.

A baseline is ``<test dir>/__chunkeval__/<module>/<test>.json`` (or under a
configured directory), written only in update mode (``--chunkeval-update``)::

    {
     "chunkeval_baseline": 1,
     "chunks": {"count": 1700, "mean_units": 180.2},
     "config": {
      "chunker": "recursive:200:0",
      ...
     },
     "corpus_hash": "850e…",
     "groups": {
      "chatlogs.md": {"f1": 0.05, "iou": 0.028, …},
      …
     },
     "metrics": {
      "f1": {"mean": 0.050923, "n": 472, "std": 0.071234},
      …
     },
     "queries": {
      "chatlogs-0a1b2c3d": {"f1": 0.0521, "iou": 0.0267, "precision": 0.0267, …},
      …
     },
     "queries_hash": "1470…",
     "test": "test_chunker[recursive:200:0]"
    }

Keys are sorted at every level and each inner object sits on one line: a query
whose numbers moved is one changed line in review. Per-query values keep 4
decimals (0.01 points: far below any tolerance worth setting, and coarse enough
that float noise of another BLAS does not churn the file); means and stds keep 6.
The bundled benchmark's 472 queries make a file of about 55 KB.

Problems are :class:`BaselineError` (an ``AssertionError``: the test calling the
check fails) whose message names the file and ends with the command that fixes it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.gate.compare import (
    MEAN_DECIMALS,
    QUERY_DECIMALS,
    GateError,
    GateReport,
    GateSettings,
    compare,
    format_failure,
    format_improvement,
)
from pytest_chunkeval.util.files import atomic_write_text

if TYPE_CHECKING:
    from pytest_chunkeval.core.metrics import MetricStats
    from pytest_chunkeval.engine.results import EvalResult

BASELINE_SCHEMA = 1
VERSION_KEY = "chunkeval_baseline"
BASELINE_DIRNAME = "__chunkeval__"
UPDATE_COMMAND = "pytest --chunkeval-update"
# Names and paths of the data, not its content (the hashes identify that); a
# query file's path may differ between machines and must not look like drift.
VOLATILE_CONFIG_KEYS = frozenset({"corpus", "queries"})
_MAX_STEM_BYTES = 150
_UNSAFE = re.compile(r"[^\w.\-\[\]=,+@()]")
_WINDOWS_RESERVED = frozenset(
    {"CON", "PRN", "AUX", "NUL"}
    | {f"COM{i}" for i in range(1, 10)}
    | {f"LPT{i}" for i in range(1, 10)}
)
_REQUIRED = {
    "config": dict,
    "corpus_hash": str,
    "queries_hash": str,
    "metrics": dict,
    "groups": dict,
    "queries": dict,
    "test": str,
}


# ------------------------------------------------------------------------ errors


class BaselineError(AssertionError):
    """A baseline check failed; ``str()`` is the whole explanation."""

    def __init__(self, message: str, path: Path | None = None) -> None:
        super().__init__(message)
        self.path = path


class BaselineMissing(BaselineError):
    """No baseline file yet (it is created only in update mode)."""


class BaselineCorrupt(BaselineError):
    """The file is not a readable baseline of this schema version."""


class BaselineMismatch(BaselineError):
    """The baseline was made under another configuration or dataset."""


class BaselineRegression(BaselineError):
    """The gate failed; ``report`` holds the verdicts."""

    def __init__(self, message: str, path: Path, report: GateReport) -> None:
        super().__init__(message, path)
        self.report = report


# ------------------------------------------------------------------------ paths


def sanitize_name(name: str) -> str:
    """A test id as a portable, readable file name stem.

    ``TestA::test_b[recursive:200:0]`` -> ``TestA.test_b[recursive_200_0]``:
    characters that some file system rejects become ``_``; a stem too long for a
    file name keeps its start and gets a hash of the full id, so it stays unique.
    Sanitizing can map two ids to one name: each file records its test id and a
    check refuses a file that belongs to another test.
    """
    safe = _UNSAFE.sub("_", name.replace("::", "."))
    safe = safe.strip(" .") or "_"
    if safe.split(".")[0].upper() in _WINDOWS_RESERVED:
        safe = "_" + safe
    if len(safe.encode("utf-8")) > _MAX_STEM_BYTES:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:12]
        head = safe.encode("utf-8")[: _MAX_STEM_BYTES - 13].decode("utf-8", "ignore")
        safe = f"{head}-{digest}"
    return safe


def nodeid_name(nodeid: str) -> str:
    """The part of a pytest node id after the file: ``TestA::test_b[x]``."""
    _, sep, rest = nodeid.partition("::")
    return rest if sep else nodeid


@dataclass(frozen=True)
class NodeRef:
    """A test as the store knows it: pytest node id and the test file's path."""

    nodeid: str
    path: Path

    @property
    def name(self) -> str:
        return nodeid_name(self.nodeid)

    @classmethod
    def from_nodeid(cls, nodeid: str, rootdir: str | os.PathLike[str]) -> NodeRef:
        """From a rootdir-relative node id alone (what xdist reports carry)."""
        file_part = nodeid.partition("::")[0]
        return cls(nodeid, Path(rootdir, file_part))


@dataclass(frozen=True)
class BaselineLayout:
    """Where baselines live.

    Default: ``<test dir>/__chunkeval__/<module>/``. With ``directory`` (relative
    paths resolve against ``rootdir``): ``<directory>/<test file path relative to
    rootdir, without .py>/``, so same-named modules in two folders stay apart.
    """

    directory: Path | None = None
    rootdir: Path | None = None

    def _root_dir(self) -> Path:
        return Path(self.rootdir) if self.rootdir is not None else Path.cwd()

    def _override(self) -> Path | None:
        if self.directory is None:
            return None
        return _abs(self._root_dir() / self.directory)

    def module_dir(self, test_file: str | os.PathLike[str]) -> Path:
        """The directory holding one test module's baselines."""
        test_file = _abs(Path(test_file))
        override = self._override()
        if override is None:
            return test_file.parent / BASELINE_DIRNAME / test_file.stem
        try:
            rel = test_file.relative_to(_abs(self._root_dir()))
        except ValueError:
            rel = Path(test_file.name)
        return override / rel.with_suffix("")

    def path(
        self, test_file: str | os.PathLike[str], test: str, name: str | None = None
    ) -> Path:
        """The baseline file of ``test`` (its node id or name) in ``test_file``;
        ``name`` tells apart several baselines of one test."""
        stem = sanitize_name(nodeid_name(test))
        if name:
            stem = f"{stem}.{sanitize_name(name)}"
        return self.module_dir(test_file) / f"{stem}.json"

    def scan_root(self, test_file: str | os.PathLike[str]) -> Path:
        """The directory to scan for unused files next to ``test_file``."""
        override = self._override()
        return override if override is not None else self.module_dir(test_file).parent

    def test_file_of(self, module_dir: Path) -> Path:
        """The test file whose baselines ``module_dir`` holds (inverse mapping)."""
        override = self._override()
        if override is None:
            return module_dir.parent.parent / f"{module_dir.name}.py"
        rel = module_dir.relative_to(override)
        return _abs(self._root_dir()) / rel.parent / f"{rel.name}.py"

    def empty_candidates(self, file: Path) -> list[Path]:
        """Directories above a baseline file to remove once empty, innermost first:
        its module directory and ``__chunkeval__``, never the configured directory."""
        file = _abs(file)
        override = self._override()
        if override is None:
            module = file.parent
            return (
                [module, module.parent]
                if module.parent.name == BASELINE_DIRNAME
                else [module]
            )
        out = []
        for parent in file.parents:
            if parent == override or override not in parent.parents:
                break
            out.append(parent)
        return out

    def files_under(self, root: Path) -> list[Path]:
        """Baseline files below one scan root."""
        if not root.is_dir():
            return []
        pattern = "*/*.json" if self._override() is None else "**/*.json"
        return sorted(p for p in root.glob(pattern) if p.is_file())


def _abs(path: Path) -> Path:
    return Path(os.path.abspath(path))


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def baselines_exist(
    nodeids: Iterable[str],
    rootdir: str | os.PathLike[str],
    directory: str | os.PathLike[str] | None = None,
) -> bool:
    """True when baseline files exist where the test files of ``nodeids`` keep
    theirs: a session in which no test checked a baseline must still look for
    unused ones then (one directory scan per baseline root)."""
    layout = BaselineLayout(
        None if directory is None else Path(directory), Path(rootdir)
    )
    files = {n.partition("::")[0] for n in nodeids}
    roots = {layout.scan_root(Path(rootdir, f)) for f in files}
    return any(layout.files_under(root) for root in roots)


def baseline_path(
    test_file: str | os.PathLike[str],
    test: str,
    *,
    name: str | None = None,
    directory: str | os.PathLike[str] | None = None,
    rootdir: str | os.PathLike[str] | None = None,
) -> Path:
    """``<test dir>/__chunkeval__/<module>/<test>.json`` (see :class:`BaselineLayout`).

    ``test`` is the node id or the test's name (``test_x[recursive:200:0]``).
    """
    layout = BaselineLayout(
        None if directory is None else Path(directory),
        None if rootdir is None else Path(rootdir),
    )
    return layout.path(test_file, test, name)


# ------------------------------------------------------------------------ format


def _r(value: float | None, decimals: int) -> float | None:
    if value is None or math.isnan(value):
        return None
    out = round(float(value), decimals)
    return 0.0 if out == 0 else out  # no "-0.0" in files


@dataclass(frozen=True)
class Baseline:
    """The content of one baseline file."""

    test: str
    config: Mapping[str, Any]
    corpus_hash: str
    queries_hash: str
    metrics: Mapping[str, MetricStats]
    groups: Mapping[str, Mapping[str, float | None]]
    queries: Mapping[str, Mapping[str, float | None]]
    chunks: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def from_result(cls, result: EvalResult, test: str) -> Baseline:
        """What to store for ``result``, rounded as written."""
        from pytest_chunkeval.core.metrics import METRICS, MetricStats

        ids = [q.id for q in result.queries]
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(
                f"query ids are not unique ({', '.join(dup[:5])}); a baseline pairs "
                "queries by id"
            )
        metrics = {
            m: MetricStats(
                _f(_r(s.mean, MEAN_DECIMALS)), _f(_r(s.std, MEAN_DECIMALS)), s.n
            )
            for m, s in result.metrics.items()
        }
        return cls(
            test=nodeid_name(test),
            config={
                k: v for k, v in result.config.items() if k not in VOLATILE_CONFIG_KEYS
            },
            corpus_hash=result.corpus_hash,
            queries_hash=result.queries_hash,
            metrics=metrics,
            groups={
                g: {m: _r(s.mean, MEAN_DECIMALS) for m, s in stats.items()}
                for g, stats in result.groups.items()
            },
            queries={
                q.id: {m: _r(q.metric(m), QUERY_DECIMALS) for m in METRICS}
                for q in result.queries
            },
            chunks={
                "count": int(result.chunks.get("count", 0)),
                "mean_units": _r(float(result.chunks.get("mean_units", 0.0)), 2) or 0.0,
            },
        )

    def to_json(self) -> dict[str, Any]:
        return {
            VERSION_KEY: BASELINE_SCHEMA,
            "test": self.test,
            "config": dict(self.config),
            "corpus_hash": self.corpus_hash,
            "queries_hash": self.queries_hash,
            "metrics": {
                m: {
                    "mean": _r(s.mean, MEAN_DECIMALS),
                    "std": _r(s.std, MEAN_DECIMALS),
                    "n": s.n,
                }
                for m, s in self.metrics.items()
            },
            "groups": {g: dict(v) for g, v in self.groups.items()},
            "queries": {i: dict(v) for i, v in self.queries.items()},
            "chunks": dict(self.chunks),
        }

    def to_text(self) -> str:
        """The file's text: sorted keys, one line per inner object."""
        return render(self.to_json())

    @classmethod
    def from_json(cls, data: Any, where: str) -> Baseline:
        """Validate and load; :class:`BaselineCorrupt` says what is wrong."""
        from pytest_chunkeval.core.metrics import MetricStats

        if not isinstance(data, dict):
            raise _corrupt(
                where, f"expected a JSON object, found {type(data).__name__}"
            )
        version = data.get(VERSION_KEY)
        if version != BASELINE_SCHEMA:
            if version is None:
                what = f"it has no {VERSION_KEY!r} version key"
            else:
                what = (
                    f"it is schema version {version!r}, this pytest-chunkeval reads "
                    f"version {BASELINE_SCHEMA}"
                )
            raise _corrupt(where, f"not a baseline this version can read: {what}")
        for key, kind in _REQUIRED.items():
            if not isinstance(data.get(key), kind):
                raise _corrupt(
                    where, f"key {key!r} is missing or not a {kind.__name__}"
                )
        try:
            metrics = {
                m: MetricStats(_f(s["mean"]), _f(s["std"]), int(s["n"]))
                for m, s in data["metrics"].items()
            }
            queries = {
                str(i): {m: _opt(v) for m, v in values.items()}
                for i, values in data["queries"].items()
            }
            groups = {
                str(g): {m: _opt(v) for m, v in values.items()}
                for g, values in data["groups"].items()
            }
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise _corrupt(
                where, f"malformed metrics or query values ({exc!r})"
            ) from None
        return cls(
            test=data["test"],
            config=data["config"],
            corpus_hash=data["corpus_hash"],
            queries_hash=data["queries_hash"],
            metrics=metrics,
            groups=groups,
            queries=queries,
            chunks=dict(data.get("chunks") or {}),
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Baseline:
        """Read a baseline file; anything wrong is :class:`BaselineCorrupt`."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise _corrupt(str(path), f"not UTF-8 text ({exc.reason})") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _corrupt(
                str(path), f"invalid JSON at line {exc.lineno} column {exc.colno}"
            ) from None
        return cls.from_json(data, str(path))


def _corrupt(where: str, what: str) -> BaselineCorrupt:
    return BaselineCorrupt(f"baseline {where} is unreadable: {what}", Path(where))


def _f(value: Any) -> float:
    return math.nan if value is None else float(value)


def _opt(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number or null, got {value!r}")
    return float(value)


def render(data: Mapping[str, Any]) -> str:
    """JSON with sorted keys: top-level and second-level keys one per line, anything
    deeper compact on its line (one query, one metric, one corpus per line)."""

    def compact(value: Any) -> str:
        return json.dumps(
            value, sort_keys=True, ensure_ascii=False, separators=(", ", ": ")
        )

    lines = ["{"]
    top = sorted(data)
    for i, key in enumerate(top):
        value = data[key]
        comma = "," if i < len(top) - 1 else ""
        if isinstance(value, Mapping) and value:
            lines.append(f" {compact(key)}: {{")
            inner = sorted(value)
            for j, sub in enumerate(inner):
                sub_comma = "," if j < len(inner) - 1 else ""
                lines.append(f"  {compact(sub)}: {compact(value[sub])}{sub_comma}")
            lines.append(f" }}{comma}")
        else:
            lines.append(f" {compact(key)}: {compact(value)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ drift


def _show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def changes(baseline: Baseline, result: EvalResult) -> list[str]:
    """What differs between the baseline's configuration/data and ``result``'s,
    one phrase per difference (empty: they match)."""
    out = []
    current = {k: v for k, v in result.config.items() if k not in VOLATILE_CONFIG_KEYS}
    for key in [*baseline.config, *(k for k in current if k not in baseline.config)]:
        old, new = baseline.config.get(key), current.get(key)
        if old != new and not (key == "embedder_identity" and _unresolved(old, new)):
            out.append(f"{key}: {_show(old)} -> {_show(new)}")
    if baseline.corpus_hash != result.corpus_hash:
        out.append("corpus hash changed (document set or text edited)")
    if baseline.queries_hash != result.queries_hash:
        before = set(baseline.queries)
        after = {q.id for q in result.queries}
        added, removed = sorted(after - before), sorted(before - after)
        detail = []
        if added:
            detail.append(f"{len(added)} added ({_few(added)})")
        if removed:
            detail.append(f"{len(removed)} removed ({_few(removed)})")
        if not detail:
            detail.append(f"same {len(after)} query ids: questions or excerpts edited")
        out.append(f"query set hash changed ({'; '.join(detail)})")
    return out


_RESOLVED = re.compile(r":d\d+(:bf16)?$")


def _unresolved(old: object, new: object) -> bool:
    """Whether two identities of one model differ only because one of them could not
    be resolved yet: a hub model that is not downloaded is known by name and revision
    (``…@main``), a downloaded one by its weights (``…@<digest>:d384``). A fresh CI
    runner must not fail every baseline for that."""
    if not (isinstance(old, str) and isinstance(new, str)):
        return False
    if old.endswith(":bf16") != new.endswith(":bf16"):
        return False  # another precision is another set of vectors
    same_model = old.split("@", 1)[0] == new.split("@", 1)[0]
    return same_model and not (_RESOLVED.search(old) and _RESOLVED.search(new))


def _few(items: Sequence[str], n: int = 3) -> str:
    return ", ".join(items[:n]) + (", ..." if len(items) > n else "")


# ------------------------------------------------------------------ store


OUTCOMES = (
    "passed",
    "improved",
    "created",
    "updated",
    "unchanged",
    "missing",
    "corrupt",
    "mismatch",
    "regressed",
)


@dataclass(frozen=True)
class CheckOutcome:
    """What one baseline check did, for the terminal summary (JSON-serializable)."""

    nodeid: str
    path: str
    status: str  # one of OUTCOMES
    message: str = ""

    def to_json(self) -> dict[str, str]:
        return {
            "nodeid": self.nodeid,
            "path": self.path,
            "status": self.status,
            "message": self.message,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CheckOutcome:
        return cls(
            str(data["nodeid"]),
            str(data["path"]),
            str(data["status"]),
            str(data.get("message", "")),
        )


class BaselineStore:
    """One session's baselines: checks, writes (update mode only), and the
    bookkeeping for unused files and the summary.

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
    ) -> None:
        self.update = update
        self.layout = layout or BaselineLayout()
        self.gate = gate or GateSettings()
        self.update_command = update_command
        self.touched: set[Path] = set()
        self.outcomes: list[CheckOutcome] = []
        self.removed: list[Path] = []
        self.collected: set[str] = set()
        self.passed: set[str] = set()
        self.partial: set[str] = set()
        self._counts: dict[str, int] = {}

    # -- one test ---------------------------------------------------------------

    def begin(self, nodeid: str) -> None:
        """Start (or restart, e.g. on a rerun) numbering a test's unnamed baselines."""
        self._counts.pop(nodeid, None)

    def path_for(self, test: NodeRef, name: str | None = None) -> Path:
        """The file of the test's next baseline: ``<test>.json`` for its first
        unnamed check, then ``<test>.2.json``...; ``<test>.<name>.json`` if named."""
        if name is None:
            count = self._counts[test.nodeid] = self._counts.get(test.nodeid, 0) + 1
            name = None if count == 1 else str(count)
        return self.layout.path(test.path, test.name, name)

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
    ) -> CheckOutcome:
        """Compare ``result`` with the test's baseline (or write it in update mode).

        Raises a :class:`BaselineError` subclass when the test should fail; returns
        the outcome otherwise (``improved`` outcomes carry the update hint). The
        call's ``tolerance``/``mode``/``confidence`` override the session's.
        """
        settings = self.gate.override(
            tolerance=tolerance, mode=mode, confidence=confidence
        )
        path = self.path_for(test, name)
        key = _abs(path)
        self.touched.add(key)
        shown = self._shown(path)
        if self.update:
            return self._record(self._write(result, test, path, shown, settings))
        if not path.is_file():
            outcome = CheckOutcome(
                test.nodeid,
                shown,
                "missing",
                f"no baseline for {test.nodeid}: {shown} does not exist. Create it "
                f"with:\n  {self.command(test.nodeid)}",
            )
            self._record(outcome)
            raise BaselineMissing(outcome.message, path)
        try:
            baseline = Baseline.load(path)
        except BaselineCorrupt as exc:
            message = (
                f"{exc}\nIt is left untouched; regenerate it with:\n"
                f"  {self.command(test.nodeid)}"
            )
            self._record(CheckOutcome(test.nodeid, shown, "corrupt", message))
            raise BaselineCorrupt(message, path) from None
        problems = changes(baseline, result)
        if baseline.test != test.name:
            problems.insert(
                0, f"the file belongs to test {baseline.test!r}, not {test.name!r}"
            )
        if problems:
            message = (
                f"baseline {shown} was made under another configuration or "
                f"dataset, so its metrics are not comparable (this is not a metric "
                f"regression):\n  "
                + "\n  ".join(problems)
                + f"\nIf the change is intended, re-record the baseline:\n  "
                f"{self.command(test.nodeid)}"
            )
            self._record(CheckOutcome(test.nodeid, shown, "mismatch", message))
            raise BaselineMismatch(message, path)
        try:
            report = compare(baseline, result, settings)
        except GateError as exc:
            message = f"baseline {shown}: {exc}"
            self._record(CheckOutcome(test.nodeid, shown, "mismatch", message))
            raise BaselineMismatch(message, path) from None
        if not report.passed:
            message = format_failure(
                report, test=test.nodeid, path=shown, command=self.command(test.nodeid)
            )
            self._record(CheckOutcome(test.nodeid, shown, "regressed", message))
            raise BaselineRegression(message, path, report)
        if report.improved:
            message = format_improvement(
                report, test=test.nodeid, command=self.command(test.nodeid)
            )
            return self._record(CheckOutcome(test.nodeid, shown, "improved", message))
        return self._record(CheckOutcome(test.nodeid, shown, "passed"))

    def _write(
        self,
        result: EvalResult,
        test: NodeRef,
        path: Path,
        shown: str,
        settings: GateSettings,
    ) -> CheckOutcome:
        text = Baseline.from_result(result, test.name).to_text()
        if not path.is_file():
            atomic_write_text(path, text)
            return CheckOutcome(test.nodeid, shown, "created", f"created {shown}")
        try:
            old_text: str | None = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            old_text = None
        if old_text == text:
            return CheckOutcome(test.nodeid, shown, "unchanged")
        atomic_write_text(path, text)
        return CheckOutcome(
            test.nodeid,
            shown,
            "updated",
            f"updated {shown}{_what_changed(path, old_text, result, settings)}",
        )

    def _record(self, outcome: CheckOutcome) -> CheckOutcome:
        self.outcomes.append(outcome)
        return outcome

    def _shown(self, path: Path) -> str:
        root = self.layout.rootdir
        if root is not None:
            try:
                return str(_abs(path).relative_to(_abs(Path(root))))
            except ValueError:
                pass
        return str(path)

    # -- session end ------------------------------------------------------------

    def note_collected(self, nodeids: Iterable[str]) -> None:
        """Record collected tests (deselected ones included) for :meth:`unused`."""
        self.collected.update(nodeids)

    def note_passed(self, nodeid: str) -> None:
        """Record a test that passed, for :meth:`unused`."""
        self.passed.add(nodeid)

    def note_partial(self, test_files: Iterable[str | os.PathLike[str]]) -> None:
        """Record test files the command line selected by node id
        (``pytest 't.py::test_x[a]'``): only some of their tests were collected, so
        :meth:`unused` leaves their baselines alone."""
        self.partial.update(os.fspath(f) for f in test_files)

    def unused(
        self,
        collected: Iterable[NodeRef] | None = None,
        passed: Iterable[str] | None = None,
        partial: Iterable[str | os.PathLike[str]] | None = None,
    ) -> list[Path]:
        """Baseline files no test used, among the modules this session collected.

        ``collected``: every collected test, deselected ones included; ``passed``:
        node ids of the tests that passed (default: what :meth:`note_collected` and
        :meth:`note_passed` recorded, merged from workers; node ids resolve against
        the layout's rootdir). Files of a test that did not pass (failed, skipped,
        deselected, not reached) are never reported: the test may still use them.
        Files of a test module that no longer exists are reported; modules not
        collected in this session (``pytest tests/test_a.py``) are left alone, and
        so are those collected in part: ``partial`` (default: what
        :meth:`note_partial` recorded) lists test files selected by node id, whose
        other tests' files have no owner in this session but are not unused.
        """
        if collected is None:
            root = self.layout.rootdir or Path.cwd()
            collected = [NodeRef.from_nodeid(n, root) for n in sorted(self.collected)]
        collected = list(collected)
        passed_ids = set(self.passed if passed is None else passed)
        # Real paths: the command line's paths (relative to the invocation
        # directory) and node ids (relative to rootdir) may differ by a symlink.
        partial_files = {
            _real(Path(f)) for f in (self.partial if partial is None else partial)
        }
        modules: dict[Path, list[NodeRef]] = {}
        for ref in collected:
            modules.setdefault(_abs(ref.path), []).append(ref)
        roots = {self.layout.scan_root(f) for f in modules}
        unused = []
        for root in sorted(roots):
            for file in self.layout.files_under(root):
                if _abs(file) in self.touched:
                    continue
                test_file = _abs(self.layout.test_file_of(file.parent))
                if partial_files and _real(test_file) in partial_files:
                    continue  # only some of its tests were collected
                tests = modules.get(test_file)
                if tests is None:
                    if not test_file.exists():
                        unused.append(file)  # its test module was deleted or renamed
                    continue
                owners = [t for t in tests if _owns(t.name, file.stem)]
                if all(t.nodeid in passed_ids for t in owners):
                    unused.append(file)
        return unused

    def remove(self, paths: Iterable[Path]) -> list[Path]:
        """Delete baseline files (update mode) and the directories they leave empty."""
        removed = []
        for path in paths:
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(path)
            for parent in self.layout.empty_candidates(path):
                if parent.is_dir() and not any(parent.iterdir()):
                    parent.rmdir()
        self.removed += removed
        return removed

    def worker_payload(self) -> dict[str, Any]:
        """What an xdist worker sends the controller (JSON-serializable)."""
        return {
            "touched": sorted(str(p) for p in self.touched),
            "outcomes": [o.to_json() for o in self.outcomes],
            "collected": sorted(self.collected),
            "passed": sorted(self.passed),
            "partial": sorted(self.partial),
        }

    def merge_payload(self, payload: Mapping[str, Any]) -> None:
        """Add a worker's bookkeeping to this (controller) store."""
        self.touched.update(Path(p) for p in payload.get("touched", []))
        self.collected.update(payload.get("collected", []))
        self.passed.update(payload.get("passed", []))
        self.partial.update(payload.get("partial", []))
        self.outcomes += [
            CheckOutcome.from_json(o) for o in payload.get("outcomes", [])
        ]

    def failed(self) -> bool:
        """True when some check failed (missing, corrupt, mismatch, regressed)."""
        return any(o.status in _FAILED for o in self.outcomes)

    def summary_lines(self, unused: Sequence[Path] = ()) -> list[str]:
        """Lines for the terminal summary: counts, improvements, unused files."""
        if not self.outcomes and not unused and not self.removed:
            return []
        counts: dict[str, int] = {}
        for o in self.outcomes:
            counts[o.status] = counts.get(o.status, 0) + 1
        parts = [f"{counts[s]} {s}" for s in OUTCOMES if counts.get(s)]
        lines = [f"baselines: {', '.join(parts) or 'none checked'}"]
        for o in self.outcomes:
            if o.status in ("improved", "updated", "created") and o.message:
                lines.append(f"  {o.message}")
        if self.removed:
            lines.append(f"removed {len(self.removed)} unused baseline(s):")
            lines += [f"  {self._shown(p)}" for p in self.removed]
        elif unused:
            lines.append(
                f"{len(unused)} unused baseline(s) (no test used them; "
                f"`{self.update_command}` removes them):"
            )
            lines += [f"  {self._shown(p)}" for p in unused]
        return lines


_FAILED = frozenset({"missing", "corrupt", "mismatch", "regressed"})


def _owns(test: str, stem: str) -> bool:
    own = sanitize_name(test)
    return stem == own or stem.startswith(own + ".")


def _what_changed(
    path: Path, old_text: str | None, result: EvalResult, settings: GateSettings
) -> str:
    """``: recall 31.38 -> 33.10, iou …`` for an updated file, when comparable."""
    if old_text is None:
        return ""
    try:
        old = Baseline.from_json(json.loads(old_text), str(path))
    except (BaselineCorrupt, json.JSONDecodeError):
        return " (the old file was unreadable)"
    problems = changes(old, result)
    if problems:
        return f" ({'; '.join(problems)})"
    moved = []
    for metric, _ in settings.gated():
        if metric in old.metrics and metric in result.metrics:
            before = old.metrics[metric].mean
            after = round(result.metrics[metric].mean, MEAN_DECIMALS)
            if not (math.isnan(before) or math.isnan(after)) and before != after:
                moved.append(f"{metric} {100 * before:.2f} -> {100 * after:.2f}")
    return f": {', '.join(moved)}" if moved else ""
