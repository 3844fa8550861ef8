"""The plugin's state for one pytest run, without pytest.

:class:`ChunkevalSession` resolves settings into a corpus, queries, embedder and
store, memoizes results by full configuration (twenty tests asserting on one
configuration evaluate it once), collects them for the terminal summary and merges
what pytest-xdist workers send. :class:`Evaluator` is what the ``chunkeval`` fixture
gives a test: the configuration after its marker, ``evaluate`` / ``score`` and
``check_baseline``. At the end, :meth:`ChunkevalSession.finish` (controller only)
handles unused baselines, the history file and the reports.

Engine modules (numpy, tokenizers, registries) are imported on first use only.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import shlex
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from pytest_chunkeval.config.options import (
    DEFAULT_EMBEDDER,
    DEFAULT_K,
    DEFAULT_STORE,
    DEFAULT_UNIT,
    K,
    Settings,
    SettingsError,
    parse_k,
    parse_spec,
    parse_unit,
)

if TYPE_CHECKING:
    from pytest_chunkeval.chunkers import Chunker
    from pytest_chunkeval.config.registry import Registry
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.embedders.base import Embedder
    from pytest_chunkeval.engine.cache import EmbeddingCache
    from pytest_chunkeval.engine.results import EvalResult
    from pytest_chunkeval.gate.baseline import BaselineStore, CheckOutcome
    from pytest_chunkeval.reporting.reports import ReportEntry
    from pytest_chunkeval.stores import AnyStore

T = TypeVar("T")

THRESHOLDS: dict[str, str] = {
    "min_recall": "recall",
    "min_precision": "precision",
    "min_iou": "iou",
    "min_f1": "f1",
    "min_precision_omega": "precision_omega",
}


class ChunkevalError(Exception):
    """A configuration problem met while running a test; the message says how to
    fix it. The plugin reports it as a test failure without a traceback."""


class MarkerError(ChunkevalError):
    """``@pytest.mark.chunkeval(...)`` has an unknown keyword or a bad value."""


# ------------------------------------------------------------------------ marker


def _marker_paths(value: object) -> tuple[str, ...]:
    items = [value] if isinstance(value, (str, os.PathLike)) else value
    if not isinstance(items, (list, tuple)) or not items:
        raise argparse.ArgumentTypeError(
            f"must be a path, a glob or a list of them, got {value!r}"
        )
    out = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)) or not os.fspath(item).strip():
            raise argparse.ArgumentTypeError(
                f"must be a path, a glob or a list of them, got {value!r}"
            )
        out.append(os.fspath(item).strip())
    return tuple(out)


def _marker_path(value: object) -> str:
    if not isinstance(value, (str, os.PathLike)) or not os.fspath(value).strip():
        raise argparse.ArgumentTypeError(f"must be a path, got {value!r}")
    return os.fspath(value).strip()


def _marker_str(kind: str) -> Callable[[object], str]:
    def parse(value: object) -> str:
        if not isinstance(value, str):
            raise argparse.ArgumentTypeError(
                f"must be a spec string naming the {kind}, got "
                f"{type(value).__name__} {value!r}"
            )
        return parse_spec(value, kind)

    return parse


def _marker_k(value: object) -> K:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise argparse.ArgumentTypeError(
            f"must be a positive integer or 'min', got {value!r}"
        )
    return parse_k(value)


def _marker_unit(value: object) -> str:
    if not isinstance(value, str):
        raise argparse.ArgumentTypeError(f"must be 'token' or 'char', got {value!r}")
    return parse_unit(value)


def _marker_fraction(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise argparse.ArgumentTypeError(
            f"must be a number between 0 and 1, got {type(value).__name__} {value!r}"
        )
    if not 0.0 <= float(value) <= 1.0:
        raise argparse.ArgumentTypeError(
            f"must be between 0 and 1 (a fraction: 0.8 means 80%), got {value!r}"
        )
    return float(value)


def _marker_bool(value: object) -> bool:
    if not isinstance(value, bool):
        raise argparse.ArgumentTypeError(f"must be True or False, got {value!r}")
    return value


def _marker_benchmark(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise argparse.ArgumentTypeError(
            f"must be a bundled benchmark name such as 'general', got {value!r}"
        )
    return value.strip()


MARKER_KEYWORDS: dict[str, Callable[[object], Any]] = {
    "corpus": _marker_paths,
    "queries": _marker_path,
    "benchmark": _marker_benchmark,
    "k": _marker_k,
    "unit": _marker_unit,
    "embedder": _marker_str("embedder"),
    "store": _marker_str("store"),
    "tokenizer": _marker_str("tokenizer"),
    **dict.fromkeys(THRESHOLDS, _marker_fraction),
    "baseline": _marker_bool,
}
"""Every keyword ``@pytest.mark.chunkeval`` accepts, with its validator."""


@dataclass(frozen=True)
class MarkerOptions:
    """A test's ``@pytest.mark.chunkeval`` keywords, validated."""

    overrides: Mapping[str, Any] = field(default_factory=dict)
    thresholds: Mapping[str, float] = field(default_factory=dict)
    """metric -> minimum mean."""
    baseline: bool = False
    """Compare every result the test produced with its baseline, after the test."""


