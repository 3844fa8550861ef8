"""OpenAI (and OpenAI-compatible) embeddings through the shared client: batches
under the API's limits, several requests in flight, retries by the client, and
vectors handed over request by request (the embedding cache stores each as it
arrives: an interrupted run keeps what it received, docs/embedders.md,
"openai:MODEL")."""

from __future__ import annotations

import concurrent.futures as cf
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_chunkeval.embedders.base import (
    EmbedderUnavailable,
    EmbeddingRequestError,
    check_vectors,
    l2_normalize,
)
from pytest_chunkeval.llm.client import DEFAULT_BASE_URL, LazyClient
from pytest_chunkeval.util.secret import Secret, as_secret, url_identity
from pytest_chunkeval.util.terminate import GRACE_SECONDS, Terminated, interruptible

if TYPE_CHECKING:
    from pytest_chunkeval.embedders.base import Embedder, FloatArray


# https://platform.openai.com/docs/api-reference/embeddings/create
OPENAI_MAX_INPUTS = 2048
OPENAI_MAX_REQUEST_TOKENS = 300_000
OPENAI_MAX_INPUT_TOKENS = 8192
OPENAI_DEFAULT_MAX_RETRIES = 5
# Requests in flight at once: enough to hide a remote server's latency, few enough
# to stay under a hosted API's rate limits (429s are retried with backoff anyway).
OPENAI_DEFAULT_CONCURRENCY = 4
OPENAI_KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder:
    """OpenAI (or OpenAI-compatible) embeddings through the official ``openai`` client.

    Requests hold at most ``max_batch`` inputs and ``max_request_tokens`` tokens
    (cl100k_base count); up to ``concurrency`` requests are in flight at once; 429
    and 5xx answers are retried by the client with backoff (``max_retries``).
    :meth:`embed_parts` hands each request's vectors over as it arrives, and after a
    request fails for good it still hands over those in flight before raising, so
    the embedding cache stores everything that was received. The API key comes from
    ``api_key`` or ``OPENAI_API_KEY`` and is only read when the first request is
    made, so a fully cached run needs no key; it never appears in the identity, the
    repr, or anything written to disk. Empty texts (which the API rejects) get a
    zero vector without a request.
    """

    epsilon = 1e-3
    """The float drift a remote model declares (docs/baselines.md, "Float
    drift"): the same text embedded twice differs far beyond a local model's."""

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        *,
        dimensions: int | None = None,
        api_key: str | Secret | None = None,
        base_url: str | Secret | None = None,
        max_retries: int = OPENAI_DEFAULT_MAX_RETRIES,
        timeout: float = 60.0,
        max_batch: int = OPENAI_MAX_INPUTS,
        max_request_tokens: int = OPENAI_MAX_REQUEST_TOKENS,
        max_input_tokens: int | None = OPENAI_MAX_INPUT_TOKENS,
        concurrency: int = OPENAI_DEFAULT_CONCURRENCY,
        identity: str | None = None,
        client: Any = None,
    ) -> None:
        # first: a traceback's locals then show the key and the URL redacted
        api_key, base_url = as_secret(api_key), as_secret(base_url)
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
        if concurrency < 1:
            raise ValueError(f"concurrency must be >= 1, got {concurrency}")
        self.concurrency = concurrency
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
        self._dimension_lock = threading.Lock()
        self._identity = identity

    @property
    def identity(self) -> str:
        """``openai:MODEL[@SERVER][:dDIM]``, read when used: SERVER is the base URL
        without credentials (``util/secret.url_identity``) when it is not
        OpenAI's, so that two servers serving one model name never share
        vectors; never the key. An ``identity=`` given replaces it."""
        if self._identity:
            return self._identity
        server = self._connection.base_url_identity
        at = "" if server == url_identity(DEFAULT_BASE_URL) else f"@{server}"
        known = self.dimensions or OPENAI_KNOWN_DIMENSIONS.get(self.model)
        dim = f":d{known}" if known else ""  # not the one an answer tells
        return f"openai:{self.model}{at}{dim}"

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
        out: FloatArray | None = None
        for rows, vectors in self.embed_parts(texts):
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[rows] = vectors
        if out is None:  # no texts
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        return out

    def embed_parts(
        self, texts: Sequence[str]
    ) -> Iterator[tuple[list[int], FloatArray]]:
        """Unit vectors of ``texts``, one request's worth at a time, in the order
        the answers arrive (empty texts last, as zero vectors).

        An error (a request that failed after the client's retries, Ctrl-C) stops
        new requests; the answers of those in flight are still handed over, then
        the error is raised.
        """
        texts = list(texts)
        wanted = [i for i, t in enumerate(texts) if t]
        from pytest_chunkeval.tokenizers.base import get_tokenizer

        counts = (
            get_tokenizer().count_batch([texts[i] for i in wanted]) if wanted else []
        )
        batches = [[wanted[j] for j in b] for b in self.plan_batches(counts)]
        yield from self._send(texts, batches)
        empty = [i for i, t in enumerate(texts) if not t]
        if empty:
            if self._dimension is None:  # only empty texts, unknown model: ask once
                self._request([" "])
            yield empty, np.zeros((len(empty), self._dimension or 0), np.float32)

    def _send(
        self, texts: list[str], batches: list[list[int]]
    ) -> Iterator[tuple[list[int], FloatArray]]:
        """Each batch's rows and vectors, ``concurrency`` requests in flight."""
        queue = iter(batches)
        pool = cf.ThreadPoolExecutor(
            max_workers=min(self.concurrency, max(1, len(batches))),
            thread_name_prefix="chunkeval-embed",
        )
        flying: dict[cf.Future[FloatArray], list[int]] = {}
        failure: BaseException | None = None
        abandoned = False

        def submit() -> None:
            batch = next(queue, None)
            if batch is not None:
                flying[pool.submit(self._request, [texts[i] for i in batch])] = batch

        try:
            for _ in range(self.concurrency):
                submit()
            while flying:
                try:
                    with interruptible():  # SIGTERM raises here, or just before
                        done, _ = cf.wait(flying, return_when=cf.FIRST_COMPLETED)
                except BaseException as exc:  # Ctrl-C or SIGTERM while waiting
                    failure = failure or exc
                    # answers in flight are kept; after SIGTERM, for a moment only
                    grace = GRACE_SECONDS if isinstance(exc, Terminated) else None
                    done, late = cf.wait(flying, timeout=grace)
                    for future in late:
                        del flying[future]
                        abandoned = True
                for future in done:
                    batch = flying.pop(future)
                    try:
                        vectors = future.result()
                    except Exception as exc:
                        failure = failure or exc
                        continue
                    yield batch, l2_normalize(vectors)
                    if failure is None:
                        submit()
            if failure is not None:
                raise failure
        finally:
            pool.shutdown(wait=not abandoned, cancel_futures=True)

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
        with self._dimension_lock:  # requests in flight answer at once
            if self._dimension is None:
                self._dimension = int(arr.shape[1])
        if arr.shape[1] != self._dimension:
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


def openai_from_spec(model: str, *, batch_size: int, **options: Any) -> Embedder:
    return OpenAIEmbedder(model, max_batch=batch_size, **options)
