"""Baseline files: paths, format, errors, and a session store's whole lifecycle."""

from __future__ import annotations

import hashlib
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.fake_results import make_result, spread

from pytest_chunkeval.gate.files.baseline import (
    BASELINE_SCHEMA,
    Baseline,
    BaselineCorrupt,
    BaselineMismatch,
    BaselineMissing,
)
from pytest_chunkeval.gate.files.paths import (
    BaselineLayout,
    NodeRef,
    baseline_path,
    legacy_sanitize_name,
    sanitize_name,
)
from pytest_chunkeval.gate.store import BaselineRegression, BaselineStore
from pytest_chunkeval.gate.tolerances import GateSettings

NODE = "tests/test_rag.py::test_chunker[recursive:200:0]"
STEM = sanitize_name("test_chunker[recursive:200:0]")  # ...[recursive_200_0]-<hash>

# ------------------------------------------------------------------ paths


@pytest.mark.parametrize(
    ("name", "readable", "hashed"),
    [
        ("test_chunker[recursive:200:0]", "test_chunker[recursive_200_0]", True),
        ("TestA::test_b[x]", "TestA.test_b[x]", False),
        ("test_x[a/b\\c]", "test_x[a_b_c]", True),
        ('test_x[<">|?*]', "test_x[______]", True),
        ("test_x[k=5-0.5]", "test_x[k=5-0.5]", False),
        ("test_x[héllo wörld]", "test_x[héllo_wörld]", True),
        ("CON", "_CON", True),
        ("...", "_", True),
    ],
)
def test_sanitize_name_is_readable_and_portable(
    name: str, readable: str, hashed: bool
) -> None:
    # Whenever making the id portable changed it, a hash of the id keeps file
    # names injective (issue 12 case 14).
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    assert sanitize_name(name) == (f"{readable}-{digest}" if hashed else readable)
    assert legacy_sanitize_name(name) == readable


def test_ids_that_sanitize_alike_get_different_names() -> None:
    ids = ["t[a:b]", "t[a_b]", "t[a/b]", "t[a b]", "t[a::b]", "t[a.b]", "A::t", "A.t"]
    # ("A.t" is no pytest name: a test name holds no "."; it is kept apart anyway)
    assert len({sanitize_name(i) for i in ids}) == len(ids)


def test_sanitize_long_names_stay_unique_and_short() -> None:
    a = sanitize_name("test_x[" + "a" * 300 + "1]")
    b = sanitize_name("test_x[" + "a" * 300 + "2]")
    assert a != b
    assert len(a.encode()) <= 150
    assert a.startswith("test_x[aaa")


def test_default_path_is_next_to_the_test_module(tmp_path: Path) -> None:
    test_file = tmp_path / "tests" / "test_rag.py"
    path = baseline_path(test_file, NODE)
    stem = sanitize_name("test_chunker[recursive:200:0]")
    assert stem.startswith("test_chunker[recursive_200_0]-")
    assert path == tmp_path / "tests" / "__chunkeval__" / "test_rag" / f"{stem}.json"
    assert baseline_path(test_file, "test_chunker[recursive:200:0]") == path
    named = baseline_path(test_file, NODE, name="finance")
    assert named.name == f"{stem}.finance.json"


def test_directory_override_keeps_same_named_modules_apart(tmp_path: Path) -> None:
    a = baseline_path(
        tmp_path / "tests" / "a" / "test_x.py",
        "test_y",
        directory="baselines",
        rootdir=tmp_path,
    )
    b = baseline_path(
        tmp_path / "tests" / "b" / "test_x.py",
        "test_y",
        directory="baselines",
        rootdir=tmp_path,
    )
    assert a == tmp_path / "baselines" / "tests" / "a" / "test_x" / "test_y.json"
    assert a != b
    layout = BaselineLayout(Path("baselines"), tmp_path)
    assert layout.test_file_of(a.parent) == tmp_path / "tests" / "a" / "test_x.py"


def test_node_ref_from_a_node_id(tmp_path: Path) -> None:
    ref = NodeRef.from_nodeid(NODE, tmp_path)
    assert ref.path == tmp_path / "tests" / "test_rag.py"
    assert ref.name == "test_chunker[recursive:200:0]"


# ------------------------------------------------------------------ format


