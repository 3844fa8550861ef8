"""How report text survives untrusted and crowded input: Markdown cells, test ids
that wrap, configuration colours, scatter labels that do not overprint."""

from __future__ import annotations

import re
from itertools import combinations

from support.fake_results import make_result

from pytest_chunkeval.reporting.escape import breakable
from pytest_chunkeval.reporting.html import html_report
from pytest_chunkeval.reporting.markdown import markdown_report
from pytest_chunkeval.reporting.md_table import md_cell
from pytest_chunkeval.reporting.plot_frame import Frame, label_boxes, overlaps
from pytest_chunkeval.reporting.rows import ReportEntry, ResultRow
from pytest_chunkeval.reporting.svg import config_color, scatter_svg


def _table_cells(row: str) -> list[str]:
    """Cells of a GitHub Markdown table row: split at ``|`` not escaped."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def test_markdown_cell_keeps_pipes_html_and_newlines_in_the_cell() -> None:
    question = "a | b <b>bold</b>\nsecond line <img src=x onerror=alert(1)> `x`"
    cell = md_cell(question)
    assert "\n" not in cell
    assert "<" not in cell
    assert ">" not in cell
    assert _table_cells(f"| {cell} | 2 |") == [cell, "2"]
    assert "&lt;b&gt;bold&lt;/b&gt;" in cell
    assert "a \\| b" in cell
    assert "second line" in cell


def test_markdown_table_rows_keep_their_columns_with_hostile_test_ids() -> None:
    entry = ReportEntry.of(
        make_result([1.0, 0.5], config={"chunker": "x|y"}),
        ["tests/t.py::test[a|b\n<b>c</b>]"],
    )
    lines = markdown_report([entry]).strip().splitlines()
    table = [line for line in lines if line.startswith("|")]
    assert len(table) == 3  # header, rule, one row: the newline did not split it
    widths = {len(_table_cells(line)) for line in table}
    assert widths == {len(_table_cells(table[0]))}
    assert "<b>" not in table[2]


def test_test_ids_wrap_after_separators_only() -> None:
    shown = breakable("tests/test_rag.py::test_chunk[recursive-200]")
    assert shown == "tests/<wbr>test_rag.py::<wbr>test_chunk[<wbr>recursive-<wbr>200]"
    assert breakable("<b>") == "&lt;b&gt;"
    page = html_report([ReportEntry.of(make_result([1.0]), ["tests/a.py::test[x-y]"])])
    assert "tests/<wbr>a.py::<wbr>test[<wbr>x-<wbr>y]" in page
    assert "overflow-wrap:anywhere" not in page  # that breaks mid-word


def test_configuration_colour_depends_on_its_label_only() -> None:
    labels = [f"recursive:{n}:0 k=5 token" for n in (100, 200, 400)]
    first = html_report([_entry(label) for label in labels])
    second = html_report([_entry(label) for label in reversed(labels[1:])])
    for label in labels[1:]:
        colour = config_color(ResultRow.from_entry(_entry(label)).label)
        assert re.fullmatch(r"#[0-9a-f]{6}", colour)
        assert first.count(colour) == second.count(colour) > 0
    assert len({config_color(label) for label in labels}) == 3


def _entry(chunker: str) -> ReportEntry:
    return ReportEntry.of(make_result([0.5, 1.0], config={"chunker": chunker}))


def test_scatter_labels_do_not_overprint_on_equal_points() -> None:
    frame = Frame(430, 320)
    centres = [(200.0, 150.0)] * 4 + [(204.0, 152.0), (420.0, 40.0)]
    texts = [f"recursive:{n}:0" for n in range(len(centres))]
    boxes = [box for box, _ in label_boxes(frame, centres, texts)]
    for a, b in combinations(boxes, 2):
        assert not overlaps(a, b), (a, b)
    for x0, y0, x1, y1 in boxes:
        assert 0 <= x0 < x1 <= frame.width
        assert 0 <= y0 < y1 <= frame.height


def test_scatter_svg_places_labels_of_identical_configurations_apart() -> None:
    rows = [
        ResultRow.from_entry(
            ReportEntry.of(make_result([0.5] * 4, config={"chunker": f"fixed:{n}:0"}))
        )
        for n in (100, 200, 300)
    ]
    svg = scatter_svg(rows, "iou", {r.label: config_color(r.label) for r in rows})
    spots = re.findall(r'class="point-label" x="([\d.]+)" y="([\d.]+)"', svg)
    assert len(spots) == 3
    assert len(set(spots)) == 3
