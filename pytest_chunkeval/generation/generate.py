"""Generate a query set for a corpus with any OpenAI-compatible chat model.

The method is the one of Chroma's report (see ``prompts.py``): each attempt shows the
model a random ~4000-character window of one document plus up to 50 earlier
questions about that document, and asks for a JSON answer with one question and the
sentences of the window that answer it. An answer is accepted only if every
reference is found in the document, exactly or up to whitespace (optionally: by a
fuzzy match above a high threshold, marked ``approximate``); its spans are stored.

Robustness:

- each accepted query is appended to the JSONL output at once (flushed and fsynced),
  so a crash or Ctrl-C loses nothing;
- running the same command again resumes: the header must match (corpus hash,
  model, prompt version, settings), the attempt counter continues, and with the
  same seed the windows are the same ones an uninterrupted run would have used
  (attempt ``k`` draws from an RNG seeded by ``(seed, k)``);
- malformed answers, refusals, non-verbatim references and duplicates are counted
  and skipped; 429 / 5xx are retried by the ``openai`` client with backoff; the API
  key is only handed to the client, never stored or printed.

See ``docs/generate.md``.
"""

from __future__ import annotations

import json
import os
import random
import re
import secrets
import warnings
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path, PurePosixPath
from typing import Any

from pytest_chunkeval.core.locate import find_normalized, preview
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import (
    Excerpt,
    Query,
    append_query,
    read_queries,
    stable_query_id,
    write_header,
)
from pytest_chunkeval.generation.prompts import PROMPT_VERSION, build_messages
from pytest_chunkeval.llm.client import DEFAULT_BASE_URL
from pytest_chunkeval.llm.client import openai_client as _openai_client
from pytest_chunkeval.util.progress import progress_bar

DEFAULT_WINDOW_CHARS = 4000
DEFAULT_MAX_PREVIOUS = 50
DEFAULT_MAX_REFERENCES = 5
DEFAULT_MAX_RETRIES = 5
DEFAULT_TIMEOUT = 120.0
ATTEMPTS_PER_QUERY = 5
"""Default attempt cap: this many attempts per query still missing."""
MAX_CONSECUTIVE_API_ERRORS = 3
"""Give up after this many requests in a row failed even after the client's retries."""
DEFAULT_MAX_UNUSABLE = 5
"""Give up after this many answers in a row that cannot be read at all (not JSON,
no question): a model or endpoint that answers garbage, not a bad window."""

# USD per 1M tokens (input, output), OpenAI list prices for standard requests
# (checked 2025-08). Models are matched by the longest prefix, so dated snapshots
# ("gpt-4o-2024-08-06") get their family's price. An estimate, not an invoice.
PRICES_PER_1M: dict[str, tuple[float, float]] = {
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "o1": (15.00, 60.00),
    "o1-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
}

# Rejection reasons, in the order the summary lists them.
MALFORMED = "malformed"
REFUSED = "refused"
NOT_VERBATIM = "not verbatim"
TOO_MANY_REFERENCES = "too many references"
COMPOUND = "compound question"
DUPLICATE = "duplicate"
API_ERROR = "api error"
REASONS = (
    NOT_VERBATIM,
    MALFORMED,
    REFUSED,
    DUPLICATE,
    COMPOUND,
    TOO_MANY_REFERENCES,
    API_ERROR,
)

# Settings that change what an accepted query looks like: a resumed run must use
# the same ones, or one file would mix two generations.
RESUME_KEYS = (
    "corpus_hash",
    "model",
    "prompt_version",
    "window_chars",
    "max_references",
    "approximate",
)
GENERATOR_NAME = "chunkeval generate"


class GenerationError(RuntimeError):
    """Generation cannot start or go on (bad settings, a file from another run,
    a server that keeps failing)."""


class ResumeMismatch(GenerationError):
    """The output file was generated with other settings than this run's."""


# ------------------------------------------------------------------------ pricing


def price_for(model: str) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens for a known model, else None."""
    name = model.rsplit("/", 1)[-1].lower()  # "openai/gpt-4o" on gateways
    best = ""
    for known in PRICES_PER_1M:
        if (name == known or name.startswith(known + "-")) and len(known) > len(best):
            best = known
    return PRICES_PER_1M[best] if best else None


def parse_price(text: str) -> tuple[float, float]:
    """``--price-per-1k``: ``P`` (input and output) or ``IN,OUT``, USD per 1k tokens,
    returned per 1M tokens."""
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [float(p) for p in parts]
    except ValueError:
        values = []
    if len(values) not in (1, 2) or any(not v >= 0 for v in values):
        raise ValueError(
            f"price {text!r}: expected USD per 1000 tokens as P or IN,OUT "
            "(e.g. 0.00015,0.0006), each >= 0"
        )
    inp, out = values if len(values) == 2 else (values[0], values[0])
    return inp * 1000, out * 1000


def estimate_cost(
    model: str,
    prompt_tokens: int,
    completion_tokens: int,
    price: tuple[float, float] | None = None,
) -> float | None:
    """USD for the tokens at ``price`` (per 1M) or the table's; None if unknown."""
    per_1m = price if price is not None else price_for(model)
    if per_1m is None:
        return None
    return (prompt_tokens * per_1m[0] + completion_tokens * per_1m[1]) / 1e6


