"""The package's top level: about 35 names (tests/test_layout.py counts them and
checks each is written once); what moved off it keeps working for one release,
with a ``DeprecationWarning`` naming where it is now."""

from __future__ import annotations

import importlib
import re

import pytest

import pytest_chunkeval
from pytest_chunkeval import assertions
from pytest_chunkeval.core.metric_names import thresholds

MOVED = [
    ("FixedTokenChunker", "pytest_chunkeval.chunkers"),
    ("RecursiveTokenChunker", "pytest_chunkeval.chunkers"),
    ("SentenceChunker", "pytest_chunkeval.chunkers"),
    ("KamradtSemanticChunker", "pytest_chunkeval.chunkers.semantic"),
    ("KamradtModifiedChunker", "pytest_chunkeval.chunkers.semantic"),
    ("ClusterSemanticChunker", "pytest_chunkeval.chunkers.cluster"),
    ("LLMSemanticChunker", "pytest_chunkeval.chunkers.llm"),
    ("CheckFailed", "pytest_chunkeval.errors"),
    ("ConfigError", "pytest_chunkeval.errors"),
    ("DataError", "pytest_chunkeval.errors"),
    ("FileAccessError", "pytest_chunkeval.errors"),
    ("MissingFile", "pytest_chunkeval.errors"),
    ("UnavailableError", "pytest_chunkeval.errors"),
    ("Statistic", "pytest_chunkeval.assertions"),
    *(
        (f"assert_{m}_at_least", "pytest_chunkeval.assertions")
        for m in thresholds().values()
        if m != "recall"
    ),
]
"""Every name the top level had before and no longer lists."""


@pytest.mark.parametrize(("name", "home"), MOVED)
def test_a_moved_name_still_resolves_with_a_warning(name: str, home: str) -> None:
    assert name not in pytest_chunkeval.__all__
    assert name not in dir(pytest_chunkeval)
    with pytest.warns(DeprecationWarning, match=rf"import it from {home}\b"):
        value = getattr(pytest_chunkeval, name)
    assert value is getattr(importlib.import_module(home), name)


def test_the_old_api_is_all_there() -> None:
    # 65 names in the earlier release: 36 stayed, these 29 moved
    assert len({name for name, _ in MOVED}) == len(MOVED) == 29
    assert not {n for n, _ in MOVED} & set(pytest_chunkeval.__all__)


def test_a_name_the_package_never_had_is_an_attribute_error() -> None:
    for name in ("assert_nonsense_at_least", "Nonsense", "assert_ceiling_at_least"):
        with pytest.raises(AttributeError, match=rf"has no attribute {name!r}"):
            getattr(pytest_chunkeval, name)


def test_star_import_gives_the_public_api() -> None:
    namespace: dict[str, object] = {}
    exec("from pytest_chunkeval import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == sorted(
        pytest_chunkeval.__all__
    )


def test_every_assertion_helper_is_in_the_assertions_module() -> None:
    helpers = {n for n in vars(assertions) if n.endswith("_at_least")}
    assert {"assert_recall_at_least", "assert_metric_at_least"} <= helpers
    assert pytest_chunkeval.assert_recall_at_least is assertions.assert_recall_at_least
    assert (
        pytest_chunkeval.Store
        is importlib.import_module("pytest_chunkeval.stores").Store
    )


def test_the_docs_name_the_whole_public_api() -> None:
    # docs/index.md, "The Python API": its count and every name, kept in step
    from pathlib import Path

    page = Path(__file__).resolve().parents[1] / "docs" / "index.md"
    section = page.read_text(encoding="utf-8").split("## The Python API", 1)[1]
    section = section.split("\n## ", 1)[0]
    count = re.search(r"`pytest_chunkeval` itself names (\d+) things", section)
    assert count is not None
    assert int(count[1]) == len(pytest_chunkeval.__all__)
    named = set(re.findall(r"`(\w+)`", section))
    assert set(pytest_chunkeval.__all__) <= named, set(pytest_chunkeval.__all__) - named
