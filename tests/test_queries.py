from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from pytest_chunkeval.core.spans import Span
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet, read_queries
from pytest_chunkeval.data.query_formats import append_query, write_header
from pytest_chunkeval.data.query_types import (
    SCHEMA_VERSION,
    Excerpt,
    Query,
    QuerySetError,
    QuerySetWarning,
    stable_query_id,
)

CAT = "The cat sat on the mat."
DOG = "Dogs bark at the mailman."
TEXT = f"Intro.\n{CAT}\nMiddle part.\n{DOG}\nEnd.\n"


def ex(needle: str, doc: str = "pets.md", text: str = TEXT) -> Excerpt:
    start = text.index(needle)
    return Excerpt(needle, doc, start, start + len(needle))


@pytest.fixture
def corpus() -> Corpus:
    return Corpus.from_mapping({"pets.md": TEXT, "other.md": "Nothing here."})


@pytest.fixture
def qset() -> QuerySet:
    return QuerySet(
        [
            Query("q1", "Where did the cat sit?", (ex(CAT),), "pets.md"),
            Query(
                "q2",
                "Who barks, and where is the café?",
                (ex(DOG), Excerpt("Nothing here.", "other.md", 0, 13, True)),
                "pets.md",
                {"topic": "dogs", "score": 0.5},
            ),
        ],
        {"generator": "test", "seed": 3, "note": "ünïcode"},
    )


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


# -- the data model -----------------------------------------------------------------


def test_lookup_by_index_and_id(qset: QuerySet) -> None:
    assert len(qset) == 2
    assert qset[0].id == "q1"
    assert qset["q2"] is qset[1]
    assert qset[-1].id == "q2"
    assert "q1" in qset
    assert [q.id for q in qset] == ["q1", "q2"] == list(qset.ids)
    assert qset.n_excerpts == 3
    with pytest.raises(KeyError, match="'nope'"):
        qset["nope"]


def test_excerpt_span_and_query_spans(qset: QuerySet) -> None:
    start = TEXT.index(CAT)
    assert qset[0].excerpts[0].span == Span("pets.md", start, start + len(CAT))
    assert qset[1].spans[1] == Span("other.md", 0, 13)


def test_duplicate_query_ids_rejected() -> None:
    q = Query("same", "?", (ex(CAT),), "pets.md")
    with pytest.raises(QuerySetError, match="duplicate query id 'same'"):
        QuerySet([q, q])


def test_content_hash_tracks_spans_not_metadata(qset: QuerySet) -> None:
    same = QuerySet(qset.queries, {"other": "metadata"})
    assert same.content_hash == qset.content_hash
    moved = QuerySet(
        [
            qset[0],
            Query("q2", qset[1].text, (ex(DOG), ex(CAT)), "pets.md"),
        ]
    )
    assert moved.content_hash != qset.content_hash


def test_stable_query_id_rule() -> None:
    assert (
        stable_query_id("finance", "Why?")
        == "finance-" + (__import__("hashlib").sha256(b"Why?").hexdigest()[:8])
    )
    assert stable_query_id("a", "x") != stable_query_id("a", "y")


# -- round trips --------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_round_trip(
    tmp_path: Path, qset: QuerySet, corpus: Corpus, suffix: str
) -> None:
    path = tmp_path / f"queries{suffix}"
    qset.save(path)
    back = QuerySet.load(path, corpus)
    assert back == qset
    assert back.queries == qset.queries
    assert back.metadata == qset.metadata
    assert back[1].metadata == {"topic": "dogs", "score": 0.5}
    assert back[1].excerpts[1].approximate is True
    assert back.source == str(path)
    assert back.content_hash == qset.content_hash
    assert "ünïcode" in path.read_text(encoding="utf-8")  # not \u-escaped


def test_jsonl_layout(tmp_path: Path, qset: QuerySet) -> None:
    path = tmp_path / "q.jsonl"
    qset.save(path)
    rows = [json.loads(line) for line in lines(path)]
    assert rows[0] == {"chunkeval_queries": SCHEMA_VERSION, "metadata": qset.metadata}
    assert [r["id"] for r in rows[1:]] == ["q1", "q2"]
    assert set(rows[1]) == {"id", "question", "doc_id", "excerpts"}
    assert set(rows[1]["excerpts"][0]) == {"text", "doc_id", "start", "end"}
    assert path.read_bytes().endswith(b"\n")


