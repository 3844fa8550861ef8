"""``LLMSemanticChunker``: an LLM chooses where to split, as spans.

The report's method (Chroma's reference ``LLMSemanticChunker``):

1. Split the document into pieces of about ``piece_tokens`` (50) tokens with
   ``RecursiveTokenChunker(piece_tokens, 0)``.
2. Show the model a window of pieces, each wrapped in numbered tags
   ``<start_chunk_i>…<end_chunk_i>`` (``i`` counts from 1 over the whole document),
   and ask after which pieces the text should be split; the answer has the form
   ``split_after: 3, 5``.
3. A window holds pieces until it passes ``window_tokens`` (800) tokens. The next
   window starts right after the last split of the previous one, so the pieces after
   that split are judged again with what follows them. The window that reaches the
   end of the document is the last one: its splits are final, and there it may answer
   with no split at all. Every window advances by at least one piece.

Answers are checked: a ``split_after`` line, numbers in ascending order, every number a
piece of the window, at least one for a window that does not reach the end. An
invalid answer (or a response body that cannot be read, or one cut off by the token
limit) is sent back to the model with the reason, up to ``max_attempts`` requests per
window in all. When none is valid the window is split by a heuristic instead (greedy
runs of at most ``fallback_tokens`` tokens) and :class:`LLMChunkerFallbackWarning`
says so, naming the window; the share of windows that fell back is reported with the
result (``take_fallbacks``), and an evaluation where every window fell back fails.
HTTP errors are not answers: the ``openai`` client
retries 429 and 5xx itself, and a request that still fails raises
:class:`LLMRequestError`.

The client comes from :mod:`pytest_chunkeval.llm.client` (``OPENAI_API_KEY`` /
``OPENAI_BASE_URL`` honoured, any OpenAI-compatible server; the key is only read at
the first request and never logged or named).
Chunks are spans from their first piece's start to their last piece's end.

Valid answers are kept in the shared LLM answer cache
(:mod:`pytest_chunkeval.llm.answers`, role ``chunker``) keyed by model, temperature,
prompt version and the window's messages, so a re-run of one configuration asks
nothing and gets the same chunks.
"""

from __future__ import annotations

import itertools
import os
import re
import warnings
from typing import Any

import numpy as np

from pytest_chunkeval.chunkers._doc_counts import DocumentCounter
from pytest_chunkeval.chunkers.base import chunker_identity, spec_name
from pytest_chunkeval.chunkers.recursive import RecursiveTokenChunker, piece_splitter
from pytest_chunkeval.chunkers.semantic import join_units
from pytest_chunkeval.core.locate import preview
from pytest_chunkeval.core.spans import IntArray
from pytest_chunkeval.errors import ChunkevalWarning, ConfigError, UnavailableError
from pytest_chunkeval.llm.answers import AnswerCache, AnswerKey, hash_input
from pytest_chunkeval.llm.client import LazyClient, server_part
from pytest_chunkeval.tokenizers.base import DEFAULT_ENCODING, Tokenizer, get_tokenizer
from pytest_chunkeval.util.secret import Secret, as_secret

DEFAULT_MODEL = "gpt-4o"
DEFAULT_PIECE_TOKENS = 50
DEFAULT_WINDOW_TOKENS = 800
DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_FALLBACK_TOKENS = 400
PROMPT_VERSION = "split-after-1"
"""Bump when the prompt or the answer parsing changes: cached answers then miss."""

SYSTEM_PROMPT = (
    "You are an assistant specialized in splitting text into thematically consistent "
    "sections. The text has been divided into chunks, each marked with "
    "<start_chunk_X> and <end_chunk_X> tags, where X is the chunk number. Your task "
    "is to identify the points where splits should occur, such that consecutive "
    "chunks of similar themes stay together. Respond with a list of chunk IDs where "
    "you believe a split should be made. For example, if chunks 1 and 2 belong "
    "together but chunk 3 starts a new topic, you would suggest a split after chunk "
    "2. THE CHUNKS MUST BE IN ASCENDING ORDER. Your response should be in the form: "
    "'split_after: 3, 5'."
)

_SPLIT_AFTER = re.compile(r"split_after\s*:?(.*)", re.IGNORECASE)
_NUMBER = re.compile(r"\d+")


