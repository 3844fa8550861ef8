"""Plugs the app's own chunking into pytest-chunkeval.

Registering a chunker under a name makes ``handbook:600`` a spec string like
``recursive:200:0``: usable in ``chunkeval_chunkers``, in ``--chunkeval-chunkers``,
in ``chunkeval.evaluate("handbook:600")`` and in ``chunkeval eval --chunker``...
This hook lives in the rootdir conftest so that it is registered before the plugin
checks the configured names at start-up.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest

from handbook_rag.ingest import DEFAULT_MAX_CHARS, split_markdown


# optionalhook: this conftest still loads under `pytest -p no:chunkeval`.
@pytest.hookimpl(optionalhook=True)
def pytest_chunkeval_register_chunkers(registry: Any) -> None:
    from pytest_chunkeval.chunkers import as_chunker

    def handbook(rest: str) -> Any:
        max_chars = int(rest) if rest else DEFAULT_MAX_CHARS
        # split_markdown returns (start, end) spans of the document: used as is.
        return as_chunker(
            functools.partial(split_markdown, max_chars=max_chars),
            name=f"handbook:{max_chars}",
        )

    registry.register("handbook", handbook, "handbook[:MAX_CHARS]")
