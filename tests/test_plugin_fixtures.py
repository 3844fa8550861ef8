"""The pytest plugin end to end with pytester: fixtures, marker, options, failure
text, summary, JUnit properties and registration hooks.

Inner runs use the fast deterministic ``hashing`` embedder and the ``exact`` store on
a three-document corpus, in-process.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.plugin_project import INI, mentions, run, write_project


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    return pytester.path


# ------------------------------------------------------------------- fixtures


def test_session_fixtures(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makepyfile(
        """
        def test_fixtures(
            chunkeval_corpus, chunkeval_queries, chunkeval_embedder, chunkeval_store
        ):
            assert chunkeval_corpus.ids == ("finance.md", "pets.md", "space.md")
            assert [q.id for q in chunkeval_queries][:2] == ["q-bark", "q-parrot"]
            assert chunkeval_embedder.identity.startswith("hashing")
            assert chunkeval_store.name == "exact"
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=1)
    # Fixtures used, nothing evaluated: no summary section.
    assert mentions(result.stdout.str()) == []


def test_chunker_fixture_is_parametrized_by_spec(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        test_ids="""
        def test_chunker(chunkeval_chunker, request):
            assert chunkeval_chunker.name == request.node.callspec.id
            assert len(chunkeval_chunker.chunk_spans("Some text. More text.")) >= 1
        """
    )
    result = run(pytester, "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "test_ids.py::test_chunker[[]recursive:30:0[]] PASSED*",
            "test_ids.py::test_chunker[[]recursive:60:0[]] PASSED*",
        ]
    )
    # The flag replaces the ini list; commas separate specs.
    result = run(pytester, "-v", "--chunkeval-chunkers=recursive:45:5")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["test_ids.py::test_chunker[[]recursive:45:5[]] *"])


def test_user_parametrization_of_the_chunker_wins(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.parametrize("chunkeval_chunker", ["recursive:20:0"], indirect=True)
        def test_chunker(chunkeval_chunker):
            assert chunkeval_chunker.name == "recursive:20:0"
        """
    )
    run(pytester).assert_outcomes(passed=1)


def test_no_chunkers_configured_is_a_collection_error(
    pytester: pytest.Pytester, project: Path
) -> None:
    (project / "pytest.ini").write_text(INI.replace("chunkeval_chunkers", "#"))
    pytester.makepyfile("def test_x(chunkeval_chunker): pass")
    result = run(pytester)
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*test_x uses chunkeval_chunker but no chunker is configured*"]
    )


@pytest.mark.compat_smoke
def test_evaluate_with_the_current_chunker_and_summary(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        test_eval="""
        def test_eval(chunkeval, chunkeval_chunker):
            result = chunkeval.evaluate()  # this test's chunker
            assert result is chunkeval.evaluate(chunkeval_chunker)
            assert result.config["chunker"] == chunkeval_chunker.name
            assert result.config["k"] == 5 and result.config["store"] == "exact"
            assert len(result.queries) == 6
            assert 0.0 <= result.mean("recall") <= 1.0
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        [
            "*- chunkeval -*",
            "test*chunker*k*recall*precision*IoU*F1*P_omega*chunk*time",
            "test_eval.py::test_eval[[]recursive:30:0[]]*recursive:30:0*5*tok*s",
            "test_eval.py::test_eval[[]recursive:60:0[]]*recursive:60:0*5*tok*s",
            "metric means in %; chunk: mean chunk size",
            "2 configurations evaluated, 2 results reused",
        ]
    )
    # The summary comes before pytest's final line.
    out = result.stdout.str()
    assert out.index("- chunkeval -") < out.index("2 passed")


def test_twenty_tests_on_one_configuration_evaluate_once(
    pytester: pytest.Pytester, project: Path
) -> None:
    tests = "\n".join(
        f"def test_{i}(chunkeval):\n"
        f"    assert chunkeval.evaluate('recursive:30:0').mean('recall') >= 0\n"
        for i in range(20)
    )
    pytester.makepyfile(test_many=tests)
    result = run(pytester)
    result.assert_outcomes(passed=20)
    result.stdout.fnmatch_lines(
        [
            "test_many.py::test_0 (+19)*recursive:30:0*",
            "1 configuration evaluated, 19 results reused",
        ]
    )


