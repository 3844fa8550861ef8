"""Embedders: texts to unit vectors.

Stage: after chunking, before the stores. Central types: the :class:`Embedder`
protocol (``base.py``), ``EMBEDDERS`` / :func:`get_embedder` (``registry.py``).
Heavy libraries load inside methods.

May import: ``config/``, ``tokenizers/``, ``llm/`` (the OpenAI client), ``util/``
and ``errors`` (see docs/architecture.md#layering).
"""
