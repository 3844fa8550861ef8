"""OpenAI (and OpenAI-compatible) embeddings through the shared client: batches
under the API's limits, retries by the client."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_chunkeval.embedders.base import (
    EmbedderUnavailable,
    EmbeddingRequestError,
    check_vectors,
    l2_normalize,
)
from pytest_chunkeval.llm.client import LazyClient

if TYPE_CHECKING:
    from pytest_chunkeval.embedders.base import Embedder, FloatArray


# https://platform.openai.com/docs/api-reference/embeddings/create
OPENAI_MAX_INPUTS = 2048
OPENAI_MAX_REQUEST_TOKENS = 300_000
OPENAI_MAX_INPUT_TOKENS = 8192
OPENAI_DEFAULT_MAX_RETRIES = 5
OPENAI_KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder:
    """OpenAI (or OpenAI-compatible) embeddings through the official ``openai`` client.

    Requests hold at most ``max_batch`` inputs and ``max_request_tokens`` tokens
    (cl100k_base count); 429 and 5xx answers are retried by the client with backoff
    (``max_retries``). The API key comes from ``api_key`` or ``OPENAI_API_KEY`` and is
    only read when the first request is made, so a fully cached run needs no key; it
    never appears in the identity, the repr, or anything written to disk. Empty texts
    (which the API rejects) get a zero vector without a request.
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        dimensions: int | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = OPENAI_DEFAULT_MAX_RETRIES,
        timeout: float = 60.0,
        max_batch: int = OPENAI_MAX_INPUTS,
        max_request_tokens: int = OPENAI_MAX_REQUEST_TOKENS,
        max_input_tokens: int | None = OPENAI_MAX_INPUT_TOKENS,
        identity: str | None = None,
        client: Any = None,
    ) -> None:
        if not model.strip():
            raise ValueError("empty OpenAI model name")
        if dimensions is not None and dimensions < 1:
            raise ValueError(f"dimensions must be >= 1, got {dimensions}")
        if not 1 <= max_batch <= OPENAI_MAX_INPUTS:
            raise ValueError(
                f"max_batch must be in 1..{OPENAI_MAX_INPUTS}, got {max_batch}"
            )
        if max_request_tokens < 1 or max_retries < 0:
            raise ValueError("max_request_tokens must be >= 1 and max_retries >= 0")
        self.model = model
        self.dimensions = dimensions
        self.max_retries = max_retries
        self.timeout = timeout
        self.max_batch = max_batch
        self.max_request_tokens = max_request_tokens
        self.max_input_tokens = max_input_tokens
        self._connection = LazyClient(
            who=f"openai:{model}",
            api_key=api_key,
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout,
            error=EmbedderUnavailable,
            client=client,
        )
        self._dimension: int | None = dimensions or OPENAI_KNOWN_DIMENSIONS.get(model)
        self.identity = identity or (
            f"openai:{model}" + (f":d{self._dimension}" if self._dimension else "")
        )

    @property
    def base_url(self) -> str:
        """The API root requests go to (``OPENAI_BASE_URL`` when not given)."""
        return self._connection.base_url

    def plan_batches(self, token_counts: Sequence[int]) -> list[list[int]]:
        """Split input indices into requests under the input and token limits."""
        batches: list[list[int]] = []
        current: list[int] = []
        budget = 0
        for i, count in enumerate(token_counts):
            if self.max_input_tokens is not None and count > self.max_input_tokens:
                raise ValueError(
                    f"openai:{self.model}: text #{i} has {count} tokens, over the "
                    f"{self.max_input_tokens}-token input limit of the embeddings API"
                )
            if current and (
                len(current) >= self.max_batch
                or budget + count > self.max_request_tokens
            ):
                batches.append(current)
                current, budget = [], 0
            current.append(i)
            budget += count
        if current:
            batches.append(current)
        return batches

    def embed(self, texts: Sequence[str]) -> FloatArray:
        texts = list(texts)
        wanted = [i for i, t in enumerate(texts) if t]
        from pytest_chunkeval.tokenizers.base import get_tokenizer

        counts = (
            get_tokenizer().count_batch([texts[i] for i in wanted]) if wanted else []
        )
        rows: dict[int, FloatArray] = {}
        for batch in self.plan_batches(counts):
            indices = [wanted[j] for j in batch]
            vectors = self._request([texts[i] for i in indices])
            rows.update(zip(indices, vectors, strict=True))
        if self._dimension is None:  # only empty texts, unknown model: ask once
            self._request([" "])
        dim = self._dimension or 0
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for i, vector in rows.items():
            out[i] = vector
        return l2_normalize(out)

    def _request(self, inputs: list[str]) -> FloatArray:
        client = self._connection.get()
        import openai

        kwargs: dict[str, Any] = {"model": self.model, "input": inputs}
        kwargs["encoding_format"] = "base64"
        if self.dimensions is not None:
            kwargs["dimensions"] = self.dimensions
        try:
            response = client.embeddings.create(**kwargs)
        except openai.APIStatusError as exc:
            raise EmbeddingRequestError(
                f"openai:{self.model}: {self.base_url}/embeddings answered HTTP "
                f"{exc.status_code} for a batch of {len(inputs)} texts: {exc.message}"
            ) from exc
        except openai.APIError as exc:
            raise EmbeddingRequestError(
                f"openai:{self.model}: request to {self.base_url}/embeddings failed "
                f"({type(exc).__name__}: {exc})"
            ) from exc
        except ValueError as exc:  # a body that is not JSON
            raise EmbeddingRequestError(
                f"openai:{self.model}: {self.base_url}/embeddings returned a malformed "
                f"response ({type(exc).__name__}: {exc})"
            ) from exc
        try:
            data = sorted(response.data, key=lambda item: item.index)
            if len(data) != len(inputs):
                raise ValueError(f"{len(data)} embeddings for {len(inputs)} inputs")
            vectors = [_decode_embedding(item.embedding) for item in data]
            arr = check_vectors(vectors, len(inputs), who=self.identity)
        except (TypeError, ValueError, AttributeError) as exc:
            raise EmbeddingRequestError(
                f"openai:{self.model}: {self.base_url}/embeddings returned a malformed "
                f"response: {exc}"
            ) from exc
        if self._dimension is None:
            self._dimension = int(arr.shape[1])
        elif arr.shape[1] != self._dimension:
            raise EmbeddingRequestError(
                f"openai:{self.model}: {self.base_url} returned {arr.shape[1]}-dim "
                f"vectors, expected {self._dimension}"
            )
        return arr

    def __repr__(self) -> str:
        # Deliberately no api_key here: reprs end up in logs and reports.
        dims = f", dimensions={self.dimensions}" if self.dimensions else ""
        return f"OpenAIEmbedder({self.model!r}{dims}, base_url={self.base_url!r})"


def _decode_embedding(value: Any) -> Any:
    if isinstance(value, str):  # encoding_format=base64: little-endian float32
        import base64

        return np.frombuffer(base64.b64decode(value), dtype="<f4")
    return value


def _openai(model: str, *, batch_size: int, **options: Any) -> Embedder:
    return OpenAIEmbedder(model, max_batch=batch_size, **options)
