"""The gate's files: what a baseline records (:class:`Baseline`,
``baseline.py``; each document, ``documents.py``; each question,
``questions.py``; what makes one damaged, ``validity.py``), where a test's
baseline is (``paths.py``, ``names.py``, former names ``legacy.py``, a replaced
parameter's ``lookup.py``), the corpus table per-question items share
(``corpus_table.py``), reading one for a check (``reading.py``), writing one in
update mode (``writing.py``) and the files no test used (``owners.py``).

Stage: the gate's first step (docs/baselines.md, "What is in one").

May import: what ``gate/`` may (docs/architecture.md#layering).
"""
