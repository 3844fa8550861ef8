"""Query-set files: JSONL (a header line, then one query a line, appended to by
generation), JSON, and the reference implementation's CSV; reading, writing and
the incremental append."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeGuard

from pytest_chunkeval.core.locate import preview
from pytest_chunkeval.data.query_types import (
    SCHEMA_VERSION,
    Excerpt,
    Query,
    QuerySetError,
    QuerySetWarning,
    StatedRelationship,
)
from pytest_chunkeval.util.files import (
    JsonLineError,
    TailRepair,
    TornLine,
    append_jsonl,
    atomic_writer,
    decode_jsonl,
    iter_jsonl_lines,
    repair_jsonl_tail,
)

VERSION_KEY = "chunkeval_queries"
REFERENCE_COLUMNS = ("question", "references", "corpus_id")


def query_to_json(q: Query) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": q.id,
        "question": q.text,
        "doc_id": q.doc_id,
        "excerpts": [_excerpt_to_json(e) for e in q.excerpts],
    }
    if q.metadata:
        record["metadata"] = dict(q.metadata)
    if q.relationships:
        record["relationships"] = [_relationship_to_json(r) for r in q.relationships]
    return record


def _relationship_to_json(r: StatedRelationship) -> dict[str, Any]:
    record: dict[str, Any] = {
        "subject": r.subject,
        "predicate": r.predicate,
        "object": r.object,
    }
    if r.evidence:
        record["evidence"] = r.evidence[0] if len(r.evidence) == 1 else list(r.evidence)
    return record


def _relationship_from_json(obj: Any, where: str) -> StatedRelationship:
    if not isinstance(obj, dict):
        raise QuerySetError(f"{where}: a relationship must be a JSON object")
    names = []
    for key in ("subject", "predicate", "object"):
        value = obj.get(key)
        if not isinstance(value, str) or not value.strip():
            raise QuerySetError(f"{where}: {key!r} must be a non-empty string")
        names.append(value)
    evidence = obj.get("evidence", [])
    if isinstance(evidence, str):
        evidence = [evidence]
    if not (
        isinstance(evidence, list)
        and all(isinstance(e, str) and e.strip() for e in evidence)
    ):
        raise QuerySetError(
            f"{where}: 'evidence' must be a non-empty string or a list of them"
        )
    unknown = set(obj) - {"subject", "predicate", "object", "evidence"}
    if unknown:
        raise QuerySetError(f"{where}: unknown relationship field(s) {sorted(unknown)}")
    return StatedRelationship(names[0], names[1], names[2], tuple(evidence))


def _excerpt_to_json(e: Excerpt) -> dict[str, Any]:
    record: dict[str, Any] = {
        "text": e.text,
        "doc_id": e.doc_id,
        "start": e.start,
        "end": e.end,
    }
    if e.approximate:
        record["approximate"] = True
    return record


def header_line(metadata: Mapping[str, Any]) -> str:
    header = {VERSION_KEY: SCHEMA_VERSION, "metadata": dict(metadata)}
    return json.dumps(header, ensure_ascii=False) + "\n"


def query_line(q: Query) -> str:
    return json.dumps(query_to_json(q), ensure_ascii=False) + "\n"


def _query_from_json(obj: Any, where: str) -> Query:
    """A query from its JSON object; ``where`` (file:line) prefixes errors."""
    if not isinstance(obj, dict):
        raise QuerySetError(f"{where}: a query must be a JSON object")
    qid = obj.get("id")
    if not isinstance(qid, str) or not qid:
        raise QuerySetError(f"{where}: query without a string 'id'")
    where = f"{where}: query {qid!r}"
    question = obj.get("question")
    if not isinstance(question, str) or not question.strip():
        raise QuerySetError(f"{where}: 'question' must be a non-empty string")
    raw = obj.get("excerpts", [])
    if not isinstance(raw, list):
        raise QuerySetError(f"{where}: 'excerpts' must be a list (or left out)")
    doc_id = obj.get("doc_id", "" if not raw else None)
    if not isinstance(doc_id, str) or (raw and not doc_id):
        raise QuerySetError(f"{where}: 'doc_id' must be a non-empty string")
    # No excerpts: a question for judged metrics only (docs/judged.md#the-two-measures).
    excerpts = tuple(
        _excerpt_from_json(e, doc_id, f"{where}, excerpt {i}")
        for i, e in enumerate(raw, 1)
    )
    metadata = obj.get("metadata", {})
    if not isinstance(metadata, dict):
        raise QuerySetError(f"{where}: 'metadata' must be an object")
    tags = metadata.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) and t for t in tags):
        raise QuerySetError(
            f"{where}: metadata 'tags' must be a list of non-empty strings "
            f"(got {tags!r})"
        )
    rels = obj.get("relationships", [])
    if not isinstance(rels, list):
        raise QuerySetError(f"{where}: 'relationships' must be a list")
    relationships = tuple(
        _relationship_from_json(r, f"{where}, relationship {i}")
        for i, r in enumerate(rels, 1)
    )
    fields = {"id", "question", "doc_id", "excerpts", "metadata", "relationships"}
    unknown = set(obj) - fields
    if unknown:
        raise QuerySetError(
            f"{where}: unknown field(s) {', '.join(sorted(unknown))}; put extra "
            "information under 'metadata'"
        )
    return Query(qid, question, excerpts, doc_id, metadata, relationships)


def _excerpt_from_json(obj: Any, doc_id: str, where: str) -> Excerpt:
    if not isinstance(obj, dict):
        raise QuerySetError(f"{where}: an excerpt must be a JSON object")
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise QuerySetError(f"{where}: 'text' must be a non-empty string")
    ex_doc = obj.get("doc_id", doc_id)
    if not isinstance(ex_doc, str) or not ex_doc:
        raise QuerySetError(f"{where}: 'doc_id' must be a non-empty string")
    start, end = obj.get("start"), obj.get("end")
    if start is None and end is None:
        # Hand-written sets may give only the text; validation locates it.
        start = end = -1
    elif not (_is_int(start) and _is_int(end) and 0 <= start <= end):
        raise QuerySetError(
            f"{where}: 'start' and 'end' must be integers with 0 <= start <= end "
            f"(got {start!r}, {end!r})"
        )
    approximate = obj.get("approximate", False)
    if not isinstance(approximate, bool):
        raise QuerySetError(f"{where}: 'approximate' must be true or false")
    unknown = set(obj) - {"text", "doc_id", "start", "end", "approximate"}
    if unknown:
        raise QuerySetError(f"{where}: unknown excerpt field(s) {sorted(unknown)}")
    return Excerpt(text, ex_doc, start, end, approximate)


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_header(obj: Any, where: str) -> dict[str, Any]:
    """The metadata of a header object, after checking its schema version."""
    if not isinstance(obj, dict) or VERSION_KEY not in obj:
        raise QuerySetError(
            f"{where}: not a chunkeval query set (expected an object with "
            f"{VERSION_KEY!r} first)"
        )
    version = obj[VERSION_KEY]
    if not _is_int(version) or version != SCHEMA_VERSION:
        newer = _is_int(version) and version > SCHEMA_VERSION
        hint = (
            "it was written by a newer pytest-chunkeval; upgrade"
            if newer
            else "regenerate it"
        )
        raise QuerySetError(
            f"{where}: query-set schema version {version!r} is not supported "
            f"(this pytest-chunkeval reads version {SCHEMA_VERSION}); {hint}"
        )
    metadata = obj.get("metadata", {})
    if not isinstance(metadata, dict):
        raise QuerySetError(f"{where}: header 'metadata' must be an object")
    return metadata


def read_file_text(path: str | os.PathLike[str], *, torn_tail_ok: bool = False) -> str:
    """The file's text without a BOM. ``torn_tail_ok`` (JSONL): a character cut
    in two at the very end, by an interrupted append, is dropped, not an error."""
    try:
        data = Path(path).read_bytes()
        text = decode_jsonl(data) if torn_tail_ok else data.decode("utf-8")
    except OSError as exc:
        raise QuerySetError(f"cannot read query set {os.fspath(path)}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise QuerySetError(
            f"{os.fspath(path)}: not UTF-8 (invalid byte at offset {exc.start})"
        ) from None
    # Spreadsheet exports often start with a BOM; it is never part of the data.
    return text.removeprefix("\ufeff")


def query_format(suffix: str, source: str) -> str:
    """The lower-cased ``suffix`` if it names a query-set format, else an error."""
    fmt = suffix.lower()
    if fmt not in (".jsonl", ".json", ".csv"):
        raise QuerySetError(
            f"{source}: unknown query-set format {fmt or '(no suffix)'!r}; "
            "expected .jsonl, .json or the reference .csv"
        )
    return fmt


def parse_jsonl(text: str, source: str) -> tuple[dict[str, Any], list[Query]]:
    """Header metadata and queries of JSONL ``text`` (``source`` names it in errors).

    Blank lines are skipped. A final line without a newline is kept when it is
    valid JSON. When it is not, it is the trace of an interrupted append, and
    an error naming ``source:line`` (docs/formats.md, "JSONL"): a question the
    file holds half of is never dropped, since a baseline would then lose it
    silently. Every other malformed line is an error naming ``source:line``.
    """
    torn: list[TornLine] = []
    metadata: dict[str, Any] | None = None
    queries: list[Query] = []
    try:
        for lineno, obj in iter_jsonl_lines(text, source, on_torn=torn.append):
            where = f"{source}:{lineno}"
            if metadata is None:
                metadata = _check_header(obj, where)
            else:
                queries.append(_query_from_json(obj, where))
    except JsonLineError as exc:
        raise QuerySetError(str(exc)) from None
    if torn:
        where = f"{source}:{torn[0].lineno}"
        if metadata is None:  # the header itself is cut: nothing to build on
            raise QuerySetError(f"{where}: not valid JSON ({torn[0].reason})")
        raise QuerySetError(
            f"{where}: an incomplete last line (no final newline; an interrupted "
            f"write?): {preview(torn[0].text)}. Complete the line or delete it "
            "(append_query cuts it before its next append)"
        )
    if metadata is None:
        raise QuerySetError(f"{source}: empty query set (no header line)")
    return metadata, queries


def parse_json(text: str, source: str) -> tuple[dict[str, Any], list[Query]]:
    """Metadata and queries of a ``.json`` query set."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        raise QuerySetError(
            f"{source}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg})"
        ) from None
    metadata = _check_header(obj, source)
    raw = obj.get("queries")
    if not isinstance(raw, list):
        raise QuerySetError(f"{source}: 'queries' must be a list")
    unknown = set(obj) - {VERSION_KEY, "metadata", "queries"}
    if unknown:
        raise QuerySetError(f"{source}: unknown top-level field(s) {sorted(unknown)}")
    queries = [
        _query_from_json(q, f"{source}: queries[{i}]") for i, q in enumerate(raw)
    ]
    return metadata, queries