def test_file_layout_is_sorted_rounded_and_one_query_per_line() -> None:
    result = make_result([1 / 3, 1.0, 0.0], precision_omega=[None, 0.5, 0.5])
    text = Baseline.from_result(result, NODE).to_text()
    data = json.loads(text)
    assert data["chunkeval_baseline"] == BASELINE_SCHEMA
    assert data["test"] == "test_chunker[recursive:200:0]"
    assert "queries" not in data["config"]  # a path: not part of the identity
    assert data["config"]["chunker"] == "recursive:200:0"
    assert list(data) == sorted(data)
    lines = text.splitlines()
    query_lines = [line for line in lines if line.startswith('  "q00')]
    assert len(query_lines) == 3
    assert query_lines[0] == (
        '  "q000": {"f1": 0.0645, "iou": 0.0333, "precision": 0.0333, '
        '"precision_omega": null, "recall": 0.3333},'
    )
    assert data["metrics"]["recall"]["mean"] == round((1 / 3 + 1) / 3, 6)
    assert "-0.0" not in text
    assert set(data["groups"]) == {"a.md", "b.md"}
    assert Baseline.from_json(data, "x").to_text() == text


def test_identical_results_give_identical_files() -> None:
    values = spread(50)
    a = Baseline.from_result(make_result(values), NODE).to_text()
    b = Baseline.from_result(make_result(list(values)), NODE).to_text()
    assert a == b


def test_duplicate_query_ids_cannot_be_paired() -> None:
    with pytest.raises(ValueError, match="not unique"):
        Baseline.from_result(make_result([1.0, 0.0], ids=["q", "q"]), NODE)


def test_bundled_benchmark_baseline_is_under_150_kb(tmp_path: Path) -> None:
    from pytest_chunkeval.data.benchmarks import load_benchmark
    from pytest_chunkeval.embedders.hashing import HashingEmbedder
    from pytest_chunkeval.engine.evaluate import evaluate

    corpus, queries = load_benchmark("general")
    result = evaluate(
        "recursive:200:0",
        corpus,
        queries,
        embedder=HashingEmbedder(),
        store="exact",
        cache=tmp_path / "cache",
        progress=False,
    )
    text = Baseline.from_result(result, NODE).to_text()
    assert len(result.queries) == 472
    # values of the nine metrics (about 80 KB) and per question its content hash
    # and decisive margin (about 35 KB)
    assert len(text.encode("utf-8")) < 150_000
    # one line of values and one of what else the gate needs, per query
    assert len(text.splitlines()) < 2 * 472 + 60


# ------------------------------------------------------------------ errors


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "b.json"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"chunkeval_baseline": 1,\n "test": ', "invalid JSON at line 2"),
        (
            '{"chunkeval_baseline": 7}',
            "schema version 7, this pytest-chunkeval reads versions 1, 2, 3, 4, 5, 6",
        ),
        ('{"chunkeval_baseline": "2.0"}', "schema version '2.0'"),
        ('{"chunkeval_baseline": 2.0}', "schema version 2.0"),
        ('{"chunkeval_baseline": 1, "test": "a", "test": "b"}', "'test' appears twice"),
        ('{"recall": 0.5}', "no 'chunkeval_baseline' version key"),
        ("[1, 2]", "expected a JSON object"),
    ],
)
def test_unreadable_files_are_errors_naming_the_file(
    tmp_path: Path, text: str, message: str
) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(BaselineCorrupt, match=message) as info:
        Baseline.load(path)
    assert str(path) in str(info.value)


def test_malformed_values_are_corrupt(tmp_path: Path) -> None:
    data = Baseline.from_result(make_result([1.0, 0.0]), NODE).to_json()
    data["queries"]["q000"]["recall"] = "high"
    with pytest.raises(BaselineCorrupt, match="malformed"):
        Baseline.load(_write(tmp_path, json.dumps(data)))
    del data["queries"]
    with pytest.raises(BaselineCorrupt, match="'queries' is missing"):
        Baseline.load(_write(tmp_path, json.dumps(data)))


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        (("queries", "q000", "recall"), -5.0, "recall of question 'q000' is -5.0"),
        (("queries", "q000", "recall"), 100, "recall of question 'q000' is 100"),
        (("metrics", "recall", "mean"), 1.5, "the mean of recall is 1.5"),
        (("groups", "doc.md", "iou"), -0.1, "iou of document 'doc.md' is -0.1"),
        (("questions", "q000", "r"), 0, "'q000' records 0 repeats"),
        (("questions", "q000", "var"), {"recall": -1.0}, "a variance"),
        (("questions", "q000", "anchor"), {"recall": 2.0}, "anchored recall"),
    ],
)
def test_impossible_values_are_damaged(
    tmp_path: Path, where: tuple[str, str, str], value: object, message: str
) -> None:
    # Before, -5.0 read as a baseline and compared: "improved +600" points.
    data = Baseline.from_result(make_result([1.0, 0.0]), NODE).to_json()
    data["groups"].setdefault("doc.md", {"iou": 0.5})
    data["questions"].setdefault("q000", {})
    section, name, key = where
    data[section][name][key] = value
    with pytest.raises(BaselineCorrupt, match=re.escape(message)):
        Baseline.load(_write(tmp_path, json.dumps(data)))


