"""One table of metric names: everything that shows a metric takes it from there."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

from pytest_chunkeval.config.tolerances import HIGHER_IS_BETTER
from pytest_chunkeval.core import metric_names
from pytest_chunkeval.core.metric_names import (
    METRIC_TABLE,
    PRESENCE,
    RELATIONSHIP,
    format_mean_std,
    format_percent,
    header,
    names,
    short_label,
    unit_label,
)
from pytest_chunkeval.core.metrics import JUDGED_METRICS, METRICS, RANK_METRICS
from pytest_chunkeval.relationships.evaluate import REL_METRICS
from pytest_chunkeval.reporting.rows import TABLE_METRICS
from pytest_chunkeval.reporting.table import HEADERS
from pytest_chunkeval.run.marker import MARKER_KEYWORDS, THRESHOLDS
from pytest_chunkeval.run.summary import METRIC_COLUMNS


def test_names_headers_and_labels_are_unique() -> None:
    for field in ("name", "header", "short"):
        values = [getattr(m, field) for m in METRIC_TABLE]
        assert len(values) == len(set(values)), field


def test_terminal_labels_are_ascii() -> None:
    assert all(m.short.isascii() for m in METRIC_TABLE)


def test_the_engine_tuples_come_from_the_table() -> None:
    assert names(PRESENCE) == ("recall", "precision", "iou", "f1", "precision_omega")
    assert names(PRESENCE) + RANK_METRICS == METRICS
    assert names(metric_names.RANK) == RANK_METRICS
    assert names(metric_names.JUDGED) == JUDGED_METRICS
    assert names(metric_names.RELATIONSHIP) == REL_METRICS
    every = {m.name for m in METRIC_TABLE}
    assert every == {*METRICS, *RANK_METRICS, *JUDGED_METRICS, *REL_METRICS}


VIEWS_OF_AN_EDITED_TABLE = """
import dataclasses, json
from pytest_chunkeval.core import metric_names as mn

edits = {
    "recall": {"header": "Recall*", "short": "rec*"},
    "iou": {"higher_is_better": False},
    "ceiling": {"marker": True},
}
mn.METRIC_TABLE = tuple(
    dataclasses.replace(m, **edits.get(m.name, {})) for m in mn.METRIC_TABLE
)
mn.METRIC_NAMES = {m.name: m for m in mn.METRIC_TABLE}

from pytest_chunkeval.config.tolerances import HIGHER_IS_BETTER
from pytest_chunkeval.reporting.table import HEADERS
from pytest_chunkeval.run.marker import MARKER_KEYWORDS, THRESHOLDS
from pytest_chunkeval.run.summary import METRIC_COLUMNS

print(json.dumps({
    "header": HEADERS["recall"],
    "column": dict(METRIC_COLUMNS).get("rec*"),
    "iou_higher": HIGHER_IS_BETTER["iou"],
    "ceiling_threshold": THRESHOLDS.get("min_ceiling"),
    "ceiling_keyword": "min_ceiling" in MARKER_KEYWORDS,
}))
"""


def test_every_view_uses_the_table() -> None:
    """Edit the table before the views are imported: each view shows the edit (a
    view that kept its own copy of a name, label or direction would not)."""
    out = subprocess.run(
        [sys.executable, "-c", VIEWS_OF_AN_EDITED_TABLE],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == {
        "header": "Recall*",
        "column": "recall",
        "iou_higher": False,
        "ceiling_threshold": "ceiling",
        "ceiling_keyword": True,
    }


def test_the_views_show_the_table_as_it_is() -> None:
    assert HEADERS["precision_omega"] == "PrecisionΩ"
    assert dict(METRIC_COLUMNS)["P_omega"] == "precision_omega"
    assert names(PRESENCE) == TABLE_METRICS
    # the gate knows every chunk, judged and relationship metric
    assert set(HIGHER_IS_BETTER) == set(METRICS) | set(JUDGED_METRICS) | set(
        names(RELATIONSHIP)
    )
    marked = [m for m in METRICS + JUDGED_METRICS if m != "ceiling"] + [
        m for m in names(RELATIONSHIP) if m != "evidence_precision_omega"
    ]
    assert {f"min_{m}": m for m in marked} == THRESHOLDS
    assert set(THRESHOLDS) <= set(MARKER_KEYWORDS)


def test_one_unit_label_everywhere() -> None:
    assert unit_label("token") == "tok"
    assert unit_label("char") == "chr"
    assert unit_label("word") == "word"


@pytest.mark.parametrize(
    ("value", "kwargs", "text"),
    [
        (0.4567, {}, "45.7"),
        (0.4567, {"digits": 2}, "45.67"),
        (0.012, {"signed": True}, "+1.2"),
        (-0.012, {"signed": True}, "-1.2"),
        (None, {}, "-"),
        (math.nan, {}, "-"),
        (1, {}, "100.0"),
    ],
)
def test_format_percent(value: float | None, kwargs: dict[str, int], text: str) -> None:
    assert format_percent(value, **kwargs) == text  # type: ignore[arg-type]


def test_format_mean_std() -> None:
    assert format_mean_std(0.5, 0.25) == "50.0 ± 25.0"
    assert format_mean_std(0.5, None) == "50.0"
    assert format_mean_std(None, 0.1) == "-"
    assert format_mean_std(math.nan, 0.1) == "-"


def test_unknown_names_show_as_themselves() -> None:
    assert header("latency") == "latency"
    assert short_label("latency") == "latency"


def test_the_table_imports_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "import pytest_chunkeval.core.metric_names\n"
        "print(sorted(m for m in ('numpy', 'pytest') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
