"""Generated sections of the docs, committed so that the Markdown reads without a build.

A page marks each generated section with a begin/end pair of HTML comments (invisible
on GitHub and in the site); the text between them is the output of the directive::

    <!-- chunkeval:options -->

    | setting | value | default | description |
    ...

    <!-- /chunkeval:options -->

Directives (renderers in ``config_reference.py``): ``chunkeval:options``,
``chunkeval:marker``, ``chunkeval:cli``, ``chunkeval:hookspecs``,
``chunkeval:forms KIND``, ``chunkeval:spec-grammar`` and
``include: PATH [from="TEXT"] [to="TEXT"] [lang=LANG] [raw] [optional]``; the end
marker is ``<!-- /NAME -->`` (``<!-- /include -->``). A new directive may be written
without its end marker: the next run adds it.

    python -m docs.hooks.generate            # rewrite every page's sections
    python -m docs.hooks.generate --check    # exit 1 naming each stale section
    make docs-gen                            # the first command

Also the MkDocs hook (``mkdocs.yml``): at build time it renders each section afresh
and, if the committed text differs, warns (``mkdocs build --strict`` then fails)
with the command that updates it.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:  # run as ``python -m docs.hooks.generate`` from the repository
    from docs.hooks import config_reference as ref
except ImportError:  # loaded by MkDocs from its file, with this folder on sys.path
    import config_reference as ref  # type: ignore[no-redef,import-not-found]

ROOT = ref.ROOT
DOCS = ROOT / "docs"
FIX_COMMAND = "make docs-gen (or: python -m docs.hooks.generate)"
GENERATED_WITH = (3, 11)
"""The Python the committed sections come from: argparse formats ``--help``
differently on other versions (``options:`` / ``optional arguments:``), so the
staleness check runs on this one only."""

RENDERERS: dict[str, Callable[[str], str]] = {
    "chunkeval:options": lambda _: ref.render_options(),
    "chunkeval:marker": lambda _: ref.render_marker(),
    "chunkeval:cli": lambda _: ref.render_cli(),
    "chunkeval:hookspecs": lambda _: ref.render_hookspecs(),
    "chunkeval:forms": lambda args: ref.render_forms(args.strip()),
    "chunkeval:spec-grammar": lambda _: ref.render_spec_grammar(),
    "include:": ref.render_include,
}

# A marker is a line of its own (one in a sentence or in `code` is an example).
_BEGIN = re.compile(r"^<!--\s*(chunkeval:[\w-]+|include:)(.*?)-->[ \t]*$", re.M)
_END = re.compile(r"^<!--\s*/(chunkeval:[\w-]+|include)\s*-->[ \t]*$", re.M)


class GenerateError(ValueError):
    """A directive that cannot be rendered, or a marker without its pair."""


@dataclass(frozen=True)
class Section:
    """One directive of a page: ``text[start:end]`` is the whole section (begin
    marker, body, end marker; just the begin marker when it has no end yet)."""

    name: str
    args: str
    begin: str
    body: str | None  # None: no end marker yet
    start: int
    end: int
    line: int

    @property
    def end_marker(self) -> str:
        return f"<!-- /{self.name.rstrip(':')} -->"

    def written(self, generated: str) -> str:
        """The section with ``generated`` between its markers."""
        return f"{self.begin}\n\n{generated.strip()}\n\n{self.end_marker}"


def sections(text: str, where: str = "") -> list[Section]:
    """The directives of a page, in order."""
    begins = list(_BEGIN.finditer(text))
    found: list[Section] = []
    for i, begin in enumerate(begins):
        name = begin.group(1)
        # An end marker belongs to the nearest begin before it.
        limit = begins[i + 1].start() if i + 1 < len(begins) else len(text)
        end = _END.search(text, begin.end(), limit)
        line = text.count("\n", 0, begin.start()) + 1
        if end is not None and end.group(1) != name.rstrip(":"):
            raise GenerateError(
                f"{where}:{line}: <!-- {name} --> is closed by {end.group(0)}"
            )
        found.append(
            Section(
                name=name,
                args=begin.group(2),
                begin=begin.group(0),
                body=None if end is None else text[begin.end() : end.start()],
                start=begin.start(),
                end=begin.end() if end is None else end.end(),
                line=line,
            )
        )
    if len(_END.findall(text)) != sum(s.body is not None for s in found):
        raise GenerateError(f"{where}: an end marker <!-- /... --> without its begin")
    return found


def render(section: Section, where: str = "") -> str:
    """The generated Markdown of a section."""
    renderer = RENDERERS.get(section.name)
    if renderer is None:
        raise GenerateError(
            f"{where}:{section.line}: unknown directive <!-- {section.name} --> "
            f"(known: {', '.join(RENDERERS)})"
        )
    try:
        return renderer(section.args)
    except (ValueError, ImportError) as exc:
        raise GenerateError(f"{where}:{section.line}: {exc}") from exc


def regenerate(text: str, where: str = "") -> tuple[str, list[Section]]:
    """The page with every section rendered afresh, and the sections that changed
    (stale, or without their end marker)."""
    out: list[str] = []
    stale: list[Section] = []
    last = 0
    for section in sections(text, where):
        written = section.written(render(section, where))
        if text[section.start : section.end] != written:
            stale.append(section)
        out += [text[last : section.start], written]
        last = section.end
    out.append(text[last:])
    return "".join(out), stale


def pages(root: Path = DOCS) -> list[Path]:
    return sorted(p for p in root.rglob("*.md") if "hooks" not in p.parts)


def _name(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def stale_message(where: str, section: Section) -> str:
    state = "is stale" if section.body is not None else "has no end marker yet"
    return (
        f"{where}:{section.line}: the generated section <!-- {section.name}"
        f"{section.args.rstrip()} --> {state}: run {FIX_COMMAND}"
    )


class _Warnings(logging.Handler):
    """Collects the renderers' warnings (each fails ``mkdocs build --strict``)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m docs.hooks.generate",
        description="Write the generated sections of the docs (docs/**/*.md).",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and name each section whose text is stale",
    )
    parser.add_argument(
        "pages", nargs="*", type=Path, help="pages to process (default: docs/)"
    )
    args = parser.parse_args(argv)
    warnings = _Warnings()
    ref.log.addHandler(warnings)
    problems: list[str] = []
    try:
        for path in args.pages or pages():
            where = _name(path)
            text = path.read_text(encoding="utf-8")
            try:
                fresh, stale = regenerate(text, where)
            except GenerateError as exc:
                problems.append(str(exc))
                continue
            if args.check:
                problems += [stale_message(where, s) for s in stale]
            elif fresh != text:
                path.write_text(fresh, encoding="utf-8")
                print(f"{where}: {len(stale)} section(s) updated")
    finally:
        ref.log.removeHandler(warnings)
    problems += [f"warning: {m}" for m in warnings.messages]
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


# ---------------------------------------------------------------- MkDocs hook


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """Each section rendered afresh (the site matches the code it is built from);
    committed text that differs is a warning, so ``--strict`` fails on it."""
    from mkdocs.exceptions import PluginError

    where = f"docs/{page.file.src_uri}"
    try:
        fresh, stale = regenerate(markdown, where)
    except GenerateError as exc:
        raise PluginError(str(exc)) from exc
    for section in stale:
        ref.log.warning(stale_message(where, section))
    return fresh


def on_serve(server: Any, config: Any, builder: Any) -> Any:
    """``mkdocs serve``: rebuild when the plugin's definitions or the example
    project change."""
    for watched in ("pytest_chunkeval", "example_project"):
        server.watch(str(ROOT / watched))
    return server


if __name__ == "__main__":
    sys.exit(main())
