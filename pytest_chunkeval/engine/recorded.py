"""What a result's configuration records of its components for the gate
(docs/baselines.md, docs/stores.md "What a store declares"): the gate reads
recorded strings and never imports a component's folder; what it needs of them
is recorded here, when the configuration is built, or read here for a string a
baseline recorded before.

- :data:`PORTABLE_STORE`: the configuration's key holding the store's
  ``portable_name`` (its name without where it lives) where that differs from
  its name (``chroma+http://ci:8000`` records ``chroma``): what a baseline
  records of the store.
- :func:`recorded_store`: the same for a store's name or spec alone (a
  baseline written before the key, or a configuration built elsewhere).
- :func:`same_spec`: two spellings of one component (``hashing`` and
  ``hashing:256``).

The registries are imported on first use, so importing this module (and the
gate) loads no component.
"""

from __future__ import annotations

from typing import Any

PORTABLE_STORE = "store_portable"
"""The configuration key of the store's portable name (absent when it is the
store's name): the gate records it as ``store``."""

SPEC_KEYS = ("chunker", "embedder", "store", "tokenizer")
"""The configuration keys a component's spec is recorded under."""


def portable_store_fields(store: object, label: str | None) -> dict[str, str]:
    """The configuration's :data:`PORTABLE_STORE` entry for ``store`` named
    ``label``: its declared ``portable_name`` where it is not ``label``."""
    from pytest_chunkeval.stores import portable_name

    if store is None or label is None:
        return {}
    portable = portable_name(store)
    return {} if portable == label else {PORTABLE_STORE: portable}


def recorded_store(store: str) -> str:
    """What a baseline records of the store ``store`` names (a name or spec):
    ``stores.portable_spec``; a spec naming no store here is kept, less a
    server's address."""
    from pytest_chunkeval.stores import portable_spec

    return portable_spec(store)


def _registry(key: str) -> Any:
    """The registry of the component ``key`` records (imported on first use)."""
    if key == "chunker":
        from pytest_chunkeval.chunkers.specs import CHUNKERS

        return CHUNKERS
    if key == "embedder":
        from pytest_chunkeval.embedders.registry import EMBEDDERS

        return EMBEDDERS
    if key == "store":
        from pytest_chunkeval.stores import STORES

        return STORES
    from pytest_chunkeval.tokenizers.base import TOKENIZERS

    return TOKENIZERS


def same_spec(key: str, old: object, new: object) -> bool:
    """Two spellings of one component (``hashing`` and ``hashing:256``): a
    baseline recorded before specs were canonical still matches."""
    if key not in SPEC_KEYS or not (isinstance(old, str) and isinstance(new, str)):
        return False
    from pytest_chunkeval.config.specs import SpecError

    try:
        return bool(_registry(key).label(old) == _registry(key).label(new))
    except SpecError:
        return False
