"""The built wheel works where a user installs it: built from the source tree,
installed with ``--no-deps`` into a fresh venv that sees the development
environment's packages (never the editable install), ``pip check`` clean, and the
README's first test passing in a new project. No package index is used."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from support.readme_project import first_test_blocks, write_first_test

ROOT = Path(__file__).resolve().parents[1]
OWN = ("pytest_chunkeval", "__editable__", "__pycache__")
"""What of the development environment the fresh venv must not see: the editable
install (its module, finder, .pth and dist-info) would stand in for the wheel."""


def _run(*args: str | Path, cwd: Path, env: dict[str, str], code: int = 0) -> str:
    done = subprocess.run(
        [str(a) for a in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == code, (
        f"{' '.join(map(str, args))} exited {done.returncode}\n"
        f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    )
    return done.stdout


def _offline_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CI")}
    env.update(
        PIP_NO_INDEX="1",  # an index is never needed
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        PIP_CONFIG_FILE=os.devnull,
        CHUNKEVAL_CACHE_DIR=str(tmp_path / "cache"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    env.pop("GITHUB_STEP_SUMMARY", None)
    return env


def _build_wheel(tmp_path: Path, env: dict[str, str]) -> Path:
    """The wheel of a copy of the source tree (a build writes build/ and
    egg-info next to the sources: not into the checkout)."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(
        ROOT / "pytest_chunkeval",
        src / "pytest_chunkeval",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    out = tmp_path / "dist"
    _run(
        sys.executable,
        *("-m", "pip", "wheel", "--no-deps", "--no-build-isolation"),
        *("--wheel-dir", out, src),
        cwd=tmp_path,
        env=env,
    )
    (wheel,) = out.glob("pytest_chunkeval-*.whl")
    return wheel


def _dev_packages(tmp_path: Path) -> Path:
    """The development venv's site-packages without this project: a folder of
    links to every other entry (a .pth line adds a folder, it cannot filter one)."""
    farm = tmp_path / "dev-site-packages"
    farm.mkdir()
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(OWN) and entry.suffix != ".pth":
            (farm / entry.name).symlink_to(entry)
    return farm


def _fresh_venv(tmp_path: Path, env: dict[str, str]) -> Path:
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", "--without-pip", venv, cwd=tmp_path, env=env)
    python = venv / "bin" / "python"
    purelib = _run(
        python,
        *("-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"),
        cwd=tmp_path,
        env=env,
    ).strip()
    # After the venv's own site-packages on sys.path: the wheel's files win.
    Path(purelib, "dev-environment.pth").write_text(f"{_dev_packages(tmp_path)}\n")
    return python


@pytest.mark.slow
def test_the_wheel_installs_and_runs_the_readmes_first_test(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("chromadb")
    if sys.prefix == sys.base_prefix:
        pytest.skip("needs the development environment to be a venv")
    env = _offline_env(tmp_path)
    wheel = _build_wheel(tmp_path, env)
    python = _fresh_venv(tmp_path, env)
    pip = (sys.executable, "-m", "pip", "--python", python)

    _run(*pip, "install", "--no-deps", "--no-index", wheel, cwd=tmp_path, env=env)
    assert "No broken requirements found." in _run(*pip, "check", cwd=tmp_path, env=env)
    where = _run(
        python,
        *("-c", "import pytest_chunkeval, sys; print(pytest_chunkeval.__file__)"),
        cwd=tmp_path,
        env=env,
    )
    assert where.startswith(str(tmp_path / "venv")), where  # the wheel, not the tree

    project = tmp_path / "project"
    project.mkdir()
    test_file = write_first_test(project)
    out = _run(
        python,
        *("-m", "pytest", "-p", "no:cacheprovider", "-v"),
        "--chunkeval-html=report.html",
        cwd=project,
        env=env,
        code=1,  # the README's sample failure (its fixed:30:0 chunker)
    )
    assert f"rootdir: {project}" in out
    assert "configfile: pyproject.toml" in out
    case = f"{test_file.name}::test_answers_are_retrieved"
    assert f"{case}[recursive:200:0] PASSED" in out
    assert f"{case}[fixed:30:0] FAILED" in out
    assert "1 failed, 1 passed" in out
    # the explorer's script and style are package data: in the wheel, in the page
    page = (project / "report.html").read_text(encoding="utf-8")
    assert "The per-question explorer of the chunkeval HTML report" in page
    assert "/* The per-question explorer (explorer.js). */" in page


def test_the_readmes_first_test_is_what_the_wheel_test_runs(tmp_path: Path) -> None:
    blocks = first_test_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    assert set(blocks) >= {"json", "toml", "python"}
    test_file = write_first_test(tmp_path)
    assert test_file == tmp_path / "tests" / "test_retrieval.py"
    assert "@pytest.mark.chunkeval(k=1)" in test_file.read_text()
    assert (tmp_path / "tests" / "queries.jsonl").read_text() == blocks["json"]
    returns = (tmp_path / "docs" / "returns.md").read_text()
    assert "Refunds are issued to the original payment method" in returns