# The decoder's C scanner: one call per value, no Python frames (json.loads
# wraps it in three).
_SCAN: Callable[[str, int], tuple[Any, int]]
_SCAN = json.JSONDecoder().scan_once  # type: ignore[attr-defined]


def reference_excerpts(
    raw: str, doc_id: str, where: str, question: str
) -> tuple[Excerpt, ...]:
    def at() -> str:  # built for an error only: a row read costs less without it
        return f"{where}: question {preview(question)}"

    refs: Any = None
    body = raw.strip(" \t\n\r")
    try:
        refs, end = _SCAN(body, 0)
    except (StopIteration, json.JSONDecodeError):
        end = -1
    if end != len(body):  # not one JSON value: json.loads says why
        try:
            refs = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise QuerySetError(
                f"{at()}: 'references' is not JSON ({exc.msg})"
            ) from None
    if not isinstance(refs, list) or not refs:
        raise QuerySetError(f"{at()}: 'references' must be a non-empty JSON list")
    excerpts: list[Excerpt] = []
    for i, ref in enumerate(refs, 1):
        if type(ref) is dict:  # the common case, checked without a frame
            content = ref.get("content")
            start, stop = ref.get("start_index"), ref.get("end_index")
            if type(content) is str and type(start) is int and type(stop) is int:
                excerpts.append(Excerpt(content, doc_id, start, stop))
                continue
        if not isinstance(ref, dict):
            raise QuerySetError(f"{at()}: reference {i} is not an object")
        content, start, stop = (
            ref.get(k) for k in ("content", "start_index", "end_index")
        )
        if not isinstance(content, str) or not (_is_int(start) and _is_int(stop)):
            raise QuerySetError(
                f"{at()}: reference {i} needs a string 'content' and integer "
                "'start_index' and 'end_index'"
            )
        excerpts.append(Excerpt(content, doc_id, start, stop))
    return tuple(excerpts)


