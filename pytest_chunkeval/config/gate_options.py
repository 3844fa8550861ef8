"""The options of baselines and the gate (docs/baselines.md), a part of the one
option table (:data:`pytest_chunkeval.config.options.OPTIONS` includes them in
this order).

This module imports neither pytest nor numpy.
"""

from __future__ import annotations

from pytest_chunkeval.config.option import MarkerValue, Option
from pytest_chunkeval.config.values import (
    parse_confidence,
    parse_gate_by,
    parse_gate_mode,
    parse_max_left_out,
    parse_path,
    parse_repeats,
    parse_tolerance,
)

GATE_OPTIONS: tuple[Option, ...] = (
    Option(
        "update",
        "Write new and changed baselines, and delete baselines no test used.",
        ini_type=None,
        switch=True,
    ),
    Option(
        "baseline_dir",
        "Directory for baseline files, {relative} (one subdirectory per test file).",
        parse_path,
        metavar="DIR",
        default_text="__chunkeval__ next to each test file",
    ),
    Option(
        "tolerance",
        "Drop each metric may show against its baseline, absolute or relative: "
        "'recall:-1%, iou:-0.002, f1:off' ('pp': percentage points, '*': every "
        "metric). Replaces the default: only the metrics named are gated.",
        parse_tolerance,
        metavar="TOLERANCES",
        default_text="recall, precision, iou (and context_relevance when judged) "
        "gated at -1pp",
        marker=MarkerValue((str,), "a tolerance such as 'recall:-2pp, iou:-0.002'"),
    ),
    Option(
        "gate_mode",
        "How a run is compared with its baseline: 'changes' (the mean of the "
        "per-question changes against the tolerance, widened by measured noise), "
        "'paired' (bootstrap "
        "confidence interval of the per-query deltas) or 'mean' (means only).",
        parse_gate_mode,
        metavar="MODE",
        default_text="changes",
        marker=MarkerValue((str,), "'changes', 'paired' or 'mean'"),
    ),
    Option(
        "gate_confidence",
        "Confidence of the bootstrap intervals (the paired mode's verdicts, the "
        "sampling view otherwise), e.g. 95% or 0.99.",
        parse_confidence,
        metavar="LEVEL",
        default_text="95%",
        marker=MarkerValue((str, int, float), "a level such as '95%' or 0.95"),
    ),
    Option(
        "max_left_out",
        "The share of a baseline's questions a comparison may leave out "
        "(removed from the query set, edited under the same id, no longer "
        "placeable in the edited corpus) before the check fails with the list: "
        "'10%', '0.25', '0' (none).",
        parse_max_left_out,
        metavar="SHARE",
        default_text="0: every baseline question is compared",
    ),
    Option(
        "gate_by",
        "What fails a check: 'set' (the whole set's mean change; documents and "
        "tags whose drop is beyond their own tolerance are named in every "
        "report), 'document' (such a document fails the check too), 'tag' "
        "(such a tag, a question's metadata 'tags', fails it too) or both, "
        "'document, tag' (the failure names each group that decided it).",
        parse_gate_by,
        metavar="WHAT",
        default_text="set",
        marker=MarkerValue((str,), "'set', 'document', 'tag' or 'document, tag'"),
    ),
    Option(
        "fail_unused",
        "Fail the run when baseline files exist that no test used (they are "
        "listed either way).",
        ini_type="bool",
        switch=True,
    ),
    Option(
        "repeats",
        "Times a noisy component is measured (docs/baselines.md, 'Repeats'): a "
        "score() retriever whose answers vary is asked until each question (a "
        "fixed sample of 200 on larger sets) has this many answers, an "
        "approximate store's index is built this many times.",
        parse_repeats,
        metavar="R",
        default_text="retrievers 8 under 50 questions, else 4; stores 3",
    ),
)
