"""Plain-text tables, shared by the gate's messages, the terminal summary and the
reports (below all of them)."""

from __future__ import annotations

from collections.abc import Collection, Sequence


def format_rows(
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    text_columns: int | Collection[int] = 1,
    rule: bool = True,
) -> str:
    """Columns padded to their widest cell: the first ``text_columns`` (or the
    columns of the indexes given) left-aligned, the rest (numbers) right-aligned;
    ``rule`` underlines the header."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def left(i: int) -> bool:
        if isinstance(text_columns, int):
            return i < text_columns
        return i in text_columns

    def line(cells: Sequence[str]) -> str:
        out = [
            c.ljust(w) if left(i) else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(out).rstrip()

    lines = [line(headers)]
    if rule:
        lines.append("  ".join("-" * w for w in widths))
    return "\n".join([*lines, *(line(r) for r in rows)])


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 query``, ``2 queries``, ``0 questions``: a count with its noun."""
    return f"{n} {one if n == 1 else (many or one + 's')}"
