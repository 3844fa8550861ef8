"""The evaluation spec (config/evaluation.py): every setting declared once in the
option table, which gives the spec its defaults and the marker its validation."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pytest_chunkeval.config.evaluation import (
    OTHER_SETTINGS,
    RESULT_SETTINGS,
    EvaluationSpec,
)
from pytest_chunkeval.config.options import OPTIONS, OPTIONS_BY_NAME, resolve_settings
from pytest_chunkeval.errors import ConfigError
from pytest_chunkeval.run.marker import (
    GATE_KEYWORDS,
    MARKER_KEYWORDS,
    MarkerError,
    parse_marker,
)

FIELDS = {f.name: f for f in dataclasses.fields(EvaluationSpec)}


def test_every_option_is_declared_as_changing_a_result_or_not() -> None:
    names = {o.name for o in OPTIONS}
    undeclared = names - set(RESULT_SETTINGS) - set(OTHER_SETTINGS)
    assert not undeclared, (
        f"{sorted(undeclared)}: declare each new setting in config/evaluation.py, "
        "RESULT_SETTINGS (it can change a result: a spec field, audited in "
        "tests/test_key_audit.py) or OTHER_SETTINGS (with the reason it cannot)"
    )
    assert not set(RESULT_SETTINGS) & set(OTHER_SETTINGS)
    assert set(RESULT_SETTINGS) | set(OTHER_SETTINGS) == names


def test_every_result_setting_is_a_spec_field_with_the_table_default() -> None:
    spec = EvaluationSpec()
    for name in RESULT_SETTINGS:
        assert name in FIELDS, name
        default = OPTIONS_BY_NAME[name].default
        if default is not None:
            assert getattr(spec, name) == default, name


def test_unset_settings_take_the_table_defaults(tmp_path: Path) -> None:
    spec = EvaluationSpec.from_settings(resolve_settings(tmp_path, {}, {}, {}))
    assert (spec.k, spec.unit, spec.copies, spec.locate) == (5, "token", "any", "exact")
    assert spec.embedder == OPTIONS_BY_NAME["embedder"].default
    assert not spec.k_set
    assert spec.score_k is None
    set_k = resolve_settings(tmp_path, {"chunkeval_k": "3"}, {}, {})
    assert EvaluationSpec.from_settings(set_k).score_k == 3


def test_the_marker_takes_the_settings_through_the_table() -> None:
    # A setting the marker takes is validated by the option table's parser,
    # never by a second copy (run/marker.py derives them).
    taken = {o.name for o in OPTIONS if o.marker is not None}
    assert taken <= set(MARKER_KEYWORDS)
    # a result setting, or the gate's (the test's baseline checks, never the
    # evaluation spec)
    assert taken - set(GATE_KEYWORDS) <= set(RESULT_SETTINGS)
    assert not set(GATE_KEYWORDS) & set(RESULT_SETTINGS)
    for name in taken:
        assert MARKER_KEYWORDS[name] == OPTIONS_BY_NAME[name].marker_value
    assert OPTIONS_BY_NAME["k"].marker_value("min") == "min"
    assert OPTIONS_BY_NAME["corpus"].marker_value(Path("a")) == ("a",)
    assert OPTIONS_BY_NAME["budget"].marker_value(300) == 300
    with pytest.raises(ConfigError, match=r"got float 2\.5"):
        OPTIONS_BY_NAME["k"].marker_value(2.5)


def test_a_marker_value_is_refused_as_the_flag_is() -> None:
    with pytest.raises(MarkerError) as marker:
        parse_marker([((), {"locate": "fuzzy"})], "t")
    with pytest.raises(ConfigError) as flag:
        OPTIONS_BY_NAME["locate"].parse("fuzzy")
    assert str(flag.value) in str(marker.value)


def test_a_call_changes_result_settings_only() -> None:
    spec = EvaluationSpec()
    changed = spec.with_run(k=3, budget=200)
    assert (changed.k, changed.budget, changed.k_set) == (3, 200, True)
    assert changed != spec
    with pytest.raises(TypeError, match="cache_dir"):
        spec.with_run(cache_dir="elsewhere")


def test_the_settings_hold_every_option() -> None:
    from pytest_chunkeval.config.options import Settings

    fields = {f.name for f in dataclasses.fields(Settings)}
    missing = {o.name for o in OPTIONS} - fields
    assert not missing, f"{sorted(missing)}: add them to config/options.py Settings"


def test_the_markers_gate_settings_are_the_baseline_checks() -> None:
    marker = parse_marker(
        [((), {"tolerance": "recall:-2pp", "gate_mode": "Paired", "k": 3})], "t"
    )
    assert marker.gate == {"tolerance": "recall:-2pp", "mode": "paired"}
    assert marker.overrides == {"k": 3}  # the evaluation's settings alone
    with pytest.raises(MarkerError, match=r"t: @pytest.mark.chunkeval\(gate_mode="):
        parse_marker([((), {"gate_mode": "bootstrap"})], "t")
    with pytest.raises(MarkerError, match="got float"):
        parse_marker([((), {"tolerance": 0.02})], "t")
    marker = parse_marker([((), {"gate_by": "tag document"})], "t")
    assert marker.gate == {"gate_by": "document, tag"}
    assert not marker.overrides
    with pytest.raises(MarkerError, match=r"t: @pytest.mark.chunkeval\(gate_by="):
        parse_marker([((), {"gate_by": "chapter"})], "t")


def test_a_gate_by_that_is_not_text_is_a_config_error() -> None:
    from pytest_chunkeval.errors import ConfigError
    from pytest_chunkeval.gate.tolerances import GateSettings

    with pytest.raises(ConfigError, match="got list"):
        GateSettings().override(gate_by=["document", "tag"])  # type: ignore[arg-type]
