"""``pgvector``: a PostgreSQL server with the pgvector extension (docs/stores.md),
through psycopg 3: ``index=none`` (a sequential scan: exact), ``hnsw`` (``m``,
``ef_construction``, ``ef_search``) or ``ivfflat`` (``lists``, ``probes``), by
cosine distance (``<=>``).

Where to connect is never in the spec: the connection string is read from the
environment variable ``dsn_env`` names (``CHUNKEVAL_PG_DSN`` by default) when
the store first connects, held as a ``util/secret.py`` ``Secret`` (``***`` in
every ``str``, ``repr`` and ``--showlocals``, never pickled, revealed only in the
call that connects) and cut out of every message (``_redact``); names,
identities and files hold the variable's name.
The server is never harmed: the store creates its own tables, named per run and
per pytest-xdist worker (``_candidates.run_tag``) with ``CREATE TABLE`` (a
name already there is an error, never reused), reads and writes only those,
and drops them when closed or at exit. The extension is created only where it
is missing. ``psycopg`` and ``pgvector`` are imported on first use.

An index is built after the rows are loaded, as a production table's would be;
an approximate search sets ``enable_seqscan = off`` so that the planner uses the
index on a small table too (on a large one it would anyway).
"""

from __future__ import annotations

import os
import re
import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import numpy as np

from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.stores._base import FloatArray, IdArray, StoreError, as_vectors
from pytest_chunkeval.stores._candidates import (
    RecentIndexes,
    RerankedIndex,
    index_settings,
    need,
    package_version,
    run_tag,
    settings_text,
)
from pytest_chunkeval.util.secret import REDACTED, Secret, as_secret

DEFAULT_DSN_ENV = "CHUNKEVAL_PG_DSN"
TABLE_PREFIX = "chunkeval_"
DEFAULTS: dict[str, dict[str, int]] = {
    "none": {},
    "hnsw": {"m": 16, "ef_construction": 64, "ef_search": 40},
    "ivfflat": {"lists": 100, "probes": 1},
}


def _redact(text: str, dsn: Secret | None) -> str:
    """``text`` with the connection string's password (and the string) cut out."""
    if not dsn:
        return text
    text = text.replace(dsn.reveal(), "<connection string>")
    password = _password(dsn)
    return text.replace(password.reveal(), REDACTED) if password else text


def _password(dsn: Secret) -> Secret | None:
    try:
        from psycopg.conninfo import conninfo_to_dict

        value = conninfo_to_dict(dsn.reveal()).get("password")
    except Exception:
        match = re.search(r"://[^:/@]*:([^@]*)@", dsn.reveal())
        value = match.group(1) if match else None
    return as_secret(str(value)) if value else None


