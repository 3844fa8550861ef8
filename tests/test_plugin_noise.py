"""Noise widens, never excuses (issue 30), through the plugin: a registered
store that does not declare itself approximate is deterministic, so one
returning the worst match first, random rows, or a swapped rank fails
``regressed``; a retriever answering a random paragraph against a
deterministic baseline fails; an embedder collapsing to constant vectors under
the same identity fails (the current run's zero margins are no evidence); a
near tie of the baseline swapped inside the float drift bound is drift (``ok``,
named), one beyond it a change. In one process and under pytest-xdist.

The project is test_plugin_baseline_changes' (three documents, six questions at
recall 100 with ``k=1``: each question retrieves one paragraph), with a
conftest adding a ``flaky`` store (exact search, except that ``FLAKY`` lists
query rows whose first two ranks it swaps, ``WORST`` returns the worst match
first and ``RANDOM`` random rows) and a ``tied`` embedder (hashing, except that
the Mars question sits between its answer and a distractor, nearer the answer
by ``TIE``; ``CONSTANT`` makes every vector the same, under the same
identity). Every run uses a fresh cache: a cached search or vector would hide
the change.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.baseline_project import (
    BASELINE_CONFTEST,
    BASELINE_INI,
    QUESTIONS,
    reword_questions,
)
from support.plugin_project import MODES, run_uncached, summary_section, write_project

from pytest_chunkeval.engine.margins import EPSILON

NOISE_CONFTEST = (
    BASELINE_CONFTEST
    + '''

from pathlib import Path

import numpy as np

from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.stores.exact import ExactStore


class FlakyIndex:
    def __init__(self, inner):
        self.inner = inner

    def search(self, queries, k):
        n = self.inner.vectors.shape[0]
        if os.environ.get("RANDOM"):
            rng = np.random.default_rng()
            return rng.integers(0, n, size=(len(queries), k)).astype(np.int64)
        if os.environ.get("WORST"):
            return self.inner.search(queries, n)[:, ::-1][:, :k].copy()
        hits = self.inner.search(queries, max(k, 2)).copy()
        for row in [int(r) for r in os.environ.get("FLAKY", "").split(",") if r]:
            hits[row, [0, 1]] = hits[row, [1, 0]]
        return hits[:, :k]


class FlakyStore:
    """A registered store (not declared approximate): exact search with a swap
    where FLAKY says, the worst match first (WORST) or random rows (RANDOM)."""

    name = "flaky"

    def index(self, key, vectors):
        return FlakyIndex(ExactStore().index(key, vectors))


MARS = "Which small moons does Mars have?"


def _paragraph(start):
    text = (Path(__file__).parent / "docs" / "space.md").read_text()
    return next(p for p in text.split("\\n\\n") if p.startswith(start))


class TiedEmbedder:
    """Hashing vectors; the Mars question between its answer and a distractor,
    nearer the answer by TIE (a relative share of their difference)."""

    identity = "tied:1"
    name = "tied"

    def __init__(self):
        self.inner = HashingEmbedder()

    def embed(self, texts):
        if os.environ.get("CONSTANT"):  # broken, under the same identity
            out = np.ones((len(texts), 256), dtype=np.float32)
            return out / np.linalg.norm(out, axis=1, keepdims=True)
        out = np.asarray(self.inner.embed(list(texts)), dtype=np.float64)
        for i, text in enumerate(texts):
            if text == MARS:
                a, d = self.inner.embed([_paragraph("Mars has"), _paragraph("Moons")])
                a, d = np.asarray(a, np.float64), np.asarray(d, np.float64)
                tie = float(os.environ.get("TIE", "0.1"))
                v = (a + d) + tie * (a - d)
                out[i] = v / np.linalg.norm(v)
        return out


def pytest_chunkeval_register_stores(registry):
    registry.register("flaky", lambda rest: FlakyStore(), "flaky")


def pytest_chunkeval_register_embedders(registry):
    if "hashing" not in registry:
        from pytest_chunkeval.embedders.hashing import hashing_from_spec

        registry.register("hashing", hashing_from_spec, "hashing[:DIM]")
    registry.register("tied", lambda rest: TiedEmbedder(), "tied")
'''
)

TESTS = """
import os

