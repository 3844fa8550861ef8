"""Read a BEIR-format dataset folder as a corpus and a query set (no dependency on
the ``beir`` package).

A BEIR folder (Thakur et al., 2021; e.g. an unzipped ``scifact``) holds:

- ``corpus.jsonl``: one document a line, ``{"_id", "title", "text"}``;
- ``queries.jsonl``: one question a line, ``{"_id", "text"}``;
- ``qrels/<split>.tsv``: ``query-id <TAB> corpus-id <TAB> score``, after a header
  line (``test`` by default; ``train`` and ``dev`` where the dataset has them).

Each corpus entry becomes a document whose text is ``title + "\\n\\n" + text``
(the text alone when the title is empty), in file order. Each question of the
split becomes a query whose excerpts are its relevant documents (score > 0), each
covering the whole document: BEIR judges documents, not passages. The graded
relevance is kept in the query's metadata (``beir_relevance``: corpus id ->
score). Questions of the split with no relevant document are skipped and counted
(``queries.metadata["beir"]``), as are relevant documents whose text is empty.
See ``docs/formats.md``.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

from pytest_chunkeval.data.corpus import Corpus, Document
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.errors import DataError, MissingFile

DEFAULT_SPLIT = "test"


class BeirError(DataError):
    """A BEIR folder or one of its files cannot be read; the message names it."""


def _lines(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of each non-blank line of a JSON Lines file."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise MissingFile(f"BEIR file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BeirError(f"cannot read BEIR file {path}: {exc}") from None
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BeirError(f"{path}:{lineno}: not valid JSON ({exc.msg})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("_id"), (str, int)):
            raise BeirError(f"{path}:{lineno}: expected an object with an '_id'")
        out.append((lineno, obj))
    return out


def _text(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key, "")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BeirError(f"{where}: {key!r} must be a string")
    return value


def read_beir_corpus(folder: Path, *, name: str) -> Corpus:
    """The documents of ``folder/corpus.jsonl`` (see the module docstring)."""
    path = folder / "corpus.jsonl"
    docs: list[Document] = []
    seen: set[str] = set()
    for lineno, obj in _lines(path):
        where = f"{path}:{lineno}"
        doc_id = str(obj["_id"])
        if doc_id in seen:
            raise BeirError(f"{where}: duplicate document id {doc_id!r}")
        seen.add(doc_id)
        title, text = _text(obj, "title", where), _text(obj, "text", where)
        docs.append(Document(doc_id, f"{title}\n\n{text}" if title else text))
    if not docs:
        raise BeirError(f"{path} holds no document")
    return Corpus(docs, name=name)


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """``{query id: {corpus id: score}}`` of a BEIR qrels TSV (header line kept
    out; a line that is not three columns with an integer score is an error)."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise MissingFile(f"BEIR qrels file {path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BeirError(f"cannot read BEIR qrels file {path}: {exc}") from None
    qrels: dict[str, dict[str, int]] = {}
    rows = csv.reader(io.StringIO(text, newline=""), delimiter="\t")
    for lineno, row in enumerate(rows, 1):
        if not row or not "".join(row).strip():
            continue
        if lineno == 1 and row[0].strip().lower() in ("query-id", "query_id", "qid"):
            continue
        try:
            qid, doc, score = row[0].strip(), row[1].strip(), int(row[2])
        except (IndexError, ValueError):
            raise BeirError(
                f"{path}:{lineno}: expected 'query-id<TAB>corpus-id<TAB>score' "
                "with an integer score"
            ) from None
        qrels.setdefault(qid, {})[doc] = score
    return qrels


def load_beir(
    folder: str | os.PathLike[str],
    split: str = DEFAULT_SPLIT,
    *,
    name: str | None = None,
) -> tuple[Corpus, QuerySet]:
    """The corpus and query set of the BEIR folder ``folder`` for ``split``.

    ``name``: the corpus name (default: the folder's name). Counts of what was
    skipped are in ``queries.metadata["beir"]``.
    """
    root = Path(folder)
    if not root.is_dir():
        raise MissingFile(f"BEIR folder {root} does not exist (or is not a folder)")
    if not split or "/" in split or "\\" in split:
        raise BeirError(f"BEIR split {split!r}: expected a name such as 'test'")
    corpus = read_beir_corpus(root, name=name or root.resolve().name)
    qrels_path = root / "qrels" / f"{split}.tsv"
    qrels = read_qrels(qrels_path)
    questions: dict[str, str] = {}
    qpath = root / "queries.jsonl"
    for lineno, obj in _lines(qpath):
        qid = str(obj["_id"])
        if qid in qrels:
            questions[qid] = _text(obj, "text", f"{qpath}:{lineno}")
    queries: list[Query] = []
    skipped = empty = 0
    for qid, judged in qrels.items():
        if qid not in questions:
            raise BeirError(f"{qrels_path}: query {qid!r} is not in {qpath.name}")
        excerpts = []
        for doc_id, score in judged.items():
            if doc_id not in corpus:
                raise BeirError(
                    f"{qrels_path}: query {qid!r} names document {doc_id!r}, which "
                    "is not in corpus.jsonl"
                )
            text = corpus[doc_id].text
            if score > 0 and not text.strip():
                empty += 1
            elif score > 0:
                excerpts.append(Excerpt(text, doc_id, 0, len(text)))
        if not excerpts or not questions[qid].strip():
            skipped += 1
            continue
        queries.append(
            Query(
                qid,
                questions[qid],
                tuple(excerpts),
                excerpts[0].doc_id,
                {"beir_relevance": dict(judged)},
            )
        )
    metadata = {
        "source_format": "beir",
        "beir": {
            "split": split,
            "questions": len(qrels),
            "skipped_without_relevant": skipped,
            "empty_relevant_documents": empty,
        },
    }
    source = str(qrels_path)
    return corpus, QuerySet(queries, metadata, source=source)
