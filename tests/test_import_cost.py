"""Importing the plugin is cheap: pytest loads it in every run of every project
where it is installed. Checked in fresh interpreters."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("torch", "chromadb", "sentence_transformers", "openai", "transformers")
# Not heavy by itself, but a sign the engine was loaded.
ENGINE = ("numpy", "tiktoken", "pytest_chunkeval.run.session")


def _python(code: str, cwd: Path | None = None, **env: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
        env={**os.environ, **env},
        timeout=120,
    )
    return out.stdout


def _top(modules: list[str]) -> set[str]:
    return {m.split(".")[0] for m in modules} | set(modules)


def test_core_modules_do_not_import_pytest() -> None:
    code = (
        "import sys\n"
        "import pytest_chunkeval.run.session, pytest_chunkeval.config.options\n"
        "import pytest_chunkeval.run.summary, pytest_chunkeval.assertions\n"
        "import pytest_chunkeval.hookspecs, pytest_chunkeval.engine.evaluate\n"
        "print(sorted(m for m in sys.modules if 'pytest' in m.split('.')[0]))\n"
    )
    loaded = _python(code)
    assert "'pytest'" not in loaded
    assert "'_pytest'" not in loaded


def test_importing_the_plugin_loads_only_light_modules() -> None:
    code = (
        "import sys, json\n"
        "import pytest\n"
        "before = set(sys.modules)\n"
        "import pytest_chunkeval.plugin\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    new = json.loads(_python(code))
    ours = [m for m in new if m.startswith("pytest_chunkeval")]
    assert sorted(ours) == [
        "pytest_chunkeval",
        "pytest_chunkeval.config",
        "pytest_chunkeval.config.defaults",
        "pytest_chunkeval.config.gate_options",
        "pytest_chunkeval.config.option",
        "pytest_chunkeval.config.options",
        "pytest_chunkeval.config.quality_options",
        "pytest_chunkeval.config.rerank_option",
        "pytest_chunkeval.config.scoring",
        "pytest_chunkeval.config.values",
        "pytest_chunkeval.core",  # the unit vocabulary (standard library only)
        "pytest_chunkeval.core.unit_names",
        "pytest_chunkeval.errors",
        "pytest_chunkeval.hookspecs",
        "pytest_chunkeval.plugin",
        "pytest_chunkeval.run",  # what the plugin reads off pytest (stdlib only)
        "pytest_chunkeval.run.collection",
    ]
    assert not _top(new) & {*HEAVY, *ENGINE}


def test_a_suite_not_using_the_plugin_loads_nothing_heavy(tmp_path: Path) -> None:
    (tmp_path / "test_plain.py").write_text("def test_a():\n    assert True\n")
    code = (
        "import sys, json, pytest\n"
        "code = pytest.main(['-q', '-p', 'no:cacheprovider', "
        "'-p', 'pytest_chunkeval.plugin', '.'])\n"
        "assert code == 0, code\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = _python(code, cwd=tmp_path, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    loaded = json.loads(out.splitlines()[-1])
    assert "pytest_chunkeval.plugin" in loaded  # the plugin did run
    assert not _top(loaded) & {*HEAVY, *ENGINE}
    assert "chunkeval" not in out.rsplit("[", 1)[0]  # printed nothing


def _import_ms() -> float:
    proc = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-c",
            "import pytest\nimport pytest_chunkeval.plugin",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    for line in proc.stderr.splitlines():
        # "import time: self [us] | cumulative | imported package"
        match = re.match(
            r"import time:\s+\d+ \|\s+(\d+) \| pytest_chunkeval\.plugin$", line
        )
        if match:
            return int(match.group(1)) / 1000
    raise AssertionError(f"no import time for the plugin in:\n{proc.stderr[-2000:]}")


@pytest.mark.perf
def test_plugin_import_time_is_small() -> None:
    # Best of three: the machine may be busy; the budget is 50 ms of start-up.
    best = min(_import_ms() for _ in range(3))
    assert best < 50, f"importing pytest_chunkeval.plugin took {best:.1f} ms"
