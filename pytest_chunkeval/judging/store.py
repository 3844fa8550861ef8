"""Committed judgments: a diff-friendly file of judged spans, next to the tests.

The answer cache (``.chunkeval/cache``) is not committed; this file is, so that CI
on a fresh clone judges nothing and gets identical numbers. ``--chunkeval-update``
(or ``chunkeval judge``) records new judgments in it, merged under a lock with
what other runs recorded meanwhile. Format::

    {
     "chunkeval_judgments": 1,
     "judgments": {
      "<digest>": {"dropped": 0, "input": "<sha256>", "judge": "my-judge@1",
                   "prompt_version": "callable+sentences-1", "question": "...",
                   "sentences": [[12, 80, "The sentence judged relevant."]]},
      ...
     }
    }

``<digest>`` hashes the whole key (judge identity, prompt version + splitter,
question and exact context text); each entry sits on one line and keys are sorted.
An entry is used only when its key fields match and every sentence's text is the
context's text at its span; one that does not fit is reported with
:class:`JudgmentFileWarning` and judged again (never trusted).
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any

from pytest_chunkeval.errors import ChunkevalWarning, DataError
from pytest_chunkeval.judging.judge import Judgment
from pytest_chunkeval.llm.answers import AnswerKey
from pytest_chunkeval.util.files import atomic_write_text, directory_lock

SCHEMA = 1
_VERSION_KEY = "chunkeval_judgments"


class JudgmentFileError(DataError):
    """The judgments file cannot be read at all (not JSON, another schema)."""


class JudgmentFileWarning(ChunkevalWarning):
    """An entry of the judgments file does not fit its context; it is ignored."""


class JudgmentFile:
    """Judgments keyed by :meth:`AnswerKey.digest`, loaded from and saved to
    ``path`` (a missing file is empty)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.entries: dict[str, dict[str, Any]] = {}
        self.used: set[str] = set()
        self.recorded: set[str] = set()
        """Digests recorded by this process (not read from the file)."""
        self.added = 0
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise JudgmentFileError(
                f"{self.path}: cannot read judgments ({exc})"
            ) from exc
        if not isinstance(data, dict) or data.get(_VERSION_KEY) != SCHEMA:
            found = data.get(_VERSION_KEY) if isinstance(data, dict) else None
            raise JudgmentFileError(
                f"{self.path}: judgments schema {found!r}, expected {SCHEMA}; "
                "delete the file and re-run with --chunkeval-update to judge again"
            )
        entries = data.get("judgments")
        if not isinstance(entries, dict):
            raise JudgmentFileError(f"{self.path}: 'judgments' must be an object")
        self.entries = {
            k: v
            for k, v in entries.items()
            if isinstance(k, str) and isinstance(v, dict)
        }

    def __len__(self) -> int:
        return len(self.entries)

    def get(self, key: AnswerKey, context: str) -> Judgment | None:
        """The committed judgment of ``key``, checked against ``context``."""
        digest = key.digest()
        entry = self.entries.get(digest)
        if entry is None:
            return None
        problem = _check(entry, key, context)
        if problem is None:
            try:
                spans = [[s[0], s[1]] for s in entry["sentences"]]
                judgment = Judgment.from_json(
                    {"spans": spans, "dropped": entry.get("dropped", 0)}, context
                )
            except (ValueError, TypeError, IndexError) as exc:
                problem = str(exc)
        if problem is not None:
            warnings.warn(
                f"{self.path}: judgment {digest[:12]} ({entry.get('question')!r}) is "
                f"not used: {problem}; it is judged again",
                JudgmentFileWarning,
                stacklevel=2,
            )
            return None
        self.used.add(digest)
        return judgment

    def record(
        self, key: AnswerKey, question: str, context: str, judgment: Judgment
    ) -> None:
        """Add (or replace) the judgment of ``key``."""
        digest = key.digest()
        entry = {
            "judge": key.identity,
            "prompt_version": key.prompt_version,
            "input": key.input,
            "question": question,
            "sentences": [[a, b, context[a:b]] for a, b in judgment.spans],
            "dropped": judgment.dropped,
        }
        if self.entries.get(digest) != entry:
            self.entries[digest] = entry
            self.added += 1
            self.recorded.add(digest)
        self.used.add(digest)

    def save(self) -> None:
        """Record this process's judgments (:attr:`recorded`) in the file as it
        is on disk now, under a lock, and write it atomically: sorted keys, one
        entry per line. Another run may have recorded its own since this one
        read the file (two test files run at once with ``--chunkeval-update``):
        both are kept, never the last writer's alone. :attr:`added` becomes the
        number of entries this save adds to (or changes in) the file on disk:
        one the other run recorded first is not counted twice."""
        with directory_lock(self.path.parent):
            current = JudgmentFile(self.path).entries if self.path.exists() else {}
            mine = {d: self.entries[d] for d in self.recorded if d in self.entries}
            self.added = sum(current.get(d) != entry for d, entry in mine.items())
            current.update(mine)
            self.entries = current
            lines = [
                f"  {json.dumps(k)}: "
                f"{json.dumps(v, ensure_ascii=False, sort_keys=True)}"
                for k, v in sorted(current.items())
            ]
            body = ",\n".join(lines)
            text = (
                "{\n"
                f' "{_VERSION_KEY}": {SCHEMA},\n'
                ' "judgments": {\n' + (body + "\n" if body else "") + " }\n}\n"
            )
            atomic_write_text(self.path, text)


def _check(entry: dict[str, Any], key: AnswerKey, context: str) -> str | None:
    expected = {
        "judge": key.identity,
        "prompt_version": key.prompt_version,
        "input": key.input,
    }
    for name, value in expected.items():
        if entry.get(name) != value:
            return f"stored for another {name} ({entry.get(name)!r})"
    sentences = entry.get("sentences")
    if not isinstance(sentences, list):
        return "no 'sentences' list"
    for item in sentences:
        if not (
            isinstance(item, list)
            and len(item) == 3
            and type(item[0]) is int
            and type(item[1]) is int
            and isinstance(item[2], str)
        ):
            return f"sentence {item!r} is not [start, end, text]"
        if context[item[0] : item[1]] != item[2]:
            return f"sentence {item[2]!r} is not the context's text at {item[:2]}"
    return None
