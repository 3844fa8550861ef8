"""Core arithmetic: spans, the unit axis, the metric formulas (numpy only).

Stage: below data, chunkers and the engine; pure functions of spans. Central types:
:class:`UnitMap` (``units.py``), :func:`score_queries` / :class:`QueryScores`
(``metrics.py``), :class:`ChunkIndex` (``chunk_index.py``), ``METRIC_TABLE``
(``metric_names.py``).

May import: ``tokenizers/``, ``util/`` and ``errors`` (see
docs/architecture.md#layering).
"""
