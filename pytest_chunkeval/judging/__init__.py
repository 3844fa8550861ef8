"""Reference-free context relevance (docs/judged.md#the-two-measures): judges,
judgments, metrics.

Stage: a component the engine calls to judge each retrieved context. Central types:
:class:`Judge` / :class:`LLMJudge` (``judge.py``), :class:`Judging` (``run.py``),
the registry (``specs.py``). Calibrating a judge and promoting judgments to
excerpts run evaluations: they are in ``quality/``.

May import: ``config/``, ``core/``, ``data/``, ``chunkers/``, ``llm/``, ``util/``
and ``errors`` (see docs/architecture.md#layering).
"""
