"""The generator of the 10x / 100x benchmark data (``benchmarks/scale_benchmark.py``):
copies load as a corpus and query set whose excerpts match their documents."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from pytest_chunkeval.data.benchmarks import load_benchmark
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "scale_benchmark.py"


@pytest.fixture(scope="module")
def scale() -> ModuleType:
    spec = importlib.util.spec_from_file_location("scale_benchmark", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_substitution_keeps_lengths_and_marks_the_copy(scale: ModuleType) -> None:
    text = "The cat and the hat: that was theirs. Other words stay."
    assert scale.substitute(text, 0) == text
    seven = scale.substitute(text, 7)
    assert seven == "T07 cat a07 t07 hat: th07 w07 theirs. Other words stay."
    assert len(seven) == len(text)
    with pytest.raises(ValueError, match="at most 100"):
        scale.substitute(text, 100)


@pytest.mark.parametrize("variant", ["verbatim", "distinct"])
def test_copies_load_with_excerpts_on_their_documents(
    scale: ModuleType, variant: str, tmp_path: Path
) -> None:
    docs, questions = scale.write_copies(tmp_path / variant, 2, variant)
    assert (docs, questions) == (10, 944)
    corpus = Corpus.from_paths([tmp_path / variant / "corpora"])
    queries = QuerySet.load(tmp_path / variant / "questions_df.csv", corpus)
    assert len(queries) == 944
    bundled, bundled_queries = load_benchmark("general")
    first = corpus["finance-c000.md"].text
    second = corpus["finance-c001.md"].text
    assert first == bundled["finance.md"].text
    assert len(second) == len(first)
    assert (second == first) == (variant == "verbatim")
    asked = {query.text for query in queries}
    bundled_asked = {query.text for query in bundled_queries}
    assert (asked == bundled_asked) == (variant == "verbatim")
    for query in queries:
        for excerpt in query.excerpts:
            assert corpus[excerpt.doc_id].text[excerpt.start : excerpt.end] == (
                excerpt.text
            )
