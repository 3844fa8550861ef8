"""What the gate allows: per-metric tolerances (absolute, ``pp`` or relative to
the baseline mean), the mode, the confidence of the sampling view and the share
of questions a comparison may leave out, parsed from options and markers
(:class:`GateSettings`). The parsers and :class:`Tolerance` are the option
table's: import them from ``config/tolerances.py``.

Only the standard library at import time: the plugin parses tolerances at
start-up and must not pay for numpy there (numpy is imported where the gate
computes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from pytest_chunkeval.config.tolerances import (
    HIGHER_IS_BETTER,
    Tolerance,
    Tolerances,
    metric_name,
    parse_confidence,
    parse_gate_by,
    parse_gate_mode,
    parse_share,
    parse_tolerance_value,
    parse_tolerances,
)
from pytest_chunkeval.errors import ConfigError

# F1 is a monotone function of IoU query by query, and precision_omega measures the
# chunking alone: gating them by default would add metrics (and so widen the
# simultaneous intervals) without adding information. Configure them to gate them.
# Each default-gated metric may drop by DEFAULT_TOLERANCE (docs/baselines.md): a doc
# edit that shifts chunk boundaries moves many questions a little, both ways, and
# passes; one question lost out of 19 (-5.3 points) fails.
# A metric a result does not measure (recall of questions without excerpts, judged
# relevance without a judge, a relationship result's chunk metrics) is skipped.
DEFAULT_GATED: tuple[str, ...] = (
    "recall",
    "precision",
    "iou",
    "context_relevance",
    "rel_recall",
    "rel_precision",
    "evidence_iou",
)
DEFAULT_CONFIDENCE = 0.95
DEFAULT_SAMPLES = 10_000
DEFAULT_SEED = 0
DEFAULT_WORST = 5
DEFAULT_MODE = "changes"
DEFAULT_MAX_LEFT_OUT = 0.0
"""The share of a baseline's questions a comparison may leave out (removed,
edited under the same id, no longer placeable) before the check fails: none
(docs/baselines.md, "The question set is part of the baseline"; 10% before)."""


def coerce_tolerances(value: str | Mapping[str, Any] | None) -> Tolerances:
    """Tolerances from a call: a string as in ini, or ``{metric: "-1%" | -0.002}``."""
    if value is None:
        return {}
    if isinstance(value, str):
        return parse_tolerances(value)
    if not isinstance(value, Mapping):
        raise ConfigError(
            f"tolerance must be a string such as 'recall:-1%' or a mapping "
            f"{{metric: tolerance}}, got {type(value).__name__}"
        )
    out: Tolerances = {}
    for name, raw in value.items():
        metric = metric_name(str(name))
        if raw is not None and not isinstance(raw, (str, int, float, Tolerance)):
            raise ConfigError(
                f"{metric}: expected a tolerance such as '-1%' or -0.002, got "
                f"{type(raw).__name__} {raw!r}"
            )
        tol = raw if raw is None or isinstance(raw, Tolerance) else None
        if isinstance(raw, (str, int, float)):
            tol = parse_tolerance_value(raw, metric)
        targets = list(HIGHER_IS_BETTER) if metric == "*" else [metric]
        for m in targets:
            if metric != "*" or m not in value:
                out[m] = tol
    return out


def format_tolerances(tolerances: Mapping[str, Tolerance | None]) -> str:
    """The inverse of :func:`parse_tolerances` (metrics in canonical order)."""
    order = [m for m in HIGHER_IS_BETTER if m in tolerances]
    return ", ".join(f"{m}:{tolerances[m] or 'off'}" for m in order)


DEFAULT_TOLERANCE = Tolerance(0.01, points=True)
"""-1pp: one point of the mean."""


def default_tolerances() -> Tolerances:
    """:data:`DEFAULT_TOLERANCE` on each of :data:`DEFAULT_GATED`."""
    return dict.fromkeys(DEFAULT_GATED, DEFAULT_TOLERANCE)


@dataclass(frozen=True)
class GateSettings:
    """Everything a comparison needs besides the two results."""

    tolerances: Mapping[str, Tolerance | None] = field(
        default_factory=default_tolerances
    )
    mode: str = DEFAULT_MODE
    confidence: float = DEFAULT_CONFIDENCE
    samples: int = DEFAULT_SAMPLES
    seed: int = DEFAULT_SEED
    worst: int = DEFAULT_WORST
    max_left_out: float = DEFAULT_MAX_LEFT_OUT
    gate_by: str = "set"
    """``document``: a document beyond its own tolerance fails the check too
    (docs/baselines.md, "Documents and tags"); ``tag``: a tag beyond its own;
    ``document, tag``: either (:attr:`group_kinds`)."""

    @classmethod
    def from_options(
        cls,
        tolerance: str | None = None,
        mode: str | None = None,
        confidence: str | float | None = None,
        max_left_out: str | float | None = None,
        gate_by: str | None = None,
    ) -> GateSettings:
        """Session settings from ini/flag strings (None: the default). A configured
        tolerance replaces the default one: only the metrics it names are gated.
        Raises ConfigError for bad values (a usage error at startup)."""
        base = cls()
        tolerances = (
            base.tolerances if tolerance is None else parse_tolerances(tolerance)
        )
        if max_left_out is not None:
            base = replace(base, max_left_out=parse_share(max_left_out))
        return replace(base, tolerances=tolerances).override(
            mode=mode, confidence=confidence, gate_by=gate_by
        )

    @property
    def group_kinds(self) -> tuple[str, ...]:
        """The kinds of group that fail a check beyond their own tolerance
        (``chunkeval_gate_by``): ``("document", "tag")``; none for ``set``."""
        return tuple(k for k in self.gate_by.split(", ") if k != "set")

    def gated(self) -> list[tuple[str, Tolerance]]:
        """(metric, tolerance) pairs that are gated, in canonical metric order."""
        return [
            (m, tol)
            for m in HIGHER_IS_BETTER
            if (tol := self.tolerances.get(m)) is not None
        ]

    def override(
        self,
        *,
        tolerance: str | Mapping[str, Any] | None = None,
        mode: str | None = None,
        confidence: str | float | None = None,
        gate_by: str | None = None,
    ) -> GateSettings:
        """These settings with a call's overrides: tolerances merge per metric."""
        merged = dict(self.tolerances)
        merged.update(coerce_tolerances(tolerance))
        return replace(
            self,
            tolerances=merged,
            mode=self.mode if mode is None else parse_gate_mode(mode),
            confidence=(
                self.confidence if confidence is None else parse_confidence(confidence)
            ),
            gate_by=self.gate_by if gate_by is None else parse_gate_by(gate_by),
        )

    def rule(self) -> SetRule:
        """The whole set's rule of these settings: what a per-question item's
        check records for its test function's decision together."""
        gated = {m: t for m, t in self.tolerances.items() if t is not None}
        return SetRule(
            self.mode, self.confidence, format_tolerances(gated), self.gate_by
        )


