"""Progress bars for long work: tqdm on an interactive stderr, or when asked."""

from __future__ import annotations

import sys
from typing import Any


def progress_bar(total: int, *, progress: bool | None, **options: Any) -> Any:
    """A ``tqdm`` bar on stderr, or ``None`` when none should be shown.

    ``progress``: True always shows one, False never, None only when stderr is a
    terminal (CI logs and pytest's captured output stay clean). Without tqdm
    installed there is no bar. ``options`` go to ``tqdm`` (``desc``, ``unit``...).
    """
    if progress is False:
        return None
    if progress is None:
        stream = sys.stderr
        if stream is None or not getattr(stream, "isatty", lambda: False)():
            return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=total, file=sys.stderr, **options)
