"""handbook_rag: question answering over the Tallowmere employee handbook.

The retrieval half of a small RAG app: :func:`load_handbook` reads the Markdown
chapters, :func:`split_markdown` cuts them into section-aware chunks, and
:class:`HandbookRetriever` indexes the chunks in Chroma and returns the passages an
LLM would be given for a question (:func:`build_prompt`).
"""

from __future__ import annotations

from .ingest import Chunk, Document, chunk_documents, load_handbook, split_markdown
from .prompt import build_prompt
from .retriever import DEFAULT_K, HandbookRetriever

__all__ = [
    "DEFAULT_K",
    "Chunk",
    "Document",
    "HandbookRetriever",
    "build_prompt",
    "chunk_documents",
    "load_handbook",
    "split_markdown",
]
