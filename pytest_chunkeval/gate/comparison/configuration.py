"""What differs between two configurations (a baseline's and a run's): each
value that changed, judged (``chunker: a -> b``), or refused when the numbers
become other quantities (another unit). Two spellings of one component
(``hashing`` and ``hashing:256``) and a model identity not resolved yet are not
changes."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_chunkeval.engine.recorded import same_spec
from pytest_chunkeval.gate.files.recording import recorded_config

# A change of these makes the numbers of the two runs different quantities:
# recall in tokens and recall in characters are not one metric.
INCOMPARABLE_KEYS = ("unit",)
# A result written before the scoring rules were versioned was scored under
# rules 1 (docs/baselines.md, "Scoring rules"): compared, and named so.
_ABSENT_MEANS = {"scoring_rules": 1}
_SHOWN_AS = {"scoring_rules": "scoring rules"}


@dataclass(frozen=True)
class ConfigChange:
    """One configuration value that differs: ``chunker: a -> b``."""

    key: str
    before: str
    after: str

    def __str__(self) -> str:
        return f"{self.key}: {self.before} -> {self.after}"


def config_changes(
    recorded: Mapping[str, Any], current: Mapping[str, Any]
) -> tuple[tuple[ConfigChange, ...], tuple[ConfigChange, ...]]:
    """The configuration values that differ, as (judged, incomparable)."""
    old_config = recorded_config(recorded)
    new_config = recorded_config(current)
    judged: list[ConfigChange] = []
    refused: list[ConfigChange] = []
    keys = [*old_config, *(k for k in new_config if k not in old_config)]
    for key in keys:
        old = old_config.get(key, _ABSENT_MEANS.get(key))
        new = new_config.get(key, _ABSENT_MEANS.get(key))
        if old == new or same_spec(key, old, new):
            continue
        if key == "embedder_identity" and (
            _unresolved(old, new) or _changed(old_config, new_config, "embedder")
        ):
            continue  # said by the embedder's own line, or not a change at all
        change = ConfigChange(_SHOWN_AS.get(key, key), _show(old), _show(new))
        (refused if key in INCOMPARABLE_KEYS else judged).append(change)
    return tuple(judged), tuple(refused)


def _changed(old: Mapping[str, Any], new: Mapping[str, Any], key: str) -> bool:
    a, b = old.get(key), new.get(key)
    return a != b and not same_spec(key, a, b)


_RESOLVED = re.compile(r":d\d+(:bf16)?$")


def _unresolved(old: object, new: object) -> bool:
    """Whether two identities of one model differ only because one of them could not
    be resolved yet: a hub model that is not downloaded is known by name and revision
    (``…@main``), a downloaded one by its weights (``…@<digest>:d384``). A fresh CI
    runner must not fail every baseline for that."""
    if not (isinstance(old, str) and isinstance(new, str)):
        return False
    if old.endswith(":bf16") != new.endswith(":bf16"):
        return False  # another precision is another set of vectors
    same_model = _model_label(old) == _model_label(new)
    return same_model and not (_RESOLVED.search(old) and _RESOLVED.search(new))


def _model_label(identity: str) -> str:
    """``KIND:LABEL`` of an identity: a hub id not downloaded is named by its
    whole id (``sentence-transformers:org/mini@main``), a model on disk by the
    id's last part (``sentence-transformers:mini@<digest>``)."""
    kind, _, name = identity.split("@", 1)[0].partition(":")
    return f"{kind}:{name.rsplit('/', 1)[-1]}"


def _show(value: Any) -> str:
    if value is None:
        return "none"
    return value if isinstance(value, str) else json.dumps(value)
