"""The one spec grammar: parse, print, canonical forms, errors."""

from __future__ import annotations

import importlib.util
import re
import string
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_chunkeval.chunkers import CHUNKERS
from pytest_chunkeval.config.registry import (
    Param,
    Registry,
    Signature,
    UnknownSpec,
    integer,
)
from pytest_chunkeval.config.specs import (
    SPEC_GRAMMAR,
    Spec,
    SpecError,
    format_spec,
    parse,
)
from pytest_chunkeval.embedders.registry import EMBEDDERS
from pytest_chunkeval.gate.comparison.configuration import same_spec as _same_spec
from pytest_chunkeval.gate.files.legacy import (
    legacy_baseline_paths,
    legacy_test_names,
    spec_aliases,
)
from pytest_chunkeval.reporting.table import split_spec
from pytest_chunkeval.stores import STORES
from pytest_chunkeval.tokenizers.base import TOKENIZERS, get_tokenizer

# ------------------------------------------------------------------ the grammar

_names = st.from_regex(r"[A-Za-z][A-Za-z0-9_.+-]{0,12}", fullmatch=True)
# Any printable text but ':' (the separator) and spaces; the printer escapes ?&@%.
_arg_chars = st.sampled_from(
    [c for c in string.printable if c not in ": \t\n\r\x0b\x0c"] + ["é", "/", "\\"]
)
_args = st.text(_arg_chars, min_size=1, max_size=8).filter(
    lambda a: not a.startswith("//")
)
_keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.-]{0,8}", fullmatch=True)
_values = st.text(_arg_chars, max_size=8)


@st.composite
def _options(draw: Any) -> tuple[tuple[str, str], ...]:
    keys = draw(st.lists(_keys, max_size=3, unique=True))
    return tuple((k, draw(_values)) for k in keys)


def _spec(inner: st.SearchStrategy[Spec | None]) -> st.SearchStrategy[Spec]:
    plain = st.builds(
        Spec, _names, st.lists(_args, max_size=3).map(tuple), _options(), inner
    )
    url = st.builds(
        Spec,
        _names,
        st.from_regex(r"//[a-z0-9.]{1,10}(:[0-9]{1,5})?", fullmatch=True).map(
            lambda u: (u,)
        ),
        _options(),
        inner,
    )
    return plain | url


specs = _spec(st.none() | _spec(st.none() | _spec(st.none())))


@given(specs)
def test_print_then_parse_gives_the_same_spec(spec: Spec) -> None:
    text = format_spec(spec)
    assert parse(text) == spec
    assert format_spec(parse(text)) == text


@given(st.text(max_size=30))
def test_parse_accepts_or_raises_spec_error_only(text: str) -> None:
    try:
        spec = parse(text)
    except SpecError as exc:
        message = str(exc)
    else:  # anything accepted prints and re-parses to itself
        assert parse(format_spec(spec)) == spec
        return
    assert repr(text) in message


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("recursive:200:0", Spec("recursive", ("200", "0"))),
        (" recursive: 250 : 125 ", Spec("recursive", ("250", "125"))),
        ("chroma", Spec("chroma")),
        ("chroma+http://h:8000", Spec("chroma+http", ("//h:8000",))),
        (
            "llm:gpt-4o-mini?window=1200",
            Spec("llm", ("gpt-4o-mini",), (("window", "1200"),)),
        ),
        (
            "cluster:400@openai:text-embedding-3-large?dimensions=256",
            Spec(
                "cluster",
                ("400",),
                (),
                Spec("openai", ("text-embedding-3-large",), (("dimensions", "256"),)),
            ),
        ),
        ("chroma:/tmp/a%40b%3Fc", Spec("chroma", ("/tmp/a@b?c",))),
    ],
)
def test_parse_examples(text: str, spec: Spec) -> None:
    assert parse(text) == spec


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        ("", "empty spec"),
        ("200:recursive", "starts with a name"),
        ("recursive:", "empty argument"),
        ("recursive::0", "empty argument"),
        ("two words", "contains a space (write %20)"),
        ("recursive:200?", "nothing after '?'"),
        ("llm:m?window", "option 'window' is not KEY=VALUE"),
        ("llm:m?a=1&a=2", "option 'a' is given twice"),
        ("cluster:400@", "nothing after '@'"),
        ("chroma+http://", "empty location"),
        ("recursive(200)", "unexpected '(' after the name 'recursive'"),
        ("chroma:%ff", "has a %-escape that is not UTF-8"),
    ],
)
def test_malformed_specs_name_the_spec_and_the_grammar(text: str, detail: str) -> None:
    with pytest.raises(SpecError) as info:
        parse(text, "chunker")
    message = str(info.value)
    assert f"chunker spec {text!r} is not valid" in message
    assert detail in message
    assert "expected NAME[:ARG...][?KEY=VALUE&...][@SPEC]" in message