RIGHT = {QUESTIONS!r}


def _paragraph_of(question):
    # the paragraph a question's words come from (the project's own wording)
    for doc in ("pets.md", "space.md", "finance.md"):
        text = (__import__("pathlib").Path(__file__).parent / "docs" / doc).read_text()
        for paragraph in text.split("\\n\\n"):
            if paragraph.startswith(ANSWERS[question]):
                return paragraph
    raise KeyError(question)


ANSWERS = {ANSWERS!r}
CALLS = {{}}


def retriever(question):
    if os.environ.get("RANDOM_RETRIEVER"):
        import random

        return [_paragraph_of(random.choice(list(RIGHT)))]
    late = os.environ.get("LATE_RETRIEVER", "")
    qid = next(i for i, q in RIGHT.items() if q == question)
    if qid in late.split(","):  # wrong twice, then right one time in two
        CALLS[qid] = CALLS.get(qid, 0) + 1
        if CALLS[qid] <= 2 or CALLS[qid] % 2 == 1:
            return ["# Annual report"]
        return [_paragraph_of(qid)]
    flaky = os.environ.get("FLAKY_RETRIEVER", "")
    qid = next(i for i, q in RIGHT.items() if q == question)
    if qid in flaky.split(","):
        CALLS[qid] = CALLS.get(qid, 0) + 1
        if CALLS[qid] % 2 == 1 or os.environ.get("WRONG"):
            return ["# Annual report"]  # not the answer: one time in two
    return [_paragraph_of(qid)]


def test_store(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))


def test_retriever(chunkeval):
    chunkeval.check_baseline(chunkeval.score(retriever, label="rag"))
