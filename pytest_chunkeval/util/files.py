"""File writing the product relies on.

- Atomic writes (temp file + rename): a reader never sees a half-written file.
- JSON Lines appends that survive a writer killed mid-line (:func:`append_jsonl`),
  and the matching tolerant reader (:func:`iter_jsonl_lines`): a final line cut
  short is ignored when reading and cut away by the next append, a complete final
  line that merely lacks its newline is kept, any other bad line is an error that
  names ``file:line``.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NamedTuple

from pytest_chunkeval.errors import DataError, file_error


def _file_mode() -> int:
    # mkstemp creates 0600 files; ordinary files follow the umask (read once, at
    # import, when no other thread can be changing it).
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


_FILE_MODE = _file_mode()


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w") -> Iterator[IO[Any]]:
    """Open a temp file beside ``path``; on success rename it over ``path``.

    On any exception the temp file is removed and ``path`` is left as it was.
    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".tmp", dir=target.parent
        )
    except OSError as exc:  # a path the user named: not a bug
        blocked = next((p for p in target.parents if p.is_file()), None)
        reason = f"{blocked} is a file, not a directory" if blocked else None
        raise file_error(exc, "cannot write", target, reason) from exc
    try:
        os.chmod(tmp, _FILE_MODE)
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(fd, mode, encoding=encoding) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except OSError as exc:  # a full disk, a directory in the way: one line
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        reason = "it is a directory" if target.is_dir() else None
        raise file_error(exc, "cannot write", target, reason) from exc
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    with atomic_writer(path, "w") as fh:
        fh.write(text)


# -- JSON Lines: appending and reading --------------------------------------------


class JsonLineError(DataError):
    """A line of a JSON Lines text is not valid JSON; the message names
    ``source:line``. Callers re-raise it as their own error class."""

    def __init__(self, source: str, lineno: int, error: json.JSONDecodeError) -> None:
        self.source = source
        self.lineno = lineno
        self.reason = f"{error.msg} at column {error.colno}"
        super().__init__(f"{source}:{lineno}: not valid JSON ({self.reason})")


class TornLine(NamedTuple):
    """A final line without a newline that is not valid JSON: a write cut short."""

    lineno: int
    text: str
    reason: str


