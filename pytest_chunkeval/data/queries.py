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
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from pytest_chunkeval.core.locate import find_normalized, locate, preview
from pytest_chunkeval.data.corpus import Corpus, CorpusError
from pytest_chunkeval.data.query_formats import (
    REFERENCE_COLUMNS,
    VERSION_KEY,
    header_line,
    parse_json,
    parse_jsonl,
    query_format,
    query_line,
    query_to_json,
    read_file_text,
    reference_excerpts,
)
from pytest_chunkeval.data.query_types import (
    SCHEMA_VERSION,
    Excerpt,
    Query,
    QuerySetError,
    UnknownQuery,
    UnplacedQuery,
    stable_query_id,
)
from pytest_chunkeval.util.files import atomic_writer


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
                raise UnknownQuery(
                    f"{self._where()}: no query with id {key!r}"
                ) from None
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
            encode = json.JSONEncoder(ensure_ascii=False).encode  # one encoder
            for q in self._queries:
                record = query_to_json(replace(q, metadata={}) if q.metadata else q)
                h.update(encode(record).encode("utf-8"))
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
        suffix = query_format(Path(path).suffix, source)
        text = read_file_text(path, torn_tail_ok=suffix == ".jsonl")
        return cls.from_text(text, suffix, corpus, source=source)

    @classmethod
    def load_placeable(
        cls, path: str | os.PathLike[str], corpus: Corpus
    ) -> tuple[QuerySet, tuple[UnplacedQuery, ...]]:
        """:meth:`load`, leaving out the queries whose excerpts cannot be placed
        (see :meth:`placeable`), by the same rule for every format: a reference
        ``.csv`` whose row names a document the corpus no longer has, or whose
        excerpt an edit deleted, leaves that question out as a ``.jsonl`` does."""
        source = os.fspath(path)
        suffix = query_format(Path(path).suffix, source)
        text = read_file_text(path, torn_tail_ok=suffix == ".jsonl")
        text = text.removeprefix("\ufeff")
        if suffix == ".csv":
            parsed = read_reference_csv(text, corpus, source=source, strict=False)
        else:
            parsed = _parse_text(text, suffix, source)
        return parsed.placeable(corpus)

    @classmethod
    def from_text(
        cls, text: str, suffix: str, corpus: Corpus, *, source: str
    ) -> QuerySet:
        """Parse ``text`` in the format its file ``suffix`` names (``.jsonl``,
        ``.json`` or reference ``.csv``) and validate it against ``corpus``, as
        :meth:`load` does for a file; ``source`` names it in messages."""
        suffix = query_format(suffix, source)
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
        text = read_file_text(path)
        return parse_reference_csv(text, corpus, source=os.fspath(path))

    # -- writing ----------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write atomically as ``.jsonl`` (header + one query a line) or ``.json``."""
        suffix = Path(path).suffix.lower()
        if suffix == ".jsonl":
            with atomic_writer(Path(path), "w") as fh:
                fh.write(header_line(self.metadata))
                for q in self._queries:
                    fh.write(query_line(q))
        elif suffix == ".json":
            doc = {
                VERSION_KEY: SCHEMA_VERSION,
                "metadata": self.metadata,
                "queries": [query_to_json(q) for q in self._queries],
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
        out, problems, changed = self._placed(corpus)
        if problems:
            raise self._unplaceable_error(corpus, [p for _, p, _ in problems])
        if not changed:
            return self
        return QuerySet(out, self.metadata, source=self.source)

    def placeable(self, corpus: Corpus) -> tuple[QuerySet, tuple[UnplacedQuery, ...]]:
        """The queries whose excerpts can all be placed in ``corpus`` (as
        :meth:`validated` places them) and the others, left out. Only a baseline
        comparison on an edited corpus uses this; when no query is left, the
        error is :meth:`validated`'s."""
        out, problems, changed = self._placed(corpus)
        if not problems:
            return (
                QuerySet(out, self.metadata, source=self.source) if changed else self
            ), ()
        if not out:
            raise self._unplaceable_error(corpus, [p for _, p, _ in problems])
        unplaced: dict[str, UnplacedQuery] = {}
        for q, _, reason in problems:
            if q.id not in unplaced:  # its first excerpt that cannot be placed
                unplaced[q.id] = UnplacedQuery(q.id, q.text, q.doc_id, reason)
        return QuerySet(out, self.metadata, source=self.source), tuple(
            unplaced.values()
        )

    def _placed(
        self, corpus: Corpus
    ) -> tuple[list[Query], list[tuple[Query, str, str]], bool]:
        """The queries placed in ``corpus``, the problems of the others (query,
        message, reason), and whether any placed query moved."""
        problems: list[tuple[Query, str, str]] = []
        out: list[Query] = []
        changed = False
        for q in self._queries:
            if not q.doc_id and not q.excerpts:  # a bare question: nothing to place
                out.append(q)
                continue
            try:
                doc_id = corpus.resolve_id(q.doc_id)
            except CorpusError as exc:
                message = f"query {q.id!r} ({preview(q.text)}): {exc}"
                problems.append((q, message, str(exc)))
                continue
            excerpts: list[Excerpt] = []
            placed = True
            for i, ex in enumerate(q.excerpts, 1):
                checked = _check_excerpt(ex, corpus)
                if isinstance(checked, str):
                    placed = False
                    problems.append(
                        (
                            q,
                            f"query {q.id!r} ({preview(q.text)}), excerpt {i} "
                            f"{preview(ex.text)}: {checked}",
                            # short enough for its line in the gate's list
                            # of questions left out (gate/comparison/changes.py)
                            f"excerpt {i} {preview(ex.text, 40)} "
                            + checked.replace(f" in document {q.doc_id!r}", ""),
                        )
                    )
                else:
                    excerpts.append(checked)
            if not placed:
                continue
            if doc_id == q.doc_id and all(
                a is b for a, b in zip(excerpts, q.excerpts, strict=True)
            ):
                out.append(q)  # placed where it said: the same query
                continue
            new = replace(q, excerpts=tuple(excerpts), doc_id=doc_id)
            changed = changed or new != q
            out.append(new)
        return out, problems, changed

    def _unplaceable_error(self, corpus: Corpus, problems: list[str]) -> QuerySetError:
        shown = "\n  ".join(problems[:10])
        more = f"\n  ... and {len(problems) - 10} more" if len(problems) > 10 else ""
        return QuerySetError(
            f"{self._where()}: {len(problems)} excerpt(s) cannot be placed in "
            f"{corpus.label}:\n  {shown}{more}"
        )


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
    suffix = query_format(Path(path).suffix, source)
    if suffix == ".csv":  # it needs a corpus to resolve its document names
        raise QuerySetError(
            f"{source}: a reference .csv needs a corpus; use QuerySet.load(path, "
            "corpus)"
        )
    text = read_file_text(path, torn_tail_ok=suffix == ".jsonl")
    return _parse_text(text, suffix, source)


TAGS_COLUMN = "tags"
"""An optional column of the reference CSV: the question's tags, separated by
``;`` (docs/formats.md; the gate names tags beyond their own tolerance)."""


def parse_reference_csv(text: str, corpus: Corpus, *, source: str) -> QuerySet:
    """The reference ``questions_df.csv`` in ``text``, validated against ``corpus``."""
    return read_reference_csv(text, corpus, source=source).validated(corpus)


def read_reference_csv(
    text: str, corpus: Corpus, *, source: str, strict: bool = True
) -> QuerySet:
    """The reference ``questions_df.csv`` in ``text``, its excerpts not yet
    placed (:meth:`QuerySet.validated` or :meth:`QuerySet.placeable` do, as for
    the other formats). ``corpus`` resolves each row's ``corpus_id``; a name it
    does not know is an error naming the row, unless not ``strict``: the query
    then keeps the name, and placing it reports it as any format's query
    naming a document the corpus lacks."""
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, [])
    missing = [c for c in REFERENCE_COLUMNS if c not in header]
    if missing:
        raise QuerySetError(
            f"{source}: missing column(s) {', '.join(missing)} (a reference "
            f"questions CSV has columns {', '.join(REFERENCE_COLUMNS)})"
        )
    # as csv.DictReader reads them: the last column of a name, "" when a row is
    # short, blank lines skipped
    column = {name: i for i, name in enumerate(header)}
    at_q, at_doc, at_refs = (column[c] for c in ("question", "corpus_id", "references"))
    at_tags = column.get(TAGS_COLUMN)  # ours, optional (docs/formats.md)
    width = max(at_q, at_doc, at_refs, -1 if at_tags is None else at_tags) + 1
    queries: list[Query] = []
    seen: dict[str, int] = {}
    for row in reader:
        if not row:
            continue
        if len(row) < width:
            row = row + [""] * (width - len(row))
        question, corpus_id = row[at_q], row[at_doc]
        if not question.strip():
            raise QuerySetError(f"{source}:{reader.line_num}: empty question")
        try:
            doc_id = corpus.resolve_id(corpus_id)
        except CorpusError as exc:
            if strict:
                raise QuerySetError(
                    f"{source}:{reader.line_num}: question {preview(question)}: {exc}"
                ) from None
            doc_id = corpus_id
        where = f"{source}:{reader.line_num}"
        excerpts = reference_excerpts(row[at_refs], doc_id, where, question)
        base = stable_query_id(corpus_id, question)
        seen[base] = seen.get(base, 0) + 1
        qid = base if seen[base] == 1 else f"{base}-{seen[base]}"
        cell = "" if at_tags is None else row[at_tags]
        named = [t.strip() for t in cell.split(";")] if cell.strip() else []
        if not all(named):  # as a JSONL query's metadata tags (query_formats.py)
            raise QuerySetError(
                f"{where}: question {preview(question)}: column 'tags' must be "
                f"non-empty names separated by ';' (got {cell!r})"
            )
        tags = sorted(set(named))
        extra: dict[str, Any] = {"tags": tags} if tags else {}
        queries.append(Query(qid, question, excerpts, doc_id, extra))
    metadata = {"source_format": "reference-csv", "source": os.path.basename(source)}
    return QuerySet(queries, metadata, source=source)
