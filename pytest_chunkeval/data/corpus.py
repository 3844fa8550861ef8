"""Corpora: ordered, immutable sets of ``(doc_id, text)`` documents.

A document's text is the file's bytes decoded as UTF-8 and nothing else: no newline
translation and no BOM stripping, because every span in the product is an offset into
exactly this string.
"""

from __future__ import annotations

import glob
import hashlib
import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from pytest_chunkeval.errors import DataError

TEXT_SUFFIXES: frozenset[str] = frozenset(
    {
        ".md",
        ".markdown",
        ".mdx",
        ".txt",
        ".text",
        ".rst",
        ".adoc",
        ".asciidoc",
        ".org",
        ".tex",
        ".html",
        ".htm",
    }
)
"""Suffixes kept when a directory is walked (case-insensitive). Files named
explicitly, or matched by a glob, are read whatever their suffix."""

_GLOB_CHARS = frozenset("*?[")


class CorpusError(DataError):
    """A corpus cannot be built, or a document name does not identify a document."""


class UnknownDocument(CorpusError, KeyError):
    """``corpus[doc_id]`` with an id the corpus does not hold."""

    def __str__(self) -> str:
        # KeyError's own __str__ would repr() the message.
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Document:
    """One document: its stable id, its exact text, and the file it came from.

    Equality ignores ``path``: the same document read on two machines is equal.
    """

    id: str
    text: str
    path: Path | None = field(default=None, compare=False)


