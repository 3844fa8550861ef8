"""The docs' code spans show what is typed, so none holds a Markdown
backslash escape or an HTML entity (GitHub would show the backslash: the
generated configuration reference had 29 such spans)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [*ROOT.glob("docs/*.md"), *ROOT.glob("docs/reference/*.md"), ROOT / "README.md"]
)
ESCAPED = re.compile(r"\\[_*\[\]<>#`]|&lt;|&gt;|&amp;")


def code_spans(text: str) -> list[str]:
    """The inline code spans of a Markdown page (fenced blocks left out)."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return [m.group(2) for m in re.finditer(r"(`+)(.+?)\1", prose)]


def test_the_check_finds_an_escape_in_a_code_span() -> None:
    spans = code_spans("a `chunkeval\\_corpus` b `x_y` \\_ c\n```\n`a\\_b`\n```\n")
    assert spans == ["chunkeval\\_corpus", "x_y"]
    assert [s for s in spans if ESCAPED.search(s)] == ["chunkeval\\_corpus"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_code_span_holds_an_escape(page: Path) -> None:
    spans = code_spans(page.read_text(encoding="utf-8"))
    assert [s for s in spans if ESCAPED.search(s)] == []


def test_the_generator_keeps_code_spans_and_escapes_the_rest() -> None:
    from docs.hooks.config_reference import _cell

    assert _cell("see `chunkeval_corpus` or __init__ <x> a|b `a|b`") == (
        "see `chunkeval_corpus` or \\_\\_init\\_\\_ &lt;x&gt; a\\|b `a\\|b`"
    )


def test_the_readme_names_the_tested_torch_version_of_the_constraints() -> None:
    pins = (ROOT / "constraints.txt").read_text(encoding="utf-8")
    found = re.search(r"^torch==(\S+)", pins, re.M)
    assert found is not None
    version = found.group(1)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme[readme.index("## Install") : readme.index("## A first test")]
    assert f"torch {version} (CPU)" in install
    assert f'pip install "torch=={version}" --index-url ' in install
    assert "https://download.pytorch.org/whl/cpu" in install
