"""TREC run and qrels export: a round trip through ir_measures (a test-only
dependency) gives each question's mrr; the files' shape; the command and the
plugin's flags."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

import pytest_chunkeval as chunkeval
from pytest_chunkeval.reporting.trec import docno, qrels_text, run_text, trec_piece

ir_measures = pytest.importorskip("ir_measures")


def _evaluate(unit: str, tmp_path: Path, **options):
    corpus, queries = chunkeval.load_benchmark("general")
    return chunkeval.evaluate(
        "recursive:200:0",
        corpus,
        queries,
        embedder="hashing",
        store="exact",
        unit=unit,
        cache=tmp_path / "cache",
        **options,
    )


def _per_query(measure, run: Path, qrels: Path) -> dict[str, float]:
    return {
        m.query_id: m.value
        for m in ir_measures.iter_calc(
            [measure],
            ir_measures.read_trec_qrels(str(qrels)),
            ir_measures.read_trec_run(str(run)),
        )
    }


@pytest.mark.parametrize("unit", ["char", "token"])
def test_ir_measures_reproduce_mrr_per_question(unit: str, tmp_path: Path) -> None:
    result = _evaluate(unit, tmp_path, k=5)
    piece = trec_piece(result)
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.txt"
    run.write_text(run_text(piece))
    qrels.write_text(qrels_text(piece))
    got = _per_query(ir_measures.RR, run, qrels)
    ours = {q.id: q.scores["mrr"] for q in result.queries}
    assert set(got) <= set(ours)
    assert got == {qid: pytest.approx(ours[qid]) for qid in got}
    # a question whose ranking holds no relevant chunk scores 0 in both
    assert any(v == 0 for v in got.values())
    assert sum(v > 0 for v in got.values()) == sum(v > 0 for v in ours.values())


def test_graded_qrels_count_the_units_covered(tmp_path: Path) -> None:
    result = _evaluate("char", tmp_path, k=3)
    piece = trec_piece(result)
    record = result.queries[0]
    rows = {name: (b, g) for qid, name, b, g in piece["qrels"] if qid == record.id}
    for span in record.retrieved:
        binary, graded = rows[docno(span)]
        doc, start, end = span
        shared = set()
        for d, s, e in record.excerpts:
            if d == doc:
                shared |= set(range(max(s, start), min(e, end)))
        assert graded == len(shared)
        assert binary == int(bool(shared))
    graded_text = qrels_text(piece, graded=True)
    assert graded_text.count("\n") == len(piece["qrels"])


def test_run_file_scores_decrease_strictly(tmp_path: Path) -> None:
    result = _evaluate("char", tmp_path, k=5)
    lines = run_text(trec_piece(result)).splitlines()
    by_query: dict[str, list[float]] = {}
    for line in lines:
        qid, q0, name, _rank, score, tag = line.split()
        assert q0 == "Q0"
        assert tag == "recursive:200:0_k=5_char_hashing:256_exact"
        assert ":" in name
        by_query.setdefault(qid, []).append(float(score))
    for scores in by_query.values():
        assert all(a > b for a, b in itertools.pairwise(scores))


def test_docno_quotes_whitespace_and_marks_repeats() -> None:
    assert docno(("my doc.md", 3, 9)) == "my%20doc.md:3-9"
    assert docno(("a.md", 0, 5), 2) == "a.md:0-5#2"


def test_cli_eval_writes_run_and_qrels(tmp_path: Path, capsys) -> None:
    from pytest_chunkeval.cli.main import main

    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.txt"
    args = [
        "eval",
        "--benchmark",
        "general",
        "--embedder",
        "hashing",
        "--store",
        "exact",
        "--unit",
        "char",
        "--cache-dir",
        str(tmp_path / "c"),
        "--trec-run",
        str(run),
        "--qrels",
        str(qrels),
    ]
    assert main(args) == 0
    assert run.exists()
    assert qrels.exists()
    assert (tmp_path / "qrels.graded.txt").exists()
    got = _per_query(ir_measures.RR, run, qrels)
    assert len(got) > 400
    assert (
        main([*args, "--chunker", "recursive:100:0", "--chunker", "fixed:100:0"]) == 0
    )
    out = capsys.readouterr().out
    assert "run.recursive_100_0.trec" in out
    assert (tmp_path / "run.fixed_100_0.trec").exists()
    assert (tmp_path / "qrels.fixed_100_0.graded.txt").exists()


def test_runs_of_two_stores_are_told_apart(tmp_path: Path, capsys) -> None:
    """--store exact --store bm25: each run file's tag and name its store (both
    carried the label 'recursive:200:0' and were told apart by '-2' only)."""
    from pytest_chunkeval.cli.main import main

    pytest.importorskip("bm25s")
    run = tmp_path / "run.trec"
    args = ["eval", "--benchmark", "general", "--embedder", "hashing"]
    args += ["--store", "exact", "--store", "bm25", "--k", "2"]
    args += ["--cache-dir", str(tmp_path / "c"), "--trec-run", str(run)]
    assert main(args) == 0
    capsys.readouterr()
    files = sorted(p.name for p in tmp_path.glob("run.*.trec"))
    assert len(files) == 2, files
    assert any("exact" in f for f in files), files
    assert any("bm25" in f for f in files), files
    for f in files:
        tags = {line.split()[-1] for line in (tmp_path / f).read_text().splitlines()}
        assert len(tags) == 1
        (tag,) = tags
        assert ("exact" in tag) == ("exact" in f), (f, tag)
        assert ("bm25" in tag) == ("bm25" in f), (f, tag)


def test_cli_refuses_an_empty_path(capsys) -> None:
    from pytest_chunkeval.cli.main import main

    with pytest.raises(SystemExit) as exc:
        main(["eval", "--benchmark", "general", "--trec-run", " "])
    assert exc.value.code == 2
    assert "expected a path" in capsys.readouterr().err


def test_plugin_writes_the_files(pytester: pytest.Pytester) -> None:
    from support.plugin_project import FAST, write_project

    write_project(pytester.path)
    pytester.makepyfile(
        """
        def test_eval(chunkeval, chunkeval_chunker):
            chunkeval.evaluate()
        """
    )
    result = pytester.runpytest_subprocess(
        *FAST,
        "-n",
        "2",
        "--chunkeval-trec-run",
        "out/run.trec",
        "--chunkeval-qrels",
        "out/qrels.txt",
    )
    result.assert_outcomes(passed=2)
    written = sorted(p.name for p in (pytester.path / "out").iterdir())
    assert written == [
        "qrels.recursive_30_0.graded.txt",
        "qrels.recursive_30_0.txt",
        "qrels.recursive_60_0.graded.txt",
        "qrels.recursive_60_0.txt",
        "run.recursive_30_0.trec",
        "run.recursive_60_0.trec",
    ]
    run = pytester.path / "out" / "run.recursive_30_0.trec"
    qrels = pytester.path / "out" / "qrels.recursive_30_0.txt"
    assert len(_per_query(ir_measures.RR, run, qrels)) == 6
