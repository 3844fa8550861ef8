"""The corpus and query sets of the run's configurations, each read once."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_chunkeval.config.evaluation import EvaluationSpec
from pytest_chunkeval.errors import ConfigError, DataError, MissingFile

if TYPE_CHECKING:
    from pytest_chunkeval.data.corpus import Corpus
    from pytest_chunkeval.data.queries import QuerySet
    from pytest_chunkeval.data.query_types import UnplacedQuery


class Datasets:
    """Corpora and query sets by dataset key: twenty tests on one corpus read and
    validate it once."""

    def __init__(self) -> None:
        self._loaded: dict[tuple[object, ...], Any] = {}
        self._missing: set[Path] = set()
        """Query files found missing: named in full once per session."""

    def corpus(self, run: EvaluationSpec) -> Corpus:
        """The corpus of ``run`` (read once per session)."""
        key = ("corpus", run.dataset_key[0])
        if key not in self._loaded:
            self._loaded[key] = self._load_corpus(run)
        corpus: Corpus = self._loaded[key]
        return corpus

    def _load_corpus(self, run: EvaluationSpec) -> Corpus:
        if run.benchmark:
            return self._benchmark(run)[0]
        if run.beir:
            return self._beir(run)[0]
        if not run.corpus:
            raise ConfigError(
                "no corpus configured for chunkeval: set chunkeval_corpus and "
                'chunkeval_queries (or chunkeval_benchmark = "general") in '
                "[tool.pytest.ini_options], pass --chunkeval-corpus / "
                "--chunkeval-benchmark, or mark the test with "
                "@pytest.mark.chunkeval(corpus=..., queries=...)"
            )
        from pytest_chunkeval.data.corpus import Corpus, CorpusError

        paths = [str(run.path(p)) for p in run.corpus]
        try:
            return Corpus.from_paths(paths)
        except CorpusError as exc:
            where = run.origins.get("corpus", "chunkeval_corpus")
            raise DataError(
                f"cannot read the corpus {list(run.corpus)} (from {where}, relative "
                f"to rootdir {run.rootdir}): {exc}"
            ) from None

    def _benchmark(self, run: EvaluationSpec) -> tuple[Corpus, QuerySet]:
        from pytest_chunkeval.data.benchmarks import load_benchmark

        assert run.benchmark is not None
        return load_benchmark(run.benchmark)

    def _beir(self, run: EvaluationSpec) -> tuple[Corpus, QuerySet]:
        from pytest_chunkeval.data.beir import load_beir

        assert run.beir is not None
        key = ("beir", run.dataset_key[0])
        if key not in self._loaded:
            where = run.origins.get("beir", "chunkeval_beir")
            try:
                self._loaded[key] = load_beir(run.path(run.beir), run.beir_split)
            except (DataError, OSError) as exc:
                raise DataError(
                    f"cannot load the BEIR folder (from {where}): {exc}"
                ) from None
        loaded: tuple[Corpus, QuerySet] = self._loaded[key]
        return loaded

    def queries(self, run: EvaluationSpec) -> QuerySet:
        """The validated query set of ``run`` (read once per session)."""
        key = ("queries", run.dataset_key)
        if key not in self._loaded:
            self._loaded[key] = self._load_queries(run)
        queries: QuerySet = self._loaded[key]
        return queries

    def placeable(
        self, run: EvaluationSpec
    ) -> tuple[QuerySet, tuple[UnplacedQuery, ...]]:
        """The query set of ``run`` without the queries whose excerpts can no
        longer be placed in the corpus, and those (a baseline comparison on an
        edited corpus only; anywhere else they are :meth:`queries`' error)."""
        key = ("placeable", run.dataset_key)
        if key not in self._loaded:
            self._loaded[key] = self._load_queries(run, lenient=True)
        placeable: tuple[QuerySet, tuple[UnplacedQuery, ...]] = self._loaded[key]
        return placeable

    def _load_queries(self, run: EvaluationSpec, lenient: bool = False) -> Any:
        if run.benchmark and not run.queries:
            benchmark = self._benchmark(run)[1]
            return (benchmark, ()) if lenient else benchmark
        if run.beir and not run.queries:
            beir = self._beir(run)[1]
            return (beir, ()) if lenient else beir
        corpus = self.corpus(run)
        if not run.queries:
            raise ConfigError(
                f"no query set configured for the corpus {list(run.corpus)}: set "
                "chunkeval_queries (or --chunkeval-queries, or the marker's "
                "queries=). To create one:\n\n    "
                + generate_command(run.corpus, "queries.filtered.jsonl")
                + f"\n\n(run in {run.rootdir}; choose --n and --model, see "
                "`chunkeval generate --help`)"
            )
        path = run.path(run.queries)
        where = run.origins.get("queries", "chunkeval_queries")
        if not path.exists():
            # One line, once per session: most often a typo; how to generate a
            # set is in the docs (docs/generate.md). The other tests that need
            # it fail too, pointing to that line.
            if path in self._missing:
                raise MissingFile(
                    f"query set {run.queries} does not exist (named in full in "
                    "the first test that needed it)"
                )
            self._missing.add(path)
            raise MissingFile(
                f"query set {run.queries} (from {where}) does not exist: {path} "
                "(docs/generate.md)"
            )
        from pytest_chunkeval.data.queries import QuerySet
        from pytest_chunkeval.data.query_types import QuerySetError

        try:
            if lenient:
                return QuerySet.load_placeable(path, corpus)
            return QuerySet.load(path, corpus)
        except (QuerySetError, OSError) as exc:
            raise DataError(
                f"cannot load the query set (from {where}): {exc}"
            ) from None


GENERATE_EXAMPLE = ("--n", "200", "--model", "gpt-4o-mini")
"""Required ``chunkeval generate`` arguments, with example values."""


def generate_command(corpus: Sequence[str], queries: str) -> str:
    """The ``chunkeval generate`` command whose filtered output is ``queries``.

    ``generate`` appends to a raw log (``--out``) and writes the filtered set, the
    file tests read, to ``--filtered-out``; the raw log goes next to it.
    """
    path = Path(queries)
    if path.name.endswith(".filtered.jsonl"):
        raw = path.name[: -len(".filtered.jsonl")] + ".jsonl"
    else:
        raw = path.stem + ".raw.jsonl"
    raw_path = str(path.with_name(raw))
    args = ["chunkeval", "generate", "--corpus", *corpus]
    args += ["--out", raw_path, "--filtered-out", queries, *GENERATE_EXAMPLE]
    return shlex.join(args)
