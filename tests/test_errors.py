"""One error root (issue 11): every error a user can cause is a ChunkevalError,
and keeps the built-in base users already catch."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import pytest_chunkeval
from pytest_chunkeval import errors
from pytest_chunkeval.errors import (
    CheckFailed,
    ChunkevalError,
    ChunkevalWarning,
    ConfigError,
    DataError,
    FileAccessError,
    MissingFile,
    UnavailableError,
    file_error,
)


def _package_exceptions() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(
        pytest_chunkeval.__path__, prefix="pytest_chunkeval."
    ):
        if info.name == "pytest_chunkeval.plugin":
            continue  # imports pytest; it defines no exception
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == info.name
            ):
                found[f"{info.name}.{name}"] = obj
    return found


EXCEPTIONS = _package_exceptions()


def test_the_walk_finds_the_known_families() -> None:
    names = {cls.__name__ for cls in EXCEPTIONS.values()}
    assert {"UnknownSpec", "BaselineRegression", "CorpusError", "StoreError"} <= names
    assert len(EXCEPTIONS) >= 29


@pytest.mark.parametrize("qualname", sorted(EXCEPTIONS))
def test_every_public_exception_has_the_root(qualname: str) -> None:
    cls = EXCEPTIONS[qualname]
    if cls.__name__.startswith("_") or not issubclass(cls, Exception):
        # private control flow, never seen by a user; or a signal turned into an
        # exception (util/terminate.py: KeyboardInterrupt's kind, which no
        # `except Exception`, ChunkevalError's included, may catch)
        assert not issubclass(cls, ChunkevalError)
        return
    if issubclass(cls, Warning):
        assert issubclass(cls, ChunkevalWarning), qualname
    else:
        assert issubclass(cls, ChunkevalError), qualname


@pytest.mark.parametrize(
    ("module", "name", "builtin"),
    [
        ("config.registry", "UnknownSpec", ValueError),
        ("config.options", "SettingsError", ValueError),
        ("data.corpus", "CorpusError", ValueError),
        ("data.corpus", "UnknownDocument", KeyError),
        ("data.query_types", "QuerySetError", ValueError),
        ("data.query_types", "UnknownQuery", KeyError),
        ("engine.results", "UnknownName", KeyError),
        ("gate.store", "BaselineRegression", AssertionError),
        ("gate.files.baseline", "BaselineMissing", AssertionError),
        ("reporting.history", "HistoryError", ValueError),
        ("stores._base", "StoreError", RuntimeError),
        ("embedders.base", "EmbedderUnavailable", RuntimeError),
        ("tokenizers.base", "TokenizerUnavailable", RuntimeError),
        ("chunkers.base", "ChunkerError", ValueError),
    ],
)
def test_built_in_bases_are_kept(module: str, name: str, builtin: type) -> None:
    cls = getattr(importlib.import_module(f"pytest_chunkeval.{module}"), name)
    assert issubclass(cls, builtin)
    assert issubclass(cls, ChunkevalError)


def test_families_and_their_bases() -> None:
    assert issubclass(ConfigError, ValueError)
    assert issubclass(DataError, ValueError)
    assert issubclass(FileAccessError, OSError)
    assert issubclass(MissingFile, FileNotFoundError)
    assert issubclass(UnavailableError, RuntimeError)
    assert issubclass(CheckFailed, AssertionError)
    assert issubclass(ChunkevalWarning, UserWarning)
    # the package root exports the roots (the families: pytest_chunkeval.errors)
    for name in ("ChunkevalError", "ChunkevalWarning"):
        assert getattr(pytest_chunkeval, name) is getattr(errors, name)


def test_file_error_is_one_line_and_keeps_the_os_details(tmp_path) -> None:
    missing = tmp_path / "q.jsonl"
    with pytest.raises(FileNotFoundError) as info:
        missing.read_text()
    error = file_error(info.value, "cannot read the query set", missing)
    assert isinstance(error, MissingFile)
    assert isinstance(error, FileNotFoundError)
    reason = "No such file or directory"
    assert str(error) == f"cannot read the query set {missing}: {reason}"
    assert error.filename == str(missing)
    assert error.errno == info.value.errno


def test_constructor_arguments_are_config_errors() -> None:
    from pytest_chunkeval.chunkers import FixedTokenChunker

    with pytest.raises(ConfigError, match="chunk_overlap"):
        FixedTokenChunker(100, 100)
    from pytest_chunkeval.config.defaults import check_k

    with pytest.raises(ValueError, match="k must be a positive integer") as info:
        check_k(0)
    assert isinstance(info.value, ConfigError)
