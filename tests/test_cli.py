"""The ``chunkeval eval`` and ``chunkeval cache`` commands."""

from __future__ import annotations

import json

import pytest
from support.cli_project import DOCS, eval_args, write_project

from pytest_chunkeval.cli.main import main
from pytest_chunkeval.data.corpus import Corpus
from pytest_chunkeval.data.queries import QuerySet
from pytest_chunkeval.embedders.base import embedder_cache_identity
from pytest_chunkeval.embedders.hashing import HashingEmbedder

HASHING = embedder_cache_identity(HashingEmbedder())  # its packs' identity


@pytest.fixture
def project(tmp_path):
    return write_project(tmp_path)


def run(project, *extra):
    return main(eval_args(project, *extra))


def test_eval_prints_one_row_per_chunker_and_k(project, capsys):
    out_json = project / "out.json"
    code = run(
        project,
        "--chunker",
        "recursive:10:0",
        "--chunker",
        "fixed:8:0",
        "--k",
        "1",
        "--k",
        "min",
        "--json",
        str(out_json),
    )
    assert code == 0
    out = capsys.readouterr().out
    lines = [
        line for line in out.splitlines() if line.startswith(("recursive", "fixed"))
    ]
    assert len(lines) == 4
    assert "Recall" in out
    assert "PrecisionΩ" in out
    assert "2 documents, 2 queries" in out
    results = json.loads(out_json.read_text())
    assert [r["config"]["k"] for r in results] == [1, "min", 1, "min"]
    assert results[0]["queries"][0]["id"] == "q1"


def test_second_run_hits_the_cache(project, capsys):
    run(project, "--chunker", "recursive:10:0")
    assert "0 hits" in capsys.readouterr().out
    run(project, "--chunker", "recursive:10:0", "--k", "3")
    assert "0 misses" in capsys.readouterr().out  # another k: vectors reused
    run(project, "--chunker", "recursive:10:0")
    out = capsys.readouterr().out
    # the result itself read back: nothing embedded, nothing even looked up
    assert "(1 read back from the result cache); embedding cache: no lookups" in out


def test_bad_chunker_spec_is_a_usage_error(project, capsys):
    assert run(project, "--chunker", "recursiv:10") == 2
    err = capsys.readouterr().err
    assert "unknown chunker 'recursiv:10'" in err
    assert "recursive:SIZE[:OVERLAP]" in err


def test_missing_data_arguments(capsys):
    assert main(["eval"]) == 2
    assert "--benchmark NAME, --corpus PATH" in capsys.readouterr().err


def test_bad_k_is_rejected_by_argparse(project, capsys):
    with pytest.raises(SystemExit) as exc:
        run(project, "--k", "0")
    assert exc.value.code == 2
    assert "k must be a positive integer" in capsys.readouterr().err


def test_cache_info_and_clear(project, capsys):
    run(project, "--chunker", "recursive:10:0")
    capsys.readouterr()
    assert main(["cache", "info", "--cache-dir", str(project / "cache")]) == 0
    out = capsys.readouterr().out
    assert "hashing:256@1" in out
    # one exact search, past k for the noise evidence (engine/evidence.py): the
    # scored ranks are its prefix
    assert "stored search results: 1" in out
    assert "evaluation results: 1 evaluations" in out
    assert main(["cache", "clear", "--cache-dir", str(project / "cache")]) == 0
    out = capsys.readouterr().out
    assert "1 stored search results, 1 stored evaluation results" in out
    main(["cache", "info", "--cache-dir", str(project / "cache")])
    assert "(empty)" in capsys.readouterr().out


def test_cache_clear_of_an_identity_that_is_not_cached_says_so(project, capsys):
    run(project, "--chunker", "recursive:10:0")
    capsys.readouterr()
    cache = project / "cache"
    args = ["cache", "clear", "--cache-dir", str(cache), "--identity", "nosuch"]
    assert main(args) == 2
    assert capsys.readouterr().err == (
        "chunkeval cache: error: --identity 'nosuch' matches no cached embedder "
        f"in {cache}; `chunkeval cache info` lists: {HASHING}\n"
    )
    assert main([*args[:-1], "hashing:256@1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("removed ")
    assert not out.startswith("removed 0 ")


def test_eval_budget_sweep_shows_budget_and_asked_columns_only(project, capsys):
    out_json = project / "sweep.json"
    code = run(
        project,
        "--chunker",
        "recursive:4:0",
        "--chunker",
        "recursive:10:0",
        "--budget",
        "12",
        "--metric",
        "recall",
        "--metric",
        "ndcg",
        "--loss",
        "--json",
        str(out_json),
    )
    assert code == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("Chunking"))
    assert header.split() == [
        "Chunking", "Size", "Overlap", "k", "Budget", "Sent", "Recall", "nDCG",
        "Chunk", "size",
    ]  # fmt: skip
    assert "where recall is lost" in out
    assert "chunking lost" in out
    results = json.loads(out_json.read_text())
    assert [r["config"]["budget"] for r in results] == [12, 12]
    for r in results:
        assert all(q["retrieved_units"] <= 12 for q in r["queries"])
        assert set(r["loss"]) == {"chunking", "search"}


def test_bad_budget_is_rejected_by_argparse(project, capsys):
    with pytest.raises(SystemExit):
        run(project, "--budget", "0")
    assert "budget must be a positive whole number" in capsys.readouterr().err


def test_an_unwritable_output_is_one_line_and_exit_2(project, capsys):
    # --json "inside" a regular file: the OS refuses a path the user named
    out = project / "a.md" / "out.json"
    assert run(project, "--chunker", "recursive:10:0", "--json", str(out)) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"chunkeval eval: error: --json {out} cannot be written "
        f"({project / 'a.md'} is a file, not a directory): give a file to write\n"
    )
    assert captured.out == ""  # refused before evaluating (cli/common.py)


def test_an_unknown_query_id_is_a_key_error_and_a_chunkeval_error(project):
    from pytest_chunkeval.errors import DataError

    queries = QuerySet.load(project / "queries.jsonl", Corpus.from_mapping(DOCS))
    with pytest.raises(KeyError) as info:
        queries["q9"]
    assert isinstance(info.value, DataError)
    assert str(info.value).endswith("no query with id 'q9'")


GENERATE = ["generate", "--corpus", "a", "--out", "b", "--model", "m"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # one positive-integer check for every count (there were two, worded apart)
        (
            ["relationships", "--benchmark", "general", "--extractor", "x", "--k", "0"],
            "argument --k: '0': expected an integer >= 1",
        ),
        ([*GENERATE, "--n", "0"], "argument --n: '0': expected an integer >= 1"),
        (
            [*GENERATE, "--n", "2", "--approximate", "1.5"],
            "argument --approximate: '1.5': expected a similarity in (0, 1]",
        ),
        (
            ["filter", "--queries", "q.jsonl", "--duplicate-threshold", "2"],
            "argument --duplicate-threshold: '2': expected a cosine similarity in "
            "[-1, 1], 'off' or 'default'",
        ),
        (
            [*GENERATE, "--n", "2", "--price-per-1k", "1,x"],
            "argument --price-per-1k: price '1,x': expected USD per 1000 tokens",
        ),
    ],
)
def test_a_validators_config_error_is_a_one_line_usage_error(args, message, capsys):
    # the validators raise ConfigError; config/option.argparse_type adapts them
    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"chunkeval {args[0]}: error: ")
    assert message in err[-1]