def test_a_mean_its_questions_contradict_is_damaged(tmp_path: Path) -> None:
    # Before, the gate decided on the question values (ok) and showed the
    # edited mean beside the verdict: "recall 50.00 -> 75.00 ok".
    data = Baseline.from_result(make_result([1.0, 0.0, 1.0, 1.0]), NODE).to_json()
    data["metrics"]["recall"]["mean"] = 0.5
    path = _write(tmp_path, json.dumps(data))
    with pytest.raises(BaselineCorrupt) as info:
        Baseline.load(path)
    message = str(info.value)
    assert str(path) in message
    assert "metrics row 'recall' says mean 0.5" in message
    assert "4 questions' values average 0.750000" in message


def test_a_judged_mean_is_checked_over_its_judged_questions(tmp_path: Path) -> None:
    result = make_result([1.0] * 4, precision_omega=[0.5, None, 0.25, None])
    data = Baseline.from_result(result, NODE).to_json()
    assert data["metrics"]["precision_omega"]["n"] == 2
    assert Baseline.load(_write(tmp_path, json.dumps(data))).metrics[
        "precision_omega"
    ].mean == pytest.approx(0.375)
    data["metrics"]["precision_omega"]["mean"] = 0.25  # 2 judged: 0.375
    with pytest.raises(
        BaselineCorrupt, match=re.escape("'precision_omega' says mean 0.25")
    ):
        Baseline.load(_write(tmp_path, json.dumps(data)))


def test_a_mean_apart_from_its_rounded_values_by_rounding_alone_is_read(
    tmp_path: Path,
) -> None:
    # Each value rounds to 0.0 (4 decimals), the mean to 0.00005 (6): the
    # largest gap rounding makes, which is not damage.
    data = Baseline.from_result(make_result([0.0000499] * 3), NODE).to_json()
    assert data["queries"]["q000"]["recall"] == 0.0
    assert data["metrics"]["recall"]["mean"] == 0.00005
    assert Baseline.load(_write(tmp_path, json.dumps(data))).metrics[
        "recall"
    ].mean == pytest.approx(0.00005)


def test_a_noise_mean_variance_is_written_rounded_and_read_either_way(
    tmp_path: Path,
) -> None:
    import dataclasses

    noise = {"noisy": ["retriever"], "repeats": 3, "sampled": 2}
    variances = {"recall": 1 / 3, "f1": 4.513898307157584e-35}
    result = dataclasses.replace(
        make_result([1.0, 0.0]), noise={**noise, "mean_variance": variances}
    )
    text = Baseline.from_result(result, NODE).to_text()
    assert '"mean_variance": {"f1": 0.0, "recall": 0.333333}' in text
    unrounded = json.loads(text)
    unrounded["noise"]["mean_variance"] = variances  # an older version's file
    loaded = Baseline.load(_write(tmp_path, json.dumps(unrounded)))
    assert loaded.noise["mean_variance"]["recall"] == 1 / 3


def test_a_duplicate_key_deep_in_the_file_is_damaged(tmp_path: Path) -> None:
    text = Baseline.from_result(make_result([1.0, 0.0]), NODE).to_text()
    doubled = text.replace('"recall": 1.0', '"recall": 1.0, "recall": 0.0', 1)
    assert doubled != text
    with pytest.raises(BaselineCorrupt, match="'recall' appears twice"):
        Baseline.load(_write(tmp_path, doubled))


