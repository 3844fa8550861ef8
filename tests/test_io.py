"""Atomic writes: all or nothing, with ordinary file permissions."""

from __future__ import annotations

import os
import stat

import pytest

from pytest_chunkeval._io import atomic_write_text, atomic_writer


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
