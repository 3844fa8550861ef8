"""The docs' generated sections are committed (they read without a build) and fresh."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def gen(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(ROOT))
    from docs.hooks import generate

    return generate


def test_committed_sections_match_the_code(gen: ModuleType) -> None:
    if sys.version_info[:2] != gen.GENERATED_WITH:
        pytest.skip(f"the docs are generated on Python {gen.GENERATED_WITH}")
    done = subprocess.run(
        [sys.executable, "-m", "docs.hooks.generate", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


def test_no_page_holds_a_directive_without_its_end_marker(gen: ModuleType) -> None:
    for page in gen.pages():
        sections = gen.sections(page.read_text(encoding="utf-8"), str(page))
        assert all(s.body is not None for s in sections), page
    assert sum(len(gen.sections(p.read_text(encoding="utf-8"))) for p in gen.pages())


GRAMMAR = "<!-- chunkeval:spec-grammar -->"


def test_a_stale_section_names_the_page_and_the_command(
    gen: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        f"# Title\n\n{GRAMMAR}\n\nold text\n\n<!-- /chunkeval:spec-grammar -->\n"
        "\nafter\n",
        encoding="utf-8",
    )
    assert gen.main(["--check", str(page)]) == 1
    err = capsys.readouterr().err
    assert f"{page}:3: the generated section {GRAMMAR} is stale" in err
    assert "run make docs-gen (or: python -m docs.hooks.generate)" in err
    assert "old text" in page.read_text(encoding="utf-8")  # --check writes nothing

    assert gen.main([str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "old text" not in text
    assert text.startswith(f"# Title\n\n{GRAMMAR}\n\n```text\n")
    assert text.endswith("```\n\n<!-- /chunkeval:spec-grammar -->\n\nafter\n")
    assert gen.main(["--check", str(page)]) == 0
    assert gen.main([str(page)]) == 0
    assert page.read_text(encoding="utf-8") == text  # a second run changes nothing


def test_a_new_directive_gets_its_end_marker(gen: ModuleType, tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(f"{GRAMMAR}\n\n{GRAMMAR}\n\n<!-- /chunkeval:spec-grammar -->\n")
    assert gen.main(["--check", str(page)]) == 1
    assert gen.main([str(page)]) == 0
    sections = gen.sections(page.read_text(encoding="utf-8"))
    assert [s.body is not None for s in sections] == [True, True]
    assert sections[0].body == sections[1].body


def test_a_marker_inside_a_sentence_is_an_example(gen: ModuleType) -> None:
    text = f"Write `{GRAMMAR}` on a line of its own.\n"
    assert gen.sections(text) == []
    assert gen.regenerate(text) == (text, [])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (f"{GRAMMAR}\nx\n<!-- /include -->\n", "is closed by <!-- /include -->"),
        ("x\n<!-- /include -->\n", "an end marker <!-- /... --> without its begin"),
        ("<!-- chunkeval:nothing -->\n", "unknown directive <!-- chunkeval:nothing"),
        ("<!-- include: no/such.file -->\n", "include: no file no/such.file"),
    ],
)
def test_malformed_pages_fail_with_the_page(
    gen: ModuleType, text: str, message: str
) -> None:
    with pytest.raises(gen.GenerateError, match=r"^page\.md") as info:
        gen.regenerate(text, "page.md")
    assert message in str(info.value)


def test_the_mkdocs_hook_does_not_expand_a_section_twice(gen: ModuleType) -> None:
    pytest.importorskip("mkdocs")
    page = ROOT / "docs" / "stores.md"
    text = page.read_text(encoding="utf-8")
    fake = SimpleNamespace(file=SimpleNamespace(src_uri="stores.md"))
    assert gen.on_page_markdown(text, fake) == text
