"""The error root: every error a user can cause is a :class:`ChunkevalError`.

Each family also keeps the built-in base users already catch (a bad value is a
``ValueError``, a baseline failure an ``AssertionError``), so ``except ValueError``
written against an older release still works::

    ChunkevalError                       anything the user can fix
    ├── ConfigError       (ValueError)   a setting, flag, marker keyword, spec or
    │                                    argument is invalid
    ├── DataError         (ValueError)   an input file or its content is wrong
    ├── FileAccessError   (OSError)      a file or directory cannot be read/written
    │   └── MissingFile   (FileNotFoundError)
    ├── UnavailableError  (RuntimeError) a component cannot run: a package, a model
    │                                    file, a server or an API is missing or fails
    └── CheckFailed       (AssertionError) a measured quality falls short (baselines,
                                         thresholds)

    ChunkevalWarning      (UserWarning)  the root of the package's warnings

The CLI prints any :class:`ChunkevalError` as one line and exits 2, except
:class:`CheckFailed` (exit 1); any other exception is a bug and keeps its
traceback. The pytest plugin turns a ``ChunkevalError`` into a test failure
without a traceback into the engine. Standard library only.
"""

from __future__ import annotations


class ChunkevalError(Exception):
    """An error the user can fix; the message says what is wrong and how."""


class ConfigError(ChunkevalError, ValueError):
    """A setting, flag, marker keyword, spec or argument is invalid."""


class DataError(ChunkevalError, ValueError):
    """An input file (corpus, query set, history, report) or its content is wrong."""


class FileAccessError(ChunkevalError, OSError):
    """A file or directory the user named cannot be read or written."""

    def __str__(self) -> str:
        # OSError's own __str__ prints "[Errno N] strerror: filename" once errno
        # and filename are set; the message already says it in words.
        return str(self.args[0]) if self.args else ""


class MissingFile(FileAccessError, FileNotFoundError):
    """A file or directory the user named does not exist."""


class UnavailableError(ChunkevalError, RuntimeError):
    """A component cannot run: a package or model file is missing, a server is
    unreachable, an API refuses the request."""


class CheckFailed(ChunkevalError, AssertionError):
    """A measured quality falls short: a baseline regression, a failed threshold."""


class ChunkevalWarning(UserWarning):
    """The root of the package's warnings (``filterwarnings`` can name it)."""


def file_error(
    exc: OSError, what: str, path: object, reason: str | None = None
) -> FileAccessError:
    """``exc`` (from reading or writing ``path``) as a one-line user error that
    says ``what`` failed and why; :class:`MissingFile` when it does not exist."""
    reason = reason or exc.strerror or str(exc)
    kind = MissingFile if isinstance(exc, FileNotFoundError) else FileAccessError
    error = kind(f"{what} {path}: {reason}")
    error.filename = str(path)
    error.errno = exc.errno
    return error
