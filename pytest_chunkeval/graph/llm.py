"""``llm:<model>``: relationships extracted by a chat model.

The model sees one text (a chunk, or a question's excerpt) and answers JSON::

    {"relationships": [{"subject": "...", "predicate": "...", "object": "...",
                        "evidence": "the exact sentence(s) of the text"}]}

An answer that is not such JSON is sent back to the model with the reason, up to
``max_attempts`` requests per text; when none is usable the text counts as failed
(no relationships, a :class:`ExtractionFailedWarning`, nothing cached, so the next
run asks again). Evidence that is not in the text verbatim is dropped and counted
by the caller (:func:`~.extractors.locate_relationships`). Requests go through the
shared client stack (:mod:`pytest_chunkeval.llm.chat`): key from
``OPENAI_API_KEY`` only, any OpenAI-compatible ``OPENAI_BASE_URL``, 429/5xx
retried with backoff; a request that still fails raises :class:`LLMError` and the
answers obtained so far stay cached, so the next run resumes.
"""

from __future__ import annotations

import json
import re
import threading
import warnings
from typing import Any

from pytest_chunkeval.llm.chat import API_ERROR as API_ERROR
from pytest_chunkeval.llm.chat import ChatModel, LLMError, Messages, Reply
from pytest_chunkeval.llm.pricing import estimate_cost, price_for

DEFAULT_MAX_ATTEMPTS = 3
DEFAULT_CONCURRENCY = 4
# Bump when the prompt or the parsing changes: cached answers of the old prompt are
# then not reused (the version is part of the answer cache key).
PROMPT_VERSION = "1"
# A typical answer lists a handful of relationships with their sentences.
EXPECTED_COMPLETION_TOKENS = 300

SYSTEM_PROMPT = (
    "You extract a knowledge graph from text. List every factual relationship the "
    "text states between two named entities, as subject, predicate and object. "
    "Keep entity names as the text writes them; use a short verb phrase as the "
    "predicate. For each relationship, copy as evidence the sentence (or "
    "sentences) of the text that state it, exactly as written: do not shorten, "
    "reword or join them. Answer with JSON only, in the form "
    '{"relationships": [{"subject": "...", "predicate": "...", "object": "...", '
    '"evidence": "..."}]}. If the text states no relationship, answer '
    '{"relationships": []}.'
)

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class ExtractionFailedWarning(UserWarning):
    """The model gave no usable answer for a text; it counts as having none."""


class InvalidAnswer(ValueError):
    """Why an answer cannot be used (sent back to the model)."""


def user_prompt(text: str) -> str:
    return f"<text>\n{text}\n</text>"


def _json_of(content: str) -> Any:
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
        try:
            return json.loads(text[i : j + 1])
        except ValueError:
            pass
    raise InvalidAnswer("the answer is not valid JSON")


def parse_answer(content: str) -> list[tuple[str, str, str, str | list[str]]]:
    """The relationships of an answer, or :class:`InvalidAnswer` saying why not."""
    data = _json_of(content)
    rels = data.get("relationships") if isinstance(data, dict) else None
    if not isinstance(rels, list):
        raise InvalidAnswer('the answer must be an object with a "relationships" list')
    out: list[tuple[str, str, str, str | list[str]]] = []
    for i, item in enumerate(rels, 1):
        if not isinstance(item, dict):
            raise InvalidAnswer(f"relationship {i} is not an object")
        fields = []
        for name in ("subject", "predicate", "object"):
            value = item.get(name)
            if not isinstance(value, str) or not value.strip():
                raise InvalidAnswer(f'relationship {i} has no "{name}" string')
            fields.append(value)
        evidence = item.get("evidence")
        ok = isinstance(evidence, str) and bool(evidence.strip())
        if isinstance(evidence, list):
            ok = bool(evidence) and all(isinstance(e, str) for e in evidence)
        if not ok:
            raise InvalidAnswer(f'relationship {i} has no "evidence" text')
        out.append((fields[0], fields[1], fields[2], evidence))  # type: ignore[arg-type]
    return out


