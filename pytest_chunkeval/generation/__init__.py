"""Query generation: an LLM writes question/excerpt sets from a corpus.

Stage: beside the pipeline, writing its input (``data/``). Central types:
:class:`QueryGenerator` / :func:`generate_queries` (``generate.py``),
:class:`GenerationSettings` (``settings.py``), the filters (``filters.py``).

May import: every folder below ``run/`` except ``judging/``, ``relationships/``,
``gate/`` and ``reporting/`` (see docs/architecture.md#layering).
"""
