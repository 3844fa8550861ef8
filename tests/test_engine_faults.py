"""The engine's answers to a hostile tester: span offsets that are not
whole numbers, an LLM chunker whose model never gives a split point, ``k`` of the
fixture's ``score``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from support.llm_chunking import KEY, every_third, llm_chunker, llm_evaluate
from support.openai_server import OpenAIServer
from support.plugin_project import run, write_project

from pytest_chunkeval.chunkers import ChunkerError
from pytest_chunkeval.chunkers.llm import LLMChunkerFallbackWarning
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.data.query_types import Excerpt, Query
from pytest_chunkeval.engine.score import score
from pytest_chunkeval.engine.setup import EvaluationError

TEXT = "Dogs bark at the mailman. Cats sleep all day. Fish swim in schools."


def _data() -> tuple[Corpus, QuerySet]:
    corpus = Corpus.from_mapping({"doc.md": TEXT})
    start = TEXT.index("Cats")
    excerpt = Excerpt("Cats sleep all day.", "doc.md", start, start + 19)
    return corpus, QuerySet([Query("q", "Do cats sleep?", (excerpt,), "doc.md")])


@pytest.mark.parametrize(
    ("span", "shown"),
    [
        (("doc.md", True, 37), "True (bool)"),
        (("doc.md", "18", "37"), "'18' (str)"),
        (("doc.md", 18.0, 37), "18.0 (float)"),
    ],
)
def test_score_refuses_offsets_that_are_not_whole_numbers(
    span: tuple[Any, ...], shown: str
) -> None:
    corpus, queries = _data()
    with pytest.raises(
        EvaluationError,
        match=re.escape(
            "query 'q' ('Do cats sleep?'), result #1: a span's offsets must be "
            f"whole numbers (character offsets), got {shown}"
        ),
    ):
        score({"q": [span]}, corpus, queries)


def test_score_takes_numpy_integers_as_offsets() -> None:
    corpus, queries = _data()
    start = TEXT.index("Cats")
    span = ("doc.md", np.int64(start), np.int32(start + 19))
    assert score({"q": [span]}, corpus, queries).mean("recall") == 1.0


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    with OpenAIServer(api_key=KEY) as srv:
        yield srv


def test_a_model_that_never_gives_a_split_point_fails(
    server: OpenAIServer, tmp_path: Path
) -> None:
    # "split_after:" with no number: invalid for every window but the last, where
    # it reads as "do not split"; the model never split anything
    server.chat_handler = lambda request: "split_after:"
    with (
        pytest.warns(LLMChunkerFallbackWarning),
        pytest.raises(ChunkerError, match=r"no usable answer for any of the 4 "),
    ):
        llm_evaluate(llm_chunker(server), tmp_path / "cache")


def test_a_last_window_without_a_split_after_good_ones_is_usable(
    server: OpenAIServer, tmp_path: Path
) -> None:
    def answer(request: Any) -> str:
        user = next(m for m in request["messages"] if m["role"] == "user")
        if "This is the end of the document" in user["content"]:
            return "split_after:"
        return every_third(request)

    server.chat_handler = answer
    result = llm_evaluate(llm_chunker(server), tmp_path / "cache")
    assert "fallback_share" not in result.chunks


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    return pytester.path


def test_the_fixtures_score_takes_k_and_records_it(
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

        def test_top2(chunkeval):
            result = chunkeval.score(everything, k=2, label="top2")
            assert {len(q.retrieved) for q in result.queries} == {2}
            assert result.config["k"] == 2

        def test_all(chunkeval):
            result = chunkeval.score(everything, label="all")
            assert {len(q.retrieved) for q in result.queries} == {4}

        @pytest.mark.parametrize("k", [0, True, "2"])
        def test_bad_k(chunkeval, k):
            chunkeval.score(everything, k=k, label="bad")
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*chunkeval.score(k=0): k must be a positive whole number of results*",
            "*chunkeval.score(k=True): k must be a positive whole number of results*",
            "*chunkeval.score(k='2'): k must be a positive whole number of results*",
        ]
    )