class Corpus:
    """An ordered, immutable collection of documents with unique ids."""

    __slots__ = (
        "_by_id",
        "_doc_hashes",
        "_documents",
        "_hash",
        "_keys",
        "_name",
        "_source",
    )

    def __init__(
        self,
        documents: Iterable[Document],
        *,
        name: str = "corpus",
        source: str | None = None,
    ) -> None:
        """``source``: the paths as the user gave them (``docs/rentals.md``), which
        errors name instead of ``name`` (``docs``, the directory the ids hang
        from); not part of the corpus's identity."""
        docs = tuple(documents)
        by_id: dict[str, Document] = {}
        for doc in docs:
            if not isinstance(doc.id, str) or not doc.id:
                raise CorpusError(f"corpus {name!r}: document id {doc.id!r} is empty")
            if not isinstance(doc.text, str):
                raise CorpusError(
                    f"corpus {name!r}: document {doc.id!r} text is "
                    f"{type(doc.text).__name__}, not str"
                )
            if doc.id in by_id:
                raise CorpusError(f"corpus {name!r}: duplicate document id {doc.id!r}")
            by_id[doc.id] = doc
        self._name = name
        self._source = source
        self._documents = docs
        self._by_id = by_id
        self._hash: str | None = None
        self._doc_hashes: tuple[str, ...] | None = None
        self._keys: dict[str, list[str]] | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def label(self) -> str:
        """How messages name the corpus: the paths the user gave when known
        (``corpus docs/rentals.md``), else its name (``corpus 'docs'``)."""
        return f"corpus {self._source}" if self._source else f"corpus {self._name!r}"

    @property
    def documents(self) -> tuple[Document, ...]:
        return self._documents

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._by_id)

    def __iter__(self) -> Iterator[Document]:
        return iter(self._documents)

    def __len__(self) -> int:
        return len(self._documents)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._by_id

    def __getitem__(self, doc_id: str) -> Document:
        try:
            return self._by_id[doc_id]
        except KeyError:
            raise UnknownDocument(
                f"document {doc_id!r} is not in the {self.label}; "
                f"documents: {_listing(self.ids)}"
                if self._source
                else f"corpus {self._name!r} has no document {doc_id!r}; "
                f"documents: {_listing(self.ids)}"
            ) from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Corpus):
            return NotImplemented
        return self._name == other._name and self._documents == other._documents

    def __hash__(self) -> int:
        return hash((self._name, self.content_hash))

    def __repr__(self) -> str:
        chars = sum(len(d.text) for d in self._documents)
        return f"Corpus({self._name!r}, {len(self)} documents, {chars} chars)"

    @property
    def content_hash(self) -> str:
        """SHA-256 hex over the ``(id, text)`` pairs in order; the name is excluded.

        Each id and text is length-prefixed, so no two corpora share a hash by
        shifting characters between fields.
        """
        if self._hash is None:
            self._hash_texts()
        assert self._hash is not None
        return self._hash

    @property
    def document_hashes(self) -> tuple[str, ...]:
        """SHA-256 hex of each document's text, in order (what the token and
        chunking caches key a document on)."""
        if self._doc_hashes is None:
            self._hash_texts()
        assert self._doc_hashes is not None
        return self._doc_hashes

    def _hash_texts(self) -> None:
        """:attr:`content_hash` and :attr:`document_hashes` in one pass: each
        text encoded once (at 100x the benchmark, 139 MB)."""
        h = hashlib.sha256()
        docs: list[str] = []
        for doc in self._documents:
            ident = doc.id.encode("utf-8", "surrogatepass")
            data = doc.text.encode("utf-8", "surrogatepass")
            for part in (ident, data):
                h.update(f"{len(part)}:".encode("ascii"))
                h.update(part)
            docs.append(hashlib.sha256(data).hexdigest())
        self._hash, self._doc_hashes = h.hexdigest(), tuple(docs)

    def resolve_id(self, name: str) -> str:
        """The id of the document ``name`` designates.

        ``name`` is an exact id, or else uniquely one document's file name
        (``"finance.md"``), stem (``"finance"``) or id without its suffix
        (``"reports/finance"``). The reference ``questions_df.csv`` names
        documents by stem.
        """
        if name in self._by_id:
            return name
        matches = self._name_keys().get(name, [])
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise CorpusError(
                f"{self.label}: {name!r} is ambiguous, it may name any of "
                f"{_listing(matches)}; use the full document id"
            )
        missing = (
            f"document {name!r} is not in the {self.label}"
            if self._source
            else f"corpus {self._name!r} has no document {name!r}"
        )
        raise UnknownDocument(
            f"{missing} (by id, file name or stem); documents: {_listing(self.ids)}"
        )

    def _name_keys(self) -> dict[str, list[str]]:
        if self._keys is None:
            keys: dict[str, list[str]] = {}
            for doc_id in self._by_id:
                p = PurePosixPath(doc_id)
                without_suffix = str(p.with_suffix("")) if p.suffix else doc_id
                for key in dict.fromkeys((p.name, p.stem, without_suffix)):
                    keys.setdefault(key, []).append(doc_id)
            self._keys = keys
        return self._keys

    @classmethod
    def from_mapping(
        cls, mapping: Mapping[str, str], *, name: str = "corpus"
    ) -> Corpus:
        """A corpus of ``{doc_id: text}``, in the mapping's order."""
        return cls((Document(k, v) for k, v in mapping.items()), name=name)

    @classmethod
    def from_paths(
        cls,
        paths: Sequence[str | os.PathLike[str]],
        *,
        root: str | os.PathLike[str] | None = None,
        name: str | None = None,
        suffixes: Collection[str] | None = None,
        source: str | None = None,
    ) -> Corpus:
        """Read files, directories and glob patterns into a corpus sorted by id.

        - a file is read whatever its suffix;
        - a directory is walked recursively, keeping files whose suffix is in
          ``suffixes`` (default :data:`TEXT_SUFFIXES`) and skipping hidden files and
          directories (names starting with ``.``);
        - a path that does not exist but contains ``*``, ``?`` or ``[`` is a glob
          (``**`` recurses); matched files are read whatever their suffix, matched
          directories are walked.

        Ids are POSIX paths relative to ``root``. The default root is the deepest
        directory common to the arguments (a directory argument counts itself, a
        file its parent, a glob the directory before its first wildcard), so ids
        do not depend on where the corpus lives on a machine. A file is listed once
        however many arguments or symlinks reach it (under its shortest id). An
        argument that yields no file, a file that is not UTF-8 text, or a file
        outside ``root`` is a :class:`CorpusError`. ``source``: the paths as the
        user wrote them, which errors name (the corpus's ``name`` is the root's).
        """
        if isinstance(paths, (str, os.PathLike)):
            paths = [paths]
        if not paths:
            raise CorpusError("no corpus paths given")
        keep = (
            TEXT_SUFFIXES
            if suffixes is None
            else frozenset(
                s.lower() if s.startswith(".") else f".{s.lower()}" for s in suffixes
            )
        )
        files: dict[str, Path] = {}
        anchors: list[str] = []
        for arg in paths:
            found, anchor = _expand(arg, keep)
            anchors.append(anchor)
            for f in found:
                files.setdefault(os.path.abspath(f), f)
        base = (
            os.path.abspath(root) if root is not None else os.path.commonpath(anchors)
        )
        # One file is one document, however many paths reach it (a symlink, a glob
        # through a symlink loop): keep the shortest id among them. Ids stay
        # relative to the root as given, never the machine-bound real path.
        chosen: dict[str, tuple[tuple[int, str], str, str]] = {}
        for absolute in files:
            rel = os.path.relpath(absolute, base)
            if rel == os.curdir or rel.split(os.sep)[0] == os.pardir:
                raise CorpusError(f"corpus file {absolute} is not under root {base}")
            doc_id = PurePosixPath(*Path(rel).parts).as_posix()
            rank = (doc_id.count("/"), doc_id)
            real = os.path.realpath(absolute)
            if real not in chosen or rank < chosen[real][0]:
                chosen[real] = (rank, doc_id, absolute)
        docs = [
            Document(doc_id, read_text(absolute), Path(absolute))
            for _, doc_id, absolute in chosen.values()
        ]
        docs.sort(key=lambda d: d.id)
        return cls(docs, name=name or os.path.basename(base) or "corpus", source=source)


