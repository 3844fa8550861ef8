"""Content digests of files, computed once per file version (docs/performance.md,
"What each cache keys on").

A model directory's identity is a digest of every file that shapes its output;
hashing its weights (90 MB for all-MiniLM-L6-v2, 0.09 s) on every warm run would
cost a warm run a third of its time. So a file's digest is remembered under its
version, ``(device, inode, size, modification time, change time)``: an edited or
replaced file has another and is hashed again. The memo is kept in this process
and in a small JSON file (``$CHUNKEVAL_DIGEST_MEMO``, else
``$XDG_CACHE_HOME/pytest-chunkeval/file-digests.json``, else under
``~/.cache``; ``CHUNKEVAL_DIGEST_MEMO=""`` keeps it in memory only), written
atomically; a memo that cannot be read or written is ignored.

A JSON file's digest is of its parsed content without the version stamps that
saving a model writes (``transformers_version``, ``__version__``), so that copies
of one model saved by different library versions agree. A file in the Hugging
Face cache whose blob is named by its SHA-256 is not read at all.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import threading
from pathlib import Path
from typing import Any

MEMO_ENV = "CHUNKEVAL_DIGEST_MEMO"
_MEMO_LIMIT = 2000
_JSON_LIMIT = 1 << 20  # larger JSON files are hashed as bytes
_STAMPS = frozenset({"transformers_version", "__version__"})
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")

_lock = threading.Lock()
_memo: dict[str, list[Any]] | None = None  # path -> [*version, digest]
_unsaved: set[str] = set()


def memo_path() -> Path | None:
    """Where the memo is kept on disk (None: in memory only)."""
    value = os.environ.get(MEMO_ENV)
    if value is not None:
        return Path(value).expanduser() if value else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache")
    return Path(base).expanduser() / "pytest-chunkeval" / "file-digests.json"


def _loaded() -> dict[str, list[Any]]:
    global _memo
    if _memo is None:
        _memo = {}
        path = memo_path()
        if path is not None:
            with contextlib.suppress(OSError, ValueError):
                data = json.loads(path.read_text(encoding="utf-8"))
                if isinstance(data, dict):
                    _memo = {
                        k: v
                        for k, v in data.items()
                        if isinstance(v, list) and len(v) == 6
                    }
    return _memo


def forget() -> None:
    """Drop the in-process memo (the next digest reads the file memo again)."""
    global _memo
    with _lock:
        _memo = None


def _save(memo: dict[str, list[Any]]) -> None:
    path = memo_path()
    if path is None:
        return
    from pytest_chunkeval.util.files import atomic_write_text

    while len(memo) > _MEMO_LIMIT:
        del memo[next(iter(memo))]
    with contextlib.suppress(OSError):
        atomic_write_text(path, json.dumps(memo, separators=(",", ":")))


def _version(stat: os.stat_result) -> list[int]:
    return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


def _blob_digest(path: Path) -> str | None:
    """The SHA-256 a Hugging Face cache blob is named by, following the symlinks
    ``snapshots/<commit>/FILE -> ../../blobs/<sha256>`` one hop at a time."""
    hop = path
    for _ in range(8):
        if _SHA256_HEX.fullmatch(hop.name) and hop.parent.name == "blobs":
            return hop.name
        if not hop.is_symlink():
            return None
        hop = hop.parent / os.readlink(hop)
    return None


def _content_digest(path: Path, size: int) -> str:
    if path.suffix == ".json" and size <= _JSON_LIMIT:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, ValueError):
            data = None
        if data is not None:
            if isinstance(data, dict):
                data = {k: v for k, v in data.items() if k not in _STAMPS}
            text = json.dumps(data, sort_keys=True, separators=(",", ":"))
            return "json:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def file_digest(path: str | os.PathLike[str], *, save: bool = True) -> str:
    """The content digest of one file (see the module doc): SHA-256 of its bytes,
    or ``json:`` and the SHA-256 of its canonical content without version
    stamps; read only when this version of the file was never hashed. ``save``:
    write the memo file when the digest is new (else the caller does)."""
    given = Path(path)
    blob = _blob_digest(given)
    if blob is not None:
        return blob
    target = given.resolve()
    stat = target.stat()
    version = _version(stat)
    key = str(target)
    with _lock:
        memo = _loaded()
        found = memo.get(key)
        if found is not None and found[:5] == version:
            return str(found[5])
    digest = _content_digest(target, stat.st_size)
    with _lock:
        memo = _loaded()
        memo.pop(key, None)
        memo[key] = [*version, digest]
        if save:
            _save(memo)
        else:
            _unsaved.add(key)
    return digest


def save_memo() -> None:
    """Write the memo file if a digest was added since it was last written."""
    with _lock:
        if _unsaved and _memo is not None:
            _save(_memo)
        _unsaved.clear()


def files_digest(root: Path, files: list[Path]) -> str:
    """SHA-256 over each file's path relative to ``root`` and its digest."""
    h = hashlib.sha256()
    for path in sorted(files):
        for part in (path.relative_to(root).as_posix(), file_digest(path, save=False)):
            data = part.encode("utf-8")
            h.update(len(data).to_bytes(8, "little"))
            h.update(data)
    save_memo()
    return h.hexdigest()
