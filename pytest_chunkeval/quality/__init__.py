"""Query-set quality: how much a frozen query set can tell (``chunkeval inspect``).

Stage: beside ``judging/``, above ``engine/`` (the BM25 floor and the comparison
of several chunkers run evaluations). Central function: :func:`inspect_queries`
(``inspect.py``) and its :class:`Inspection`; each measure lives in a module of
its own (``leakage.py``, ``duplicates.py``, ``excerpts.py``, ``coverage.py``,
``floor.py``, ``separability.py``). Imports ``data/``, ``core/``, ``engine/``,
``stores/`` and ``gate/`` (the minimum detectable effect); nothing imports it but
``cli/``, ``run/`` and the package root, lazily.

May import: see docs/architecture.md#layering.
"""
