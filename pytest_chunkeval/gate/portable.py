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

# A Chroma location: a server URL (``chroma+http://HOST:PORT``) or a folder
# (``chroma:PATH``), up to the options (``?``), the next spec (``@``) or the end.
_CHROMA_LOCATION = re.compile(r"\bchroma(?:\+https?:[^?&@\s]*|:[^?&@\s]+)")


def portable_store(store: str | None) -> str | None:
    """``store`` (a store's name or spec) without its location: every Chroma is
    ``chroma``; other stores are returned as they are."""
    if not store:
        return store
    return _CHROMA_LOCATION.sub("chroma", store)
