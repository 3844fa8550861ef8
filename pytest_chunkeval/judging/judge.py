"""Judges of context relevance (docs/judged.md#the-two-measures): which sentences of a
context help answer a question.

A judge is ``llm:<model>`` (:class:`LLMJudge`, any OpenAI-compatible endpoint
through :mod:`pytest_chunkeval.llm`) or a Python callable
``judge(question, context) -> list[str]`` registered with a name and a version
(:class:`CallableJudge`; change the version when the function changes). Either way
a judgment is a list of sentences of the context; each must be found in the context
verbatim (or up to whitespace, as excerpts are), else it is dropped and counted.
What remains is a :class:`Judgment`: spans relative to the context, which is what
is cached and committed.

The prompt is the RAGAS paper's context-relevance prompt, asking for JSON so the
sentences can be told apart.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pytest_chunkeval.core.locate import locate, preview
from pytest_chunkeval.llm.batch import Outcome, outcome_of
from pytest_chunkeval.llm.chat import ChatModel, LLMError, NamedVersion
from pytest_chunkeval.llm.parse import extract_json, strip_reasoning

PROMPT_VERSION = "cr-1"
"""Bump when :func:`build_messages` or :func:`parse_judgment` changes."""

INSUFFICIENT = "Insufficient Information"

SYSTEM_PROMPT = (
    "You judge whether retrieved text can help answer a question. You copy "
    "sentences exactly; you never rephrase, shorten or merge them."
)

USER_TEMPLATE = """\
Please extract relevant sentences from the provided context that can potentially \
help answer the following question. If no relevant sentences are found, or if you \
believe the question cannot be answered from the given context, return the phrase \
"{insufficient}". While extracting candidate sentences you're not allowed to make \
any changes to sentences from given context.

Answer with JSON only: {{"sentences": ["<sentence copied exactly>", ...]}}, or \
{{"sentences": []}} when nothing in the context helps.

Question: {question}