class LLMExtractor:
    """Relationships extracted by ``model`` through an OpenAI-compatible API."""

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        concurrency: int = DEFAULT_CONCURRENCY,
        max_retries: int = 5,
        timeout: float = 120.0,
    ) -> None:
        if max_attempts < 1 or concurrency < 1:
            raise ValueError("max_attempts and concurrency must be >= 1")
        self.model = ChatModel(
            model,
            who="relationship extraction",
            client=client,
            api_key=api_key,
            base_url=base_url,
            temperature=0.0,
            json_mode=True,
            max_retries=max_retries,
            timeout=timeout,
        )
        self.max_attempts = max_attempts
        self.concurrency = concurrency
        self.prompt_version = PROMPT_VERSION
        self.requests = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        return self.model.identity

    @property
    def name(self) -> str:
        return self.identity

    def __repr__(self) -> str:
        return f"LLMExtractor({self.model.model!r})"

    def _ask(self, messages: Messages) -> Reply:
        reply = self.model(messages)
        with self._lock:
            self.requests += 1
            self.prompt_tokens += reply.prompt_tokens
            self.completion_tokens += reply.completion_tokens
        if reply.rejection is not None and reply.rejection.reason == API_ERROR:
            raise LLMError(
                f"relationship extraction with {self.identity}: "
                f"{reply.rejection.detail} (answers so far are cached; run again "
                "to resume)"
            )
        return reply

    def extract(self, text: str) -> list[tuple[str, str, str, str | list[str]]]:
        """The relationships of ``text``; ``[]`` (with a warning) when no answer
        was usable, which :attr:`failed` marks so that it is not cached."""
        messages: Messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_prompt(text)},
        ]
        reasons = []
        for _ in range(self.max_attempts):
            reply = self._ask(messages)
            if reply.content is None:
                assert reply.rejection is not None
                reasons.append(f"{reply.rejection.reason}: {reply.rejection.detail}")
                continue
            try:
                return parse_answer(reply.content)
            except InvalidAnswer as exc:
                reasons.append(str(exc))
                messages = [
                    *messages[:2],
                    {"role": "assistant", "content": reply.content},
                    {
                        "role": "user",
                        "content": f"That answer cannot be used: {exc}. "
                        "Answer again with the JSON form asked for.",
                    },
                ]
        raise ExtractionFailed(
            f"{self.identity} gave no usable answer in {self.max_attempts} "
            f"attempt(s): {'; '.join(reasons)}"
        )

    def estimate(self, texts: list[str]) -> str:
        """A one-line cost estimate for extracting ``texts`` (printed before a
        paid run)."""
        from pytest_chunkeval.tokenizers.base import get_tokenizer

        tok = get_tokenizer(None)
        overhead = tok.count(SYSTEM_PROMPT) + 20  # plus the chat format's tokens
        prompt = sum(tok.count_batch([user_prompt(t) for t in texts])) + overhead * len(
            texts
        )
        completion = EXPECTED_COMPLETION_TOKENS * len(texts)
        cost = estimate_cost(self.model.model, prompt, completion)
        price = price_for(self.model.model)
        money = (
            f"about ${cost:.4f}"
            if cost is not None and price is not None
            else f"cost unknown (no price known for model {self.model.model!r})"
        )
        return (
            f"{len(texts)} extraction request(s) to {self.identity} at "
            f"{self.model.base_url}: ~{prompt} prompt + ~{completion} completion "
            f"tokens, {money}"
        )


class ExtractionFailed(Exception):
    """No usable answer for one text (counted; the text is asked again next run)."""


def warn_failed(where: str, exc: ExtractionFailed) -> None:
    warnings.warn(
        f"{where}: relationship extraction failed, counted as no relationships: {exc}",
        ExtractionFailedWarning,
        stacklevel=3,
    )
