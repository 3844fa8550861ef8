"""BEIR-format folders: read into a corpus and a query set, evaluated by the API,
the ``chunkeval eval --beir`` command and the plugin's ``chunkeval_beir`` key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.plugin_project import FAST

import pytest_chunkeval as chunkeval
from pytest_chunkeval.cli.main import main
from pytest_chunkeval.config.options import SettingsError, resolve_settings
from pytest_chunkeval.data.beir import BeirError, load_beir

CORPUS = [
    {"_id": "d1", "title": "Cats", "text": "Cats sleep most of the day. They purr."},
    {"_id": "d2", "title": "", "text": "Dogs bark at the mailman every morning."},
    {"_id": "d3", "title": "Mars", "text": "Mars has two small moons."},
    {"_id": "d4", "title": "", "text": ""},
    {"_id": 5, "title": "Tides", "text": "The Moon's gravity causes the tides."},
]
QUERIES = [
    {"_id": "q1", "text": "How long do cats sleep?"},
    {"_id": "q2", "text": "Who do dogs bark at?"},
    {"_id": "q3", "text": "How many moons does Mars have?"},
    {"_id": "q4", "text": "What causes the tides?"},
    {"_id": "q-train", "text": "A training question"},
]
QRELS = [
    ("q1", "d1", 2),
    ("q1", "d2", 0),
    ("q2", "d2", 1),
    ("q3", "d3", 1),
    ("q3", "5", 1),
    ("q4", "d2", 0),  # no relevant document: skipped and counted
]


def write_beir(root: Path, qrels=QRELS, split: str = "test") -> Path:
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text(
        "".join(json.dumps(d) + "\n" for d in CORPUS), encoding="utf-8"
    )
    (root / "queries.jsonl").write_text(
        "".join(json.dumps(q) + "\n" for q in QUERIES), encoding="utf-8"
    )
    lines = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{s}" for q, d, s in qrels]
    (root / "qrels" / f"{split}.tsv").write_text("\n".join(lines) + "\n")
    (root / "qrels" / "train.tsv").write_text(
        "query-id\tcorpus-id\tscore\nq-train\td1\t1\n"
    )
    return root


def test_a_beir_folder_loads_as_corpus_and_queries(tmp_path: Path) -> None:
    corpus, queries = chunkeval.load_beir(write_beir(tmp_path / "scifact"))
    assert corpus.name == "scifact"
    assert corpus.ids == ("d1", "d2", "d3", "d4", "5")
    assert corpus["d1"].text == "Cats\n\nCats sleep most of the day. They purr."
    assert corpus["d2"].text == "Dogs bark at the mailman every morning."
    assert queries.ids == ("q1", "q2", "q3")
    q3 = queries["q3"]
    assert [(e.doc_id, e.start, e.end) for e in q3.excerpts] == [
        ("d3", 0, len(corpus["d3"].text)),
        ("5", 0, len(corpus["5"].text)),
    ]
    assert queries["q1"].metadata == {"beir_relevance": {"d1": 2, "d2": 0}}
    assert [e.doc_id for e in queries["q1"].excerpts] == ["d1"]
    assert queries.metadata["beir"] == {
        "split": "test",
        "questions": 4,
        "skipped_without_relevant": 1,
        "empty_relevant_documents": 0,
    }
    assert queries.validated(corpus) is queries  # every excerpt where it says


def test_another_split_and_empty_relevant_documents(tmp_path: Path) -> None:
    root = write_beir(tmp_path / "b", qrels=[("q1", "d4", 1), ("q2", "d2", 1)])
    _, queries = load_beir(root)
    assert queries.ids == ("q2",)
    assert queries.metadata["beir"]["empty_relevant_documents"] == 1
    _, train = load_beir(root, "train")
    assert train.ids == ("q-train",)


@pytest.mark.parametrize(
    ("qrels", "message"),
    [
        ([("q1", "nope", 1)], "names document 'nope'"),
        ([("q9", "d1", 1)], "query 'q9' is not in queries.jsonl"),
    ],
)
def test_inconsistent_folders_are_named_errors(tmp_path, qrels, message) -> None:
    with pytest.raises(BeirError, match=message):
        load_beir(write_beir(tmp_path / "b", qrels=qrels))


def test_malformed_files_name_the_line(tmp_path: Path) -> None:
    root = write_beir(tmp_path / "b")
    (root / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\n")
    with pytest.raises(BeirError, match=r"dev\.tsv:2: expected"):
        load_beir(root, "dev")
    with pytest.raises(FileNotFoundError, match="qrels file"):
        load_beir(root, "nosuch")
    (root / "corpus.jsonl").write_text('{"_id": "a", "text": "x"}\n{oops\n')
    with pytest.raises(BeirError, match=r"corpus\.jsonl:2: not valid JSON"):
        load_beir(root)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_beir(tmp_path / "missing")


def test_a_beir_folder_evaluates(tmp_path: Path) -> None:
    corpus, queries = load_beir(write_beir(tmp_path / "b"))
    result = chunkeval.evaluate(
        "recursive:20:0",
        corpus,
        queries,
        embedder="hashing",
        store="exact",
        k=2,
        cache=tmp_path / "cache",
    )
    assert len(result.queries) == 3
    assert 0 < result.mean("recall") <= 1


def test_cli_eval_beir(tmp_path: Path, capsys) -> None:
    root = write_beir(tmp_path / "b")
    args = [
        "eval",
        "--beir",
        str(root),
        "--embedder",
        "hashing",
        "--store",
        "exact",
        "--chunker",
        "recursive:20:0",
        "--cache-dir",
        str(tmp_path / "c"),
    ]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "3 of 4 questions, 1 skipped (no relevant document)" in out
    assert "b: 5 documents, 3 queries" in out
    assert main([*args, "--beir-split", "train"]) == 0
    assert "1 of 1 questions" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--beir-split", "a/b"], "expected a split name"),
        (["--benchmark", "general"], "are exclusive"),
    ],
)
def test_cli_beir_refuses_bad_values(tmp_path, capsys, extra, message) -> None:
    args = ["eval", "--beir", str(write_beir(tmp_path / "b")), *extra]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own usage error
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.strip().splitlines()[-1].startswith(("chunkeval", "usage"))


def test_cli_missing_beir_folder_is_one_line(tmp_path, capsys) -> None:
    assert main(["eval", "--beir", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "does not exist" in err


def test_settings_keep_one_dataset() -> None:
    flags = {"chunkeval_beir": "data/scifact"}
    s = resolve_settings("/r", {"chunkeval_benchmark": "general"}, flags)
    assert (s.beir, s.benchmark) == ("data/scifact", None)
    with pytest.raises(SettingsError, match="chunkeval_benchmark and chunkeval_beir"):
        resolve_settings(
            "/r", {"chunkeval_benchmark": "general", "chunkeval_beir": "x"}, {}
        )
    with pytest.raises(SettingsError, match="chunkeval_beir_split"):
        resolve_settings("/r", {"chunkeval_beir_split": "a b"}, {})


def test_plugin_reads_the_ini_key(pytester: pytest.Pytester) -> None:
    write_beir(pytester.path / "beir")
    pytester.makeini(
        """
        [pytest]
        filterwarnings = error
        chunkeval_beir = beir
        chunkeval_embedder = hashing
        chunkeval_store = exact
        """
    )
    pytester.makepyfile(
        """
        def test_beir(chunkeval, chunkeval_queries, chunkeval_corpus):
            assert chunkeval_queries.ids == ("q1", "q2", "q3")
            assert len(chunkeval_corpus) == 5
            result = chunkeval.evaluate("recursive:20:0")
            assert len(result.queries) == 3
        """
    )
    result = pytester.runpytest_subprocess(*FAST)
    result.assert_outcomes(passed=1)
