"""Text into HTML: escaped, and test ids that may wrap between their parts."""

from __future__ import annotations

import html
import re

_BREAK_AFTER = re.compile(r"(::|\[|-|/|,)")


def esc(text: object) -> str:
    """``text`` as HTML text (quotes escaped too: safe in attributes)."""
    return html.escape(str(text), quote=True)


def breakable(text: str) -> str:
    """Escaped ``text`` that may wrap after ``::``, ``[``, ``-``, ``/`` and ``,``
    (``<wbr>``): a long test id breaks between its parts, not mid-word."""
    # escaping leaves the separators as they are (no entity holds one)
    return _BREAK_AFTER.sub(r"\1<wbr>", esc(text))
