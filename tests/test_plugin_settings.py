"""The plugin's pure parts: option table, settings, marker parsing, run configs,
xdist merging and the summary text (no pytester, no engine)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn

import pytest

from pytest_chunkeval.config.evaluation import EvaluationSpec
from pytest_chunkeval.config.options import (
    OPTIONS,
    Settings,
    SettingsError,
    resolve_settings,
)
from pytest_chunkeval.config.values import (
    parse_chunker_list,
    parse_k,
    parse_spec,
    parse_unit,
)
from pytest_chunkeval.errors import ChunkevalError, ConfigError
from pytest_chunkeval.run.checks import check_thresholds
from pytest_chunkeval.run.datasets import generate_command
from pytest_chunkeval.run.marker import MarkerError, parse_marker
from pytest_chunkeval.run.outputs import SummaryRow
from pytest_chunkeval.run.session import ChunkevalSession
from pytest_chunkeval.run.summary import render_summary

ROOT = Path("/project")


def test_option_table_is_complete_and_prefixed() -> None:
    names = [o.name for o in OPTIONS]
    assert names == [
        "corpus",
        "queries",
        "benchmark",
        "embedder",
        "store",
        "k",
        "budget",
        "unit",
        "tokenizer",
        "locate",
        "copies",
        "rerank",
        "cache_dir",
        "chunkers",
        "judge",
        "judgments",
        "update",
        "baseline_dir",
        "tolerance",
        "gate_mode",
        "gate_confidence",
        "max_left_out",
        "gate_by",
        "fail_unused",
        "repeats",
        "history",
        "json",
        "md",
        "html",
        "beir",
        "beir_split",
        "inspect",
        "trec_run",
        "qrels",
    ]
    for option in OPTIONS:
        assert option.ini in (f"chunkeval_{option.name}", None)
        assert option.flag.startswith("--chunkeval-")
        assert "_" not in option.flag
        assert option.help.endswith(".")
    # Command-line only: a run's outputs and the update switch.
    assert [o.name for o in OPTIONS if o.ini is None] == [
        "update",
        "json",
        "md",
        "html",
        "trec_run",
        "qrels",
    ]
    assert [o.name for o in OPTIONS if o.switch] == [
        "update",
        "fail_unused",
        "inspect",
    ]


@pytest.mark.parametrize(
    ("raw", "expected"), [("5", 5), (" 10 ", 10), ("min", "min"), (3, 3)]
)
def test_parse_k(raw: str, expected: object) -> None:
    assert parse_k(raw) == expected


@pytest.mark.parametrize("raw", ["0", "-1", "five", "", "1.5", "MIN"])
def test_parse_k_rejects(raw: str) -> None:
    with pytest.raises(ConfigError, match=r"positive integer.*or 'min'"):
        parse_k(raw)


def test_parse_unit_and_spec() -> None:
    assert parse_unit("char") == "char"
    with pytest.raises(ConfigError, match=r"'token'.*'char'"):
        parse_unit("tokens")
    assert parse_spec("sentence-transformers:all-MiniLM-L6-v2?device=cpu") == (
        "sentence-transformers:all-MiniLM-L6-v2?device=cpu"
    )
    assert parse_spec("chroma+http://localhost:8000") == "chroma+http://localhost:8000"
    with pytest.raises(
        ConfigError,
        match=r"chunker spec 'two words' is not valid: 'two words' contains a space",
    ):
        parse_spec("two words", "chunker")


def test_parse_chunker_list() -> None:
    assert parse_chunker_list("recursive:200:0, fixed:400:0 recursive:200:0") == (
        "recursive:200:0",
        "fixed:400:0",
    )
    assert parse_chunker_list(["a:1", "b"]) == ("a:1", "b")


def test_resolve_defaults() -> None:
    settings = resolve_settings(ROOT, {}, {}, environ={})
    assert settings == Settings(
        rootdir=str(ROOT),
        cache_dir=str(ROOT / ".chunkeval" / "cache"),
        judgments=str(ROOT / "__chunkeval__" / "judgments.json"),
    )
    assert not settings.configured


def test_resolve_ini_then_flags() -> None:
    ini = {
        "chunkeval_corpus": ["docs", "more/*.md"],
        "chunkeval_queries": "q.jsonl",
        "chunkeval_k": "10",
        "chunkeval_chunkers": ["recursive:200:0", "fixed:400:0"],
        "chunkeval_cache_dir": "cache",
    }
    settings = resolve_settings(ROOT, ini, {}, environ={})
    assert settings.corpus == ("docs", "more/*.md")
    assert settings.k == 10
    assert settings.chunkers == ("recursive:200:0", "fixed:400:0")
    assert settings.cache_dir == str(ROOT / "cache")
    assert settings.configured
    flags = {
        "chunkeval_k": "min",
        "chunkeval_chunkers": [("a:1",), ("b:2", "a:1")],
        "chunkeval_cache_dir": "/abs/cache",
    }
    settings = resolve_settings(ROOT, ini, flags, environ={})
    assert settings.k == "min"
    assert settings.chunkers == ("a:1", "b:2")
    assert settings.cache_dir == "/abs/cache"


def test_cache_dir_environment_beats_ini_not_flag() -> None:
    env = {"CHUNKEVAL_CACHE_DIR": "/env/cache"}
    ini = {"chunkeval_cache_dir": "cache"}
    assert resolve_settings(ROOT, ini, {}, environ=env).cache_dir == "/env/cache"
    flags = {"chunkeval_cache_dir": "flag"}
    assert resolve_settings(ROOT, ini, flags, environ=env).cache_dir == str(
        ROOT / "flag"
    )


def test_bad_ini_value_names_the_key() -> None:
    with pytest.raises(SettingsError, match=r"^chunkeval_k: k must be a positive"):
        resolve_settings(ROOT, {"chunkeval_k": "0"}, {}, environ={})
    with pytest.raises(SettingsError, match=r"^chunkeval_unit: unit must be"):
        resolve_settings(ROOT, {"chunkeval_unit": "word"}, {}, environ={})


def test_resolve_baseline_history_and_report_options() -> None:
    ini = {
        "chunkeval_tolerance": "recall:-1%, iou:-0.002",
        "chunkeval_gate_mode": "mean",
        "chunkeval_gate_confidence": "99%",
        "chunkeval_fail_unused": True,  # pytest's bool ini type
        "chunkeval_baseline_dir": "snapshots",
        "chunkeval_history": "results/history.jsonl",
    }
    flags = {"chunkeval_update": True, "chunkeval_json": "out/r.json"}
    settings = resolve_settings(ROOT, ini, flags, environ={})
    assert settings.tolerance == "recall:-1%, iou:-0.002"
    assert (settings.gate_mode, settings.gate_confidence) == ("mean", 0.99)
    assert settings.update
    assert settings.fail_unused
    assert settings.baseline_dir == "snapshots"  # the layout resolves it
    assert settings.history == str(ROOT / "results" / "history.jsonl")
    assert settings.json == str(ROOT / "out" / "r.json")
    assert settings.md is None
    assert settings.session_end_work
    assert not settings.configured  # nothing to validate: no engine import
    quiet = resolve_settings(ROOT, {"chunkeval_fail_unused": "false"}, {}, {})
    assert not quiet.fail_unused
    assert not quiet.session_end_work


@pytest.mark.parametrize(
    ("ini", "message"),
    [
        ({"chunkeval_tolerance": "recall:+1%"}, r"^chunkeval_tolerance: "),
        ({"chunkeval_tolerance": "recal:-1%"}, r"^chunkeval_tolerance: .*recall"),
        ({"chunkeval_gate_mode": "median"}, r"^chunkeval_gate_mode: bad gate mode"),
        ({"chunkeval_gate_confidence": "1"}, r"^chunkeval_gate_confidence: "),
        ({"chunkeval_fail_unused": "maybe"}, r"^chunkeval_fail_unused: expected true"),
    ],
)
def test_bad_baseline_settings_name_the_key(ini: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        resolve_settings(ROOT, ini, {}, environ={})


def test_benchmark_and_corpus() -> None:
    both = {"chunkeval_benchmark": "general", "chunkeval_corpus": ["docs"]}
    with pytest.raises(SettingsError, match="are exclusive"):
        resolve_settings(ROOT, both, {}, environ={})
    # A flag replaces the other one from the ini file.
    flagged = resolve_settings(
        ROOT, {"chunkeval_benchmark": "general"}, {"chunkeval_corpus": ["d"]}, {}
    )
    assert (flagged.benchmark, flagged.corpus) == (None, ("d",))


# ------------------------------------------------------------------ marker


def test_marker_merges_closest_last() -> None:
    marks = [
        ((), {"k": 3, "min_recall": 0.5}),  # the function's (closest)
        ((), {"k": 10, "unit": "char", "min_iou": 0.1}),  # the class's
    ]
    options = parse_marker(marks, "t.py::test")
    assert dict(options.overrides) == {"k": 3, "unit": "char"}
    assert dict(options.thresholds) == {"iou": 0.1, "recall": 0.5}
    assert not options.baseline
    marked = parse_marker([((), {"baseline": True}), ((), {"k": 3})], "t.py::test")
    assert marked.baseline
    assert dict(marked.overrides) == {"k": 3}  # not a run setting


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"min_recal": 0.5},
            "unknown keyword 'min_recal' (did you mean 'min_recall'?)",
        ),
        ({"k": 0}, "k must be a positive integer"),
        ({"k": True}, "must be a positive integer or 'min', got bool True"),
        ({"min_recall": 80}, "0.8 means 80%"),
        ({"min_iou": "high"}, "must be a number between 0 and 1, got str 'high'"),
        ({"embedder": 3}, "must be a spec string naming the embedder, got int 3"),
        ({"unit": "word"}, "unit must be 'token'"),
        ({"corpus": []}, "must be a path, a glob or a list of them"),
        ({"corpus": "d", "benchmark": "general"}, "are exclusive"),
        ({"baseline": 1}, "baseline must be True or False, got 1"),
    ],
)
def test_marker_errors_name_the_test(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(MarkerError) as info:
        parse_marker([((), kwargs)], "tests/test_x.py::test_y")
    assert str(info.value).startswith("tests/test_x.py::test_y: @pytest.mark.chunkeval")
    assert message in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"k": 0},
            "@pytest.mark.chunkeval(k=0): k must be a positive integer (chunks "
            "retrieved per query) or 'min' (as many as the chunks overlapping each "
            "query's excerpts), got 0",
        ),
        (
            {"embedder": "no spec"},
            "@pytest.mark.chunkeval(embedder='no spec'): embedder spec 'no spec' "
            "is not valid: "
            "'no spec' contains a space (write %20); expected "
            "NAME[:ARG...][?KEY=VALUE&...][@SPEC], e.g. "
            "sentence-transformers:all-MiniLM-L6-v2",
        ),
        (
            {"embedder": 3},
            "@pytest.mark.chunkeval(embedder=3): embedder must be a spec string "
            "naming the embedder, got int 3",
        ),
        (
            {"unit": "word"},
            "@pytest.mark.chunkeval(unit='word'): unit must be 'token' (tokens of the "
            "tokenizer, the default) or 'char' (characters, as the reference "
            "implementation), got 'word'",
        ),
    ],
)
def test_marker_errors_name_the_key_once(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(MarkerError) as info:
        parse_marker([((), kwargs)], "t.py::test_y")
    assert str(info.value) == f"t.py::test_y: {message}"


def test_marker_positional_arguments_are_errors() -> None:
    with pytest.raises(MarkerError, match="keyword arguments only"):
        parse_marker([(("general",), {})], "t::x")


def test_run_config_applies_marker() -> None:
    settings = resolve_settings(
        ROOT,
        {"chunkeval_benchmark": "general", "chunkeval_embedder": "hashing"},
        {},
        environ={},
    )
    base = EvaluationSpec.from_settings(settings)
    assert (base.benchmark, base.k, base.unit) == ("general", 5, "token")
    marker = parse_marker([((), {"corpus": "docs", "queries": "q.jsonl", "k": 2})], "t")
    run = EvaluationSpec.from_settings(settings, marker.overrides)
    assert (run.benchmark, run.corpus, run.queries, run.k) == (
        None,
        ("docs",),
        "q.jsonl",
        2,
    )
    assert run.embedder == "hashing"
    assert run != base
    assert run.origins["corpus"] == "@pytest.mark.chunkeval(corpus=...)"
    assert EvaluationSpec.from_settings(settings) == base


def test_generate_command_quotes_paths() -> None:
    # --corpus takes several paths; the tests read the filtered output.
    assert generate_command(["docs/**/*.md", "my notes"], "tests/q.jsonl") == (
        "chunkeval generate --corpus 'docs/**/*.md' 'my notes' "
        "--out tests/q.raw.jsonl --filtered-out tests/q.jsonl "
        "--n 200 --model gpt-4o-mini"
    )
    assert generate_command(["docs"], "queries.filtered.jsonl") == (
        "chunkeval generate --corpus docs --out queries.jsonl "
        "--filtered-out queries.filtered.jsonl --n 200 --model gpt-4o-mini"
    )


def test_generate_command_matches_the_cli() -> None:
    import shlex

    from pytest_chunkeval.cli import generate as cli_generate

    parser = argparse.ArgumentParser(prog="chunkeval")
    cli_generate.register(parser.add_subparsers(dest="command"))
    argv = shlex.split(generate_command(["docs", "more docs"], "tests/q.jsonl"))
    args = parser.parse_args(argv[1:])
    assert args.command == "generate"
    assert args.corpus == ["docs", "more docs"]
    assert (args.out, args.filtered_out) == ("tests/q.raw.jsonl", "tests/q.jsonl")


def test_missing_dataset_messages(tmp_path: Path) -> None:
    session = ChunkevalSession(Settings(rootdir=str(tmp_path)))
    with pytest.raises(ChunkevalError, match="no corpus configured"):
        session.datasets.corpus(session.default_run)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Some text.")
    settings = Settings(rootdir=str(tmp_path), corpus=("docs",), queries="q.jsonl")
    session = ChunkevalSession(settings)
    with pytest.raises(ChunkevalError) as info:
        session.datasets.queries(session.default_run)
    assert "docs/generate.md" in str(info.value)  # one line; the recipe is there
    assert "\n" not in str(info.value)
    assert str(tmp_path / "q.jsonl") in str(info.value)


def test_thresholds_without_results() -> None:
    text = check_thresholds("t.py::test", {"recall": 0.5}, [])
    assert text is not None
    assert "@pytest.mark.chunkeval(min_recall=0.5) states thresholds" in text


# ----------------------------------------------------------- merge, summary


def _row(key: str, nodeids: list[str], recall: float, k: object = 5) -> SummaryRow:
    metrics = {
        m: {"mean": recall, "std": 0.0, "n": 3}
        for m in ("recall", "precision", "iou", "f1")
    }
    metrics["precision_omega"] = {"mean": None, "std": None, "n": 0}
    return SummaryRow(
        key,
        {
            "label": "c",
            "config": {"chunker": f"chunker-{key}", "k": k, "unit": "token"},
            "metrics": metrics,
            "chunks": {"count": 4, "mean_units": 212.4, "mean_chars": 900.0},
            "timings": {"chunk": 0.5, "embed": 0.25},
        },
        nodeids,
    )


def test_merge_worker_payloads() -> None:
    controller = ChunkevalSession(Settings(rootdir="/r"))
    a = {
        "evaluations": 1,
        "reused": 2,
        "rows": [_row("x", ["t::a", "t::b"], 0.5).to_json()],
    }
    b = {
        "evaluations": 2,
        "reused": 0,
        "rows": [
            _row("x", ["t::c"], 0.5).to_json(),
            _row("y", ["t::d"], 0.7).to_json(),
        ],
    }
    controller.merge_payload(a)
    controller.merge_payload(b)
    assert (controller.evaluations, controller.reused) == (3, 2)
    rows = controller.summary_rows()
    assert [r.key for r in rows] == ["x", "y"]
    assert rows[0].nodeids == ["t::a", "t::b", "t::c"]


def test_render_summary_full_quiet_and_empty() -> None:
    rows = [_row("x", ["t.py::test_a", "t.py::test_b"], 0.8123), _row("y", ["t::c"], 1)]
    full = render_summary(rows, verbosity=0, evaluations=2, reused=1)
    assert full[0].split() == [
        "test",
        "chunker",
        "k",
        "recall",
        "precision",
        "IoU",
        "F1",
        "P_omega",
        "chunk",
        "time",
    ]
    assert full[1].split() == [
        "t.py::test_a",
        "(+1)",
        "chunker-x",
        "5",
        "81.2",
        "81.2",
        "81.2",
        "81.2",
        "-",
        "212",
        "tok",
        "0.75s",
    ]
    assert full[-1] == "2 configurations evaluated, 1 result reused"
    quiet = render_summary(rows, verbosity=-1, evaluations=2, reused=1)
    assert quiet[0].split() == ["test", "k", "recall", "precision", "IoU"]
    assert quiet[2].split() == ["t::c", "5", "100.0", "100.0", "100.0"]
    assert render_summary(rows, verbosity=-2, evaluations=1, reused=0) == [
        "1 configuration evaluated, 0 results reused"
    ]
    assert render_summary([], verbosity=0) == []


def test_quiet_summary_tells_the_rows_of_a_k_sweep_apart() -> None:
    rows = [_row(f"k{k}", ["t.py::test_sweep"], 0.5, k=k) for k in (1, 3, 10)]
    quiet = render_summary(rows, verbosity=-1, evaluations=3, reused=0)
    body = quiet[1:4]
    assert [line.split()[:2] for line in body] == [
        ["t.py::test_sweep", "1"],
        ["t.py::test_sweep", "3"],
        ["t.py::test_sweep", "10"],
    ]
    assert len(set(body)) == 3


def test_only_a_chunkeval_error_is_memoized_as_a_user_error(tmp_path: Path) -> None:
    from pytest_chunkeval.errors import DataError

    session = ChunkevalSession(Settings(rootdir=str(tmp_path)))
    calls = []

    def user_error() -> NoReturn:
        calls.append(1)
        raise DataError("retrieved text 'x' was not found in the corpus")

    for _ in range(2):  # the second call fails fast, without computing again
        with pytest.raises(ChunkevalError, match="was not found in the corpus"):
            session.memoized(("k1",), user_error, "t::a", None)
    assert calls == [1]

    def bug() -> NoReturn:
        raise KeyError("dimension")

    with pytest.raises(KeyError):  # not turned into a clean test failure
        session.memoized(("k2",), bug, "t::b", None)


def test_the_option_table_adapts_config_errors_for_argparse() -> None:
    """Validators raise ConfigError; a flag's argparse type turns it into the usage
    error argparse reports, in this one place (config/option.py)."""
    import argparse

    from pytest_chunkeval.config.option import argparse_type

    convert = argparse_type(parse_k)
    assert convert("3") == 3
    with pytest.raises(argparse.ArgumentTypeError, match=r"positive integer"):
        convert("zero")
    parser = argparse.ArgumentParser(prog="p", exit_on_error=False)
    parser.add_argument("--k", type=convert)
    with pytest.raises(argparse.ArgumentError, match=r"positive integer"):
        parser.parse_args(["--k", "zero"])
