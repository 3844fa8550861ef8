"""The version of the code that computes each lower cache's values
(docs/performance.md, "What a cache keys on"): the package version and each
cache's own format number, which ``tests/test_cache_formats.py`` forces to change
with its algorithm's output."""

from __future__ import annotations

import functools
from dataclasses import dataclass


@functools.cache
def package_version() -> str:
    """The installed package's version ("unknown" from a bare source tree)."""
    try:
        from importlib.metadata import version

        return version("pytest-chunkeval")
    except Exception:  # not installed
        return "unknown"


@dataclass(frozen=True)
class CacheFormat:
    """The version of the code that computes one cache's values: the package
    version and this cache's own number. ``golden`` is the digest of the
    algorithm's output on ``tests/test_cache_formats.py``'s fixed input, for the
    number it goes with: change the output, raise the number, store the new
    digest."""

    name: str
    number: int
    golden: str

    def version(self) -> str:
        """The first part of each key of this cache."""
        return f"chunkeval-{self.name}-{self.number}\0{package_version()}"


CHUNKINGS = CacheFormat(
    "chunkings", 2, "60097d87c4863c3f3b7da17a47f3314f7a046d1ace6c55d0906602f1ceea2d8c"
)
"""Each document's chunks (``chunking_cache.py``): the chunkers' algorithms."""
TOKENS = CacheFormat(
    "tokens", 2, "9a60be43596ae968e7114814185e3ac3680773ab321ae307203a34ad41a2e423"
)
"""Each document's token bounds (``token_cache.py``): the tokenizers' offsets."""
COPIES = CacheFormat(
    "copies", 4, "8d0633f53a2584545c23ad9be2daec669bdd4ed88807f96611348f8391e6ca46"
)
"""Every occurrence of each excerpt's text (``copies.py``)."""
SEARCH = CacheFormat(
    "search", 5, "82b46c7263f02540983367186df9c5785fb39b89643110b8531310ffe9e47988"
)
"""A store's rows per query (``search_cache.py``): the built-in stores' ranking
(3: ties by content, docs/baselines.md "Ties"; 4: exact search ranks its best
rows in float64, so mathematically equal cosines tie, docs/stores.md; 5: Chroma
re-ranks its candidates so, as the other engine stores do)."""
FORMATS = (CHUNKINGS, TOKENS, COPIES, SEARCH)

RESULTS_FORMAT = "chunkeval-results-2"
"""The result cache keys on the package's source (:func:`code_identity`)."""
