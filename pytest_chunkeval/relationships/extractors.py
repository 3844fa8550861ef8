"""Relationship extractors: a text in, ``(subject, predicate, object, evidence)`` out.

An extractor is any object with an ``identity`` (a string naming it and everything
that changes its answers: the answer cache is keyed by it) and
``extract(text) -> list of (subject, predicate, object, evidence)``, where evidence
is the verbatim sentence(s) of ``text`` that state the relationship (a string, or a
list of strings for sentences that are not adjacent). A plain function is adapted by
:class:`CallableExtractor`; its answers are cached only when it declares a
``cache_version`` (docs/relationships.md, "Cost and caching"): raise it whenever
the function's answers change. Without one it is computed every time, each
distinct text once per evaluation (:func:`extractor_cache_identity` is None).

Built-in specs (:data:`EXTRACTORS`): ``llm:MODEL`` (any OpenAI-compatible endpoint,
see :mod:`pytest_chunkeval.relationships.llm`) and ``python:MODULE:ATTR`` (a function or
extractor object of an importable module; a function's ``cache_version``
attribute, if any, is its version); the hook
``pytest_chunkeval_register_extractors`` adds names, e.g. a team's own function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from pytest_chunkeval.core.locate import locate, preview
from pytest_chunkeval.errors import DataError
from pytest_chunkeval.relationships.normalize import normalize_name

RawRelationship = tuple[str, str, str, "str | Sequence[str]"]
"""What an extractor returns per relationship: subject, predicate, object, evidence."""


class ExtractionError(DataError):
    """An extractor answered something that is not a list of relationships."""


@runtime_checkable
class Extractor(Protocol):
    """Extracts relationships with their verbatim evidence from one text."""

    @property
    def identity(self) -> str: ...

    def extract(self, text: str) -> Sequence[Any]: ...


@dataclass(frozen=True)
class Extracted:
    """One relationship of one text, its evidence located as spans of that text."""

    subject: str
    predicate: str
    object: str
    evidence: tuple[tuple[int, int], ...]  # (start, end) in the text extracted from

    @property
    def key(self) -> tuple[str, str, str]:
        """Normalized ``(subject, predicate, object)``: equal keys are one
        relationship of the graph."""
        return (
            normalize_name(self.subject),
            normalize_name(self.predicate),
            normalize_name(self.object),
        )

    def to_json(self) -> list[Any]:
        return [
            self.subject,
            self.predicate,
            self.object,
            [list(e) for e in self.evidence],
        ]

    @classmethod
    def from_json(cls, data: Any) -> Extracted:
        """The inverse of :meth:`to_json`; ``ValueError`` for anything else."""
        if not (isinstance(data, list) and len(data) == 4):
            raise ValueError(
                "a relationship must be [subject, predicate, object, spans]"
            )
        s, p, o, spans = data
        if not all(isinstance(x, str) for x in (s, p, o)) or not isinstance(
            spans, list
        ):
            raise ValueError("subject, predicate, object must be strings")
        evidence = []
        for span in spans:
            if not (
                isinstance(span, list)
                and len(span) == 2
                and all(type(x) is int for x in span)
                and 0 <= span[0] < span[1]
            ):
                raise ValueError(f"bad evidence span {span!r}")
            evidence.append((span[0], span[1]))
        if not evidence:
            raise ValueError("a relationship needs evidence")
        return cls(s, p, o, tuple(evidence))


@dataclass(frozen=True)
class TextExtraction:
    """The relationships of one text, and how many were dropped because their
    evidence is not in the text (verbatim, or with whitespace ignored)."""

    relationships: tuple[Extracted, ...]
    not_verbatim: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "relationships": [r.to_json() for r in self.relationships],
            "not_verbatim": self.not_verbatim,
        }

    @classmethod
    def from_json(cls, data: Any, length: int) -> TextExtraction:
        """Read a cached answer for a text of ``length`` characters; ``ValueError``
        when it does not fit (the cache then asks again)."""
        if not isinstance(data, dict):
            raise ValueError("not an object")
        rels, dropped = data.get("relationships"), data.get("not_verbatim")
        if not isinstance(rels, list) or type(dropped) is not int or dropped < 0:
            raise ValueError("missing 'relationships' or 'not_verbatim'")
        out = tuple(Extracted.from_json(r) for r in rels)
        for r in out:
            if any(end > length for _, end in r.evidence):
                raise ValueError("an evidence span lies outside the text")
        return cls(out, dropped)


def _check_name(value: object, what: str, where: str) -> str:
    if not isinstance(value, str):
        raise ExtractionError(
            f"{where}: the {what} must be a string, got {type(value).__name__}"
        )
    if not normalize_name(value):
        raise ExtractionError(
            f"{where}: the {what} {value!r} is empty once normalized (no letter "
            "or digit)"
        )
    return value


def _evidence_pieces(value: object, where: str) -> list[str]:
    if isinstance(value, str):
        pieces = [value]
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        pieces = list(value)
    else:
        raise ExtractionError(
            f"{where}: the evidence must be a string or a list of strings, got "
            f"{type(value).__name__}"
        )
    if not any(p.strip() for p in pieces):
        raise ExtractionError(f"{where}: the evidence is empty")
    return [p for p in pieces if p.strip()]


def locate_relationships(
    text: str, raw: Sequence[Any], *, where: str
) -> TextExtraction:
    """Check an extractor's answer for ``text`` and locate each evidence in it.

    A relationship whose evidence is not found (exactly, then with whitespace
    ignored) is dropped and counted; an answer of the wrong shape or type is an
    :class:`ExtractionError` naming ``where`` (nothing is coerced).
    """
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        raise ExtractionError(
            f"{where}: an extractor must return a list of (subject, predicate, "
            f"object, evidence) tuples, got {type(raw).__name__}"
        )
    found: list[Extracted] = []
    dropped = 0
    for i, item in enumerate(raw):
        at = f"{where}, relationship #{i + 1}"
        if not isinstance(item, (tuple, list)) or len(item) != 4:
            raise ExtractionError(
                f"{at}: expected a (subject, predicate, object, evidence) tuple, got "
                f"{preview(repr(item))}"
            )
        s = _check_name(item[0], "subject", at)
        p = _check_name(item[1], "predicate", at)
        o = _check_name(item[2], "object", at)
        spans: list[tuple[int, int]] = []
        for piece in _evidence_pieces(item[3], at):
            span = locate(text, piece)
            if span is None or span[1] <= span[0]:
                spans = []
                break
            spans.append(span)
        if not spans:
            dropped += 1
            continue
        found.append(Extracted(s, p, o, tuple(sorted(set(spans)))))
    return TextExtraction(tuple(found), dropped)


def _declared(value: object) -> str | None:
    """A declared version: a non-empty string or an integer, as a string."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, str) and value.strip()):
        return str(value)
    return None


