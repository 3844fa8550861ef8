"""Chroma stores from spec strings: ``chroma``, ``chroma:PATH``,
``chroma+http(s)://HOST:PORT``, each with Chroma's HNSW settings as options
(``chroma?ef_search=400``: stores/chroma.py ``DEFAULT_HNSW``)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from pytest_chunkeval.stores.chroma import DEFAULT_PORT, ChromaStore


def parse_server(rest: str, *, scheme: str) -> tuple[str, int]:
    """``(host, port)`` from the part of ``chroma+http://HOST:PORT`` after ``:``."""
    if not rest.startswith("//"):
        raise ValueError(f"expected {scheme}://HOST:PORT, got {scheme}:{rest}")
    parts = urlsplit(f"{scheme}:{rest}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"unexpected path or query in {scheme}:{rest}")
    if not parts.hostname:
        raise ValueError(f"no host in {scheme}:{rest}")
    try:
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"bad port in {scheme}:{rest}") from exc
    return parts.hostname, DEFAULT_PORT if port is None else port


def chroma_from_spec(path: str | None = None, **hnsw: Any) -> ChromaStore:
    """Factory for ``chroma`` (in-process) and ``chroma:PATH`` (persistent),
    with HNSW settings as options (``chroma?ef_search=400``)."""
    return ChromaStore(path or None, hnsw=hnsw)


def chroma_http_from_spec(location: str, **hnsw: Any) -> ChromaStore:
    """Factory for ``chroma+http://HOST:PORT``."""
    host, port = parse_server(location, scheme="http")
    return ChromaStore(host=host, port=port, hnsw=hnsw)


def chroma_https_from_spec(location: str, **hnsw: Any) -> ChromaStore:
    """Factory for ``chroma+https://HOST:PORT``."""
    host, port = parse_server(location, scheme="https")
    return ChromaStore(host=host, port=port, ssl=True, hnsw=hnsw)
