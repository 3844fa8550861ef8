"""The evaluation spec: what determines a result, written once (docs/performance.md,
"What a cache keys on").

:class:`EvaluationSpec` is built once per configuration from the option table
(its defaults), the ini and the flags (:class:`~.options.Settings`), a test's
marker (validated by the table's own parsers, ``Option.marker_value``) and, in
the Python API, the call's keyword arguments. The engine's setup holds it, a
result records it, and every cache key is derived from it and from the
components' identities by one module (``engine/keys/``).

Every setting of the option table is declared here once: either it can change a
result (:data:`RESULT_SETTINGS`, a field of the spec) or it cannot, with the
reason (:data:`OTHER_SETTINGS`). ``tests/test_key_audit.py`` fails when a
setting is in neither list, and checks that changing each result setting alone
changes the result key.

Standard library only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_chunkeval.config.defaults import K
from pytest_chunkeval.config.options import OPTIONS_BY_NAME, Settings
from pytest_chunkeval.config.scoring import DEFAULT_COPIES, SCORING_RULES

RESULT_SETTINGS: tuple[str, ...] = (
    "corpus",
    "queries",
    "benchmark",
    "beir",
    "beir_split",
    "embedder",
    "store",
    "rerank",
    "k",
    "budget",
    "unit",
    "tokenizer",
    "locate",
    "copies",
    "judge",
    "repeats",
)
"""The settings that can change a result: each is a field of the spec (the data
settings through the corpus' and the questions' texts, which the keys hold)."""

OTHER_SETTINGS: Mapping[str, str] = {
    "cache_dir": "where the caches are, not what they hold",
    "chunkers": "which chunkers a session evaluates: each is an evaluation's "
    "chunker, keyed by its identity",
    "judgments": "the judge's committed answers: a judged evaluation is never "
    "cached (docs/performance.md)",
    "update": "the gate: whether baselines are written",
    "baseline_dir": "the gate: where baselines are",
    "tolerance": "the gate: how a result is compared, not the result",
    "gate_mode": "the gate: how a result is compared, not the result",
    "gate_confidence": "the gate: how a result is compared, not the result",
    "max_left_out": "the gate: how much of a baseline a comparison may leave out",
    "gate_by": "the gate: what fails a check, not the result",
    "fail_unused": "the gate: unused baseline files",
    "history": "an output file",
    "json": "an output file",
    "md": "an output file",
    "html": "an output file",
    "inspect": "an output: the query set's inspection in the reports",
    "trec_run": "an output file",
    "qrels": "an output file",
}
"""The settings that cannot change a result, each with the reason."""

_DATASETS = ("corpus", "queries", "benchmark", "beir")


def _default(name: str) -> Any:
    return OPTIONS_BY_NAME[name].default


# The spec's defaults are the option table's (a dataclass default is a constant).
_BEIR_SPLIT: str = _default("beir_split")
_EMBEDDER: str = _default("embedder")
_STORE: str = _default("store")
_K: K = _default("k")
_UNIT: str = _default("unit")
_LOCATE: str = _default("locate")
_COPIES: str = _default("copies")


@dataclass(frozen=True)
class EvaluationSpec:
    """Everything an evaluation depends on besides its chunker (or retriever) and
    the texts of its data: the result settings (:data:`RESULT_SETTINGS`), their
    defaults the option table's, and where relative paths and the caches are.

    In the plugin the components are spec strings; in the Python API they may be
    objects (an ``Embedder``, a store), whose identities the keys read when used.
    """

    rootdir: str = "."
    cache_dir: str = ""
    corpus: tuple[str, ...] = ()
    queries: str | None = None
    benchmark: str | None = None
    beir: str | None = None
    beir_split: str = _BEIR_SPLIT
    embedder: Any = _EMBEDDER
    store: Any = _STORE
    rerank: Any = None
    k: K = _K
    budget: int | None = None
    unit: str = _UNIT
    tokenizer: Any = None
    locate: str = _LOCATE
    copies: str = _COPIES
    judge: Any = None
    repeats: int | None = None
    """Times a noisy component is measured (``chunkeval_repeats``); None: the
    defaults of engine/repeats.py."""
    k_set: bool = False
    """``k`` was configured (setting, flag, marker or argument), not the default:
    only then does it limit what a whole retriever (``score()``) is scored on."""
    origins: Mapping[str, str] = field(default_factory=dict, compare=False)
    """Where each dataset setting came from, for error messages."""

    @classmethod
    def from_settings(
        cls, settings: Settings, overrides: Mapping[str, Any] | None = None
    ) -> EvaluationSpec:
        """The settings (each unset one at the table's default), with a test's
        marker keywords (``overrides``, validated by the table) on top."""
        values: dict[str, Any] = {}
        for name in RESULT_SETTINGS:
            value = getattr(settings, name)
            values[name] = _default(name) if value is None else value
        origins = {
            key: f"chunkeval_{key} / --chunkeval-{key}"
            for key in _DATASETS
            if values[key]
        }
        overrides = dict(overrides or {})
        if "corpus" in overrides or "benchmark" in overrides:
            values["beir"] = None
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
            k_set=settings.k is not None or "k" in overrides,
            origins=origins,
            **values,
        )

    def with_run(self, **changes: Any) -> EvaluationSpec:
        """This spec with some result settings changed (a call's ``k=``,
        ``budget=``...); a ``k`` given is configured."""
        unknown = set(changes) - set(RESULT_SETTINGS)
        if unknown:
            raise TypeError(f"not result settings: {sorted(unknown)}")
        k_set = self.k_set or "k" in changes
        return dataclasses.replace(self, k_set=k_set, **changes)

    def recorded(self, *, whole_retriever: bool = False) -> dict[str, Any]:
        """What a result's configuration (a baseline's) records of this spec's
        plain settings, after the components' labels (``engine/setup.py``): the
        scoring rules, ``copies`` when not the default, ``k`` (a whole
        retriever's: :attr:`score_k`) and a budget when there is one."""
        out: dict[str, Any] = {"scoring_rules": SCORING_RULES}
        if self.copies != DEFAULT_COPIES:
            out["copies"] = self.copies
        out["k"] = self.score_k if whole_retriever else self.k
        if self.budget is not None:
            out["budget"] = self.budget
        return out

    @property
    def score_k(self) -> int | None:
        """What a whole retriever is scored on: its first ``k`` results when ``k``
        is configured (``"min"`` needs a chunking: all), else all of them."""
        return self.k if self.k_set and isinstance(self.k, int) else None

    def path(self, relative: str) -> Path:
        """``relative`` resolved against rootdir (``~`` expanded)."""
        return Path(self.rootdir) / Path(relative).expanduser()

    @property
    def dataset_key(self) -> tuple[object, ...]:
        """Where the data comes from (the session loads each once)."""
        corpus: tuple[object, ...] = (
            ("benchmark", self.benchmark)
            if self.benchmark
            else ("beir", str(self.path(self.beir)), self.beir_split)
            if self.beir
            else tuple(str(self.path(p)) for p in self.corpus)
        )
        queries = str(self.path(self.queries)) if self.queries else None
        return (corpus, queries)