def test_the_grammar_text_names_every_part() -> None:
    for part in ("NAME[:ARG", "?KEY=VALUE", "@SPEC", "://HOST:PORT", "%XX"):
        assert part in SPEC_GRAMMAR
    assert max(len(line) for line in SPEC_GRAMMAR.splitlines()) <= 88


def test_the_grammar_states_what_a_hybrid_store_parses() -> None:
    # The help listed hybrid[:DENSE_STORE] alone, without the @ form a hybrid
    # store's name takes when its dense store has options (docs/retrieval.md).
    from pytest_chunkeval.stores import get_store

    assert "hybrid[:DENSE_STORE][?n=50&rrf=60&weights=1,1&BM25 options]" in SPEC_GRAMMAR
    assert "hybrid[?...]@DENSE_STORE?ITS_OPTIONS (not both)" in SPEC_GRAMMAR
    examples = re.findall(r"hybrid@\w+\?\w+=\w+", SPEC_GRAMMAR)
    assert examples == ["hybrid@faiss?index=flat"]
    for spec in [*examples, "hybrid:chroma", "hybrid?n=20@chroma?ef_search=50"]:
        assert get_store(spec).name == spec
    with pytest.raises(ValueError, match="the dense store is named twice"):
        get_store("hybrid:exact@chroma?ef_search=50")


# --------------------------------------------------------- canonical forms


