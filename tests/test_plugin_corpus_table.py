"""Per-question items share one corpus table per test function
(docs/baselines.md, "Per-question baselines"): a doc edit changes one file,
old files (the corpus inline) read and migrate, a damaged table fails closed
(pytester runs on the project of tests/support/plugin_project.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.plugin_project import PER_QUESTION_RETRIEVER, QUERIES, run, write_project

IDS = [q[0] for q in QUERIES]

TABLE = "__chunkeval__/test_items/test_question.corpus.json"


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CHUNKEVAL_CACHE_DIR", raising=False)
    write_project(pytester.path)
    pytester.makepyfile(test_items=PER_QUESTION_RETRIEVER)
    return pytester.path


def _files(root: Path) -> dict[str, bytes]:
    folder = root / "__chunkeval__"
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(folder.rglob("*.json"))
    }


def _changed(before: dict[str, bytes], after: dict[str, bytes]) -> list[str]:
    return sorted(p for p in {*before, *after} if before.get(p) != after.get(p))


def test_a_doc_edit_changes_the_shared_table_only(
    pytester: pytest.Pytester, project: Path
) -> None:
    run(pytester, "--chunkeval-update").assert_outcomes(passed=6)
    before = _files(project)
    assert sorted(before) == sorted(
        [TABLE, *(f"__chunkeval__/test_items/test_question[{q}].json" for q in IDS)]
    )
    item = json.loads(before["__chunkeval__/test_items/test_question[q-bark].json"])
    assert item["corpus_table"] == "test_question.corpus.json"
    assert "documents" not in item
    assert "corpus_hash" not in item
    assert set(json.loads(before[TABLE])["documents"]) == {
        "finance.md",
        "pets.md",
        "space.md",
    }
    finance = project / "docs" / "finance.md"
    finance.write_text(finance.read_text() + "\nThe board meets every quarter.\n")
    # Compared: the edit is named, read from the table.
    result = run(pytester)
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["*documents edited: finance.md (+1 sentence*"])
    # Under xdist too: the workers' items share the table, written once.
    result = run(pytester, "--chunkeval-update", "-n", "2")
    result.assert_outcomes(passed=6)
    assert _changed(before, _files(project)) == [TABLE]
    assert result.stdout.str().count("documents edited") == 1
    result.stdout.fnmatch_lines(
        [
            "baselines: 6 unchanged",
            f"  updated {TABLE} (documents edited: finance.md (+1 sentence / "
            "+32 chars))",
        ]
    )
    run(pytester).assert_outcomes(passed=6)


def _inline(project: Path) -> None:
    """Rewrite the items as files holding their corpus table (schema 3, as
    written before tables were shared), and delete the table."""
    table = json.loads((project / TABLE).read_text())
    for path in (project / TABLE).parent.glob("test_question[[]*.json"):
        data = json.loads(path.read_text())
        del data["corpus_table"]
        data.update(
            chunkeval_baseline=3,
            corpus_hash=table["corpus_hash"],
            documents=table["documents"],
        )
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    (project / TABLE).unlink()


def test_old_files_holding_the_corpus_read_and_migrate(
    pytester: pytest.Pytester, project: Path
) -> None:
    run(pytester, "--chunkeval-update").assert_outcomes(passed=6)
    _inline(project)
    result = run(pytester)
    result.assert_outcomes(passed=6)
    assert "baselines: 6 ok" in result.stdout.str()
    assert "unused" not in result.stdout.str()
    result = run(pytester, "--chunkeval-update")
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(
        [
            "baselines: 6 updated",
            "  updated __chunkeval__/test_items/test_question[[]q-bark[]].json "
            "(migrated from schema 3 to 6: its anchor recorded; its corpus table "
            f"moved to the shared {TABLE})",
            f"  created {TABLE} (the corpus table its per-question items share)",
        ]
    )
    files = _files(project)
    assert all(b'"corpus_table"' in text for p, text in files.items() if p != TABLE)
    migrated = run(pytester)
    migrated.assert_outcomes(passed=6)
    assert "baselines: 6 ok" in migrated.stdout.str()


@pytest.mark.parametrize(
    ("damage", "says"),
    [
        (lambda path: path.unlink(), "it does not exist"),
        (lambda path: path.write_text('{"chunkeval_corpus'), "invalid JSON at line 1"),
        (
            lambda path: path.write_text(
                path.read_text().replace('"test_question"', '"test_other"')
            ),
            "it is the table of 'test_other', not 'test_question'",
        ),
        (
            lambda path: path.write_text(
                path.read_text().replace('"pets.md"', '"cats.md"')
            ),
            "it lists no document 'pets.md' of the question this baseline records",
        ),
    ],
    ids=["missing", "invalid", "another-function", "another-corpus"],
)
def test_a_damaged_table_fails_closed_naming_it(
    pytester: pytest.Pytester, project: Path, damage: object, says: str
) -> None:
    run(pytester, "--chunkeval-update").assert_outcomes(passed=6)
    damage(project / TABLE)  # type: ignore[operator]
    result = run(pytester, "-k", "q-bark")
    result.assert_outcomes(failed=1, deselected=5)
    result.stdout.fnmatch_lines(
        [
            "*baseline */test_question[[]q-bark[]].json shares the corpus table "
            f"*/{TABLE}, which cannot be used: {says}*",
            "*pytest --chunkeval-update 'test_items.py::test_question[[]q-bark[]]'*",
        ]
    )
    assert "1 corrupt" in result.stdout.str()


def test_the_table_is_its_items_and_goes_with_them(
    pytester: pytest.Pytester, project: Path
) -> None:
    run(pytester, "--chunkeval-update").assert_outcomes(passed=6)
    # One item run: the table is not unused (its other items were deselected).
    result = run(pytester, "-k", "q-bark")
    result.assert_outcomes(passed=1, deselected=5)
    assert "unused" not in result.stdout.str()
    # The per-question test gone: its table is unused with its items.
    pytester.makepyfile(test_items="def test_other():\n    pass\n")
    result = run(pytester, "--chunkeval-update")
    result.assert_outcomes(passed=1)
    assert "removed 7 unused baseline(s):" in result.stdout.str()
    assert not (project / "__chunkeval__").exists()


def test_an_item_file_read_without_its_table_says_so(tmp_path: Path) -> None:
    from pytest_chunkeval.gate.files.baseline import Baseline, BaselineCorrupt

    path = tmp_path / "test_q[q-bark].json"
    path.write_text(
        json.dumps({"chunkeval_baseline": 4, "corpus_table": "test_q.corpus.json"})
    )
    with pytest.raises(BaselineCorrupt, match="its corpus is in the table it shares"):
        Baseline.load(path)
