"""Shared test configuration: pytester for the plugin tests (nothing heavy here)."""

from collections.abc import Callable

import pytest

pytest_plugins = "pytester"


@pytest.fixture
def chunkeval_cli() -> Callable[[list[str]], int]:
    """The ``chunkeval`` command's entry point, called in-process."""
    from pytest_chunkeval.cli.main import main

    return main


@pytest.fixture(autouse=True)
def _output_as_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    # pytest prints whole failure messages in its short summary when $CI or
    # $BUILD_NUMBER is set; the inner runs of the plugin tests must print the same
    # on a developer's machine and in CI, so their text checks mean the same.
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("BUILD_NUMBER", raising=False)
    # a CI job's own step summary must not receive the test projects' reports
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