# Every spec kind: what users write today, and its canonical form.
CANONICAL = [
    (CHUNKERS, "recursive:200:0", "recursive:200:0"),
    (CHUNKERS, "recursive:200", "recursive:200:0"),
    (CHUNKERS, " recursive: 200 : 00 ", "recursive:200:0"),
    (CHUNKERS, "fixed:256:0", "fixed:256:0"),
    (CHUNKERS, "fixed:256", "fixed:256:0"),
    (CHUNKERS, "sentence:150", "sentence:150"),
    (CHUNKERS, "cluster:400", "cluster:400"),
    (CHUNKERS, "cluster:400:50", "cluster:400"),
    (CHUNKERS, "cluster:200:40", "cluster:200:40"),
    (
        CHUNKERS,
        "cluster:400@openai:text-embedding-3-large",
        "cluster:400@openai:text-embedding-3-large",
    ),
    (CHUNKERS, "cluster:400@sentence-transformers:all-MiniLM-L6-v2", "cluster:400"),
    (CHUNKERS, "cluster:400@sentence-transformers", "cluster:400"),
    (CHUNKERS, "kamradt", "kamradt"),
    (CHUNKERS, "kamradt:95", "kamradt"),
    (CHUNKERS, "kamradt:92.50", "kamradt:92.5"),
    (CHUNKERS, "kamradt-modified:300", "kamradt-modified:300"),
    (CHUNKERS, "kamradt-modified:300:max", "kamradt-modified:300"),
    (CHUNKERS, "kamradt-modified:300:mean", "kamradt-modified:300:mean"),
    (CHUNKERS, "llm:gpt-4o-mini?window=1200", "llm:gpt-4o-mini?window=1200"),
    (CHUNKERS, "llm:gpt-4o-mini?window=800", "llm:gpt-4o-mini"),
    (CHUNKERS, "llm:m?window=300&attempts=2", "llm:m?attempts=2&window=300"),
    (CHUNKERS, "llm:llama3:8b", "llm:llama3:8b"),
    (
        EMBEDDERS,
        "sentence-transformers:all-MiniLM-L6-v2",
        "sentence-transformers:all-MiniLM-L6-v2",
    ),
    (EMBEDDERS, "sentence-transformers", "sentence-transformers:all-MiniLM-L6-v2"),
    (
        EMBEDDERS,
        "sentence-transformers:m?device=cpu&batch_size=64",
        "sentence-transformers:m?device=cpu",
    ),
    (EMBEDDERS, "openai:text-embedding-3-large", "openai:text-embedding-3-large"),
    (EMBEDDERS, "openai", "openai:text-embedding-3-small"),
    (EMBEDDERS, "openai:m?timeout=60.0&dimensions=256", "openai:m?dimensions=256"),
    (EMBEDDERS, "hashing", "hashing:256"),
    (EMBEDDERS, "hashing:64", "hashing:64"),
    (STORES, "exact", "exact"),
    (STORES, "chroma", "chroma"),
    (STORES, "chroma:.chunkeval/chroma", "chroma:.chunkeval/chroma"),
    (STORES, "chroma:C:\\vectors", "chroma:C:\\vectors"),
    (STORES, "chroma+http://localhost:8000", "chroma+http://localhost:8000"),
    (STORES, "chroma+https://db.example:443", "chroma+https://db.example:443"),
    (TOKENIZERS, "cl100k_base", "cl100k_base"),
    (TOKENIZERS, "tiktoken:cl100k_base", "cl100k_base"),
    (TOKENIZERS, "tiktoken", "cl100k_base"),
    (TOKENIZERS, "o200k_base", "o200k_base"),
    (TOKENIZERS, "hf:bert-base-uncased", "hf:bert-base-uncased"),
    (TOKENIZERS, "tiktoken:hf", "tiktoken:hf"),  # not shortened: hf is a name
]


@pytest.mark.parametrize(
    ("registry", "written", "canonical"),
    CANONICAL,
    ids=[f"{r.kind}-{w.strip()}" for r, w, _ in CANONICAL],
)
def test_every_spec_kind_has_one_canonical_form(
    registry: Registry[Any], written: str, canonical: str
) -> None:
    assert registry.label(written) == canonical
    spec = registry.canonical(written)
    # parse -> print -> parse: the same object and the same text
    assert parse(format_spec(spec)) == spec
    assert registry.canonical(canonical) == spec
    assert registry.label(canonical) == canonical


@given(
    st.sampled_from(["fixed", "recursive"]),
    st.integers(1, 10_000),
    st.none() | st.integers(0, 10_000),
)
def test_token_chunker_specs_round_trip(name: str, size: int, overlap: Any) -> None:
    written = f"{name}:{size}" + ("" if overlap is None else f":{overlap}")
    label = CHUNKERS.label(written)
    assert label == f"{name}:{size}:{overlap or 0}"
    assert CHUNKERS.label(label) == label


@given(
    st.integers(1, 5000),
    st.integers(1, 500),
    st.sampled_from(["", "@hashing:64", "@sentence-transformers:all-MiniLM-L6-v2"]),
)
def test_cluster_specs_round_trip(max_tokens: int, min_tokens: int, at: str) -> None:
    label = CHUNKERS.label(f"cluster:{max_tokens}:{min_tokens}{at}")
    assert CHUNKERS.canonical(label) == CHUNKERS.canonical(parse(label))
    assert CHUNKERS.label(label) == label
    assert label.startswith(f"cluster:{max_tokens}")
    assert ("@hashing:64" in label) == (at == "@hashing:64")


@given(
    st.from_regex(r"[a-z0-9][a-z0-9.-]{0,10}(:[a-z0-9]{1,5})?", fullmatch=True),
    st.dictionaries(st.sampled_from(["window", "attempts"]), st.integers(1, 5000)),
)
def test_llm_specs_round_trip(model: str, options: dict[str, int]) -> None:
    query = "&".join(f"{k}={v}" for k, v in options.items())
    label = CHUNKERS.label(f"llm:{model}" + (f"?{query}" if query else ""))
    assert CHUNKERS.label(label) == label
    assert parse(label).name == "llm"


