"""Judges for tests of judged relevance (docs/judged.md), answering by shared
words: as a callable judge, and as a model behind the local OpenAI-compatible
server."""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_chunkeval.judging.judge import CallableJudge


def keyword_judge(calls: list[str]) -> CallableJudge:
    """Sentences sharing a word of 4+ letters with the question."""

    def judge(question: str, context: str) -> list[str]:
        calls.append(question)
        words = {w.strip("?,.").lower() for w in question.split() if len(w) > 4}
        sentences = [s.strip() for s in context.replace("\n", " ").split(". ")]
        return [
            s if s.endswith(".") else s + "."
            for s in sentences
            if words & {w.strip("?,.").lower() for w in s.split()}
        ]

    return CallableJudge(judge, name="keywords", version="1")


def judge_by_keyword(request: Any) -> str:
    """A model that copies the context's sentences sharing a long word with the
    question (and says Insufficient Information when there are none)."""
    user = request["messages"][-1]["content"]
    question = user.split("Question: ", 1)[1].split("\n", 1)[0]
    context = user.split("<context>\n", 1)[1].rsplit("\n</context>", 1)[0]
    words = {w.strip("?").lower() for w in question.split() if len(w) >= 4}
    sentences = re.findall(r"[^.\n]+\.", context)
    found = [
        s.strip()
        for s in sentences
        if words & {w.strip(",.").lower() for w in s.split()}
    ]
    if not found:
        return "Insufficient Information"
    return json.dumps({"sentences": found})
