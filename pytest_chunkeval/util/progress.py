"""Progress of long work (embedding, generation, judging, relationship extraction):
a tqdm bar on an interactive stderr, plain lines every few seconds in a log."""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

INTERVAL_SECONDS = 10.0
"""How often :class:`ProgressLines` prints a line (read when one is made: tests
patch it)."""

_line_writer: Callable[[str], None] | None = None
_PHASES: contextvars.ContextVar[tuple[str, ...]] = contextvars.ContextVar(
    "chunkeval_progress_phases", default=()
)


@contextlib.contextmanager
def progress_phase(label: str) -> Iterator[None]:
    """Name the work done inside (``chunks and questions of recursive:200:0``,
    ``configuration 2 of 5``): every progress bar or line started inside says
    which phase it is and where, innermost first, so a second bar that starts
    again at 0 is not taken for the first one restarting."""
    token = _PHASES.set((label, *_PHASES.get()))
    try:
        yield
    finally:
        _PHASES.reset(token)


def phase_text() -> str:
    """The phases the current work is in, innermost first ("" outside any)."""
    return ", ".join(_PHASES.get())


def write_lines_with(
    writer: Callable[[str], None] | None,
) -> Callable[[str], None] | None:
    """Send every progress line to ``writer`` (None: back to stderr); returns the
    writer it replaces. The pytest plugin sets one: inside a test stderr is
    captured, and progress written there would show only in a failed test's
    report."""
    global _line_writer
    former, _line_writer = _line_writer, writer
    return former


class ProgressLines:
    """Progress as plain lines, for CI logs (no carriage returns, no terminal).

    The same calls as a tqdm bar (``update``, ``set_postfix_str``, ``close``). A
    line is printed when ``interval`` seconds have passed since the last one::

        embedding (sentence-transformers:all-MiniLM-L6-v2): 4096/18230 text (22%),
        210 text/s, 20s elapsed, ETA 1m07s

    and a last one by ``close`` if any was printed; work shorter than the interval
    prints nothing. ``update`` prints when a line is due; with ``ticking``, a
    background thread also prints one when work between two updates (one batch of
    a slow model) outlasts the interval. ``clock`` (seconds) is injectable for tests.
    """

    def __init__(
        self,
        total: int,
        *,
        desc: str = "",
        unit: str = "it",
        initial: int = 0,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        file: IO[str] | None = None,
        write: Callable[[str], None] | None = None,
        ticking: bool = False,
    ) -> None:
        self.total = total
        self.desc = desc
        self.unit = unit
        self.n = self.initial = initial
        self.interval = INTERVAL_SECONDS if interval is None else interval
        self.clock = clock
        self.file = file
        self.write = write
        self.postfix = ""
        self.lines = 0
        self.start = self.last = clock()
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._ticker: threading.Thread | None = None
        if ticking and self.interval > 0:
            self._ticker = threading.Thread(
                target=self._tick, name="chunkeval-progress", daemon=True
            )
            self._ticker.start()

    def update(self, n: int = 1) -> None:
        with self._lock:
            self.n += n
        self._maybe_print()

    def set_postfix_str(self, text: str = "", refresh: bool = True) -> None:
        self.postfix = text

    def close(self) -> None:
        self._closed.set()
        if self._ticker is not None:
            self._ticker.join()
        with self._lock:
            if self.lines:
                self._print(self.line(self.clock(), done=True))

    def line(self, now: float, *, done: bool = False) -> str:
        """``desc: done/total unit (pct), rate, elapsed, ETA`` at time ``now``."""
        elapsed = now - self.start
        rate = (self.n - self.initial) / elapsed if elapsed > 0 else 0.0
        pct = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        text = f"{self.desc}: " if self.desc else ""
        text += f"{self.n}/{self.total} {self.unit}{pct}, "
        if done:
            text += f"{_rate(rate, self.unit)}, took {_duration(elapsed)}"
        elif rate > 0:
            eta = _duration((self.total - self.n) / rate)
            text += f"{_rate(rate, self.unit)}, {_duration(elapsed)} elapsed, ETA {eta}"
        else:
            text += f"{_duration(elapsed)} elapsed, ETA unknown"
        return f"{text} ({self.postfix})" if self.postfix else text

    def _maybe_print(self) -> None:
        with self._lock:
            now = self.clock()
            if now - self.last >= self.interval and not self._closed.is_set():
                self.last = now
                self._print(self.line(now))

    def _tick(self) -> None:
        while not self._closed.wait(self.interval / 4):
            self._maybe_print()

    def _print(self, text: str) -> None:
        if self.write is not None:
            self.write(text)
            self.lines += 1
            return
        stream = self.file if self.file is not None else sys.stderr
        if stream is not None:
            print(text, file=stream, flush=True)
            self.lines += 1


def _rate(rate: float, unit: str) -> str:
    if 0 < rate < 1:
        return f"{1 / rate:.1f} s/{unit}"
    return f"{rate:.1f} {unit}/s" if rate < 100 else f"{rate:.0f} {unit}/s"


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def _is_terminal() -> bool:
    stream = sys.stderr
    return stream is not None and bool(getattr(stream, "isatty", lambda: False)())


def progress_bar(total: int, *, progress: bool | None, **options: Any) -> Any:
    """Something to report progress to, or ``None`` when nothing should be shown.

    ``progress``: True always shows a tqdm bar, False shows nothing, None shows a
    bar when stderr is a terminal and :class:`ProgressLines` otherwise (a CI log
    gets a line every ``INTERVAL_SECONDS``), lines to the writer set by
    :func:`write_lines_with` when there is one. Without tqdm installed, lines replace
    the bar. ``options`` go to ``tqdm`` (``desc``, ``unit``, ``initial``...).
    """
    if progress is False:
        return None
    phases = phase_text()
    if phases:
        options["desc"] = f"{options.get('desc', '')} {phases}".strip()
    writer = _line_writer if progress is None else None
    if writer is None and (progress or _is_terminal()):
        try:
            from tqdm import tqdm
        except ImportError:
            pass
        else:
            return tqdm(total=total, file=sys.stderr, **options)
    return ProgressLines(
        total,
        desc=str(options.get("desc", "")),
        unit=str(options.get("unit", "it")),
        initial=int(options.get("initial", 0)),
        write=writer,
        ticking=True,
    )
