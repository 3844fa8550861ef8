"""Placing retrieved text in the corpus: normalized locating (offsets map back to
the original text) and the one rule for a text found more than once."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.plugin_project import run, write_project

from pytest_chunkeval.config.defaults import check_locate
from pytest_chunkeval.core.normalize import fold, fold_char, fold_needle
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.engine.placing import PlacementError, Placer
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.errors import ConfigError

# Letters that change under case folding or NFKC, marks, punctuation, spaces.
ALPHABET = "abcXYZ019 \t\n.,;!?-'\"()ßẞﬁÉé\u0301ＡＢ①İΣσς·…—"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=ALPHABET, max_size=80))
def test_fold_matches_the_per_character_definition(text: str) -> None:
    folded = fold(text)
    assert folded.text == "".join(fold_char(c) for c in text)
    assert len(folded.origin) == len(folded.text)
    # Each normalized character comes from the original character it maps to.
    pieces = [fold_char(c) for c in text]
    rebuilt = [pieces[i] for i in dict.fromkeys(folded.origin.tolist())]
    assert "".join(rebuilt) == folded.text


def _cleaned(text: str, how: int) -> str:
    """What a retriever that normalizes text could return for ``text``."""
    if how == 0:
        return text.lower()
    if how == 1:
        return " ".join(text.upper().split())
    if how == 2:
        return "".join(c for c in text if c.isalnum() or c.isspace())
    return unicodedata.normalize("NFKC", text).casefold()


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=ALPHABET, min_size=1, max_size=120),
    st.data(),
    st.integers(min_value=0, max_value=3),
)
def test_normalized_match_maps_back_to_exact_original_offsets(
    doc: str, data: st.DataObject, how: int
) -> None:
    start = data.draw(st.integers(min_value=0, max_value=len(doc) - 1))
    end = data.draw(st.integers(min_value=start + 1, max_value=len(doc)))
    kept = [i for i in range(start, end) if fold_char(doc[i])]
    needle = _cleaned(doc[start:end], how)
    folded_needle = fold_needle(needle)
    spans = fold(doc).find_all(folded_needle)
    if not kept or folded_needle != fold_needle(doc[start:end]):
        return  # nothing to find, or the cleaning changed letters (ß -> ss...)
    # The excerpt's own place is found, trimmed to its first and last kept chars.
    assert (kept[0], kept[-1] + 1) in spans
    # Brute force: every span found is original text with the same normal form,
    # starting and ending on a kept character.
    for s, e in spans:
        assert fold_needle(doc[s:e]) == folded_needle
        assert fold_char(doc[s])
        assert fold_char(doc[e - 1])


DOCS = {
    "a.md": "Intro. The Café  déjà-vu, “quoted”: ﬁnal STRASSE. Shared line here.",
    "b.md": "Other text. Shared line here. Twice twice. Twice twice.",
}


@pytest.fixture
def corpus() -> Corpus:
    return Corpus.from_mapping(DOCS)


def test_normalized_places_cleaned_text_at_original_offsets(corpus: Corpus) -> None:
    placer = Placer(corpus, "normalized")
    text = DOCS["a.md"]
    wanted = "The Café  déjà-vu, “quoted”: ﬁnal STRASSE."
    s = text.index(wanted)
    cleaned = "the cafe\u0301 de\u0301ja\u0300 vu quoted final straße"
    span = placer.place(cleaned, None, "r")
    assert span == ("a.md", s, s + len(wanted) - 1)  # up to the last letter
    assert text[span[1] : span[2]] == wanted[:-1]


def test_exact_mode_refuses_cleaned_text_and_names_the_option(corpus: Corpus) -> None:
    with pytest.raises(PlacementError, match="chunkeval_locate = normalized"):
        Placer(corpus).place("the café déjà vu", None, "query 'q1', result #1")


def test_strict_copies_refuse_a_text_found_twice_with_candidates_listed(
    corpus: Corpus,
) -> None:
    a, b = DOCS["a.md"].index("Shared"), DOCS["b.md"].index("Shared")
    n = len("Shared line here.")
    for mode in ("exact", "normalized"):
        with pytest.raises(PlacementError) as err:
            Placer(corpus, mode, "strict").place("Shared line here.", None, "result #2")
        message = str(err.value)
        assert "occurs 2 times in the corpus (verbatim)" in message
        assert f"a.md [{a}:{a + n}], b.md [{b}:{b + n}]" in message
        assert "name its document" in message
    # Twice in the one document named: still ambiguous, spans listed.
    with pytest.raises(PlacementError, match=r"b\.md \[\d+:\d+\], b\.md \[\d+:\d+\]"):
        Placer(corpus, copies="strict").place("Twice twice.", "b.md", "result #1")


def test_a_text_found_twice_goes_where_the_question_s_excerpts_are(
    corpus: Corpus,
) -> None:
    a, b = DOCS["a.md"].index("Shared"), DOCS["b.md"].index("Shared")
    n = len("Shared line here.")
    in_a, in_b = ("a.md", a, a + n), ("b.md", b, b + n)
    placer = Placer(corpus)
    # No question to go by: the first occurrence.
    assert placer.place("Shared line here.", None, "r") == in_a
    # The occurrence sharing the most characters with the excerpt candidates.
    assert placer.place("Shared line here.", None, "r", ([in_b], [in_b])) == in_b
    # Equal candidates (the excerpt's text occurs in both): the stored span's.
    assert placer.place("Shared line here.", None, "r", ([in_a, in_b], [in_b])) == in_b
    # Only inside the document the retriever names.
    assert placer.place("Shared line here.", "a.md", "r", ([in_b], [in_b])) == in_a


def test_the_named_document_decides(corpus: Corpus) -> None:
    b = DOCS["b.md"].index("Shared")
    placer = Placer(corpus, "normalized")
    assert placer.place("Shared line here.", "b.md", "r") == ("b.md", b, b + 17)
    assert placer.place("shared LINE here", "b.md", "r") == ("b.md", b, b + 16)
    with pytest.raises(PlacementError, match="not in the corpus"):
        placer.place("Shared line here.", "c.md", "r")
    with pytest.raises(PlacementError, match=r"not found in document 'b\.md'"):
        placer.place("ﬁnal STRASSE", "b.md", "r")


class _Doc:
    """A LangChain-like document: text and metadata naming its source."""

    def __init__(self, text: str, doc_id: str) -> None:
        self.page_content = text
        self.metadata = {"doc_id": doc_id}


def test_score_with_normalized_locating(corpus: Corpus) -> None:
    wanted = "The Café  déjà-vu"
    s = DOCS["a.md"].index(wanted)
    queries = QuerySet(
        [
            Query(
                "q1",
                "What is shared?",
                (Excerpt(wanted, "a.md", s, s + len(wanted)),),
                "a.md",
            )
        ]
    )
    cleaned = {"q1": ["the café déjà vu"]}
    with pytest.raises(PlacementError, match="not found"):
        score(cleaned, corpus, queries, unit="char")
    result = score(cleaned, corpus, queries, unit="char", locate="normalized")
    assert result.queries[0].retrieved == (("a.md", s, s + len(wanted)),)
    assert result.mean("recall") == 1.0
    # A named document resolves what would be ambiguous; a pair names it too.
    for item in (_Doc("Shared line here.", "b.md"), ("b.md", "Shared line here.")):
        named = score({"q1": [item]}, corpus, queries, unit="char")
        assert named.queries[0].retrieved[0][0] == "b.md"
    with pytest.raises(ConfigError, match="locate must be"):
        score(cleaned, corpus, queries, locate="fuzzy")


def test_check_locate() -> None:
    assert check_locate(" Normalized ") == "normalized"
    with pytest.raises(ConfigError, match="'exact'"):
        check_locate("loose")


# ------------------------------------------------------------------- plugin


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    return pytester.path


CLEANING_TEST = """
import pytest

