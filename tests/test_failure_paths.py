"""Issue 12, "no silent wrong numbers": each numbered case of the issue reproduced.

Every test here failed (or gave a wrong number with a green tick) before the fix.
The cache fault injection is in ``test_cache_faults.py``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.llm_chunking import KEY, every_third, llm_chunker, llm_evaluate
from support.openai_server import OpenAIServer
from support.plugin_project import FAST, run, write_project
from support.tiny_corpus import DOCS, make_queries

from pytest_chunkeval.chunkers import ChunkerError
from pytest_chunkeval.chunkers.llm import LLMChunkerFallbackWarning
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.cache import EmbeddingCache
from pytest_chunkeval.embedders.hashing import HashingEmbedder
from pytest_chunkeval.engine.evaluate import evaluate
from pytest_chunkeval.engine.results import EvalResult
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.engine.setup import EvaluationError

# -------------------------------------------------- 5. symlink loops in a corpus glob


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="needs symlinks")
def test_a_glob_through_a_symlink_loop_reads_each_file_once(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("alpha")
    (docs / "sub").mkdir()
    (docs / "sub" / "b.md").write_text("beta")
    (docs / "sub" / "loop").symlink_to(docs, target_is_directory=True)
    (docs / "same.md").symlink_to(docs / "a.md")
    corpus = Corpus.from_paths([str(docs / "**" / "*.md")])
    # a.md and same.md are one file: the shorter id (then the first in order) wins
    assert corpus.ids == ("a.md", "sub/b.md")
    assert not any(os.path.isabs(i) for i in corpus.ids)


# ------------------------------------- 2. a bare str (or None) from a chunker/retriever


def _data(tmp_path: Path) -> tuple[Corpus, QuerySet, EmbeddingCache]:
    corpus = Corpus.from_mapping(DOCS, name="tiny")
    return corpus, make_queries(corpus), EmbeddingCache(tmp_path / "cache")


def _evaluate(chunker: object, tmp_path: Path, **kw: object) -> EvalResult:
    corpus, queries, cache = _data(tmp_path)
    return evaluate(
        chunker,  # type: ignore[arg-type]
        corpus,
        queries,
        embedder=HashingEmbedder(),
        store="exact",
        cache=cache,
        **kw,  # type: ignore[arg-type]
    )


def whole_text(text: str) -> str:
    return text  # the bug: a str, not [text]


def nothing(text: str) -> None:
    return None


@pytest.mark.parametrize(
    ("chunker", "message"),
    [
        (whole_text, r"chunker 'whole_text' returned a single str 'Cats sleep"),
        (nothing, r"chunker 'nothing' returned NoneType \(None\) instead of a list"),
    ],
)
def test_a_chunker_returning_a_str_or_none_is_an_error(
    tmp_path: Path, chunker: object, message: str
) -> None:
    with pytest.raises(ChunkerError, match=r"document 'animals.md': " + message):
        _evaluate(chunker, tmp_path)


class StrChunker:
    name = "str-chunker"

    def chunk_spans(self, text: str) -> str:
        return text


def test_a_chunker_object_returning_a_str_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ChunkerError, match="'str-chunker' returned a single str"):
        _evaluate(StrChunker(), tmp_path)


@pytest.mark.parametrize(
    ("retriever", "message"),
    [
        (lambda q: "Cats sleep most of the day.", "returned a single str 'Cats"),
        (lambda q: None, r"returned NoneType \(None\) instead of a list"),
    ],
)
def test_a_retriever_returning_a_str_or_none_is_an_error(
    tmp_path: Path, retriever: object, message: str
) -> None:
    corpus, queries, _ = _data(tmp_path)
    with pytest.raises(
        EvaluationError,
        match=r"retriever .*<lambda>\(\) for query 'q1' \('How long do parrots live\?'"
        r"\) " + message,
    ):
        score(retriever, corpus, queries)
    with pytest.raises(EvaluationError, match="the results mapping for query 'q1'"):
        score({"q1": "Cats sleep most of the day."}, corpus, queries)


# ------------------------------------------------------------ 4. an empty query set


def test_an_evaluation_without_questions_is_an_error(tmp_path: Path) -> None:
    corpus = Corpus.from_mapping(DOCS, name="tiny")
    path = tmp_path / "queries.jsonl"
    path.write_text(json.dumps({"chunkeval_queries": 1}) + "\n")
    empty = QuerySet.load(path, corpus)
    assert len(empty) == 0
    cache = EmbeddingCache(tmp_path / "cache")
    with pytest.raises(EvaluationError, match=r"queries.jsonl holds no query"):
        evaluate(
            "recursive:20:0",
            corpus,
            empty,
            embedder=HashingEmbedder(),
            store="exact",
            cache=cache,
        )
    with pytest.raises(EvaluationError, match=r"holds no query"):
        score(lambda q: [], corpus, empty)


# ---------------------------------------- 12. the LLM chunker: cache, degraded, failed


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY) as srv:
        yield srv


def test_llm_chunker_answers_are_cached(server: OpenAIServer, tmp_path: Path) -> None:
    server.chat_handler = every_third
    first = llm_evaluate(llm_chunker(server), tmp_path / "cache")
    asked = len(server.requests_to("chat"))
    assert asked == 4
    assert list((tmp_path / "cache" / "answers").glob("*/*.ans"))  # answers kept
    server.chat_handler = lambda request: "split_after: 1"  # would change the chunks
    again = llm_evaluate(llm_chunker(server), tmp_path / "cache")
    assert len(server.requests_to("chat")) == asked  # nothing asked again
    assert again.chunk_spans == first.chunk_spans
    assert "fallback_share" not in again.chunks


def test_llm_chunker_marks_a_degraded_result(
    server: OpenAIServer, tmp_path: Path
) -> None:
    answers = iter(["no idea", "still no idea"])
    server.chat_handler = lambda request: next(answers, None) or every_third(request)
    with pytest.warns(LLMChunkerFallbackWarning):
        result = llm_evaluate(llm_chunker(server), tmp_path / "cache")
    assert result.chunks["fallback_share"] == pytest.approx(1 / 4)
    assert "[degraded: 25% of windows fell back]" in result.describe()


def test_llm_chunker_whose_windows_all_fell_back_fails(
    server: OpenAIServer, tmp_path: Path
) -> None:
    server.chat_handler = lambda request: "Sure! Here is a poem."
    with (
        pytest.warns(LLMChunkerFallbackWarning),
        pytest.raises(
            ChunkerError,
            match=r"chunker 'llm:test-model[^']*': the model gave no usable "
            r"answer for any of the \d+ window\(s\)",
        ),
    ):
        llm_evaluate(llm_chunker(server), tmp_path / "cache")


# ---------------------------------------------------- 10. group= that is not a group


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    return pytester.path


def test_an_unknown_group_fails_without_a_traceback(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        """
        from pytest_chunkeval import assert_recall_at_least

        def test_group(chunkeval):
            result = chunkeval.evaluate("recursive:30:0")
            assert_recall_at_least(result, 0.1, group="finance")
        """
    )
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "E   *UnknownGroup: group='finance' is not a group of recursive:30:0*; "
            "groups are the queries' source documents: 'finance.md', 'pets.md', "
            "'space.md'"
        ]
    )
    output = result.stdout.str()
    assert "results.py" not in output
    assert "assertions.py" not in output
    assert "KeyError" not in output


# ------------------------------------------------ 6. k of a whole retriever (score)


def test_score_applies_k_and_reports_the_results_scored(tmp_path: Path) -> None:
    corpus, queries, _ = _data(tmp_path)
    everything = [s for d in corpus for s in d.text.split("\n\n")]  # 6 paragraphs

    def retrieve(question: str) -> list[str]:
        return everything

    whole = score(retrieve, corpus, queries)
    top2 = score(retrieve, corpus, queries, k=2)
    assert whole.config["k"] is None
    assert whole.chunks["results_per_query"] == 6
    assert top2.config["k"] == 2
    assert top2.chunks["results_per_query"] == 2
    assert all(len(q.retrieved) == 2 for q in top2.queries)
    assert top2.mean("recall") < whole.mean("recall") == 1.0
    assert "retriever k=2 2.0 results/query token" in top2.describe()
    with pytest.raises(EvaluationError, match="k must be a positive number"):
        score(retrieve, corpus, queries, k=0)


# -------------------------------------- 1. results memoized by what determines them

MUTATED = """
class Splitter:
    def __init__(self, size):
        self.size = size

    def split_text(self, text):
        return [text[i : i + self.size] for i in range(0, len(text), self.size)]