class LLMChunkerFallbackWarning(ChunkevalWarning):
    """The model gave no usable answer for a window of a document; the window was
    split by token count instead."""


class LLMRequestError(UnavailableError):
    """A chat request failed (after the client's own retries)."""


class _InvalidAnswer(Exception):
    """Why an answer cannot be used (the text is sent back to the model)."""


def parse_split_after(answer: str) -> list[int]:
    """The numbers of the first ``split_after:`` line of ``answer``.

    Raises ``ValueError`` when there is no such line.
    """
    for line in answer.splitlines():
        match = _SPLIT_AFTER.search(line)
        if match:
            return [int(x) for x in _NUMBER.findall(match.group(1))]
    raise ValueError("the answer has no 'split_after:' line")


def _check_splits(numbers: list[int], first: int, last: int, final: bool) -> list[int]:
    """The valid, de-duplicated 1-based ids of an answer, or :class:`_InvalidAnswer`."""
    if any(b < a for a, b in itertools.pairwise(numbers)):
        raise _InvalidAnswer(f"the chunk ids {numbers} are not in ascending order")
    outside = [x for x in numbers if not first <= x <= last]
    if outside:
        raise _InvalidAnswer(
            f"chunk ids {outside} are not in this text (its chunks are {first} to "
            f"{last})"
        )
    if not numbers and not final:
        raise _InvalidAnswer("the answer must name at least one chunk to split after")
    return sorted(set(numbers))


def _greedy_cuts(counts: list[int], start: int, end: int, budget: int) -> list[int]:
    """0-based pieces to split after so that runs of ``start..end-1`` stay within
    ``budget`` tokens (a piece larger than the budget is a run of its own)."""
    cuts: list[int] = []
    total = 0
    for k in range(start, end):
        if total and total + counts[k] > budget:
            cuts.append(k - 1)
            total = 0
        total += counts[k]
    return cuts