def test_quiet_shortens_the_summary(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makepyfile("def test_a(chunkeval): chunkeval.evaluate('recursive:30:0')")
    result = run(pytester, "-q")
    result.stdout.fnmatch_lines(
        [
            "*- chunkeval -*",
            "test  *recall  precision  IoU",
            "test_quiet_shortens_the_summary.py::test_a  *",
            "1 configuration evaluated, 0 results reused",
        ]
    )
    assert "chunk size" not in result.stdout.str()
    result = run(pytester, "-qq")
    lines = result.stdout.str().splitlines()
    start = next(i for i, line in enumerate(lines) if "- chunkeval -" in line)
    # the first run's result, read back from the result cache (and said so)
    assert lines[start + 1] == (
        "1 configuration evaluated (1 read back from the result cache), "
        "0 results reused"
    )


@pytest.mark.compat_smoke
def test_score_a_whole_retriever(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makepyfile(
        """
        from pytest_chunkeval import assert_recall_at_least

        def test_retriever(chunkeval):
            excerpts = {q.text: [e.text for e in q.excerpts] for q in chunkeval.queries}
            retrieve = excerpts.__getitem__
            result = chunkeval.score(retrieve, label="perfect")
            assert result.label == "perfect"
            assert_recall_at_least(result, 1.0)
            assert result.queries[0].scores["precision_omega"] is None
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["*::test_retriever*perfect*all (1.0)*100.0*100.0*100.0*-*"]
    )


def test_retriever_results_not_in_the_corpus_fail_cleanly(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        """
        def test_retriever(chunkeval):
            chunkeval.score(lambda question: ["Penguins cannot fly."])
        """
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*result #1: retrieved text 'Penguins cannot fly.'*"])
    result.stdout.no_fnmatch_line("*engine.py*")  # no traceback into the engine


def test_a_bug_in_a_retriever_keeps_its_traceback(
    pytester: pytest.Pytester, project: Path
) -> None:
    # Only a ChunkevalError is a "clean" failure; any other exception is a bug
    # (here the user's) and pytest shows where it happened.
    pytester.makepyfile(
        """
        def broken(question):
            return {}["no such key"]

        def test_retriever(chunkeval):
            chunkeval.score(broken)
        """
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*KeyError: 'no such key'*"])
    result.stdout.fnmatch_lines(["*return {}*no such key*"])  # the traceback


def retrieve_first_sentence(question: str) -> list[str]:
    """A module-level retriever: its qualified name is the same on every worker."""
    return ["Dogs bark at the mailman every morning."]


class Retriever:
    def retrieve(self, question: str) -> list[str]:
        return ["Mars has two small moons, Phobos and Deimos."]


def test_score_rows_under_xdist(tmp_path: Path) -> None:
    # Two sessions stand for two xdist workers; the controller merges what they
    # send. A score row is named by the label, else a module-level function's
    # name: those merge across workers. Anything else is only itself (an id
    # means nothing in another process), as a chunker object is for evaluate.
    from pytest_chunkeval.config.options import Settings
    from pytest_chunkeval.run.evaluations import score
    from pytest_chunkeval.run.session import ChunkevalSession

    write_project(tmp_path)
    settings = Settings(
        rootdir=str(tmp_path), corpus=("docs",), queries="queries.jsonl", unit="char"
    )
    shared = Retriever()  # one object in both "workers": equal ids, two processes
    controller = ChunkevalSession(settings)
    for worker in ("gw0", "gw1"):
        session = ChunkevalSession(settings, worker_id=worker)
        run = session.default_run
        test = f"t.py::test_{worker}"
        score(session, run, Retriever(), nodeid=test, label="object")
        score(session, run, Retriever().retrieve, nodeid=test, label="mars")
        score(session, run, retrieve_first_sentence, nodeid=test)
        score(session, run, shared, nodeid=test)
        score(session, run, lambda q: ["The Moon orbits the Earth"], nodeid=test)
        controller.merge_payload(json.loads(json.dumps(session.worker_payload())))

    rows = controller.summary_rows()
    both = ["t.py::test_gw0", "t.py::test_gw1"]
    by_label: dict[str, list[list[str]]] = {}
    for row in rows:
        by_label.setdefault(row.result["label"], []).append(row.nodeids)
    assert by_label == {
        "object": [both],
        "mars": [both],
        "retrieve_first_sentence": [both],
        "Retriever": [["t.py::test_gw0"], ["t.py::test_gw1"]],
        "test_score_rows_under_xdist.<locals>.<lambda>": [
            ["t.py::test_gw0"],
            ["t.py::test_gw1"],
        ],
    }
    assert controller.evaluations == 10

    # In one process the same holds, without worker suffixes; the same object
    # scored again is reused, and stays one row. Scoring is memoized by the spans
    # a retriever returned: another object answering the same is not scored again
    # (it is asked every question), but is its own row.
    single = ChunkevalSession(settings)
    run = single.default_run
    first = score(single, run, shared, nodeid="t.py::test_a")
    assert score(single, run, shared, nodeid="t.py::test_b") is first
    score(single, run, Retriever(), nodeid="t.py::test_c")
    assert (single.evaluations, single.reused) == (1, 2)
    assert [r.nodeids for r in single.summary_rows()] == [
        ["t.py::test_a", "t.py::test_b"],
        ["t.py::test_c"],
    ]
    assert not any("@" in key for key in single.rows)


def test_chunker_objects_and_bad_specs(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        """
        import pytest

        def paragraphs(text):
            return [p for p in text.split("\\n\\n") if p.strip()]

        @pytest.mark.parametrize("chunkeval_chunker", [paragraphs], indirect=True)
        def test_function(chunkeval, chunkeval_chunker):
            assert chunkeval_chunker.name == "paragraphs"
            assert chunkeval.evaluate().config["chunker"] == "paragraphs"
            assert chunkeval.evaluate(paragraphs) is chunkeval.evaluate(paragraphs)

        @pytest.mark.parametrize("n", range(3))
        def test_bad_spec(chunkeval, n):
            chunkeval.evaluate("recursive:x")
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(
        ["*bad chunker spec 'recursive:x'*expected recursive:SIZE[[]:OVERLAP[]]*"]
    )
    assert "Traceback" not in result.stdout.str()
    assert "registry.py" not in result.stdout.str()


def test_evaluate_without_a_chunker_fails_clearly(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile("def test_a(chunkeval): chunkeval.evaluate()")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*test_a: chunkeval.evaluate() needs a chunker: pass a spec such as*"]
    )


def test_missing_queries_file_is_one_line(
    pytester: pytest.Pytester, project: Path
) -> None:
    """A mistyped path is one line naming it, once per session (it printed a
    whole `chunkeval generate` recipe in every test); the recipe is in
    docs/generate.md, and the other tests that need the file point to that
    line."""
    (project / "pytest.ini").write_text(
        INI.replace("queries.jsonl", "tests/missing.jsonl")
    )
    pytester.makepyfile(
        """
        def test_queries(chunkeval_queries):
            pass

        def test_evaluate(chunkeval):
            chunkeval.evaluate("recursive:30:0")
        """
    )
    result = run(pytester)
    result.assert_outcomes(errors=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*query set tests/missing.jsonl (from chunkeval_queries*) does not exist: "
            "*missing.jsonl (docs/generate.md)",
        ]
    )
    out = result.stdout.str()
    assert "chunkeval generate" not in out
    assert out.count("missing.jsonl (docs/generate.md)") == 1  # once per session
    assert out.count("does not exist (named in full in the first test") == 1
    assert "Traceback" not in result.stdout.str()


def test_no_corpus_configured(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    pytester.makeini("[pytest]\n")
    pytester.makepyfile("def test_a(chunkeval): chunkeval.evaluate('recursive:30:0')")
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no corpus configured for chunkeval: set*"])


def test_paths_resolve_against_rootdir(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sub = project / "tests"
    sub.mkdir()
    (sub / "test_sub.py").write_text(
        "def test_a(chunkeval_corpus):\n    assert len(chunkeval_corpus) == 3\n"
    )
    monkeypatch.chdir(sub)
    run(pytester, "test_sub.py").assert_outcomes(passed=1)


# --------------------------------------------------------------------- marker


def test_marker_overrides_settings(pytester: pytest.Pytester, project: Path) -> None:
    other = project / "other"
    other.mkdir()
    (other / "one.md").write_text("Owls hunt at night. Owls can rotate their heads.")
    (other / "q.jsonl").write_text(
        '{"chunkeval_queries": 1}\n'
        '{"id": "o", "question": "When do owls hunt?", "doc_id": "one.md", '
        '"excerpts": [{"text": "Owls hunt at night."}]}\n'
    )
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.chunkeval(k=1, unit="char", embedder="hashing:64")
        def test_k_unit(chunkeval):
            result = chunkeval.evaluate("recursive:30:0")
            assert result.config["k"] == 1 and result.config["unit"] == "char"
            assert result.config["embedder"] == "hashing:64"
            assert all(len(q.retrieved) == 1 for q in result.queries)

        @pytest.mark.chunkeval(corpus="other", queries="other/q.jsonl")
        def test_corpus(chunkeval):
            assert chunkeval.corpus.ids == ("one.md",)
            assert chunkeval.evaluate("recursive:30:0").queries[0].id == "o"

        @pytest.mark.chunkeval(k="min")
        class TestClass:
            @pytest.mark.chunkeval(store="exact")
            def test_class_marker(self, chunkeval):
                assert chunkeval.evaluate("recursive:30:0").config["k"] == "min"

        @pytest.mark.chunkeval(benchmark="general")
        def test_benchmark(chunkeval):
            assert chunkeval.corpus.name == "general"
            assert len(chunkeval.queries) == 472

        def test_evaluate_k(chunkeval):
            assert chunkeval.evaluate("recursive:30:0", k=2).config["k"] == 2
        """
    )
    run(pytester).assert_outcomes(passed=5)


def test_marker_thresholds(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makepyfile(
        test_thresholds="""
        import pytest

        @pytest.mark.chunkeval(min_recall=0.0, min_iou=0.0, min_precision_omega=0.0)
        def test_pass(chunkeval, chunkeval_chunker):
            chunkeval.evaluate(chunkeval_chunker)

        @pytest.mark.chunkeval(min_recall=1.0, k=1)
        def test_fail(chunkeval):
            chunkeval.evaluate("recursive:30:0")
            chunkeval.evaluate("recursive:60:0")

        @pytest.mark.chunkeval(min_recall=0.5)
        def test_no_result():
            pass

        @pytest.mark.chunkeval(min_recall=1.0)
        def test_own_failure_wins(chunkeval):
            chunkeval.evaluate("recursive:30:0")
            assert False, "the test's own message"
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=3)
    out = result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*test_fail: @pytest.mark.chunkeval(min_recall=1) not met",
            "recall mean 0.* is below the required 1.000 "
            "(recursive:30:0 k=1 token hashing:256 exact; 6 queries)",
            "* worst quer* by recall (below 1):",
            "  1. q-* recall 0.*",
            "     missed (*% retrieved): *.md[[]*:*[]] '*'",
            "     retrieved #1 (instead): *.md[[]*:*[]] '*'",
        ]
    )
    # Every result the test produced is checked: both chunkers fail here.
    assert "(recursive:60:0 k=1 token hashing:256 exact; 6 queries)" in out
    result.stdout.fnmatch_lines(
        ["*test_no_result: @pytest.mark.chunkeval(min_recall=0.5) states thresholds*"]
    )
    result.stdout.fnmatch_lines(["*AssertionError: the test's own message*"])
    assert "test_own_failure_wins: @pytest.mark.chunkeval" not in out


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        (
            "min_recal=0.5",
            "*test_a: @pytest.mark.chunkeval got an unknown keyword 'min_recal' "
            "(did you mean 'min_recall'?)*",
        ),
        (
            "min_recall=80",
            "*test_a: @pytest.mark.chunkeval(min_recall=80): min_recall must be "
            "between 0 and 1 (a fraction: 0.8 means 80%), got 80",
        ),
        ("k=0", "*test_a: @pytest.mark.chunkeval(k=0): k must be a positive*"),
        (
            "embedder='no spec'",
            "*test_a: @pytest.mark.chunkeval(embedder='no spec'): embedder spec "
            "'no spec' is not valid: 'no spec' contains a space*",
        ),
    ],
)
def test_marker_errors_name_the_test(
    pytester: pytest.Pytester, project: Path, marker: str, message: str
) -> None:
    pytester.makepyfile(
        f"""
        import pytest

        @pytest.mark.chunkeval({marker})
        def test_a(chunkeval):
            chunkeval.evaluate("recursive:30:0")

        def test_b():
            pass
        """
    )
    result = run(pytester)
    result.assert_outcomes(errors=1, passed=1)
    result.stdout.fnmatch_lines(["*ERROR at setup of test_a*", message])
    assert " k k " not in result.stdout.str()
    assert "embedder embedder" not in result.stdout.str()


