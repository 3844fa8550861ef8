"""Data: corpora and query sets (the ground truth), their file formats.

Stage: the pipeline's input. Central types: :class:`Corpus` (``corpus.py``),
:class:`QuerySet` (``queries.py``), :class:`Query` / :class:`Excerpt`
(``query_types.py``), the bundled benchmark (``benchmarks.py``), BEIR folders
(``beir.py``).

May import: ``config/``, ``core/``, ``tokenizers/``, ``util/`` and ``errors`` (see
docs/architecture.md#layering).
"""
