"""The renderers of the docs' generated sections, from the plugin's own definitions.

``generate.py`` (``make docs-gen``) writes their output into the committed pages,
between a directive's begin and end markers, so the docs cannot drift from the code:

``<!-- chunkeval:options -->``
    every ini key, ``--chunkeval-*`` flag and ``chunkeval`` command flag of the
    option table (``config.options.OPTIONS``), checked against what
    ``plugin.pytest_addoption`` registers and what the CLI's parsers hold;
``<!-- chunkeval:marker -->``
    every ``@pytest.mark.chunkeval`` keyword, from ``session.MARKER_KEYWORDS``;
``<!-- chunkeval:cli -->``
    the ``chunkeval`` command's ``--help`` of every subcommand;
``<!-- chunkeval:hookspecs -->``
    the ``pytest_chunkeval_*`` hooks with their docstrings;
``<!-- chunkeval:forms KIND -->``
    the spec forms registered for ``chunkers``, ``embedders`` or ``stores``;
``<!-- include: PATH [from="TEXT"] [to="TEXT"] [lang=LANG] [raw] [optional] -->``
    a file of the repository (e.g. the example project), from the first line
    containing ``from`` to the first later line containing ``to``, as a code block
    (``raw``: inlined as Markdown, for tables a benchmark script wrote;
    ``optional``: a missing file gives a note instead of failing the build).

An unknown directive, a missing file or a ``from``/``to`` that matches nothing fails
with the page's name.
"""

from __future__ import annotations

import argparse
import inspect
import logging
import os
import re
import shlex
from pathlib import Path
from typing import Any

# A warning here fails `mkdocs build --strict`: used when the code has something
# the generated pages cannot describe.
log = logging.getLogger("mkdocs.plugins.chunkeval")

ROOT = Path(__file__).resolve().parents[2]

_DIRECTIVE = re.compile(r"<!--\s*(chunkeval:[\w-]+|include:)(.*?)-->", re.DOTALL)
_LANGS = {
    ".py": "python",
    ".toml": "toml",
    ".yml": "yaml",
    ".yaml": "yaml",
    ".jsonl": "json",
    ".json": "json",
    ".md": "markdown",
    ".cfg": "ini",
}


# ------------------------------------------------------------------- options


class _Recorder:
    """Stands in for pytest's ``Parser`` (and its option groups): records what
    ``pytest_addoption`` registers, without pytest's private API."""

    def __init__(self) -> None:
        self.flags: list[tuple[tuple[str, ...], dict[str, Any]]] = []
        self.inis: dict[str, dict[str, Any]] = {}

    def getgroup(self, name: str, description: str = "", after: Any = None) -> Any:
        return self

    def addoption(self, *names: str, **attrs: Any) -> None:
        self.flags.append((names, attrs))

    def _addoption(self, *names: str, **attrs: Any) -> None:
        self.addoption(*names, **attrs)

    def addini(
        self, name: str, help: str, type: Any = None, default: Any = None, **_: Any
    ) -> None:
        self.inis[name] = {"help": help, "type": type or "string", "default": default}


_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def _cell(text: object) -> str:
    """Plain text for a table cell: one line, and nothing Markdown or HTML would
    read as markup (``<rootdir>``, ``__chunkeval__``, ``'*'``). Code spans are
    kept as written: a backslash or an entity inside one shows as typed (only a
    ``|`` is escaped there, which GitHub's tables read before the span)."""
    flat = " ".join(str(text).split())
    out, last = [], 0
    for match in _CODE_SPAN.finditer(flat):
        out.append(_plain(flat[last : match.start()]))
        out.append(_code_in_table(match.group(0)))
        last = match.end()
    out.append(_plain(flat[last:]))
    return "".join(out)


def _plain(text: str) -> str:
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for char in "\\*_|":
        text = text.replace(char, "\\" + char)
    return text


