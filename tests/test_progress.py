"""Progress where CI can see it: plain lines on a stderr that is not a terminal."""

from __future__ import annotations

import io
import re
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from pytest_chunkeval.embedders.base import FloatArray
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.llm.answers import AnswerKey, hash_input
from pytest_chunkeval.llm.batch import Outcome, run_batch
from pytest_chunkeval.util import progress
from pytest_chunkeval.util.progress import ProgressLines, progress_bar


@pytest.fixture(autouse=True)
def _no_pytest_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    # this very run's plugin sends progress lines to its terminal; here they are
    # checked on stderr, as outside pytest
    monkeypatch.setattr(progress, "_line_writer", None)


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _lines(total: int = 1000, **kwargs: object) -> tuple[ProgressLines, FakeClock]:
    clock = FakeClock()
    out = io.StringIO()
    bar = ProgressLines(
        total, desc="embedding (m)", unit="text", clock=clock, file=out, **kwargs
    )
    return bar, clock


def _printed(bar: ProgressLines) -> list[str]:
    assert isinstance(bar.file, io.StringIO)
    return bar.file.getvalue().splitlines()


def test_a_line_every_interval_with_done_total_rate_and_eta() -> None:
    bar, clock = _lines()
    for _ in range(9):  # 9 batches of 50 texts, 4 s each
        clock.now += 4
        bar.update(50)
    bar.close()
    assert _printed(bar) == [
        # 12 s: 150 texts, 12.5 texts/s, 850 to go
        "embedding (m): 150/1000 text (15%), 12.5 text/s, 12s elapsed, ETA 1m08s",
        "embedding (m): 300/1000 text (30%), 12.5 text/s, 24s elapsed, ETA 56s",
        "embedding (m): 450/1000 text (45%), 12.5 text/s, 36s elapsed, ETA 44s",
        "embedding (m): 450/1000 text (45%), 12.5 text/s, took 36s",
    ]


def test_short_work_prints_nothing() -> None:
    bar, clock = _lines(total=3)
    for _ in range(3):
        clock.now += 3
        bar.update()
    bar.close()
    assert _printed(bar) == []


def test_resumed_work_counts_its_rate_from_where_it_started() -> None:
    bar, clock = _lines(total=100, initial=40, interval=5)
    bar.set_postfix_str("cached 40, rejected 0", refresh=False)
    clock.now += 20
    bar.update(10)
    assert _printed(bar) == [
        "embedding (m): 50/100 text (50%), 2.0 s/text, 20s elapsed, ETA 1m40s "
        "(cached 40, rejected 0)"
    ]


def test_a_slow_batch_still_gets_a_line_every_interval() -> None:
    """One batch of a slow model can outlast the interval: a thread prints."""
    out = io.StringIO()
    bar = ProgressLines(
        500, desc="embedding (m)", unit="text", interval=0.02, file=out, ticking=True
    )
    deadline = time.monotonic() + 10
    while out.getvalue().count("\n") < 2 and time.monotonic() < deadline:
        time.sleep(0.01)  # the work: no update
    bar.close()
    lines = out.getvalue().splitlines()
    assert len(lines) >= 3, lines
    assert re.fullmatch(
        r"embedding \(m\): 0/500 text \(0%\), \d+s elapsed, ETA unknown", lines[0]
    )
    assert re.fullmatch(
        r"embedding \(m\): 0/500 text \(0%\), 0\.0 text/s, took \d+s", lines[-1]
    )
    assert bar._ticker is not None
    assert not bar._ticker.is_alive()


def test_lines_when_stderr_is_not_a_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bar = progress_bar(5, progress=None, desc="judging", unit="q")
    assert isinstance(bar, ProgressLines)
    assert bar.interval == 10.0
    assert bar._ticker is not None
    bar.close()
    assert progress_bar(5, progress=False) is None
    pytest.importorskip("tqdm")
    monkeypatch.setattr(progress, "_is_terminal", lambda: True)
    bar = progress_bar(5, progress=None, desc="judging")
    assert not isinstance(bar, ProgressLines)  # a tqdm bar on a terminal
    bar.close()


class Embedder:
    identity = "test:progress"

    def embed(self, texts: Sequence[str]) -> FloatArray:
        return np.ones((len(texts), 4), dtype=np.float32)


def test_embedding_prints_progress_lines_in_a_log(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(progress, "INTERVAL_SECONDS", 0.0)  # a line per batch
    cache = EmbeddingCache(tmp_path, batch_size=2)
    cache.embed(Embedder(), ["a", "b", "c", "dd", "ee"])
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(",")[0] for line in lines] == [
        "embedding (test:progress): 2/5 text (40%)",
        "embedding (test:progress): 4/5 text (80%)",
        "embedding (test:progress): 5/5 text (100%)",
        "embedding (test:progress): 5/5 text (100%)",
    ]
    assert "ETA" in lines[0]
    assert "took" in lines[-1]
    assert "\r" not in "".join(lines)


def test_llm_batches_print_progress_lines_in_a_log(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(progress, "INTERVAL_SECONDS", 0.0)
    run_batch(
        ["x", "y"],
        key=lambda item: AnswerKey("judge", "test", "1", hash_input(item)),
        compute=lambda item: Outcome(value=item),
        concurrency=1,
        desc="judging",
    )
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("judging: 1/2 q (50%), ")
    assert lines[1].startswith("judging: 2/2 q (100%), ")
    assert lines[1].endswith("(cached 0, rejected 0)")


PROGRESS_UNDER_PYTEST = """
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.util import progress
from test_progress_support import Embedder


def test_embeds(tmp_path, monkeypatch):
    monkeypatch.setattr(progress, "INTERVAL_SECONDS", 0.0)  # a line per batch
    EmbeddingCache(tmp_path, batch_size=2).embed(Embedder(), ["a", "b", "c"])
    assert False, "to show what was captured"
"""


def test_under_pytest_progress_lines_reach_the_terminal_not_the_capture(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    def outer(line: str) -> None:
        raise AssertionError(f"the outer run's writer got {line!r}")

    monkeypatch.setattr(progress, "_line_writer", outer)
    pytester.makepyfile(
        test_progress_support=(
            "import numpy as np\n\n"
            "class Embedder:\n"
            "    identity = 'test:progress'\n\n"
            "    def embed(self, texts):\n"
            "        return np.ones((len(texts), 4), dtype=np.float32)\n"
        ),
        test_embeds=PROGRESS_UNDER_PYTEST,
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    report = out[out.index("= FAILURES =") :]
    live = out[: out.index("= FAILURES =")]
    assert "embedding (test:progress): 2/3 text (67%)" in live
    assert "embedding (test:progress)" not in report  # not in a captured section
    assert progress._line_writer is outer  # the outer run's writer is back
