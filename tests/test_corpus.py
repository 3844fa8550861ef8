from __future__ import annotations

from pathlib import Path

import pytest

from pytest_chunkeval.data.corpus import (
    TEXT_SUFFIXES,
    Corpus,
    CorpusError,
    Document,
    UnknownDocument,
)


def write(path: Path, data: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_bytes(data.encode("utf-8"))
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    write(root / "b.md", "Bee.\n")
    write(root / "a.txt", "Ay.\n")
    write(root / "sub" / "c.rst", "Sea.\n")
    write(root / "image.png", b"\x89PNG\r\n\x1a\n\x00\x00")  # not a text suffix
    write(root / ".hidden.md", "hidden")
    write(root / ".git" / "notes.md", "git internals")
    return root


# -- building from a mapping ----------------------------------------------------


def test_from_mapping_keeps_order_and_lookups() -> None:
    corpus = Corpus.from_mapping({"z": "last", "a": "first"}, name="tiny")
    assert corpus.name == "tiny"
    assert corpus.ids == ("z", "a")
    assert [d.id for d in corpus] == ["z", "a"]
    assert len(corpus) == 2
    assert "a" in corpus
    assert "b" not in corpus
    assert corpus["a"] == Document("a", "first")
    assert corpus.documents[0].text == "last"


def test_unknown_id_is_a_keyerror_naming_it() -> None:
    corpus = Corpus.from_mapping({"a": "x"}, name="tiny")
    with pytest.raises(KeyError) as info:
        corpus["nope"]
    assert isinstance(info.value, CorpusError)
    assert isinstance(info.value, UnknownDocument)
    assert "'nope'" in str(info.value)
    assert "'a'" in str(info.value)  # lists what exists


def test_duplicate_ids_rejected() -> None:
    with pytest.raises(CorpusError, match="duplicate document id 'a'"):
        Corpus([Document("a", "x"), Document("a", "y")])


def test_non_str_text_rejected() -> None:
    with pytest.raises(CorpusError, match="'a' text is bytes"):
        Corpus.from_mapping({"a": b"x"})  # type: ignore[dict-item]


def test_corpus_is_immutable() -> None:
    corpus = Corpus.from_mapping({"a": "x"})
    with pytest.raises(AttributeError):
        corpus.name = "other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        corpus.documents[0].text = "y"  # type: ignore[misc]


# -- content hash ---------------------------------------------------------------


def test_content_hash_depends_on_ids_texts_and_order_not_name() -> None:
    base = Corpus.from_mapping({"a": "one", "b": "two"}, name="x")
    assert len(base.content_hash) == 64
    assert base.content_hash == Corpus.from_mapping(base_map(), name="y").content_hash
    changed_text = Corpus.from_mapping({"a": "one", "b": "two!"})
    changed_id = Corpus.from_mapping({"a": "one", "c": "two"})
    reordered = Corpus.from_mapping({"b": "two", "a": "one"})
    hashes = {base.content_hash}
    for other in (changed_text, changed_id, reordered):
        hashes.add(other.content_hash)
    assert len(hashes) == 4


def base_map() -> dict[str, str]:
    return {"a": "one", "b": "two"}


def test_content_hash_fields_cannot_bleed_into_each_other() -> None:
    one = Corpus.from_mapping({"a": "bc"})
    two = Corpus.from_mapping({"ab": "c"})
    assert one.content_hash != two.content_hash


# -- reading files ----------------------------------------------------------------


def test_directory_is_walked_recursively_for_text_files(tree: Path) -> None:
    corpus = Corpus.from_paths([tree])
    assert corpus.ids == ("a.txt", "b.md", "sub/c.rst")  # sorted, POSIX, relative
    assert corpus.name == "docs"
    assert corpus["sub/c.rst"].text == "Sea.\n"
    assert corpus["b.md"].path == (tree / "b.md").absolute()


def test_explicit_file_read_whatever_its_suffix(tmp_path: Path) -> None:
    f = write(tmp_path / "notes.log", "log line\n")
    corpus = Corpus.from_paths([f])
    assert corpus.ids == ("notes.log",)
    assert ".log" not in TEXT_SUFFIXES


def test_custom_suffixes(tree: Path) -> None:
    corpus = Corpus.from_paths([tree], suffixes=["rst", ".TXT"])
    assert corpus.ids == ("a.txt", "sub/c.rst")


def test_glob_and_duplicates_removed(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree.parent)
    corpus = Corpus.from_paths(["docs/**/*.rst", "docs", "docs/b.md"])
    # The glob's static part "docs" and the directory agree on the root.
    assert corpus.ids == ("a.txt", "b.md", "sub/c.rst")


def test_glob_matched_files_ignore_the_suffix_filter(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tree / "data.csv", "a,b\n")
    monkeypatch.chdir(tree)
    corpus = Corpus.from_paths(["*.csv"])
    assert corpus.ids == ("data.csv",)


def test_ids_do_not_depend_on_the_machine_path(tmp_path: Path) -> None:
    for place in ("one", "two/deeper"):
        write(tmp_path / place / "corpus" / "x.md", "same")
    a = Corpus.from_paths([tmp_path / "one" / "corpus"])
    b = Corpus.from_paths([tmp_path / "two" / "deeper" / "corpus"])
    assert a.ids == b.ids == ("x.md",)
    assert a.content_hash == b.content_hash


def test_default_root_is_common_parent(tree: Path) -> None:
    corpus = Corpus.from_paths([tree / "b.md", tree / "sub" / "c.rst"])
    assert corpus.ids == ("b.md", "sub/c.rst")


def test_explicit_root(tree: Path) -> None:
    corpus = Corpus.from_paths([tree / "sub"], root=tree.parent, name="n")
    assert corpus.ids == ("docs/sub/c.rst",)
    assert corpus.name == "n"


def test_file_outside_root_is_an_error(tree: Path, tmp_path: Path) -> None:
    outside = write(tmp_path / "elsewhere" / "x.md", "x")
    with pytest.raises(CorpusError, match="is not under root"):
        Corpus.from_paths([outside], root=tree)


def test_glob_matching_nothing_names_it(tmp_path: Path) -> None:
    pattern = str(tmp_path / "*.nothing")
    with pytest.raises(CorpusError, match="matches no file") as info:
        Corpus.from_paths([pattern])
    assert pattern in str(info.value)


def test_missing_path_names_it(tmp_path: Path) -> None:
    missing = tmp_path / "absent.md"
    with pytest.raises(CorpusError, match="does not exist") as info:
        Corpus.from_paths([missing])
    assert str(missing) in str(info.value)


def test_directory_without_text_files_names_it(tmp_path: Path) -> None:
    write(tmp_path / "only.bin", b"\x00\x01")
    with pytest.raises(CorpusError, match="holds no text file") as info:
        Corpus.from_paths([tmp_path])
    assert str(tmp_path) in str(info.value)


def test_no_paths_is_an_error() -> None:
    with pytest.raises(CorpusError, match="no corpus paths"):
        Corpus.from_paths([])


def test_binary_file_in_directory_names_it(tree: Path) -> None:
    bad = write(tree / "sub" / "blob.txt", b"text\x00\x01\x02")
    with pytest.raises(CorpusError, match="looks binary") as info:
        Corpus.from_paths([tree])
    assert str(bad.absolute()) in str(info.value)


def test_non_utf8_file_names_it_and_the_offset(tree: Path) -> None:
    bad = write(tree / "latin1.txt", "caf\u00e9".encode("latin-1"))
    with pytest.raises(CorpusError, match="not UTF-8 text") as info:
        Corpus.from_paths([tree])
    assert str(bad.absolute()) in str(info.value)
    assert "offset 3" in str(info.value)


def test_text_is_exact_crlf_and_bom_preserved(tmp_path: Path) -> None:
    raw = "\ufeffline one\r\nline two\rend\n"
    write(tmp_path / "x.md", raw)
    corpus = Corpus.from_paths([tmp_path])
    assert corpus["x.md"].text == raw


# -- resolving names ----------------------------------------------------------------


def test_resolve_id_exact_name_stem_and_path_without_suffix() -> None:
    corpus = Corpus.from_mapping(
        {"reports/finance.md": "f", "chat.txt": "c", "finance": "exact"}
    )
    assert corpus.resolve_id("finance") == "finance"  # an exact id wins
    assert corpus.resolve_id("chat") == "chat.txt"
    assert corpus.resolve_id("chat.txt") == "chat.txt"
    assert corpus.resolve_id("finance.md") == "reports/finance.md"
    assert corpus.resolve_id("reports/finance") == "reports/finance.md"


def test_resolve_id_ambiguous_stem_lists_candidates() -> None:
    corpus = Corpus.from_mapping({"a/notes.md": "1", "b/notes.txt": "2"})
    with pytest.raises(CorpusError, match="ambiguous") as info:
        corpus.resolve_id("notes")
    assert "'a/notes.md'" in str(info.value)
    assert "'b/notes.txt'" in str(info.value)
    assert corpus.resolve_id("a/notes") == "a/notes.md"  # still reachable


def test_resolve_id_unknown_lists_documents() -> None:
    corpus = Corpus.from_mapping({"a.md": "1"}, name="c")
    with pytest.raises(UnknownDocument, match="no document 'zzz'") as info:
        corpus.resolve_id("zzz")
    assert "'a.md'" in str(info.value)
