"""Fixtures shared by the retrieval tests."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from handbook_rag import HandbookRetriever

HANDBOOK = Path(__file__).resolve().parent.parent / "handbook"


@pytest.fixture(scope="session")
def retriever(
    pytestconfig: pytest.Config, chunkeval_embedder: Any
) -> HandbookRetriever:
    """The app's retriever, built exactly as in production, except that its vectors
    go through the plugin's embedding cache: a re-run with an unchanged handbook
    never loads the model."""
    from pytest_chunkeval.embedders.cache import EmbeddingCache, default_cache_dir

    cache = EmbeddingCache(default_cache_dir(pytestconfig.rootpath))

    def embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return cache.embed(chunkeval_embedder, list(texts))

    return HandbookRetriever.from_directory(HANDBOOK, embed=embed)