class PgvectorStore:
    """A PostgreSQL server with pgvector, one table per collection key."""

    def __init__(
        self, index: str = "hnsw", *, dsn_env: str = DEFAULT_DSN_ENV, **settings: int
    ) -> None:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", dsn_env):
            raise ConfigError(f"pgvector: dsn_env={dsn_env!r} is not a variable name")
        self.index_type = index
        self.settings = index_settings(index, dict(settings), "pgvector", DEFAULTS)
        self.dsn_env = dsn_env
        self.approximate = index != "none"
        shown = {"index": index, **self.settings}
        self.name = "pgvector?" + "&".join(f"{k}={v}" for k, v in shown.items())
        self._dsn: Secret | None = None
        self._conn: Any = None
        self._lock = threading.RLock()
        self._tables: list[str] = []
        # an index pushed out drops its table: (index, table, connection)
        self._built = RecentIndexes(on_evict=lambda held: self._drop(held[2], held[1]))
        # what the finalizer needs (at exit too), without a reference to self
        self._shared: dict[str, Any] = {"conn": None, "tables": self._tables}
        weakref.finalize(self, _drop_all, self._shared)

    @property
    def identity(self) -> str:
        """Type, every setting (defaults included) and the client library's
        version (the server's is known only once connected: never in a key)."""
        body = settings_text({"index": self.index_type, **self.settings})
        return f"pgvector/{package_version('pgvector')}?{body}"

    def __repr__(self) -> str:
        return f"PgvectorStore({self.name!r})"

    # -- connection ---------------------------------------------------------------

    @contextmanager
    def _failures(self, doing: str) -> Iterator[None]:
        """A server failure as one StoreError, the connection string cut out."""
        try:
            yield
        except StoreError:
            raise
        except Exception as exc:
            text = _redact(f"{type(exc).__name__}: {exc}", self._dsn)
            raise StoreError(f"{self.name}: {doing} failed: {text}") from None

    def _connection(self) -> Any:
        if self._conn is not None:
            return self._conn
        psycopg: Any = need("psycopg", extra="pgvector", store=self.name)
        register: Any = need("pgvector.psycopg", extra="pgvector", store=self.name)
        dsn = as_secret(os.environ.get(self.dsn_env))
        if not dsn:
            raise StoreError(
                f"{self.name}: set the environment variable {self.dsn_env} to the "
                "PostgreSQL connection string (postgresql://USER:PASSWORD@HOST:PORT/"
                "DB); the spec's dsn_env= names another variable"
            )
        self._dsn = dsn
        with self._failures(f"connecting to the server in ${self.dsn_env}"):
            conn = psycopg.connect(dsn.reveal(), autocommit=True, connect_timeout=10)
            have = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
            if have is None:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                have = conn.execute(
                    "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
                ).fetchone()
            register.register_vector(conn)
        self._conn = conn
        self._shared["conn"] = conn
        return conn

    def close(self) -> None:
        """Drop every table this store created and close its connection."""
        with self._lock:
            _drop_all(self._shared)
            self._conn = None
            self._built.clear()

    def __enter__(self) -> PgvectorStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def tables(self) -> list[str]:
        """The tables this store created and has not dropped."""
        return list(self._tables)

    # -- indexing -----------------------------------------------------------------

    def index(self, key: str, vectors: FloatArray) -> RerankedIndex:
        """A table of ``vectors`` (rows ``0..n-1``) with this store's index,
        reused when the same key and vectors were indexed a moment ago."""
        arr = as_vectors(vectors, what=f"vectors for key {key}")
        digest = RecentIndexes.digest(arr)
        with self._lock:
            held = self._built.get(key, digest)
            if held is not None:
                return held[0]  # type: ignore[no-any-return]
            conn = self._connection()
            table = self._create(conn, key, arr)

            def again(vectors: FloatArray, seed: int) -> Any:
                with self._lock:
                    return self._engine(conn, self._create(conn, key, vectors, seed))

            built = RerankedIndex(arr, self._engine(conn, table), again)
            self._built.put(key, digest, (built, table, conn))
        return built

    def _create(
        self, conn: Any, key: str, arr: FloatArray, seed: int | None = None
    ) -> str:
        n, dim = arr.shape
        again = "" if seed is None else f"_r{seed}"
        table = f"{TABLE_PREFIX}{run_tag()}_{key[:12]}{again}"[:63].lower()
        table = re.sub(r"[^a-z0-9_]", "_", table)
        s = self.settings
        if self.index_type == "ivfflat" and n < s["lists"]:
            raise StoreError(
                f"{self.name}: an IVFFlat index of lists={s['lists']} needs at least "
                f"that many rows to build its lists, got {n}; lower lists= "
                "(pgvector suggests rows / 1000) or use index=none"
            )
        with self._failures(f"creating table {table}"):
            conn.execute(
                f"CREATE TABLE {table} (id bigint PRIMARY KEY, embedding vector({dim}))"
            )
            self._tables.append(table)
            with conn.cursor().copy(
                f"COPY {table} (id, embedding) FROM STDIN WITH (FORMAT BINARY)"
            ) as copy:
                copy.set_types(["int8", "vector"])
                for i in range(n):
                    copy.write_row((i, arr[i]))
            if self.index_type == "hnsw":
                conn.execute(
                    f"CREATE INDEX ON {table} USING hnsw (embedding vector_cosine_ops)"
                    f" WITH (m = {s['m']}, ef_construction = {s['ef_construction']})"
                )
            elif self.index_type == "ivfflat":
                conn.execute(
                    f"CREATE INDEX ON {table} USING ivfflat "
                    f"(embedding vector_cosine_ops) WITH (lists = {s['lists']})"
                )
            conn.execute(f"ANALYZE {table}")
        return table

    def _drop(self, conn: Any, table: str) -> None:
        if table in self._tables:
            with self._failures(f"dropping table {table}"):
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            self._tables.remove(table)

    def _engine(self, conn: Any, table: str) -> Any:
        s = self.settings
        setup = []
        if self.index_type == "hnsw":
            setup.append(f"SET hnsw.ef_search = {s['ef_search']}")
        elif self.index_type == "ivfflat":
            setup.append(f"SET ivfflat.probes = {s['probes']}")
        setup.append(f"SET enable_seqscan = {'off' if self.approximate else 'on'}")
        sql = f"SELECT id FROM {table} ORDER BY embedding <=> %s LIMIT %s"

        def engine(queries: FloatArray, depth: int) -> IdArray:
            out = np.full((len(queries), depth), -1, dtype=np.int64)
            with self._lock, self._failures(f"searching table {table}"):
                for statement in setup:
                    conn.execute(statement)
                with conn.cursor() as cur:
                    for row, q in enumerate(queries):
                        ids = [r[0] for r in cur.execute(sql, (q, depth)).fetchall()]
                        out[row, : len(ids)] = ids
            return out

        return engine


def _drop_all(state: dict[str, Any]) -> None:
    """Drop the tables a store created and close its connection (also at exit)."""
    conn, tables = state.get("conn"), state["tables"]
    state["conn"] = None
    if conn is None:
        tables.clear()
        return
    try:
        for table in list(tables):
            conn.execute(f"DROP TABLE IF EXISTS {table}")
            tables.remove(table)
    except Exception:  # the server is gone: nothing left to drop there
        tables.clear()
    finally:
        with suppress(Exception):
            conn.close()


def pgvector_from_spec(
    index: str = "hnsw", dsn_env: str = DEFAULT_DSN_ENV, **settings: int
) -> PgvectorStore:
    """Factory for ``pgvector[?index=none|hnsw|ivfflat&dsn_env=VAR&...]``."""
    return PgvectorStore(index, dsn_env=dsn_env, **settings)