<context>
{context}
</context>"""


class JudgeError(LLMError):
    """A judge cannot be used (wrong return type, bad registration)."""


@dataclass(frozen=True)
class Judgment:
    """Sentences of one context judged relevant, as sorted, disjoint spans
    ``[start, end)`` of the context; ``dropped`` counts returned sentences not
    found in the context."""

    spans: tuple[tuple[int, int], ...]
    dropped: int = 0

    @property
    def insufficient(self) -> bool:
        """Nothing in the context helps (the judge said so, or all was dropped)."""
        return not self.spans

    def to_json(self) -> dict[str, Any]:
        return {"spans": [list(s) for s in self.spans], "dropped": self.dropped}

    @classmethod
    def from_json(cls, value: Any, context: str) -> Judgment:
        """A stored judgment, checked against ``context``; ValueError if it does not
        fit (a span outside the context, overlapping or unsorted spans)."""
        if not isinstance(value, dict) or not isinstance(value.get("spans"), list):
            raise ValueError("not a judgment object")
        spans: list[tuple[int, int]] = []
        last = 0
        for item in value["spans"]:
            if (
                not isinstance(item, list)
                or len(item) != 2
                or not all(type(x) is int for x in item)
            ):
                raise ValueError(f"span {item!r} is not [start, end]")
            start, end = item
            if not last <= start < end <= len(context):
                raise ValueError(
                    f"span {item!r} does not fit a context of {len(context)} chars"
                )
            spans.append((start, end))
            last = end
        dropped = value.get("dropped", 0)
        if type(dropped) is not int or dropped < 0:
            raise ValueError(f"dropped {dropped!r} is not a count")
        return cls(tuple(spans), dropped)


def merge_spans(spans: Sequence[tuple[int, int]]) -> tuple[tuple[int, int], ...]:
    """Sorted, disjoint union of ``spans`` (touching spans merge)."""
    out: list[list[int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return tuple((a, b) for a, b in out)


def judgment_from_sentences(context: str, sentences: Sequence[str]) -> Judgment:
    """Place each sentence in ``context`` (exact, else up to whitespace); the ones
    that cannot be placed are dropped and counted."""
    spans: list[tuple[int, int]] = []
    dropped = 0
    for sentence in sentences:
        text = sentence.strip()
        if not text:
            continue
        found = locate(context, text)
        if found is None:
            dropped += 1
        else:
            spans.append(found)
    return Judgment(merge_spans(spans), dropped)


_INSUFFICIENT = re.compile(r"^\W*insufficient\s+information\W*$", re.IGNORECASE)


def parse_judgment(content: str) -> list[str]:
    """The sentences a model answered, [] for "Insufficient Information"; raises
    ValueError for an answer that is neither."""
    text = strip_reasoning(content)
    if _INSUFFICIENT.match(text):
        return []
    try:
        value = extract_json(text)
    except ValueError:
        raise ValueError(f"not JSON: {preview(text)}") from None
    if isinstance(value, dict):
        if "sentences" not in value:
            raise ValueError("JSON without a 'sentences' list")
        value = value["sentences"]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise ValueError("'sentences' is not a list of strings")
    return [s for s in value if not _INSUFFICIENT.match(s)]


def build_messages(question: str, context: str) -> list[dict[str, str]]:
    """The chat messages of one judgment."""
    user = USER_TEMPLATE.format(
        insufficient=INSUFFICIENT, question=question, context=context
    )
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": user},
    ]


class Judge(Protocol):
    """What judging needs: an identity for the cache and one judgment."""

    @property
    def identity(self) -> str: ...

    @property
    def prompt_version(self) -> str: ...

    def compute(self, question: str, context: str) -> Outcome: ...


class LLMJudge:
    """``llm:<model>``: the RAGAS prompt through the shared client stack."""

    prompt_version = PROMPT_VERSION

    def __init__(self, model: str | ChatModel, **client_options: Any) -> None:
        self.model = (
            model
            if isinstance(model, ChatModel)
            else ChatModel(model, who="judging", **client_options)
        )

    @property
    def identity(self) -> str:
        return self.model.identity

    def __repr__(self) -> str:
        return f"LLMJudge({self.model.model!r})"

    def compute(self, question: str, context: str) -> Outcome:
        def parse(content: str) -> Any:
            sentences = parse_judgment(content)
            return judgment_from_sentences(context, sentences).to_json()

        return outcome_of(self.model(build_messages(question, context)), parse)


class CallableJudge(NamedVersion):
    """A Python ``fn(question, context) -> list[str]`` as a judge. Its answers
    are cached under its name and ``version``; ``version=None`` (a
    ``python:MODULE:ATTR`` function without one) is judged every time, nothing
    cached (docs/judged.md)."""

    prompt_version = "callable"

    def __init__(
        self,
        fn: Callable[[str, str], Sequence[str]],
        *,
        name: str,
        version: str | None,
    ) -> None:
        if not callable(fn):
            raise JudgeError(f"judge {name!r}: {type(fn).__name__} is not callable")
        if not name or (version is not None and not str(version).strip()):
            raise JudgeError(
                "a callable judge needs a name and a version (its identity: change "
                "the version when the function changes)"
            )
        self.fn = fn
        self.name = name
        self.version = None if version is None else str(version)  # type: ignore[assignment]

    @property
    def identity(self) -> str:
        """``NAME@VERSION``, or ``NAME`` without a version."""
        return self.name if self.version is None else f"{self.name}@{self.version}"

    @property
    def cache_identity(self) -> str | None:
        """What its answers are cached under; None (judged every time) without
        a version."""
        return None if self.version is None else self.identity

    def compute(self, question: str, context: str) -> Outcome:
        try:
            answer = self.fn(question, context)
        except Exception as exc:  # the user's code: one line naming it, chained
            raise JudgeError(
                f"judge {self.identity} raised {type(exc).__name__}: {exc} (on the "
                f"question {question[:60]!r})"
            ) from exc
        if isinstance(answer, str) or not isinstance(answer, list | tuple):
            raise JudgeError(
                f"judge {self.identity} returned {type(answer).__name__}; expected a "
                "list of sentences of the context"
            )
        bad = [s for s in answer if not isinstance(s, str)]
        if bad:
            raise JudgeError(
                f"judge {self.identity} returned a {type(bad[0]).__name__} among its "
                "sentences; expected strings"
            )
        judgment = judgment_from_sentences(context, answer)
        return Outcome(value=judgment.to_json(), requests=0)