def cleaned(chunkeval):
    texts = {q.text: [e.text.lower().rstrip('.,') for e in q.excerpts]
             for q in chunkeval.queries}
    return texts.__getitem__

def test_ini(chunkeval):
    assert chunkeval.score(cleaned(chunkeval), label="c").mean("recall") > 0.8

@pytest.mark.chunkeval(locate="exact")
def test_marker_exact(chunkeval):
    chunkeval.score(cleaned(chunkeval), label="c")

def test_call_exact(chunkeval):
    chunkeval.score(cleaned(chunkeval), label="c", locate="exact")
"""


def test_locate_reaches_the_plugin(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makepyfile(test_clean=CLEANING_TEST)
    result = run(pytester)  # exact by default: every test fails
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*not found in the corpus*chunkeval_locate*"])
    ini = (project / "pytest.ini").read_text()
    (project / "pytest.ini").write_text(ini + "chunkeval_locate = normalized\n")
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        ["FAILED*test_marker_exact*", "FAILED*test_call_exact*"]
    )
    assert result.stdout.str().count("was not found in the corpus") == 2
    (project / "pytest.ini").write_text(ini)
    result = run(pytester, "--chunkeval-locate=normalized", "-k", "test_ini")
    result.assert_outcomes(passed=1, deselected=2)
    result = run(pytester, "--chunkeval-locate=fuzzy")
    result.stderr.fnmatch_lines(["*--chunkeval-locate*locate must be*"])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["Aa", "b.", "c", "—", "  ", "\n", "A a", "b"]), max_size=12
    ),
    st.data(),
)
def test_normalized_mode_finds_what_exact_mode_finds(
    parts: list[str], data: st.DataObject
) -> None:
    """Normalized mode searches the earlier stages only inside normalized
    matches' windows: the same verdict as exact mode whenever exact mode finds
    the text (brute force: exact mode scans every document)."""
    docs = {"a": "".join(parts) or "x", "b": "".join(reversed(parts)) or "y"}
    corpus = Corpus.from_mapping(docs)
    text = docs["a"]
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    needle = data.draw(
        st.sampled_from([text[start:end], " ".join(text[start:end].split())])
    )

    def verdict(mode: str) -> object:
        try:
            return Placer(corpus, mode).place(needle, None, "r")
        except PlacementError as exc:
            # Overlapping matches may be counted differently: ambiguous is ambiguous.
            return "ambiguous" if "occurs" in str(exc) else "absent"

    exact = verdict("exact")
    if exact != "absent":
        assert verdict("normalized") == exact
