"""The session's judges: one :class:`Judging` per judge spec, sharing the answer
cache and the committed judgments file (docs/judged.md#the-two-measures,
``docs/judged.md``).

In update mode new judgments are recorded in the committed file at the end of the
session, merged under a lock with what other runs recorded meanwhile
(judging/store.py). Under pytest-xdist each worker sends the entries it recorded
through ``workeroutput``; only the controller writes the file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pytest_chunkeval.judging.run import JudgeStats, Judging
from pytest_chunkeval.judging.store import JudgmentFile


class SessionJudges:
    """Judges by spec for one pytest session."""

    def __init__(
        self,
        judgments_path: str,
        *,
        update: bool,
        make: Callable[[str], Any],
    ) -> None:
        self.path = Path(judgments_path)
        self.update = update
        self._make = make
        self._file: JudgmentFile | None = None
        self._by_spec: dict[tuple[str, str], Judging] = {}
        self._merged: dict[str, JudgeStats] = {}

    @property
    def file(self) -> JudgmentFile:
        if self._file is None:
            self._file = JudgmentFile(self.path)
        return self._file

    def judging(self, spec: str, cache_dir: str) -> Judging:
        """The judging of ``spec`` with the answer cache under ``cache_dir``."""
        key = (spec, cache_dir)
        found = self._by_spec.get(key)
        if found is None:
            from pytest_chunkeval.llm.answers import AnswerCache

            found = Judging(
                self._make(spec),
                cache=AnswerCache(cache_dir),
                committed=self.file,
                record=self.update,
            )
            self._by_spec[key] = found
        return found

    def stats(self) -> dict[str, JudgeStats]:
        """Judge identity -> what it did (this process, plus merged workers)."""
        out: dict[str, JudgeStats] = {}
        for judging in self._by_spec.values():
            _add(out, judging.judge.identity, judging.stats)
        for identity, stats in self._merged.items():
            _add(out, identity, stats)
        return out

    def payload(self) -> dict[str, Any]:
        """What a worker sends: recorded entries and its stats (JSON values)."""
        entries = (
            {d: self.file.entries[d] for d in self.file.used}
            if self.update and self._file is not None
            else {}
        )
        return {
            "entries": entries,
            "stats": {i: _stats_json(s) for i, s in self.stats().items()},
        }

    def merge(self, payload: Mapping[str, Any]) -> None:
        """Take a worker's payload (controller side)."""
        for digest, entry in payload.get("entries", {}).items():
            if self.file.entries.get(digest) != entry:
                self.file.entries[digest] = entry
                self.file.added += 1
                self.file.recorded.add(digest)  # the worker's: saved here
            self.file.used.add(digest)
        for identity, data in payload.get("stats", {}).items():
            _add(self._merged, identity, _stats_from_json(data))

    def finish(self) -> list[str]:
        """Save the committed file in update mode; the summary lines."""
        lines = [
            f"judge {identity}: {stats.summary()}"
            for identity, stats in sorted(self.stats().items())
        ]
        if self.update and self._file is not None and self._file.recorded:
            self._file.save()
        if self.update and self._file is not None and self._file.added:
            lines.append(
                f"recorded {self._file.added} new judgment(s) in {self.path} "
                "(commit it: CI then judges nothing)"
            )
        return lines


_COUNTS = (
    "contexts",
    "committed",
    "cached",
    "judged",
    "calls",
    "dropped_sentences",
    "insufficient",
    "prompt_tokens",
    "completion_tokens",
    "unversioned",
)


def _add(into: dict[str, JudgeStats], identity: str, stats: JudgeStats) -> None:
    total = into.setdefault(identity, JudgeStats())
    for name in _COUNTS:
        setattr(total, name, getattr(total, name) + getattr(stats, name))
    total.rejected.update(stats.rejected)


def _stats_json(stats: JudgeStats) -> dict[str, Any]:
    data: dict[str, Any] = {name: getattr(stats, name) for name in _COUNTS}
    data["rejected"] = dict(stats.rejected)
    return data


def _stats_from_json(data: Mapping[str, Any]) -> JudgeStats:
    stats = JudgeStats()
    for name in _COUNTS:
        setattr(stats, name, int(data.get(name, 0)))
    stats.rejected.update({str(k): int(v) for k, v in data.get("rejected", {}).items()})
    return stats
