"""The README is the package index's long description: it must read there too."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def _relative_targets(text: str) -> list[str]:
    targets = re.findall(r"\]\(\s*<?([^)\s>]*)", text)
    targets += re.findall(r"""\bsrc\s*=\s*["']([^"']*)""", text)
    return [t for t in targets if not re.match(r"(https?://|#)", t)]


def test_the_check_finds_relative_links_and_images() -> None:
    text = (
        "[a](docs/x.md) ![b](img/y.png) [c](https://x.org) [d](#top) <img src='z.png'>"
    )
    assert _relative_targets(text) == ["docs/x.md", "img/y.png", "z.png"]


def test_readme_has_no_relative_links_or_images() -> None:
    assert _relative_targets(README.read_text(encoding="utf-8")) == []


def test_readme_opens_with_install_and_keeps_the_clone_commands() -> None:
    text = README.read_text(encoding="utf-8")
    install = text.index('pip install "pytest-chunkeval[all]"')
    clone = text.index("## From a clone of the repository")
    assert install < text.index("make demo")
    assert install < clone
    assert "make demo" in text[clone:]
    assert "make test" in text[clone:]
