"""Errors of a test's chunkeval configuration, reported without a traceback."""

from __future__ import annotations

from typing import NoReturn


class ChunkevalError(Exception):
    """A configuration problem met while running a test; the message says how to
    fix it. The plugin reports it as a test failure without a traceback."""


def _fail(message: str) -> NoReturn:
    raise ChunkevalError(message)


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean the configuration or the data is wrong: the test fails with
    their message (no traceback into the engine), and the same configuration fails
    fast afterwards."""
    from pytest_chunkeval.chunkers import ChunkerError
    from pytest_chunkeval.config.registry import UnknownSpec
    from pytest_chunkeval.embedders.base import (
        EmbedderUnavailable,
        EmbeddingRequestError,
    )
    from pytest_chunkeval.engine.evaluate import EvaluationError
    from pytest_chunkeval.stores import StoreError
    from pytest_chunkeval.tokenizers.base import TokenizerUnavailable

    return (
        ChunkevalError,
        UnknownSpec,
        ChunkerError,
        EvaluationError,
        EmbedderUnavailable,
        EmbeddingRequestError,
        StoreError,
        TokenizerUnavailable,
    )
