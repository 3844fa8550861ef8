"""Shared test configuration: pytester for the plugin tests (nothing heavy here)."""

from collections.abc import Callable

import pytest

pytest_plugins = "pytester"


@pytest.fixture
def chunkeval_cli() -> Callable[[list[str]], int]:
    """The ``chunkeval`` command's entry point, called in-process."""
    from pytest_chunkeval.cli.main import main

    return main


@pytest.fixture(scope="session", autouse=True)
def _public_api_loaded() -> None:
    """Every public name imported once, before any pytester in-process run
    snapshots ``sys.modules``: a module first imported inside such a run is
    dropped after it and imported again by the next, so one process would hold
    two ``Statistic`` classes and ``isinstance`` fail (seen under ``-n 2`` in
    test_docs_blocks, depending on the order of the tests)."""
    import pytest_chunkeval

    for name in pytest_chunkeval.__all__:
        getattr(pytest_chunkeval, name)


@pytest.fixture(autouse=True)
def _output_as_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    # pytest prints whole failure messages in its short summary when $CI or
    # $BUILD_NUMBER is set; the inner runs of the plugin tests must print the same
    # on a developer's machine and in CI, so their text checks mean the same.
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    # a CI job's own step summary must not receive the test projects' reports
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
