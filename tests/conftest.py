"""Shared test configuration: pytester for the plugin tests (nothing heavy here)."""

from collections.abc import Callable

import pytest

pytest_plugins = "pytester"


@pytest.fixture
def chunkeval_cli() -> Callable[[list[str]], int]:
    """The ``chunkeval`` command's entry point, called in-process."""
    from pytest_chunkeval.cli import main

    return main
