"""The JSON report (``--chunkeval-json``): every result with its tests."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_chunkeval.errors import DataError, file_error
from pytest_chunkeval.reporting.rows import REPORT_SCHEMA, ReportEntry


def json_report(
    entries: Iterable[ReportEntry],
    inspections: Sequence[Mapping[str, Any]] = (),
    *,
    verdict: str = "",
) -> str:
    """Every result of a session: ``{"chunkeval_report": 1, "verdict": ...,
    "results": [{"tests", "result"}]}``; ``verdict`` is the session's line the
    other reports open with, counting these results by their verdict, and each
    ``result`` loads with ``EvalResult.from_json``. ``tests`` lists the failed
    tests first (also in ``failed``; ``skipped``: those pytest skipped). A
    result whose tests ran also has ``outcome`` (passed / failed / skipped);
    one compared with a baseline ``verdict`` (with ``reason`` when ``not
    compared``), ``gated`` (per metric: ``GatedMetric.to_json``) and ``flips``
    (the questions retrieved before and missed now, and the reverse, each
    counted once from the query set), ``changes`` when something besides the
    metrics differs from the baseline (configuration, documents, questions left
    out, added or removed: ``BaselineChanges.to_json``) and ``noise`` (the
    questions whose change float drift explains), ``others`` when the row's
    other tests have verdicts its own does not say (``1 test not compared (no
    baseline)``). ``inspections``:
    the query sets' inspections (``Inspection.to_json()``), under
    ``"inspections"``."""
    payload: dict[str, object] = {"chunkeval_report": REPORT_SCHEMA}
    if verdict:
        payload["verdict"] = verdict
    payload["results"] = [_item(e) for e in entries]
    if inspections:
        payload["inspections"] = list(inspections)
    return json.dumps(payload, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _item(entry: ReportEntry) -> dict[str, object]:
    item: dict[str, object] = {"tests": list(entry.nodeids)}
    if entry.outcome:
        item["outcome"] = entry.outcome
    if entry.verdict:
        item["verdict"] = entry.verdict
    if entry.reason:
        item["reason"] = entry.reason
    if entry.failed:
        item["failed"] = list(entry.failed)
    if entry.skipped:
        item["skipped"] = list(entry.skipped)
    if entry.gated:
        item["gated"] = [g.to_json() for g in entry.gated]
    if entry.flips is not None:
        item["flips"] = entry.flips.to_json(ids=False)
    if entry.changes is not None:
        item["changes"] = entry.changes.to_json()
    if entry.noise:
        item["noise"] = [n.to_json() for n in entry.noise]
    if entry.others:
        item["others"] = list(entry.others)
    item["result"] = dict(entry.result)
    return item


def read_json_report(path: str | os.PathLike[str]) -> list[ReportEntry]:
    """The entries of a file written from :func:`json_report`."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"results file {path} does not exist") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"results file {path}: invalid JSON ({exc})") from None
    except OSError as exc:
        raise file_error(exc, "cannot read the results file", path) from exc
    if not isinstance(data, dict) or data.get("chunkeval_report") != REPORT_SCHEMA:
        raise DataError(
            f"results file {path} is not a chunkeval JSON report "
            f"(--chunkeval-json) of schema {REPORT_SCHEMA}"
        )
    from pytest_chunkeval.gate.comparison.changes import BaselineChanges
    from pytest_chunkeval.gate.comparison.flips import Flips
    from pytest_chunkeval.gate.comparison.verdicts import (
        VERDICTS,
        GatedMetric,
        NoiseNote,
        verdict_of,
    )

    def verdict(item: Mapping[str, Any]) -> str:
        """A row's verdict in today's words: an earlier version's status
        (``passed``) read as the verdict it stands for (``ok``)."""
        found = str(item.get("verdict", ""))
        return found if not found or found in VERDICTS else verdict_of(found).name

    return [
        ReportEntry(
            item["result"],
            tuple(item.get("tests", [])),
            str(item.get("outcome", "")),
            verdict(item),
            tuple(GatedMetric.from_json(g) for g in item.get("gated", [])),
            Flips.from_json(item["flips"]) if item.get("flips") else None,
            changes=(
                BaselineChanges.from_json(item["changes"])
                if item.get("changes")
                else None
            ),
            reason=str(item.get("reason", "")),
            failed=tuple(item.get("failed", [])),
            skipped=tuple(item.get("skipped", [])),
            noise=tuple(NoiseNote.from_json(n) for n in item.get("noise", [])),
            others=tuple(str(o) for o in item.get("others", [])),
        )
        for item in data.get("results", [])
    ]
