"""example_project/README.md says what the project holds and how it is run: the
tree it draws, its configuration block, its commands, the CI command and the
table of what the tests show are the project's own, read from its files and the
plugin's and the CLI's parsers (no run). The sample outputs are held by real runs
elsewhere: the warm summary by tests/test_example_project.py, the two "See it
fail" failures by tests/test_docs_ci_in_step.py (support.ci_walkthrough's README
runs).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from pytest_chunkeval.cli.main import build_parser
from pytest_chunkeval.config.options import OPTIONS

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "example_project"
README = (EXAMPLE / "README.md").read_text(encoding="utf-8")
_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def blocks(language: str) -> list[str]:
    return [m.group(2) for m in _BLOCK.finditer(README) if m.group(1) == language]


def commands(text: str = README) -> list[list[str]]:
    """The shell commands of (part of) the README: its bash blocks (comments
    dropped, continued lines joined) and the commands its prose spans show."""
    found = []
    for block in [m.group(2) for m in _BLOCK.finditer(text) if m.group(1) == "bash"]:
        for line in block.replace("\\\n", " ").splitlines():
            line = line.partition("  #")[0].strip()
            if line:
                found.append(shlex.split(line))
    prose = _BLOCK.sub("", text).replace("\n", " ")
    for span in re.findall(r"`((?:pytest|python -m|chroma run) [^`]+)`", prose):
        found.append(shlex.split(span))
    return found


def _tree() -> list[tuple[int, str]]:
    """(depth, name) of each entry of the README's tree of the project."""
    (block,) = [b for b in blocks("") if b.startswith("example_project/\n")]
    entries = []
    for line in block.splitlines()[1:]:
        found = re.match(r"^((?:│   |    )*)[├└]── (\S+)", line)
        assert found, line
        entries.append((len(found.group(1)) // 4, found.group(2)))
    return entries


def test_the_tree_names_files_that_exist() -> None:
    parents: list[str] = []
    named = []
    for depth, name in _tree():
        del parents[depth:]
        path = "/".join([*parents, name.rstrip("/")])
        named.append(path)
        assert (EXAMPLE / path).exists(), path
        if name.endswith("/"):
            parents.append(name.rstrip("/"))
    assert "tests/test_baseline.py" in named
    assert ".github/workflows/retrieval.yml" in named


def test_the_counts_it_gives_are_the_projects() -> None:
    chapters = sorted((EXAMPLE / "handbook").glob("*.md"))
    lines = (EXAMPLE / "tests" / "queries.jsonl").read_text().splitlines()
    questions = [r for r in map(json.loads, filter(None, lines)) if "question" in r]
    assert f"the corpus: {len(chapters)} Markdown chapters" in README
    assert f"{len(questions)} frozen questions" in README
    assert f"holds {len(questions)} questions" in README


def test_the_configuration_block_is_the_pyproject_section() -> None:
    (block,) = blocks("toml")
    text = (EXAMPLE / "pyproject.toml").read_text(encoding="utf-8")
    start = text.index("[tool.pytest.ini_options]\n")
    end = text.find("\n[", start + 1)
    lines = text[start : end if end > 0 else None].strip().splitlines()
    # the block leaves out the comments and pytest's own addopts
    shown = [x for x in lines if x and not x.startswith(("#", "addopts ="))]
    assert block.strip().splitlines() == shown
    assert len(shown) == 9


def test_every_pytest_flag_it_shows_is_the_plugins() -> None:
    flags = {o.flag for o in OPTIONS if o.flag}
    shown = {
        word.partition("=")[0]
        for command in commands()
        for word in command
        if word.startswith("--chunkeval")
    }
    assert {"--chunkeval-update", "--chunkeval-html", "--chunkeval-md"} <= shown
    assert {"--chunkeval-store", "--chunkeval-chunkers"} <= shown
    assert shown <= flags, shown - flags


def test_the_chunkeval_command_parses() -> None:
    [generate] = [c for c in commands() if c[0] == "chunkeval"]
    args = build_parser().parse_args(generate[1:])
    assert args.command == "generate"
    assert (args.corpus, args.n, args.model) == (["handbook"], 150, "gpt-4o-mini")


def test_the_apps_flags_are_its_own() -> None:
    main = (EXAMPLE / "handbook_rag" / "__main__.py").read_text(encoding="utf-8")
    for command in commands():
        if command[:3] == ["python", "-m", "handbook_rag"]:
            for word in command[3:]:
                if word.startswith("--"):
                    assert f'add_argument("{word}"' in main, word


def test_the_ci_command_is_the_workflows() -> None:
    workflow = (EXAMPLE / ".github" / "workflows" / "retrieval.yml").read_text()
    step = workflow[workflow.index("- name: Retrieval tests") :]
    folded = step[step.index("run: >\n") + len("run: >\n") :].split("\n\n")[0]
    run = shlex.split(" ".join(line.strip() for line in folded.splitlines()))
    assert commands(README[README.index("\n## CI\n") :]) == [run]


def _feature_table() -> list[tuple[str, str]]:
    """The rows of "What the tests show": (test, feature)."""
    part = README[README.index("## What the tests show") :]
    rows = [line for line in part.splitlines() if line.startswith("| `")]
    return [(row.split(" | ")[0][2:], row.split(" | ")[1]) for row in rows]


def test_the_feature_table_names_the_projects_tests_and_what_they_use() -> None:
    sources = [*(EXAMPLE / "tests").glob("*.py"), EXAMPLE / "conftest.py"]
    code = "\n".join(path.read_text(encoding="utf-8") for path in sources)
    rows = _feature_table()
    assert len(rows) == 7
    for test, feature in rows:
        name = test.strip("`").split("[")[0]
        assert (
            (EXAMPLE / "tests" / name).exists()
            or (EXAMPLE / name).exists()
            or (f"def {name}(" in code)
        ), name
        for span in re.findall(r"`([^`]+)`", feature):
            if "/" in span:  # a path
                assert (EXAMPLE / span).exists(), span
                continue
            words = re.findall(r"[A-Za-z_][\w.]*", re.sub(r"\"[^\"]*\"", "", span))
            for word in words:
                assert word in code, (test, span, word)
