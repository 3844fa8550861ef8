"""One generation request through the shared answer cache (role ``generate``).

An answer is keyed by the model (and temperature / JSON mode), the prompt
version, and the attempt itself: the run's seed, the attempt number and the exact
messages. A run never asks one attempt twice (a resumed run continues after the
last attempt in its file), so the cache serves a run started again from scratch
with the same seed (``--overwrite --seed N``, for instance with another
``--max-leakage``): every attempt whose prompt is unchanged costs nothing.
Only usable answers are stored; API errors are asked again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_chunkeval.generation.chat import request_chat
from pytest_chunkeval.generation.prompts import PROMPT_VERSION
from pytest_chunkeval.llm.answers import AnswerCache, AnswerKey, hash_input
from pytest_chunkeval.llm.chat import Reply
from pytest_chunkeval.llm.client import client_url_identity, server_part

ROLE = "generate"


@dataclass
class Asker:
    """Asks the model for one attempt, through the answer cache when there is
    one; ``cached`` counts the answers the cache gave."""

    client: Any
    model: str
    temperature: float | None = None
    json_mode: bool = False
    cache: AnswerCache | None = None
    cached: int = 0

    @property
    def identity(self) -> str:
        options = []
        if self.temperature is not None:
            options.append(f"temperature={self.temperature:g}")
        if self.json_mode:
            options.append("json")
        server = server_part(client_url_identity(self.client))
        listed = f"?{'&'.join(options)}" if options else ""
        return f"llm:{self.model}{listed}{server}"

    def key(self, seed: int, attempt: int, messages: list[dict[str, str]]) -> AnswerKey:
        return AnswerKey(
            ROLE,
            self.identity,
            str(PROMPT_VERSION),
            hash_input({"seed": seed, "attempt": attempt, "messages": messages}),
        )

    def ask(self, seed: int, attempt: int, messages: list[dict[str, str]]) -> Reply:
        """The model's reply (``prompt_tokens`` 0 for a cached one)."""
        key = self.key(seed, attempt, messages) if self.cache is not None else None
        if key is not None and self.cache is not None:
            entry = self.cache.get(key)
            value = entry.value if entry is not None else None
            if isinstance(value, dict) and isinstance(value.get("content"), str):
                self.cached += 1
                return Reply(value["content"], None)
        reply = request_chat(
            self.client,
            self.model,
            messages,
            temperature=self.temperature,
            json_mode=self.json_mode,
        )
        usable = reply.content is not None and reply.rejection is None
        if key is not None and self.cache is not None and usable:
            self.cache.put(key, {"content": reply.content})
        return reply
