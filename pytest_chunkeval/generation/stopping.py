"""When query generation gives up: too many failed requests, or too many answers
that cannot be read, in a row (a wrong model, an endpoint that is not a chat API)."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_chunkeval.generation.settings import MAX_CONSECUTIVE_API_ERRORS
from pytest_chunkeval.llm.chat import API_ERROR, MALFORMED, Rejection


@dataclass
class RejectionStreaks:
    """Rejections in a row, by kind; an accepted answer ends every streak."""

    model: str
    max_unusable: int
    api_errors: int = 0
    unusable: int = 0

    def accepted(self) -> None:
        self.api_errors = self.unusable = 0

    def rejected(self, rejection: Rejection, kept: str) -> tuple[str, str] | None:
        """Count ``rejection``; when a streak reaches its limit, why generation
        stops: its label and message (``kept``: "N of M", said in the message)."""
        if rejection.reason != API_ERROR:
            self.api_errors = 0
        elif (errors := self.api_errors + 1) >= MAX_CONSECUTIVE_API_ERRORS:
            return "api errors", (
                f"{errors} requests in a row failed after retries; last: "
                f"{rejection.detail}"
            )
        else:
            self.api_errors = errors
        if rejection.reason != MALFORMED:
            self.unusable = 0
        elif (unusable := self.unusable + 1) >= self.max_unusable:
            return "unusable answers", (
                f"{unusable} answers in a row from model {self.model!r} could not "
                f"be read (last: {rejection.detail}); is it the right model, and a "
                f"chat endpoint? Stopped with {kept} queries kept (the limit is "
                "--max-unusable)"
            )
        else:
            self.unusable = unusable
        return None
