"""Query-set quality: how much a frozen query set can tell (``chunkeval inspect``),
how far a judge agrees with its excerpts (``calibration.py``), and judgments
promoted to excerpts (``promote.py``).

Stage: above ``engine/`` and ``judging/`` (the BM25 floor, the comparison of
several chunkers, a judge's calibration and its promotion run evaluations).
Central function: :func:`inspect_queries` (``inspect.py``) and its
:class:`Inspection`; each measure lives in a module of its own (``leakage.py``,
``duplicates.py``, ``excerpts.py``, ``coverage.py``, ``floor.py``,
``separability.py``). Imports ``data/``, ``core/``, ``engine/``, ``judging/``,
``stores/`` and ``gate/`` (the minimum detectable effect); nothing imports it but
``cli/``, ``run/`` and the package root, lazily.

May import: see docs/architecture.md#layering.
"""