def test_marker_is_registered(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.chunkeval(corpus=, queries=, *"])


# ---------------------------------------------------------- failure messages


def test_assertion_helper_failure_text(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        """
        from pytest_chunkeval import share_at_least
        from pytest_chunkeval.assertions import assert_iou_at_least

        def test_iou(chunkeval):
            result = chunkeval.evaluate("recursive:60:0", k=1)
            assert_iou_at_least(result, 0.9, statistic=share_at_least(0.5))
        """
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            ">       assert_iou_at_least(result, 0.9, statistic=share_at_least(0.5))",
            "E       AssertionError: share of queries with iou >= 0.5 is 0.*, below "
            "the required 0.900 "
            "(recursive:60:0 k=1 token hashing:256 exact; 6 queries)",
            "E       * worst quer* by iou (below 0.5):",
            "E         1. q-* iou 0.* '*'",
        ]
    )
    assert "assertions.py" not in result.stdout.str()


# ------------------------------------------------------------------- options


def test_help_lists_flags_and_ini_keys(pytester: pytest.Pytester) -> None:
    result = run(pytester, "--help")
    result.stdout.fnmatch_lines(
        [
            "chunkeval (retrieval quality of chunking):",
            "  --chunkeval-corpus=PATH",
            "*--chunkeval-queries=FILE*",
            "*--chunkeval-benchmark=NAME*",
            "*--chunkeval-embedder=SPEC*",
            "*--chunkeval-store=SPEC*",
            "*--chunkeval-k=K*",
            "*--chunkeval-unit=UNIT*",
            "*--chunkeval-tokenizer=SPEC*",
            "*--chunkeval-cache-dir=DIR*",
            "*--chunkeval-chunkers=SPECS*",
        ]
    )
    for key in ("corpus (args)", "k (string)", "chunkers (args)", "cache_dir (string)"):
        result.stdout.fnmatch_lines([f"*chunkeval_{key}*"])


@pytest.mark.parametrize(
    ("args", "ini", "message"),
    [
        (
            ["--chunkeval-k=0"],
            "",
            "*argument --chunkeval-k: k must be a positive integer*",
        ),
        (
            [],
            "chunkeval_unit = words\n",
            "ERROR: chunkeval: chunkeval_unit: unit must be 'token'*",
        ),
        (
            ["--chunkeval-embedder=nope"],
            "",
            "ERROR: chunkeval: chunkeval_embedder: unknown embedder 'nope'; "
            "valid forms: *sentence-transformers:NAME_OR_PATH*",
        ),
        (
            ["--chunkeval-chunkers=recursive:30:0,nope:3"],
            "",
            "ERROR: chunkeval: chunkeval_chunkers: unknown chunker 'nope:3'*",
        ),
        (
            ["--chunkeval-store=exact:x"],
            "",
            "ERROR: chunkeval: chunkeval_store: *exact*",
        ),
        (
            ["--chunkeval-benchmark=nope"],
            "",
            "ERROR: chunkeval: chunkeval_benchmark: unknown benchmark 'nope'; "
            "available: general*",
        ),
    ],
)
def test_invalid_settings_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], ini: str, message: str
) -> None:
    pytester.makeini("[pytest]\n" + ini)
    pytester.makepyfile("def test_a(): pass")
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_cache_dir_setting(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_a(chunkeval): chunkeval.evaluate('recursive:30:0')")
    run(pytester).assert_outcomes(passed=1)
    assert any((project / ".chunkeval" / "cache").iterdir())
    run(pytester, "--chunkeval-cache-dir=elsewhere").assert_outcomes(passed=1)
    assert any((project / "elsewhere").iterdir())
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", str(project / "from-env"))
    run(pytester).assert_outcomes(passed=1)
    assert any((project / "from-env").iterdir())


# ---------------------------------------------------------- plugin presence


def test_suite_not_using_the_plugin_prints_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a(): pass")
    result = run(pytester)
    result.assert_outcomes(passed=1)
    assert mentions(result.stdout.str() + result.stderr.str()) == []


def test_disabling_the_plugin(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_a(chunkeval): pass")
    result = run(pytester, "-p", "no:chunkeval")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'chunkeval' not found*"])
    help_text = run(pytester, "-p", "no:chunkeval", "--help").stdout.str()
    assert "--chunkeval-k" not in help_text


# ----------------------------------------------------------- junit, hooks


def test_junit_xml_properties(pytester: pytest.Pytester, project: Path) -> None:
    pytester.makepyfile(
        """
        def test_a(chunkeval):
            chunkeval.evaluate("recursive:30:0")

        def test_b():
            pass
        """
    )
    run(pytester, "--junitxml=report.xml").assert_outcomes(passed=2)
    tree = ET.parse(project / "report.xml")
    cases = {c.get("name"): c for c in tree.iter("testcase")}
    props = {p.get("name"): p.get("value") for p in cases["test_a"].iter("property")}
    assert props["chunkeval.config"] == "recursive:30:0 k=5 token hashing:256 exact"
    for metric in ("recall", "precision", "iou", "f1", "precision_omega"):
        assert 0.0 <= float(props[f"chunkeval.{metric}"]) <= 1.0
    assert list(cases["test_b"].iter("property")) == []


@pytest.mark.compat_smoke
def test_registration_hooks(pytester: pytest.Pytester, project: Path) -> None:
    # imported before the inner runs, so that they use these registries
    from pytest_chunkeval.chunkers import CHUNKERS
    from pytest_chunkeval.stores import STORES

    (project / "pytest.ini").write_text(
        INI.replace("chunkeval_embedder = hashing", "chunkeval_embedder = tinyhash")
        .replace("chunkeval_store = exact", "chunkeval_store = mystore")
        .replace("recursive:30:0 recursive:60:0", "lines recursive:30:0")
        + "chunkeval_tokenizer = words\n"
    )
    pytester.makeconftest(
        """
        import re

        import pytest

        from pytest_chunkeval.chunkers import as_chunker
        from pytest_chunkeval.embedders.hashing import HashingEmbedder
        from pytest_chunkeval.stores import ExactStore
        from pytest_chunkeval.tokenizers.base import OffsetsTokenizer

        CALLS = []

        @pytest.fixture
        def hook_calls():
            return CALLS

        def by_lines(text):
            return [line for line in text.splitlines() if line.strip()]

        def pytest_chunkeval_register_chunkers(registry):
            CALLS.append("chunkers")
            registry.register("lines", lambda rest: as_chunker(by_lines, "lines"))

        def pytest_chunkeval_register_embedders(registry):
            CALLS.append("embedders")
            registry.register("tinyhash", lambda rest: HashingEmbedder(32), "tinyhash")

        def pytest_chunkeval_register_stores(registry):
            CALLS.append("stores")
            registry.register("mystore", lambda rest: ExactStore(), "mystore")

        class Words:
            def encode_with_offsets(self, text):
                return [(m.start(), m.end()) for m in re.finditer(r"\\S+", text)]

        def pytest_chunkeval_register_tokenizers(registry):
            CALLS.append("tokenizers")
            registry.register(
                "words", lambda rest: OffsetsTokenizer(Words(), "words"), "words"
            )
        """
    )
    pytester.makepyfile(
        test_hooks="""
        def test_custom(chunkeval, chunkeval_chunker, hook_calls):
            result = chunkeval.evaluate(chunkeval_chunker)
            assert result.config["embedder"] == "tinyhash"
            assert result.config["tokenizer"] == "words"
            # Called once each, at start-up (a setting names them).
            assert hook_calls == ["chunkers", "embedders", "stores", "tokenizers"]
        """
    )
    result = run(pytester, "-v")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["test_hooks.py::test_custom[[]lines[]] PASSED*"])
    # Names a hook registered show up in the forms an error lists.
    result = run(pytester, "--chunkeval-chunkers=nope")
    result.stderr.fnmatch_lines(["*unknown chunker 'nope'; valid forms: *lines*"])
    # The registries are the process's: a session's names end with it.
    assert "mystore" not in STORES
    assert "lines" not in CHUNKERS