class LLMSemanticChunker:
    """Chunks chosen by a chat model from numbered ~50-token pieces (see the module
    docstring). ``model`` is any model an OpenAI-compatible server serves."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        piece_tokens: int = DEFAULT_PIECE_TOKENS,
        window_tokens: int = DEFAULT_WINDOW_TOKENS,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        fallback_tokens: int = DEFAULT_FALLBACK_TOKENS,
        temperature: float = 0.2,
        max_answer_tokens: int = 200,
        api_key: str | Secret | None = None,
        base_url: str | Secret | None = None,
        max_retries: int = 5,
        timeout: float = 60.0,
        client: Any = None,
        encoding: str | Tokenizer = DEFAULT_ENCODING,
        answer_cache: AnswerCache | str | os.PathLike[str] | None = None,
    ) -> None:
        # first: a traceback's locals then show the key and the URL redacted
        api_key, base_url = as_secret(api_key), as_secret(base_url)
        if not model.strip():
            raise ConfigError("empty model name")
        for label, value in (
            ("piece_tokens", piece_tokens),
            ("window_tokens", window_tokens),
            ("max_attempts", max_attempts),
            ("fallback_tokens", fallback_tokens),
            ("max_answer_tokens", max_answer_tokens),
        ):
            if value < 1:
                raise ConfigError(f"{label} must be >= 1, got {value}")
        self.model = model.strip()
        self.piece_tokens = int(piece_tokens)
        self.window_tokens = int(window_tokens)
        self.max_attempts = int(max_attempts)
        self.fallback_tokens = int(fallback_tokens)
        self.temperature = temperature
        self.max_answer_tokens = max_answer_tokens
        self.tokenizer = get_tokenizer(encoding)
        # Key and URL from the arguments or the environment, read at first request.
        self._connection = LazyClient(
            who=f"llm:{self.model}",
            api_key=api_key,
            base_url=base_url,
            max_retries=max_retries,
            timeout=timeout,
            client=client,
        )
        self.answers: AnswerCache | None = (
            answer_cache
            if isinstance(answer_cache, AnswerCache) or answer_cache is None
            else AnswerCache(answer_cache)
        )
        self._own_cache = answer_cache is not None
        self._windows = 0
        self._fallbacks = 0

    @property
    def splitter(self) -> RecursiveTokenChunker:
        """What cuts the pieces: ``RecursiveTokenChunker(piece_tokens, 0)``."""
        return piece_splitter(self.piece_tokens, self.tokenizer)

    @property
    def name(self) -> str:
        """The canonical spec of the parameters as they are now."""
        options: dict[str, int] = {}
        if self.piece_tokens != DEFAULT_PIECE_TOKENS:
            options["pieces"] = self.piece_tokens
        if self.window_tokens != DEFAULT_WINDOW_TOKENS:
            options["window"] = self.window_tokens
        if self.max_attempts != DEFAULT_MAX_ATTEMPTS:
            options["attempts"] = self.max_attempts
        return spec_name("llm", self.model, self.tokenizer, options=options)

    def adopt_cache(self, cache: Any) -> None:
        """Keep answers beside the evaluation's cache (unless given one)."""
        if not self._own_cache:
            read_only = bool(getattr(cache, "read_only", False))
            self.answers = AnswerCache(cache.directory, read_only=read_only)

    def take_fallbacks(self) -> tuple[int, int]:
        """(windows that fell back, windows) since the last call; resets both."""
        counts = (self._fallbacks, self._windows)
        self._windows = self._fallbacks = 0
        return counts

    @property
    def identity(self) -> str:
        """What answers, for the answer cache: model, sampling settings and,
        when it is not OpenAI's, the server (its URL without credentials)."""
        at = server_part(self._connection.base_url_identity)
        return (
            f"llm:{self.model}@t={self.temperature:g}"
            f"+max_tokens={self.max_answer_tokens}{at}"
        )

    @property
    def base_url(self) -> str:
        """Where chat requests go (``OPENAI_BASE_URL`` when not given)."""
        return self._connection.base_url

    def __repr__(self) -> str:
        return f"LLMSemanticChunker({self.model!r}, base_url={self.base_url!r})"

    @property
    def cache_identity(self) -> str | None:
        """What determines the chunks (the chunking cache's key): the model and
        its sampling settings, the prompt's version, the window settings and the
        tokenizer's identity. A chunking where any window fell back is not
        stored (the evaluation decides that), so a later run asks again."""
        return chunker_identity(
            self,
            self.tokenizer,
            self.identity,
            f"prompt={PROMPT_VERSION}",
            f"fallback={self.fallback_tokens}",
        )

    def chunk_spans(self, text: str) -> IntArray:
        return self._chunks(DocumentCounter(self.tokenizer, text, None))

    def spans_from_tokens(self, text: str, tokens: IntArray) -> IntArray:
        """:meth:`chunk_spans`, counting pieces from ``text``'s token bounds."""
        return self._chunks(DocumentCounter(self.tokenizer, text, tokens))

    def _chunks(self, counter: DocumentCounter) -> IntArray:
        text = counter.text
        pieces = self.splitter.spans_counted(counter)
        n = pieces.shape[0]
        if n <= 1:
            return pieces
        bounds = pieces.tolist()
        counts = counter.counts(pieces[:, 0], pieces[:, 1]).tolist()
        cut_after: set[int] = set()
        start = 0
        windows = answered = 0  # this document's windows; those the model split
        while n - start > 1:
            end, total = start, 0
            while end < n and (end == start or total <= self.window_tokens):
                total += counts[end]
                end += 1
            final = end == n
            fell_back = self._fallbacks
            splits = self._window_splits(text, bounds, counts, start, end, final)
            windows += 1
            answered += self._fallbacks == fell_back
            cut_after.update(k for k in splits if k < n - 1)
            if final:
                if not splits and answered == 1 and windows > 1:
                    # "no split" closing a document where no earlier window had
                    # a usable split point: the model never gave one
                    self._fallbacks += 1
                break
            start = splits[-1] + 1
        return join_units(pieces, np.asarray(sorted(cut_after), dtype=np.int64))

    # -- one window ---------------------------------------------------------------

    def prompt(
        self, text: str, bounds: list[list[int]], start: int, end: int, final: bool
    ) -> list[dict[str, str]]:
        """The chat messages for pieces ``start..end-1`` (0-based)."""
        tagged = "".join(
            f"<start_chunk_{k + 1}>{text[s:e]}<end_chunk_{k + 1}>"
            for k, (s, e) in enumerate(bounds[start:end], start)
        )
        request = (
            f"Respond only with the IDs of the chunks where you believe a split should "
            f"occur, in ascending order, each between {start + 1} and {end}."
        )
        if final:
            request += (
                " This is the end of the document: if it should not be split, "
                "answer 'split_after:' with no number."
            )
        else:
            request += " YOU MUST RESPOND WITH AT LEAST ONE SPLIT."
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"CHUNKED_TEXT: {tagged}\n\n{request}"},
        ]

    def _window_splits(
        self,
        text: str,
        bounds: list[list[int]],
        counts: list[int],
        start: int,
        end: int,
        final: bool,
    ) -> list[int]:
        """0-based pieces to split after, in ``start..end-1``; never empty unless
        ``final``."""
        messages = self.prompt(text, bounds, start, end, final)
        self._windows += 1
        key = AnswerKey(
            "chunker",
            self.identity,
            PROMPT_VERSION,
            hash_input({"messages": messages, "max_attempts": self.max_attempts}),
        )
        cached = self.answers.get(key) if self.answers is not None else None
        if cached is not None:
            try:
                ids = _check_splits(list(cached.value), start + 1, end, final)
                return [i - 1 for i in ids]
            except (_InvalidAnswer, TypeError, ValueError):
                pass  # checked like a fresh answer: asked again below
        last_answer = ""
        reason = ""
        for _ in range(self.max_attempts):
            answer = self._ask(messages)
            if answer is None:  # nothing to show the model: ask the same again
                reason = "the response could not be read or was cut off"
                continue
            last_answer = answer
            try:
                ids = _check_splits(self._numbers(answer), start + 1, end, final)
            except _InvalidAnswer as exc:
                reason = str(exc)
                messages = [
                    *messages,
                    {"role": "assistant", "content": answer},
                    {
                        "role": "user",
                        "content": (
                            f"That answer is invalid: {reason}. Answer again, only "
                            "in the form 'split_after: 3, 5'."
                        ),
                    },
                ]
                continue
            if self.answers is not None:
                self.answers.put(key, ids)
            return [i - 1 for i in ids]
        self._fallbacks += 1
        cuts = _greedy_cuts(counts, start, end, self.fallback_tokens)
        if not final and not cuts:
            cuts = [end - 1]
        first_char, last_char = bounds[start][0], bounds[end - 1][1]
        warnings.warn(
            LLMChunkerFallbackWarning(
                f"{self.name}: no valid answer for the window of pieces {start + 1}-"
                f"{end} (characters {first_char}-{last_char}, starting "
                f"{preview(text[first_char:last_char], 40)}) after "
                f"{self.max_attempts} attempt(s) ({reason}; last answer: "
                f"{preview(last_answer, 60)}); split it into runs of at most "
                f"{self.fallback_tokens} tokens instead"
            ),
            stacklevel=3,
        )
        return cuts

    @staticmethod
    def _numbers(answer: str) -> list[int]:
        try:
            return parse_split_after(answer)
        except ValueError as exc:
            raise _InvalidAnswer(str(exc)) from None

    def _ask(self, messages: list[dict[str, str]]) -> str | None:
        """The model's answer, or None when the response is unreadable or truncated.

        HTTP and connection failures raise :class:`LLMRequestError`."""
        client = self._connection.get()
        import openai

        try:
            completion = client.chat.completions.create(
                model=self.model,
                messages=messages,
                max_tokens=self.max_answer_tokens,
                temperature=self.temperature,
            )
        except openai.APIStatusError as exc:
            raise LLMRequestError(
                f"{self.name}: {self.base_url}/chat/completions answered HTTP "
                f"{exc.status_code}: {exc.message}"
            ) from exc
        except openai.APIResponseValidationError:
            return None
        except openai.APIError as exc:
            raise LLMRequestError(
                f"{self.name}: request to {self.base_url}/chat/completions failed "
                f"({type(exc).__name__}: {exc})"
            ) from exc
        except ValueError:  # a body that is not JSON
            return None
        try:
            choice = completion.choices[0]
            content = choice.message.content
        except (TypeError, IndexError, AttributeError):
            return None
        if not isinstance(content, str) or choice.finish_reason == "length":
            return None
        return content


__all__ = [
    "LLMChunkerFallbackWarning",
    "LLMRequestError",
    "LLMSemanticChunker",
    "parse_split_after",
]
