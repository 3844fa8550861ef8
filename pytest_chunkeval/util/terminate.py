"""SIGTERM as an exception while work worth keeping is in progress.

CI cancellation and ``timeout`` stop a process with SIGTERM, whose default action
ends it at once: no ``finally`` runs, and vectors a remote embedder returned but not
yet stored would be lost (docs/embedders.md, "openai:MODEL"). Inside
:func:`keep_on_sigterm`, SIGTERM raises :class:`Terminated` in the main thread
instead, while it waits (:func:`interruptible`) or at the next :func:`check`
(vectors received are never dropped half-handled), so the code below it stores
what it holds; then the signal is delivered
again with its default action, and the process ends as SIGTERM ends it (same exit
status). Nothing changes where a handler of the program's own is installed, or off
the main thread (where Python cannot install one).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from types import FrameType

__all__ = ["GRACE_SECONDS", "Terminated", "check", "interruptible", "keep_on_sigterm"]

GRACE_SECONDS = 5.0
"""How long answers already in flight are awaited after SIGTERM (a CI runner
kills for good a few seconds after it asked)."""


class Terminated(BaseException):
    """SIGTERM arrived inside :func:`keep_on_sigterm` (a BaseException, like
    KeyboardInterrupt: no ``except Exception`` swallows it)."""


class _State:
    """Where SIGTERM finds the main thread (one per process: there is one
    SIGTERM handler)."""

    waiting = 0
    """Nesting depth of :func:`interruptible`: SIGTERM raises there."""
    requested = False
    """SIGTERM arrived inside :func:`keep_on_sigterm`."""


def _handler(signum: int, frame: FrameType | None) -> None:
    # once: a second SIGTERM must not interrupt the code storing what it holds
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    _State.requested = True
    if _State.waiting:
        raise Terminated(signum)


def _end() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """A wait SIGTERM cuts short (for answers, for a model's batch): it raises
    :class:`Terminated` here; anywhere else it is noted, and raised by the next
    :func:`check` (what was received is never dropped half-handled)."""
    check()
    _State.waiting += 1
    try:
        yield
    finally:
        _State.waiting -= 1


def check() -> None:
    """Raise :class:`Terminated` if SIGTERM arrived (inside
    :func:`keep_on_sigterm`): call it where the work can stop cleanly."""
    if _State.requested:
        raise Terminated(signal.SIGTERM)


@contextlib.contextmanager
def keep_on_sigterm() -> Iterator[None]:
    """Run the body with SIGTERM raising :class:`Terminated` (see the module
    doc); when it propagates out, end the process as SIGTERM would have."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL
    ):
        yield
        return
    _State.requested = False
    signal.signal(signal.SIGTERM, _handler)
    try:
        yield
    except Terminated:
        _end()
        raise  # where the signal does not end the process at once
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if _State.requested:  # noted, or caught by the body: end all the same
        _end()