def parse_marker(
    marks: Sequence[tuple[Sequence[object], Mapping[str, object]]], test: str
) -> MarkerOptions:
    """Merge marker applications (closest first: a function's marker overrides its
    class's and module's) and validate them; :class:`MarkerError` names ``test``."""
    merged: dict[str, Any] = {}
    for args, kwargs in reversed(list(marks)):
        if args:
            raise MarkerError(
                f"{test}: @pytest.mark.chunkeval takes keyword arguments only, "
                f"got positional {', '.join(map(repr, args))}"
            )
        if "corpus" in kwargs and "benchmark" in kwargs:
            raise MarkerError(
                f"{test}: @pytest.mark.chunkeval: corpus= and benchmark= are "
                "exclusive (a benchmark brings its own corpus)"
            )
        for key, value in kwargs.items():
            if key not in MARKER_KEYWORDS:
                close = difflib.get_close_matches(key, MARKER_KEYWORDS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise MarkerError(
                    f"{test}: @pytest.mark.chunkeval got an unknown keyword "
                    f"{key!r}{hint}; valid: {', '.join(MARKER_KEYWORDS)}"
                )
            try:
                parsed = MARKER_KEYWORDS[key](value)
            except argparse.ArgumentTypeError as exc:
                raise MarkerError(
                    f"{test}: @pytest.mark.chunkeval({key}={value!r}): "
                    + _naming(key, str(exc))
                ) from None
            if key in ("corpus", "benchmark"):
                merged.pop("benchmark" if key == "corpus" else "corpus", None)
            merged[key] = parsed
    thresholds = {THRESHOLDS[k]: merged.pop(k) for k in list(merged) if k in THRESHOLDS}
    baseline = bool(merged.pop("baseline", False))
    return MarkerOptions(merged, thresholds, baseline)


def _naming(key: str, message: str) -> str:
    """``message`` starting with ``key`` once: the validators shared with the
    settings (``k must be…``, ``embedder spec must…``) name it already, the
    marker's own (``must be a path…``) do not."""
    return message if message.startswith(f"{key} ") else f"{key} {message}"


# ------------------------------------------------------------------ run config


@dataclass(frozen=True)
class RunConfig:
    """Everything an evaluation depends on, except the chunker (or retriever)."""

    rootdir: str
    corpus: tuple[str, ...]
    queries: str | None
    benchmark: str | None
    embedder: str
    store: str
    k: K
    unit: str
    tokenizer: str | None
    cache_dir: str
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)
    """Where each dataset setting came from, for error messages."""

    @classmethod
    def from_settings(
        cls, settings: Settings, marker: MarkerOptions | None = None
    ) -> RunConfig:
        """The settings, with a test's marker keywords on top."""
        values: dict[str, Any] = {
            "corpus": settings.corpus,
            "queries": settings.queries,
            "benchmark": settings.benchmark,
            "embedder": settings.embedder or DEFAULT_EMBEDDER,
            "store": settings.store or DEFAULT_STORE,
            "k": settings.k if settings.k is not None else DEFAULT_K,
            "unit": settings.unit or DEFAULT_UNIT,
            "tokenizer": settings.tokenizer,
        }
        origins = {
            key: f"chunkeval_{key} / --chunkeval-{key}"
            for key in ("corpus", "queries", "benchmark")
            if values[key]
        }
        overrides = dict(marker.overrides) if marker else {}
        if "corpus" in overrides:
            values["benchmark"] = None
        if "benchmark" in overrides:
            # A benchmark brings its own queries, unless the marker names others.
            values["corpus"] = ()
            values["queries"] = None
        for key, value in overrides.items():
            values[key] = value
            origins[key] = f"@pytest.mark.chunkeval({key}=...)"
        return cls(
            rootdir=settings.rootdir,
            cache_dir=settings.cache_dir,
            origins=origins,
            **values,
        )

    def path(self, relative: str) -> Path:
        """``relative`` resolved against rootdir (``~`` expanded)."""
        return Path(self.rootdir) / Path(relative).expanduser()

    @property
    def dataset_key(self) -> tuple[object, ...]:
        corpus = (
            ("benchmark", self.benchmark)
            if self.benchmark
            else tuple(str(self.path(p)) for p in self.corpus)
        )
        queries = str(self.path(self.queries)) if self.queries else None
        return (corpus, queries)

    @property
    def key(self) -> tuple[object, ...]:
        """Identifies the configuration: equal keys give equal results."""
        return (
            self.dataset_key,
            self.embedder,
            self.store,
            self.k,
            self.unit,
            self.tokenizer if self.unit == "token" else None,
            self.cache_dir,
        )


