"""The configuration one test evaluates under: the settings with its marker on top."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.config.options import (
    DEFAULT_EMBEDDER,
    DEFAULT_K,
    DEFAULT_STORE,
    DEFAULT_UNIT,
    K,
    Settings,
)
from pytest_chunkeval.config.scoring import DEFAULT_COPIES

if TYPE_CHECKING:
    from pytest_chunkeval.run.marker import MarkerOptions


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
    budget: int | None
    unit: str
    tokenizer: str | None
    cache_dir: str
    k_set: bool = False
    """``k`` was configured (setting, flag or marker), not the default: only then
    does it limit what a whole retriever (``score()``) is scored on."""
    judge: str | None = None
    """Judge spec of context relevance (docs/judged.md#the-two-measures), or None: not
    judged."""
    locate: str = "exact"
    """How a retriever's texts are placed in the corpus (engine/placing.py)."""
    beir: str | None = None
    """A BEIR folder as corpus and queries (data/beir.py), or None."""
    beir_split: str = "test"
    copies: str = DEFAULT_COPIES
    """Identical text: ``any`` or ``strict`` (docs/concepts.md, "Identical text")."""
    rerank: str | None = None
    """Reranker spec re-scoring the store's candidates (docs/retrieval.md), or None."""
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
            "budget": settings.budget,
            "unit": settings.unit or DEFAULT_UNIT,
            "tokenizer": settings.tokenizer,
            "judge": settings.judge,
            "locate": settings.locate or "exact",
            "beir": settings.beir,
            "beir_split": settings.beir_split or "test",
            "copies": settings.copies or DEFAULT_COPIES,
            "rerank": settings.rerank,
        }
        origins = {
            key: f"chunkeval_{key} / --chunkeval-{key}"
            for key in ("corpus", "queries", "benchmark", "beir")
            if values[key]
        }
        overrides = dict(marker.overrides) if marker else {}
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
        corpus: tuple[object, ...] = (
            ("benchmark", self.benchmark)
            if self.benchmark
            else ("beir", str(self.path(self.beir)), self.beir_split)
            if self.beir
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
            self.budget,
            self.unit,
            self.tokenizer if self.unit == "token" else None,
            self.cache_dir,
            self.judge,
            self.copies,
            self.rerank,
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
