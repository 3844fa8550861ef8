"""Installed versions of the libraries that shape a component's output (chromadb,
bm25s, tiktoken, tokenizers, transformers, torch, sentence-transformers), for
the identities that key the caches (docs/performance.md, "What each cache keys
on"). Read from the names of the ``*.dist-info`` directories on ``sys.path``,
never by importing the library (``importlib.metadata`` takes about 20 ms a
name on a large environment: too slow for a warm run)."""

from __future__ import annotations

import functools
import os
import re
import sys

_DIST_INFO = re.compile(r"(?P<name>[^-]+)-(?P<version>[^-]+)\.dist-info")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


@functools.cache
def _installed() -> dict[str, str]:
    """Normalized distribution name -> version, the first on ``sys.path`` winning
    (as imports do)."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            match = _DIST_INFO.fullmatch(name)
            if match is not None:
                found.setdefault(_normal(match["name"]), match["version"])
    return found


def library_version(distribution: str) -> str:
    """``NAME-VERSION`` of an installed distribution, ``NAME-absent`` without it."""
    return f"{distribution}-{_installed().get(_normal(distribution), 'absent')}"


def library_versions(*distributions: str) -> str:
    """The versions of several distributions, ``+``-separated (an identity part)."""
    return "+".join(library_version(d) for d in distributions)
