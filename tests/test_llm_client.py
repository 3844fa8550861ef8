"""The shared client: one client however many threads ask, and closed when done."""

from __future__ import annotations

import gc
import threading
import time
from typing import Any

import pytest

from pytest_chunkeval.llm import client as client_module
from pytest_chunkeval.llm.client import LazyClient


class FakeClient:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[FakeClient]:
    made: list[FakeClient] = []

    def build(**kwargs: Any) -> FakeClient:
        time.sleep(0.01)  # long enough for the other threads to arrive
        made.append(FakeClient())
        return made[-1]

    monkeypatch.setattr(client_module, "openai_client", build)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-a")
    return made


def test_threads_asking_at_once_share_one_client(built: list[FakeClient]) -> None:
    lazy = LazyClient(who="test")
    got: list[object] = []
    threads = [
        threading.Thread(target=lambda: got.append(lazy.get())) for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(built) == 1
    assert all(c is built[0] for c in got)


def test_a_client_is_closed_when_replaced_closed_or_dropped(
    built: list[FakeClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    lazy = LazyClient(who="test")
    first = lazy.get()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-b")  # another key: another client
    second = lazy.get()
    assert first is built[0]
    assert built[0].closed
    assert second is built[1]
    assert not built[1].closed
    lazy.close()
    assert built[1].closed
    third = lazy.get()
    del lazy
    gc.collect()
    assert third is built[2]
    assert built[2].closed


def test_the_callers_own_client_is_never_closed(built: list[FakeClient]) -> None:
    own = FakeClient()
    lazy = LazyClient(who="test", client=own)
    assert lazy.get() is own
    lazy.close()
    assert not own.closed
    assert built == []
