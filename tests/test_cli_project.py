"""The ``chunkeval`` command inside a configured project: it reads the project's
pytest configuration (every file pytest reads, found as pytest finds it), resolves
its paths against the rootdir from any subdirectory, knows the names its rootdir
``conftest.py`` registers, and lets flags override; and the reranker setting of
the plugin (ini key, flag, marker)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from support.plugin_project import FAST, write_project

from pytest_chunkeval.chunkers import CHUNKERS
from pytest_chunkeval.cli.main import main

# The project's own chunker, registered by its conftest only.
CONFTEST = """\
from pytest_chunkeval.chunkers import as_chunker


def paragraphs(text):
    spans, start = [], 0
    for block in text.split("\\n\\n"):
        if block.strip():
            spans.append((start, start + len(block)))
        start += len(block) + 2
    return spans


def pytest_chunkeval_register_chunkers(registry):
    make = lambda rest: as_chunker(paragraphs, name="paragraphs")
    registry.register("paragraphs", make, "paragraphs")
"""

SETTINGS = {
    "chunkeval_corpus": "docs",
    "chunkeval_queries": "queries.jsonl",
    "chunkeval_embedder": "hashing",
    "chunkeval_store": "exact",
    "chunkeval_k": "2",
}


def _ini(section: str, chunkers: str = "paragraphs recursive:60:0") -> str:
    lines = [f"[{section}]"] + [f"{k} = {v}" for k, v in SETTINGS.items()]
    return "\n".join([*lines, f"chunkeval_chunkers = {chunkers}", ""])


def _pyproject(chunkers: str = '["paragraphs", "recursive:60:0"]') -> str:
    lines = ["[tool.pytest.ini_options]"]
    lines += [f'{k} = "{v}"' for k, v in SETTINGS.items() if k != "chunkeval_k"]
    return "\n".join([*lines, "chunkeval_k = 2", f"chunkeval_chunkers = {chunkers}"])


CONFIG_FILES = {
    "pytest.ini": _ini("pytest"),
    "pyproject.toml": _pyproject(),
    "tox.ini": _ini("pytest"),
    "setup.cfg": _ini("tool:pytest"),
}


def _project(root: Path, name: str, text: str) -> Path:
    write_project(root, conftest=CONFTEST)
    (root / "pytest.ini").unlink()
    (root / name).write_text(text, encoding="utf-8")
    (root / "sub" / "deeper").mkdir(parents=True)
    return root / "sub" / "deeper"


def _rows(out: str) -> list[list[str]]:
    return [
        line.split()
        for line in out.splitlines()
        if line.startswith(("paragraphs", "recursive", "fixed"))
    ]


@pytest.mark.parametrize("name", sorted(CONFIG_FILES))
def test_eval_in_a_subdirectory_uses_the_projects_configuration(
    tmp_path, monkeypatch, capsys, name
):
    monkeypatch.chdir(_project(tmp_path, name, CONFIG_FILES[name]))
    assert main(["eval"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("docs: 3 documents, 6 queries; embedder hashing")
    assert "store exact" in out
    rows = _rows(out)
    assert [row[0] for row in rows] == ["paragraphs", "recursive"]
    assert all("2" in row[1:5] for row in rows)  # chunkeval_k = 2
    # the cache is the project's (rootdir-relative), not the subdirectory's
    assert (tmp_path / ".chunkeval" / "cache").is_dir()
    assert not (tmp_path / "sub" / "deeper" / ".chunkeval").exists()
    # the conftest's names are taken back when the command ends
    assert "paragraphs" not in CHUNKERS


def test_flags_override_the_projects_values(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(_project(tmp_path, "pytest.ini", CONFIG_FILES["pytest.ini"]))
    code = main(["eval", "--chunker", "fixed:40:0", "--k", "1", "--store", "bm25"])
    out = capsys.readouterr().out
    if code == 2:  # the bm25 extra missing: the message says so
        pytest.skip(out)
    assert code == 0
    assert "store bm25" in out
    rows = _rows(out)
    assert [row[0] for row in rows] == ["fixed"]
    assert "1" in rows[0][1:5]


def test_a_flag_path_is_relative_to_the_current_directory(
    tmp_path, monkeypatch, capsys
):
    here = _project(tmp_path, "pytest.ini", CONFIG_FILES["pytest.ini"])
    (here / "mine.jsonl").write_text(
        (tmp_path / "queries.jsonl").read_text(encoding="utf-8").replace("q-", "m-")
    )
    monkeypatch.chdir(here)
    assert main(["eval", "--queries", "mine.jsonl", "--json", "out.json"]) == 0
    assert "6 queries" in capsys.readouterr().out
    assert '"m-bark"' in (here / "out.json").read_text(encoding="utf-8")


def test_pytest_ini_wins_over_pyproject_in_the_same_directory(
    tmp_path, monkeypatch, capsys
):
    here = _project(tmp_path, "pyproject.toml", _pyproject('["recursive:60:0"]'))
    (tmp_path / "pytest.ini").write_text(_ini("pytest", "fixed:40:0"))
    monkeypatch.chdir(here)
    assert main(["eval"]) == 0
    assert [row[0] for row in _rows(capsys.readouterr().out)] == ["fixed"]


def test_a_bad_value_names_the_key_and_the_file(tmp_path, monkeypatch, capsys):
    text = CONFIG_FILES["tox.ini"].replace("chunkeval_k = 2", "chunkeval_k = two")
    monkeypatch.chdir(_project(tmp_path, "tox.ini", text))
    assert main(["eval"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "tox.ini" in err
    assert "chunkeval_k" in err


def test_a_conftest_that_cannot_be_imported_is_a_warning(tmp_path, monkeypatch, capsys):
    here = _project(tmp_path, "pytest.ini", _ini("pytest", "recursive:60:0"))
    (tmp_path / "conftest.py").write_text("import no_such_module_here\n")
    monkeypatch.chdir(here)
    assert main(["eval", "--embedder", "hashing"]) == 0
    captured = capsys.readouterr()
    assert "conftest.py could not be imported" in captured.err
    assert "no_such_module_here" in captured.err
    assert [row[0] for row in _rows(captured.out)] == ["recursive"]


def test_outside_a_project_the_command_needs_its_data_flags(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    assert main(["eval"]) == 2
    assert "--benchmark NAME, --corpus PATH" in capsys.readouterr().err


# -- the reranker in the plugin ------------------------------------------------


def test_a_bad_reranker_spec_in_the_ini_is_a_usage_error(pytester):
    ini = textwrap.dedent(_ini("pytest", "recursive:60:0"))
    write_project(pytester.path, ini=ini + "chunkeval_rerank = cross-encoder\n")
    pytester.makepyfile("def test_x(chunkeval):\n    chunkeval.evaluate()\n")
    result = pytester.runpytest(*FAST)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*chunkeval_rerank*"])


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Module-scoped, so built (torch imported) before the test's pytester takes its
    # snapshot of sys.modules: torch dropped from it could not be imported again.
    from support.rerankers import build_tiny_cross_encoder

    return build_tiny_cross_encoder(tmp_path_factory.mktemp("ce") / "tiny-ce")


@pytest.mark.slow
def test_the_marker_reranks_and_the_configuration_records_it(pytester, tiny_model):
    model = tiny_model
    write_project(pytester.path)
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.chunkeval(rerank="cross-encoder:{model}?n=4", k=2)
        def test_reranked(chunkeval):
            result = chunkeval.evaluate("recursive:60:0")
            assert result.config["rerank"].startswith("cross-encoder:tiny-ce@")
            assert result.config["rerank_candidates"] == 4
            assert "candidates" in result.stages

        def test_plain(chunkeval):
            assert "rerank" not in chunkeval.evaluate("recursive:60:0").config
        """
    )
    # in a subprocess: an in-process run would drop the torch modules the model
    # loaded, and torch cannot be imported twice in one process
    pytester.runpytest_subprocess(*FAST).assert_outcomes(passed=2)