GENERATE_EXAMPLE = ("--n", "200", "--model", "gpt-4o-mini")
"""Required ``chunkeval generate`` arguments, with example values."""


def generate_command(corpus: Sequence[str], queries: str) -> str:
    """The ``chunkeval generate`` command whose filtered output is ``queries``.

    ``generate`` appends to a raw log (``--out``) and writes the filtered set, the
    file tests read, to ``--filtered-out``; the raw log goes next to it.
    """
    path = Path(queries)
    if path.name.endswith(".filtered.jsonl"):
        raw = path.name[: -len(".filtered.jsonl")] + ".jsonl"
    else:
        raw = path.stem + ".raw.jsonl"
    raw_path = str(path.with_name(raw))
    args = ["chunkeval", "generate", "--corpus", *corpus]
    args += ["--out", raw_path, "--filtered-out", queries, *GENERATE_EXAMPLE]
    return shlex.join(args)


# ----------------------------------------------------------------- summary rows


@dataclass
class SummaryRow:
    """One evaluated configuration: its result (without per-query detail) and the
    tests that asserted on it."""

    key: str
    result: dict[str, Any]
    nodeids: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "result": self.result, "nodeids": self.nodeids}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SummaryRow:
        return cls(str(data["key"]), dict(data["result"]), list(data["nodeids"]))


@dataclass(frozen=True)
class RecordedResult:
    """A result a test produced (``reused``: taken from the memo)."""

    nodeid: str
    result: EvalResult
    reused: bool


# ----------------------------------------------------------------------- session


def _fail(message: str) -> NoReturn:
    raise ChunkevalError(message)


