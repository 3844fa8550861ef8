"""The evaluation engine: chunk, embed, index, retrieve and score one configuration.

Stage: above every component folder, below the gate, the reports and the pytest
session. Central types: :func:`evaluate` (``evaluate.py``), :func:`score`
(``score.py``), :class:`EvalResult` / :class:`QueryRecord` (``results.py``),
:class:`Chunking` (``chunking.py``), :class:`Placer` (``placing.py``).

May import: ``config/``, ``core/``, ``tokenizers/``, ``data/``, ``chunkers/``,
``embedders/``, ``stores/``, ``llm/``, ``judging/``, ``util/`` and ``errors`` (see
docs/architecture.md#layering).
"""
