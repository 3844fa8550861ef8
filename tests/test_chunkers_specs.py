"""Spec strings for the built-in chunkers."""

from __future__ import annotations

import pytest

from pytest_chunkeval.chunkers import (
    CHUNKERS,
    FixedTokenChunker,
    RecursiveTokenChunker,
    SentenceChunker,
    get_chunker,
)
from pytest_chunkeval.config.registry import UnknownSpec


@pytest.mark.parametrize(
    ("spec", "kind", "name"),
    [
        ("recursive:200:0", RecursiveTokenChunker, "recursive:200:0"),
        ("recursive:200", RecursiveTokenChunker, "recursive:200:0"),
        ("recursive:400:200", RecursiveTokenChunker, "recursive:400:200"),
        (" recursive: 250 : 125 ", RecursiveTokenChunker, "recursive:250:125"),
        ("fixed:800:400", FixedTokenChunker, "fixed:800:400"),
        ("fixed:200", FixedTokenChunker, "fixed:200:0"),
        ("sentence:150", SentenceChunker, "sentence:150"),
    ],
)
def test_specs_build_chunkers_named_by_canonical_spec(
    spec: str, kind: type, name: str
) -> None:
    chunker = get_chunker(spec)
    assert isinstance(chunker, kind)
    assert chunker.name == name
    assert get_chunker(name).name == name  # the name round-trips


def test_settings_reach_the_chunker() -> None:
    chunker = get_chunker("recursive:300:30")
    assert isinstance(chunker, RecursiveTokenChunker)
    assert (chunker.chunk_size, chunker.chunk_overlap) == (300, 30)


def test_forms_are_listed() -> None:
    # other modules may register more chunkers; the built-ins are always there
    assert set(CHUNKERS.forms()) >= {
        "fixed:SIZE[:OVERLAP]",
        "recursive:SIZE[:OVERLAP]",
        "sentence:SIZE",
    }


def test_unknown_name_lists_valid_forms() -> None:
    with pytest.raises(UnknownSpec) as info:
        get_chunker("chonk:200")
    message = str(info.value)
    assert "unknown chunker 'chonk:200'" in message
    for form in ("fixed:SIZE[:OVERLAP]", "recursive:SIZE[:OVERLAP]", "sentence:SIZE"):
        assert form in message


@pytest.mark.parametrize(
    ("spec", "detail"),
    [
        ("recursive:abc", "SIZE must be an integer, got 'abc'"),
        ("recursive:200:x", "OVERLAP must be an integer, got 'x'"),
        ("recursive:200.5", "SIZE must be an integer, got '200.5'"),
        ("recursive", "SIZE is required"),
        ("recursive:1:2:3", "3 argument(s) given, at most 2 accepted"),
        ("sentence:10:2", "2 argument(s) given, at most 1 accepted"),
        ("fixed:10:10", "chunk_overlap (10) must be smaller than chunk_size (10)"),
        ("recursive:10:11", "chunk_overlap (11) must not exceed chunk_size (10)"),
        ("fixed:0", "chunk_size must be > 0, got 0"),
        ("sentence:-3", "max_tokens must be > 0, got -3"),
    ],
)
def test_bad_arguments_say_what_is_wrong(spec: str, detail: str) -> None:
    with pytest.raises(UnknownSpec) as info:
        get_chunker(spec)
    message = str(info.value)
    assert f"bad chunker spec {spec!r}" in message
    assert detail in message
    kind = spec.split(":")[0]
    assert f"expected {kind}:SIZE" in message


def test_get_chunker_adapts_other_things() -> None:
    chunker = RecursiveTokenChunker(20)
    assert get_chunker(chunker) is chunker

    def words(text: str) -> list[str]:
        return text.split()

    adapted = get_chunker(words)
    assert adapted.name.endswith("words")
    assert adapted.chunk_spans("a bc").tolist() == [[0, 1], [2, 4]]