Register = Callable[[str, "Registry[Any]"], None]


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
    ) -> None:
        self.settings = settings
        self.worker_id = worker_id
        self.evaluations = 0
        """Evaluations actually run (memo misses)."""
        self.reused = 0
        """Results served from the memo."""
        self.results: list[RecordedResult] = []
        self.rows: dict[str, SummaryRow] = {}
        self._register = register
        self._registered = False
        self._memo: dict[tuple[object, ...], EvalResult] = {}
        self._errors: dict[tuple[object, ...], str] = {}
        self._datasets: dict[tuple[object, ...], Any] = {}
        self._chunkers: dict[str, Chunker] = {}
        self._chunker_specs: dict[int, str] = {}
        self._stores: dict[str, AnyStore] = {}
        self._caches: dict[str, EmbeddingCache] = {}
        self._keep_alive: list[object] = []
        self._default_run: RunConfig | None = None
        self._baselines: BaselineStore | None = None
        self.end: SessionEnd | None = None
        """What :meth:`finish` did (controller or single process)."""

    # -- registries -------------------------------------------------------------

    def ensure_registered(self) -> None:
        """Let hooks register names (once), before any spec is resolved."""
        if self._registered:
            return
        self._registered = True
        if self._register is None:
            return
        from pytest_chunkeval.chunkers import CHUNKERS
        from pytest_chunkeval.embedders.base import EMBEDDERS
        from pytest_chunkeval.stores import STORES

        self._register("chunkers", CHUNKERS)
        self._register("embedders", EMBEDDERS)
        self._register("stores", STORES)

    def validate(self) -> None:
        """Check that every configured name exists; :class:`SettingsError` if not.

        Cheap when nothing is configured (nothing is imported then)."""
        s = self.settings
        if not s.configured:
            return
        self.ensure_registered()
        checks: list[tuple[str, str, Callable[[str], object]]] = [
            ("chunkeval_chunkers", spec, self.chunker) for spec in s.chunkers
        ]
        if s.embedder:
            checks.append(("chunkeval_embedder", s.embedder, _embedder))
        if s.store:
            checks.append(("chunkeval_store", s.store, self.store))
        if s.tokenizer and (s.unit or DEFAULT_UNIT) == "token":
            checks.append(("chunkeval_tokenizer", s.tokenizer, _tokenizer))
        if s.benchmark:
            checks.append(("chunkeval_benchmark", s.benchmark, _check_benchmark))
        for where, spec, make in checks:
            try:
                make(spec)
            except (ChunkevalError, ValueError, TypeError, RuntimeError) as exc:
                raise SettingsError(f"{where}: {exc}") from None

    # -- components -------------------------------------------------------------

    def chunker(self, spec: object) -> Chunker:
        """The chunker a spec string names (one object per spec per session); any
        other object is adapted (a function ``str -> list[str]``, a splitter)."""
        self.ensure_registered()
        from pytest_chunkeval.chunkers import get_chunker
        from pytest_chunkeval.config.registry import UnknownSpec

        if not isinstance(spec, str):
            return get_chunker(spec)
        if spec not in self._chunkers:
            try:
                chunker = get_chunker(spec)
            except UnknownSpec as exc:
                raise ChunkevalError(str(exc)) from None
            self._chunkers[spec] = chunker
            self._chunker_specs[id(chunker)] = spec
        return self._chunkers[spec]

    def chunker_specs(self, test: str) -> list[str]:
        """What ``chunkeval_chunker`` is parametrized over (an error if nothing)."""
        if not self.settings.chunkers:
            raise ChunkevalError(
                f"{test} uses chunkeval_chunker but no chunker is configured: set "
                "chunkeval_chunkers (e.g. chunkeval_chunkers = "
                '["recursive:200:0", "fixed:400:0"] in [tool.pytest.ini_options]) '
                "or pass --chunkeval-chunkers recursive:200:0"
            )
        return list(self.settings.chunkers)

    @property
    def default_run(self) -> RunConfig:
        """The configuration of the settings alone (no marker)."""
        if self._default_run is None:
            self._default_run = RunConfig.from_settings(self.settings)
        return self._default_run

    def embedder(self, spec: str | None = None) -> Embedder:
        """The embedder a spec names (default: all-MiniLM-L6-v2); one per spec."""
        self.ensure_registered()
        from pytest_chunkeval.embedders.base import get_embedder

        return get_embedder(spec)

    def store(self, spec: str = DEFAULT_STORE) -> AnyStore:
        """The store a spec names (one client per spec per session)."""
        if spec not in self._stores:
            self.ensure_registered()
            from pytest_chunkeval.stores import get_store

            self._stores[spec] = get_store(spec)
        return self._stores[spec]

    def cache(self, directory: str) -> EmbeddingCache:
        if directory not in self._caches:
            from pytest_chunkeval.engine.cache import EmbeddingCache

            self._caches[directory] = EmbeddingCache(directory)
        return self._caches[directory]

    # -- datasets ---------------------------------------------------------------

    def corpus(self, run: RunConfig) -> Corpus:
        """The corpus of ``run`` (read once per session)."""
        key = ("corpus", run.dataset_key[0])
        if key not in self._datasets:
            self._datasets[key] = self._load_corpus(run)
        corpus: Corpus = self._datasets[key]
        return corpus

    def _load_corpus(self, run: RunConfig) -> Corpus:
        if run.benchmark:
            return self._benchmark(run)[0]
        if not run.corpus:
            raise ChunkevalError(
                "no corpus configured for chunkeval: set chunkeval_corpus and "
                'chunkeval_queries (or chunkeval_benchmark = "general") in '
                "[tool.pytest.ini_options], pass --chunkeval-corpus / "
                "--chunkeval-benchmark, or mark the test with "
                "@pytest.mark.chunkeval(corpus=..., queries=...)"
            )
        from pytest_chunkeval.data.corpus import Corpus, CorpusError

        paths = [str(run.path(p)) for p in run.corpus]
        try:
            return Corpus.from_paths(paths)
        except CorpusError as exc:
            where = run.origins.get("corpus", "chunkeval_corpus")
            raise ChunkevalError(
                f"cannot read the corpus {list(run.corpus)} (from {where}, relative "
                f"to rootdir {run.rootdir}): {exc}"
            ) from None

    def _benchmark(self, run: RunConfig) -> tuple[Corpus, QuerySet]:
        from pytest_chunkeval.config.registry import UnknownSpec
        from pytest_chunkeval.data.benchmarks import load_benchmark

        assert run.benchmark is not None
        try:
            return load_benchmark(run.benchmark)
        except UnknownSpec as exc:
            raise ChunkevalError(str(exc)) from None

    def queries(self, run: RunConfig) -> QuerySet:
        """The validated query set of ``run`` (read once per session)."""
        key = ("queries", run.dataset_key)
        if key not in self._datasets:
            self._datasets[key] = self._load_queries(run)
        queries: QuerySet = self._datasets[key]
        return queries

    def _load_queries(self, run: RunConfig) -> QuerySet:
        if run.benchmark and not run.queries:
            return self._benchmark(run)[1]
        corpus = self.corpus(run)
        if not run.queries:
            raise ChunkevalError(
                f"no query set configured for the corpus {list(run.corpus)}: set "
                "chunkeval_queries (or --chunkeval-queries, or the marker's "
                "queries=). To create one:\n\n    "
                + generate_command(run.corpus, "queries.filtered.jsonl")
                + f"\n\n(run in {run.rootdir}; choose --n and --model, see "
                "`chunkeval generate --help`)"
            )
        path = run.path(run.queries)
        where = run.origins.get("queries", "chunkeval_queries")
        if not path.exists():
            corpus_args = list(run.corpus) or [f"<the {run.benchmark} corpus>"]
            raise ChunkevalError(
                f"query set {run.queries} (from {where}) does not exist: {path}\n"
                "Generate it from the corpus with:\n\n    "
                + generate_command(corpus_args, run.queries)
                + f"\n\n(run in {run.rootdir}; choose --n and --model, see "
                "`chunkeval generate --help`)"
            )
        from pytest_chunkeval.data.queries import QuerySet, QuerySetError

        try:
            return QuerySet.load(path, corpus)
        except (QuerySetError, OSError) as exc:
            raise ChunkevalError(
                f"cannot load the query set (from {where}): {exc}"
            ) from None

    # -- evaluation ---------------------------------------------------------------

    def evaluator(
        self,
        nodeid: str,
        marker: MarkerOptions | None = None,
        *,
        path: str | os.PathLike[str] | None = None,
        chunker: object = None,
        fail: Callable[[str], NoReturn] = _fail,
    ) -> Evaluator:
        """The evaluator for one test (``chunker``: its ``chunkeval_chunker``)."""
        run = RunConfig.from_settings(self.settings, marker)
        return Evaluator(
            self,
            run,
            nodeid,
            marker=marker or MarkerOptions(),
            path=None if path is None else Path(path),
            default_chunker=chunker,
            fail=fail,
        )

    def _chunker_key(self, chunker: object) -> tuple[str, object]:
        if isinstance(chunker, str):
            return ("spec", chunker.strip())
        spec = self._chunker_specs.get(id(chunker))
        if spec is not None:
            return ("spec", spec)
        # Arbitrary objects: same object, same result. Kept alive so that its id
        # is never reused by another object during the session.
        self._keep_alive.append(chunker)
        return ("object", id(chunker))

    def evaluate(
        self,
        run: RunConfig,
        chunker: object,
        *,
        nodeid: str,
        k: K | None = None,
        label: str | None = None,
    ) -> EvalResult:
        """The result of ``chunker`` under ``run`` (memoized by configuration)."""
        from pytest_chunkeval.engine.evaluate import evaluate

        if k is not None:
            run = dataclasses.replace(run, k=k)
        key = ("evaluate", run.key, self._chunker_key(chunker))

        def compute() -> EvalResult:
            self.ensure_registered()
            obj = self.chunker(chunker) if isinstance(chunker, str) else chunker
            return evaluate(
                obj,  # type: ignore[arg-type]
                self.corpus(run),
                self.queries(run),
                embedder=run.embedder,
                store=self.store(run.store),
                k=run.k,
                unit=run.unit,
                tokenizer=run.tokenizer,
                cache=self.cache(run.cache_dir),
                progress=None,
            )

        return self._memoized(key, compute, nodeid, label)

    def score(
        self,
        run: RunConfig,
        retriever: object,
        *,
        nodeid: str,
        label: str | None = None,
    ) -> EvalResult:
        """The result of a whole retriever (memoized by dataset and object).

        Its summary row is named by ``label`` (else a module-level function's
        qualified name): results under one label share a row, across xdist
        workers too, so give different retrievers different labels."""
        from pytest_chunkeval.engine.evaluate import score

        # Memoized by identity (kept alive: its id is never reused), but its summary
        # row is named by the label or the function's name, so that workers
        # scoring one retriever share a row.
        self._keep_alive.append(retriever)
        data = (
            "score",
            run.dataset_key,
            run.unit,
            run.tokenizer if run.unit == "token" else None,
        )
        key = (*data, ("object", id(retriever)))
        row = (*data, _retriever_key(retriever, label))

        def compute() -> EvalResult:
            name = getattr(retriever, "__qualname__", type(retriever).__qualname__)
            return score(
                retriever,
                self.corpus(run),
                self.queries(run),
                unit=run.unit,
                tokenizer=run.tokenizer,
                label=label or name,
            )

        return self._memoized(key, compute, nodeid, label, row=row)

    def _memoized(
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
            raise ChunkevalError(self._errors[key])
        result = self._memo.get(key)
        reused = result is not None
        if result is None:
            try:
                result = compute()
            except _user_errors() as exc:
                self._errors[key] = str(exc)
                raise ChunkevalError(str(exc)) from None
            self._memo[key] = result
            self.evaluations += 1
        else:
            self.reused += 1
        if label is not None and label != result.label:
            result = dataclasses.replace(result, label=label)
        self._record(key if row is None else row, nodeid, result, reused)
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
        row = self.rows.get(key)
        if row is None:
            row = self.rows[key] = SummaryRow(key, result.to_json(details=False))
        if nodeid not in row.nodeids:
            row.nodeids.append(nodeid)

    # -- xdist ------------------------------------------------------------------

    def worker_payload(self) -> dict[str, Any]:
        """What a worker sends to the controller (JSON-serializable)."""
        payload: dict[str, Any] = {
            "evaluations": self.evaluations,
            "reused": self.reused,
            "rows": [row.to_json() for row in self.rows.values()],
        }
        if self._baselines is not None:
            payload["baselines"] = self._baselines.worker_payload()
        return payload

    def merge_payload(self, payload: Mapping[str, Any]) -> None:
        """Add a worker's results to this (controller) session."""
        self.evaluations += int(payload.get("evaluations", 0))
        self.reused += int(payload.get("reused", 0))
        if "baselines" in payload:
            self.baselines.merge_payload(payload["baselines"])
        for data in payload.get("rows", []):
            row = SummaryRow.from_json(data)
            mine = self.rows.get(row.key)
            if mine is None:
                self.rows[row.key] = row
            else:
                mine.nodeids += [n for n in row.nodeids if n not in mine.nodeids]

    def summary_rows(self) -> list[SummaryRow]:
        """Rows in the order tests ran (merged rows: by test id)."""
        return list(self.rows.values())

    # -- baselines ----------------------------------------------------------------

    @property
    def baselines(self) -> BaselineStore:
        """The session's baseline store (created on first use)."""
        if self._baselines is None:
            from pytest_chunkeval.gate.baseline import BaselineLayout, BaselineStore
            from pytest_chunkeval.gate.compare import GateSettings

            s = self.settings
            self._baselines = BaselineStore(
                update=s.update,
                layout=BaselineLayout(
                    Path(s.baseline_dir) if s.baseline_dir else None, Path(s.rootdir)
                ),
                gate=GateSettings.from_options(
                    s.tolerance, s.gate_mode, s.gate_confidence
                ),
            )
        return self._baselines

    def note_tests(
        self,
        collected: Sequence[str],
        passed: Sequence[str],
        partial: Sequence[str] = (),
    ) -> None:
        """The node ids this process collected (deselected ones included), those
        whose every phase passed, and the test files selected by node id (collected
        in part): what decides which baselines are unused."""
        self.baselines.note_collected(collected)
        for nodeid in passed:
            self.baselines.note_passed(nodeid)
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
        end = SessionEnd(unused=unused, fail_unused=self.settings.fail_unused)
        self._write_outputs(end, os.environ if environ is None else environ)
        end.baselines = store.summary_lines(unused)
        self.end = end
        return end

    def _write_outputs(self, end: SessionEnd, environ: Mapping[str, str]) -> None:
        s = self.settings
        if s.history:
            _attempt(end, f"append to the history file {s.history}", self._history)
        if not (s.json or s.md or s.html):
            return
        from pytest_chunkeval.reporting.reports import ReportEntry

        entries = [ReportEntry(r.result, tuple(r.nodeids)) for r in self.summary_rows()]
        if s.json:
            path = s.json
            _attempt(end, f"write the JSON report {path}", lambda: _json(path, entries))
        if s.md:
            path = s.md
            _attempt(
                end,
                f"write the Markdown report {path}",
                lambda: _markdown(path, entries, environ),
            )
        if s.html:
            path = s.html
            _attempt(
                end,
                f"write the HTML report {path}",
                lambda: _html(path, entries, s.history),
            )

    def _history(self) -> list[str]:
        from datetime import datetime, timezone

        from pytest_chunkeval.engine.results import EvalResult
        from pytest_chunkeval.reporting.history import (
            append_history,
            git_info,
            history_record,
        )

        assert self.settings.history is not None
        git = git_info(self.settings.rootdir)
        now = datetime.now(timezone.utc)  # one timestamp: the records of one run
        records = [
            history_record(
                EvalResult.from_json(row.result),
                test=row.nodeids[0] if row.nodeids else None,
                git=git,
                timestamp=now,
            )
            for row in self.summary_rows()
        ]
        if not records:
            return []
        # a repaired torn line is reported in the summary, not as a warning (which
        # a filterwarnings=error configuration would turn into a crash here)
        notes: list[str] = []
        count = append_history(self.settings.history, records, note=notes.append)
        return [
            *notes,
            f"history: {count} record(s) appended to {self.settings.history}",
        ]


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean the configuration or the data is wrong: the test fails with
    their message (no traceback into the engine), and the same configuration fails
    fast afterwards."""
    from pytest_chunkeval.chunkers import ChunkerError
    from pytest_chunkeval.config.registry import UnknownSpec
    from pytest_chunkeval.embedders.base import (
        EmbedderUnavailable,
        EmbeddingRequestError,
    )
    from pytest_chunkeval.engine.evaluate import EvaluationError
    from pytest_chunkeval.stores import StoreError
    from pytest_chunkeval.tokenizers.base import TokenizerUnavailable

    return (
        ChunkevalError,
        UnknownSpec,
        ChunkerError,
        EvaluationError,
        EmbedderUnavailable,
        EmbeddingRequestError,
        StoreError,
        TokenizerUnavailable,
    )


@dataclass
class SessionEnd:
    """What the end of the session did, for the terminal summary."""

    unused: list[Path] = field(default_factory=list)
    """Baseline files no test used (empty in update mode: they were deleted)."""
    fail_unused: bool = False
    """Unused baselines fail the run (``chunkeval_fail_unused``)."""
    baselines: list[str] = field(default_factory=list)
    """The baseline store's summary lines."""
    written: list[str] = field(default_factory=list)
    """One line per history append / report written."""
    errors: list[str] = field(default_factory=list)
    """Outputs that could not be written."""

    @property
    def failed(self) -> bool:
        """True when the run must fail although every test passed."""
        return bool(self.errors) or (self.fail_unused and bool(self.unused))


def _attempt(end: SessionEnd, what: str, write: Callable[[], list[str]]) -> None:
    """Run one output writer; a failure is reported, not raised: the tests ran
    and their results must still be shown."""
    try:
        end.written += write()
    except (OSError, ValueError) as exc:  # ValueError: also history.HistoryError
        end.errors.append(f"could not {what}: {exc}")


def _json(path: str, entries: Sequence[ReportEntry]) -> list[str]:
    from pytest_chunkeval.reporting.reports import json_report
    from pytest_chunkeval.util.files import atomic_write_text

    atomic_write_text(path, json_report(entries))
    return [f"JSON report: {path}"]


def _markdown(
    path: str, entries: Sequence[ReportEntry], environ: Mapping[str, str]
) -> list[str]:
    from pytest_chunkeval.reporting.reports import (
        GITHUB_SUMMARY_ENV,
        append_github_summary,
        markdown_report,
    )
    from pytest_chunkeval.util.files import atomic_write_text

    text = markdown_report(entries)
    atomic_write_text(path, text)
    lines = [f"Markdown report: {path}"]
    if append_github_summary(text, environ) is not None:
        lines.append(f"Markdown report appended to ${GITHUB_SUMMARY_ENV}")
    return lines


def _html(path: str, entries: Sequence[ReportEntry], history: str | None) -> list[str]:
    from pytest_chunkeval.reporting.history import read_history
    from pytest_chunkeval.reporting.reports import html_report
    from pytest_chunkeval.util.files import atomic_write_text

    records = read_history(history) if history and Path(history).exists() else []
    atomic_write_text(path, html_report(entries, records))
    return [f"HTML report: {path}"]


def _retriever_key(retriever: object, label: str | None) -> tuple[str, object]:
    """What names a retriever's summary row in every process: its label, else the
    qualified name of a module-level function or class. Anything else (instances,
    mappings, lambdas, closures, bound methods) is only itself, as a chunker
    object is for ``evaluate``: ``("object", id)``."""
    if label:
        return ("label", label)
    if isinstance(retriever, (types.FunctionType, type)):
        name = f"{retriever.__module__}.{retriever.__qualname__}"
        if "<" not in name:  # not <lambda> nor <locals>: one object per module
            return ("name", name)
    return ("object", id(retriever))


def _embedder(spec: str) -> object:
    from pytest_chunkeval.embedders.base import get_embedder

    return get_embedder(spec)


def _tokenizer(spec: str) -> object:
    from pytest_chunkeval.tokenizers.base import get_tokenizer

    return get_tokenizer(spec)


def _check_benchmark(name: str) -> None:
    from pytest_chunkeval.data.benchmarks import benchmark_names

    names = benchmark_names()
    if name not in names:
        raise ValueError(
            f"unknown benchmark {name!r}; available: {', '.join(names) or '(none)'}"
        )


# ---------------------------------------------------------------------- evaluator


class Evaluator:
    """The ``chunkeval`` fixture: evaluates under the test's configuration (the
    settings with its ``@pytest.mark.chunkeval`` on top) and keeps what it
    produced, on which the marker's thresholds are checked after the test."""

    def __init__(
        self,
        session: ChunkevalSession,
        config: RunConfig,
        nodeid: str,
        *,
        marker: MarkerOptions,
        path: Path | None = None,
        default_chunker: object = None,
        fail: Callable[[str], NoReturn] = _fail,
    ) -> None:
        self.session = session
        self.config = config
        self.nodeid = nodeid
        self.marker = marker
        self.path = path
        """The test's file (baselines live next to it)."""
        self.default_chunker = default_chunker
        self.results: list[EvalResult] = []
        self._fail = fail
        self._checked: list[EvalResult] = []
        self._begun = False

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
        return self._or_fail(lambda: self.session.corpus(self.config))

    @property
    def queries(self) -> QuerySet:
        """The query set this test evaluates with."""
        return self._or_fail(lambda: self.session.queries(self.config))

    def evaluate(
        self,
        chunker: object = None,
        *,
        k: K | None = None,
        label: str | None = None,
    ) -> EvalResult:
        """Chunk the corpus with ``chunker`` (a spec string such as
        ``"recursive:200:0"``, a chunker object, or a function ``str -> list[str]``;
        default: this test's ``chunkeval_chunker``), embed, index, retrieve ``k``
        chunks per query and score. Memoized per session by configuration."""
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
            try:
                k = parse_k(k)
            except argparse.ArgumentTypeError as exc:
                raise ValueError(str(exc)) from None
        chosen = chunker
        result = self._or_fail(
            lambda: self.session.evaluate(
                self.config, chosen, nodeid=self.nodeid, k=k, label=label
            )
        )
        self.results.append(result)
        return result

    def score(self, retriever: object, *, label: str | None = None) -> EvalResult:
        """Score a whole retriever: a callable ``question -> results`` (texts,
        ``(doc_id, start, end)`` spans or LangChain documents), an object with
        ``.retrieve``/``.invoke``, or a mapping query id -> results. ``label``
        names it in the summary and reports; results under one label share a
        summary row (across xdist workers too)."""
        __tracebackhide__ = True
        result = self._or_fail(
            lambda: self.session.score(
                self.config, retriever, nodeid=self.nodeid, label=label
            )
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
    ) -> CheckOutcome:
        """Compare ``result`` with this test's baseline file (``--chunkeval-update``
        writes it instead). ``name`` tells apart several baselines of one test
        (default: ``<test>.json``, then ``<test>.2.json``...); ``tolerance``
        (``"recall:-2%"`` or ``{"recall": "-2%", "iou": -0.002}``), ``mode``
        (``paired``/``mean``) and ``confidence`` override the session's for this
        check. Raises an ``AssertionError`` (a ``BaselineError``) whose text says
        what changed and the command that records the new numbers."""
        __tracebackhide__ = True
        from pytest_chunkeval.gate.baseline import BaselineError

        failure: BaselineError | None = None
        try:
            outcome = self._check(result, name, tolerance, mode, confidence)
        except BaselineError as exc:
            failure = exc
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"check_baseline: {exc}") from None
        if failure is not None:
            # Raised here, without the store's frames: the report shows the test's
            # line and the explanation.
            raise failure.with_traceback(None) from None
        return outcome

    def _check(
        self,
        result: EvalResult,
        name: str | None = None,
        tolerance: str | Mapping[str, Any] | None = None,
        mode: str | None = None,
        confidence: str | float | None = None,
    ) -> CheckOutcome:
        from pytest_chunkeval.engine.results import EvalResult
        from pytest_chunkeval.gate.baseline import NodeRef

        if not isinstance(result, EvalResult):
            raise TypeError(
                f"check_baseline takes the EvalResult of chunkeval.evaluate() or "
                f"chunkeval.score(), got {type(result).__name__}"
            )
        store = self.session.baselines
        if not self._begun:
            store.begin(self.nodeid)  # numbering of unnamed baselines restarts
            self._begun = True
        test = (
            NodeRef(self.nodeid, self.path)
            if self.path is not None
            else NodeRef.from_nodeid(self.nodeid, self.config.rootdir)
        )
        self._checked.append(result)
        return store.check(
            result,
            test,
            name=name,
            tolerance=tolerance,
            mode=mode,
            confidence=confidence,
        )

    def check_marker_baselines(self) -> str | None:
        """``@pytest.mark.chunkeval(baseline=True)``: every result the test
        produced and did not check itself, compared after the test; the failures
        as one text (None: all passed)."""
        from pytest_chunkeval.gate.baseline import BaselineError

        if not self.results:
            return (
                f"{self.nodeid}: @pytest.mark.chunkeval(baseline=True) compares the "
                "test's results with their baselines, but the test produced no "
                "chunkeval result: request the chunkeval fixture and call "
                "chunkeval.evaluate(...) or chunkeval.score(...)"
            )
        failures = []
        pending: list[EvalResult] = []
        for result in self.results:  # each result once, in the order produced
            if not any(result is r for r in [*self._checked, *pending]):
                pending.append(result)
        for result in pending:
            try:
                self._check(result)
            except BaselineError as exc:
                failures.append(str(exc))
        return "\n\n".join(failures) or None


