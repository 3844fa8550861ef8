"""Atomic writes (all or nothing, ordinary file permissions) and JSON Lines appends
that survive a writer killed mid-line."""

from __future__ import annotations

import os
import stat

import pytest

from pytest_chunkeval.util.files import (
    JsonLineError,
    TailRepair,
    TornLine,
    append_jsonl,
    append_text,
    atomic_write_text,
    atomic_writer,
    decode_jsonl,
    iter_jsonl_lines,
)


def test_failed_write_leaves_the_old_file_and_no_temp(tmp_path):
    target = tmp_path / "baseline.json"
    target.write_text("old", encoding="utf-8")

    def interrupted_write() -> None:
        with atomic_writer(target) as fh:
            fh.write("half of the new content")
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        interrupted_write()
    assert target.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["baseline.json"]


def test_written_file_follows_the_umask(tmp_path):
    target = tmp_path / "sub" / "report.md"
    atomic_write_text(target, "hello")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~umask
    assert target.read_text(encoding="utf-8") == "hello"


# -- JSON Lines: appends that survive a killed writer -------------------------------


def test_append_jsonl_cuts_a_torn_tail_and_reports_it(tmp_path):
    path = tmp_path / "log" / "h.jsonl"
    assert append_jsonl(path, ['{"a": 1}', '{"a": 2}\n']) is None  # creates it
    with path.open("ab") as fh:
        fh.write(b'{"a": 3, "b": "ha')  # a writer killed mid-line
    seen = []
    repair = append_jsonl(path, '{"a": 4}', on_repair=seen.append)
    assert repair == TailRepair(path, 18, b'{"a": 3, "b": "ha', cut=True)
    assert seen == [repair]
    assert path.read_bytes() == b'{"a": 1}\n{"a": 2}\n{"a": 4}\n'


def test_append_jsonl_keeps_a_complete_last_line_without_newline(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"a": 1}\n{"a": 2}')
    repair = append_jsonl(path, ['{"a": 3}'])
    assert repair is not None
    assert not repair.cut
    assert path.read_bytes() == b'{"a": 1}\n{"a": 2}\n{"a": 3}\n'


def test_append_jsonl_cuts_a_character_split_in_two(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"a": 1}\n' + '{"q": "caf\u00e9"}'.encode()[:-3])
    # Reading drops the half character and ignores the torn line ...
    torn = []
    text = decode_jsonl(path.read_bytes())
    assert list(iter_jsonl_lines(text, "q.jsonl", on_torn=torn.append)) == [
        (1, {"a": 1})
    ]
    assert torn[0].lineno == 2
    # ... and the next append cuts it.
    repair = append_jsonl(path, '{"a": 2}')
    assert repair is not None
    assert repair.cut
    assert path.read_bytes() == b'{"a": 1}\n{"a": 2}\n'


def test_on_repair_can_refuse_and_leave_the_file_untouched(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"head')

    def refuse(repair: TailRepair) -> None:
        raise RuntimeError(f"refused at {repair.offset}")

    with pytest.raises(RuntimeError, match="refused at 0"):
        append_jsonl(path, '{"a": 1}', on_repair=refuse)
    assert path.read_bytes() == b'{"head'
    with pytest.raises(FileNotFoundError):
        append_jsonl(tmp_path / "missing.jsonl", "{}", create=False)
    assert not (tmp_path / "missing.jsonl").exists()
    with pytest.raises(ValueError, match="cannot hold a newline"):
        append_jsonl(path, '{"a":\n1}')


def test_append_text_starts_on_a_new_line(tmp_path):
    path = tmp_path / "summary.md"
    path.write_text("# Title", encoding="utf-8")
    append_text(path, "| a | b |\n")
    append_text(path, "more\n")
    assert path.read_text(encoding="utf-8") == "# Title\n| a | b |\nmore\n"


def test_iter_jsonl_lines_errors_name_file_and_line():
    text = '{"a": 1}\n\n{"a": \n{"a": 3}\n'
    lines = iter_jsonl_lines(text, "data/x.jsonl")
    assert next(lines) == (1, {"a": 1})  # lazy: earlier lines come first
    with pytest.raises(JsonLineError, match=r"^data/x\.jsonl:3: not valid JSON"):
        next(lines)
    # The same fragment last, without a newline, is a torn write: not an error.
    torn = []
    assert list(iter_jsonl_lines('{"a": 1}\r\n{"a": ', "x", on_torn=torn.append)) == [
        (1, {"a": 1})
    ]
    assert torn == [TornLine(2, '{"a": ', torn[0].reason)]
    assert list(iter_jsonl_lines('{"a": 1}\n{"a": 2}', "x")) == [
        (1, {"a": 1}),
        (2, {"a": 2}),
    ]
    with pytest.raises(UnicodeDecodeError):
        decode_jsonl(b'{"a": "\xff"}\n{}')  # a bad byte mid-file is still an error