def _code_in_table(span: str) -> str:
    """A code span in a table cell: only its ``|`` escaped."""
    return span.replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def render_options() -> str:
    """One row per setting the plugin registers with pytest: its ini key and/or
    flag, with value form, default and help from ``settings.OPTIONS``."""
    from pytest_chunkeval import plugin
    from pytest_chunkeval.config.options import OPTIONS

    recorder = _Recorder()
    plugin.pytest_addoption(recorder)  # type: ignore[arg-type]
    cli = _cli_flags()
    options = {o.dest: o for o in OPTIONS}
    flags = {str(a.get("dest")): (names, a) for names, a in recorder.flags}
    # ini keys and flag dests share a name (chunkeval_<name>): the join key.
    keys = list(dict.fromkeys([*options, *flags, *recorder.inis]))
    rows = ["| setting | value | default | description |", "|---|---|---|---|"]
    for key in keys:
        option = options.get(key)
        flag = flags.get(key)
        ini = recorder.inis.get(key)
        help_text = option.describe("docs") if option else attrs_help(flag, ini)
        if flag is None and ini is None:
            log.warning(
                "option %s is in settings.OPTIONS but the plugin does not register "
                "it with pytest: not documented",
                key,
            )
            continue
        names, attrs = flag if flag is not None else ((), {})
        # ini key above its flag(s): a narrow first column leaves room for help.
        where = [_code(str(key)) if ini is not None else "(no ini key)"]
        # --flag=VALUE: pytest reads a path given after a space as a test path
        # when it picks its rootdir (docs/troubleshooting.md).
        value = "" if _switch(option, attrs) else "=" + _metavar(option, attrs)
        where += [_code(n + value) for n in names] or ["(no flag)"]
        where += [_code(f) for f in cli.get(str(key), [])]
        default = _default(option, attrs, ini)
        rows.append(
            "| "
            + " | ".join(
                [
                    "<br>".join(where),
                    _value_text(option, attrs, ini),
                    _default_cell(default),
                    _cell(help_text),
                ]
            )
            + " |"
        )
    return "\n".join(rows)


