"""A baseline file holds no timing (docs/baselines.md, the file format): the
recording run's rebuild seconds (EvalResult.noise) stay out of it, so that
`--chunkeval-update` of unchanged numbers leaves the file `unchanged` (the
example project's three Chroma baselines were rewritten at every update)."""

from __future__ import annotations

import dataclasses

from support.fake_results import make_result

from pytest_chunkeval.gate.files.baseline import Baseline


def test_the_rebuild_seconds_are_not_recorded() -> None:
    result = make_result([1.0, 0.5, 0.0])
    texts = [
        Baseline.from_result(
            dataclasses.replace(
                result,
                noise={"noisy": [], "repeats": 3, "rebuild_seconds": seconds},
            ),
            "test_x",
        ).to_text()
        for seconds in (0.003, 0.006)
    ]
    assert texts[0] == texts[1]
    assert '"repeats": 3' in texts[0]
    assert "rebuild_seconds" not in texts[0]