def test_canonical_specs_build_the_chunker_they_name() -> None:
    # Built-in chunkers are named by their canonical spec.
    for written in ("recursive:200", "fixed:256", "kamradt-modified:300:max"):
        assert CHUNKERS.create(written).name == CHUNKERS.label(written)


def test_equivalent_tokenizer_specs_are_one_tokenizer() -> None:
    assert get_tokenizer("tiktoken:cl100k_base") is get_tokenizer("cl100k_base")
    assert get_tokenizer("cl100k_base").name == "cl100k_base"


# ------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("registry", "spec", "detail"),
    [
        (CHUNKERS, "recursive:", "empty argument"),
        (CHUNKERS, "recursive", "SIZE is required"),
        (CHUNKERS, "recursive:big", "SIZE must be an integer, got 'big'"),
        (CHUNKERS, "sentence:1:2", "2 argument(s) given, at most 1 accepted"),
        (CHUNKERS, "llm:m?temperature=1", "unknown option 'temperature'"),
        (CHUNKERS, "llm:m?window=0", "option window='0': must be >= 1, got 0"),
        (CHUNKERS, "recursive:200@hashing", "takes no '@' spec"),
        (CHUNKERS, "cluster:400@nope", "unknown embedder 'nope'"),
        (STORES, "exact:fast", "takes no arguments"),
        (EMBEDDERS, "hashing:x", "DIM must be an integer"),
        (TOKENIZERS, "hf", "NAME_OR_PATH is required"),
    ],
)
def test_bad_specs_name_the_spec_and_the_valid_forms(
    registry: Registry[Any], spec: str, detail: str
) -> None:
    with pytest.raises(UnknownSpec) as info:
        registry.create(spec)
    message = str(info.value)
    assert repr(spec) in message
    assert detail in message
    # the valid form(s): of the name, or all of them when the name is unknown
    assert "expected" in message or "valid forms" in message


def test_unknown_names_list_every_form() -> None:
    with pytest.raises(UnknownSpec) as info:
        CHUNKERS.canonical("chonk:200")
    for form in CHUNKERS.forms():
        assert form in str(info.value)


def test_free_form_factories_keep_receiving_the_text_after_the_name() -> None:
    registry: Registry[str] = Registry("thing")
    registry.register("raw", lambda rest: rest, "raw[:ANY]")
    assert registry.create("raw") == ""
    assert registry.create("raw:a:b?c=d") == "a:b?c=d"
    assert registry.label(" raw : a ") == "raw:a"  # syntax only: no defaults known


def test_signatures_make_the_form_and_fill_defaults() -> None:
    registry: Registry[tuple[int, int]] = Registry("thing")
    signature = Signature((Param("size", integer), Param("step", integer, default=1)))
    registry.register("w", lambda size, step: (size, step), signature=signature)
    assert registry.form("w") == "w:SIZE[:STEP]"
    assert registry.create("w:5") == (5, 1)
    assert registry.label("w:5:1") == "w:5"
    assert registry.label("w:5:2") == "w:5:2"


# ------------------------------------------------------------------ display


@pytest.mark.parametrize(
    ("spec", "columns"),
    [
        ("recursive:200", ("recursive", "200", "0")),
        ("recursive:200:0", ("recursive", "200", "0")),
        (
            "cluster:400@openai:text-embedding-3-large",
            ("cluster (@openai:text-embedding-3-large)", "400", ""),
        ),
        ("cluster:200:40", ("cluster (40)", "200", "")),
        ("llm:gpt-4o-mini?window=1200", ("llm (gpt-4o-mini, window=1200)", "", "")),
        ("kamradt-modified:300:mean", ("kamradt-modified (mean)", "300", "")),
        ("handbook_600", ("handbook_600", "", "")),
    ],
)
def test_display_columns_come_from_the_canonical_spec(
    spec: str, columns: tuple[str, str, str]
) -> None:
    assert split_spec(spec) == columns


