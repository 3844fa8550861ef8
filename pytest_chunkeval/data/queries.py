"""Query sets: questions with ground-truth excerpts, stored as text AND span.

Formats (documented in ``docs/formats.md``):

- JSONL (primary): a header line ``{"chunkeval_queries": 1, "metadata": {...}}``,
  then one query object per line. A generator appends lines as it goes
  (:func:`write_header`, :func:`append_query`), so a final line without a newline
  is kept if it is valid JSON, else (a crash mid-write) ignored with a
  :class:`QuerySetWarning` and cut by the next append; any other malformed line is
  an error naming the file and line.
- JSON: ``{"chunkeval_queries": 1, "metadata": {...}, "queries": [...]}``.
- CSV: the reference implementation's ``questions_df.csv`` (read only).

Loading against a corpus checks every excerpt's span and re-locates an excerpt
whose text moved (:meth:`QuerySet.validated`).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeGuard

from pytest_chunkeval.core.locate import find_normalized, locate, preview
from pytest_chunkeval.core.spans import Span
from pytest_chunkeval.data.corpus import Corpus, CorpusError
from pytest_chunkeval.util.files import (
    JsonLineError,
    TailRepair,
    TornLine,
    append_jsonl,
    atomic_writer,
    decode_jsonl,
    iter_jsonl_lines,
)

SCHEMA_VERSION = 1
"""Version of the JSON / JSONL query-set schema this package reads and writes."""

_VERSION_KEY = "chunkeval_queries"
_REFERENCE_COLUMNS = ("question", "references", "corpus_id")


class QuerySetError(ValueError):
    """A query set cannot be read, or does not match its corpus."""


class QuerySetWarning(UserWarning):
    """Something in a query file was skipped (an incomplete final JSONL line)."""


@dataclass(frozen=True)
class Excerpt:
    """A ground-truth passage: its text and where it is, ``text[start:end]``.

    ``approximate`` is true when the stored text was found in the document only up
    to whitespace (the text then holds the document's own characters).
    """

    text: str
    doc_id: str
    start: int
    end: int
    approximate: bool = False

    @property
    def span(self) -> Span:
        return Span(self.doc_id, self.start, self.end)


@dataclass(frozen=True)
class StatedRelationship:
    """A gold relationship given in a query file (Graph-RAG evaluation): subject,
    predicate, object and its evidence texts (empty: the query's excerpts)."""

    subject: str
    predicate: str
    object: str
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class Query:
    """A question, its excerpts, and the document it was generated from.

    ``relationships``: gold relationships given in the file (else, a relationship
    evaluation extracts them from the excerpts).
    """

    id: str
    text: str
    excerpts: tuple[Excerpt, ...]
    doc_id: str
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    relationships: tuple[StatedRelationship, ...] = ()

    @property
    def spans(self) -> tuple[Span, ...]:
        return tuple(e.span for e in self.excerpts)


def stable_query_id(prefix: str, question: str) -> str:
    """``<prefix>-<first 8 hex digits of sha256(question as UTF-8)>``.

    The reference CSV importer uses the ``corpus_id`` as prefix and appends ``-2``,
    ``-3``... to later duplicates.
    """
    digest = hashlib.sha256(question.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{prefix}-{digest[:8]}"


class QuerySet:
    """An ordered, immutable collection of queries with unique ids."""

    __slots__ = ("_by_id", "_hash", "_queries", "metadata", "source")

    def __init__(
        self,
        queries: Iterable[Query],
        metadata: Mapping[str, Any] | None = None,
        *,
        source: str | os.PathLike[str] | None = None,
    ) -> None:
        self._queries = tuple(queries)
        self.metadata: dict[str, Any] = dict(metadata or {})
        self.source: str | None = None if source is None else os.fspath(source)
        by_id: dict[str, Query] = {}
        for q in self._queries:
            if q.id in by_id:
                raise QuerySetError(f"{self._where()}: duplicate query id {q.id!r}")
            by_id[q.id] = q
        self._by_id = by_id
        self._hash: str | None = None

    @property
    def queries(self) -> tuple[Query, ...]:
        return self._queries

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._by_id)

    def __iter__(self) -> Iterator[Query]:
        return iter(self._queries)

    def __len__(self) -> int:
        return len(self._queries)

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._by_id

    def __getitem__(self, key: int | str) -> Query:
        """A query by position or by id."""
        if isinstance(key, str):
            try:
                return self._by_id[key]
            except KeyError:
                raise KeyError(f"{self._where()}: no query with id {key!r}") from None
        return self._queries[key]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QuerySet):
            return NotImplemented
        return self._queries == other._queries and self.metadata == other.metadata

    __hash__ = None  # type: ignore[assignment]  # metadata is a mutable dict

    def __repr__(self) -> str:
        n_excerpts = sum(len(q.excerpts) for q in self._queries)
        src = f", source={self.source!r}" if self.source else ""
        return f"QuerySet({len(self)} queries, {n_excerpts} excerpts{src})"

    @property
    def n_excerpts(self) -> int:
        return sum(len(q.excerpts) for q in self._queries)

    @property
    def content_hash(self) -> str:
        """SHA-256 hex of what an evaluation depends on: each query's id, question,
        document, excerpts (text and span) and stated relationships, in order.
        Metadata is excluded."""
        if self._hash is None:
            h = hashlib.sha256()
            for q in self._queries:
                record = _query_to_json(replace(q, metadata={}))
                h.update(json.dumps(record, ensure_ascii=False).encode("utf-8"))
                h.update(b"\n")
            self._hash = h.hexdigest()
        return self._hash

    def _where(self) -> str:
        return self.source or "query set"

    # -- reading ----------------------------------------------------------------

    @classmethod
    def load(cls, path: str | os.PathLike[str], corpus: Corpus) -> QuerySet:
        """Read ``.jsonl``, ``.json`` or reference ``.csv`` and validate it against
        ``corpus`` (see :meth:`validated`)."""
        source = os.fspath(path)
        suffix = _query_format(Path(path).suffix, source)
        text = _read_file_text(path, torn_tail_ok=suffix == ".jsonl")
        return cls.from_text(text, suffix, corpus, source=source)

    @classmethod
    def from_text(
        cls, text: str, suffix: str, corpus: Corpus, *, source: str
    ) -> QuerySet:
        """Parse ``text`` in the format its file ``suffix`` names (``.jsonl``,
        ``.json`` or reference ``.csv``) and validate it against ``corpus``, as
        :meth:`load` does for a file; ``source`` names it in messages."""
        suffix = _query_format(suffix, source)
        text = text.removeprefix("\ufeff")
        if suffix == ".csv":
            return parse_reference_csv(text, corpus, source=source)
        return _parse_text(text, suffix, source).validated(corpus)

    @classmethod
    def from_reference_csv(
        cls, path: str | os.PathLike[str], corpus: Corpus
    ) -> QuerySet:
        """Import the reference implementation's ``questions_df.csv``.

        Columns ``question``, ``references`` (JSON list of ``{content, start_index,
        end_index}``) and ``corpus_id`` (a document's file stem). Query ids follow
        :func:`stable_query_id` with the ``corpus_id`` as prefix.
        """
        text = _read_file_text(path)
        return parse_reference_csv(text, corpus, source=os.fspath(path))

    # -- writing ----------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write atomically as ``.jsonl`` (header + one query a line) or ``.json``."""
        suffix = Path(path).suffix.lower()
        if suffix == ".jsonl":
            with atomic_writer(Path(path), "w") as fh:
                fh.write(_header_line(self.metadata))
                for q in self._queries:
                    fh.write(_query_line(q))
        elif suffix == ".json":
            doc = {
                _VERSION_KEY: SCHEMA_VERSION,
                "metadata": self.metadata,
                "queries": [_query_to_json(q) for q in self._queries],
            }
            with atomic_writer(Path(path), "w") as fh:
                fh.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
        else:
            raise QuerySetError(
                f"cannot save a query set as {os.fspath(path)!r}: use a .jsonl or "
                ".json file name"
            )

    # -- checking against a corpus ----------------------------------------------

    def validated(self, corpus: Corpus) -> QuerySet:
        """This query set with every excerpt checked against ``corpus``.

        Document names are resolved with :meth:`Corpus.resolve_id`. An excerpt
        whose ``text[start:end]`` differs from its text is located again: the exact
        occurrence nearest to the stored start, else a whitespace-insensitive match
        (nearest too; the excerpt then takes the document's characters and is marked
        ``approximate``). Any excerpt that cannot be located raises
        :class:`QuerySetError` listing every such query and excerpt.
        """
        problems: list[str] = []
        out: list[Query] = []
        changed = False
        for q in self._queries:
            if not q.doc_id and not q.excerpts:  # a bare question: nothing to place
                out.append(q)
                continue
            try:
                doc_id = corpus.resolve_id(q.doc_id)
            except CorpusError as exc:
                problems.append(f"query {q.id!r} ({preview(q.text)}): {exc}")
                continue
            excerpts: list[Excerpt] = []
            for i, ex in enumerate(q.excerpts, 1):
                checked = _check_excerpt(ex, corpus)
                if isinstance(checked, str):
                    problems.append(
                        f"query {q.id!r} ({preview(q.text)}), excerpt {i} "
                        f"{preview(ex.text)}: {checked}"
                    )
                else:
                    excerpts.append(checked)
            new = replace(q, excerpts=tuple(excerpts), doc_id=doc_id)
            changed = changed or new != q
            out.append(new)
        if problems:
            shown = "\n  ".join(problems[:10])
            more = (
                f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
            )
            raise QuerySetError(
                f"{self._where()}: {len(problems)} excerpt(s) cannot be placed in "
                f"corpus {corpus.name!r}:\n  {shown}{more}"
            )
        if not changed:
            return self
        return QuerySet(out, self.metadata, source=self.source)


def _check_excerpt(ex: Excerpt, corpus: Corpus) -> Excerpt | str:
    """The excerpt with a correct span, or why it cannot have one."""
    try:
        doc_id = corpus.resolve_id(ex.doc_id)
    except CorpusError as exc:
        return str(exc)
    text = corpus[doc_id].text
    needle = ex.text
    if 0 <= ex.start <= ex.end <= len(text) and text[ex.start : ex.end] == needle:
        return ex if doc_id == ex.doc_id else replace(ex, doc_id=doc_id)
    hint = ex.start if ex.start >= 0 else None
    found = locate(text, needle, hint=hint)
    if found is None:
        where = f"stored span {ex.start}-{ex.end}" if ex.start >= 0 else "no span"
        return f"not found in document {doc_id!r} ({where})"
    if text[found[0] : found[1]] != needle and hint is not None:
        found = _nearest_normalized(text, needle, hint) or found
    start, end = found
    exact = text[start:end] == needle
    return Excerpt(text[start:end], doc_id, start, end, ex.approximate or not exact)


def _nearest_normalized(text: str, needle: str, hint: int) -> tuple[int, int] | None:
    """The whitespace-insensitive match of ``needle`` starting nearest ``hint``."""
    best: tuple[int, int] | None = None
    pos = 0
    while (m := find_normalized(text, needle, pos)) is not None:
        if best is None or abs(m[0] - hint) < abs(best[0] - hint):
            best = m
        if m[0] >= hint:
            break
        pos = m[0] + 1
    return best


# -- JSON / JSONL ---------------------------------------------------------------


def _query_to_json(q: Query) -> dict[str, Any]:
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


def _header_line(metadata: Mapping[str, Any]) -> str:
    header = {_VERSION_KEY: SCHEMA_VERSION, "metadata": dict(metadata)}
    return json.dumps(header, ensure_ascii=False) + "\n"


def _query_line(q: Query) -> str:
    return json.dumps(_query_to_json(q), ensure_ascii=False) + "\n"


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
    # No excerpts: a question for judged metrics only (SPEC §7, §10).
    excerpts = tuple(
        _excerpt_from_json(e, doc_id, f"{where}, excerpt {i}")
        for i, e in enumerate(raw, 1)
    )
    metadata = obj.get("metadata", {})
    if not isinstance(metadata, dict):
        raise QuerySetError(f"{where}: 'metadata' must be an object")
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
    if not isinstance(obj, dict) or _VERSION_KEY not in obj:
        raise QuerySetError(
            f"{where}: not a chunkeval query set (expected an object with "
            f"{_VERSION_KEY!r} first)"
        )
    version = obj[_VERSION_KEY]
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


def _read_file_text(path: str | os.PathLike[str], *, torn_tail_ok: bool = False) -> str:
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


def _query_format(suffix: str, source: str) -> str:
    """The lower-cased ``suffix`` if it names a query-set format, else an error."""
    fmt = suffix.lower()
    if fmt not in (".jsonl", ".json", ".csv"):
        raise QuerySetError(
            f"{source}: unknown query-set format {fmt or '(no suffix)'!r}; "
            "expected .jsonl, .json or the reference .csv"
        )
    return fmt


def _parse_text(text: str, suffix: str, source: str) -> QuerySet:
    """A ``.jsonl`` or ``.json`` query set from its text, not yet validated."""
    if suffix == ".jsonl":
        metadata, queries = parse_jsonl(text, source)
    else:
        metadata, queries = parse_json(text, source)
    return QuerySet(queries, metadata, source=source)


def read_queries(path: str | os.PathLike[str]) -> QuerySet:
    """Read a ``.jsonl`` or ``.json`` query set WITHOUT checking it against a corpus.

    Excerpts given without ``start``/``end`` have ``start == end == -1`` until
    :meth:`QuerySet.validated` locates them. Use :meth:`QuerySet.load` to evaluate.
    """
    source = os.fspath(path)
    suffix = _query_format(Path(path).suffix, source)
    if suffix == ".csv":  # it needs a corpus to resolve its document names
        raise QuerySetError(
            f"{source}: a reference .csv needs a corpus; use QuerySet.load(path, "
            "corpus)"
        )
    text = _read_file_text(path, torn_tail_ok=suffix == ".jsonl")
    return _parse_text(text, suffix, source)


def parse_jsonl(text: str, source: str) -> tuple[dict[str, Any], list[Query]]:
    """Header metadata and queries of JSONL ``text`` (``source`` names it in errors).

    Blank lines are skipped. A final line without a newline is kept when it is
    valid JSON; when it is not, it is the trace of an interrupted append and is
    dropped with a :class:`QuerySetWarning` (unless it is the header). Every
    other malformed line is an error naming ``source:line``.
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
        warnings.warn(
            f"{where}: ignoring an incomplete last line (no final newline; "
            f"an interrupted write?): {preview(torn[0].text)}",
            QuerySetWarning,
            stacklevel=4,  # parse_jsonl <- _parse_text <- read_queries <- caller
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
    unknown = set(obj) - {_VERSION_KEY, "metadata", "queries"}
    if unknown:
        raise QuerySetError(f"{source}: unknown top-level field(s) {sorted(unknown)}")
    queries = [
        _query_from_json(q, f"{source}: queries[{i}]") for i, q in enumerate(raw)
    ]
    return metadata, queries


def parse_reference_csv(text: str, corpus: Corpus, *, source: str) -> QuerySet:
    """The reference ``questions_df.csv`` in ``text``, validated against ``corpus``."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    missing = [c for c in _REFERENCE_COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise QuerySetError(
            f"{source}: missing column(s) {', '.join(missing)} (a reference "
            f"questions CSV has columns {', '.join(_REFERENCE_COLUMNS)})"
        )
    queries: list[Query] = []
    seen: dict[str, int] = {}
    for row in reader:
        where = f"{source}:{reader.line_num}"
        question, corpus_id = row["question"] or "", row["corpus_id"] or ""
        if not question.strip():
            raise QuerySetError(f"{where}: empty question")
        try:
            doc_id = corpus.resolve_id(corpus_id)
        except CorpusError as exc:
            raise QuerySetError(
                f"{where}: question {preview(question)}: {exc}"
            ) from None
        excerpts = _reference_excerpts(row["references"] or "", doc_id, where, question)
        base = stable_query_id(corpus_id, question)
        seen[base] = seen.get(base, 0) + 1
        qid = base if seen[base] == 1 else f"{base}-{seen[base]}"
        queries.append(Query(qid, question, excerpts, doc_id))
    metadata = {"source_format": "reference-csv", "source": os.path.basename(source)}
    return QuerySet(queries, metadata, source=source).validated(corpus)


