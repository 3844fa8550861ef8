"""docs/ci.md's walk-through ("The workflow, as you will see it") replayed on a
copy of example_project/: the runs its steps 1 to 7 show, and
example_project/README.md's "See it fail" runs, with the real all-MiniLM-L6-v2
and in-process Chroma, and the page's blocks to compare them with."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from support.project_runs import run_pytest, user_env

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "example_project"
CI_MD = ROOT / "docs" / "ci.md"
RETRIEVER_BASELINE = "tests/__chunkeval__/test_baseline/test_retriever_baseline.json"
RETRIEVER_TEST = "tests/test_baseline.py::test_retriever_baseline"

_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def step_text(heading: str) -> str:
    """The part of ci.md under ``heading`` (up to the next ``###`` or ``##``
    heading; a ``#`` line inside a fenced block is not one)."""
    text = CI_MD.read_text(encoding="utf-8")
    start = text.index(heading)
    lines = text[start:].splitlines(keepends=True)
    fenced, end = False, len(lines)
    for n, line in enumerate(lines[1:], start=1):
        fenced ^= line.startswith("```")
        if not fenced and line.startswith(("## ", "### ")):
            end = n
            break
    return "".join(lines[:end])


def text_blocks(heading: str) -> list[str]:
    """The ```text blocks of one step of the walk-through."""
    return [
        m.group(2) for m in _BLOCK.finditer(step_text(heading)) if m.group(1) == "text"
    ]


def failure_lines(output: str) -> list[str]:
    """The ``E`` lines of a pytest run's failures, without pytest's indentation
    and the exception's module path (``pytest_chunkeval...BaselineMissing:``
    reads ``BaselineMissing:``)."""
    lines = [line for line in output.splitlines() if line.startswith("E")]
    return [re.sub(r"^E\s+(?:[\w.]+\.)(?=\w+: )", "E   ", line) for line in lines]


def summary_section(output: str) -> list[str]:
    """The terminal summary's chunkeval section, up to its ``baselines:`` line."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "- chunkeval -" in line)
    end = next(
        i for i, line in enumerate(lines) if i > start and line.startswith("baselines:")
    )
    return lines[start : end + 1]


def _set_max_chars(project: Path, max_chars: int) -> None:
    ingest = project / "handbook_rag" / "ingest.py"
    text = ingest.read_text(encoding="utf-8")
    new, n = re.subn(
        r"^DEFAULT_MAX_CHARS = \d+$",
        f"DEFAULT_MAX_CHARS = {max_chars}",
        text,
        flags=re.M,
    )
    assert n == 1, ingest
    ingest.write_text(new, encoding="utf-8")


PARAGRAPH = (
    "\n## Document history\n\nThis chapter was last reviewed in March 2026 by the "
    "People Operations team. Send corrections to the handbook owners.\n"
)
"""Step 7's docs edit: appended to every chapter, it answers no question."""


def _append_to_every_chapter(project: Path, text: str) -> dict[Path, str]:
    """Append ``text`` to each chapter; returns the chapters as they were."""
    before = {}
    for chapter in sorted((project / "handbook").glob("*.md")):
        before[chapter] = chapter.read_text(encoding="utf-8")
        chapter.write_text(before[chapter] + text, encoding="utf-8")
    return before


def _step_7_edit() -> str:
    """The sections step 7 appends to welcome.md (its ```markdown block)."""
    step = step_text("### 7. The docs or the configuration change")
    (edit,) = [m.group(2) for m in _BLOCK.finditer(step) if m.group(1) == "markdown"]
    return edit


def walk_through(root: Path) -> dict[str, str]:
    """Steps 1 to 7 on a copy of the example project under ``root``, one shared
    embedding cache: step name -> the run's output (and ``"md"``: step 3's
    Markdown report; ``"7"``, ``"7 exit"``: step 7's paragraph appended to every
    chapter, its output and exit code; ``"7 edit"``, ``"7 md"``: step 7's edit of
    welcome.md, its output and Markdown report; ``"readme-700"``,
    ``"readme-1500"``: example_project/README.md's "See it fail" runs). Step 7 and
    the README's runs are made after step 2, against the committed baselines."""
    project = root / "example"
    shutil.copytree(
        EXAMPLE,
        project,
        ignore=shutil.ignore_patterns(
            ".chunkeval", "__pycache__", "report.html", "retrieval-summary.md"
        ),
    )
    env = user_env(root / "cache", columns=80)

    def run(*args: str) -> str:
        done = run_pytest(project, *args, env=env)
        return done.stdout + done.stderr

    out: dict[str, str] = {}
    (project / RETRIEVER_BASELINE).unlink()
    out["1"] = run(RETRIEVER_TEST)
    out["2"] = run("--chunkeval-update", "tests/test_baseline.py")
    chapters = _append_to_every_chapter(project, PARAGRAPH)
    done = run_pytest(project, "tests/test_baseline.py", env=env)
    out["7"], out["7 exit"] = done.stdout + done.stderr, str(done.returncode)
    for chapter, text in chapters.items():
        chapter.write_text(text, encoding="utf-8")
    welcome = project / "handbook" / "welcome.md"
    before = welcome.read_text(encoding="utf-8")
    welcome.write_text(before + "\n" + _step_7_edit(), encoding="utf-8")
    md = root / "step-7.md"
    out["7 edit"] = run(RETRIEVER_TEST, f"--chunkeval-md={md}")
    out["7 md"] = md.read_text(encoding="utf-8") if md.exists() else ""
    welcome.write_text(before, encoding="utf-8")
    # example_project/README.md, "See it fail": against the committed baselines
    _set_max_chars(project, 700)
    out["readme-700"] = run()
    _set_max_chars(project, 1500)
    out["readme-1500"] = run("tests/test_retriever.py")
    _set_max_chars(project, 120)
    md = root / "retrieval-summary.md"
    out["3"] = run("tests/test_baseline.py", f"--chunkeval-md={md}")
    out["md"] = md.read_text(encoding="utf-8") if md.exists() else ""
    _set_max_chars(project, 200)
    out["5"] = run(RETRIEVER_TEST)
    _set_max_chars(project, 120)
    out["6"] = run("--chunkeval-update", RETRIEVER_TEST)
    return out