def test_fields_an_older_file_lacks_read_as_their_defaults(tmp_path: Path) -> None:
    data = Baseline.from_result(make_result([1.0, 0.0]), NODE).to_json()
    data["chunkeval_baseline"] = 3
    for key in ("anchor", "noise"):
        data.pop(key, None)
    loaded = Baseline.load(_write(tmp_path, json.dumps(data)))
    assert (loaded.anchor, loaded.noise, loaded.schema) == ({}, {}, 3)
    assert loaded.anchor_values() == {q: dict(v) for q, v in loaded.queries.items()}


def test_non_utf8_file_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(BaselineCorrupt, match="not UTF-8"):
        Baseline.load(path)


# ------------------------------------------------------------------ store


@pytest.fixture
def test_file(tmp_path: Path) -> Path:
    path = tmp_path / "tests" / "test_rag.py"
    path.parent.mkdir()
    path.write_text("def test_chunker(): pass\n")
    return path


def _ref(test_file: Path, nodeid: str = NODE) -> NodeRef:
    return NodeRef(nodeid, test_file)


def _store(tmp_path: Path, update: bool = False, **kw: object) -> BaselineStore:
    return BaselineStore(
        update=update,
        layout=BaselineLayout(rootdir=tmp_path),
        **kw,  # type: ignore[arg-type]
    )


def test_lifecycle_create_pass_regress_improve_update_pass(
    tmp_path: Path, test_file: Path
) -> None:
    ref = _ref(test_file)
    values = spread(200)
    original = make_result(values)

    with pytest.raises(BaselineMissing) as missing:
        _store(tmp_path).check(original, ref)
    assert "pytest --chunkeval-update 'tests/test_rag.py::test_chunker" in str(
        missing.value
    )
    path = missing.value.path
    assert path is not None
    assert not path.exists()  # never created without update mode

    created = _store(tmp_path, update=True).check(original, ref)
    assert created.status == "created"
    assert path.is_file()
    again = _store(tmp_path, update=True).check(original, ref)
    assert again.status == "unchanged"

    assert _store(tmp_path).check(original, ref).status == "ok"

    worse = make_result([max(v - 0.5, 0) for v in values])
    with pytest.raises(BaselineRegression) as regression:
        _store(tmp_path).check(worse, ref)
    text = str(regression.value)
    assert "recall got worse: mean delta -" in text
    assert "queries whose recall got worse the most" in text
    assert text.endswith(
        "pytest --chunkeval-update 'tests/test_rag.py::test_chunker[recursive:200:0]'"
    )

    better = make_result([min(v + 0.25, 1) for v in values])
    store = _store(tmp_path)
    improved = store.check(better, ref)
    assert improved.status == "improved"
    assert "recall improved" in improved.message
    assert "--chunkeval-update" in improved.message
    assert any("recall improved" in line for line in store.summary_lines())

    before_text = path.read_text()
    updated = _store(tmp_path, update=True).check(better, ref)
    assert updated.status == "updated"
    assert "recall" in updated.message
    assert "->" in updated.message
    assert path.read_text() != before_text
    assert _store(tmp_path).check(better, ref).status == "ok"


def test_an_update_whose_gated_means_did_not_move_says_which_rows_did(
    tmp_path: Path, test_file: Path
) -> None:
    # Two questions swap their values: every mean stays, the file changes.
    # Before, the summary said "updated FILE" and nothing else.
    ref = _ref(test_file)
    assert _store(tmp_path, update=True).check(make_result([1.0, 0.0, 1.0]), ref)
    swapped = make_result([0.0, 1.0, 1.0])
    updated = _store(tmp_path, update=True).check(swapped, ref)
    assert updated.status == "updated"
    assert updated.message.endswith(
        ": 2 question rows: q000 recall 100.00 -> 0.00, q001 recall 0.00 -> 100.00"
        "; document means (a.md, b.md), question records (anchor) rewritten"
    ), updated.message
    again = _store(tmp_path, update=True).check(swapped, ref)
    assert (again.status, again.message) == ("unchanged", "")


def test_configuration_change_is_judged_and_named(
    tmp_path: Path, test_file: Path
) -> None:
    ref = _ref(test_file)
    values = spread(30)
    _store(tmp_path, update=True).check(make_result(values), ref)
    changed = make_result(
        values,
        config={"chunker": "recursive:250:0", "queries": "/elsewhere/q.jsonl"},
        corpus_hash="d" * 64,
    )
    outcome = _store(tmp_path).check(changed, ref)
    assert outcome.status == "ok"
    text = outcome.message
    assert "passed against its baseline across changes" in text
    assert "chunker: recursive:200:0 -> recursive:250:0" in text
    # make_result has no corpus: a changed hash without per-document detail
    assert "which documents changed is unknown" in text
    assert "queries:" not in text  # the query file's path is not a change
    assert text.endswith(f"pytest --chunkeval-update '{NODE}'")


