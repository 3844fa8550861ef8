"""A plugin project judged by a callable judge its conftest registers
(docs/judged.md): questions without excerpts, each judge call counted in
``judge-calls.txt`` so an outer test sees the inner runs' calls."""

from __future__ import annotations

from support.plugin_project import CONFTEST

JUDGED_INI = """\
[pytest]
filterwarnings = error
chunkeval_corpus = docs
chunkeval_queries = questions.jsonl
chunkeval_embedder = hashing
chunkeval_store = exact
chunkeval_k = 2
chunkeval_judge = keywords
"""

JUDGED_CONFTEST = (
    CONFTEST
    + """

import os
import re
from pathlib import Path

from pytest_chunkeval.judging.judge import CallableJudge


def _keywords(question, context):
    # every call is counted in a file, so the outer test sees inner runs' calls
    with open(Path(__file__).parent / "judge-calls.txt", "a") as fh:
        fh.write(question + "\\n")
    words = {w.strip("?").lower() for w in question.split() if len(w) >= 5}
    sentences = re.findall(r"[^.]+[.]", context)
    return [
        s.strip()
        for s in sentences
        if words & {w.strip(",.").lower() for w in s.split()}
    ]


def pytest_chunkeval_register_judges(registry):
    judge = CallableJudge(_keywords, name="keywords", version="1")
    registry.register("keywords", lambda rest: judge, "keywords")
"""
)

QUESTIONS = [
    {"id": "u-parrots", "question": "How long do parrots live in captivity?"},
    {"id": "u-tides", "question": "What causes the ocean tides?"},
    {"id": "u-dividend", "question": "Which dividend does the board propose?"},
    {"id": "u-nothing", "question": "Is there a swimming pool?"},
]