def read_text(path: str | os.PathLike[str]) -> str:
    """The exact text of a UTF-8 file; :class:`CorpusError` if binary or not UTF-8."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise CorpusError(f"cannot read corpus file {path}: {exc}") from exc
    if b"\x00" in data:
        raise CorpusError(f"corpus file {path} looks binary (it contains NUL bytes)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(
            f"corpus file {path} is not UTF-8 text (invalid byte at offset "
            f"{exc.start}); convert it to UTF-8 or leave it out of the corpus"
        ) from None


def _expand(
    arg: str | os.PathLike[str], keep: frozenset[str]
) -> tuple[list[Path], str]:
    """Files one ``from_paths`` argument yields, and the directory ids hang from."""
    text = os.fspath(arg)
    path = Path(text)
    if path.is_dir():
        found = _walk(path, keep)
        if not found:
            raise CorpusError(
                f"corpus directory {text} holds no text file "
                f"(suffixes read: {' '.join(sorted(keep))})"
            )
        return found, os.path.abspath(path)
    if path.is_file():
        return [path], os.path.abspath(path.parent)
    if not _GLOB_CHARS.intersection(text):
        raise CorpusError(f"corpus path {text} does not exist")
    found = []
    for match in sorted(glob.glob(text, recursive=True)):
        m = Path(match)
        if m.is_dir():
            found.extend(_walk(m, keep))
        elif m.is_file():
            found.append(m)
    if not found:
        raise CorpusError(f"corpus glob {text} matches no file")
    return found, os.path.abspath(_glob_base(text))


def _walk(directory: Path, keep: frozenset[str]) -> list[Path]:
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(directory):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for fname in sorted(filenames):
            if not fname.startswith(".") and Path(fname).suffix.lower() in keep:
                found.append(Path(dirpath, fname))
    return found


def _glob_base(pattern: str) -> str:
    """The directory part of ``pattern`` before its first wildcard."""
    parts = Path(pattern).parts
    static: list[str] = []
    for part in parts[:-1]:
        if _GLOB_CHARS.intersection(part):
            break
        static.append(part)
    return str(Path(*static)) if static else os.curdir


def _listing(items: Sequence[str], limit: int = 10) -> str:
    shown = ", ".join(repr(i) for i in items[:limit])
    more = len(items) - limit
    return shown + (f" and {more} more" if more > 0 else "") if items else "(none)"
