"""Plain-text tables of results, in the layout of the report's tables."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from pytest_chunkeval.core.metric_names import (
    METRIC_TABLE,
    PRESENCE,
    RANK,
    format_mean_std,
    names,
    unit_label,
)
from pytest_chunkeval.engine.labels import chunker_text, k_text
from pytest_chunkeval.util.text import format_rows

if TYPE_CHECKING:  # runtime import would load numpy for plain text formatting
    from pytest_chunkeval.engine.results import EvalResult

REPORT_COLUMNS = ("recall", "precision", "precision_omega", "iou")
CHUNK_COLUMNS = (
    *REPORT_COLUMNS,
    *(m for m in names(PRESENCE) + names(RANK) if m not in REPORT_COLUMNS),
)
"""Every chunk metric a table can show (``--metric``): the report's columns first,
then the others of the metric table."""
RELATIONSHIP_COLUMNS = (
    "rel_recall",
    "rel_precision",
    "evidence_recall",
    "evidence_iou",
)
"""Columns for relationship results (Graph-RAG), named apart from chunk metrics."""
HEADERS = {m.name: m.header for m in METRIC_TABLE}
"""Column header of every metric (see :mod:`pytest_chunkeval.core.metric_names`)."""


def table_columns(results: Sequence[EvalResult]) -> tuple[str, ...]:
    """The report's columns for chunk results, the relationship columns for
    relationship results, both for a mix."""
    kinds = {"rel_recall" in r.metrics for r in results}
    if kinds == {True}:
        return RELATIONSHIP_COLUMNS
    if True in kinds:
        return REPORT_COLUMNS + RELATIONSHIP_COLUMNS
    return REPORT_COLUMNS


def split_spec(spec: str) -> tuple[str, str, str]:
    """The Chunking, Size and Overlap columns of a chunker label, read from its
    canonical spec: ``recursive:200`` -> (``recursive``, ``200``, ``0``). Other
    settings stay with the name, in spec syntax: ``kamradt-modified:300:mean`` ->
    (``kamradt-modified (mean)``, ``300``, ``""``), ``cluster:400@openai:M`` ->
    (``cluster (@openai:M)``, ``400``, ``""``), ``llm:M?window=1200`` ->
    (``llm (M, window=1200)``, ``""``, ``""``)."""
    from pytest_chunkeval.config.specs import SpecError, format_spec, parse

    names: list[str] = []
    try:  # the registry knows which argument is the size and which the overlap
        from pytest_chunkeval.chunkers.specs import CHUNKERS

        parsed = CHUNKERS.canonical(spec)
        signature = CHUNKERS.signature(parsed.name)
        if signature is not None:
            names = [p.name for p in signature.args]
    except SpecError:
        try:
            parsed = parse(spec)
        except SpecError:
            return spec, "", ""
    args = list(parsed.args)
    if names and names[-1:] and len(args) > len(names):  # a value holding ':'
        args = [*args[: len(names) - 1], ":".join(args[len(names) - 1 :])]
    size = overlap = ""
    rest: list[str] = []
    for i, value in enumerate(args):
        name = names[i] if i < len(names) else ""
        if i == 0 and (name in _SIZE_PARAMS or (not names and value.isdigit())):
            size = value
        elif name == "overlap":
            overlap = value
        else:
            rest.append(value)
    rest += [f"{key}={value}" for key, value in parsed.options]
    if parsed.inner is not None:
        rest.append("@" + format_spec(parsed.inner))
    label = parsed.name + (f" ({', '.join(rest)})" if rest else "")
    return label, size, overlap


_SIZE_PARAMS = ("size", "max_tokens")


def mean_std(result: EvalResult, metric: str) -> str:
    """``mean ± std`` in percent, or ``-`` when the metric is undefined."""
    stats = result.metrics.get(metric)
    if stats is None or stats.n == 0:
        return "-"
    return format_mean_std(stats.mean, stats.std)


AXES = (
    ("embedder", "Embedder"),
    ("store", "Store"),
    ("rerank", "Rerank"),
    ("unit", "Unit"),
    ("tokenizer", "Tokenizer"),
    ("copies", "Copies"),
    ("locate", "Locate"),
    ("judge", "Judge"),
    ("corpus", "Corpus"),
    ("queries", "Queries"),
)
"""Settings of a result's configuration that get a column of their own in a table
whose rows differ in them (the chunker, ``k`` and budget always have theirs)."""


def differing_axes(results: Sequence[EvalResult]) -> list[tuple[str, str]]:
    """The ``(config key, header)`` of every axis whose value differs between
    ``results``: two rows that differ only in their store must not look alike."""
    return [
        (key, header)
        for key, header in AXES
        if len({str(r.config.get(key) or "") for r in results}) > 1
    ]


def results_table(
    results: Sequence[EvalResult], columns: Sequence[str] | None = None
) -> str:
    """One row per result: chunking, size, overlap, k (and budget, with the units
    sent per query, when a result has one), a column for every other setting that
    differs between the rows (embedder, store...), metrics, mean chunk size.

    ``columns``: the metrics to show (default: the report's), so a run that asks
    for ``ndcg`` gets that column and the table stays narrow otherwise."""
    columns = tuple(columns) if columns is not None else table_columns(results)
    budgeted = any(r.config.get("budget") is not None for r in results)
    axes = differing_axes(results)
    headers = [
        "Chunking",
        "Size",
        "Overlap",
        "k",
        *(("Budget", "Sent") if budgeted else ()),
        *(header for _, header in axes),
        *(HEADERS.get(m, m) for m in columns),
    ]
    headers.append("Chunk size")
    rows = []
    for r in results:
        name, size, overlap = split_spec(str(r.config.get("chunker", r.label)))
        unit = unit_label(str(r.config.get("unit", "char")))
        budget = []
        if budgeted:
            sent = r.budget.get("mean_units")
            budget = [
                str(r.config.get("budget") or ""),
                "" if sent is None else f"{sent:.0f}",
            ]
        rows.append(
            [
                chunker_text(name, r.chunks),
                size,
                overlap,
                k_text(r.config, r.chunks),
                *budget,
                *(str(r.config.get(key) or "-") for key, _ in axes),
                *(mean_std(r, m) for m in columns),
                f"{r.chunks['mean_units']:.0f} {unit}",
            ]
        )
    first = 6 if budgeted else 4  # the axes follow k (and budget, sent)
    left = {0, *range(first, first + len(axes))}
    return format_rows(headers, rows, text_columns=left)


def loss_lines(results: Sequence[EvalResult]) -> list[str]:
    """Per result, where recall was lost (docs/metrics.md), in points of recall."""
    lines = []
    for r in results:
        parts = [
            f"{label} {100 * r.loss[part].mean:.1f}"
            for part, label in (
                ("chunking", "chunking lost"),
                ("search", "search lost"),
                ("approximation", "approximate index lost"),
            )
            if part in r.loss
        ]
        if parts:
            lines.append(f"  {r.describe()}: " + ", ".join(parts))
    return lines
