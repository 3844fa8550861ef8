"""The result cache's key (docs/performance.md, "What a cache keys on"): the
package's source, the result's schema and configuration, the data, and what
determines each result setting of the spec (:data:`RESULT_PARTS`; the key audit,
``tests/test_key_audit.py``, changes each alone)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from pytest_chunkeval.config.evaluation import RESULT_SETTINGS, EvaluationSpec
from pytest_chunkeval.engine.keys.formats import RESULTS_FORMAT
from pytest_chunkeval.engine.keys.identities import (
    chunker_identity,
    code_identity,
    embedder_identity,
    reranker_identity,
    store_identity,
)
from pytest_chunkeval.engine.results import RESULT_SCHEMA
from pytest_chunkeval.stores.rerank import Reranker
from pytest_chunkeval.tokenizers.base import tokenizer_identity
from pytest_chunkeval.util.verified import entry_key


class EvaluationSetup(Protocol):
    """What the keys read of ``engine/setup.py``'s setup (which imports the
    caches, which import this module)."""

    @property
    def corpus(self) -> Any: ...
    @property
    def queries(self) -> Any: ...
    @property
    def unit(self) -> str: ...
    @property
    def tokenizer(self) -> Any: ...
    @property
    def chunker(self) -> Any: ...
    @property
    def embedder(self) -> Any: ...
    @property
    def store(self) -> Any: ...
    @property
    def copies(self) -> str: ...
    @property
    def cache(self) -> Any: ...
    @property
    def spec(self) -> EvaluationSpec: ...


class Chunking(Protocol):
    """A chunking given by the caller (``engine/chunking.py``)."""

    def digest(self) -> str: ...


def _with_candidates(identity: str | None, candidates: int) -> str | None:
    """A reranker's part: its identity and candidates; None without an identity."""
    return None if identity is None else f"{identity}\0{candidates}"


RESULT_PARTS: dict[str, Callable[[EvaluationSetup, Any], str | None]] = {
    # the data: the corpus' and the questions' texts are in every key
    "corpus": lambda setup, reranker: "",
    "queries": lambda setup, reranker: "",
    "benchmark": lambda setup, reranker: "",
    "beir": lambda setup, reranker: "",
    "beir_split": lambda setup, reranker: "",
    # the components: their identities now
    "embedder": lambda setup, reranker: (
        "" if setup.embedder is None else embedder_identity(setup.embedder)
    ),
    "store": lambda setup, reranker: (
        "" if setup.store is None else store_identity(setup.store)
    ),
    "rerank": lambda setup, reranker: (
        ""
        if reranker is None
        else _with_candidates(reranker_identity(reranker), reranker.candidates)
    ),
    "tokenizer": lambda setup, reranker: (
        "" if setup.tokenizer is None else tokenizer_identity(setup.tokenizer)
    ),
    # the plain settings: their values
    "k": lambda setup, reranker: json.dumps(setup.spec.k),
    "budget": lambda setup, reranker: json.dumps(setup.spec.budget),
    "unit": lambda setup, reranker: setup.unit,
    "locate": lambda setup, reranker: setup.spec.locate,
    "copies": lambda setup, reranker: setup.copies,
    "repeats": lambda setup, reranker: json.dumps(setup.spec.repeats),
    # a judged evaluation is never cached (docs/performance.md)
    "judge": lambda setup, reranker: None if setup.spec.judge is not None else "",
}
"""What determines each result setting of the spec in the result key (one entry
per :data:`~pytest_chunkeval.config.evaluation.RESULT_SETTINGS`); None: the
evaluation is not cached."""


def result_key(
    setup: EvaluationSetup,
    config: dict[str, Any],
    *,
    label: str | None,
    chunking: Chunking | None,
    reranker: Reranker | None,
) -> str | None:
    """The key of a chunker's evaluation: the code, the result's schema and
    configuration, its label, the corpus and questions, the chunker's identity
    (and the chunks' digest when the caller gave them) and each result setting's
    part (:data:`RESULT_PARTS`); None when some part has no identity (then
    never cached)."""
    chunker = chunker_identity(setup.chunker) if setup.chunker is not None else None
    parts = [RESULT_PARTS[name](setup, reranker) for name in RESULT_SETTINGS]
    if chunker is None or any(part is None for part in parts):
        return None
    return entry_key(
        RESULTS_FORMAT,
        code_identity(),
        str(RESULT_SCHEMA),
        json.dumps(config, sort_keys=True, default=repr),
        json.dumps(label),
        setup.corpus.content_hash,
        setup.queries.content_hash,
        chunker,
        "" if chunking is None else chunking.digest(),
        *(str(part) for part in parts),
    )