def _reference_excerpts(
    raw: str, doc_id: str, where: str, question: str
) -> tuple[Excerpt, ...]:
    where = f"{where}: question {preview(question)}"
    try:
        refs = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise QuerySetError(f"{where}: 'references' is not JSON ({exc.msg})") from None
    if not isinstance(refs, list) or not refs:
        raise QuerySetError(f"{where}: 'references' must be a non-empty JSON list")
    excerpts: list[Excerpt] = []
    for i, ref in enumerate(refs, 1):
        if not isinstance(ref, dict):
            raise QuerySetError(f"{where}: reference {i} is not an object")
        content, start, end = (
            ref.get(k) for k in ("content", "start_index", "end_index")
        )
        if not isinstance(content, str) or not (_is_int(start) and _is_int(end)):
            raise QuerySetError(
                f"{where}: reference {i} needs a string 'content' and integer "
                "'start_index' and 'end_index'"
            )
        excerpts.append(Excerpt(content, doc_id, start, end))
    return tuple(excerpts)


# -- incremental writing (query generation) -------------------------------------


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
        fh.write(_header_line(metadata or {}))


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
        append_jsonl(path, _query_line(query), create=False, on_repair=_on_repair)
    except FileNotFoundError:
        raise QuerySetError(
            f"{os.fspath(path)} does not exist; create it with write_header() first"
        ) from None


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
        stacklevel=4,  # _on_repair <- append_jsonl <- append_query <- caller
    )
