"""util/json_text.py: the outer levels indented as ``indent=1`` writes them,
the same JSON value at any depth."""

from __future__ import annotations

import json
import math

import pytest

from pytest_chunkeval.util.json_text import outline_json

VALUE = {
    "label": "é",
    "empty": [],
    "none": {},
    "nested": [1, [2, {"a": [3.5, None, True]}], {"b": "x\n"}],
    1: 2,
    None: "n",
    "nan": math.nan,
}


def test_deep_enough_it_is_json_dumps_with_indent_1() -> None:
    assert outline_json(VALUE, depth=10) == json.dumps(VALUE, indent=1)
    assert outline_json(VALUE, depth=10, ensure_ascii=False) == json.dumps(
        VALUE, indent=1, ensure_ascii=False
    )


@pytest.mark.parametrize("depth", [0, 1, 2, 3])
def test_any_depth_reads_back_as_the_same_value(depth: int) -> None:
    text = outline_json([VALUE, VALUE], depth=depth)
    back = json.loads(text)
    assert json.dumps(back) == json.dumps(json.loads(json.dumps([VALUE, VALUE])))
    assert ("\n" in text) == (depth > 0)


def test_below_the_depth_each_value_is_one_line() -> None:
    text = outline_json({"queries": [{"id": "q1", "spans": [[0, 4]]}]}, depth=2)
    assert '\n  {"id": "q1", "spans": [[0, 4]]}\n' in text
