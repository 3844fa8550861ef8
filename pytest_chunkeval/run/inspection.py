"""The query set's inspection in the session's reports (``chunkeval_inspect``):
the configured corpus and query set, inspected once on the controller at the end
of the session (docs/query-quality.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pytest_chunkeval.errors import ChunkevalError

if TYPE_CHECKING:
    from pytest_chunkeval.config.evaluation import EvaluationSpec
    from pytest_chunkeval.config.options import Settings
    from pytest_chunkeval.run.datasets import Datasets
    from pytest_chunkeval.run.outputs import SessionEnd


def session_inspections(
    settings: Settings, datasets: Datasets, run: EvaluationSpec, end: SessionEnd
) -> list[dict[str, Any]]:
    """``[inspection JSON]`` of the configured dataset when ``chunkeval_inspect``
    is set and a JSON or HTML report is written, else ``[]``; a dataset that
    cannot be read is reported in ``end.errors``, not raised."""
    if not (settings.inspect and (settings.json or settings.html)):
        return []
    from pytest_chunkeval.quality.inspection import inspect_queries

    try:
        corpus = datasets.corpus(run)
        queries = datasets.queries(run)
        inspection = inspect_queries(
            corpus,
            queries,
            unit=run.unit,
            tokenizer=run.tokenizer,
            cache=run.cache_dir,
        )
    except (ChunkevalError, OSError) as exc:
        end.errors.append(f"could not inspect the query set: {exc}")
        return []
    return [inspection.to_json()]
