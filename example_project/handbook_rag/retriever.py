"""Retrieval: the handbook's chunks in a Chroma collection, searched by cosine.

By default the collection lives in an in-process Chroma (nothing to run); pass
``chroma_url="http://host:8000"`` for a Chroma server or a directory path for a
persistent local database.

Every chapter ends with the same "About this policy" boilerplate. Those chunks are
identical text, so they would fill several of the top-k slots for any question about
"policy" or "questions"; the retriever returns each distinct passage text once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .embedding import Embed, load_embedder
from .ingest import DEFAULT_MAX_CHARS, Chunk, chunk_documents, load_handbook

DEFAULT_K = 4


def chroma_client(chroma_url: str | None = None) -> Any:
    """An in-process client (``None``), a server client (``http(s)://HOST:PORT``)
    or a persistent one (a directory path), with telemetry off."""
    import chromadb
    from chromadb.config import Settings

    # Telemetry off, and the same settings pytest-chunkeval's in-process store
    # uses: Chroma refuses a second in-process client with other settings.
    settings = Settings(anonymized_telemetry=False)
    if chroma_url is None:
        return chromadb.EphemeralClient(settings=settings)
    if chroma_url.startswith(("http://", "https://")):
        scheme, _, hostport = chroma_url.partition("://")
        host, _, port = hostport.rstrip("/").rpartition(":")
        return chromadb.HttpClient(
            host=host, port=int(port), ssl=scheme == "https", settings=settings
        )
    return chromadb.PersistentClient(path=chroma_url, settings=settings)


class HandbookRetriever:
    """Top-``k`` handbook passages for a question."""

    def __init__(
        self,
        chunks: Sequence[Chunk],
        embed: Embed,
        *,
        k: int = DEFAULT_K,
        client: Any = None,
        collection: str = "handbook",
    ) -> None:
        if not chunks:
            raise ValueError("no chunks to index")
        self.chunks = list(chunks)
        self.embed = embed
        self.k = k
        self.client = client if client is not None else chroma_client()
        # Ingestion rebuilds the collection: a changed handbook never mixes with
        # the vectors of an older build.
        if collection in {c.name for c in self.client.list_collections()}:
            self.client.delete_collection(collection)
        self.collection = self.client.create_collection(
            collection,
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )
        vectors = embed([c.text for c in self.chunks])
        self.collection.add(
            ids=[str(i) for i in range(len(self.chunks))],
            embeddings=vectors,
            metadatas=[
                {"doc_id": c.doc_id, "start": c.start, "end": c.end}
                for c in self.chunks
            ],
        )

    @classmethod
    def from_directory(
        cls,
        directory: str | Path,
        *,
        embed: Embed | None = None,
        max_chars: int = DEFAULT_MAX_CHARS,
        k: int = DEFAULT_K,
        chroma_url: str | None = None,
    ) -> HandbookRetriever:
        """Load, chunk and index every chapter under ``directory``."""
        chunks = chunk_documents(load_handbook(directory), max_chars)
        return cls(
            chunks,
            embed if embed is not None else load_embedder(),
            k=k,
            client=chroma_client(chroma_url),
        )

    def retrieve(self, question: str) -> list[Chunk]:
        """The ``k`` most similar passages, best first, each text at most once."""
        # Ask for more than k: duplicates of boilerplate are dropped below.
        n = min(len(self.chunks), 2 * self.k)
        found = self.collection.query(
            query_embeddings=self.embed([question]), n_results=n, include=[]
        )
        passages: list[Chunk] = []
        seen: set[str] = set()
        for row in found["ids"][0]:
            chunk = self.chunks[int(row)]
            if chunk.text not in seen:
                seen.add(chunk.text)
                passages.append(chunk)
            if len(passages) == self.k:
                break
        return passages

    __call__ = retrieve