def test_the_help_text_names_every_built_in() -> None:
    # In a fresh interpreter: inner pytest runs of other tests in this process
    # register their own names (a conftest's ``paragraphs`` chunker).
    code = textwrap.dedent(
        """
        import re
        from pytest_chunkeval.chunkers import CHUNKERS
        from pytest_chunkeval.config.specs import SPEC_GRAMMAR
        from pytest_chunkeval.embedders.registry import EMBEDDERS
        from pytest_chunkeval.stores import STORES
        from pytest_chunkeval.tokenizers.base import TOKENIZERS
        for registry in (CHUNKERS, EMBEDDERS, STORES, TOKENIZERS):
            for name in registry:
                word = rf"(?<![\\w+-]){re.escape(name)}(?![\\w+-])"
                assert re.search(word, SPEC_GRAMMAR), (registry.kind, name)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    "written",
    [
        "recursive:200?tokenizer=tiktoken:cl100k_base",
        pytest.param(
            "recursive:200?tokenizer=hf:all-MiniLM-L6-v2",
            marks=pytest.mark.skipif(
                importlib.util.find_spec("transformers") is None,
                reason="the hf tokenizer needs transformers",
            ),
        ),
        "fixed:300:30",
        "sentence:150",
        "llm:m?window=300&attempts=2&pieces=25",
        "kamradt-modified:300:mean?pieces=25",
        "kamradt-modified:300?buffer=3",
        "kamradt:90?buffer=2",
        "cluster:200:40",
    ],
)
def test_a_chunker_is_named_by_its_canonical_spec(written: str) -> None:
    # Settings beyond the positional arguments are ?options in names too (no
    # "+suffix" names): the name parses and builds the same chunker again.
    name = CHUNKERS.create(written).name
    assert name == CHUNKERS.label(written)
    assert CHUNKERS.create(name).name == name


# --------------------------------------------------- baselines and former ids


def test_former_test_ids_replace_the_canonical_spec_by_each_spelling() -> None:
    aliases = {"recursive:200:0": ["recursive:200"], "kamradt": ["kamradt:95"]}
    assert legacy_test_names("T::test_x[recursive:200:0]", aliases) == [
        "T::test_x[recursive:200]"
    ]
    assert legacy_test_names("test_x[a-recursive:200:0-b]", aliases) == [
        "test_x[a-recursive:200-b]"
    ]
    assert legacy_test_names("test_x[xrecursive:200:0]", aliases) == []
    assert legacy_test_names("test_x", aliases) == []
    assert spec_aliases(
        ["recursive:200", "recursive:200:0", " recursive:200 "], CHUNKERS.label
    ) == {"recursive:200:0": ["recursive:200"]}


def test_former_baseline_paths_follow_the_current_layout(tmp_path: Path) -> None:
    aliases = {"recursive:200:0": ["recursive:200"]}

    def path_of(name: str) -> Path:
        return tmp_path / f"{name}.json"

    paths = legacy_baseline_paths("test_x[recursive:200:0]", path_of, aliases)
    assert paths == [tmp_path / "test_x[recursive:200].json"]


@pytest.mark.parametrize(
    ("key", "old", "new", "same"),
    [
        ("embedder", "hashing", "hashing:256", True),
        ("embedder", "hashing:64", "hashing:256", False),
        ("tokenizer", "tiktoken:cl100k_base", "cl100k_base", True),
        ("chunker", "recursive:200", "recursive:200:0", True),
        ("store", "chroma", "exact", False),
        ("k", "5", "5.0", False),
        ("embedder", "no such:x", "hashing", False),
    ],
)
def test_recorded_specs_compare_by_canonical_form(
    key: str, old: str, new: str, same: bool
) -> None:
    # A baseline recorded "hashing" before specs were canonical matches a run
    # recording "hashing:256": one embedder, not a configuration change.
    assert _same_spec(key, old, new) is same