# ------------------------------------------------------------------------ windows


@dataclass(frozen=True)
class Window:
    """The part of a document shown to the model: ``text[start:end]``."""

    doc_id: str
    start: int
    end: int


_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s")


def attempt_rng(seed: int, attempt: int) -> random.Random:
    """The RNG of one attempt: a function of (seed, attempt) only, so a resumed run
    continues the sequence an uninterrupted one would have drawn."""
    return random.Random(f"chunkeval-generate:{seed}:{attempt}")


def choose_window(
    rng: random.Random, corpus: Corpus, size: int = DEFAULT_WINDOW_CHARS
) -> Window:
    """A random window of about ``size`` characters.

    The document is drawn with probability proportional to its length (every
    character is equally likely to be shown); the window starts and ends at a line,
    sentence or word boundary when one is near.
    """
    docs = [d for d in corpus if d.text.strip()]
    if not docs:
        raise GenerationError(f"corpus {corpus.name!r} has no text to ask about")
    doc = rng.choices(docs, weights=[len(d.text) for d in docs])[0]
    text = doc.text
    if len(text) <= size:
        return Window(doc.id, 0, len(text))
    start = _snap_start(text, rng.randrange(len(text) - size + 1))
    end = _snap_end(text, min(len(text), start + size), start + size // 2)
    return Window(doc.id, start, end)


def _snap_start(text: str, pos: int, reach: int = 300) -> int:
    """``pos`` moved back to a line start, else a sentence start, else a word."""
    if pos <= 0:
        return 0
    lo = max(0, pos - reach)
    i = text.rfind("\n", lo, pos)
    if i >= 0:
        return i + 1
    ends = list(_SENTENCE_END.finditer(text, lo, pos))
    if ends:
        return ends[-1].end()
    i = max(text.rfind(" ", lo, pos), text.rfind("\t", lo, pos))
    return i + 1 if i >= 0 else pos


def _snap_end(text: str, pos: int, floor: int, reach: int = 300) -> int:
    """``pos`` moved back to a line end, else a sentence end, else a word end."""
    if pos >= len(text):
        return len(text)
    lo = max(floor, pos - reach)
    i = text.rfind("\n", lo, pos)
    if i >= 0:
        return i
    ends = list(_SENTENCE_END.finditer(text, lo, pos))
    if ends:
        return ends[-1].end() - 1  # keep the punctuation, drop the space
    i = text.rfind(" ", lo, pos)
    return i if i >= 0 else pos


# ------------------------------------------------------------- answers and excerpts


@dataclass(frozen=True)
class Rejection:
    """Why an answer was not accepted (one of :data:`REASONS`) and a detail."""

    reason: str
    detail: str


@dataclass(frozen=True)
class Candidate:
    """A validated answer: the question and its located excerpts."""

    question: str
    excerpts: tuple[Excerpt, ...]
    approximate: tuple[dict[str, Any], ...] = ()  # what the model wrote, for audit


_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```[A-Za-z]*\s*\n(.*?)\n?```$", re.DOTALL)
_REFUSAL = re.compile(
    r"^\W*(i'?m sorry|i am sorry|sorry|i can(?:no|')t|i am unable|i'?m unable|"
    r"i won'?t|i will not|as an ai)\b",
    re.IGNORECASE,
)


def extract_json(content: str) -> Any:
    """The JSON value in a model's answer: bare, in a ``` fence, or the outermost
    ``{...}`` of a chatty answer. ValueError if there is none."""
    text = _THINK.sub("", content).strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except ValueError:
        pass
    i, j = text.find("{"), text.rfind("}")
    if 0 <= i < j:
        return json.loads(text[i : j + 1])
    raise ValueError("no JSON object in the answer")


def parse_answer(
    content: str, max_references: int = DEFAULT_MAX_REFERENCES
) -> tuple[str, list[str]] | Rejection:
    """(question, references) from a model's answer, or why it is unusable."""
    try:
        obj = extract_json(content)
    except ValueError:
        if _REFUSAL.match(content.strip()):
            return Rejection(REFUSED, preview(content))
        return Rejection(MALFORMED, f"not JSON: {preview(content)}")
    if not isinstance(obj, dict):
        return Rejection(MALFORMED, f"JSON {type(obj).__name__}, not an object")
    question = obj.get("question")
    if "skip" in obj and not question:
        return Rejection(REFUSED, f"skipped: {preview(str(obj['skip']))}")
    if not isinstance(question, str) or not question.strip():
        return Rejection(MALFORMED, "no 'question' string")
    raw = obj.get("references")
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not raw:
        return Rejection(MALFORMED, "no 'references' list")
    refs: list[str] = []
    for item in raw:
        if isinstance(item, dict):  # {"content": ...} as in the reference CSV
            item = item.get("content", item.get("text"))
        if not isinstance(item, str) or not item.strip():
            return Rejection(MALFORMED, "a reference is not a non-empty string")
        refs.append(item.strip())
    if len(refs) > max_references:
        return Rejection(
            TOO_MANY_REFERENCES, f"{len(refs)} references, at most {max_references}"
        )
    question = " ".join(question.split())
    if question.count("?") > 1:
        return Rejection(COMPOUND, preview(question))
    return question, refs


def place_reference(
    text: str, reference: str, window: Window
) -> tuple[int, int] | None:
    """Span of ``reference`` in the document ``text``: exact (in the window first,
    then anywhere), else whitespace-insensitive (window first)."""
    i = text.find(reference, window.start, window.end)
    if i >= 0:
        return i, i + len(reference)
    nearest = _nearest_exact(text, reference, window.start)
    if nearest is not None:
        return nearest, nearest + len(reference)
    found = find_normalized(text, reference, window.start)
    if found is not None and found[1] <= window.end:
        return found
    return find_normalized(text, reference)


def _nearest_exact(text: str, needle: str, pos: int) -> int | None:
    before = text.rfind(needle, 0, pos + len(needle))
    after = text.find(needle, pos)
    candidates = [i for i in (before, after) if i >= 0]
    return min(candidates, key=lambda i: abs(i - pos)) if candidates else None


_WORD = re.compile(r"\S+")
_EDGE_REFINE_MAX_CHARS = 600
_EDGE_PUNCT = re.compile(r"^\W+|\W+$")


def _word_key(word: str) -> str:
    folded = word.casefold()
    return _EDGE_PUNCT.sub("", folded) or folded


def fuzzy_find(
    text: str, needle: str, start: int, end: int, threshold: float
) -> tuple[int, int, float] | None:
    """The word-aligned span of ``text[start:end]`` most similar to ``needle``.

    Similarity is difflib's ratio of the two strings, casefolded with whitespace
    collapsed; the best match is returned when it reaches ``threshold``. Fast on a
    window: matching words vote for an alignment, the span's ends are then adjusted
    word by word on the few best alignments, and only their final candidates are
    compared character by character.
    """
    spans = [m.span() for m in _WORD.finditer(text, start, end)]
    words = needle.split()
    if not spans or not words:
        return None
    keys = [_word_key(text[s:e]) for s, e in spans]
    needle_keys = [_word_key(w) for w in words]
    where: dict[str, list[int]] = {}
    for j, key in enumerate(needle_keys):
        where.setdefault(key, []).append(j)
    votes: Counter[int] = Counter()
    for i, key in enumerate(keys):
        for j in where.get(key, ()):
            votes[i - j] += 1
    if not votes:
        return None
    k = len(words)
    slack = min(10, max(2, k // 5))
    smoothed = {
        o: sum(votes.get(o + d, 0) for d in range(-slack, slack + 1)) for o in votes
    }
    offsets = sorted(smoothed, key=lambda o: (-smoothed[o], o))[:3]

    word_matcher = SequenceMatcher(None, autojunk=False)
    word_matcher.set_seq2(needle_keys)

    def word_ratio(i: int, j: int) -> float:
        word_matcher.set_seq1(keys[i:j])
        return word_matcher.ratio()

    target = " ".join(words).casefold()
    char_matcher = SequenceMatcher(None, autojunk=False)
    char_matcher.set_seq2(target)

    def char_ratio(i: int, j: int) -> float:
        char_matcher.set_seq1(" ".join(text[s:e] for s, e in spans[i:j]).casefold())
        return char_matcher.ratio()

    best: tuple[int, int, float] | None = None
    n = len(spans)
    for o in offsets:
        i = min(max(0, o), n - 1)
        j = min(n, max(i + 1, o + k))
        # Each end moves to where the word-level similarity is highest.
        i = max(
            range(max(0, i - slack), min(j, i + slack + 1)),
            key=lambda s: (word_ratio(s, j), -abs(s - i)),
        )
        j = max(
            range(max(i + 1, j - slack), min(n, j + slack) + 1),
            key=lambda e: (word_ratio(i, e), -abs(e - j)),
        )
        if len(target) <= _EDGE_REFINE_MAX_CHARS:
            # A misspelt first or last word counts as a miss at the word level;
            # the characters decide whether it belongs to the span. (Skipped for
            # long references, where a char-level ratio is slow and one edge word
            # matters little.)
            i = max(
                range(max(0, i - 2), min(j, i + 3)),
                key=lambda s: (char_ratio(s, j), -abs(s - i)),
            )
            j = max(
                range(max(i + 1, j - 2), min(n, j + 2) + 1),
                key=lambda e: (char_ratio(i, e), -abs(e - j)),
            )
        char_matcher.set_seq1(" ".join(text[s:e] for s, e in spans[i:j]).casefold())
        if char_matcher.real_quick_ratio() < threshold:
            continue
        if char_matcher.quick_ratio() < threshold:
            continue
        ratio = char_matcher.ratio()
        if best is None or ratio > best[2]:
            best = (spans[i][0], spans[j - 1][1], ratio)
    return best if best is not None and best[2] >= threshold else None


def validate_answer(
    content: str,
    corpus: Corpus,
    window: Window,
    *,
    max_references: int = DEFAULT_MAX_REFERENCES,
    approximate: float | None = None,
) -> Candidate | Rejection:
    """Check one answer: JSON shape, then every reference against the document.

    A reference not found exactly or up to whitespace rejects the whole question,
    unless ``approximate`` (a similarity in (0, 1]) is set and a fuzzy match inside
    the window reaches it; such an excerpt holds the document's text and is marked
    approximate.
    """
    parsed = parse_answer(content, max_references)
    if isinstance(parsed, Rejection):
        return parsed
    question, refs = parsed
    text = corpus[window.doc_id].text
    excerpts: list[Excerpt] = []
    audit: list[dict[str, Any]] = []
    seen: set[tuple[int, int]] = set()
    for n, ref in enumerate(refs, 1):
        found = place_reference(text, ref, window)
        is_approximate = False
        if found is None and approximate is not None:
            fuzzy = fuzzy_find(text, ref, window.start, window.end, approximate)
            if fuzzy is not None:
                found, is_approximate = fuzzy[:2], True
                audit.append(
                    {"excerpt": n, "model_text": ref, "similarity": round(fuzzy[2], 4)}
                )
        if found is None:
            return Rejection(
                NOT_VERBATIM,
                f"reference {n} {preview(ref)} is not in document {window.doc_id!r}",
            )
        if found in seen:
            continue
        seen.add(found)
        s, e = found
        excerpts.append(Excerpt(text[s:e], window.doc_id, s, e, is_approximate))
    return Candidate(question, tuple(excerpts), tuple(audit))


def question_key(question: str) -> str:
    """What makes two questions the same one: case, spacing, end punctuation."""
    return " ".join(question.casefold().split()).rstrip(" ?.!")


# -------------------------------------------------------------------- chat client


def openai_client(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: float = DEFAULT_TIMEOUT,
) -> Any:
    """An ``openai.OpenAI`` client for chat completions (see :mod:`.openai_api`)."""
    return _openai_client(
        who="query generation",
        api_key=api_key,
        base_url=base_url,
        max_retries=max_retries,
        timeout=timeout,
        error=GenerationError,
    )


@dataclass(frozen=True)
class ChatReply:
    """What one chat request produced: text or a rejection, and tokens used."""

    content: str | None
    rejection: Rejection | None
    prompt_tokens: int = 0
    completion_tokens: int = 0


def _client_url(client: Any) -> str:
    return str(getattr(client, "base_url", "") or DEFAULT_BASE_URL).rstrip("/")


def request_chat(
    client: Any,
    model: str,
    messages: list[dict[str, str]],
    *,
    temperature: float | None = None,
    json_mode: bool = False,
) -> ChatReply:
    """One chat completion. Failures the run can survive (429/5xx after the client's
    retries, timeouts, malformed bodies, refusals) come back as a rejection;
    authentication, permission and unknown-model errors raise GenerationError."""
    import openai

    kwargs: dict[str, Any] = {"model": model, "messages": messages}
    if temperature is not None:
        kwargs["temperature"] = temperature
    if json_mode:
        kwargs["response_format"] = {"type": "json_object"}
    where = f"{_client_url(client)}/chat/completions"
    try:
        response = client.chat.completions.create(**kwargs)
    except (
        openai.AuthenticationError,
        openai.PermissionDeniedError,
        openai.NotFoundError,
    ) as exc:
        raise GenerationError(
            f"{where} answered HTTP {exc.status_code} for model {model!r}: "
            f"{exc.message}"
        ) from None
    except openai.APIStatusError as exc:
        return ChatReply(
            None,
            Rejection(API_ERROR, f"{where}: HTTP {exc.status_code}: {exc.message}"),
        )
    except openai.APIError as exc:  # connection errors, timeouts
        return ChatReply(
            None, Rejection(API_ERROR, f"{where}: {type(exc).__name__}: {exc}")
        )
    except ValueError as exc:  # a body that is not JSON
        return ChatReply(
            None, Rejection(MALFORMED, f"{where}: malformed response body ({exc})")
        )
    usage = getattr(response, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)

    def reply(content: str | None, rejection: Rejection | None = None) -> ChatReply:
        return ChatReply(content, rejection, prompt_tokens, completion_tokens)

    choices = getattr(response, "choices", None)
    if not choices:
        return reply(None, Rejection(MALFORMED, f"{where}: response without choices"))
    choice = choices[0]
    message = getattr(choice, "message", None)
    refusal = getattr(message, "refusal", None)
    finish = getattr(choice, "finish_reason", None)
    content = getattr(message, "content", None)
    if refusal:
        return reply(None, Rejection(REFUSED, preview(str(refusal))))
    if finish == "content_filter":
        return reply(None, Rejection(REFUSED, "stopped by the content filter"))
    if not isinstance(content, str) or not content.strip():
        return reply(None, Rejection(MALFORMED, "empty answer"))
    if finish == "length":
        return reply(None, Rejection(MALFORMED, "answer cut off (max tokens)"))
    return reply(content)


# ---------------------------------------------------------------------- generator


@dataclass
class GenerationStats:
    """Counts of one run (``existing`` came from an earlier run of the same file)."""

    target: int
    existing: int = 0
    accepted: int = 0
    attempts: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    approximate_excerpts: int = 0
    stopped: str = "not started"

    @property
    def total(self) -> int:
        """Queries in the file now."""
        return self.existing + self.accepted

    @property
    def complete(self) -> bool:
        return self.total >= self.target


@dataclass(frozen=True)
class GenerationSettings:
    """What a generation run does; the header records the settings it depends on."""

    model: str
    n: int
    seed: int | None = None
    window_chars: int = DEFAULT_WINDOW_CHARS
    max_previous: int = DEFAULT_MAX_PREVIOUS
    max_references: int = DEFAULT_MAX_REFERENCES
    max_attempts: int | None = None
    max_unusable: int = DEFAULT_MAX_UNUSABLE
    approximate: float | None = None
    temperature: float | None = None
    json_mode: bool = False

    def __post_init__(self) -> None:
        if not self.model.strip():
            raise ValueError("model name is empty")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if self.window_chars < 200:
            raise ValueError(f"window_chars must be >= 200, got {self.window_chars}")
        if self.max_previous < 0 or self.max_references < 1:
            raise ValueError("max_previous must be >= 0 and max_references >= 1")
        if self.max_attempts is not None and self.max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {self.max_attempts}")
        if self.max_unusable < 1:
            raise ValueError(f"max_unusable must be >= 1, got {self.max_unusable}")
        if self.approximate is not None and not 0 < self.approximate <= 1:
            raise ValueError(
                f"approximate must be a similarity in (0, 1], got {self.approximate}"
            )
        if self.seed is not None and self.seed < 0:
            raise ValueError(f"seed must be >= 0, got {self.seed}")


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return version("pytest-chunkeval")
    except Exception:  # not installed (a source checkout)
        return "unknown"


class QueryGenerator:
    """Fill a JSONL query set up to ``settings.n`` queries; see the module docstring.

    ``client`` is an ``openai.OpenAI`` (or compatible) object; ``echo`` receives
    one-line notes (resuming, skipped lines, why a run stopped). :attr:`stats` is
    live, so a caller can report it even if :meth:`run` is interrupted.
    """

    def __init__(
        self,
        corpus: Corpus,
        out: str | os.PathLike[str],
        settings: GenerationSettings,
        *,
        client: Any,
        overwrite: bool = False,
        progress: bool | None = None,
        echo: Callable[[str], None] | None = None,
    ) -> None:
        self.corpus = corpus
        self.out = Path(out)
        self.settings = settings
        self.client = client
        self.overwrite = overwrite
        self.progress = progress
        self.echo = echo or (lambda message: None)
        self.stats = GenerationStats(target=settings.n)
        self.seed: int | None = settings.seed
        self.last_rejection: Rejection | None = None

    def header(self, seed: int) -> dict[str, Any]:
        """The metadata written in the output's header line."""
        s = self.settings
        return {
            "generator": GENERATOR_NAME,
            "generator_version": _package_version(),
            "model": s.model,
            "prompt_version": PROMPT_VERSION,
            "seed": seed,
            "corpus_hash": self.corpus.content_hash,
            "corpus_name": self.corpus.name,
            "documents": len(self.corpus),
            "window_chars": s.window_chars,
            "max_previous": s.max_previous,
            "max_references": s.max_references,
            "approximate": s.approximate,
            "temperature": s.temperature,
        }

    def _check_resume(self, metadata: Mapping[str, Any]) -> int:
        """The seed to continue with, after checking the file fits this run."""
        if metadata.get("generator") != GENERATOR_NAME:
            raise ResumeMismatch(
                f"{self.out} exists but was not written by {GENERATOR_NAME}; give "
                "another --out, or --overwrite to replace it"
            )
        expected = self.header(0)
        diffs = [
            f"{key}: file has {metadata.get(key)!r}, this run {expected[key]!r}"
            for key in RESUME_KEYS
            if metadata.get(key) != expected[key]
        ]
        seed = metadata.get("seed")
        if not isinstance(seed, int) or isinstance(seed, bool):
            diffs.append(f"seed: file has {seed!r}, expected an integer")
        elif self.settings.seed is not None and seed != self.settings.seed:
            diffs.append(f"seed: file has {seed!r}, this run {self.settings.seed!r}")
        if diffs:
            hint = (
                "the corpus changed since the file was generated; "
                if any(d.startswith("corpus_hash") for d in diffs)
                else ""
            )
            raise ResumeMismatch(
                f"cannot resume {self.out}: it was generated with other settings "
                f"({'; '.join(diffs)}). {hint}Re-run with the file's settings, or "
                "write to another --out (or pass --overwrite to start again)"
            )
        return int(seed)  # type: ignore[arg-type]  # checked above

    def _open(self) -> list[Query]:
        """Existing queries of a resumed file ([] for a new one)."""
        if self.out.exists() and not self.overwrite:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                existing = read_queries(self.out)
            for w in caught:
                self.echo(f"note: {w.message}")
            self.seed = self._check_resume(existing.metadata)
            return list(existing)
        self.seed = (
            self.settings.seed if self.settings.seed is not None else _fresh_seed()
        )
        write_header(self.out, self.header(self.seed), overwrite=self.overwrite)
        return []

    def run(self) -> GenerationStats:
        """Generate until the file holds ``n`` queries or the attempt cap is hit."""
        s = self.settings
        existing = self._open()
        assert self.seed is not None
        stats = self.stats
        stats.existing = len(existing)
        ids = {q.id for q in existing}
        keys = {question_key(q.text) for q in existing}
        by_doc: dict[str, list[str]] = {}
        for q in existing:
            by_doc.setdefault(q.doc_id, []).append(q.text)
        attempt = 1 + max(
            (a for q in existing if isinstance(a := q.metadata.get("attempt"), int)),
            default=-1,
        )
        remaining = s.n - stats.existing
        if remaining <= 0:
            stats.stopped = "complete"
            self.echo(f"{self.out} already holds {stats.existing} queries (>= {s.n})")
            return stats
        if existing:
            self.echo(
                f"resuming {self.out}: {stats.existing} of {s.n} queries present, "
                f"continuing at attempt {attempt} (seed {self.seed})"
            )
        cap = s.max_attempts or ATTEMPTS_PER_QUERY * remaining
        bar = _progress_bar(s.n, stats.existing, self.progress)
        consecutive_errors = 0
        consecutive_unusable = 0
        stats.stopped = "interrupted"
        try:
            while not stats.complete:
                if stats.attempts >= cap:
                    stats.stopped = "max attempts"
                    self.echo(
                        f"stopped after {stats.attempts} attempts (the cap; raise it "
                        "with --max-attempts) with "
                        f"{stats.total} of {s.n} queries"
                    )
                    break
                result = self._attempt(attempt, by_doc, keys)
                attempt += 1
                stats.attempts += 1
                if isinstance(result, Rejection):
                    stats.rejected[result.reason] += 1
                    self.last_rejection = result
                    if result.reason == API_ERROR:
                        consecutive_errors += 1
                        if consecutive_errors >= MAX_CONSECUTIVE_API_ERRORS:
                            stats.stopped = "api errors"
                            raise GenerationError(
                                f"{consecutive_errors} requests in a row failed "
                                f"after retries; last: {result.detail}"
                            )
                    else:
                        consecutive_errors = 0
                    if result.reason == MALFORMED:
                        consecutive_unusable += 1
                        if consecutive_unusable >= s.max_unusable:
                            stats.stopped = "unusable answers"
                            raise GenerationError(
                                f"{consecutive_unusable} answers in a row from model "
                                f"{s.model!r} could not be read (last: "
                                f"{result.detail}); is it the right model, and a "
                                "chat endpoint? Stopped with "
                                f"{stats.total} of {s.n} queries kept (the limit is "
                                "--max-unusable)"
                            )
                    else:
                        consecutive_unusable = 0
                else:
                    consecutive_errors = 0
                    consecutive_unusable = 0
                    query = self._to_query(result, ids, attempt - 1)
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        append_query(self.out, query)
                    for w in caught:
                        self.echo(f"note: {w.message}")
                    ids.add(query.id)
                    keys.add(question_key(query.text))
                    by_doc.setdefault(query.doc_id, []).append(query.text)
                    stats.accepted += 1
                    stats.approximate_excerpts += sum(
                        e.approximate for e in query.excerpts
                    )
                    if bar is not None:
                        bar.update(1)
                if bar is not None:
                    bar.set_postfix_str(
                        f"attempted {stats.attempts}, rejected "
                        f"{sum(stats.rejected.values())}",
                        refresh=False,
                    )
            else:
                stats.stopped = "complete"
        finally:
            if bar is not None:
                bar.close()
        return stats

    def _attempt(
        self, attempt: int, by_doc: Mapping[str, list[str]], keys: set[str]
    ) -> _Accepted | Rejection:
        s = self.settings
        assert self.seed is not None
        rng = attempt_rng(self.seed, attempt)
        window = choose_window(rng, self.corpus, s.window_chars)
        previous = by_doc.get(window.doc_id, [])
        if len(previous) > s.max_previous:
            previous = rng.sample(previous, s.max_previous)
        text = self.corpus[window.doc_id].text
        messages = build_messages(
            window.doc_id,
            text[window.start : window.end],
            previous,
            max_references=s.max_references,
        )
        reply = request_chat(
            self.client,
            s.model,
            messages,
            temperature=s.temperature,
            json_mode=s.json_mode,
        )
        self.stats.requests += 1
        self.stats.prompt_tokens += reply.prompt_tokens
        self.stats.completion_tokens += reply.completion_tokens
        if reply.rejection is not None:
            return reply.rejection
        assert reply.content is not None
        checked = validate_answer(
            reply.content,
            self.corpus,
            window,
            max_references=s.max_references,
            approximate=s.approximate,
        )
        if isinstance(checked, Rejection):
            return checked
        if question_key(checked.question) in keys:
            return Rejection(DUPLICATE, preview(checked.question))
        return _Accepted(checked, window)

    def _to_query(self, accepted: _Accepted, ids: set[str], attempt: int) -> Query:
        window, candidate = accepted.window, accepted.candidate
        path = PurePosixPath(window.doc_id)
        prefix = str(path.with_suffix("")) if path.suffix else window.doc_id
        base = stable_query_id(prefix, candidate.question)
        qid, n = base, 1
        while qid in ids:  # a hash collision of two different questions
            n += 1
            qid = f"{base}-{n}"
        metadata: dict[str, Any] = {
            "window": [window.start, window.end],
            "attempt": attempt,
        }
        if candidate.approximate:
            metadata["approximate_references"] = list(candidate.approximate)
        return Query(
            qid, candidate.question, candidate.excerpts, window.doc_id, metadata
        )


@dataclass(frozen=True)
class _Accepted:
    candidate: Candidate
    window: Window


def _fresh_seed() -> int:
    return secrets.randbelow(2**32)


def _progress_bar(total: int, initial: int, progress: bool | None) -> Any:
    return progress_bar(
        total,
        progress=progress,
        initial=initial,
        desc="accepted",
        unit="q",
        dynamic_ncols=True,
    )


def generate_queries(
    corpus: Corpus,
    out: str | os.PathLike[str],
    *,
    model: str,
    n: int,
    seed: int | None = None,
    base_url: str | None = None,
    api_key: str | None = None,
    client: Any = None,
    max_retries: int = DEFAULT_MAX_RETRIES,
    timeout: float = DEFAULT_TIMEOUT,
    overwrite: bool = False,
    progress: bool | None = None,
    echo: Callable[[str], None] | None = None,
    **options: Any,
) -> GenerationStats:
    """Generate (or resume) a query set of ``n`` queries for ``corpus`` into ``out``.

    ``options`` are further :class:`GenerationSettings` fields (``window_chars``,
    ``max_attempts``, ``approximate``, ``temperature``, ``json_mode``...). Without
    ``client``, one is built by :func:`openai_client` from ``base_url`` /
    ``api_key`` (or ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``).
    """
    settings = GenerationSettings(model=model, n=n, seed=seed, **options)
    if client is None:
        client = openai_client(
            base_url=base_url, api_key=api_key, max_retries=max_retries, timeout=timeout
        )
    generator = QueryGenerator(
        corpus,
        out,
        settings,
        client=client,
        overwrite=overwrite,
        progress=progress,
        echo=echo,
    )
    return generator.run()


def format_summary(
    stats: GenerationStats,
    model: str,
    out: str | os.PathLike[str],
    *,
    price: tuple[float, float] | None = None,
) -> str:
    """The end-of-run report: counts, rejections by reason, tokens and cost."""
    lines = [
        f"{stats.total} of {stats.target} queries in {os.fspath(out)} "
        f"({stats.accepted} new, {stats.existing} from an earlier run); "
        f"stopped: {stats.stopped}"
    ]
    rejected = sum(stats.rejected.values())
    parts = [f"{stats.rejected[r]} {r}" for r in REASONS if stats.rejected[r]]
    detail = f": {', '.join(parts)}" if parts else ""
    lines.append(
        f"attempts: {stats.attempts} (accepted {stats.accepted}, "
        f"rejected {rejected}{detail})"
    )
    if stats.approximate_excerpts:
        lines.append(f"approximate excerpts: {stats.approximate_excerpts}")
    per_1m = price if price is not None else price_for(model)
    cost = estimate_cost(model, stats.prompt_tokens, stats.completion_tokens, per_1m)
    if cost is None or per_1m is None:
        cost_text = (
            f"estimated cost: unknown (no price known for model {model!r}; pass "
            "--price-per-1k)"
        )
    else:
        source = "--price-per-1k" if price is not None else model
        cost_text = (
            f"estimated cost: ${cost:.4f} ({source}: ${per_1m[0]:g} input / "
            f"${per_1m[1]:g} output per 1M tokens)"
        )
    lines.append(
        f"tokens: {stats.prompt_tokens:,} prompt + {stats.completion_tokens:,} "
        f"completion in {stats.requests} requests; {cost_text}"
    )
    return "\n".join(lines)


def dry_run_plan(
    corpus: Corpus,
    settings: GenerationSettings,
    *,
    existing: int = 0,
    samples: int = 20,
    price: tuple[float, float] | None = None,
) -> str:
    """What a run would send, without calling the model: the first prompt and a
    token / cost estimate from ``samples`` windows (cl100k_base counts)."""
    from pytest_chunkeval.tokenizers.base import get_tokenizer

    seed = settings.seed if settings.seed is not None else 0
    tokenizer = get_tokenizer()
    counts: list[int] = []
    first: list[dict[str, str]] | None = None
    for attempt in range(samples):
        rng = attempt_rng(seed, attempt)
        window = choose_window(rng, corpus, settings.window_chars)
        text = corpus[window.doc_id].text[window.start : window.end]
        messages = build_messages(
            window.doc_id, text, (), max_references=settings.max_references
        )
        first = first or messages
        counts.append(sum(tokenizer.count(m["content"]) for m in messages))
    assert first is not None
    per_attempt = sum(counts) / len(counts)
    # A question is ~20 tokens; the prompt grows to max_previous of them.
    with_previous = per_attempt + 20 * settings.max_previous
    remaining = max(0, settings.n - existing)
    low = remaining * per_attempt
    lines = [
        f"dry run: {remaining} queries to generate with {settings.model!r} "
        f"(at least {remaining} requests, at most "
        f"{settings.max_attempts or ATTEMPTS_PER_QUERY * remaining})",
        f"prompt: ~{per_attempt:.0f} tokens per request (~{with_previous:.0f} with "
        f"{settings.max_previous} earlier questions)",
    ]
    cost = estimate_cost(settings.model, int(low), remaining * 150, price)
    lines.append(
        "estimated minimum cost: "
        + (
            f"${cost:.4f} (one accepted answer per request, ~150 output tokens each)"
            if cost is not None
            else f"unknown (no price for {settings.model!r}; pass --price-per-1k)"
        )
    )
    lines.append("first prompt:")
    for m in first:
        lines.append(f"--- {m['role']}")
        lines.append(m["content"])
    return "\n".join(lines)