def iter_jsonl_lines(
    text: str,
    source: str,
    *,
    on_torn: Callable[[TornLine], None] | None = None,
) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` of each non-blank line of JSON Lines
    ``text``, in order; ``source`` (a file name) prefixes errors.

    The final line, after the last newline, may be complete JSON (yielded) or a
    fragment of an interrupted write: that one is not yielded but passed to
    ``on_torn`` (to warn with the caller's own class, or to raise). Any other
    line that is not valid JSON raises :class:`JsonLineError` naming
    ``source:line``. Lazy: a caller checking a header line reports its problem
    before those of later lines.
    """
    lines = text.split("\n")
    # After the split the last item is what follows the final newline: "" for a
    # complete file, else a line whose write may have been cut short.
    last = len(lines)
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            error = JsonLineError(source, lineno, exc)
            if lineno != last:
                raise error from None
            if on_torn is not None:
                on_torn(TornLine(lineno, line, error.reason))
            return
        yield lineno, value


def decode_jsonl(data: bytes) -> str:
    """``data`` as UTF-8, except that a character cut in two at the very end (a
    write interrupted inside a multi-byte character) is dropped: it can only be
    part of a torn last line, which the reader ignores anyway.

    Raises :class:`UnicodeDecodeError` for any other invalid byte.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason != "unexpected end of data" or exc.end != len(data):
            raise
        return data[: exc.start].decode("utf-8")


@dataclass(frozen=True)
class TailRepair:
    """How :func:`append_jsonl` fixed a final line that had no newline."""

    path: Path
    offset: int
    """Byte offset where that line starts."""
    fragment: bytes
    """The line's bytes."""
    cut: bool
    """True: not valid JSON (a torn write), so it was removed. False: complete
    JSON, so it was kept and a newline was written after it."""


@contextlib.contextmanager
def exclusive_lock(fd: int) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``fd`` where the platform has one."""
    try:
        import fcntl
    except ImportError:  # Windows: O_APPEND alone keeps one write together
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def directory_lock(directory: str | os.PathLike[str]) -> Iterator[None]:
    """Hold an exclusive lock on ``directory`` (created if missing) while a file
    in it is read, merged and written again: another process doing the same
    waits, so neither writes over what the other recorded. The lock is a
    ``flock`` on the directory itself, so no lock file is left beside a
    committed file; where the platform has none (Windows), nothing is locked."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # a directory cannot be opened on this platform
        yield
        return
    try:
        with exclusive_lock(fd):
            yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def _open_append(path: Path, *, create: bool) -> Iterator[int]:
    """A locked ``O_APPEND`` descriptor of ``path`` that can also read its tail."""
    if create:
        path.parent.mkdir(parents=True, exist_ok=True)
    # O_BINARY: Windows would otherwise write "\r\n" for every "\n".
    flags = os.O_RDWR | os.O_APPEND | getattr(os, "O_BINARY", 0)
    # The mode is masked by the umask, like any ordinary file.
    fd = os.open(path, flags | (os.O_CREAT if create else 0), 0o666)
    try:
        with exclusive_lock(fd):
            yield fd
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:  # a regular file takes it all at once; loop for safety
        written = os.write(fd, view)
        view = view[written:]


def _last_line(fd: int, size: int, block: int = 1 << 16) -> tuple[int, bytes]:
    """Offset and bytes of what follows the last newline of the open file."""
    if size == 0:
        return 0, b""
    os.lseek(fd, size - 1, os.SEEK_SET)
    if os.read(fd, 1) == b"\n":  # the usual case: a complete file
        return size, b""
    pos = size
    while pos > 0:
        step = min(block, pos)
        pos -= step
        os.lseek(fd, pos, os.SEEK_SET)
        i = _read_exactly(fd, step).rfind(b"\n")
        if i >= 0:
            pos += i + 1
            break
    os.lseek(fd, pos, os.SEEK_SET)
    return pos, _read_exactly(fd, size - pos)


def _read_exactly(fd: int, n: int) -> bytes:
    parts: list[bytes] = []
    while n > 0:
        chunk = os.read(fd, n)
        if not chunk:
            break
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def _is_json(data: bytes) -> bool:
    try:
        json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return False
    return True


def append_text(path: str | os.PathLike[str], text: str) -> None:
    """Append ``text`` to ``path`` in one locked ``O_APPEND`` write, starting on a
    new line if the file does not end with one. Creates the file and its folder.

    Concurrent appenders (xdist workers, parallel CI jobs) never interleave; an
    atomic rename would be wrong here, as one writer's lines would be lost.
    """
    if not text:
        return
    data = text.encode("utf-8")
    with _open_append(Path(path), create=True) as fd:
        size = os.fstat(fd).st_size
        if size and _last_line(fd, size)[0] != size:
            data = b"\n" + data
        _write_all(fd, data)
        os.fsync(fd)


def append_jsonl(
    path: str | os.PathLike[str],
    lines: Iterable[str] | str,
    *,
    create: bool = True,
    on_repair: Callable[[TailRepair], None] | None = None,
) -> TailRepair | None:
    """Append JSON lines to ``path`` in one locked ``O_APPEND`` write, then fsync.

    ``lines`` is one line or several, each without an inner newline (a trailing
    one is optional). If the file's last line has no newline it is repaired
    first: kept, with a newline added, when it is valid JSON; cut away when it is
    not (the trace of a writer killed mid-line), so it never ends up mid-file.
    ``on_repair`` sees the repair under the lock before the file changes and may
    raise to leave the file untouched (to warn with the caller's own class, or to
    refuse). Returns the repair, or ``None``. With ``create=False`` a missing file
    raises :class:`FileNotFoundError`.
    """
    items = [lines] if isinstance(lines, str) else list(lines)
    body = []
    for line in items:
        line = line.removesuffix("\n")
        if "\n" in line:
            raise ValueError(f"{os.fspath(path)}: a JSON line cannot hold a newline")
        body.append(line + "\n")
    if not body:
        return None
    data = "".join(body).encode("utf-8")
    target = Path(path)
    with _open_append(target, create=create) as fd:
        repair = _repair_tail(fd, target, on_repair)
        if repair is not None and not repair.cut:
            data = b"\n" + data
        _write_all(fd, data)
        os.fsync(fd)
    return repair


def repair_jsonl_tail(
    path: str | os.PathLike[str],
    on_repair: Callable[[TailRepair], None] | None = None,
) -> TailRepair | None:
    """Repair the last line of an existing JSONL file as :func:`append_jsonl`
    does before it appends (a writer resuming its own log reads it whole first):
    a complete line gets its newline, a cut one is cut away."""
    target = Path(path)
    with _open_append(target, create=False) as fd:
        repair = _repair_tail(fd, target, on_repair)
        if repair is not None and not repair.cut:
            _write_all(fd, b"\n")
        os.fsync(fd)
    return repair


def _repair_tail(
    fd: int, target: Path, on_repair: Callable[[TailRepair], None] | None
) -> TailRepair | None:
    """The repair of a last line without its newline (None when there is none):
    cut lines are truncated here, complete ones are the caller's to end."""
    size = os.fstat(fd).st_size
    if not size:
        return None
    offset, tail = _last_line(fd, size)
    if offset == size:
        return None
    cut = bool(tail.strip()) and not _is_json(tail)
    repair = TailRepair(target, offset, tail, cut)
    if on_repair is not None:
        on_repair(repair)
    if cut:
        os.ftruncate(fd, offset)
    return repair


def ensure_cache_root(directory: str | os.PathLike[str]) -> Path:
    """Create a cache directory, marked like ``.pytest_cache``: a ``.gitignore``
    of ``*`` (never committed by accident) and a ``CACHEDIR.TAG`` (skipped by
    backup tools). An existing directory is left as it is."""
    root = Path(directory)
    if root.is_dir():
        return root
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_text(root / ".gitignore", "# created by pytest-chunkeval\n*\n")
    atomic_write_text(
        root / "CACHEDIR.TAG",
        "Signature: 8a477f597d28d172789f06886806bc55\n"
        "# This file is a cache directory tag created by pytest-chunkeval.\n",
    )
    return root


def directory_writable(path: str | os.PathLike[str]) -> bool:
    """True when a file can be created in the existing directory ``path`` (tried,
    not guessed from permission bits: root, ACLs and read-only mounts differ)."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".chunkeval-probe.", dir=path)
    except OSError:
        return False
    os.close(fd)
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return True


def cache_dir_access(path: str | os.PathLike[str]) -> bool:
    """Prepare a cache directory: True when it can be written (created if need
    be), False when it exists and can only be read. ``OSError`` (with the reason)
    when it can be neither: it cannot be created, or is not a readable directory."""
    root = Path(path)
    if not root.exists():
        ensure_cache_root(root)  # raises OSError: /proc/x, a file in the way...
    if not root.is_dir():
        raise NotADirectoryError(f"{root} is not a directory")
    if directory_writable(root):
        return True
    if os.access(root, os.R_OK | os.X_OK):
        return False
    raise PermissionError(f"{root} can be neither read nor written")