@dataclass(frozen=True)
class SetRule:
    """The whole set's rule a per-question item was checked under (its mode,
    confidence, tolerances and ``chunkeval_gate_by``; the item itself is
    judged by the item tolerance): its test function's items are decided together by it
    (docs/baselines.md, "Per-question baselines"). JSON-serializable for
    xdist workers."""

    mode: str
    confidence: float
    tolerance: str
    """:func:`format_tolerances` of the set's tolerances."""
    gate_by: str = "set"

    def settings(self) -> GateSettings:
        """The gate settings this rule decides by."""
        return GateSettings(
            tolerances=parse_tolerances(self.tolerance) if self.tolerance else {},
            mode=self.mode,
            confidence=self.confidence,
            gate_by=self.gate_by,
        )

    def __str__(self) -> str:
        gated = ", ".join(f"{m}:{t}" for m, t in self.settings().gated())
        return (
            f"{self.mode} mode, {gated or 'nothing gated'}, "
            f"{100 * self.confidence:g}% confidence"
            + (f", gate_by {self.gate_by}" if self.gate_by != "set" else "")
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "confidence": self.confidence,
            "tolerance": self.tolerance,
            "gate_by": self.gate_by,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SetRule:
        return cls(
            str(data.get("mode", DEFAULT_MODE)),
            float(data.get("confidence", DEFAULT_CONFIDENCE)),
            str(data.get("tolerance", "")),
            str(data.get("gate_by", "set")),
        )