def write_header(
    path: str | os.PathLike[str],
    metadata: Mapping[str, Any] | None = None,
    *,
    overwrite: bool = False,
) -> None:
    """Create a JSONL query set holding only its header line, atomically.

    Refuses to replace an existing file unless ``overwrite``.
    """
    if not overwrite and Path(path).exists():
        raise QuerySetError(
            f"{os.fspath(path)} already exists; pass overwrite=True to replace it"
        )
    with atomic_writer(Path(path), "w") as fh:
        fh.write(header_line(metadata or {}))


def append_query(path: str | os.PathLike[str], query: Query) -> None:
    """Append one query line to a JSONL query set and flush it to disk.

    The file must exist (see :func:`write_header`). A last line left without its
    newline is repaired first (:func:`pytest_chunkeval.util.files.append_jsonl`): kept
    when it is a complete query, cut off with a :class:`QuerySetWarning` when an
    interrupted earlier append left only part of one, so it cannot corrupt the
    line written now.
    """
    try:
        if os.stat(path).st_size == 0:
            raise QuerySetError(f"{os.fspath(path)} is empty; it needs a header line")
        append_jsonl(path, query_line(query), create=False, on_repair=_on_repair)
    except FileNotFoundError:
        raise QuerySetError(
            f"{os.fspath(path)} does not exist; create it with write_header() first"
        ) from None


def repair_query_log(path: str | os.PathLike[str]) -> None:
    """Before a writer resumes its own JSONL log (``chunkeval generate``): an
    incomplete last line, left by an interrupted append, is cut away with a
    :class:`QuerySetWarning`, as :func:`append_query` would before its next
    append, so that reading the log does not refuse it."""
    repair_jsonl_tail(path, on_repair=_on_repair)


def _on_repair(repair: TailRepair) -> None:
    """Called under the lock before ``append_jsonl`` changes the file."""
    if not repair.cut:
        return  # a complete line that lacked its newline: kept
    if repair.offset == 0:
        raise QuerySetError(
            f"{repair.path}: the header line is incomplete; recreate the file with "
            "write_header()"
        )
    warnings.warn(
        f"{repair.path}: cutting an incomplete last line ({len(repair.fragment)} "
        "bytes) before appending",
        QuerySetWarning,
        stacklevel=5,  # _on_repair <- _repair_tail <- append_jsonl <- append_query
    )