class Retriever:
    k = 1

    def retrieve(self, question):
        return ["Dogs bark at the mailman every morning.",
                "Mars has two small moons, Phobos and Deimos.",
                "The auditor is Example LLP."][: self.k]


SP = Splitter(60)
RETRIEVER = Retriever()
SEEN = {}


def test_small(chunkeval):
    SEEN["small"] = chunkeval.evaluate(SP).chunks["count"]


def test_big(chunkeval):
    SP.size = 400
    big = chunkeval.evaluate(SP).chunks["count"]
    assert big < SEEN["small"], (big, SEEN["small"])


def test_one_result(chunkeval):
    SEEN["one"] = chunkeval.score(RETRIEVER, label="r").queries[0].retrieved


def test_three_results(chunkeval):
    RETRIEVER.k = 3
    three = chunkeval.score(RETRIEVER, label="r").queries[0].retrieved
    assert len(three) == 3 and len(SEEN["one"]) == 1
"""


def test_a_changed_chunker_or_retriever_object_is_evaluated_again(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(test_mutated=MUTATED)
    result = run(pytester)
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["4 configurations evaluated, 0 results reused"])


def test_twenty_tests_over_one_chunker_object_embed_and_search_once(
    pytester: pytest.Pytester, project: Path
) -> None:
    tests = "\n".join(
        f"def test_{i}(chunkeval):\n    chunkeval.evaluate(SP)\n" for i in range(20)
    )
    pytester.makepyfile(
        test_many="class Splitter:\n"
        "    def split_text(self, text):\n"
        "        return [text[i : i + 80] for i in range(0, len(text), 80)]\n\n"
        "SP = Splitter()\n\n" + tests
    )
    result = run(pytester)
    result.assert_outcomes(passed=20)
    result.stdout.fnmatch_lines(["1 configuration evaluated, 19 results reused"])


# ---------------------------------------------- 6. k of a whole retriever, in pytest


def test_k_applies_to_score_in_the_plugin_and_the_summary_shows_it(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(
        """
        import pytest

        def everything(question):
            return ["Dogs bark at the mailman every morning.",
                    "Mars has two small moons, Phobos and Deimos.",
                    "The auditor is Example LLP.",
                    "Cats sleep most of the day."]

        @pytest.mark.chunkeval(k=2)
        def test_top2(chunkeval):
            result = chunkeval.score(everything, label="top2")
            assert {len(q.retrieved) for q in result.queries} == {2}

        def test_all(chunkeval):
            result = chunkeval.score(everything, label="all")
            assert {len(q.retrieved) for q in result.queries} == {4}
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["*::test_top2 * top2 * 2 (2.0) *", "*::test_all * all * all (4.0) *"]
    )


