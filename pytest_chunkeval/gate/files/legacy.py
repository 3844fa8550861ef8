"""Baselines stored under a name the test no longer has.

A baseline file is named after its test id. When the naming changes for reasons the
user did not choose, the committed files must not turn into one "missing" and one
"unused" baseline: the store looks a missing file up under its former names
(:func:`legacy_baseline_paths`) and ``--chunkeval-update`` moves it to the new one.

Former names today: test ids parametrized by a chunker spec as written
(``test_x[recursive:200]``), before ids became canonical specs
(``test_x[recursive:200:0]``); and file names from before they were injective
(``test_x[recursive_200_0].json``, now ``test_x[recursive_200_0]-<hash>.json``):
one migration covers both.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

_PARAMS = re.compile(r"\[(?P<ids>.*)\]$")

SpecAliases = Mapping[str, Sequence[str]]
"""Canonical spec -> the other spellings of it a session was given."""


def legacy_test_names(name: str, aliases: SpecAliases) -> list[str]:
    """The ids ``name`` (``test_x[recursive:200:0]``) had before its parameter ids
    were canonical specs: one per spelling in ``aliases``, in order.

    Parameter ids are joined by ``-`` and a spec may contain ``-`` too, so each
    canonical spec is replaced where it is a whole ``-``-separated part of the
    brackets.
    """
    match = _PARAMS.search(name)
    if match is None or not aliases:
        return []
    ids, head = match.group("ids"), name[: match.start()]
    out: list[str] = []
    for canonical, spellings in aliases.items():
        pattern = re.compile(rf"(?:(?<=^)|(?<=-)){re.escape(canonical)}(?=-|$)")
        if not pattern.search(ids):
            continue
        for spelling in spellings:
            swapped = pattern.sub(lambda _, s=spelling: s, ids)
            old = f"{head}[{swapped}]"
            if old != name and old not in out:
                out.append(old)
    return out


def legacy_baseline_paths(
    name: str,
    path_of: Callable[[str], Path],
    aliases: SpecAliases,
    legacy_path_of: Callable[[str], Path] | None = None,
) -> list[Path]:
    """Files that may hold the baseline of test ``name`` under a former name,
    most likely first; ``path_of(test_name)`` is the current file naming (the
    layout, the test file and the baseline's own name already applied), and
    ``legacy_path_of`` the file naming before names were injective (a hash of
    the id is now added whenever making it portable changed it): each former id
    is looked up under both.

    Pure: says where to look, touches nothing (gate/files/lookup.py looks). A
    file under a former name may belong to another test (two ids shared one name
    before): the caller checks the test id the file records.
    """
    current = path_of(name)
    paths: list[Path] = []
    namings = [path_of] if legacy_path_of is None else [path_of, legacy_path_of]
    for old in [name, *legacy_test_names(name, aliases)]:
        for naming in namings:
            path = naming(old)
            if path != current and path not in paths:
                paths.append(path)
    return paths


def spec_aliases(
    written: Iterable[str], canonical: Callable[[str], str]
) -> dict[str, list[str]]:
    """Canonical spec -> the spellings in ``written`` that differ from it (what a
    session's ``chunkeval_chunkers`` said before ids were canonical)."""
    out: dict[str, list[str]] = {}
    for text in written:
        spelled = text.strip()
        label = canonical(spelled)
        if label != spelled and spelled not in out.setdefault(label, []):
            out[label].append(spelled)
    return {k: v for k, v in out.items() if v}


def recorded_test(path: Path) -> str | None:
    """The test id a baseline file records, or None if it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    test = data.get("test") if isinstance(data, dict) else None
    return test if isinstance(test, str) else None
