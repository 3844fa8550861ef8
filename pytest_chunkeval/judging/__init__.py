"""Reference-free context relevance (docs/judged.md#the-two-measures): judges,
judgments, metrics.

Stage: a component the engine calls to judge each retrieved context. Central types:
:class:`Judge` / :class:`LLMJudge` (``judge.py``), :class:`Judging` (``run.py``),
the registry (``specs.py``); calibration (``calibration.py``) and promotion of
judgments to excerpts (``promote.py``) run evaluations.

May import: ``config/``, ``core/``, ``data/``, ``chunkers/``, ``llm/``, ``util/``,
``errors``, and ``engine/`` lazily from ``calibration.py`` and ``promote.py`` (see
docs/architecture.md#layering).
"""
