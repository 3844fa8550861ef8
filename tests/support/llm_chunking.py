"""The LLM chunker's test material (docs/chunkers.md, "llm"): a document of 12
paragraphs of 29 words, a local server's answer splitting after every third
chunk, and one evaluation of a one-question set with fast components."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pytest_chunkeval.chunkers.llm import LLMSemanticChunker
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from support.openai_server import OpenAIServer

KEY = "sk-test-key-123"
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima"


def paragraph(i: int) -> str:
    words = WORDS.split()
    return " ".join(words[(i + k) % len(words)] for k in range(28)) + f" end{i}."


DOC = "\n\n".join(paragraph(i) for i in range(12))


def window_ids(request_json: Any) -> list[int]:
    """The chunk ids shown in a chat request."""
    user = next(m for m in request_json["messages"] if m["role"] == "user")
    return [int(x) for x in re.findall(r"<start_chunk_(\d+)>", user["content"])]


def every_third(request_json: Any) -> str:
    """A model's answer: split after every third chunk id of the window."""
    ids = window_ids(request_json)
    splits = [i for i in ids if i % 3 == 0] or [ids[-1]]
    return "split_after: " + ", ".join(map(str, splits))


def llm_chunker(server: OpenAIServer) -> LLMSemanticChunker:
    return LLMSemanticChunker(
        "test-model",
        api_key=KEY,
        base_url=server.base_url,
        max_retries=0,
        window_tokens=100,
        max_attempts=2,
    )


def llm_corpus() -> Corpus:
    return Corpus.from_mapping({"doc.md": DOC}, name="llm")


def llm_evaluate(chunker: LLMSemanticChunker, cache: Path) -> EvalResult:
    """``chunker`` evaluated on DOC with one question ("bravo?")."""
    corpus = llm_corpus()
    start = DOC.index("bravo charlie")
    queries = QuerySet(
        [
            Query(
                "q", "bravo?", (Excerpt("bravo", "doc.md", start, start + 5),), "doc.md"
            )
        ]
    )
    return evaluate(
        chunker,
        corpus,
        queries,
        embedder=HashingEmbedder(),
        store="exact",
        cache=EmbeddingCache(cache),
    )
