"""Every index setting of every vector store is a named configuration change in
the gate and another search-cache key (docs/stores.md, docs/baselines.md); where
a store lives (a folder, a server, the variable holding its connection string or
key) is neither. The settings are read from each store's registration, so a
setting added without being part of the store's name and identity fails here.
No engine is needed: building a store connects to nothing."""

from __future__ import annotations

import numpy as np
import pytest

from pytest_chunkeval.config.registry import Param
from pytest_chunkeval.engine.keys import vector_search_key
from pytest_chunkeval.gate.comparison.configuration import config_changes
from pytest_chunkeval.stores import (
    FAISS_DEFAULTS,
    LANCEDB_DEFAULTS,
    PGVECTOR_DEFAULTS,
    QDRANT_DEFAULTS,
    STORES,
    get_store,
)
from pytest_chunkeval.stores.chroma import DEFAULT_HNSW

INDEX_TYPES = {
    "faiss": FAISS_DEFAULTS,
    "pgvector": PGVECTOR_DEFAULTS,
    "lancedb": LANCEDB_DEFAULTS,
    "qdrant": QDRANT_DEFAULTS,
}
"""Each engine store's index types and the settings of each, at their defaults."""

WHERE = {"path", "location", "dsn_env", "api_key_env"}
"""Options and arguments that say where a store lives, not how it searches."""

CHANGED = {"space": "ip"}
"""A changed value for the settings that are not whole numbers."""


def _changed(param: Param) -> str:
    if param.name in CHANGED:
        return CHANGED[param.name]
    return str(int(param.default) + 1)


def _cases() -> list[tuple[str, str]]:
    """``(base spec, spec with one setting changed)`` for every setting of every
    registered vector store, each under an index type it applies to."""
    cases = []
    for name in STORES:
        signature = STORES.signature(name)
        if signature is None or name.split("+")[0] != name:
            continue  # free-form (bm25, hybrid) or a server form of a store below
        params = {p.name: p for p in signature.options}
        for index, settings in INDEX_TYPES.get(name, {None: {}}).items():
            base = name if index is None else f"{name}?index={index}"
            owned = settings if index is not None else params
            for setting in owned:
                if setting in WHERE or setting == "index":
                    continue
                sep = "&" if "?" in base else "?"
                cases.append(
                    (base, f"{base}{sep}{setting}={_changed(params[setting])}")
                )
            for other in INDEX_TYPES.get(name, {}):
                if index is not None and other != index:
                    cases.append((base, f"{name}?index={other}"))
    return cases


CASES = _cases()


def _setting(spec: str) -> tuple[str, str]:
    """``(store, the last option's key)`` of a spec: what a case changes."""
    name, _, options = spec.partition("?")
    return name, options.rsplit("&", 1)[-1].split("=")[0]


def test_every_setting_of_every_vector_store_is_covered():
    covered = {_setting(spec) for _, spec in CASES}
    for name in ("chroma", "faiss", "pgvector", "lancedb", "qdrant"):
        signature = STORES.signature(name)
        assert signature is not None
        options = {p.name for p in signature.options} - WHERE
        assert options <= {key for store, key in covered if store == name}, name
    assert set(DEFAULT_HNSW) <= {key for store, key in covered if store == "chroma"}
    for name, types in INDEX_TYPES.items():  # every index type is reached
        assert {f"{name}?index={t}" for t in types} <= {spec for _, spec in CASES}


@pytest.mark.parametrize(("base", "changed"), CASES)
def test_an_index_setting_is_a_named_change_and_another_key(base, changed):
    before, after = get_store(base), get_store(changed)
    judged, refused = config_changes({"store": before.name}, {"store": after.name})
    assert [c.key for c in judged] == ["store"]
    assert not refused
    assert str(judged[0]).startswith("store: ")
    queries = np.eye(4, dtype=np.float32)
    keys = {vector_search_key(s, "ab" * 32, queries, 5) for s in (before, after)}
    assert None not in keys
    assert len(keys) == 2


@pytest.mark.parametrize(
    ("here", "there"),
    [
        ("chroma:/home/ann/db?ef_search=7", "chroma+https://ci:443?ef_search=7"),
        ("pgvector?ef_search=7", "pgvector?ef_search=7&dsn_env=TEAM_PG"),
        ("qdrant?m=8", "qdrant+http://10.0.0.7:6333?m=8&api_key_env=TEAM_KEY"),
    ],
)
def test_where_a_store_lives_is_not_a_configuration_change(here, there):
    judged, refused = config_changes(
        {"store": get_store(here).name}, {"store": get_store(there).name}
    )
    assert judged == refused == ()