"""

ANSWERS = {
    "q-bark": "Dogs bark",
    "q-parrot": "Parrots can",
    "q-mars": "Mars has",
    "q-tides": "The Moon orbits",
    "q-margin": "Operating margin",
    "q-audit": "The auditor",
}


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in (
        "CHUNKEVAL_CACHE_DIR",
        "FLAKY",
        "FLAKY_RETRIEVER",
        "RANDOM_RETRIEVER",
        "LATE_RETRIEVER",
        "WRONG",
        "TIE",
        "WORST",
        "RANDOM",
        "CONSTANT",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    ini = BASELINE_INI.replace("chunkeval_k = 50", "chunkeval_k = 1")
    write_project(pytester.path, ini, conftest=NOISE_CONFTEST)
    with (pytester.path / "docs" / "space.md").open("a") as fh:
        fh.write("\nMoons of other planets are many: Io, Europa, Titan.\n")
    reword_questions(pytester.path)
    pytester.makepyfile(test_rag=TESTS.format(QUESTIONS=QUESTIONS, ANSWERS=ANSWERS))
    return pytester.path


@MODES
def test_a_registered_store_that_went_wrong_regresses(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    # A store that does not declare itself approximate is deterministic: what
    # it changed is a change, whether exact search on the same vectors moved
    # or not (the rule "store changed, exact did not" forgave every store bug).
    # One baseline, then each way of going wrong checked against it in turn:
    # swapped ranks, the worst match first, random rows.
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    args = ("--chunkeval-store=flaky", "-k", "test_store")
    run_uncached(pytester, dist, "--chunkeval-update", *args).assert_outcomes(passed=1)
    for broken in ("FLAKY", "WORST", "RANDOM"):
        with monkeypatch.context() as env:
            env.setenv(broken, "0,2" if broken == "FLAKY" else "1")
            result = run_uncached(pytester, dist, *args, "--chunkeval-json=report.json")
        result.assert_outcomes(failed=1)
        summary = summary_section(result)
        assert "baselines: 1 regressed" in summary, (broken, summary)
        (item,) = json.loads((project / "report.json").read_text())["results"]
        assert item["verdict"] == "regressed", broken
        assert "noise" not in item, broken
        (recall,) = [g for g in item["gated"] if g["metric"] == "recall"]
        assert recall["se"] == 0.0, broken  # no run found noise
        if broken == "FLAKY":  # q-bark and q-mars: the wrong paragraph
            assert recall["delta"] == pytest.approx(-1 / 3, abs=1e-4)
            result.stdout.fnmatch_lines(
                [
                    "E *2 of 6 questions lost (retrieved before, missed now): "
                    "q-bark, q-mars"
                ]
            )


@MODES
def test_a_retriever_answering_a_random_paragraph_regresses(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    # A score() baseline recorded with a deterministic retriever; then one
    # answering a random paragraph: its repeats measure the noise, which
    # widens the margin and forgives nothing (it was "noisy", +0.00 without
    # noise, before).
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    args = ("-k", "test_retriever")
    run_uncached(pytester, dist, "--chunkeval-update", *args).assert_outcomes(passed=1)
    monkeypatch.setenv("RANDOM_RETRIEVER", "1")
    flaky = run_uncached(pytester, dist, *args)
    flaky.assert_outcomes(failed=1)
    assert "baselines: 1 regressed" in summary_section(flaky)


ALL = "q-bark,q-parrot,q-mars,q-tides,q-margin,q-audit"


@MODES
def test_a_flaky_and_worse_retriever_regresses_a_flaky_one_as_good_passes(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    # Right half the time on every question, against a deterministic baseline:
    # the repeats (8 on 6 questions) measure the noise, and the drop (-50
    # points) is far beyond the margin it adds.
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    args = ("-k", "test_retriever", "--chunkeval-json=report.json")
    run_uncached(pytester, dist, "--chunkeval-update", *args).assert_outcomes(passed=1)
    monkeypatch.setenv("FLAKY_RETRIEVER", ALL)
    worse = run_uncached(pytester, dist, *args)
    worse.assert_outcomes(failed=1)
    assert "baselines: 1 regressed" in summary_section(worse)
    worse.stdout.fnmatch_lines(
        ["E *recall got worse: mean delta -50.00 points*, SE 23.15 points*"]
    )
    (item,) = json.loads((project / "report.json").read_text())["results"]
    (recall,) = [g for g in item["gated"] if g["metric"] == "recall"]
    assert recall["se"] == pytest.approx(0.2315, abs=1e-4)
    assert "now: retriever noisy: 8 repeats" in recall["repeats"]
    # The same flaky retriever recorded with its repeats: as good, it passes.
    run_uncached(pytester, dist, "--chunkeval-update", *args).assert_outcomes(passed=1)
    recorded = json.loads(
        (project / "__chunkeval__/test_rag/test_retriever.json").read_text()
    )
    assert recorded["noise"]["noisy"] == ["retriever"]
    assert recorded["questions"]["q-bark"]["r"] == 8
    same = run_uncached(pytester, dist, *args)
    same.assert_outcomes(passed=1)
    assert "baselines: 1 ok" in summary_section(same)


def test_a_small_flaky_drop_within_the_noise_is_noisy_and_named(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two of six questions right half the time: -16.67 points, within
    # 1.64 SEs of the noise measured on six questions (the limit of a small
    # set, docs/baselines.md): noisy, passes, named with its SE and repeats.
    args = ("-k", "test_retriever")
    run_uncached(pytester, False, "--chunkeval-update", *args).assert_outcomes(passed=1)
    monkeypatch.setenv("FLAKY_RETRIEVER", "q-parrot,q-margin")
    reports = ("--chunkeval-md=report.md", "--chunkeval-html=report.html")
    noisy = run_uncached(pytester, False, *args, *reports)
    noisy.assert_outcomes(passed=1)
    summary = summary_section(noisy)
    assert "baselines: 1 noisy" in summary, summary
    assert "recall noisy: mean delta -16.67 points" in summary, summary
    assert "SE 13.36 points (a drop up to -22.98 points could hide" in summary
    assert "now: retriever noisy: 8 repeats of 6 questions" in summary, summary
    # The Markdown and HTML reports say it too: SE, what it could hide, repeats.
    line = (
        "noise measured: recall SE 13.36 (a drop up to -22.98 could hide), in "
        "points; now: retriever noisy: 8 repeats of 6 questions"
    )
    for report in ("report.md", "report.html"):
        text = (project / report).read_text()
        assert line in text, text
        assert "-16.67 [-33.33, +0.00] noisy (SE 13.36)" in text, text


def test_a_retriever_that_looked_deterministic_is_confirmed_before_failing(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Wrong on the first two asks (the same answer: it looks deterministic),
    # then right one time in two: before reporting it regressed, the gate asks
    # the changed questions again, finds it noisy, and decides with repeats.
    args = ("-k", "test_retriever", "--chunkeval-json=report.json")
    run_uncached(pytester, False, "--chunkeval-update", *args).assert_outcomes(passed=1)
    monkeypatch.setenv("LATE_RETRIEVER", "q-parrot,q-margin")
    result = run_uncached(pytester, False, *args)
    (item,) = json.loads((project / "report.json").read_text())["results"]
    (recall,) = [g for g in item["gated"] if g["metric"] == "recall"]
    assert recall["se"] > 0, recall
    assert "now: retriever noisy" in recall["repeats"], recall
    # the repeats' means (q-parrot and q-margin right 3 times in 8 each), not
    # the first asks' -33.33: within the noise on six questions
    assert recall["delta"] == pytest.approx(-0.2083, abs=1e-4)
    assert item["verdict"] == "noisy"
    result.assert_outcomes(passed=1)
    # 6 second asks, 2 changed questions confirmed 8 times, 6 asks of 6 more
    assert "58 requests" in summary_section(result)


@MODES
def test_constant_vectors_under_the_same_identity_regress(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    # Every current margin is zero, and every baseline margin was clear: the
    # baseline's margin decides, so nothing is drift.
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    args = ("--chunkeval-embedder=tied", "-k", "test_store")
    run_uncached(pytester, dist, "--chunkeval-update", *args).assert_outcomes(passed=1)
    monkeypatch.setenv("CONSTANT", "1")
    broken = run_uncached(pytester, dist, *args)
    broken.assert_outcomes(failed=1)
    summary = summary_section(broken)
    assert "baselines: 1 regressed" in summary, summary
    assert "float drift" not in broken.stdout.str()


@MODES
def test_a_swap_inside_the_float_bound_is_drift_beyond_it_a_change(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    args = ("--chunkeval-embedder=tied", "-k", "test_store")
    inside = EPSILON / 8
    monkeypatch.setenv("TIE", str(inside))  # the answer ahead by a near tie
    run_uncached(pytester, dist, "--chunkeval-update", *args).assert_outcomes(passed=1)
    recorded = json.loads(
        (project / "__chunkeval__/test_rag/test_store.json").read_text()
    )
    assert recorded["questions"]["q-mars"]["margin"] < EPSILON
    monkeypatch.setenv("TIE", str(-inside))  # drift swaps it
    swapped = run_uncached(pytester, dist, *args)
    swapped.assert_outcomes(passed=1)
    summary = summary_section(swapped)
    assert "baselines: 1 ok" in summary, summary
    assert "changes float drift explains, not counted (1" in summary, summary
    assert "q-mars" in summary

    monkeypatch.setenv("TIE", "0.05")  # a clear lead: beyond any float drift
    run_uncached(pytester, dist, "--chunkeval-update", *args).assert_outcomes(passed=1)
    monkeypatch.setenv("TIE", "-0.05")
    real = run_uncached(pytester, dist, *args)
    real.assert_outcomes(failed=1)
    real.stdout.fnmatch_lines(
        ["E *1 of 6 questions lost (retrieved before, missed now): q-mars"]
    )


ITEMS = """
import pytest


@pytest.mark.chunkeval(per_question=True, baseline=True)
def test_item(chunkeval):
    chunkeval.evaluate("paragraphs")
"""


def test_per_question_items_flipped_by_a_store_fail(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One item per question, each with its own baseline: an item flipped to
    # missed by a store that does not declare itself approximate fails.
    pytester.makepyfile(test_items=ITEMS)
    args = ("--chunkeval-store=flaky", "test_items.py")
    run_uncached(pytester, False, "--chunkeval-update", *args).assert_outcomes(passed=6)
    monkeypatch.setenv("FLAKY", "0,2")  # q-bark and q-mars flip to missed
    result = run_uncached(pytester, False, *args)
    result.assert_outcomes(passed=4, failed=2)
    summary = summary_section(result)
    assert "baselines: 4 ok, 2 regressed" in summary, summary
    result.stdout.fnmatch_lines(["FAILED test_items.py::test_item[[]q-bark[]]*"])