def _cli_flags() -> dict[str, list[str]]:
    """dest -> the ``chunkeval`` subcommand flags that set it (the table's dests
    are shared by pytest and the CLI)."""
    from pytest_chunkeval.cli.main import build_parser

    found: dict[str, list[str]] = {}

    def walk(parser: argparse.ArgumentParser, prefix: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{prefix} {name}")
            elif action.dest.startswith("chunkeval_") and action.option_strings:
                flag = f"{prefix} {action.option_strings[0]}"
                found.setdefault(action.dest, []).append(flag)

    walk(build_parser(), "chunkeval")
    return found


def attrs_help(
    flag: tuple[tuple[str, ...], dict[str, Any]] | None, ini: dict[str, Any] | None
) -> str:
    """Help text of an option ``settings.OPTIONS`` does not describe."""
    if flag is not None and flag[1].get("help"):
        return str(flag[1]["help"])
    return str(ini["help"]) if ini else ""


def _value_text(option: Any, attrs: dict[str, Any], ini: dict[str, Any] | None) -> str:
    if _switch(option, attrs):
        return "`true`/`false` (the flag takes no value)" if ini else "(switch)"
    text = _code(_metavar(option, attrs))
    ini_type = ini.get("type") if ini else None
    if ini_type in ("args", "linelist"):
        text += " (list)"
    if getattr(option, "multiple", False) or attrs.get("action") == "append":
        text += ", flag repeatable"
    return text


def _metavar(option: Any, attrs: dict[str, Any]) -> str:
    return str(getattr(option, "metavar", None) or attrs.get("metavar") or "VALUE")


def _is_switch(attrs: dict[str, Any]) -> bool:
    return attrs.get("action") in ("store_true", "store_false", "count")


def _switch(option: Any, attrs: dict[str, Any]) -> bool:
    return bool(getattr(option, "switch", False)) or _is_switch(attrs)


def _default_text(value: object) -> str:
    if value in (None, "", [], (), False):
        return ""
    return str(value)


def _default_cell(default: str) -> str:
    """A value as code; a sentence describing the default as text."""
    if not default:
        return "(unset)"
    return _cell(default) if " " in default else _code(default)


def _default(option: Any, attrs: dict[str, Any], ini: dict[str, Any] | None) -> str:
    if option is not None and option.default_text:
        return str(option.default_text)
    if _switch(option, attrs):
        return "off"
    return _default_text(ini.get("default") if ini else attrs.get("default"))


# -------------------------------------------------------------------- marker

_MARKER_MEANINGS = {
    "baseline": "`True`: compare every result the test produced with its baseline "
    "file after the test, as `chunkeval.check_baseline(result)` does (see "
    "[baselines](../baselines.md)).",
    "per_question": "`True`: one test item per question of the query set (ids "
    "from query ids), the test's results evaluated once and each item judged on "
    "its own question only (see [one test case per question]"
    "(../ci.md#one-test-case-per-question)).",
}
"""Keywords that are neither a setting nor a threshold. A new keyword without an
entry here (or a docstring on its validator) fails the strict build."""

_MARKER_VALUES = {
    "baseline": "bool",
    "per_question": "bool",
    "corpus": "path, glob, or list of them",
    "queries": "path",
    "benchmark": "name",
    "k": 'int or `"min"`',
    "budget": "int (units per query)",
    "unit": '`"token"` or `"char"`',
    "embedder": "spec string",
    "store": "spec string",
    "tokenizer": "spec string",
}


_MARKER_SCOPE = {
    "tolerance": "Replaces `chunkeval_tolerance` for this test's baseline "
    "checks, per-question items included (a call's `tolerance=` overrides it "
    "metric by metric).",
    "gate_mode": "Replaces `chunkeval_gate_mode` for this test's baseline "
    "checks, per-question items included (a call's `mode=` wins).",
    "gate_confidence": "Replaces `chunkeval_gate_confidence` for this test's "
    "baseline checks, per-question items included (a call's `confidence=` wins).",
    "gate_by": "Replaces `chunkeval_gate_by` for this test's baseline checks, "
    "per-question items included (a call's `gate_by=` wins).",
}
"""The gate's settings the marker takes apply to the test's baseline checks
(run/marker.py GATE_KEYWORDS), not to its evaluations."""


def render_marker() -> str:
    from pytest_chunkeval.config.options import OPTIONS_BY_NAME
    from pytest_chunkeval.run.marker import (
        MARKER_KEYWORDS,
        QUESTION_THRESHOLDS,
        THRESHOLDS,
    )

    rows = ["| keyword | value | meaning |", "|---|---|---|"]
    for key, validator in MARKER_KEYWORDS.items():
        if key in QUESTION_THRESHOLDS:
            value = "number in [0, 1]"
            meaning = (
                f"with `per_question=True`: fail the item if its question's "
                f"{QUESTION_THRESHOLDS[key]} is below this"
            )
        elif key in THRESHOLDS:
            value = "number in [0, 1]"
            meaning = (
                f"fail the test if the mean {THRESHOLDS[key]} of any result it "
                "produced is below this"
            )
        elif key in OPTIONS_BY_NAME:
            option = OPTIONS_BY_NAME[key]
            value = _MARKER_VALUES.get(key, option.metavar)
            scope = _MARKER_SCOPE.get(key, f"Replaces `{option.ini}` for this test.")
            meaning = f"{option.describe()} {scope}"
        else:
            value = _MARKER_VALUES.get(key, "")
            doc = (inspect.getdoc(validator) or "").split("\n\n")[0]
            meaning = _MARKER_MEANINGS.get(key, doc)
            if not meaning:
                log.warning(
                    "marker keyword %r has no description: add it to "
                    "_MARKER_MEANINGS in docs/hooks/config_reference.py",
                    key,
                )
        rows.append(f"| `{key}=` | {value} | {_cell(meaning)} |")
    from pytest_chunkeval.run.marker import MARKER_HELP

    # a paragraph after the table: the code span as written
    rows.append(f"\n`pytest --markers` shows: `@pytest.mark.{MARKER_HELP}`")
    return "\n".join(rows)


# ----------------------------------------------------------------------- cli


def render_cli() -> str:
    from pytest_chunkeval.cli.main import build_parser

    parser = build_parser()
    parts: list[str] = []
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"  # argparse wraps at the terminal width
    try:
        parts.append(_help_block("chunkeval", parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    parts.append(_help_block(f"chunkeval {name}", sub))
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return "\n\n".join(parts)


def _help_block(title: str, parser: argparse.ArgumentParser) -> str:
    return f"### `{title}`\n\n```text\n{parser.format_help().rstrip()}\n```"


# ---------------------------------------------------------------- hookspecs


def render_hookspecs() -> str:
    from pytest_chunkeval import hookspecs

    parts = []
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction):
        if not name.startswith("pytest_chunkeval_"):
            continue
        params = ", ".join(inspect.signature(fn).parameters)
        doc = inspect.getdoc(fn) or ""
        parts.append(f"### `{name}({params})`\n\n{doc}")
    return "\n\n".join(parts)


# -------------------------------------------------------------------- forms


def render_forms(kind: str) -> str:
    from pytest_chunkeval.chunkers import CHUNKERS
    from pytest_chunkeval.embedders.registry import EMBEDDERS
    from pytest_chunkeval.stores import STORES
    from pytest_chunkeval.tokenizers.base import TOKENIZERS

    registries: dict[str, Any] = {
        "chunkers": CHUNKERS,
        "embedders": EMBEDDERS,
        "stores": STORES,
        "tokenizers": TOKENIZERS,
    }
    if kind not in registries:
        raise ValueError(
            f"unknown registry {kind!r} (chunkers, embedders, stores, tokenizers)"
        )
    return "\n".join(f"- `{form}`" for form in registries[kind].forms())


def render_spec_grammar() -> str:
    from pytest_chunkeval.config.specs import SPEC_GRAMMAR

    return f"```text\n{SPEC_GRAMMAR}\n```"


# ------------------------------------------------------------------ include


def render_include(args: str) -> str:
    words = shlex.split(args)
    if not words:
        raise ValueError("include: needs a path")
    path = ROOT / words[0]
    switches = {w for w in words[1:] if "=" not in w}
    options = dict(w.split("=", 1) for w in words[1:] if "=" in w)
    unknown = (set(options) - {"from", "to", "lang"}) | (switches - {"raw", "optional"})
    if unknown:
        raise ValueError(f"include: unknown option(s) {sorted(unknown)}")
    if not path.is_file():
        if "optional" in switches:
            return (
                f'!!! note "Not generated yet"\n    `{words[0]}` does not exist in '
                "this checkout; the command above writes it."
            )
        raise ValueError(f"include: no file {words[0]} (relative to {ROOT})")
    lines = path.read_text(encoding="utf-8").splitlines()
    start, end = 0, len(lines)
    if "from" in options:
        start = _find(lines, options["from"], 0, words[0])
    if "to" in options:
        end = _find(lines, options["to"], start + 1, words[0]) + 1
    body = "\n".join(lines[start:end]).rstrip()
    if "raw" in switches:  # the file is Markdown: inline it as is
        return body
    lang = options.get("lang", _LANGS.get(path.suffix, ""))
    return f"```{lang}\n{body}\n```"


def _find(lines: list[str], needle: str, start: int, where: str) -> int:
    for i in range(start, len(lines)):
        if needle in lines[i]:
            return i
    raise ValueError(f"include: {needle!r} not found in {where}")