def test_save_rejects_unknown_suffix(tmp_path: Path, qset: QuerySet) -> None:
    with pytest.raises(QuerySetError, match=r"\.jsonl or \.json"):
        qset.save(tmp_path / "q.yaml")
    assert not (tmp_path / "q.yaml").exists()


@pytest.mark.parametrize("suffix", [".jsonl", ".JSON"])
def test_from_text_parses_like_load(
    tmp_path: Path, qset: QuerySet, corpus: Corpus, suffix: str
) -> None:
    path = tmp_path / f"q{suffix.lower()}"
    qset.save(path)
    text = "\ufeff" + path.read_text(encoding="utf-8")
    back = QuerySet.from_text(text, suffix, corpus, source="bundled/q")
    assert back == QuerySet.load(path, corpus)
    assert back.source == "bundled/q"
    with pytest.raises(QuerySetError, match=r"bundled/q: unknown query-set format"):
        QuerySet.from_text(text, ".yaml", corpus, source="bundled/q")


def test_read_queries_points_a_csv_to_load(tmp_path: Path) -> None:
    path = tmp_path / "questions_df.csv"
    path.write_text("question,references,corpus_id\n", encoding="utf-8")
    with pytest.raises(QuerySetError, match=r"needs a corpus; use QuerySet\.load"):
        read_queries(path)


def test_load_rejects_unknown_suffix(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "q.txt"
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(QuerySetError, match=r"q\.txt.*unknown query-set format"):
        QuerySet.load(path, corpus)


# -- tolerant / strict JSONL reading ------------------------------------------------


def test_a_torn_last_line_is_an_error_naming_the_line(
    tmp_path: Path, qset: QuerySet, corpus: Corpus
) -> None:
    # A question half written is never dropped with a warning: a baseline
    # updated from the set would lose it silently (docs/formats.md, "JSONL").
    path = tmp_path / "q.jsonl"
    qset.save(path)
    data = path.read_bytes()
    path.write_bytes(data + b'{"id": "q3", "question": "Half writ')
    with pytest.raises(QuerySetError, match=r"q\.jsonl:4: an incomplete last line"):
        QuerySet.load(path, corpus)
    with pytest.raises(QuerySetError, match=r"q\.jsonl:4: an incomplete last line"):
        read_queries(path)


def test_complete_last_line_without_newline_is_kept(
    tmp_path: Path, qset: QuerySet, corpus: Corpus
) -> None:
    path = tmp_path / "q.jsonl"
    qset.save(path)
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert QuerySet.load(path, corpus).ids == ("q1", "q2")


def test_malformed_middle_line_names_file_and_line(
    tmp_path: Path, qset: QuerySet, corpus: Corpus
) -> None:
    path = tmp_path / "q.jsonl"
    qset.save(path)
    rows = lines(path)
    rows[1] = rows[1][:20]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(QuerySetError, match=r"q\.jsonl:2: not valid JSON"):
        QuerySet.load(path, corpus)


def test_malformed_last_line_with_newline_is_an_error(
    tmp_path: Path, qset: QuerySet
) -> None:
    # A newline after it means the write finished: this is corruption, not a crash.
    path = tmp_path / "q.jsonl"
    qset.save(path)
    path.write_bytes(path.read_bytes() + b'{"id": "q3", "quest\n')
    with pytest.raises(QuerySetError, match=r"q\.jsonl:4: not valid JSON"):
        read_queries(path)


def test_blank_lines_and_crlf_are_tolerated(tmp_path: Path, qset: QuerySet) -> None:
    path = tmp_path / "q.jsonl"
    qset.save(path)
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n\r\n"))
    assert read_queries(path).queries == qset.queries


@pytest.mark.parametrize(
    ("header", "message"),
    [
        (
            '{"chunkeval_queries": 2, "metadata": {}}',
            "version 2 is not supported.*upgrade",
        ),
        ('{"chunkeval_queries": "1"}', "version '1' is not supported"),
        ('{"chunkeval_queries": true}', "version True is not supported"),
        ('{"metadata": {}}', "not a chunkeval query set"),
        ('{"chunkeval_queries": 1, "metadata": []}', "'metadata' must be an object"),
    ],
)
def test_bad_header_names_file(tmp_path: Path, header: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(header + "\n", encoding="utf-8")
    with pytest.raises(QuerySetError, match=message) as info:
        read_queries(path)
    assert str(path) in str(info.value)


def test_bad_version_in_json_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"chunkeval_queries": 99, "queries": []}', encoding="utf-8")
    with pytest.raises(QuerySetError, match="version 99") as info:
        read_queries(path)
    assert str(path) in str(info.value)


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(QuerySetError, match="no header"):
        read_queries(path)


def test_invalid_json_file_reports_position(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text('{"chunkeval_queries": 1,\n "queries": [}', encoding="utf-8")
    with pytest.raises(QuerySetError, match=r"bad\.json:2:\d+: not valid JSON"):
        read_queries(path)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"question": "?", "doc_id": "d", "excerpts": []}, "without a string 'id'"),
        ({"id": "x", "question": " ", "doc_id": "d"}, "'question' must be"),
        ({"id": "x", "question": "?", "doc_id": "d", "excerpts": {}}, "must be a list"),
        ({"id": "x", "question": "?", "excerpts": [{"text": "t"}]}, "'doc_id' must"),
        (
            {
                "id": "x",
                "question": "?",
                "doc_id": "d",
                "excerpts": [{"text": "t"}],
                "extra": 1,
            },
            "unknown field.*extra",
        ),
        (
            {
                "id": "x",
                "question": "?",
                "doc_id": "d",
                "excerpts": [{"text": "t", "start": 5, "end": 2}],
            },
            "0 <= start <= end",
        ),
        (
            {
                "id": "x",
                "question": "?",
                "doc_id": "d",
                "excerpts": [{"text": "t", "start": 1}],
            },
            "'start' and 'end' must be integers",
        ),
    ],
)
def test_invalid_query_line_names_line_and_query(
    tmp_path: Path, query: dict[str, object], message: str
) -> None:
    path = tmp_path / "q.jsonl"
    write_header(path, {})
    path.write_text(
        path.read_text(encoding="utf-8") + json.dumps(query) + "\n", encoding="utf-8"
    )
    with pytest.raises(QuerySetError, match=message) as info:
        read_queries(path)
    assert f"{path}:2" in str(info.value)


