"""Markdown tables from untrusted text: the cells and the results table that the
Markdown report and the gate's Markdown sections share."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pytest_chunkeval.core.metric_names import header
from pytest_chunkeval.gate.outcome.rows import label_tests
from pytest_chunkeval.reporting.rows import (
    ResultRow,
    chunk_cell,
    mean_std_cell,
    table_metrics,
)

_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|mailto|javascript|data|www)([:.])")


def md_cell(text: str) -> str:
    """One table cell from untrusted text (test ids, questions, corpus text): a
    ``|`` or a line break would end the cell or the row, HTML (``<b>``, ``<img
    ...>``) and link or image syntax (``[click](javascript:…)``, ``![img](http:…)``,
    a bare ``https://…`` that GitHub links by itself) would be live in a job
    summary: all of it shows as the characters typed."""
    text = " ".join(text.splitlines()) if text else text
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
    # an inline link or image needs "](" (a reference link, a definition the
    # report never holds); an autolink, a scheme or "www." as typed
    text = text.replace("](", "]\\(")
    return _AUTOLINK.sub(r"\1\\\2", text)


def md_table(
    headers: Sequence[str], rows: Sequence[Sequence[str]], text: int = 2
) -> str:
    lines = [
        "| " + " | ".join(md_cell(h) for h in headers) + " |",
        "|"
        + "|".join(":---" if i < text else "---:" for i in range(len(headers)))
        + "|",
    ]
    lines += ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def result_rows(rows: Sequence[ResultRow]) -> tuple[list[str], list[list[str]]]:
    columns = table_metrics(rows)
    headers = [
        "Test",
        "Configuration",
        *(header(m) for m in columns),
        "Chunk size",
        "Queries",
    ]
    body = [
        [
            label_tests(r.tests),
            r.shown,
            *(mean_std_cell(r, m) for m in columns),
            chunk_cell(r),
            str(r.n),
        ]
        for r in rows
    ]
    return headers, body
