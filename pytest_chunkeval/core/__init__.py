"""Core arithmetic: spans, the unit axis, the metric formulas (numpy only).

Stage: the bottom of the pipeline, below the configuration, the tokenizers, data,
chunkers and the engine; pure functions of spans. Central types:
:class:`UnitMap` (``units.py``, given its tokenizer resolved), :func:`score_queries` /
:class:`QueryScores` (``metrics.py``), :class:`ChunkIndex` (``chunk_index.py``),
``METRIC_TABLE`` (``metric_names.py``), the unit vocabulary (``unit_names.py``).

May import: ``util/`` and ``errors`` (see docs/architecture.md#layering).
"""