# -- incremental writing ------------------------------------------------------------


def test_write_header_then_append(
    tmp_path: Path, qset: QuerySet, corpus: Corpus
) -> None:
    path = tmp_path / "gen" / "q.jsonl"
    write_header(path, {"generator": "test"})
    assert read_queries(path).queries == ()
    for q in qset:
        append_query(path, q)
    back = QuerySet.load(path, corpus)
    assert back.queries == qset.queries
    assert back.metadata == {"generator": "test"}


def test_write_header_refuses_to_clobber(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    write_header(path, {"run": 1})
    with pytest.raises(QuerySetError, match="already exists"):
        write_header(path, {"run": 2})
    write_header(path, {"run": 2}, overwrite=True)
    assert read_queries(path).metadata == {"run": 2}


def test_append_after_a_crash_cuts_the_partial_line(
    tmp_path: Path, qset: QuerySet
) -> None:
    path = tmp_path / "q.jsonl"
    write_header(path)
    append_query(path, qset[0])
    with path.open("ab") as fh:
        fh.write(b'{"id": "lost", "quest')  # interrupted append
    with pytest.warns(QuerySetWarning, match="cutting an incomplete last line"):
        append_query(path, qset[1])
    assert read_queries(path).ids == ("q1", "q2")


def test_append_keeps_a_complete_last_line_without_newline(
    tmp_path: Path, qset: QuerySet
) -> None:
    # parse_jsonl accepts such a line and a resumed generator counts it: the
    # append must not delete it.
    path = tmp_path / "q.jsonl"
    write_header(path)
    append_query(path, qset[0])
    path.write_bytes(path.read_bytes().rstrip(b"\n"))
    assert read_queries(path).ids == ("q1",)
    append_query(path, qset[1])  # no warning (warnings are errors here)
    assert read_queries(path).ids == ("q1", "q2")
    assert len(lines(path)) == 3


def test_append_after_a_crash_inside_a_character(
    tmp_path: Path, qset: QuerySet, corpus: Corpus
) -> None:
    path = tmp_path / "q.jsonl"
    write_header(path)
    append_query(path, qset[0])
    with path.open("ab") as fh:  # the non-ASCII question, cut inside "é"
        fh.write(json.dumps({"question": "café"}, ensure_ascii=False).encode()[:-3])
    with pytest.raises(QuerySetError, match=r"q\.jsonl:3: an incomplete last line"):
        read_queries(path)
    with pytest.warns(QuerySetWarning, match="cutting an incomplete last line"):
        append_query(path, qset[1])
    assert QuerySet.load(path, corpus).queries == qset.queries


def test_append_refuses_to_cut_a_torn_header(tmp_path: Path, qset: QuerySet) -> None:
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"chunkeval_queries": 1, "meta')
    with pytest.raises(QuerySetError, match="header line is incomplete"):
        append_query(path, qset[0])
    assert path.read_bytes() == b'{"chunkeval_queries": 1, "meta'
    with pytest.raises(QuerySetError, match=r"q\.jsonl:1: not valid JSON"):
        read_queries(path)


def test_append_needs_a_header(tmp_path: Path, qset: QuerySet) -> None:
    with pytest.raises(QuerySetError, match="write_header"):
        append_query(tmp_path / "missing.jsonl", qset[0])
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with pytest.raises(QuerySetError, match="needs a header"):
        append_query(empty, qset[0])


# -- validation against the corpus --------------------------------------------------


def test_valid_set_is_returned_unchanged(qset: QuerySet, corpus: Corpus) -> None:
    assert qset.validated(corpus) is qset


def test_excerpt_relocated_after_text_inserted_before_it(
    tmp_path: Path, qset: QuerySet
) -> None:
    path = tmp_path / "q.jsonl"
    qset.save(path)
    inserted = "A brand new paragraph.\n"
    edited = TEXT.replace("Intro.\n", "Intro.\n" + inserted)
    corpus = Corpus.from_mapping({"pets.md": edited, "other.md": "Nothing here."})
    back = QuerySet.load(path, corpus)
    for q in back:
        for e in q.excerpts:
            assert corpus[e.doc_id].text[e.start : e.end] == e.text
    moved = back["q1"].excerpts[0]
    assert (
        moved.start == edited.index(CAT) == qset["q1"].excerpts[0].start + len(inserted)
    )
    assert moved.approximate is False


def test_relocation_prefers_the_occurrence_nearest_the_old_start() -> None:
    text = f"{CAT} filler. {CAT} more. {CAT}"
    second = text.index(CAT, 1)
    q = Query("q", "?", (Excerpt(CAT, "d", second + 3, second + 3 + len(CAT)),), "d")
    fixed = QuerySet([q]).validated(Corpus.from_mapping({"d": text}))
    assert fixed[0].excerpts[0].start == second


def test_whitespace_changes_relocate_approximately() -> None:
    edited = TEXT.replace("The cat sat", "The  cat\nsat")
    corpus = Corpus.from_mapping({"pets.md": edited})
    q = Query("q1", "?", (ex(CAT),), "pets.md")
    fixed = QuerySet([q]).validated(corpus)[0].excerpts[0]
    assert fixed.approximate is True
    assert fixed.text == "The  cat\nsat on the mat."
    assert edited[fixed.start : fixed.end] == fixed.text


def test_deleted_excerpt_is_an_error_naming_query_and_excerpt(
    tmp_path: Path, qset: QuerySet
) -> None:
    path = tmp_path / "q.jsonl"
    qset.save(path)
    corpus = Corpus.from_mapping(
        {"pets.md": TEXT.replace(DOG, ""), "other.md": "Nothing here."}
    )
    with pytest.raises(QuerySetError) as info:
        QuerySet.load(path, corpus)
    message = str(info.value)
    assert str(path) in message
    assert "query 'q2'" in message
    assert "Who barks" in message  # the question
    assert "'Dogs bark at the mailman.'" in message  # the excerpt preview
    assert "'pets.md'" in message
    assert "q1" not in message


def test_all_failures_are_reported_together() -> None:
    corpus = Corpus.from_mapping({"d": "nothing"})
    queries = [
        Query(f"q{i}", "?", (Excerpt("gone", "d", 0, 4),), "d") for i in range(12)
    ]
    with pytest.raises(QuerySetError, match=r"(?s)12 excerpt\(s\).*and 2 more"):
        QuerySet(queries).validated(corpus)


def test_unknown_document_is_an_error_naming_the_query(corpus: Corpus) -> None:
    q = Query("q9", "?", (Excerpt("x", "nowhere.md", 0, 1),), "nowhere.md")
    with pytest.raises(QuerySetError, match=r"query 'q9'.*no document 'nowhere\.md'"):
        QuerySet([q]).validated(corpus)


def test_doc_ids_resolve_by_stem(corpus: Corpus) -> None:
    start = TEXT.index(CAT)
    q = Query("q", "?", (Excerpt(CAT, "pets", start, start + len(CAT)),), "pets")
    fixed = QuerySet([q]).validated(corpus)[0]
    assert fixed.doc_id == "pets.md"
    assert fixed.excerpts[0].doc_id == "pets.md"


def test_excerpts_without_offsets_are_located(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "hand.json"
    path.write_text(
        json.dumps(
            {
                "chunkeval_queries": 1,
                "queries": [
                    {
                        "id": "h1",
                        "question": "Dogs?",
                        "doc_id": "pets.md",
                        "excerpts": [{"text": DOG}],
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    assert read_queries(path)[0].excerpts[0].start == -1
    located = QuerySet.load(path, corpus)[0].excerpts[0]
    assert (located.start, located.end) == (TEXT.index(DOG), TEXT.index(DOG) + len(DOG))


# -- the reference CSV --------------------------------------------------------------


def write_reference_csv(
    path: Path, rows: list[tuple[str, list[dict[str, object]], str]]
) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["question", "references", "corpus_id"])
        for question, refs, corpus_id in rows:
            writer.writerow([question, json.dumps(refs), corpus_id])


def ref(needle: str) -> dict[str, object]:
    start = TEXT.index(needle)
    return {"content": needle, "start_index": start, "end_index": start + len(needle)}


def test_reference_csv_import(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "questions_df.csv"
    write_reference_csv(
        path,
        [
            ('Where, "exactly", did the cat sit?', [ref(CAT)], "pets"),
            ("Who barks?", [ref(DOG), ref(CAT)], "pets"),
            ("Who barks?", [ref(DOG)], "pets"),  # duplicate question
        ],
    )
    qs = QuerySet.load(path, corpus)
    base = stable_query_id("pets", "Who barks?")
    assert qs.ids == (
        stable_query_id("pets", 'Where, "exactly", did the cat sit?'),
        base,
        f"{base}-2",
    )
    assert qs[1].doc_id == "pets.md"
    assert qs[1].excerpts[1] == ex(CAT)
    assert qs.metadata["source_format"] == "reference-csv"
    # Ids are stable: importing again gives the same ids and hash.
    assert QuerySet.from_reference_csv(path, corpus).content_hash == qs.content_hash


def test_reference_csv_missing_column(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "q.csv"
    path.write_text("question,corpus_id\nWhy?,pets\n", encoding="utf-8")
    with pytest.raises(QuerySetError, match=r"missing column.*references"):
        QuerySet.load(path, corpus)


def test_reference_csv_unknown_corpus_names_row(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "q.csv"
    write_reference_csv(
        path, [("Why?", [ref(CAT)], "pets"), ("How?", [ref(CAT)], "zoo")]
    )
    with pytest.raises(QuerySetError, match=r"q\.csv:3: question 'How\?'.*'zoo'"):
        QuerySet.load(path, corpus)


def test_reference_csv_bad_references(tmp_path: Path, corpus: Corpus) -> None:
    path = tmp_path / "q.csv"
    path.write_text('question,references,corpus_id\nWhy?,"[{""content"": 1}]",pets\n')
    with pytest.raises(QuerySetError, match="reference 1 needs a string 'content'"):
        QuerySet.load(path, corpus)


def test_reference_csv_reads_rows_as_a_dict_reader_does(
    tmp_path: Path, corpus: Corpus
) -> None:
    # columns in another order, an extra one, a blank line, whitespace around
    # the references: read; the last line, short of its references, is named
    refs = json.dumps([ref(CAT)]).replace('"', '""')
    path = tmp_path / "q.csv"
    path.write_text(
        f'corpus_id,note,question,references\npets,x,Why?," {refs}\n"\n\npets,y,Who?\n',
        encoding="utf-8",
    )
    with pytest.raises(QuerySetError, match=r"q\.csv:5: question 'Who\?'.*not JSON"):
        QuerySet.load(path, corpus)
    path.write_text(path.read_text(encoding="utf-8").rsplit("pets,y", 1)[0])
    (query,) = QuerySet.load(path, corpus)
    assert query.excerpts == (ex(CAT),)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("[] []", "not JSON"),
        ("[1", "not JSON"),
        ("{}", "non-empty JSON list"),
        ("[]", "non-empty JSON list"),
        ("[3]", "reference 1 is not an object"),
        ('[{"content": "a", "start_index": true, "end_index": 1}]', "integer"),
    ],
)
def test_reference_csv_bad_references_are_named(
    tmp_path: Path, corpus: Corpus, raw: str, message: str
) -> None:
    path = tmp_path / "q.csv"
    quoted = raw.replace('"', '""')
    path.write_text(f'question,references,corpus_id\nWhy?,"{quoted}",pets\n')
    with pytest.raises(QuerySetError, match=rf"q\.csv:2: question 'Why\?'.*{message}"):
        QuerySet.load(path, corpus)


def test_reference_csv_stale_offsets_are_relocated(tmp_path: Path) -> None:
    path = tmp_path / "q.csv"
    write_reference_csv(path, [("Why?", [ref(DOG)], "pets")])
    corpus = Corpus.from_mapping({"pets.md": "Preface.\n" + TEXT})
    excerpt = QuerySet.load(path, corpus)[0].excerpts[0]
    assert excerpt.start == TEXT.index(DOG) + len("Preface.\n")


def test_reference_csv_leaves_out_what_an_edit_lost_as_jsonl_does(
    tmp_path: Path,
) -> None:
    # One rule for every format: a question whose excerpt was deleted, or whose
    # document is gone, is left out and named; the others are placed.
    path = tmp_path / "q.csv"
    write_reference_csv(
        path,
        [
            ("Why?", [ref(DOG)], "pets"),
            ("Who?", [ref(CAT)], "pets"),
            ("X?", [ref(CAT)], "gone"),
        ],
    )
    edited = Corpus.from_mapping({"pets.md": TEXT.replace(DOG, "")})
    queries, unplaced = QuerySet.load_placeable(path, edited)
    assert queries.ids == (stable_query_id("pets", "Who?"),)
    assert [(u.id, u.doc_id) for u in unplaced] == [
        (stable_query_id("pets", "Why?"), "pets.md"),
        (stable_query_id("gone", "X?"), "gone"),
    ]
    assert "not found" in unplaced[0].reason
    assert "no document 'gone'" in unplaced[1].reason
    # Loaded strictly, the same edit is the placement error of every format.
    write_reference_csv(path, [("Why?", [ref(DOG)], "pets")])
    with pytest.raises(QuerySetError, match=r"1 excerpt\(s\) cannot be placed"):
        QuerySet.load(path, edited)


def test_questions_without_excerpts_load_as_bare_questions(
    tmp_path: Path, corpus: Corpus
) -> None:
    # SPEC §7: a question set for judged metrics may omit excerpts (and doc_id)
    path = tmp_path / "questions.jsonl"
    write_header(path, {})
    lines = [
        {"id": "a", "question": "How do I reset my password?"},
        {"id": "b", "question": "Where are backups?", "excerpts": []},
    ]
    with path.open("a", encoding="utf-8") as fh:
        for line in lines:
            fh.write(json.dumps(line) + "\n")
    qs = QuerySet.load(path, corpus)
    assert [(q.id, q.excerpts, q.doc_id) for q in qs] == [("a", (), ""), ("b", (), "")]
    assert qs.n_excerpts == 0
