"""Each test's baseline verdict, from the store's check outcomes, and the one-line
verdict of a session (``2 regressions, 1 improvement, 14 unchanged``) that the
Markdown report opens with."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

VERDICT_OF = {
    "passed": "passed",
    "unchanged": "passed",
    "improved": "improved",
    "regressed": "regressed",
    "created": "created",
    "updated": "updated",
    "missing": "missing",
    "corrupt": "not compared",
    "mismatch": "not compared",
    "unwritable": "not compared",
    "not recorded": "not compared",
}
ORDER = ("regressed", "missing", "not compared", "improved", "created", "updated")
"""Worst first: a test with several baselines gets the worst one's verdict."""


def worst(verdicts: Iterable[str]) -> str:
    """The worst of ``verdicts`` ("passed" when all passed, "" when none)."""
    seen = set(verdicts)
    for verdict in ORDER:
        if verdict in seen:
            return verdict
    return "passed" if seen else ""


def verdicts_by_test(outcomes: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Node id -> its verdict, from ``(nodeid, status)`` check outcomes."""
    per_test: dict[str, list[str]] = {}
    for nodeid, status in outcomes:
        per_test.setdefault(nodeid, []).append(VERDICT_OF.get(status, "not compared"))
    return {nodeid: worst(v) for nodeid, v in per_test.items()}


def row_verdict(nodeids: Sequence[str], verdicts: Mapping[str, str]) -> str:
    """A report row's verdict: the worst of its tests' ("" when none checked)."""
    return worst(verdicts[n] for n in nodeids if n in verdicts)


_NOUNS = {
    "regressed": ("regression", "regressions"),
    "improved": ("improvement", "improvements"),
    "passed": ("unchanged", "unchanged"),
}


def headline(verdicts: Mapping[str, str]) -> str:
    """``2 regressions, 1 improvement, 14 unchanged`` (then missing, not compared,
    created, updated when there are any); "" when no test checked a baseline."""
    counts: dict[str, int] = {}
    for verdict in verdicts.values():
        counts[verdict] = counts.get(verdict, 0) + 1
    parts = []
    for verdict in ("regressed", "improved", "passed", *ORDER[1:3], *ORDER[4:]):
        n = counts.get(verdict, 0)
        if verdict in _NOUNS:
            one, many = _NOUNS[verdict]
            parts.append(f"{n} {one if n == 1 else many}")
        elif n:
            parts.append(f"{n} {verdict}")
    return ", ".join(parts) if verdicts else ""
