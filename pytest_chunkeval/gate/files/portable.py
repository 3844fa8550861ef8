"""What a baseline records of a store: what determines the numbers, not where the
store lives.

``chroma+http://127.0.0.1:8769`` on a laptop and ``chroma+http://chroma:8000`` in CI
(or ``chroma:/home/ann/db`` and ``chroma``) search the same way: a baseline written
with one must pass with the other. Addresses, paths, hosts and keys are dropped;
the store kind and its search options (``?space=cosine``) stay. Baselines written
before this keep their recorded address, and are read through the same function.
"""

from __future__ import annotations

import re

# Any store's server URL (``NAME+http://HOST:PORT``, ``qdrant+https://...``), up
# to the options (``?``), the next spec (``@``) or the end: the spec grammar's
# location form (docs/specs.md), whatever the store.
_SERVER_LOCATION = re.compile(r"(?<![\w+-])([a-z][\w-]*)\+https?:[^?&@\s]*")
# A Chroma folder (``chroma:PATH``).
_CHROMA_FOLDER = re.compile(r"\bchroma:[^?&@\s]+")


def portable_store(store: str | None) -> str | None:
    """``store`` (a store's name or spec) without its location: a server store
    is its name (``qdrant+http://h:6333?m=8`` is ``qdrant?m=8``, as the store
    embedded with those settings), a Chroma folder is ``chroma``; other stores
    are returned as they are (docs/stores.md)."""
    if not store:
        return store
    return _CHROMA_FOLDER.sub("chroma", _SERVER_LOCATION.sub(r"\1", store))
