"""What a baseline records of a store: what determines the numbers, not where the
store lives.

``chroma+http://127.0.0.1:8769`` on a laptop and ``chroma+http://chroma:8000`` in CI
(or ``chroma:/home/ann/db`` and ``chroma``) search the same way: a baseline written
with one must pass with the other. What a store's name keeps is the store's own
declaration, its ``portable_name`` (docs/stores.md, "What a store declares"),
recorded in the configuration when it is built (``engine/recorded.py``): the gate
never reads a store's type or imports a store. Baselines written before this
keep their recorded address, and are read through the engine's
``recorded_store``.
"""

from __future__ import annotations

from typing import Any

from pytest_chunkeval.engine.recorded import PORTABLE_STORE, recorded_store


def portable_store(store: str | None) -> str | None:
    """``store`` (a store's name or spec) as its store records it (its
    ``portable_name``: a folder or server left out); a spec that names no store
    here is returned as it is, less a server's address."""
    return recorded_store(store) if store else store


def record_portable_store(config: dict[str, Any]) -> None:
    """``config``'s store as a baseline records it, in place: the portable name
    the configuration recorded (:data:`PORTABLE_STORE`), else that of the
    recorded name (a baseline written before, a configuration built elsewhere)."""
    portable = config.pop(PORTABLE_STORE, None)
    if isinstance(portable, str):
        config["store"] = portable
    elif isinstance(config.get("store"), str):
        config["store"] = portable_store(config["store"])
