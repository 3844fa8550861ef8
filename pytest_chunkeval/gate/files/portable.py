"""What a baseline records of a store: what determines the numbers, not where the
store lives.

``chroma+http://127.0.0.1:8769`` on a laptop and ``chroma+http://chroma:8000`` in CI
(or ``chroma:/home/ann/db`` and ``chroma``) search the same way: a baseline written
with one must pass with the other. What a store's name keeps is the store's own
declaration, its ``portable_name`` (docs/stores.md, "What a store declares"): the
gate never reads a store's type or spec. Baselines written before this keep their
recorded address, and are read through the same function.
"""

from __future__ import annotations

import importlib


def portable_store(store: str | None) -> str | None:
    """``store`` (a store's name or spec) as its store records it (its
    ``portable_name``: a folder or server left out); a spec that names no store
    here is returned as it is."""
    if not store:
        return store
    # The gate reads recorded strings: it reaches the store registry by name, as
    # comparison/configuration.py reaches the registries for spellings.
    stores = importlib.import_module("pytest_chunkeval.stores")
    return str(stores.portable_spec(store))
