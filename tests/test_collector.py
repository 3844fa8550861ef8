"""util/collector.py: the cycle collector paused while chunkeval eval runs, and
resumed as it was, also after an error."""

from __future__ import annotations

import gc

import pytest

from pytest_chunkeval.cli.eval import run_eval
from pytest_chunkeval.util.collector import collector_paused


@collector_paused
def _state(fail: bool = False) -> bool:
    if fail:
        raise RuntimeError("boom")
    return gc.isenabled()


def test_paused_inside_and_resumed_after() -> None:
    assert gc.isenabled()
    assert _state() is False
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        _state(fail=True)
    assert gc.isenabled()


def test_a_caller_that_paused_it_keeps_it_paused() -> None:
    gc.disable()
    try:
        assert _state() is False
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_chunkeval_eval_runs_paused() -> None:
    assert run_eval.__wrapped__ is not None  # type: ignore[attr-defined]