# ---------------------------------------- 7. an unwritable or read-only cache folder


@pytest.mark.parametrize("where", ["proc", "file"])
def test_an_unusable_cache_directory_fails_at_the_first_evaluation(
    pytester: pytest.Pytester,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    where: str,
) -> None:
    if where == "proc":
        if not Path("/proc/self").is_dir():
            pytest.skip("needs /proc")
        bad = "/proc/chunkeval-x"
    else:
        (project / "blocker").write_text("a file where the cache folder would be")
        bad = str(project / "blocker" / "cache")
    monkeypatch.setenv("CHUNKEVAL_CACHE_DIR", bad)
    pytester.makepyfile(
        """
        def test_a(chunkeval):
            chunkeval.evaluate("recursive:30:0")

        def test_b(chunkeval):
            chunkeval.evaluate("recursive:60:0")

        def test_no_plugin():
            pass
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            f"*the cache directory {bad} cannot be used (*); set chunkeval_cache_dir "
            "/ --chunkeval-cache-dir (or CHUNKEVAL_CACHE_DIR) to a writable directory*"
        ]
    )
    output = result.stdout.str()
    assert "Traceback" not in output
    assert "FileNotFoundError" not in output
    assert "PermissionError" not in output


def test_a_read_only_cache_is_used_and_a_cold_one_runs_uncached(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_chunkeval.util import files

    pytester.makepyfile(
        """
        def test_a(chunkeval):
            assert chunkeval.evaluate("recursive:30:0").mean("recall") > 0
        """
    )
    warm = run(pytester)  # fills .chunkeval/cache
    warm.assert_outcomes(passed=1)
    cache = project / ".chunkeval" / "cache"
    shutil.rmtree(cache / "search")  # the optional folder is missing
    before = sorted(p.name for p in cache.rglob("*"))
    real = files.directory_writable
    monkeypatch.setattr(
        files,
        "directory_writable",
        lambda path: False if Path(path) == cache else real(path),
    )
    again = run(pytester)  # root ignores chmod: read-only is simulated
    again.assert_outcomes(passed=1)
    assert sorted(p.name for p in cache.rglob("*")) == before  # nothing written
    shutil.rmtree(cache)
    cache.mkdir(parents=True)
    cold = run(pytester, "-W", "default::UserWarning")
    cold.assert_outcomes(passed=1)
    cold.stdout.fnmatch_lines(
        [
            "*is read-only: cached entries are used, new ones are not stored (set "
            "chunkeval_cache_dir / --chunkeval-cache-dir (or CHUNKEVAL_CACHE_DIR) to "
            "a writable directory to keep them)*"
        ]
    )
    assert "--cache-dir (or" not in cold.stdout.str()  # the CLI's flag
    assert cold.stdout.str().count("is read-only") == 1
    assert list(cache.iterdir()) == []


# ------------------------------------------------ 9. chroma:PATH under pytest-xdist


def test_a_local_chroma_path_under_xdist_is_refused_at_start(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile("def test_a(chunkeval): chunkeval.evaluate('recursive:30:0')")
    result = pytester.runpytest_subprocess(
        *FAST,
        "-p",
        "xdist.plugin",
        "-p",
        "pytest_chunkeval.plugin",
        "-n",
        "2",
        "--chunkeval-store",
        "chroma:chroma-db",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*chroma:chroma-db: a local Chroma folder cannot be shared by "
            "pytest-xdist workers*use exact or chroma (in memory, one per worker), "
            "or a Chroma server: chroma+http://HOST:PORT*"
        ]
    )


# --------------------------------- 13. baselines do not record where the store lives


@pytest.mark.parametrize(
    ("recorded", "checked"),
    [
        ("chroma+http://127.0.0.1:8769", "chroma+http://localhost:8769"),
        ("chroma+http://localhost:8000", "chroma+https://chroma:443"),
        ("chroma:/home/ann/db", "chroma:/builds/ci/db"),
        ("hybrid:chroma+http://10.0.0.5:8000?n=50", "hybrid:chroma:db?n=50"),
    ],
)
def test_a_baseline_holds_no_store_address(
    tmp_path: Path, recorded: str, checked: str
) -> None:
    from support.fake_results import config_change_lines as changes

    from pytest_chunkeval.gate.files.baseline import Baseline

    clean = _evaluate("recursive:20:0", tmp_path)

    def at(store: str) -> EvalResult:
        return dataclasses.replace(clean, config={**clean.config, "store": store})

    baseline = Baseline.from_result(at(recorded), "test_x")
    text = baseline.to_text()
    for part in ("127.0.0.1", "localhost", "10.0.0.5", "/home/ann", "8769", "8000"):
        assert part not in text
    assert changes(baseline, at(checked)) == []
    # a baseline written before, with the address in it, matches too
    old = dataclasses.replace(baseline, config={**baseline.config, "store": recorded})
    assert changes(old, at(checked)) == []
    # what does determine the numbers still counts
    assert changes(baseline, at("exact")) != []
    assert changes(baseline, at("chroma?space=ip")) != []


# --------------------------------- 8. a baseline folder --chunkeval-update cannot write

BASELINE_TEST = """
def test_base(chunkeval):
    chunkeval.check_baseline(chunkeval.evaluate("recursive:30:0"))
"""


def test_a_read_only_baseline_folder_is_named_under_update(
    pytester: pytest.Pytester, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A read-only baseline folder (root ignores chmod): making a folder or a file
    # inside it is refused. Patched in the standard library, which in-process runs
    # never import again (a module of ours may be, and a patch would miss the copy
    # in use).
    readonly = project / "__chunkeval__"
    readonly.mkdir()
    real_mkdir, real_mkstemp = Path.mkdir, tempfile.mkstemp

    def inside(path: object) -> bool:
        return readonly in Path(str(path)).parents

    def mkdir(path: Path, *args: Any, **kwargs: Any) -> None:
        if inside(path):
            raise PermissionError(13, "Permission denied", str(path))
        real_mkdir(path, *args, **kwargs)

    def mkstemp(*args: Any, **kwargs: Any) -> tuple[int, str]:
        if inside(Path(str(kwargs.get("dir", ""))) / "file"):
            raise PermissionError(13, "Permission denied", str(kwargs["dir"]))
        return real_mkstemp(*args, **kwargs)

    # Path.mkdir, not os.mkdir: before Python 3.11 pathlib held its own reference
    monkeypatch.setattr(Path, "mkdir", mkdir)
    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)
    pytester.makepyfile(test_base=BASELINE_TEST)
    result = run(pytester, "--chunkeval-update")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*cannot write baseline __chunkeval__/test_base/test_base.json: Permission "
            "denied (in __chunkeval__). --chunkeval-update writes baselines there: "
            "make that folder writable, or set chunkeval_baseline_dir / "
            "--chunkeval-baseline-dir to a writable folder*"
        ]
    )
    assert "tempfile" not in result.stdout.str()


def test_a_file_in_place_of_the_baseline_folder_is_named_under_update(
    pytester: pytest.Pytester, project: Path
) -> None:
    (project / "blocker").write_text("not a folder")
    pytester.makepyfile(test_base=BASELINE_TEST)
    result = run(pytester, "--chunkeval-update", "--chunkeval-baseline-dir=blocker")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*cannot write baseline blocker/test_base/test_base.json: * (in blocker)*"]
    )
    assert "Traceback" not in result.stdout.str()


def test_a_degraded_result_is_marked_wherever_it_is_shown(tmp_path: Path) -> None:
    from pytest_chunkeval.reporting.html import html_report
    from pytest_chunkeval.reporting.markdown import markdown_report
    from pytest_chunkeval.reporting.rows import ReportEntry
    from pytest_chunkeval.reporting.table import results_table
    from pytest_chunkeval.run.outputs import SummaryRow
    from pytest_chunkeval.run.summary import render_summary

    clean = _evaluate("recursive:20:0", tmp_path)
    degraded = dataclasses.replace(
        clean, chunks={**clean.chunks, "fallback_share": 0.25}
    )
    mark = "[degraded: 25% of windows fell back]"
    row = SummaryRow("k", degraded.to_json(details=False), ["t.py::test_a"])
    shown = {
        "describe": degraded.describe(),
        "summary": "\n".join(render_summary([row])),
        "table": results_table([degraded]),
        "markdown": markdown_report([ReportEntry.of(degraded)]),
        # <wbr> (a wrapping point) is not shown
        "html": html_report([ReportEntry.of(degraded)]).replace("<wbr>", ""),
    }
    assert [where for where, text in shown.items() if mark not in text] == []
    assert mark not in results_table([clean]) + clean.describe()


# --------------------------------------------- 14. two test ids, one baseline file

COLLIDING = """
import pytest

SPECS = ["recursive:30:0", "recursive:60:0"]

@pytest.mark.parametrize("spec", SPECS, ids=["a:b", "a_b"])
def test_ids(chunkeval, spec):
    chunkeval.check_baseline(chunkeval.evaluate(spec))
"""


def test_two_ids_that_sanitize_alike_get_two_baseline_files(
    pytester: pytest.Pytester, project: Path
) -> None:
    pytester.makepyfile(test_ids=COLLIDING)
    run(pytester, "--chunkeval-update").assert_outcomes(passed=2)
    folder = project / "__chunkeval__" / "test_ids"
    names = sorted(p.name for p in folder.iterdir())
    assert len(names) == 2
    assert "test_ids[a_b].json" in names  # unchanged by sanitizing: no hash
    assert any(re.fullmatch(r"test_ids\[a_b\]-[0-9a-f]{8}\.json", n) for n in names)
    run(pytester).assert_outcomes(passed=2)  # each finds its own


def test_a_baseline_under_its_former_file_name_is_found_and_moved(
    pytester: pytest.Pytester, project: Path
) -> None:
    from pytest_chunkeval.gate.files.paths import legacy_sanitize_name, sanitize_name

    pytester.makepyfile(
        test_old="""
        def test_spec(chunkeval):
            chunkeval.check_baseline(chunkeval.evaluate("recursive:30:0"), name="x:y")
        """
    )
    run(pytester, "--chunkeval-update").assert_outcomes(passed=1)
    folder = project / "__chunkeval__" / "test_old"
    (current,) = folder.iterdir()
    assert current.name == f"test_spec.{sanitize_name('x:y')}.json"
    # as an older release named it
    former = folder / f"test_spec.{legacy_sanitize_name('x:y')}.json"
    current.rename(former)
    result = run(pytester)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*test_spec.x_y.json: the baseline of *former name*"])
    assert former.is_file()  # a check never moves files
    result = run(pytester, "--chunkeval-update")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*moved *test_spec.x_y.json to *test_spec.x_y-*"])
    assert [p.name for p in folder.iterdir()] == [current.name]