def test_a_unit_change_cannot_be_compared(tmp_path: Path, test_file: Path) -> None:
    ref = _ref(test_file)
    _store(tmp_path, update=True).check(make_result([1.0, 0.5]), ref)
    with pytest.raises(BaselineMismatch) as info:
        _store(tmp_path).check(make_result([1.0, 0.5], config={"unit": "char"}), ref)
    text = str(info.value)
    assert "the numbers cannot be compared: unit: token -> char" in text
    assert "got worse" not in text
    assert text.endswith(f"pytest --chunkeval-update '{NODE}'")


def test_query_set_changes_list_added_and_removed_ids(
    tmp_path: Path, test_file: Path
) -> None:
    ref = _ref(test_file)
    _store(tmp_path, update=True).check(make_result([1.0, 0.5, 0.0]), ref)
    changed = make_result(
        [1.0, 0.5, 0.0], ids=["q000", "q001", "new"], queries_hash="z" * 64
    )
    with pytest.raises(BaselineRegression, match="1 baseline question: 1 removed"):
        _store(tmp_path).check(changed, ref)  # by default, every one is compared
    allowing = GateSettings(max_left_out=0.5)
    outcome = _store(tmp_path, gate=allowing).check(changed, ref)
    assert "questions added: 1 (new)" in outcome.message
    assert "questions removed: 1 (q002)" in outcome.message
    assert "compared on the 2 questions both runs have" in outcome.message
    edited = make_result([1.0, 0.5, 0.0], queries_hash="z" * 64)
    outcome = _store(tmp_path).check(edited, ref)
    assert "questions: same ids, questions or excerpts edited" in outcome.message


def test_k_change_is_judged_paired(tmp_path: Path, test_file: Path) -> None:
    ref = _ref(test_file)
    _store(tmp_path, update=True).check(make_result([1.0] * 20), ref)
    with pytest.raises(BaselineRegression) as info:
        _store(tmp_path).check(make_result([0.0] * 20, config={"k": 3}), ref)
    text = str(info.value)
    lines = text.splitlines()
    assert lines[1:3] == ["  what changed since the baseline:", "    k: 5 -> 3"]
    assert "recall got worse: mean delta -100.00 points" in lines[3]


def test_corrupt_file_is_never_overwritten_without_update(
    tmp_path: Path, test_file: Path
) -> None:
    ref = _ref(test_file)
    path = BaselineLayout(rootdir=tmp_path).path(test_file, NODE)
    path.parent.mkdir(parents=True)
    path.write_text("{ not json")
    with pytest.raises(BaselineCorrupt) as info:
        _store(tmp_path).check(make_result([1.0]), ref)
    assert f"tests/__chunkeval__/test_rag/{STEM}.json" in str(info.value)
    assert "left untouched" in str(info.value)
    assert path.read_text() == "{ not json"
    outcome = _store(tmp_path, update=True).check(make_result([1.0]), ref)
    assert outcome.status == "updated"
    assert "unreadable" in outcome.message
    assert json.loads(path.read_text())["test"] == "test_chunker[recursive:200:0]"


def test_a_file_of_another_test_is_refused(tmp_path: Path, test_file: Path) -> None:
    # Two ids no longer share a file name; a file copied (or renamed) by hand
    # still records its test, and a check refuses it.
    ref = _ref(test_file)
    _store(tmp_path, update=True).check(make_result([1.0]), ref)
    path = BaselineLayout(rootdir=tmp_path).path(test_file, NODE)
    other = _ref(test_file, "tests/test_rag.py::test_chunker[recursive_200_0]")
    other_path = BaselineLayout(rootdir=tmp_path).path(test_file, other.nodeid)
    assert other_path != path
    other_path.write_bytes(path.read_bytes())
    with pytest.raises(BaselineMismatch, match="belongs to test"):
        _store(tmp_path).check(make_result([1.0]), other)


