"""The lower caches key on the version of the code that computes them
(engine/keys/formats.py ``CacheFormat``): the package version and a number per cache.
Each test here recomputes one cache's algorithms on a small fixed input and
compares the digest of the output with the one stored beside the number: when
an algorithm's output changes, raise the number (old entries are then never
read) and store the new digest, or this test fails."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import numpy as np
import pytest

from pytest_chunkeval.chunkers import get_chunker
from pytest_chunkeval.core.ranking import content_ties
from pytest_chunkeval.engine import keys
from pytest_chunkeval.engine.copies import find_occurrences
from pytest_chunkeval.stores import get_store
from pytest_chunkeval.tokenizers.base import get_tokenizer

TEXT = (
    "Alice founded Acme in 1999. Acme makes anvils.\n\n"
    "Bob acquired Zeta; Zeta makes rockets! Carol joined Acme in 2003, "
    "and Dave founded Orbit.\nOrbit sells rockets to Acme.\n\n"
    "É accents, emoji 🚀 and tabs\tstay whole. " * 3
)
DOCS = [TEXT, TEXT[40:160], "Acme. Acme. Acme makes anvils."]
QUESTIONS = ["who founded Acme", "rockets", "anvils made by Acme"]


def _digest(value: object) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()


def _chunkings() -> object:
    specs = ["recursive:12:2", "recursive:30:0", "fixed:10:3", "sentence:16"]
    return {
        spec: [np.asarray(get_chunker(spec).chunk_spans(d)).tolist() for d in DOCS]
        for spec in specs
    }


def _tokens() -> object:
    tokenizer = get_tokenizer("cl100k_base")
    return [np.asarray(tokenizer.token_bounds(d)).tolist() for d in DOCS]


def _copies() -> object:
    needles = ["Acme", "Acme makes anvils", "rockets", "", "absent", "🚀 and"]
    return [found.tolist() for found in find_occurrences(DOCS, needles)]


def _search() -> object:
    pytest.importorskip("bm25s")  # the torch-free suite has no bm25 extra
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(12, 8)).astype(np.float32)
    vectors[5] = vectors[3]  # a tie
    queries = rng.normal(size=(4, 8)).astype(np.float32)
    exact = get_store("exact").index("golden", vectors)  # type: ignore[union-attr]
    texts = [p for d in DOCS for p in d.split(". ") if p]
    bm25 = get_store("bm25").index_texts(texts)  # type: ignore[union-attr]
    # ties by content (scoring rules 3): keys from made-up texts, another order
    # than the rows'
    ties = content_ties([f"row {i}" for i in range(len(vectors))])  # 5 before 3
    # mathematically equal cosines a float32 product rounds apart (one vector's
    # components rotated, a uniform query): ranked in float64, they tie
    rotated = np.stack([np.roll(vectors[0], s) for s in range(8)])
    uniform = np.full((1, 8), 8**-0.5, dtype=np.float32)
    rotations = get_store("exact").index("golden", rotated)  # type: ignore[union-attr]
    return {
        "exact_float_ties": np.asarray(rotations.search(uniform, 8)).tolist(),
        "exact": np.asarray(exact.search(queries, 5)).tolist(),
        "bm25": np.asarray(bm25.search_texts(QUESTIONS, 4)).tolist(),
        "exact_ties": np.asarray(exact.search(queries, 12, ties=ties)).tolist(),
        "bm25_ties": np.asarray(
            bm25.search_texts(QUESTIONS, 4, ties=content_ties(texts))
        ).tolist(),
    }


OUTPUTS: dict[str, tuple[keys.CacheFormat, Callable[[], object]]] = {
    "chunkings": (keys.CHUNKINGS, _chunkings),
    "tokens": (keys.TOKENS, _tokens),
    "copies": (keys.COPIES, _copies),
    "search": (keys.SEARCH, _search),
}


def test_every_lower_cache_has_a_golden_output() -> None:
    assert {f.name for f in keys.FORMATS} == set(OUTPUTS)


@pytest.mark.parametrize("name", sorted(OUTPUTS))
def test_an_algorithm_whose_output_changed_raised_its_format_number(
    name: str,
) -> None:
    form, compute = OUTPUTS[name]
    digest = _digest(compute())
    assert digest == form.golden, (
        f"the {name} cache's algorithm gives another output than format "
        f"{form.number} recorded: raise {name.upper()}'s number in "
        f"pytest_chunkeval/engine/keys/formats.py (old entries are then never "
        f"read) and store the new digest {digest!r} beside it"
    )


def test_a_format_number_and_the_package_version_are_in_every_key() -> None:
    before = keys.chunking_key("identity", "doc")
    changed = keys.CacheFormat("chunkings", keys.CHUNKINGS.number + 1, "")
    assert changed.version() != keys.CHUNKINGS.version()
    assert keys.package_version() in keys.CHUNKINGS.version()
    assert keys.token_key("identity", "doc") != before  # one cache's, not another's
