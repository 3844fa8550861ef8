"""A small set's real drop fails (issue 21, "Small sets forgive large, certain
drops"): 19 questions, each answered by one paragraph of one document, retrieved
by a deterministic pipeline (hashing embedder, exact search, ``k=1``) under the
default gate. A paragraph that outranks one question's answer loses it: -5.26
points of recall, ``regressed``, the question named, in one process and under
pytest-xdist, although the bootstrap interval reaches zero (the ``paired`` mode,
the gate before, passes it). A neutral paragraph appended changes nothing: ``ok``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.baseline_project import BASELINE_CONFTEST
from support.plugin_project import DIST, MODES, run

FACTS = [
    ("q-harbor", "Which harbor ferries sail at dawn?", "Harbor ferries sail at dawn"),
    ("q-violin", "Who repairs the violin strings?", "Violin strings are repaired"),
    ("q-glacier", "How fast does the glacier retreat a year?", "The glacier retreats"),
    ("q-bakery", "When does the bakery bake rye bread?", "The bakery bakes rye"),
    ("q-comet", "In how many years the comet returns?", "The comet returns"),
    ("q-orchard", "Which orchard grows quince trees?", "The orchard grows quince"),
    ("q-tunnel", "How long is the railway tunnel?", "The railway tunnel is"),
    ("q-beetle", "What do dung beetles roll?", "Dung beetles roll"),
    ("q-lighthouse", "Who keeps the lighthouse lamp?", "The lighthouse lamp is kept"),
    ("q-volcano", "When did the volcano last erupt?", "The volcano last erupted"),
    ("q-chess", "Who won the chess tournament?", "The chess tournament was won"),
    ("q-saffron", "Where is saffron harvested?", "Saffron is harvested"),
    (
        "q-bridge",
        "The bridge is protected with which paint?",
        "The bridge is protected",
    ),
    ("q-falcon", "What do peregrine falcons hunt?", "Peregrine falcons hunt"),
    ("q-library", "The library lends maps to whom?", "The library lends maps"),
    ("q-vineyard", "Which grapes does the vineyard press?", "The vineyard presses"),
    ("q-canal", "How deep is the old canal?", "The old canal is"),
    ("q-kiln", "How hot does the pottery kiln burn?", "The pottery kiln burns"),
    ("q-meteor", "When does the meteor shower peak?", "The meteor shower peaks"),
]
ENDINGS = [
    "at dawn from the northern pier.",
    "by the old luthier on Tuesdays.",
    "about forty metres a year.",
    "every Friday before sunrise.",
    "in seventy-six years.",
    "beside the quince hedge near the river.",
    "nine kilometres under the pass.",
    "small balls of dung across the sand.",
    "by the widow of the last keeper.",
    "in the winter of 1911.",
    "by a twelve-year-old from the valley.",
    "in autumn on the high plateau.",
    "with three coats of red lead paint.",
    "pigeons in steep dives.",
    "only to members with a reading card.",
    "late riesling grapes in October.",
    "two metres at the lock gates.",
    "at thirteen hundred degrees.",
    "in the second week of August.",
]
TEST = """
def test_rag(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("paragraphs"))
"""
INI = """\
[pytest]
filterwarnings = error
chunkeval_corpus = docs
chunkeval_queries = queries.jsonl
chunkeval_embedder = hashing
chunkeval_store = exact
chunkeval_k = 1
chunkeval_unit = char
"""


def _paragraph(i: int) -> str:
    return f"{FACTS[i][2]} {ENDINGS[i]}"


@pytest.fixture
def nineteen(pytester: pytest.Pytester) -> Path:
    root = pytester.path
    (root / "docs").mkdir()
    text = "# Almanac\n\n" + "\n\n".join(_paragraph(i) for i in range(19)) + "\n"
    (root / "docs" / "almanac.md").write_text(text)
    lines = [json.dumps({"chunkeval_queries": 1})]
    for i, (qid, question, _) in enumerate(FACTS):
        excerpt = {"text": _paragraph(i)}
        record = {"id": qid, "question": question, "doc_id": "almanac.md"}
        lines.append(json.dumps({**record, "excerpts": [excerpt]}))
    (root / "queries.jsonl").write_text("\n".join(lines) + "\n")
    (root / "pytest.ini").write_text(INI)
    (root / "conftest.py").write_text(BASELINE_CONFTEST)
    pytester.makepyfile(test_rag=TEST)
    first = run(pytester, "--chunkeval-update")
    first.assert_outcomes(passed=1)
    assert "recall" in first.stdout.str()
    return root


def _append(root: Path, paragraph: str) -> None:
    with (root / "docs" / "almanac.md").open("a") as fh:
        fh.write(f"\n{paragraph}\n")


def _run(pytester: pytest.Pytester, dist: bool, *args: str) -> pytest.RunResult:
    if dist:
        return pytester.runpytest_subprocess(*DIST, *args)
    return run(pytester, *args)


@MODES
def test_one_question_of_nineteen_lost_regresses(
    pytester: pytest.Pytester,
    nineteen: Path,
    monkeypatch: pytest.MonkeyPatch,
    dist: bool,
) -> None:
    # every question retrieves its paragraph in the baseline
    baseline = json.loads(
        (nineteen / "__chunkeval__" / "test_rag" / "test_rag.json").read_text()
    )
    assert baseline["metrics"]["recall"]["mean"] == 1.0
    # the tunnel question's own words outrank its answer
    _append(nineteen, "Is the railway tunnel long? A long railway tunnel.")
    if dist:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = _run(pytester, dist, "--chunkeval-json=report.json")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "recall got worse: mean delta -5.26 points" in out
    assert "1 of 19 questions lost (retrieved before, missed now): q-tunnel" in out
    assert "baselines: 1 regressed" in out
    (item,) = json.loads((nineteen / "report.json").read_text())["results"]
    assert item["verdict"] == "regressed"
    # The sampling view could not have told: the paired mode passes it, and
    # still names the question.
    paired = _run(pytester, dist, "--chunkeval-gate-mode=paired")
    paired.assert_outcomes(passed=1)
    assert "q-tunnel" in paired.stdout.str()


def test_a_neutral_paragraph_appended_is_ok(
    pytester: pytest.Pytester, nineteen: Path
) -> None:
    _append(nineteen, "This almanac was compiled by the county archive in 2024.")
    result = run(pytester)
    result.assert_outcomes(passed=1)
    out = result.stdout.str()
    assert "baselines: 1 ok" in out
    assert "documents edited: almanac.md (+1 sentence" in out