def test_call_overrides_the_session_tolerance(tmp_path: Path, test_file: Path) -> None:
    ref = _ref(test_file)
    _store(tmp_path, update=True).check(make_result([0.8] * 50), ref)
    worse = make_result([0.78] * 50)
    with pytest.raises(BaselineRegression):
        _store(tmp_path).check(worse, ref)
    outcome = _store(tmp_path).check(
        worse, ref, tolerance="recall:-3%, precision:off, iou:off"
    )
    assert outcome.status == "ok"
    strict = _store(tmp_path, gate=GateSettings(mode="mean"))
    with pytest.raises(BaselineRegression, match="mode 'mean'"):
        strict.check(worse, ref)


def test_several_baselines_in_one_test_are_numbered(
    tmp_path: Path, test_file: Path
) -> None:
    ref = _ref(test_file)
    store = _store(tmp_path, update=True)
    first = store.check(make_result([1.0]), ref)
    second = store.check(make_result([0.5]), ref)
    named = store.check(make_result([0.5]), ref, name="finance")
    assert first.path.endswith(f"{STEM}.json")
    assert second.path.endswith(f"{STEM}.2.json")
    assert named.path.endswith(f"{STEM}.finance.json")
    store.begin(NODE)  # a rerun of the test starts again at the first file
    assert store.check(make_result([1.0]), ref).status == "unchanged"


# ------------------------------------------------------------------ unused


def _make_suite(tmp_path: Path) -> tuple[BaselineLayout, dict[str, Path]]:
    tests = tmp_path / "tests"
    tests.mkdir(exist_ok=True)
    for module in ("test_a", "test_b"):
        (tests / f"{module}.py").write_text("")
    layout = BaselineLayout(rootdir=tmp_path)
    files = {
        "a_used": layout.path(tests / "test_a.py", "test_one"),
        "a_param_gone": layout.path(tests / "test_a.py", "test_one[old]"),
        "a_failed": layout.path(tests / "test_a.py", "test_two"),
        "a_named_failed": layout.path(tests / "test_a.py", "test_two", "x"),
        "a_passed_unused": layout.path(tests / "test_a.py", "test_three"),
        "b_not_collected": layout.path(tests / "test_b.py", "test_one"),
        "gone_module": layout.path(tests / "test_gone.py", "test_one"),
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    return layout, files


def test_unused_baselines(tmp_path: Path) -> None:
    layout, files = _make_suite(tmp_path)
    store = BaselineStore(layout=layout)
    store.touched.add(files["a_used"])
    collected = [
        NodeRef.from_nodeid(f"tests/test_a.py::{name}", tmp_path)
        for name in ("test_one", "test_two", "test_three")
    ]
    passed = ["tests/test_a.py::test_one", "tests/test_a.py::test_three"]
    unused = store.unused(collected, passed)
    assert sorted(unused) == sorted(
        [files["a_param_gone"], files["a_passed_unused"], files["gone_module"]]
    )
    lines = store.summary_lines(unused)
    assert lines[1].startswith("3 unused baseline(s)")
    assert "tests/__chunkeval__/test_gone/test_one.json" in "\n".join(lines)


def test_unused_is_computed_from_worker_payloads(tmp_path: Path) -> None:
    layout, files = _make_suite(tmp_path)
    worker = BaselineStore(layout=layout)
    worker.touched.add(files["a_used"])
    worker.note_collected(["tests/test_a.py::test_one", "tests/test_a.py::test_two"])
    worker.note_passed("tests/test_a.py::test_one")
    controller = BaselineStore(layout=layout)
    controller.merge_payload(json.loads(json.dumps(worker.worker_payload())))
    unused = controller.unused()
    assert sorted(unused) == sorted(
        [files["a_param_gone"], files["a_passed_unused"], files["gone_module"]]
    )


def test_modules_selected_by_node_id_keep_every_file(tmp_path: Path) -> None:
    # `pytest --chunkeval-update 'tests/test_a.py::test_one'` collects one test:
    # the module's other files have no owner in the session, yet are not unused.
    layout, files = _make_suite(tmp_path)
    store = BaselineStore(layout=layout)
    store.touched.add(files["a_used"])
    collected = [NodeRef.from_nodeid("tests/test_a.py::test_one", tmp_path)]
    passed = ["tests/test_a.py::test_one"]
    partial = [tmp_path / "tests" / "test_a.py"]
    assert store.unused(collected, passed, partial) == [files["gone_module"]]
    # A symlinked path to the module (command line vs rootdir) is the same module.
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "tests")
    assert store.unused(collected, passed, [link / "test_a.py"]) == [
        files["gone_module"]
    ]
    # Selecting another module by node id does not protect this one.
    other = store.unused(collected, passed, [tmp_path / "tests" / "test_b.py"])
    assert files["a_param_gone"] in other

    # Through the worker payload, as under xdist.
    worker = BaselineStore(layout=layout)
    worker.touched.add(files["a_used"])
    worker.note_collected(["tests/test_a.py::test_one"])
    worker.note_passed("tests/test_a.py::test_one")
    worker.note_partial([str(tmp_path / "tests" / "test_a.py")])
    controller = BaselineStore(layout=layout)
    controller.merge_payload(json.loads(json.dumps(worker.worker_payload())))
    assert controller.unused() == [files["gone_module"]]


