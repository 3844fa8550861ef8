"""``@pytest.mark.chunkeval(...)``: its keywords, their validators and the merge
of a test's marker applications."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_chunkeval.config.options import OPTIONS
from pytest_chunkeval.core.metric_names import thresholds
from pytest_chunkeval.errors import ConfigError

THRESHOLDS: dict[str, str] = thresholds()
"""Threshold keyword -> metric (``min_recall`` -> ``recall``), from the metric table."""
QUESTION_THRESHOLDS: dict[str, str] = {
    f"min_question_{metric}": metric for metric in THRESHOLDS.values()
}
"""Per-question threshold keyword -> metric (``min_question_recall`` -> ``recall``):
with ``per_question=True``, each item's own question must reach it."""


class MarkerError(ConfigError):
    """``@pytest.mark.chunkeval(...)`` has an unknown keyword or a bad value."""


def _marker_fraction(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(
            f"must be a number between 0 and 1, got {type(value).__name__} {value!r}"
        )
    if not 0.0 <= float(value) <= 1.0:
        raise ConfigError(
            f"must be between 0 and 1 (a fraction: 0.8 means 80%), got {value!r}"
        )
    return float(value)


def _marker_bool(value: object) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"must be True or False, got {value!r}")
    return value


SETTING_KEYWORDS: dict[str, Callable[[object], Any]] = {
    option.name: option.marker_value for option in OPTIONS if option.marker
}
"""The settings the marker takes, each validated by the option table's own parser
(``Option.marker``): a setting is declared, validated and defaulted once."""

GATE_KEYWORDS: dict[str, str] = {
    "tolerance": "tolerance",
    "gate_mode": "mode",
    "gate_confidence": "confidence",
    "gate_by": "gate_by",
}
"""The gate's settings the marker takes (not result settings): marker keyword ->
the ``check_baseline`` argument it sets for each of the test's baseline checks
(docs/baselines.md, "In a test")."""

MARKER_KEYWORDS: dict[str, Callable[[object], Any]] = {
    **SETTING_KEYWORDS,
    **dict.fromkeys(THRESHOLDS, _marker_fraction),
    "baseline": _marker_bool,
    "per_question": _marker_bool,
    **dict.fromkeys(QUESTION_THRESHOLDS, _marker_fraction),
}
"""Every keyword ``@pytest.mark.chunkeval`` accepts, with its validator."""

MARKER_HELP = (
    f"chunkeval({', '.join(f'{k}=' for k in MARKER_KEYWORDS)}): evaluation "
    "settings for this test, thresholds checked on every result it produces, "
    "baseline=True to compare every result with its baseline file, and "
    "per_question=True for one test item per question (docs/ci.md)"
)
"""The marker's one-line description (``pytest --markers``)."""


@dataclass(frozen=True)
class MarkerOptions:
    """A test's ``@pytest.mark.chunkeval`` keywords, validated."""

    overrides: Mapping[str, Any] = field(default_factory=dict)
    thresholds: Mapping[str, float] = field(default_factory=dict)
    """metric -> minimum mean."""
    baseline: bool = False
    """Compare every result the test produced with its baseline, after the test."""
    per_question: bool = False
    """One test item per question of the query set (run/per_question.py)."""
    question_thresholds: Mapping[str, float] = field(default_factory=dict)
    """metric -> minimum value of each item's own question (``per_question``)."""
    gate: Mapping[str, Any] = field(default_factory=dict)
    """The test's own gate settings (:data:`GATE_KEYWORDS`), as
    ``check_baseline`` arguments: ``tolerance``, ``mode``, ``confidence``,
    ``gate_by``."""


def parse_marker(
    marks: Sequence[tuple[Sequence[object], Mapping[str, object]]], test: str
) -> MarkerOptions:
    """Merge marker applications (closest first: a function's marker overrides its
    class's and module's) and validate them; :class:`MarkerError` names ``test``."""
    merged: dict[str, Any] = {}
    for args, kwargs in reversed(list(marks)):
        if args:
            raise MarkerError(
                f"{test}: @pytest.mark.chunkeval takes keyword arguments only, "
                f"got positional {', '.join(map(repr, args))}"
            )
        if "corpus" in kwargs and "benchmark" in kwargs:
            raise MarkerError(
                f"{test}: @pytest.mark.chunkeval: corpus= and benchmark= are "
                "exclusive (a benchmark brings its own corpus)"
            )
        for key, value in kwargs.items():
            if key not in MARKER_KEYWORDS:
                close = difflib.get_close_matches(key, MARKER_KEYWORDS, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise MarkerError(
                    f"{test}: @pytest.mark.chunkeval got an unknown keyword "
                    f"{key!r}{hint}; valid: {', '.join(MARKER_KEYWORDS)}"
                )
            try:
                parsed = MARKER_KEYWORDS[key](value)
            except ConfigError as exc:
                raise MarkerError(
                    f"{test}: @pytest.mark.chunkeval({key}={value!r}): "
                    + _naming(key, str(exc))
                ) from None
            if key in ("corpus", "benchmark"):
                merged.pop("benchmark" if key == "corpus" else "corpus", None)
            merged[key] = parsed
    thresholds = {THRESHOLDS[k]: merged.pop(k) for k in list(merged) if k in THRESHOLDS}
    own = {
        QUESTION_THRESHOLDS[k]: merged.pop(k)
        for k in list(merged)
        if k in QUESTION_THRESHOLDS
    }
    gate = {GATE_KEYWORDS[k]: merged.pop(k) for k in list(merged) if k in GATE_KEYWORDS}
    baseline = bool(merged.pop("baseline", False))
    per_question = bool(merged.pop("per_question", False))
    if own and not per_question:
        raise MarkerError(
            f"{test}: @pytest.mark.chunkeval("
            + ", ".join(f"min_question_{m}=" for m in own)
            + ") judges each question in its own test item: add per_question=True"
        )
    if per_question and thresholds:
        stated = ", ".join(f"min_{m}=" for m in thresholds)
        raise MarkerError(
            f"{test}: @pytest.mark.chunkeval(per_question=True, {stated}): {stated} "
            "states a minimum mean over the whole query set, which one question's "
            "item cannot judge; state each question's minimum with "
            + ", ".join(f"min_question_{m}=" for m in thresholds)
            + ", or check the means in a test without per_question"
        )
    return MarkerOptions(merged, thresholds, baseline, per_question, own, gate)


def _naming(key: str, message: str) -> str:
    """``message`` starting with ``key`` once: the validators shared with the
    settings (``k must be…``, ``embedder spec must…``) name it already, the
    marker's own (``must be a path…``) do not."""
    return message if message.startswith(f"{key} ") else f"{key} {message}"