class CallableExtractor:
    """A Python function ``extract(text) -> [(subject, predicate, object,
    evidence), ...]`` as an extractor named ``name``.

    Its answers are cached only under a ``cache_version``: the one given
    (``version=`` is its older spelling), else the function's ``cache_version``
    (or ``version``) attribute as it is when used. Without one the function is
    computed every time (:attr:`cache_identity` is None): its name cannot see
    what changed inside it."""

    def __init__(
        self,
        fn: Callable[[str], Sequence[Any]],
        *,
        name: str | None = None,
        cache_version: str | int | None = None,
        version: str | int | None = None,
    ) -> None:
        if not callable(fn):
            raise TypeError(f"an extractor must be callable, got {type(fn).__name__}")
        from pytest_chunkeval.embedders.adapters import callable_identity

        self.fn = fn
        # Default: module, qualified name and, for a lambda or a local function,
        # its line (a name for reports; only a cache_version makes it a key).
        self.name = name or callable_identity(fn).removeprefix("callable:")
        self._cache_version = _declared(cache_version) or _declared(version)

    @property
    def cache_version(self) -> str | None:
        """The version given, else the function's ``cache_version`` or
        ``version`` attribute as it is now; None: computed every time."""
        if self._cache_version is not None:
            return self._cache_version
        for attribute in ("cache_version", "version"):
            found = _declared(getattr(self.fn, attribute, None))
            if found is not None:
                return found
        return None

    @property
    def version(self) -> str | None:
        """The older name of :attr:`cache_version`."""
        return self.cache_version

    @property
    def identity(self) -> str:
        """``callable:NAME@VERSION``, or ``callable:NAME`` without a version."""
        version = self.cache_version
        return f"callable:{self.name}" + ("" if version is None else f"@{version}")

    @property
    def cache_identity(self) -> str | None:
        """What its answers are cached under: its identity when it declares a
        version; None (computed every time) without one."""
        return None if self.cache_version is None else self.identity

    def extract(self, text: str) -> Sequence[Any]:
        return self.fn(text)

    def __repr__(self) -> str:
        return f"CallableExtractor({self.name!r}, cache_version={self.cache_version!r})"


def extractor_cache_identity(extractor: Extractor) -> str | None:
    """What an extractor's answers are cached under, read now: its
    ``cache_identity`` where it has the attribute (None: computed every time, a
    function without a ``cache_version``), else its ``identity`` (an extractor
    object declares it)."""
    if hasattr(extractor, "cache_identity"):
        identity = extractor.cache_identity
        return identity if isinstance(identity, str) and identity else None
    return extractor.identity


def extraction_owner(extractor: Extractor) -> object:
    """The object an extractor computed every time is remembered by within a run:
    the function a :class:`CallableExtractor` wraps (a new wrapper of the same
    function is the same extractor), else the extractor itself."""
    return extractor.fn if isinstance(extractor, CallableExtractor) else extractor
