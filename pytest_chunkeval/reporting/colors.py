"""The colours of configurations in the HTML report's plots, legends and explorer.

Eight colours, chosen so that any two differ by at least 29 in CIEDE2000 (ΔE00;
20 is a difference no reader misses) and each is saturated and mid-dark, readable
on white and told apart from the grey of text. A configuration's slot comes from a
hash of its label, so it keeps its colour from one report to the next whatever else
is shown; when two labels of one report hash to the same slot, the later (in hash
order, so the same set of labels always gets the same colours) takes the next free
slot. Past eight configurations colours repeat: the legend and labels tell them
apart.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

__all__ = ["PALETTE", "color_slot", "config_color", "config_colors"]

PALETTE = (
    "#1a8af9",  # blue
    "#f9731a",  # orange
    "#05b305",  # green
    "#a51221",  # dark red
    "#471af9",  # violet
    "#12a5a5",  # teal
    "#f91ab6",  # pink
    "#7e6a1b",  # olive
)
"""Minimum pairwise ΔE00 29.9 (tests/test_html_layout.py measures it)."""


def _digest(label: str) -> int:
    return int.from_bytes(hashlib.sha256(label.encode("utf-8")).digest()[:8], "big")


def color_slot(label: str) -> int:
    """The palette slot a label hashes to (before collisions are resolved)."""
    return _digest(label) % len(PALETTE)


def config_color(label: str) -> str:
    """The colour of a configuration shown alone (its hashed slot)."""
    return PALETTE[color_slot(label)]


def config_colors(labels: Iterable[str]) -> dict[str, str]:
    """A colour per distinct label: each its hashed slot, or the next free one
    when another label of the set holds it (labels probe in hash order, so the
    result depends on the set only, not on the order given)."""
    distinct = sorted(set(labels), key=lambda label: (_digest(label), label))
    taken: set[int] = set()
    slots: dict[str, int] = {}
    for label in distinct:
        slot = color_slot(label)
        if len(taken) < len(PALETTE):
            while slot in taken:
                slot = (slot + 1) % len(PALETTE)
        taken.add(slot)
        slots[label] = slot
    return {label: PALETTE[slots[label]] for label in labels}
