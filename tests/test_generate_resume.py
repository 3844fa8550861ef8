"""``chunkeval generate`` killed mid-run (SIGKILL) and run again resumes to the count.

The command runs in a subprocess against the in-test OpenAI-compatible server, whose
chat handler is slow enough for the kill to land while queries are being written.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.openai_server import OpenAIServer

from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.generation.answers import question_key

KEY = "sk-resume-DO-NOT-LEAK-0303"
N = 8
# The real command line, in a process of its own (so it can be killed).
RUN_CHUNKEVAL = (
    "import sys\nfrom pytest_chunkeval.cli import main\nsys.exit(main(sys.argv[1:]))\n"
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX-only")


def lines_of(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []


def slow_handler(request: Any) -> str:
    time.sleep(0.15)
    user = request["messages"][-1]["content"]
    passage = user.split("<passage>\n", 1)[1].rsplit("\n</passage>", 1)[0]
    line = next(ln for ln in passage.splitlines() if ln.startswith("Rule "))
    return json.dumps(
        {
            "pledge": "one thing",
            "question": f"How often is rule {line.split()[1]} checked?",
            "references": [line],
        }
    )


def test_kill_and_rerun_resumes_without_duplicates(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    text = "".join(
        f"Rule {i} says that system {i % 7} must be checked every {i + 2} days.\n"
        for i in range(120)
    )
    (docs / "rules.md").write_text(text, encoding="utf-8")
    out = tmp_path / "out" / "queries.jsonl"
    with OpenAIServer(api_key=KEY) as server:
        server.chat_handler = slow_handler
        env = {
            **os.environ,
            "OPENAI_API_KEY": KEY,
            "OPENAI_BASE_URL": server.base_url,
        }
        command = [
            sys.executable,
            "-c",
            RUN_CHUNKEVAL,
            "generate",
            *("--corpus", str(docs), "--out", str(out), "--n", str(N)),
            *("--model", "test-model", "--seed", "21", "--window-chars", "300"),
            *("--max-retries", "1", "--no-filter"),
            *("--cache-dir", str(tmp_path / "cache")),
        ]
        first = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        try:
            deadline = time.monotonic() + 60
            while len(lines_of(out)) < 4:  # the header and 3 queries
                assert first.poll() is None, first.communicate()
                assert time.monotonic() < deadline, "no progress within 60 s"
                time.sleep(0.02)
            first.send_signal(signal.SIGKILL)
        finally:
            first.kill()
            first.communicate()
        assert first.returncode == -signal.SIGKILL
        written = len(lines_of(out)) - 1
        assert 3 <= written < N

        second = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=120
        )
    assert second.returncode == 0, second.stderr
    assert "resuming" in second.stdout
    assert f"{N} of {N} queries" in second.stdout
    assert KEY not in second.stdout + second.stderr

    queries = QuerySet.load(out, Corpus.from_paths([docs]))
    assert len(queries) == N
    assert len({question_key(q.text) for q in queries}) == N
    attempts = [q.metadata["attempt"] for q in queries]
    assert attempts == sorted(set(attempts))  # the run continued, nothing repeated
    assert queries.metadata["seed"] == 21
    for path in out.parent.rglob("*"):
        assert KEY.encode() not in path.read_bytes(), path
