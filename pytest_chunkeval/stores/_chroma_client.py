"""Chroma clients shared per process (one per path or server), their settings and
teardown, the in-process collections' bookkeeping (:data:`EPHEMERAL`), and the
checks that a reused collection holds the given vectors."""

from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict
from contextlib import suppress
from typing import TYPE_CHECKING, Any

import numpy as np

from pytest_chunkeval.stores._base import FloatArray, StoreError

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection


# Vectors read back from a reused collection must match the ones given to within
# float noise (a different embedder build may differ in the last bits).
_REUSE_ATOL = 1e-4


def holds(collection: Collection, arr: FloatArray) -> bool:
    """Whether ``collection`` has ``arr``'s first and last rows under their ids."""
    n = arr.shape[0]
    return _rows_match(collection, arr, sorted({0, n - 1}))


def holds_prefix(collection: Collection, arr: FloatArray) -> bool:
    """Whether the row ``"0"`` (when present) matches, i.e. the same vectors."""
    got = collection.get(ids=["0"], include=["embeddings"])
    return not got["ids"] or _rows_match(collection, arr, [0])


def _rows_match(collection: Collection, arr: FloatArray, rows: list[int]) -> bool:
    got = collection.get(ids=[str(i) for i in rows], include=["embeddings"])
    embeddings = got["embeddings"]
    if embeddings is None or len(got["ids"]) != len(rows):
        return False
    by_id = dict(zip(got["ids"], embeddings, strict=True))
    for i in rows:
        vec = np.asarray(by_id[str(i)], dtype=np.float32)
        if vec.shape != arr[i].shape or not np.allclose(vec, arr[i], atol=_REUSE_ATOL):
            return False
    return True


def client_settings(**values: Any) -> Any:
    """chromadb settings with telemetry off.

    chromadb's ``Settings`` also reads environment variables and a ``.env`` file in
    the working directory (``CHROMA_SERVER_HOST``, ``CHROMA_CLIENT_AUTH_*``...);
    values given here win, so the spec string decides where we connect while
    auth settings from the environment still apply.

    Telemetry is turned off through the environment (which ``Settings`` reads) rather
    than an argument, so a user's own ``chromadb.EphemeralClient()`` opened later in
    the same process gets equal settings and shares the in-process system instead
    of failing with "already exists with different settings".
    """
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    from chromadb.config import Settings

    settings = Settings(**values)
    if settings.anonymized_telemetry:  # the user's environment asked for it: not here
        settings = Settings(anonymized_telemetry=False, **values)
    return settings


def shared_client(make: Any) -> ClientAPI:
    """Open an in-process client, joining an existing system if the user's differs.

    Chroma allows one in-process system per path (one for all ephemeral clients)
    and refuses a second one with different settings; a user may already have
    opened one with defaults, and sharing it is what they would expect.
    """
    try:
        return make(client_settings())  # type: ignore[no-any-return]
    except ValueError as exc:
        if "already exists" not in str(exc):
            raise
        from chromadb.api.shared_system_client import SharedSystemClient

        systems = getattr(SharedSystemClient, "_identifier_to_system", {})
        for system in list(systems.values()):
            try:
                return make(system.settings.model_copy())  # type: ignore[no-any-return]
            except ValueError:
                continue
        raise


def client_sessions(client: object) -> list[Any]:
    """The httpx sessions behind a chromadb client (private; looked up defensively).

    An HTTP client owns two: its own and its internal admin client's.
    """
    found = []
    for owner in (client, getattr(client, "_admin_client", None)):
        session = getattr(getattr(owner, "_server", None), "_session", None)
        if session is not None:
            found.append(session)
    return found


def close_client(client: ClientAPI) -> None:
    for session in client_sessions(client):
        with suppress(Exception):
            session.close()
    with suppress(Exception):
        client.close()  # type: ignore[attr-defined]


def is_connection_error(exc: BaseException) -> bool:
    try:
        import httpx
    except ImportError:  # pragma: no cover - chromadb depends on httpx
        return False
    return isinstance(exc, (httpx.TransportError, ConnectionError)) or (
        "Could not connect" in str(exc)
    )


def connection_reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0]


class EphemeralPool:
    """Collections this process made in Chroma's in-memory system.

    Every ephemeral client of a process shares one system, so this bookkeeping is
    process-wide: recently used collections stay for reuse, older ones are deleted
    once no live index uses them, so long sessions do not pile up vectors.
    """

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.recent: OrderedDict[str, None] = OrderedDict()
        self.live: weakref.WeakSet[Any] = weakref.WeakSet()

    def used(self, index: Any) -> None:
        self.recent[index.name] = None
        self.recent.move_to_end(index.name)
        self.live.add(index)

    def evict(self, client: ClientAPI, keep: int) -> list[str]:
        """Delete the idle collections beyond the ``keep`` most recent."""
        in_use = {index.name for index in list(self.live)}
        old = list(self.recent)[: max(0, len(self.recent) - keep)]
        deleted = []
        for name in old:
            if name in in_use:
                continue
            with suppress(Exception):  # already gone is fine
                client.delete_collection(name)
            del self.recent[name]
            deleted.append(name)
        return deleted


EPHEMERAL = EphemeralPool()


def server_version(url: str, timeout: float) -> str:
    """A Chroma server's version (``GET /api/v2/version``); ``unknown`` when it
    does not answer (another key than a known version's: a cache miss, never a
    wrong hit)."""
    import httpx

    try:
        answer = httpx.get(f"{url}/api/v2/version", timeout=timeout)
        answer.raise_for_status()
        return str(answer.json())
    except (httpx.HTTPError, ValueError):
        return "unknown"


def http_client(
    chromadb: Any,
    server: tuple[str, int, bool],
    *,
    connect_timeout: float,
    timeout: float | None,
) -> ClientAPI:
    """A client of the Chroma server at ``(host, port, ssl)``, probed first and
    with every request bounded: chromadb's own client has no timeout at all and
    a vague error, so a down server fails fast with its URL and a hung one
    cannot hang a test run."""
    import httpx

    host, port, ssl = server
    shown = f"[{host}]" if ":" in host else host
    url = f"{'https' if ssl else 'http'}://{shown}:{port}"
    try:
        httpx.get(f"{url}/api/v2/heartbeat", timeout=connect_timeout)
    except httpx.HTTPError as exc:
        raise StoreError(
            f"cannot reach Chroma server {url} ({connection_reason(exc)}); "
            f"is it running? Start one with: chroma run --host {host} "
            f"--port {port} --path DIR"
        ) from None
    settings = client_settings(chroma_server_host=host, chroma_server_http_port=port)
    client = chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings)
    # The session is private to chromadb, hence the defensive lookup.
    for session in client_sessions(client):
        if isinstance(session, httpx.Client):
            session.timeout = httpx.Timeout(timeout, connect=connect_timeout)
    return client  # type: ignore[no-any-return]
