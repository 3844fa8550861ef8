"""Options of the query-set tools (``docs/query-quality.md``), included in the
option table of :mod:`pytest_chunkeval.config.options`: a BEIR folder as the
dataset, and the inspection of the query set in the reports.

Standard library and ``config`` only (``chunkeval --help`` reads the table).
"""

from __future__ import annotations

import re

from pytest_chunkeval.config.option import Option
from pytest_chunkeval.config.values import parse_path
from pytest_chunkeval.errors import ConfigError


def parse_split(value: str) -> str:
    """A BEIR split name: ``test``, ``dev``, ``train``... (``qrels/<name>.tsv``)."""
    text = value.strip()
    if not re.fullmatch(r"[\w.-]+", text):
        raise ConfigError(
            f"expected a split name such as 'test' (qrels/<split>.tsv), got {value!r}"
        )
    return text


QUALITY_OPTIONS: tuple[Option, ...] = (
    Option(
        "beir",
        "A BEIR-format dataset folder (corpus.jsonl, queries.jsonl, "
        "qrels/<split>.tsv) as corpus and queries, {relative}; each relevant "
        "document is an excerpt covering its whole text.",
        parse_path,
        metavar="DIR",
    ),
    Option(
        "beir_split",
        "The split of the BEIR folder whose questions are evaluated "
        "(qrels/<split>.tsv).",
        parse_split,
        metavar="SPLIT",
        default_text="test",
        default="test",
    ),
    Option(
        "inspect",
        "Add the inspection of the configured query set (as `chunkeval inspect` "
        "prints it) to the JSON and HTML reports.",
        ini_type="bool",
        switch=True,
    ),
    Option(
        "trec_run",
        "Write each result's rankings as a TREC run file (docno doc_id:start-end, "
        "scores decreasing with rank), {relative}; several results: one file each, "
        "the run's tag before the suffix.",
        parse_path,
        ini_type=None,
        metavar="FILE",
    ),
    Option(
        "qrels",
        "Write the qrels of each result's run (the chunks it retrieved and those "
        "touching an excerpt: 1 when they share a character with one), {relative}; "
        "the graded variant (units of the excerpts covered) goes beside it as "
        "STEM.graded.SUFFIX.",
        parse_path,
        ini_type=None,
        metavar="FILE",
    ),
)