def after_test(
    nodeid: str, marker: MarkerOptions, evaluator: Evaluator | None
) -> str | None:
    """The marker's checks once the test body passed: thresholds, then baselines
    (``baseline=True``); the failure text, or None."""
    results = evaluator.results if evaluator is not None else []
    if marker.thresholds:
        message = check_thresholds(nodeid, marker.thresholds, results)
        if message is not None:
            return message
    if not marker.baseline:
        return None
    if evaluator is None:
        return (
            f"{nodeid}: @pytest.mark.chunkeval(baseline=True) needs the chunkeval "
            "fixture: request it and call chunkeval.evaluate(...) or "
            "chunkeval.score(...)"
        )
    return evaluator.check_marker_baselines()


def check_thresholds(
    nodeid: str, thresholds: Mapping[str, float], results: Sequence[EvalResult]
) -> str | None:
    """Failure text when a result misses a marker threshold (or there is none)."""
    stated = ", ".join(f"min_{m}={v:g}" for m, v in thresholds.items())
    if not results:
        return (
            f"{nodeid}: @pytest.mark.chunkeval({stated}) states thresholds but the "
            "test produced no chunkeval result: request the chunkeval fixture and "
            "call chunkeval.evaluate(...) or chunkeval.score(...)"
        )
    from pytest_chunkeval.gate.assertions import check_metric

    failures = []
    for result in results:
        for metric, minimum in thresholds.items():
            try:
                text = check_metric(result, metric, minimum)
            except ValueError as exc:
                text = str(exc)
            if text is not None:
                failures.append(text)
    if not failures:
        return None
    head = f"{nodeid}: @pytest.mark.chunkeval({stated}) not met"
    return "\n\n".join([head, *failures])
