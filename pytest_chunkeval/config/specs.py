"""The one grammar of spec strings: chunkers, embedders, stores, tokenizers, LLMs.

A spec string names a component and its settings in one token that fits an ini
list, a command-line flag, a marker argument and a test id::

    spec     = name [ ":" arg { ":" arg } | "://" location ] [ "?" options ]
               [ "@" spec ]
    options  = key "=" value { "&" key "=" value }

``recursive:200:0``, ``chroma+http://localhost:8000``, ``llm:gpt-4o-mini?window=1200``,
``cluster:400@openai:text-embedding-3-large``. This module only knows the syntax
(:func:`parse`, :func:`format_spec`); what each name's arguments mean, their
defaults and the canonical form of a spec are the business of its registration
(:mod:`pytest_chunkeval.config.registry`). Stdlib only: the option parsers and the
CLI check the syntax of a spec without importing numpy.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, unquote

from pytest_chunkeval.errors import ConfigError

SPEC_GRAMMAR = """\
Spec strings name a chunker, embedder, store or tokenizer:
  NAME[:ARG[:ARG...]][?KEY=VALUE[&KEY=VALUE...]][@SPEC]
  NAME://HOST:PORT                     a URL location (chroma+http://localhost:8000)
ARGs are positional (recursive:SIZE[:OVERLAP] -> recursive:200:0); ?options are
named (llm:gpt-4o-mini?window=1200); @SPEC is the embedder a chunker uses
(cluster:400@openai:text-embedding-3-large), or the dense store of a hybrid store
when that store has options of its own (hybrid@faiss?index=flat).
Write %XX for a literal ? & @ or %.
Equivalent specs are one component: recursive:200 = recursive:200:0 and
cl100k_base = tiktoken:cl100k_base share one label, test id and baseline file.
Forms: chunkers fixed:SIZE[:OVERLAP], recursive:SIZE[:OVERLAP], sentence:SIZE,
cluster:MAX_TOKENS[:MIN_TOKENS][@EMBEDDER], kamradt[:PERCENTILE][@EMBEDDER],
kamradt-modified:SIZE[:max|mean][@EMBEDDER], llm:MODEL[?window=N&attempts=N];
embedders sentence-transformers:MODEL, openai:MODEL, hashing[:DIM]; stores exact,
chroma, chroma:PATH, chroma+http://HOST:PORT, chroma+https://HOST:PORT, bm25,
hybrid[:DENSE_STORE][?n=50&rrf=60&weights=1,1&BM25 options] or
hybrid[?...]@DENSE_STORE?ITS_OPTIONS (not both), faiss[?index=hnsw|flat|ivf&...],
pgvector[?index=...], lancedb[?index=...], qdrant[?index=...],
qdrant+http://HOST:PORT, qdrant+https://HOST:PORT; tokenizers cl100k_base (any
tiktoken encoding), tiktoken:ENCODING, hf:MODEL."""
"""The grammar in a few lines: ``--help`` epilogs and error messages use it."""

EXAMPLES = {
    "chunker": "recursive:200:0",
    "embedder": "sentence-transformers:all-MiniLM-L6-v2",
    "store": "exact",
    "tokenizer": "cl100k_base",
}
"""One spec of each kind, for error messages."""

NAME_PATTERN = r"[A-Za-z][A-Za-z0-9_.+-]*"
_NAME = re.compile(NAME_PATTERN)
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
# Characters with a meaning in the grammar, written %XX inside an argument or value.
_RESERVED = "%?&@"
_SAFE = "".join(chr(c) for c in range(33, 127) if chr(c) not in _RESERVED)


class SpecError(ConfigError):
    """A spec string that does not follow the grammar, or names nothing known."""


@dataclass(frozen=True)
class Spec:
    """A parsed spec string: ``name:args...?options@inner``.

    ``args`` are the positional arguments as written (``("200", "0")``); a URL
    location is one argument starting with ``//``. ``options`` are ``(key, value)``
    pairs in the order written (canonical specs sort them). ``inner`` is the spec
    after ``@`` (the embedder of a semantic chunker).
    """

    name: str
    args: tuple[str, ...] = ()
    options: tuple[tuple[str, str], ...] = ()
    inner: Spec | None = None

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise SpecError(f"bad spec name {self.name!r}: expected {NAME_PATTERN}")
        for arg in self.args:
            if not arg or any(c.isspace() for c in arg):
                raise SpecError(f"bad argument {arg!r} in spec {self.name!r}")
            if ":" in arg and not (arg.startswith("//") and len(self.args) == 1):
                raise SpecError(
                    f"argument {arg!r} of {self.name!r} contains ':' (the separator)"
                )
        keys = [key for key, _ in self.options]
        for key, value in self.options:
            if not _KEY.fullmatch(key) or any(c.isspace() for c in value):
                raise SpecError(f"bad option {key}={value!r} in spec {self.name!r}")
        if len(set(keys)) != len(keys):
            raise SpecError(f"an option is given twice in spec {self.name!r}")

    @property
    def text(self) -> str:
        """The spec printed in the grammar (:func:`format_spec`)."""
        return format_spec(self)

    def __str__(self) -> str:
        return format_spec(self)

    def option(self, key: str) -> str | None:
        """The value of option ``key``, or None."""
        return dict(self.options).get(key)


def _decode(text: str) -> str:
    if "%" not in text:
        return text
    try:
        return unquote(text, errors="strict")
    except UnicodeDecodeError:
        raise SpecError(f"{text!r} has a %-escape that is not UTF-8") from None


def _encode(text: str) -> str:
    return quote(text, safe=_SAFE)


def parse(text: str, kind: str = "component") -> Spec:
    """Parse a spec string; :class:`SpecError` names the spec and the grammar.

    ``kind`` (``"chunker"``, ``"embedder"``...) only words the error message.
    """
    if not isinstance(text, str):
        raise SpecError(f"a {kind} spec must be a string, got {type(text).__name__}")
    try:
        return _parse(text.strip())
    except SpecError as exc:
        example = EXAMPLES.get(kind, "recursive:200:0")
        raise SpecError(
            f"{kind} spec {text!r} is not valid: {exc}; expected "
            f"NAME[:ARG...][?KEY=VALUE&...][@SPEC], e.g. {example}"
        ) from None


def _parse(text: str) -> Spec:
    if not text:
        raise SpecError("empty spec")
    head, at, rest = text.partition("@")
    inner = None
    if at:
        if not rest.strip():
            raise SpecError("nothing after '@' (expected a spec, e.g. an embedder)")
        inner = _parse(rest.strip())
    main, question, query = head.strip().partition("?")
    match = _NAME.match(main)
    if match is None:
        raise SpecError(
            "a spec starts with a name (a letter, then letters, digits, _.+-)"
        )
    name, tail = match.group(), main[match.end() :].strip()
    args: tuple[str, ...] = ()
    if tail:
        if not tail.startswith(":"):
            if main[match.end()].isspace():
                _part(main)  # the error says: a space
            raise SpecError(f"unexpected {tail[0]!r} after the name {name!r}")
        body = tail[1:].strip()
        if body.startswith("//"):
            if len(body) == 2:
                raise SpecError("empty location after '//'")
            args = (_part(body),)
        else:
            parts = [p.strip() for p in body.split(":")]
            if any(not p for p in parts):
                raise SpecError("empty argument (two ':' in a row, or a trailing ':')")
            args = tuple(_decode(_part(p)) for p in parts)
    options: list[tuple[str, str]] = []
    if question:
        if not query.strip():
            raise SpecError("nothing after '?' (expected KEY=VALUE)")
        for item in query.split("&"):
            key, eq, value = (p.strip() for p in item.partition("="))
            if not eq or not _KEY.fullmatch(key):
                raise SpecError(f"option {item.strip()!r} is not KEY=VALUE")
            if any(k == key for k, _ in options):
                raise SpecError(f"option {key!r} is given twice")
            options.append((key, _decode(_part(value))))
    return Spec(name, args, tuple(options), inner)


def _part(text: str) -> str:
    # Whitespace around separators is ignored; inside a part it would be split
    # apart by ini lists (``chunkeval_chunkers``), so it must be written %20.
    if any(c.isspace() for c in text):
        raise SpecError(f"{text!r} contains a space (write %20)")
    return text


def format_spec(spec: Spec) -> str:
    """Print a :class:`Spec` in the grammar; ``parse(format_spec(s)) == s``."""
    out = spec.name
    if spec.args:
        if spec.args[0].startswith("//"):
            out += ":" + spec.args[0]
        else:
            out += ":" + ":".join(_encode(a) for a in spec.args)
    if spec.options:
        out += "?" + "&".join(f"{k}={_encode(v)}" for k, v in spec.options)
    if spec.inner is not None:
        out += "@" + format_spec(spec.inner)
    return out


def check_syntax(text: str, kind: str = "component") -> str:
    """``text`` stripped, if it is a spec string (names are checked later)."""
    parse(text, kind)
    return text.strip()


def spec_argument(kind: str) -> Callable[[str], str]:
    """An argparse ``type=`` that checks the syntax of a ``kind`` spec."""

    def check(text: str) -> str:
        return check_syntax(text, kind)

    check.__name__ = f"{kind} spec"  # argparse names the type in its messages
    return check
