"""How entity and predicate names are compared: one normal form for both.

``normalize_name`` applies, in order: Unicode NFKC (full-width letters, ligatures),
case folding, every punctuation or symbol character (Unicode categories P* and S*)
replaced by a space, and whitespace runs collapsed to one space with the ends
stripped. So ``"Marie Curie"``, ``"marie  curie"`` and ``"Marie-Curie."`` are one
entity, and ``"is located in"`` and ``"Is_located_in"`` one predicate. Nothing
else is merged: no stemming, no aliases, no articles dropped ("the EU" and "EU"
stay two entities), so the graph never joins what the extractor kept apart.
"""

from __future__ import annotations

import unicodedata


def normalize_name(name: str) -> str:
    """The normal form of an entity or predicate name (see the module text)."""
    text = unicodedata.normalize("NFKC", name).casefold()
    chars = [" " if unicodedata.category(c)[0] in "PSZC" else c for c in text]
    return " ".join("".join(chars).split())