def test_remove_deletes_files_and_empty_directories(tmp_path: Path) -> None:
    layout, files = _make_suite(tmp_path)
    store = BaselineStore(layout=layout, update=True)
    removed = store.remove([files["gone_module"], tmp_path / "absent.json"])
    assert removed == [files["gone_module"]]
    assert not files["gone_module"].parent.exists()
    assert files["a_used"].exists()
    assert "removed 1 unused baseline(s):" in store.summary_lines()


def test_outcomes_survive_the_worker_payload(tmp_path: Path, test_file: Path) -> None:
    worker = _store(tmp_path, update=True)
    worker.check(make_result([1.0]), _ref(test_file))
    controller = _store(tmp_path)
    controller.merge_payload(worker.worker_payload())
    assert [o.status for o in controller.outcomes] == ["created"]
    assert controller.summary_lines()[0] == "baselines: 1 created"
    assert not controller.failed()
    with pytest.raises(BaselineMissing):
        controller.check(make_result([1.0]), _ref(test_file, "t.py::test_new"))
    assert controller.failed()


def test_nan_means_round_trip() -> None:
    result = make_result([1.0], precision_omega=[None])
    baseline = Baseline.from_result(result, NODE)
    loaded = Baseline.from_json(json.loads(baseline.to_text()), "x")
    assert math.isnan(loaded.metrics["precision_omega"].mean)
    assert loaded.queries["q000"]["precision_omega"] is None


def test_core_modules_do_not_import_pytest() -> None:
    code = (
        "import sys\n"
        "import pytest_chunkeval.gate.files.baseline\n"
        "import pytest_chunkeval.gate.comparison.compare\n"
        "import pytest_chunkeval.gate.store, pytest_chunkeval.gate.outcome.messages\n"
        "import pytest_chunkeval.reporting.history, pytest_chunkeval.reporting.html\n"
        "import pytest_chunkeval.reporting.markdown\n"
        "import pytest_chunkeval.reporting.json_report\n"
        "import pytest_chunkeval.cli.report\n"
        "assert 'pytest' not in sys.modules, 'pytest imported'\n"
        "assert '_pytest' not in sys.modules, '_pytest imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_unresolved_model_identity_is_not_drift() -> None:
    from support.fake_results import CONFIG, make_result
    from support.fake_results import config_change_lines as changes

    from pytest_chunkeval.gate.files.baseline import Baseline

    st = "sentence-transformers:all-MiniLM-L6-v2"
    made = {**CONFIG, "embedder_identity": f"{st}@2eb320e241974489:d384"}
    baseline = Baseline.from_result(make_result([0.5], config=made), "test_x")
    cold_ci = make_result([0.5], config={**CONFIG, "embedder_identity": f"{st}@main"})
    assert changes(baseline, cold_ci) == []
    other = {**CONFIG, "embedder_identity": f"{st}@ffffffffffffffff:d384"}
    assert changes(baseline, make_result([0.5], config=other)) == [
        f"embedder_identity: {st}@2eb320e241974489:d384 -> {st}@ffffffffffffffff:d384"
    ]
    # a hub id is named whole until downloaded, by its last part after: a model
    # pinned to a revision on a fresh runner is the same model
    pinned = "sentence-transformers:org/mini@v2"
    assert (
        changes(
            baseline, make_result([0.5], config={**CONFIG, "embedder_identity": pinned})
        )
        != []
    )
    mini = {
        **CONFIG,
        "embedder_identity": "sentence-transformers:mini@2eb320e241974489:d384",
    }
    recorded = Baseline.from_result(make_result([0.5], config=mini), "test_x")
    fresh = make_result([0.5], config={**CONFIG, "embedder_identity": pinned})
    assert changes(recorded, fresh) == []
