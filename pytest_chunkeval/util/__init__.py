"""Utilities with no knowledge of retrieval: atomic files, progress, model files.

Stage: the floor; every folder may import it. Central functions: atomic writes
(``files.py``), :func:`progress_bar` (``progress.py``), offline model files
(``model_files.py``), the cache kinds (``cache_kinds.py``).

May import: ``errors`` only (see docs/architecture.md#layering).
"""
