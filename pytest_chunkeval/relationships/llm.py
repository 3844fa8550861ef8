"""``llm:<model>``: relationships extracted by a chat model.

The model sees one text (a chunk, or a question's excerpt) and answers JSON::

    {"relationships": [{"subject": "...", "predicate": "...", "object": "...",
                        "evidence": "the exact sentence(s) of the text"}]}

An answer that is not such JSON is sent back to the model with the reason, up to
``max_attempts`` requests per text; when none is usable the text is rejected
(nothing cached, so the next run asks again, and the evaluation stops with an error
naming it rather than score without it). Evidence that is not in the text verbatim
is dropped and counted by the caller (:func:`~.extractors.locate_relationships`).
Requests go through the shared client stack (:mod:`pytest_chunkeval.llm`): key
from ``OPENAI_API_KEY`` only, any OpenAI-compatible ``OPENAI_BASE_URL``, 429/5xx
retried with backoff by the client, several texts at once, answers cached as they
arrive, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_chunkeval.errors import DataError
from pytest_chunkeval.llm.chat import (
    API_ERROR,
    MALFORMED,
    ChatModel,
    LLMError,
    Messages,
    Rejection,
)
from pytest_chunkeval.llm.parse import extract_json
from pytest_chunkeval.relationships.extractors import RawRelationship

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


class InvalidAnswer(DataError):
    """Why an answer cannot be used (sent back to the model)."""


def user_prompt(text: str) -> str:
    return f"<text>\n{text}\n</text>"


def _json_of(content: str) -> Any:
    try:
        return extract_json(content)
    except ValueError:  # json.JSONDecodeError too
        raise InvalidAnswer("the answer is not valid JSON") from None


def parse_answer(content: str) -> list[RawRelationship]:
    """The relationships of an answer, or :class:`InvalidAnswer` saying why not."""
    data = _json_of(content)
    rels = data.get("relationships") if isinstance(data, dict) else None
    if not isinstance(rels, list):
        raise InvalidAnswer('the answer must be an object with a "relationships" list')
    out: list[RawRelationship] = []
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


@dataclass(frozen=True)
class Answer:
    """What asking about one text produced: relationships, or why there are none."""

    relationships: list[RawRelationship] | None
    rejection: Rejection | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0


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
        self.expected_completion_tokens = EXPECTED_COMPLETION_TOKENS

    @property
    def identity(self) -> str:
        return self.model.identity

    def __repr__(self) -> str:
        return f"LLMExtractor({self.model.model!r})"

    def messages(self, text: str) -> Messages:
        """The first request about ``text``."""
        return [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_prompt(text)},
        ]

    def ask(self, text: str) -> Answer:
        """Ask about ``text``; an unusable answer is sent back with the reason, up
        to ``max_attempts`` requests. An HTTP error (after the client's retries)
        ends the attempts at once."""
        messages = self.messages(text)
        reasons: list[str] = []
        tokens = [0, 0]
        for attempt in range(1, self.max_attempts + 1):
            reply = self.model(messages)
            tokens[0] += reply.prompt_tokens
            tokens[1] += reply.completion_tokens

            def answer(
                rels: list[RawRelationship] | None, why: Rejection | None = None
            ) -> Answer:
                return Answer(rels, why, tokens[0], tokens[1], attempt)  # noqa: B023

            if reply.rejection is not None and reply.rejection.reason == API_ERROR:
                return answer(None, reply.rejection)
            if reply.content is None:
                why = reply.rejection or Rejection(MALFORMED, "empty answer")
                reasons.append(f"{why.reason}: {why.detail}")
                continue
            try:
                return answer(parse_answer(reply.content))
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
        return Answer(
            None,
            Rejection(
                MALFORMED,
                f"no usable answer in {self.max_attempts} attempt(s): "
                + "; ".join(reasons),
            ),
            tokens[0],
            tokens[1],
            self.max_attempts,
        )

    def extract(self, text: str) -> list[RawRelationship]:
        """The relationships of ``text`` (:class:`LLMError` when there is no usable
        answer)."""
        found = self.ask(text)
        if found.relationships is None:
            assert found.rejection is not None
            raise LLMError(f"{self.identity}: {found.rejection.detail}")
        return found.relationships
